//! The agent's one HTTP/1.1 client, shared by the model client (`crate::llm::http`) and the
//! MCP streamable HTTP transport (`crate::mcp::http`).
//!
//! - [`endpoint`]: an `http://` or `https://` URL, parsed.
//! - [`connection`]: TCP or TLS, one request head out, one response head in, within limits.
//! - [`response`]: a response head and its body framing (chunked, length, close), sans-IO.
//! - [`sse`]: the Server-Sent Events parser, fed the body in any pieces.

pub(crate) mod connection;
pub(crate) mod endpoint;
pub mod response;
pub mod sse;

use core::time::Duration;

/// A duration in seconds as a user wrote it: `30`, `0.5`.
pub(crate) fn seconds(duration: Duration) -> String {
    duration.as_secs_f64().to_string()
}
