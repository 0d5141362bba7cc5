//! Connections: the wire layer, the typed messages and the state machines glued behind one
//! `handle_*` / `poll_*` API per side.

pub mod agent;
pub mod client;
pub mod storage;
pub mod transport;

#[cfg(feature = "alloc")]
pub use storage::Growable;
pub use storage::{Buffers, Fixed};
