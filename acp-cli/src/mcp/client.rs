//! An MCP client over one transport: the handshake, `tools/list` with its pages, `tools/call`
//! with cancel, and the server's `list_changed` news.
//!
//! The protocol state is [`McpWire`](super::wire::McpWire) behind a lock; a reader task feeds it what the server
//! writes and hands each response to the call waiting for it. The tasks run on smol's
//! executor, as the rest of the agent: no second async runtime.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use smol::channel::Receiver;

use super::http::HttpServer;
use super::inbound::{Inbound, McpError, Outgoing, Shared, lock};
use super::messages::{self, CallResult, Tool, ToolsPage};
use super::stdio::StdioServer;

/// The most pages of `tools/list` read: a server whose cursor never ends cannot hold us.
pub(crate) const MAX_TOOL_PAGES: usize = 100;

/// One connected, initialized MCP server.
pub struct McpClient {
    name: String,
    shared: Arc<Mutex<Shared>>,
    outgoing: Outgoing,
    changes: Receiver<()>,
    version: String,
    /// Held while the tools are listed again and the list handed on, so a call's answer is
    /// handed on after a list the server changed during it (R-MCP-5).
    relisting: smol::lock::Mutex<()>,
    /// The transport: dropping it ends the server (its process group is killed, or its
    /// HTTP session deleted).
    transport: Transport,
}

/// How the messages travel.
enum Transport {
    /// A child process (R-MCP-8).
    Stdio(StdioServer),
    /// Streamable HTTP (R-MCP-10).
    Http(HttpServer),
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.name)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// Sends `notifications/cancelled` for a call dropped before its answer (R-MCP-7).
struct CancelOnDrop<'a> {
    client: &'a McpClient,
    id: u64,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut shared = lock(&self.client.shared);
        if shared.pending.remove(&self.id).is_none() || shared.closed.is_some() {
            return;
        }
        let params = json!({"requestId": self.id, "reason": "cancelled by the user"});
        shared.wire.notify("notifications/cancelled", Some(&params));
        let line = shared.wire.take_transmit();
        let _ = self.client.outgoing.try_send(line);
    }
}

impl McpClient {
    /// Starts the server of a `session/new` entry and runs the handshake, all within
    /// `timeout` (R-MCP-3).
    pub async fn start(
        server: &acp_core::schema::McpServer,
        cwd: &str,
        timeout: Duration,
    ) -> Result<Self, String> {
        let connect = async {
            match server {
                acp_core::schema::McpServer::Stdio(stdio) => Self::stdio(stdio, cwd).await,
                acp_core::schema::McpServer::Http(http) => Self::http(http).await,
                _ => Err("the 'sse' transport is not supported".to_owned()),
            }
        };
        let timed_out = async {
            smol::Timer::after(timeout).await;
            Err(format!(
                "it did not finish starting within {} ms",
                timeout.as_millis()
            ))
        };
        smol::future::or(connect, timed_out).await
    }

    /// Spawns a stdio server and initializes it.
    pub async fn stdio(
        server: &acp_core::schema::McpServerStdio,
        cwd: &str,
    ) -> Result<Self, String> {
        Self::connect(&server.name, |inbound, lines| {
            StdioServer::spawn(server, cwd, inbound, lines).map(Transport::Stdio)
        })
        .await
    }

    /// Connects to a streamable HTTP server and initializes it.
    pub async fn http(server: &acp_core::schema::McpServerHttp) -> Result<Self, String> {
        Self::connect(&server.name, |inbound, lines| {
            HttpServer::start(server, inbound, lines).map(Transport::Http)
        })
        .await
    }

    /// Starts a transport on fresh protocol state, then the handshake.
    async fn connect(
        name: &str,
        transport: impl FnOnce(Inbound, Receiver<Vec<u8>>) -> Result<Transport, String>,
    ) -> Result<Self, String> {
        let (changes_tx, changes) = smol::channel::bounded(1);
        let (outgoing, lines) = smol::channel::unbounded();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let inbound = Inbound {
            shared: Arc::clone(&shared),
            outgoing: outgoing.clone(),
            changes: changes_tx,
            name: name.to_owned(),
        };
        let transport = transport(inbound, lines)?;
        let mut client = Self {
            name: name.to_owned(),
            shared,
            outgoing,
            changes,
            version: String::new(),
            relisting: smol::lock::Mutex::new(()),
            transport,
        };
        if let Err(why) = client.initialize().await {
            client.log_stderr();
            return Err(why);
        }
        Ok(client)
    }

    /// `initialize`, version check, `notifications/initialized` (R-MCP-2).
    async fn initialize(&mut self) -> Result<(), String> {
        let result = self
            .request("initialize", &messages::initialize_params())
            .await
            .map_err(|e| format!("initialize failed: {e}"))?;
        self.version = messages::negotiated_version(&result)?;
        if let Transport::Http(http) = &self.transport {
            http.set_protocol_version(&self.version);
        }
        self.notify("notifications/initialized");
        Ok(())
    }

    /// The server's name (from `session/new`).
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The protocol version agreed on.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The server's stderr lines kept so far (the last ones), for the log; none over HTTP.
    pub fn stderr_tail(&self) -> String {
        match &self.transport {
            Transport::Stdio(server) => server.stderr_tail(),
            Transport::Http(_) => String::new(),
        }
    }

    /// The server's last stderr lines, into the log (where `acp-cli.log` keeps them).
    pub(crate) fn log_stderr(&self) {
        let tail = self.stderr_tail();
        if !tail.is_empty() {
            tracing::warn!(server = self.name(), stderr = %tail, "MCP server's last stderr lines");
        }
    }

    /// A signal each time the server says its tools changed (at most one waits).
    pub fn tools_changed(&self) -> Receiver<()> {
        self.changes.clone()
    }

    /// Whether the server said its tools changed since the last call of this; whoever
    /// takes it re-lists them (R-MCP-5).
    pub(crate) fn take_tools_changed(&self) -> bool {
        std::mem::take(&mut lock(&self.shared).tools_changed)
    }

    /// The lock to hold from [`McpClient::take_tools_changed`] until the new list is handed
    /// on: whoever comes second waits until the first has handed its list on.
    pub(crate) async fn relisting(&self) -> smol::lock::MutexGuard<'_, ()> {
        self.relisting.lock().await
    }

    /// Every tool, page by page (R-MCP-5).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page: ToolsPage =
                serde_json::from_value(self.request("tools/list", &params).await?)
                    .map_err(|e| McpError::BadResult(e.to_string()))?;
            tools.extend(page.tools);
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(tools),
            }
        }
        Err(McpError::BadResult(format!(
            "tools/list had more than {MAX_TOOL_PAGES} pages"
        )))
    }

    /// Calls a tool. Dropping the future before the answer cancels the call on the server.
    pub async fn call_tool(&self, tool: &str, arguments: Value) -> Result<CallResult, McpError> {
        let result = self
            .request("tools/call", &json!({"name": tool, "arguments": arguments}))
            .await?;
        serde_json::from_value(result).map_err(|e| McpError::BadResult(e.to_string()))
    }

    /// `ping`: whether the server still answers.
    pub async fn ping(&self) -> Result<(), McpError> {
        self.request("ping", &json!({})).await.map(|_| ())
    }

    fn notify(&self, method: &str) {
        let mut shared = lock(&self.shared);
        shared.wire.notify(method, None::<&()>);
        let line = shared.wire.take_transmit();
        let _ = self.outgoing.try_send(line);
    }

    async fn request(&self, method: &str, params: &Value) -> Result<Value, McpError> {
        let (waiter, answer) = smol::channel::bounded(1);
        let (id, line) = {
            let mut shared = lock(&self.shared);
            if let Some(why) = &shared.closed {
                return Err(McpError::Closed(why.clone()));
            }
            let id = shared.wire.request(method, params);
            shared.pending.insert(id, waiter);
            (id, shared.wire.take_transmit())
        };
        let mut guard = CancelOnDrop {
            client: self,
            id,
            armed: true,
        };
        if self.outgoing.send(line).await.is_err() {
            guard.armed = false;
            return Err(self.closed_error());
        }
        let outcome = answer.recv().await;
        guard.armed = false;
        match outcome {
            Ok(outcome) => outcome,
            Err(_) => Err(self.closed_error()),
        }
    }

    fn closed_error(&self) -> McpError {
        let why = lock(&self.shared).closed.clone();
        McpError::Closed(why.unwrap_or_else(|| "the server is gone".into()))
    }
}
