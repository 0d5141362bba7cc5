//! What the peer did wrong, as the JSON-RPC error the connection sends back. The message
//! texts are Agentao's (R-SESSION-3, R-INIT-2, R-TURN-2, R-CANCEL-2) unless docs/protocol.md
//! says otherwise; they are produced by `Display`, so encoding them needs no allocation.

use core::fmt;

use super::ids::PEER_ID_MAX;
use crate::wire::ErrorCode;

/// A peer request the machines refuse, borrowing the method and session id from the input.
/// The connection answers the request with [`Rejection::code`] and the `Display` text as the
/// message (and sends nothing for a notification).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection<'a> {
    /// Any request but `initialize` before the handshake.
    BeforeInitialize {
        /// The method, exactly as received.
        method: &'a str,
    },
    /// `initialize.protocolVersion` is not a JSON integer (`true`, `"1"`, `1.5`).
    ProtocolVersionNotInteger,
    /// `initialize.protocolVersion` is an integer outside the schema's `u16`.
    ProtocolVersionOutOfRange,
    /// No session has this id.
    UnknownSession {
        /// The `sessionId` received.
        session: &'a str,
    },
    /// The session exists but is closed or still being created or loaded.
    SessionNotActive {
        /// The `sessionId` received.
        session: &'a str,
    },
    /// A second `session/prompt` while a turn runs on that session.
    TurnAlreadyActive {
        /// The `sessionId` received.
        session: &'a str,
    },
    /// A mode, model or config change (or a reload) during a turn.
    Busy {
        /// The method, exactly as received.
        method: &'a str,
        /// The `sessionId` received.
        session: &'a str,
    },
    /// The request was cancelled with `$/cancel_request` before it was answered.
    RequestCancelled,
    /// The connection reached EOF before the request was answered.
    ConnectionClosed,
    /// More peer requests in flight than the configured limit.
    TooManyRequests {
        /// The limit.
        limit: usize,
    },
    /// More sessions than the configured limit.
    TooManySessions {
        /// The limit.
        limit: usize,
    },
    /// `session/load` of an id that does not exist (exact match, R-SESSION-6).
    LoadNotFound {
        /// The `sessionId` received.
        session: &'a str,
    },
    /// The request id is longer than we can store to echo it.
    IdTooLong,
}

impl Rejection<'_> {
    /// The JSON-RPC error code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::BeforeInitialize { .. } => ErrorCode::RESOURCE_NOT_FOUND,
            Self::ProtocolVersionNotInteger | Self::ProtocolVersionOutOfRange => {
                ErrorCode::INVALID_PARAMS
            }
            Self::UnknownSession { .. }
            | Self::SessionNotActive { .. }
            | Self::TurnAlreadyActive { .. }
            | Self::Busy { .. }
            | Self::LoadNotFound { .. }
            | Self::IdTooLong => ErrorCode::INVALID_REQUEST,
            Self::RequestCancelled | Self::ConnectionClosed => ErrorCode::REQUEST_CANCELLED,
            Self::TooManyRequests { .. } | Self::TooManySessions { .. } => {
                ErrorCode::INTERNAL_ERROR
            }
        }
    }
}

impl fmt::Display for Rejection<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BeforeInitialize { method } => {
                write!(f, "{method} called before initialize handshake")
            }
            Self::ProtocolVersionNotInteger => {
                f.write_str("Invalid params: initialize.protocolVersion must be an integer")
            }
            Self::ProtocolVersionOutOfRange => f.write_str(
                "Invalid params: initialize.protocolVersion must be an integer from 0 to 65535",
            ),
            Self::UnknownSession { session } => write!(f, "unknown sessionId: {session}"),
            Self::SessionNotActive { session } => write!(f, "session {session} is not active"),
            Self::TurnAlreadyActive { session } => {
                write!(f, "session {session} already has an active turn")
            }
            Self::Busy { method, session } => write!(
                f,
                "{method} rejected: session {session} has an active turn; retry after it completes"
            ),
            Self::RequestCancelled => f.write_str("Request cancelled"),
            Self::ConnectionClosed => f.write_str("Request cancelled: connection closed"),
            Self::TooManyRequests { limit } => write!(
                f,
                "Internal error: too many requests in flight (limit {limit})"
            ),
            Self::TooManySessions { limit } => {
                write!(f, "Internal error: too many sessions (limit {limit})")
            }
            Self::LoadNotFound { session } => {
                write!(f, "session/load: Session '{session}' not found")
            }
            Self::IdTooLong => write!(f, "Invalid Request: id longer than {PEER_ID_MAX} bytes"),
        }
    }
}
