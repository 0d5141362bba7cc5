//! An async layer over [acp-core](acp_core): an ACP agent (or client) is one future over any
//! `AsyncRead`/`AsyncWrite` pair, on smol, tokio or any executor.
//!
//! acp-core is the sans-IO protocol engine (the "quinn-proto"); this crate is the loop that
//! puts it on byte streams (the "quinn"). Every protocol rule stays in acp-core: this crate
//! moves bytes, time and events, and runs the application's futures.
//!
//! - [`client`]: the client side: a [`client::Client`] handle, a turn as a stream.
//! - [`pump`]: the one drive loop both sides share ([`pump::Pump`]).
//! - [`runtime`]: the clock and timer abstraction ([`Runtime`]).
//! - [`relay`]: a byte stream the application feeds, for peers whose pipes it owns itself.
//! - [`duplex`]: in-memory pipes for tests and benchmarks.
//! - `smol` and `tokio` (features of the same names): timers, stdio and child processes.
//!
//! # An echo agent
//!
//! Implement [`Agent`] (only [`prompt`](Agent::prompt) is required) and [`serve`] it. On
//! stdio that is one line, `acp_async::tokio::serve_stdio(config, Echo).await` (feature
//! `tokio`) or `acp_async::smol::serve_stdio` (feature `smol`); here it is served on an
//! in-memory [`duplex`] and the client's side is played with raw lines:
//!
//! ```
//! use acp_async::acp_core::prelude::{AgentConfig, AgentInfo, StopReason};
//! use acp_async::acp_core::schema::{ContentBlock, PromptRequest};
//! use acp_async::{Agent, Error, Turn};
//! use futures_util::{AsyncReadExt, AsyncWriteExt};
//!
//! struct Echo;
//!
//! impl Agent for Echo {
//!     async fn prompt(&self, request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
//!         for block in request.prompt {
//!             if let ContentBlock::Text(text) = block {
//!                 turn.message(text.text).await?; // waits while the client reads slowly
//!             }
//!         }
//!         Ok(StopReason::EndTurn)
//!     }
//! }
//!
//! let (agent, mut client) = acp_async::duplex::duplex(64 * 1024);
//! let config = AgentConfig::new(AgentInfo::new("echo", "Echo", "0.1.0"));
//! let serving = acp_async::serve(config, Echo, acp_async::NoTimers, agent.reader, agent.writer);
//! let talking = async move {
//!     let lines = concat!(
//!         r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#, "\n",
//!         r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/user/p","mcpServers":[]}}"#, "\n",
//!         r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"session-1","prompt":[{"type":"text","text":"hi"}]}}"#, "\n",
//!     );
//!     client.writer.write_all(lines.as_bytes()).await?;
//!     client.writer.close().await?; // EOF: the agent answers, then ends
//!     let mut heard = String::new();
//!     client.reader.read_to_string(&mut heard).await?;
//!     Ok::<_, std::io::Error>(heard)
//! };
//! let (served, heard) = smol::block_on(futures_util::future::join(serving, talking));
//! served?;
//! let heard = heard?;
//! assert!(heard.contains(r#""sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}"#));
//! assert!(heard.ends_with("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}\n"));
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The examples `echo_agent_tokio.rs` and `echo_agent_smol.rs` are whole stdio agents in
//! under 40 lines; `tool_agent.rs` runs a tool call with a permission request and honest
//! cancellation.
//!
//! # No spawn, `!Send`
//!
//! The connection is one future the caller awaits: the application's handler futures run
//! inside it, so no executor has to spawn anything, and it works under
//! `#[tokio::main(flavor = "current_thread")]`, `smol::block_on` or a hand-written poll
//! loop. The connection and the futures that use it share it through `Rc`/`RefCell`, so
//! the future is `!Send`: handlers may hold `Rc`s and `RefCell`s of their own, and nothing
//! pays for locks it does not need. To use a multi-threaded runtime, run the connection on
//! one thread (a `LocalSet`, or `block_on` in a thread of its own) and talk to it through
//! channels.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod client;
pub mod duplex;
mod error;
pub mod pump;
pub mod relay;
pub mod runtime;
#[cfg(feature = "smol")]
pub mod smol;
#[cfg(feature = "tokio")]
pub mod tokio;

pub use acp_core;
pub use agent::{Agent, Turn, serve};
pub use error::Error;
pub use runtime::{Instant, ManualClock, NoTimers, Runtime};
