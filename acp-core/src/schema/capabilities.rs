//! Capability objects exchanged by `initialize`.
//!
//! Omitted capabilities mean "unsupported". Flags are booleans defaulting to `false`; "support
//! markers" are objects (`{}` = supported, absent or `null` = not), modelled as `Option<Marker>`.

use serde::{Deserialize, Serialize};

use super::lenient::{self, Meta};

/// A support marker: its presence means supported.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Marker {
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// What the client offers the agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// `fs/*` methods.
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub fs: FileSystemCapabilities,
    /// `terminal/*` methods.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub terminal: bool,
    /// Session-related client features.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub session: Option<ClientSessionCapabilities>,
    /// Authentication features.
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub auth: AuthCapabilities,
    /// `elicitation/create` modes.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub elicitation: Option<ElicitationCapabilities>,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// The client's file system methods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FileSystemCapabilities {
    /// `fs/read_text_file`.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub read_text_file: bool,
    /// `fs/write_text_file`.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub write_text_file: bool,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// Session features of the client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientSessionCapabilities {
    /// Config option features.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub config_options: Option<SessionConfigOptionsCapabilities>,
    /// The client shows `notice` updates.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub notices: Option<Marker>,
    /// The client understands compaction updates.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub compaction: Option<Marker>,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// Config option features of the client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionConfigOptionsCapabilities {
    /// The client handles `type: "boolean"` options.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub boolean: Option<Marker>,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// Authentication features of the client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AuthCapabilities {
    /// The client can run terminal auth methods.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub terminal: bool,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// Elicitation modes the client supports; each must be advertised explicitly.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCapabilities {
    /// Form mode.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub form: Option<Marker>,
    /// URL mode.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub url: Option<Marker>,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// What the agent supports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCapabilities {
    /// `session/load`.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub load_session: bool,
    /// Content types allowed in prompts.
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub prompt_capabilities: PromptCapabilities,
    /// MCP transports besides stdio.
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub mcp_capabilities: McpCapabilities,
    /// Optional session methods.
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub session_capabilities: SessionCapabilities,
    /// Authentication methods.
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub auth: AgentAuthCapabilities,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// Content types allowed in prompts beyond text and resource links.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptCapabilities {
    /// `image` blocks.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub image: bool,
    /// `audio` blocks.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub audio: bool,
    /// `resource` blocks.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub embedded_context: bool,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// MCP transports the agent can connect to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpCapabilities {
    /// `type: "http"` servers.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub http: bool,
    /// `type: "sse"` servers.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub sse: bool,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// Optional session methods the agent implements.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionCapabilities {
    /// `session/list`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub list: Option<Marker>,
    /// `session/delete`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub delete: Option<Marker>,
    /// `additionalDirectories` on session methods.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub additional_directories: Option<Marker>,
    /// `session/resume`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub resume: Option<Marker>,
    /// `session/close`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub close: Option<Marker>,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

/// Authentication features of the agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentAuthCapabilities {
    /// `logout`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::or_default")]
    pub logout: Option<Marker>,
    /// Extension data.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}
