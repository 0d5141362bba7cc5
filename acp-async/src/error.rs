//! [`Error`]: what a handler answers a request with when it fails.

use std::fmt;

use acp_core::prelude::{ErrorCode, UsageError};

/// A JSON-RPC error a handler answers with: a code and a message.
///
/// A `-32603` error is sent through acp-core's `fail_turn` or `fail_request`, which word it
/// `Internal error: <message>` (R-RPC-10); other codes carry the message as given.
/// A cancelled turn is answered `cancelled` whatever the handler returns (acp-core, R-CANCEL-3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The JSON-RPC error code.
    pub code: ErrorCode,
    /// The message.
    pub message: String,
    /// Why a command of the connection was refused, when that is the error.
    pub usage: Option<UsageError>,
    /// A `session/load` answered with acp-core's not-found error.
    pub(crate) not_found: bool,
}

impl Error {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            usage: None,
            not_found: false,
        }
    }

    /// `-32603` with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// `-32602` with `message`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32601 Method not found`, worded as acp-core answers a method nobody serves (R-RPC-9).
    pub fn method_not_found() -> Self {
        Self::new(ErrorCode::METHOD_NOT_FOUND, "Method not found")
    }

    /// The connection refused a command (e.g. [`UsageError::Closed`] after the peer left).
    pub fn usage(&self) -> Option<UsageError> {
        self.usage
    }
}

impl From<UsageError> for Error {
    fn from(error: UsageError) -> Self {
        Self {
            code: ErrorCode::INTERNAL_ERROR,
            message: error.to_string(),
            usage: Some(error),
            not_found: false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.0)
    }
}

impl std::error::Error for Error {}
