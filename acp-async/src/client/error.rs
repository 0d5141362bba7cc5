//! [`ClientError`]: why a [`Client`](super::Client) call did not give its result. Every variant
//! carries acp-core's own reason (its texts, its rules), so this layer adds no wording of its
//! own beyond saying which call failed.

use core::fmt;

use acp_core::conn::client::{Failure, HandshakeError};
use acp_core::machine::UsageError;
use acp_core::schema::DecodeError;

/// Why a call of [`Client`](super::Client) or a [`Turn`](super::Turn) failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ClientError {
    /// acp-core refused the command before sending anything: not initialized, a turn already
    /// running, a method the agent did not advertise, … (its
    /// [`UsageError`] says which; nothing was sent).
    Usage(UsageError),
    /// The `initialize` handshake failed (an unsupported protocol version, an error answer).
    Handshake(HandshakeError),
    /// The agent answered the request with an error, an unreadable answer, or not at all
    /// before its deadline or its EOF.
    Failed {
        /// The method of our request.
        method: String,
        /// acp-core's reason.
        failure: Failure,
    },
    /// The answer arrived but does not decode as the method's result.
    Decode(DecodeError),
    /// The turn ended without a stop reason: its deadline passed (acp-core then sent
    /// `session/cancel`; R-HOST-2).
    TurnTimedOut,
    /// The agent's output ended while the turn ran.
    TurnDisconnected,
    /// The connection is gone: the agent's output ended, or the connection future stopped
    /// (dropped, or an I/O error) before this call could be carried out or answered.
    Closed,
}

impl ClientError {
    /// The error from a failed request of ours.
    pub(crate) fn failed(method: &str, failure: Failure) -> Self {
        Self::Failed {
            method: method.to_owned(),
            failure,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(e) => write!(f, "refused before sending: {e}"),
            Self::Handshake(e) => e.fmt(f),
            Self::Failed { method, failure } => write!(f, "{method} failed: {failure}"),
            Self::Decode(e) => e.fmt(f),
            Self::TurnTimedOut => f.write_str(
                "session/prompt failed: no response before the deadline (the turn was cancelled)",
            ),
            Self::TurnDisconnected => {
                f.write_str("session/prompt failed: the agent's output ended during the turn")
            }
            Self::Closed => f.write_str("the connection to the agent is closed"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<UsageError> for ClientError {
    fn from(e: UsageError) -> Self {
        match e {
            UsageError::Closed => Self::Closed,
            other => Self::Usage(other),
        }
    }
}

impl From<DecodeError> for ClientError {
    fn from(e: DecodeError) -> Self {
        Self::Decode(e)
    }
}
