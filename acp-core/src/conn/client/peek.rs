//! Reading the few result and params fields that drive state, straight from the validated
//! wire text: works without `alloc`.

use crate::machine::SESSION_ID_MAX;
use crate::machine::SessionId;
use crate::machine::handshake::Capabilities;
use crate::wire::{JsonStr, RawValue};

use super::event::AdvertisedMethods;
use super::params::EXTENSIONS_META_KEY;

/// A session id from a JSON string: `None` when longer than [`SESSION_ID_MAX`] once decoded.
pub(crate) fn session_id(s: JsonStr<'_>) -> Option<SessionId> {
    if let Some(plain) = s.as_plain() {
        return SessionId::new(plain);
    }
    let mut buf = [0u8; SESSION_ID_MAX];
    SessionId::new(s.unescape_into(&mut buf).ok()?)
}

/// `value.<path…>` when every step is an object member.
pub(crate) fn path<'a>(value: RawValue<'a>, keys: &[&str]) -> Option<RawValue<'a>> {
    keys.iter().try_fold(value, |v, key| v.get_field(key))
}

fn flag(value: RawValue<'_>, keys: &[&str]) -> bool {
    path(value, keys).and_then(|v| v.as_bool()).unwrap_or(false)
}

/// An optional capability object: present and not `null`/`false` means supported.
fn present(value: RawValue<'_>, keys: &[&str]) -> bool {
    path(value, keys).is_some_and(|v| !v.is_null() && v.as_bool() != Some(false))
}

/// The agent's capabilities from an `initialize` result. Missing or malformed members mean
/// "not supported" (interop: missing flags must mean false).
pub(crate) fn agent_capabilities(result: RawValue<'_>) -> (Capabilities, AdvertisedMethods) {
    let caps = result.get_field("agentCapabilities");
    let mut out = Capabilities::empty();
    let mut features = AdvertisedMethods::default();
    if let Some(caps) = caps {
        out = out
            .with(Capabilities::LOAD_SESSION, flag(caps, &["loadSession"]))
            .with(
                Capabilities::PROMPT_IMAGE,
                flag(caps, &["promptCapabilities", "image"]),
            )
            .with(
                Capabilities::PROMPT_AUDIO,
                flag(caps, &["promptCapabilities", "audio"]),
            )
            .with(
                Capabilities::PROMPT_EMBEDDED_CONTEXT,
                flag(caps, &["promptCapabilities", "embeddedContext"]),
            )
            .with(
                Capabilities::MCP_HTTP,
                flag(caps, &["mcpCapabilities", "http"]),
            )
            .with(
                Capabilities::MCP_SSE,
                flag(caps, &["mcpCapabilities", "sse"]),
            );
        features = AdvertisedMethods {
            resume: present(caps, &["sessionCapabilities", "resume"]),
            list: present(caps, &["sessionCapabilities", "list"]),
            close: present(caps, &["sessionCapabilities", "close"]),
            delete: present(caps, &["sessionCapabilities", "delete"]),
            logout: present(caps, &["auth", "logout"]),
            authenticate: false,
        };
    }
    features.authenticate = result
        .get_field("authMethods")
        .is_some_and(|methods| methods.elements().next().is_some());
    // Agentao lists its extensions as objects `{method, description}`; other agents write
    // bare strings. Both count.
    if let Some(list) = path(result, &["_meta", EXTENSIONS_META_KEY]) {
        for entry in list.elements() {
            let name = entry
                .as_str()
                .or_else(|| entry.get_field("method").and_then(|m| m.as_str()));
            if let Some(name) = name {
                out = out
                    .with(Capabilities::ASK_USER, name.eq_str("_agentao.cn/ask_user"))
                    .with(
                        Capabilities::SET_MODEL,
                        name.eq_str("_agentao.cn/set_model"),
                    );
            }
        }
    }
    (out, features)
}

/// Whether an update kind is the content of a turn (as opposed to session state that may
/// change between turns).
pub(crate) fn is_turn_content(kind: JsonStr<'_>) -> bool {
    [
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
    ]
    .iter()
    .any(|k| kind.eq_str(k))
}
