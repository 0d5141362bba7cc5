//! The MCP servers of one session: started together when the session opens, each bounded by
//! the start timeout, their tools listed; one that fails is reported, not fatal (R-MCP-3).

use std::sync::Arc;
use std::time::Duration;

use acp_core::schema::McpServer;

use super::client::McpClient;
use super::tool::McpTool;

/// How long one server may take to start, answer `initialize` and list its tools. Generous:
/// `npx` fetching a server on first use is slow.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// What starting a session's servers came to.
#[derive(Debug, Default)]
pub struct Started {
    /// The servers that run.
    pub clients: Vec<Arc<McpClient>>,
    /// Their tools, server by server in the order the client gave them.
    pub tools: Vec<McpTool>,
    /// The servers that did not start, and why.
    pub failures: Vec<(String, String)>,
}

/// Starts every server at once and waits for all. Only names and commands are logged, never
/// `env` or `headers` (R-MCP-9).
pub async fn start_all(servers: Vec<McpServer>, cwd: String, timeout: Duration) -> Started {
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
            log_stderr(&client);
            Err(why)
        }
    }
}

/// The server's last stderr lines, into the log (where `acp-cli.log` keeps them).
pub fn log_stderr(client: &McpClient) {
    let tail = client.stderr_tail();
    if !tail.is_empty() {
        tracing::warn!(server = client.name(), stderr = %tail, "MCP server's last stderr lines");
    }
}
