//! The MCP servers of one session: started together when the session opens, each bounded by
//! the start timeout, their tools listed; one that fails is reported, not fatal (R-MCP-3).

use std::sync::Arc;
use std::time::Duration;

use acp_core::schema::McpServer;

use super::client::McpClient;
use super::tool::McpTool;

/// How long one server may take to start, answer `initialize` and list its tools. Generous:
/// `npx` fetching a server on first use is slow.
pub(crate) const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long one tool call may wait for its answer unless `ACP_CLI_MCP_CALL_TIMEOUT_MS`
/// says otherwise (R-MCP-11).
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// The tool call timeout: `ACP_CLI_MCP_CALL_TIMEOUT_MS` when it is a number of
/// milliseconds above 0, else [`CALL_TIMEOUT`].
pub(crate) fn call_timeout(lookup: impl Fn(&str) -> Option<String>) -> Duration {
    lookup("ACP_CLI_MCP_CALL_TIMEOUT_MS")
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map_or(CALL_TIMEOUT, Duration::from_millis)
}

/// Calls `tool` within `timeout`; a call that takes longer is dropped (which sends
/// `notifications/cancelled`, R-MCP-7) and fails with the time it had (R-MCP-11). When the
/// server said its tools changed, they are listed again and handed to `relisted` before the
/// answer is returned, so the turn's next model request offers the new list (R-MCP-5).
pub(crate) async fn call_with_timeout(
    client: &McpClient,
    tool: &str,
    arguments: serde_json::Value,
    timeout: Duration,
    relisted: impl AsyncFnOnce(Vec<super::Tool>),
) -> Result<super::CallResult, String> {
    let call = async {
        let done = client.call_tool(tool, arguments).await;
        if let Err(super::McpError::Closed(_)) = &done {
            client.log_stderr();
        }
        done.map_err(|e| e.to_string())
    };
    let late = async {
        smol::Timer::after(timeout).await;
        Err(format!(
            "the call of '{tool}' got no answer within {} ms (R-MCP-11)",
            timeout.as_millis()
        ))
    };
    let done = smol::future::or(call, late).await;
    // Bounded too: a server that does not answer tools/list cannot hold the turn.
    let relist = async { relist_if_changed(client, relisted).await };
    smol::future::or(relist, async {
        smol::Timer::after(timeout).await;
        tracing::warn!(
            server = client.name(),
            "MCP tools were not listed again in time"
        );
    })
    .await;
    done
}

/// Lists the server's tools again when it said they changed since they were last listed,
/// and hands them to `relisted`, under the client's relisting lock (R-MCP-5).
pub(crate) async fn relist_if_changed(
    client: &McpClient,
    relisted: impl AsyncFnOnce(Vec<super::Tool>),
) {
    let _held = client.relisting().await;
    if !client.take_tools_changed() {
        return;
    }
    match client.list_tools().await {
        Ok(tools) => {
            tracing::info!(
                server = client.name(),
                tools = tools.len(),
                "MCP tools listed again"
            );
            relisted(tools).await;
        }
        Err(error) => {
            tracing::warn!(server = client.name(), %error, "MCP tools could not be listed again");
        }
    }
}

/// What starting a session's servers came to.
#[derive(Debug, Default)]
pub(crate) struct Started {
    /// The servers that run.
    pub clients: Vec<Arc<McpClient>>,
    /// Their tools, server by server in the order the client gave them.
    pub tools: Vec<McpTool>,
    /// The servers that did not start, and why.
    pub failures: Vec<(String, String)>,
}

/// Starts every server at once and waits for all. Only names and commands are logged, never
/// `env` or `headers` (R-MCP-9).
pub(crate) async fn start_all(servers: Vec<McpServer>, cwd: String, timeout: Duration) -> Started {
    let mut started = Started::default();
    let mut tasks = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for server in servers {
        let name = server.name().to_owned();
        if !seen.insert(name.clone()) {
            started.failures.push((
                name,
                "another MCP server of this session has the same name".into(),
            ));
            continue;
        }
        let cwd = cwd.clone();
        tasks.push((
            name,
            smol::spawn(async move { start_one(&server, &cwd, timeout).await }),
        ));
    }
    for (name, task) in tasks {
        match task.await {
            Ok((client, tools)) => {
                tracing::info!(
                    server = name.as_str(),
                    tools = tools.len(),
                    version = client.version(),
                    "MCP server started"
                );
                started.tools.extend(tools.into_iter().map(|tool| McpTool {
                    server: name.clone(),
                    tool,
                }));
                started.clients.push(Arc::new(client));
            }
            Err(why) => {
                tracing::warn!(server = name.as_str(), %why, "MCP server did not start");
                started.failures.push((name, why));
            }
        }
    }
    started
}

async fn start_one(
    server: &McpServer,
    cwd: &str,
    timeout: Duration,
) -> Result<(McpClient, Vec<super::Tool>), String> {
    let deadline = std::time::Instant::now() + timeout;
    let client = McpClient::start(server, cwd, timeout).await?;
    let list = async {
        client
            .list_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))
    };
    let late = async {
        smol::Timer::at(deadline).await;
        Err(format!(
            "it did not finish starting within {} ms",
            timeout.as_millis()
        ))
    };
    match smol::future::or(list, late).await {
        Ok(tools) => Ok((client, tools)),
        Err(why) => {
            client.log_stderr();
            Err(why)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_call_timeout_comes_from_the_environment_when_it_is_a_number() {
        let with = |value: Option<&str>| call_timeout(|_| value.map(str::to_owned));
        assert_eq!(with(None), CALL_TIMEOUT);
        assert_eq!(with(Some("250")), Duration::from_millis(250));
        assert_eq!(with(Some("0")), CALL_TIMEOUT);
        assert_eq!(with(Some("soon")), CALL_TIMEOUT);
    }
}
