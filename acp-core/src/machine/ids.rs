//! Small owned identifiers the machines keep: they must outlive the line they came from, and
//! without `alloc` they have a fixed capacity.

use core::fmt;

/// The longest session id a machine stores, in bytes. Agentao's ids are 36-byte UUIDs; the
/// margin covers other agents' prefixed ids.
pub const SESSION_ID_MAX: usize = 128;

/// The longest peer request id a machine stores, as raw JSON text (digits, or a quoted and
/// still escaped string).
pub const PEER_ID_MAX: usize = 128;

/// A session id (`sessionId`), owned, at most [`SESSION_ID_MAX`] bytes.
///
/// Lookups take `&str`, so a longer id from the peer simply matches no session (and gets
/// the unknown-session answer); only *creating* a session needs the id to fit. The default
/// is the empty id.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(heapless::String<SESSION_ID_MAX>);

impl SessionId {
    /// Copies `id`, or `None` if it is longer than [`SESSION_ID_MAX`].
    pub fn new(id: &str) -> Option<Self> {
        heapless::String::try_from(id).ok().map(Self)
    }

    /// The id's text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({:?})", self.as_str())
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The id of a request *we* sent: integers counting up per connection from 0 (R-ID-5:
/// our outgoing ids are integers; the two directions have separate id spaces).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A local handle for a request the *peer* sent us and that we still owe an answer to.
///
/// Peer ids are arbitrary JSON (huge integers, any string, even repeated), so the machines
/// refer to each received request by a ticket counted up per connection instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ticket(pub u64);

impl fmt::Display for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Which request something belongs to: one we sent, or one the peer sent us.
///
/// The same machines run on both sides: on the agent side a turn answers the peer's
/// `session/prompt` ([`ReqRef::Peer`]), on the client side it waits for the answer to ours
/// ([`ReqRef::Ours`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReqRef {
    /// A request we sent.
    Ours(RequestId),
    /// A request the peer sent us.
    Peer(Ticket),
}

impl ReqRef {
    /// Whether the peer sent this request (so refusing it is a reply, not a local error).
    pub const fn is_peer(self) -> bool {
        matches!(self, Self::Peer(_))
    }
}

/// The id of a peer request as raw JSON text, kept to be echoed exactly in the answer
/// (`42`, `-7`, `18446744073709551616`, `"abc\u0041"`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PeerRequestId(heapless::String<PEER_ID_MAX>);

impl PeerRequestId {
    /// Copies the raw JSON text of an id, or `None` if it is longer than [`PEER_ID_MAX`].
    pub fn new(raw: &str) -> Option<Self> {
        heapless::String::try_from(raw).ok().map(Self)
    }

    /// The raw JSON text, ready to be written back.
    pub fn as_raw(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for PeerRequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PeerRequestId({})", self.as_raw())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_longer_than_the_capacity_are_refused() {
        let long = "x".repeat(SESSION_ID_MAX + 1);
        assert!(SessionId::new(&long).is_none());
        assert!(SessionId::new(&long[..SESSION_ID_MAX]).is_some());
        assert!(PeerRequestId::new(&long).is_none());
        assert_eq!(PeerRequestId::new("\"a\"").unwrap().as_raw(), "\"a\"");
    }
}
