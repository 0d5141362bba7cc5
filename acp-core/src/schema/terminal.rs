//! The client's terminals: `terminal/create`, `output`, `wait_for_exit`, `kill`, `release`.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::initialize::empty_message;
use super::lenient::{self, Meta};
use super::mcp::EnvVariable;

/// `terminal/create` params (needs `terminal`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateTerminalRequest {
    /// The session.
    pub session_id: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::strings"
    )]
    pub args: Vec<String>,
    /// Extra environment.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::skip_invalid"
    )]
    pub env: Vec<EnvVariable>,
    /// Absolute working directory.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub cwd: Option<String>,
    /// Output beyond this many bytes is truncated from the start.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub output_byte_limit: Option<u64>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `terminal/create` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateTerminalResponse {
    /// The new terminal's id.
    pub terminal_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Params of the methods that name one terminal.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TerminalRequest {
    /// The session.
    pub session_id: String,
    /// The terminal.
    pub terminal_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl TerminalRequest {
    /// Names a terminal of a session.
    pub fn new(session_id: impl Into<String>, terminal_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            terminal_id: terminal_id.into(),
            meta: None,
        }
    }
}

/// `terminal/output` params.
pub type TerminalOutputRequest = TerminalRequest;
/// `terminal/wait_for_exit` params.
pub type WaitForTerminalExitRequest = TerminalRequest;
/// `terminal/kill` params.
pub type KillTerminalRequest = TerminalRequest;
/// `terminal/release` params.
pub type ReleaseTerminalRequest = TerminalRequest;

/// `terminal/output` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TerminalOutputResponse {
    /// Output so far.
    pub output: String,
    /// Whether the start was cut off by the byte limit.
    pub truncated: bool,
    /// Set once the command exited.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub exit_status: Option<TerminalExitStatus>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// How a command ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TerminalExitStatus {
    /// The exit code, if it exited.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub exit_code: Option<u32>,
    /// The signal, if it was killed.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub signal: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `terminal/wait_for_exit` result (the same fields as [`TerminalExitStatus`]).
pub type WaitForTerminalExitResponse = TerminalExitStatus;

empty_message! {
    /// `terminal/kill` result.
    KillTerminalResponse;
    /// `terminal/release` result.
    ReleaseTerminalResponse;
}
