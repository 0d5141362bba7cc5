//! Capability objects exchanged by `initialize`.
//!
//! Omitted capabilities mean "unsupported". Flags are booleans defaulting to `false`; "support
//! markers" are objects (`{}` = supported, absent or `null` = not), modelled as `Option<Marker>`.
//! Nested capability objects are `Option`s too, so what a peer sent re-encodes as sent; the
//! accessor methods read them with their defaults. `false` flags are not written.

use serde::{Deserialize, Serialize};

use super::lenient::{self, Meta};

/// A support marker: its presence means supported.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Marker {
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// What the client offers the agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// `fs/*` methods.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub fs: Option<FileSystemCapabilities>,
    /// `terminal/*` methods.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub terminal: bool,
    /// Session-related client features.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub session: Option<ClientSessionCapabilities>,
    /// The client shows `subagent_update`s and the messages of subagent sessions.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub subagents: Option<Marker>,
    /// The client renders the `plan_update` and `plan_removed` updates (several plans, by id).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub plan: Option<Marker>,
    /// Authentication features.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub auth: Option<AuthCapabilities>,
    /// `elicitation/create` modes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub elicitation: Option<ElicitationCapabilities>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// The client's file system methods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FileSystemCapabilities {
    /// `fs/read_text_file`.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub read_text_file: bool,
    /// `fs/write_text_file`.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub write_text_file: bool,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Session features of the client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientSessionCapabilities {
    /// Config option features.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub config_options: Option<SessionConfigOptionsCapabilities>,
    /// The client shows `notice` updates.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub notices: Option<Marker>,
    /// The client understands compaction updates.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub compaction: Option<Marker>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Config option features of the client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionConfigOptionsCapabilities {
    /// The client handles `type: "boolean"` options.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub boolean: Option<Marker>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Authentication features of the client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AuthCapabilities {
    /// The client can run terminal auth methods.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub terminal: bool,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Elicitation modes the client supports; each must be advertised explicitly.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCapabilities {
    /// Form mode.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub form: Option<Marker>,
    /// URL mode.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub url: Option<Marker>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// What the agent supports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCapabilities {
    /// `session/load`.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub load_session: bool,
    /// Content types allowed in prompts.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub prompt_capabilities: Option<PromptCapabilities>,
    /// MCP transports besides stdio.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub mcp_capabilities: Option<McpCapabilities>,
    /// Optional session methods.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub session_capabilities: Option<SessionCapabilities>,
    /// Authentication methods.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub auth: Option<AgentAuthCapabilities>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Content types allowed in prompts beyond text and resource links.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptCapabilities {
    /// `image` blocks.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub image: bool,
    /// `audio` blocks.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub audio: bool,
    /// `resource` blocks.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub embedded_context: bool,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// MCP transports the agent can connect to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpCapabilities {
    /// `type: "http"` servers.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub http: bool,
    /// `type: "sse"` servers.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub sse: bool,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Optional session methods the agent implements.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionCapabilities {
    /// `session/list`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub list: Option<Marker>,
    /// `session/delete`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub delete: Option<Marker>,
    /// `additionalDirectories` on session methods.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub additional_directories: Option<Marker>,
    /// `session/resume`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub resume: Option<Marker>,
    /// `session/close`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub close: Option<Marker>,
    /// `systemPrompt` on `session/new`, `session/load` and `session/resume`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub system_prompt: Option<SessionSystemPromptCapabilities>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Authentication features of the agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentAuthCapabilities {
    /// `logout`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub logout: Option<Marker>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(flag: &bool) -> bool {
    !*flag
}

impl ClientCapabilities {
    /// Whether the client serves `fs/read_text_file`.
    pub fn can_read_text_file(&self) -> bool {
        self.fs.as_ref().is_some_and(|fs| fs.read_text_file)
    }

    /// Whether the client serves `fs/write_text_file`.
    pub fn can_write_text_file(&self) -> bool {
        self.fs.as_ref().is_some_and(|fs| fs.write_text_file)
    }

    /// Whether the client can run terminal auth methods.
    pub fn can_run_terminal_auth(&self) -> bool {
        self.auth.as_ref().is_some_and(|auth| auth.terminal)
    }
}

impl AgentCapabilities {
    /// The prompt capabilities, defaulted.
    pub fn prompt(&self) -> PromptCapabilities {
        self.prompt_capabilities.clone().unwrap_or_default()
    }

    /// The MCP capabilities, defaulted.
    pub fn mcp(&self) -> McpCapabilities {
        self.mcp_capabilities.clone().unwrap_or_default()
    }

    /// The session capabilities, defaulted.
    pub fn session(&self) -> SessionCapabilities {
        self.session_capabilities.clone().unwrap_or_default()
    }

    /// Whether the agent implements `logout`.
    pub fn can_logout(&self) -> bool {
        self.auth.as_ref().is_some_and(|auth| auth.logout.is_some())
    }
}

/// `sessionCapabilities.systemPrompt`: the agent takes a `systemPrompt` when a session starts.
/// Present means `append` is supported; `mode.override` adds `override`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionSystemPromptCapabilities {
    /// The modes beyond `append`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub mode: Option<SessionSystemPromptModeCapabilities>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `sessionCapabilities.systemPrompt.mode`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionSystemPromptModeCapabilities {
    /// `mode: "override"` replaces the agent's own prompt.
    #[serde(
        rename = "override",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub override_: Option<Marker>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}
