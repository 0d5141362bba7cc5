//! Session lifecycle: `session/new`, `load`, `resume`, `list`, `close`, `delete`, `set_mode`.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::config::SessionConfigOption;
use super::content::ContentBlock;
use super::initialize::empty_message;
use super::lenient::{self, Meta, string_enum};
use super::mcp::McpServer;

/// `session/new` params. A missing `mcpServers` reads as `[]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NewSessionRequest {
    /// Absolute working directory.
    pub cwd: String,
    /// More directories the session may use.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::strings"
    )]
    pub additional_directories: Vec<String>,
    /// MCP servers to connect.
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
    /// Instructions for the session; only when the agent advertises
    /// `sessionCapabilities.systemPrompt`. `null` reads as absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<SystemPrompt>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl NewSessionRequest {
    /// A session in `cwd` with no MCP servers.
    pub fn new(cwd: impl Into<String>) -> Self {
        Self {
            cwd: cwd.into(),
            ..Self::default()
        }
    }
}

/// `session/new` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NewSessionResponse {
    /// The new session's id.
    pub session_id: String,
    /// Available modes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub modes: Option<SessionModeState>,
    /// Config options.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt_skip_invalid"
    )]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `session/load` params (needs `loadSession`). A missing `mcpServers` reads as `[]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LoadSessionRequest {
    /// The session to load.
    pub session_id: String,
    /// Absolute working directory.
    pub cwd: String,
    /// More directories the session may use.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::strings"
    )]
    pub additional_directories: Vec<String>,
    /// MCP servers to connect.
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
    /// Instructions for the session; only when the agent advertises
    /// `sessionCapabilities.systemPrompt`. `null` reads as absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<SystemPrompt>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// The result of `session/load` and `session/resume`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LoadSessionResponse {
    /// Available modes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub modes: Option<SessionModeState>,
    /// Config options.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt_skip_invalid"
    )]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `session/resume` result (same shape as `session/load`'s).
pub type ResumeSessionResponse = LoadSessionResponse;

/// `session/resume` params (needs `sessionCapabilities.resume`; no history replay).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResumeSessionRequest {
    /// The session to resume.
    pub session_id: String,
    /// Absolute working directory.
    pub cwd: String,
    /// More directories the session may use.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::strings"
    )]
    pub additional_directories: Vec<String>,
    /// MCP servers to connect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServer>,
    /// Instructions for the session; only when the agent advertises
    /// `sessionCapabilities.systemPrompt`. `null` reads as absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<SystemPrompt>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `session/list` params (needs `sessionCapabilities.list`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListSessionsRequest {
    /// Only sessions in this directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The `nextCursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `session/list` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListSessionsResponse {
    /// One page of sessions.
    #[serde(deserialize_with = "lenient::required_skip_invalid")]
    pub sessions: Vec<SessionInfo>,
    /// Pass back to get the next page; absent on the last.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub next_cursor: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// A stored session, as listed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionInfo {
    /// Its id.
    pub session_id: String,
    /// Its working directory.
    pub cwd: String,
    /// Its extra directories.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::strings"
    )]
    pub additional_directories: Vec<String>,
    /// Its title.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub title: Option<String>,
    /// ISO 8601 time of the last change.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub updated_at: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Params of the methods that name only a session: `session/close`, `session/delete`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionIdRequest {
    /// The session.
    pub session_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl SessionIdRequest {
    /// Names a session.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            meta: None,
        }
    }
}

/// `session/close` params.
pub type CloseSessionRequest = SessionIdRequest;
/// `session/delete` params.
pub type DeleteSessionRequest = SessionIdRequest;

empty_message! {
    /// `session/close` result.
    CloseSessionResponse;
    /// `session/delete` result.
    DeleteSessionResponse;
}

/// `session/set_mode` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetSessionModeRequest {
    /// The session.
    pub session_id: String,
    /// One of the session's `availableModes`.
    pub mode_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `session/set_mode` result: `{}` in ACP; Agentao also echoes `modeId` (kept for DeepChat).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetSessionModeResponse {
    /// The mode now active (Agentao's addition).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub mode_id: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// The session's modes and which one is active.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionModeState {
    /// The active mode.
    pub current_mode_id: String,
    /// Every mode.
    #[serde(deserialize_with = "lenient::required_skip_invalid")]
    pub available_modes: Vec<SessionMode>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// One mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionMode {
    /// Its id.
    pub id: String,
    /// A human name.
    pub name: String,
    /// What it does.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub description: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl SessionMode {
    /// A mode with a description.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: Some(description.into()),
            meta: None,
        }
    }
}

/// `systemPrompt` on `session/new`, `session/load` and `session/resume`: instructions the
/// client gives the agent for the whole session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SystemPrompt {
    /// How it combines with the agent's own instructions. An agent refuses a mode it does not
    /// support rather than falling back to another.
    pub mode: SystemPromptMode,
    /// The prompt (`text` blocks; never empty).
    pub content: Vec<ContentBlock>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl SystemPrompt {
    /// A prompt combined with the agent's instructions by `mode`.
    pub fn new(mode: SystemPromptMode, content: Vec<ContentBlock>) -> Self {
        Self {
            mode,
            content,
            meta: None,
        }
    }
}

string_enum! {
    /// How a [`SystemPrompt`] combines with the agent's own instructions; unknown modes are
    /// kept (and refused by an agent that does not know them).
    pub enum SystemPromptMode (open) {
        /// Added after the agent's instructions.
        Append = "append",
        /// Replaces them (needs `sessionCapabilities.systemPrompt.mode.override`).
        Override = "override",
    }
}
