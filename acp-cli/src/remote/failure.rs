//! Why a remote agent cannot be reached or was lost, in one line each (R-NETC-4): the
//! commands print them after their own prefix (`acp-cli client: …`, `acp-cli bridge: …`) and
//! exit 1. No message carries the token or the URL's query.

use std::fmt;

/// See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoteError {
    /// Nothing listens at `host:port`.
    Refused {
        /// `host:port`.
        place: String,
    },
    /// The TCP connection failed otherwise (DNS, unreachable network, reset).
    Unreachable {
        /// `host:port`.
        place: String,
        /// The system's words.
        why: String,
    },
    /// The TLS handshake failed (an untrusted or mismatched certificate, a plain server).
    Tls {
        /// `host:port`.
        place: String,
        /// rustls's words.
        why: String,
    },
    /// 401: no token, or the wrong one.
    Unauthorized {
        /// Whether a token was sent.
        sent_token: bool,
    },
    /// 403: the server refuses us (an Origin or address it does not allow).
    Forbidden,
    /// 404: nothing at this path, or the server no longer knows our connection.
    NotFound {
        /// The URL, without its query.
        url: String,
    },
    /// The server answered, but not as an ACP endpoint does.
    NotAcp {
        /// The URL, without its query.
        url: String,
        /// What it did instead.
        why: String,
    },
    /// Another HTTP status where the transport needs success.
    Status {
        /// The status code.
        status: u16,
        /// The reason phrase.
        reason: String,
    },
    /// The connection broke (a read or write failed, a malformed stream).
    Lost(String),
    /// The remote agent closed the connection.
    Closed,
}

impl RemoteError {
    /// The error for an HTTP status that is not the expected one: 401, 403 and 404 by name,
    /// anything else as it is.
    pub(crate) fn from_status(status: u16, reason: &str, url: &str, sent_token: bool) -> Self {
        match status {
            401 => Self::Unauthorized { sent_token },
            403 => Self::Forbidden,
            404 => Self::NotFound {
                url: url.to_owned(),
            },
            _ => Self::Status {
                status,
                reason: reason.to_owned(),
            },
        }
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused { place } => {
                write!(f, "cannot connect to {place}: connection refused")
            }
            Self::Unreachable { place, why } => write!(f, "cannot connect to {place}: {why}"),
            Self::Tls { place, why } => write!(f, "TLS handshake with {place} failed: {why}"),
            Self::Unauthorized { sent_token: true } => f.write_str(
                "the server refused the token (401 Unauthorized): check --token-file or ACP_TOKEN",
            ),
            Self::Unauthorized { sent_token: false } => f.write_str(
                "the server requires a token (401 Unauthorized): give --token-file FILE or set ACP_TOKEN",
            ),
            Self::Forbidden => f.write_str("the server refused the connection (403 Forbidden)"),
            Self::NotFound { url } => write!(f, "no ACP endpoint at {url} (404 Not Found)"),
            Self::NotAcp { url, why } => write!(f, "{url} is not an ACP server: {why}"),
            Self::Status { status, reason } => {
                write!(f, "the server answered {status} {reason}")
            }
            Self::Lost(why) => write!(f, "the connection to the remote agent was lost: {why}"),
            Self::Closed => f.write_str("the remote agent closed the connection"),
        }
    }
}

impl std::error::Error for RemoteError {}
