//! The agent's MCP client: the servers an editor hands over in `session/new.mcpServers`,
//! started with the session, their tools offered to the model and to `/mcp` (R-MCP-*).
//!
//! - [`wire`]: one connection's protocol state, sans-IO, over acp-core's framing and envelope.
//! - [`messages`]: the typed messages a client needs (handshake, tool pages, call results).
//! - [`client`]: an initialized server: list tools, call one, cancel a call.
//! - `inbound`: what a transport reads, handed to the protocol state and the waiting calls.
//! - [`stdio`]: the stdio transport, a child in its own process group.
//! - [`http`]: the streamable HTTP transport, on the agent's one HTTP/1.1 client (`crate::net`).
//! - [`session`]: a session's servers, started together with a timeout.
//! - [`tool`]: a session's MCP tool as the backends see it.

pub(crate) mod client;
pub(crate) mod http;
mod inbound;
pub(crate) mod messages;
pub(crate) mod session;
pub(crate) mod stdio;
pub(crate) mod tool;
pub(crate) mod wire;

pub use client::McpClient;
pub use inbound::McpError;
pub(crate) use messages::{CallResult, Tool};
pub(crate) use tool::McpTool;
