//! Where a connection keeps its bytes and tables: one [`Buffers`] trait for both
//! [`AgentConnection`](crate::AgentConnection) and [`ClientConnection`](crate::ClientConnection),
//! implemented by [`Fixed`] (no allocator) and [`Growable`] (with `alloc`).
//!
//! # Why const generics
//!
//! The capacities are const generics of [`Fixed`] rather than fields of a configuration value
//! because they size arrays inside the connection: a `Fixed` connection is one value of a size
//! known at compile time (`size_of` is its whole RAM), it can live in a `static`, and nothing is
//! sized at run time. The run-time limits of [`Limits`](super::agent::Limits) and
//! [`ClientConfig`](super::client::ClientConfig) are clamped to these capacities.
//!
//! Each connection uses only the tables it needs; the others are never created, so a table
//! that belongs to the other side costs nothing.

use crate::machine::Table;
use crate::machine::pending::{Outgoing, Owed};
use crate::machine::permission::Remembered;
use crate::machine::session::Session;
use crate::wire::frame::ByteStorage;

use super::agent::{AgentEvent, Announced, Asked};
use super::client::OurRequest;

/// The storage types of a connection. Every type starts empty ([`Default`]).
pub trait Buffers {
    /// The framer's bytes: one peer line at most.
    type Input: ByteStorage + Default;
    /// The outbox's bytes.
    type Output: ByteStorage + Default;
    /// The session table.
    type Sessions: Table<Session> + Default;
    /// Peer requests owed an answer.
    type Owing: Table<Owed> + Default;
    /// Our requests in flight.
    type Pending: Table<Outgoing> + Default;
    /// Agent: remembered `*_always` permission answers.
    type Memory: Table<Remembered> + Default;
    /// Agent: events not yet polled.
    type Events: Table<AgentEvent> + Default;
    /// Agent: tool calls announced in running turns.
    type Announced: Table<Announced> + Default;
    /// Agent: what each request of ours asked (tool key, method).
    type Asked: Table<Asked> + Default;
    /// Client: the method of each request of ours.
    type Requests: Table<OurRequest> + Default;
}

/// Fixed storage, no allocator: lines of up to `LINE` bytes, an outbox of `OUT` bytes,
/// `SESSIONS` sessions, `REQUESTS` requests in flight each way, and (agent) `EVENTS` queued
/// events.
///
/// The agent consumes input only while its event queue can take what one more line may
/// produce (2 + the requests of ours in flight), so pick `EVENTS >= REQUESTS + 2`. The client
/// builds its events one step at a time and ignores `EVENTS`.
#[derive(Clone, Copy, Debug)]
pub struct Fixed<
    const LINE: usize,
    const OUT: usize,
    const SESSIONS: usize,
    const REQUESTS: usize,
    const EVENTS: usize,
>;

impl<
    const LINE: usize,
    const OUT: usize,
    const SESSIONS: usize,
    const REQUESTS: usize,
    const EVENTS: usize,
> Buffers for Fixed<LINE, OUT, SESSIONS, REQUESTS, EVENTS>
{
    type Input = heapless::Vec<u8, LINE>;
    type Output = heapless::Vec<u8, OUT>;
    type Sessions = heapless::Vec<Session, SESSIONS>;
    type Owing = heapless::Vec<Owed, REQUESTS>;
    type Pending = heapless::Vec<Outgoing, REQUESTS>;
    type Memory = heapless::Vec<Remembered, REQUESTS>;
    type Events = heapless::Vec<AgentEvent, EVENTS>;
    type Announced = heapless::Vec<Announced, REQUESTS>;
    type Asked = heapless::Vec<Asked, REQUESTS>;
    type Requests = heapless::Vec<OurRequest, REQUESTS>;
}

/// Growable storage, bounded by the configured limits.
#[cfg(feature = "alloc")]
#[derive(Clone, Copy, Debug)]
pub struct Growable;

#[cfg(feature = "alloc")]
impl Buffers for Growable {
    type Input = alloc::vec::Vec<u8>;
    type Output = alloc::vec::Vec<u8>;
    type Sessions = alloc::vec::Vec<Session>;
    type Owing = alloc::vec::Vec<Owed>;
    type Pending = alloc::vec::Vec<Outgoing>;
    type Memory = alloc::vec::Vec<Remembered>;
    type Events = alloc::vec::Vec<AgentEvent>;
    type Announced = alloc::vec::Vec<Announced>;
    type Asked = alloc::vec::Vec<Asked>;
    type Requests = alloc::vec::Vec<OurRequest>;
}
