//! Local misuse: the application asked for something the protocol or the current state
//! forbids. Peer misbehaviour is never one of these (see [`super::Rejection`]).

use core::fmt;

/// A command the application issued cannot be carried out. Nothing was sent and no state
/// changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UsageError {
    /// The command needs the `initialize` handshake to have completed.
    NotInitialized,
    /// No session has this id (or its `session/new` response has not been sent yet).
    UnknownSession,
    /// The session exists but is not usable: still being created or loaded, or closed.
    SessionNotActive,
    /// A session with this id already exists.
    SessionExists,
    /// The session already has a turn running; one turn per session.
    TurnInProgress,
    /// The session has no turn running.
    NoTurn,
    /// The turn this refers to has already been answered; updates must come before the
    /// `session/prompt` response.
    TurnAnswered,
    /// This request was already settled (answered, cancelled, timed out or dropped at EOF),
    /// or never existed.
    AlreadySettled,
    /// The connection has seen EOF; nothing more can be sent.
    Closed,
    /// The table of requests in flight (or of sessions) is at its configured limit.
    TooManyInFlight,
    /// The peer did not advertise the capability this needs (e.g. `fs.readTextFile`).
    CapabilityNotAdvertised,
    /// The agent did not advertise what the request needs, named in the message (e.g.
    /// `session/list` without `agentCapabilities.sessionCapabilities.list`).
    NotAdvertised {
        /// The request's method (`session/prompt` for a content type).
        method: &'static str,
        /// What the agent would have had to advertise.
        needs: &'static str,
    },
    /// An id is longer than the fixed capacity used to store it.
    IdTooLong,
    /// Backpressure, the one "outbox full" error of both connections: the outbox cannot take
    /// the line (full), or updates are paused above its high-water mark. Write out pending
    /// bytes ([`poll_transmit`](crate::AgentConnection::poll_transmit), then `transmitted`),
    /// then retry. Nothing was queued.
    WouldBlock,
    /// A permission request names a `toolCallId` that no `tool_call` update of the running
    /// turn announced.
    UnknownToolCall,
    /// The answer does not fit the request's method (e.g. a permission outcome for an
    /// `ask_user` request).
    WrongKind,
    /// The `initialize` handshake failed (e.g. an unsupported protocol version).
    HandshakeFailed,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Self::NotInitialized => "the initialize handshake has not completed",
            Self::UnknownSession => "unknown session",
            Self::SessionNotActive => "session is not active",
            Self::SessionExists => "a session with this id already exists",
            Self::TurnInProgress => "session already has an active turn",
            Self::NoTurn => "session has no active turn",
            Self::TurnAnswered => "the turn has already been answered; updates must come first",
            Self::AlreadySettled => "request already settled",
            Self::Closed => "connection closed",
            Self::TooManyInFlight => "too many requests or sessions in flight",
            Self::CapabilityNotAdvertised => "the peer did not advertise this capability",
            Self::IdTooLong => "id longer than its fixed capacity",
            Self::WouldBlock => "the outbox is full; write out pending bytes first",
            Self::UnknownToolCall => "no tool_call update of this turn announced that toolCallId",
            Self::WrongKind => "the answer does not fit the request's method",
            Self::HandshakeFailed => "the initialize handshake failed",
            Self::NotAdvertised { method, needs } => {
                return write!(
                    f,
                    "{method} needs {needs}, which the agent did not advertise; nothing was sent"
                );
            }
        };
        f.write_str(text)
    }
}

impl core::error::Error for UsageError {}
