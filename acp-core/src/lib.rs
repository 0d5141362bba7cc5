//! `acp-core`: a `#![no_std]`, sans-IO implementation of the Agent Client Protocol (ACP v1).
//!
//! The crate is fed bytes and the time, and it hands back lines to write and events for the
//! application. It never does I/O, never reads a clock and never spawns anything, so the same
//! code runs inside a smol or tokio loop, a game engine's frame callback, a deterministic test
//! with a virtual clock, or a microcontroller.
//!
//! # Layers
//!
//! - [`wire`]: NDJSON framing, the JSON-RPC envelope scanner and the encoder. No allocation.
//! - [`view`]: borrowed, allocation-free views of the messages a constrained peer needs;
//!   `schema` (with `alloc`): the owned, fully typed ACP v1 surface. Both decode by method.
//! - [`machine`]: the pure state machines (handshake, sessions, turns, pending requests,
//!   permission, ask_user). No JSON in there.
//! - [`conn`]: [`AgentConnection`] and [`ClientConnection`], the machines glued to the wire
//!   behind one `handle_*` / `poll_*` API each; their type docs give the call order.
//!
//! Host policy (supervising agent processes from `.agentao/acp.json`, delegation routing,
//! terminal-safe text) is not protocol: it lives in the `acp-host` crate.
//!
//! # A drive loop
//!
//! Both connections take the same inputs and give the same outputs; this is the whole loop of
//! an agent (a client's is the same with [`ClientConnection`]). `read_until`, `write` and
//! `clock` stand for the embedder's I/O and time.
//!
//! ```no_run
//! use acp_core::prelude::*;
//! # enum Input { Bytes(usize), Eof, Deadline }
//! # fn read_until(_: &mut [u8], _: Option<Instant>) -> Input { Input::Eof }
//! # fn write(bytes: &[u8]) -> usize { bytes.len() }
//! # fn clock() -> Instant { Instant(0) }
//!
//! let mut agent: AgentConnection<Fixed<4096, 4096, 1, 2, 4>> =
//!     AgentConnection::new(AgentConfig::new(AgentInfo::new("agent", "Agent", "0.1.0")));
//! let mut buf = [0u8; 1024];
//! let mut held = 0; // bytes not taken yet (backpressure)
//! while !agent.is_closed() {
//!     while let Some(event) = agent.poll_event() {
//!         match event {
//!             AgentEvent::NewSession { ticket, .. } => {
//!                 let _ = agent.accept_new_session_id(ticket, "s1");
//!             }
//!             AgentEvent::Prompt { session, .. } => {
//!                 let _ = agent.end_turn(session.as_str(), StopReason::EndTurn);
//!             }
//!             _ => {}
//!         }
//!     }
//!     let n = write(agent.poll_transmit());
//!     agent.transmitted(n);
//!     if held > 0 || agent.is_input_held() {
//!         let taken = agent.handle_bytes(clock(), &buf[..held]);
//!         buf.copy_within(taken..held, 0);
//!         held -= taken;
//!         continue;
//!     }
//!     match read_until(&mut buf, agent.poll_timeout()) {
//!         Input::Bytes(len) => {
//!             let taken = agent.handle_bytes(clock(), &buf[..len]);
//!             buf.copy_within(taken..len, 0);
//!             held = len - taken;
//!         }
//!         Input::Eof => agent.handle_eof(clock()),
//!         Input::Deadline => agent.handle_timeout(clock()),
//!     }
//! }
//! ```
//!
//! # Features
//!
//! - `alloc`: growable buffers (up to the configured limit) and owned, fully typed messages.
//! - `std` (default): implies `alloc`; nothing in the core needs more than that.
//!
//! With no features the crate still builds the wire layer, the views, the machines and both
//! connections over fixed, caller-chosen capacities.
//!
//! # Unsafe code
//!
//! Four sites, two measured wins, each behind a SAFETY comment: three calls of SSE2 compares in
//! the string and newline scans (`stops`, `equal_to` and `classes` in `wire::json::stops`; SWAR
//! elsewhere), and `from_utf8_unchecked` on a line whose UTF-8 the scanner has just validated
//! (`wire::json`). Everything else is checked by `deny(unsafe_code)`.
//!
//! # Panic policy
//!
//! A panic is a bug in this crate. No input from a peer can make it panic: peer garbage turns
//! into a JSON-RPC error reply and an event.
#![no_std]
#![deny(unsafe_code)] // Four `allow`s: three SSE2 calls (`wire::json::stops`), `from_utf8_unchecked`.
#![warn(missing_docs, unreachable_pub)]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod conn;
pub mod machine;
#[cfg(feature = "alloc")]
pub mod schema;
pub mod view;
pub mod wire;

pub mod prelude;

pub use conn::agent::AgentConnection;
pub use conn::client::ClientConnection;
pub use machine::Instant;

/// The fixed-capacity collections of the public API (`heapless::String` in
/// [`conn::agent::AgentInfo`], [`conn::agent::Extension`], [`conn::agent::AgentEvent`] and
/// [`conn::agent::Announced`]; `heapless::Vec` in [`conn::storage::Fixed`]), re-exported so a
/// caller builds and reads them with the version the core uses, without naming `heapless` in
/// its own manifest.
pub use heapless;
