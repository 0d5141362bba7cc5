//! The agent's MCP client: the servers an editor hands over in `session/new.mcpServers`,
//! started with the session, their tools offered to the model and to `/mcp` (R-MCP-*).
//!
//! - [`wire`]: one connection's protocol state, sans-IO, over acp-core's framing and envelope.
//! - [`messages`]: the typed messages a client needs (handshake, tool pages, call results).
//! - [`client`]: an initialized server: list tools, call one, cancel a call.
//! - [`stdio`]: the stdio transport, a child in its own process group.

pub mod client;
pub mod messages;
pub mod stdio;
pub mod wire;

pub use client::{McpClient, McpError};
pub use messages::{CallResult, Tool};
