//! The lines the agent connection writes: results and notifications as small borrowed
//! `Serialize` structs, so they encode without an allocator.

use core::fmt;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use super::auth::AuthMethodsJson;
use super::config::{AgentConfig, Dialect};
use crate::conn::transport::Outbox;
use crate::machine::UsageError;
use crate::machine::handshake::PROTOCOL_VERSION;
use crate::wire::encode;
use crate::wire::frame::ByteStorage;
use crate::wire::{ErrorCode, Id, JsonStr};

/// The description listed for `_agentao.cn/ask_user` (Agentao's text).
pub const ASK_USER_DESCRIPTION: &str = "Request free-form text input from the user.";
/// The description listed for `_agentao.cn/set_model`.
pub const SET_MODEL_DESCRIPTION: &str = "Switch the session's model (model-only, secret-free).";

/// A stored raw id (`7`, `"abc"`) as a wire id to echo.
pub(crate) fn wire_id(raw: &str) -> Id<'_> {
    match raw.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => Id::Str(JsonStr::new_unchecked(inner, inner.contains('\\'))),
        None => Id::Int(raw),
    }
}

/// Writes a result line answering the request with raw id `id`.
pub(crate) fn result<O: ByteStorage, R: Serialize + ?Sized>(
    out: &mut Outbox<O>,
    id: &str,
    value: &R,
) -> Result<(), UsageError> {
    out.push_line(|sink| encode::write_result(sink, wire_id(id), value))
}

/// Writes an error line answering the request with raw id `id`.
pub(crate) fn error<O: ByteStorage, M: fmt::Display + ?Sized>(
    out: &mut Outbox<O>,
    id: &str,
    code: ErrorCode,
    message: &M,
) -> Result<(), UsageError> {
    out.push_line(|sink| encode::write_error(sink, wire_id(id), code, message, None::<&()>))
}

/// Writes a notification line.
pub(crate) fn notification<O: ByteStorage, P: Serialize + ?Sized>(
    out: &mut Outbox<O>,
    method: &str,
    params: &P,
) -> Result<(), UsageError> {
    out.push_line(|sink| encode::write_notification(sink, method, Some(params)))
}

/// Writes a request line of ours.
pub(crate) fn request<O: ByteStorage, P: Serialize + ?Sized>(
    out: &mut Outbox<O>,
    id: u64,
    method: &str,
    params: &P,
) -> Result<(), UsageError> {
    out.push_line(|sink| encode::write_request(sink, id, method, Some(params)))
}

/// The token usage a prompt's answer may carry: the schema's type with `alloc`.
#[cfg(feature = "alloc")]
pub(crate) type TurnUsage = crate::schema::Usage;

/// Without `alloc` an answer carries no usage: a type with no value.
#[cfg(not(feature = "alloc"))]
#[derive(Serialize)]
pub(crate) enum TurnUsage {}

/// `{"stopReason":…}`, with the turn's `usage` when the agent reports it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StopResult<'a> {
    pub(crate) stop_reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) usage: Option<&'a TurnUsage>,
}

/// `{}`.
#[derive(Serialize)]
pub(crate) struct Empty {}

/// `{"sessionId":…}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionIdResult<'a> {
    pub(crate) session_id: &'a str,
}

/// `session/update` params.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateParams<'a, U: ?Sized> {
    pub(crate) session_id: &'a str,
    pub(crate) update: &'a U,
}

/// `current_mode_update`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModeUpdate<'a> {
    pub(crate) session_update: &'static str,
    pub(crate) current_mode_id: &'a str,
}

/// `{"modeId":…}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModeResult<'a> {
    pub(crate) mode_id: &'a str,
}

/// `$/cancel_request` params.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelRequestParams {
    pub(crate) request_id: u64,
}

/// The `initialize` answer built from the configuration, for a client that can (`true`) or
/// cannot run terminal auth methods (R-AUTH-2).
pub(crate) struct InitializeResult<'a>(pub(crate) &'a AgentConfig, pub(crate) bool);

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Prompt {
    image: bool,
    audio: bool,
    embedded_context: bool,
}

#[derive(Serialize)]
struct Mcp {
    http: bool,
    sse: bool,
}

#[derive(Serialize)]
struct SessionCaps {
    #[serde(skip_serializing_if = "Option::is_none")]
    list: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resume: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    close: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delete: Option<Empty>,
    #[serde(
        rename = "additionalDirectories",
        skip_serializing_if = "Option::is_none"
    )]
    additional_directories: Option<Empty>,
    #[serde(rename = "systemPrompt", skip_serializing_if = "Option::is_none")]
    system_prompt: Option<Empty>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AgentCaps {
    load_session: bool,
    prompt_capabilities: Prompt,
    mcp_capabilities: Mcp,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_capabilities: Option<SessionCaps>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auth: Option<AuthCaps>,
}

/// `agentCapabilities.auth` (R-AUTH-5).
#[derive(Serialize)]
struct AuthCaps {
    logout: Empty,
}

#[derive(Serialize)]
struct Info<'a> {
    name: &'a str,
    title: &'a str,
    version: &'a str,
}

#[derive(Serialize)]
struct ExtensionEntry<'a> {
    method: &'a str,
    description: &'a str,
}

struct Extensions<'a>(&'a AgentConfig);

impl Serialize for Extensions<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let features = &self.0.features;
        let mut seq = s.serialize_seq(None)?;
        if features.ask_user {
            seq.serialize_element(&ExtensionEntry {
                method: "_agentao.cn/ask_user",
                description: ASK_USER_DESCRIPTION,
            })?;
        }
        if features.set_model {
            seq.serialize_element(&ExtensionEntry {
                method: "_agentao.cn/set_model",
                description: SET_MODEL_DESCRIPTION,
            })?;
        }
        for extension in &self.0.extensions {
            seq.serialize_element(&ExtensionEntry {
                method: &extension.method,
                description: &extension.description,
            })?;
        }
        seq.end()
    }
}

struct Meta<'a>(&'a AgentConfig);

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry("_agentao.cn/extensions", &Extensions(self.0))?;
        map.end()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeBody<'a> {
    protocol_version: u16,
    agent_capabilities: AgentCaps,
    auth_methods: AuthMethodsJson<'a>,
    agent_info: Info<'a>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Meta<'a>>,
}

impl Serialize for InitializeResult<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let config = self.0;
        let f = &config.features;
        let marker = |on: bool| on.then_some(Empty {});
        let any_session = f.session_list
            || f.session_resume
            || f.session_close
            || f.session_delete
            || f.additional_directories
            || f.system_prompt;
        InitializeBody {
            protocol_version: PROTOCOL_VERSION,
            agent_capabilities: AgentCaps {
                load_session: f.load_session,
                prompt_capabilities: Prompt {
                    image: f.prompt_image,
                    audio: f.prompt_audio,
                    embedded_context: f.prompt_embedded_context,
                },
                mcp_capabilities: Mcp {
                    http: f.mcp_http,
                    sse: f.mcp_sse,
                },
                session_capabilities: any_session.then_some(SessionCaps {
                    list: marker(f.session_list),
                    resume: marker(f.session_resume),
                    close: marker(f.session_close),
                    delete: marker(f.session_delete),
                    additional_directories: marker(f.additional_directories),
                    system_prompt: marker(f.system_prompt),
                }),
                auth: f.logout.then_some(AuthCaps { logout: Empty {} }),
            },
            auth_methods: AuthMethodsJson {
                methods: &config.auth_methods,
                terminal: self.1,
            },
            agent_info: Info {
                name: &config.info.name,
                title: &config.info.title,
                version: &config.info.version,
            },
            // Agentao's list of extensions: always in its dialect; in plain ACP only when
            // there is something to list (R-INIT-5).
            meta: (config.dialect == Dialect::Agentao
                || f.ask_user
                || f.set_model
                || !config.extensions.is_empty())
            .then_some(Meta(config)),
        }
        .serialize(s)
    }
}
