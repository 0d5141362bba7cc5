//! Where a client connection keeps its buffers and tables: fixed arrays without `alloc`
//! ([`Fixed`]), growable vectors with it ([`Growable`]).

use crate::machine::pending::{Outgoing, Owed};
use crate::machine::session::Session;
use crate::machine::{RequestId, Storage};
use crate::wire::frame::Storage as ByteStorage;

use super::event::ClientMethod;

/// One request of ours and its method, to decode the answer by the method that asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OurRequest {
    /// Our id.
    pub id: RequestId,
    /// The method.
    pub method: ClientMethod,
    /// Its result is an object with only optional members, so a `null` answer reads as `{}`
    /// (see [`empty_result`](super::empty_result)).
    pub empty_result: bool,
}

/// The storage types of a [`ClientConnection`](super::ClientConnection).
pub trait ClientStorage {
    /// The framer's bytes (one line from the agent at most).
    type Input: ByteStorage + Default;
    /// The outbox's bytes.
    type Output: ByteStorage + Default;
    /// The session table.
    type Sessions: Storage<Session> + Default;
    /// Requests we sent.
    type Pending: Storage<Outgoing> + Default;
    /// Requests the agent sent that we owe an answer to.
    type Owing: Storage<Owed> + Default;
    /// The method of each request we sent.
    type Requests: Storage<OurRequest> + Default;
}

/// Fixed capacities, no allocation: lines of up to `LINE` bytes, an outbox of `OUT` bytes,
/// `SESSIONS` sessions and `REQUESTS` requests in flight each way.
#[derive(Clone, Copy, Debug)]
pub struct Fixed<const LINE: usize, const OUT: usize, const SESSIONS: usize, const REQUESTS: usize>;

impl<const LINE: usize, const OUT: usize, const SESSIONS: usize, const REQUESTS: usize>
    ClientStorage for Fixed<LINE, OUT, SESSIONS, REQUESTS>
{
    type Input = heapless::Vec<u8, LINE>;
    type Output = heapless::Vec<u8, OUT>;
    type Sessions = heapless::Vec<Session, SESSIONS>;
    type Pending = heapless::Vec<Outgoing, REQUESTS>;
    type Owing = heapless::Vec<Owed, REQUESTS>;
    type Requests = heapless::Vec<OurRequest, REQUESTS>;
}

/// Growable storage up to the configured limits.
#[cfg(feature = "alloc")]
#[derive(Clone, Copy, Debug)]
pub struct Growable;

#[cfg(feature = "alloc")]
impl ClientStorage for Growable {
    type Input = alloc::vec::Vec<u8>;
    type Output = alloc::vec::Vec<u8>;
    type Sessions = alloc::vec::Vec<Session>;
    type Pending = alloc::vec::Vec<Outgoing>;
    type Owing = alloc::vec::Vec<Owed>;
    type Requests = alloc::vec::Vec<OurRequest>;
}
