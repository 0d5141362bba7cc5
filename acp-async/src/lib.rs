//! An async layer over [acp-core](acp_core): an ACP agent (or client) is one future over any
//! `AsyncRead`/`AsyncWrite` pair, on smol, tokio or any executor.
//!
//! acp-core is the sans-IO protocol engine (the "quinn-proto"); this crate is the loop that
//! puts it on byte streams (the "quinn"). Every protocol rule stays in acp-core: this crate
//! moves bytes, time and events, and runs the application's futures.
//!
//! - [`pump`]: the one drive loop both sides share ([`pump::Pump`]).
//! - [`runtime`]: the clock and timer abstraction ([`Runtime`]).
//! - [`duplex`]: in-memory pipes for tests and benchmarks.
//! - [`smol`] and [`tokio`] (features of the same names): timers, stdio and child processes.
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
pub mod runtime;
#[cfg(feature = "smol")]
pub mod smol;
#[cfg(feature = "tokio")]
pub mod tokio;

pub use acp_core;
pub use agent::{Agent, Turn, serve};
pub use error::Error;
pub use runtime::{Instant, NoTimers, Runtime};
