//! What can go wrong in the store, with the texts the agent puts on the wire.

use std::fmt;
use std::io;
use std::path::PathBuf;

use acp_core::wire::ErrorCode;

/// Why a store operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// `<cwd>/.agentao/sessions/` does not exist (Agentao's first `session/load` check).
    NoSessionsDirectory,
    /// The directory holds no readable session.
    NoSavedSessions,
    /// No session has exactly this id.
    NotFound {
        /// The id asked for.
        session_id: String,
    },
    /// A `session/list` cursor this store did not hand out.
    InvalidCursor {
        /// The cursor as received.
        cursor: String,
    },
    /// A `session/list` `cwd` filter that is not an absolute path (ACP paths are absolute).
    RelativeCwd {
        /// The path as received.
        cwd: String,
    },
    /// The file system refused.
    Io {
        /// What was being done: `read`, `write`, `create`, `remove`.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

impl StoreError {
    /// The JSON-RPC code the agent answers with: `-32602` for a bad cursor or cwd (bad params),
    /// `-32603` for file-system failures, `-32600` otherwise (Agentao's code for a missing
    /// session).
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::InvalidCursor { .. } | Self::RelativeCwd { .. } => ErrorCode::INVALID_PARAMS,
            Self::Io { .. } => ErrorCode::INTERNAL_ERROR,
            _ => ErrorCode::INVALID_REQUEST,
        }
    }

    /// The error message for a method, e.g. `session/load: Session 'sess_1' not found`.
    pub fn rpc_message(&self, method: &str) -> String {
        format!("{method}: {self}")
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSessionsDirectory => f.write_str("No sessions directory found"),
            Self::NoSavedSessions => f.write_str("No saved sessions found"),
            Self::NotFound { session_id } => write!(f, "Session '{session_id}' not found"),
            Self::InvalidCursor { cursor } => write!(f, "invalid cursor '{cursor}'"),
            Self::RelativeCwd { cwd } => write!(f, "cwd must be an absolute path, got '{cwd}'"),
            Self::Io {
                action,
                path,
                source,
            } => {
                write!(f, "cannot {action} {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A file the store passed over or read only partly; returned to the caller to log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreWarning {
    /// The file.
    pub path: PathBuf,
    /// What was wrong, e.g. `skipped: not valid JSON (EOF while parsing …)`.
    pub reason: String,
}

impl fmt::Display for StoreWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}
