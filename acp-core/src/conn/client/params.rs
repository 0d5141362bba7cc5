//! The params and results a client writes, as small borrowed `Serialize` structs: encoded
//! straight into the outbox, without allocation, in the key order of the official SDKs.

use serde::Serialize;

use super::config::{ClientConfig, Serves, Shows};

/// `_meta` key under which extension methods are listed (Agentao's convention, used on both
/// sides).
pub(crate) const EXTENSIONS_META_KEY: &str = "_agentao.cn/extensions";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams<'a> {
    protocol_version: u16,
    client_capabilities: ClientCaps,
    client_info: Info<'a>,
}

impl<'a> InitializeParams<'a> {
    pub(crate) fn new(config: &'a ClientConfig) -> Self {
        Self {
            protocol_version: crate::machine::handshake::PROTOCOL_VERSION,
            client_capabilities: ClientCaps::new(config.serves, config.shows),
            client_info: Info {
                name: config.name,
                title: config.title,
                version: config.version,
            },
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ClientCaps {
    fs: Fs,
    terminal: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    auth: Option<AuthCaps>,
    #[serde(skip_serializing_if = "Option::is_none")]
    elicitation: Option<Elicitation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<SessionCaps>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subagents: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<Empty>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Extensions>,
}

/// `clientCapabilities.session`: the session-level update kinds the client shows.
#[derive(Serialize)]
struct SessionCaps {
    #[serde(skip_serializing_if = "Option::is_none")]
    notices: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    compaction: Option<Empty>,
}

impl ClientCaps {
    fn new(serves: Serves, shows: Shows) -> Self {
        Self {
            fs: Fs {
                read_text_file: serves.fs_read,
                write_text_file: serves.fs_write,
            },
            terminal: serves.terminal,
            auth: serves.terminal_auth.then_some(AuthCaps { terminal: true }),
            elicitation: serves.elicitation.then_some(Elicitation { form: Empty {} }),
            session: (shows.notices || shows.compaction).then_some(SessionCaps {
                notices: shows.notices.then_some(Empty {}),
                compaction: shows.compaction.then_some(Empty {}),
            }),
            subagents: shows.subagents.then_some(Empty {}),
            plan: shows.plans.then_some(Empty {}),
            meta: serves.ask_user.then_some(Extensions {
                list: [Extension {
                    method: "_agentao.cn/ask_user",
                }],
            }),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fs {
    read_text_file: bool,
    write_text_file: bool,
}

/// `clientCapabilities.auth`: only `terminal`, and only when the application runs terminal
/// auth methods (R-AUTH-7).
#[derive(Serialize)]
struct AuthCaps {
    terminal: bool,
}

#[derive(Serialize)]
struct Elicitation {
    form: Empty,
}

#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
struct Extensions {
    #[serde(rename = "_agentao.cn/extensions")]
    list: [Extension; 1],
}

#[derive(Serialize)]
struct Extension {
    method: &'static str,
}

#[derive(Serialize)]
struct Info<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    version: &'a str,
}

/// `session/new` params: `mcpServers` is always written (every SDK agent refuses a
/// `session/new` without it, tests/interop/README.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewSessionParams<'a, M: ?Sized> {
    pub(crate) cwd: &'a str,
    pub(crate) mcp_servers: &'a M,
}

/// `session/load` and `session/resume` params.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OpenSessionParams<'a, M: ?Sized> {
    pub(crate) session_id: &'a str,
    pub(crate) cwd: &'a str,
    pub(crate) mcp_servers: &'a M,
}

/// `session/prompt` params.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptParams<'a, P: ?Sized> {
    pub(crate) session_id: &'a str,
    pub(crate) prompt: &'a P,
}

/// One text content block, for [`super::ClientConnection::prompt_text`].
#[derive(Serialize)]
pub(crate) struct TextBlock<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) text: &'a str,
}

/// `authenticate` params.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuthenticateParams<'a> {
    pub(crate) method_id: &'a str,
}

/// `{}` (`logout` params).
#[derive(Serialize)]
pub(crate) struct EmptyParams {}

/// `session/cancel` params.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionParams<'a> {
    pub(crate) session_id: &'a str,
}

/// `session/set_mode` params.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetModeParams<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) mode_id: &'a str,
}

/// `session/set_config_option` params (only these three keys: credentials never travel).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetConfigParams<'a, V: ?Sized> {
    pub(crate) session_id: &'a str,
    pub(crate) config_id: &'a str,
    pub(crate) value: &'a V,
}

/// How the user answered a permission request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionAnswer<'a> {
    /// One of the offered options, by `optionId`.
    Selected(&'a str),
    /// No choice (the prompt was dismissed): `{"outcome":{"outcome":"cancelled"}}`.
    Cancelled,
}

/// How the user answered an `_agentao.cn/ask_user` question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskUserAnswer<'a> {
    /// `{"outcome":"answered","text":…}`.
    Answered(&'a str),
    /// `{"outcome":"cancelled"}` (Agentao's client sends a permission-shaped reply instead:
    /// its bug 19).
    Cancelled,
}

#[derive(Serialize)]
pub(crate) struct PermissionResult<'a> {
    pub(crate) outcome: PermissionOutcome<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PermissionOutcome<'a> {
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    option_id: Option<&'a str>,
}

impl<'a> PermissionResult<'a> {
    pub(crate) fn new(answer: PermissionAnswer<'a>) -> Self {
        let outcome = match answer {
            PermissionAnswer::Selected(id) => PermissionOutcome {
                outcome: "selected",
                option_id: Some(id),
            },
            PermissionAnswer::Cancelled => PermissionOutcome {
                outcome: "cancelled",
                option_id: None,
            },
        };
        Self { outcome }
    }
}

#[derive(Serialize)]
pub(crate) struct AskUserResult<'a> {
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
}

impl<'a> AskUserResult<'a> {
    pub(crate) fn new(answer: AskUserAnswer<'a>) -> Self {
        match answer {
            AskUserAnswer::Answered(text) => Self {
                outcome: crate::machine::ask_user::OUTCOME_ANSWERED,
                text: Some(text),
            },
            AskUserAnswer::Cancelled => Self {
                outcome: crate::machine::ask_user::OUTCOME_CANCELLED,
                text: None,
            },
        }
    }
}

/// `mcpServers: []`, for sessions without MCP servers.
pub const NO_MCP_SERVERS: &[(); 0] = &[];
