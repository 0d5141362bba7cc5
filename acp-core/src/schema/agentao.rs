//! Agentao's extensions: `_agentao.cn/ask_user`, `_agentao.cn/set_model` and the extension list
//! in `initialize`'s `_meta`.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::lenient::{self, Meta};

/// The `_meta` key under which an agent lists its extension methods in `initialize`.
pub const EXTENSIONS_META_KEY: &str = "_agentao.cn/extensions";

/// What an `ask_user` resolves to when no usable answer comes back (cancelled, empty, error,
/// disconnect, malformed): the turn goes on with this text.
pub const USER_UNAVAILABLE: &str = "(user unavailable)";

/// One entry of `_meta["_agentao.cn/extensions"]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExtensionInfo {
    /// The extension method's name.
    pub method: String,
    /// What it does.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub description: Option<String>,
}

impl ExtensionInfo {
    /// An entry with a description.
    pub fn new(method: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            method: method.into(),
            description: Some(description.into()),
        }
    }
}

/// Writes the extension list into a `_meta` object (creating the key).
pub fn set_extensions(meta: &mut Meta, extensions: &[ExtensionInfo]) {
    let list = extensions
        .iter()
        .filter_map(|ext| serde_json::to_value(ext).ok())
        .collect::<Vec<_>>();
    meta.insert(String::from(EXTENSIONS_META_KEY), Value::Array(list));
}

/// Reads the extension list from a `_meta` object; malformed entries are skipped.
pub fn extensions(meta: &Meta) -> Vec<ExtensionInfo> {
    match meta.get(EXTENSIONS_META_KEY) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| ExtensionInfo::deserialize(item).ok())
            .collect(),
        _ => Vec::new(),
    }
}

/// `_agentao.cn/ask_user` params (agent → client request): free-form input from the user.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AskUserRequest {
    /// The session.
    pub session_id: String,
    /// The question.
    pub question: String,
    /// A short header.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub header: Option<String>,
    /// Suggested answers.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt_skip_invalid"
    )]
    pub options: Option<Vec<String>>,
    /// Several options may be chosen (sent only when true).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub multiple: Option<bool>,
    /// Free text besides the options is allowed (sent only when false).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub allow_custom: Option<bool>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl AskUserRequest {
    /// A plain question.
    pub fn new(session_id: impl Into<String>, question: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            question: question.into(),
            ..Self::default()
        }
    }
}

/// `_agentao.cn/ask_user` result. Decoding never fails on a JSON value: anything that is not
/// a well-formed answer is [`AskUserResponse::Unusable`], which reads as the sentinel.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AskUserResponse {
    /// `{"outcome":"answered","text":…}`.
    Answered(String),
    /// `{"outcome":"cancelled"}`.
    Cancelled,
    /// Any other result, kept as sent.
    Unusable(Value),
}

impl AskUserResponse {
    /// The text to hand to the model: the answer, or [`USER_UNAVAILABLE`] when there is no
    /// usable (non-empty) answer.
    pub fn text(&self) -> &str {
        match self {
            Self::Answered(text) if !text.is_empty() => text,
            _ => USER_UNAVAILABLE,
        }
    }
}

impl<'de> Deserialize<'de> for AskUserResponse {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let outcome = value.get("outcome").and_then(Value::as_str);
        Ok(match (outcome, value.get("text")) {
            (Some("answered"), Some(Value::String(text))) => Self::Answered(text.clone()),
            (Some("cancelled"), _) => Self::Cancelled,
            _ => Self::Unusable(value),
        })
    }
}

impl Serialize for AskUserResponse {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match self {
            Self::Answered(text) => {
                let mut out = s.serialize_struct("AskUserResponse", 2)?;
                out.serialize_field("outcome", "answered")?;
                out.serialize_field("text", text)?;
                out.end()
            }
            Self::Cancelled => {
                let mut out = s.serialize_struct("AskUserResponse", 1)?;
                out.serialize_field("outcome", "cancelled")?;
                out.end()
            }
            Self::Unusable(value) => value.serialize(s),
        }
    }
}

/// `_agentao.cn/set_model` params: a model-only switch (no credentials on the wire).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetModelRequest {
    /// The session.
    pub session_id: String,
    /// The model name.
    pub model: String,
}

/// `_agentao.cn/set_model` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetModelResponse {
    /// The model now active.
    pub model: String,
}

/// The fields `session/set_config_option` accepts besides `_meta` (and the schema's `type`,
/// which marks a boolean value). Anything else — an `apiKey`, say — is refused, so credentials
/// never travel on the wire.
pub const SET_CONFIG_OPTION_FIELDS: &[&str] = &["configId", "sessionId", "value"];

/// The fields `_agentao.cn/set_model` accepts besides `_meta`.
pub const SET_MODEL_FIELDS: &[&str] = &["model", "sessionId"];

/// Refuses params objects with fields outside a method's whitelist, with Agentao's message:
/// `<method>: unexpected field(s) ['apiKey']; only ['configId', 'sessionId', 'value'] are
/// accepted (<why>)`. Methods without a whitelist pass. `params` must be a JSON object's text
/// (anything else passes here and is refused by the typed decode).
pub fn check_whitelist(method: &str, params: &str) -> Result<(), super::DecodeError> {
    use alloc::format;
    use core::fmt::Write;

    let (allowed, extra_allowed, why): (&[&str], &[&str], &str) = match method {
        super::methods::SESSION_SET_CONFIG_OPTION => (
            SET_CONFIG_OPTION_FIELDS,
            &["_meta", "type"],
            "credentials resolve server-side and never travel on the wire",
        ),
        super::methods::AGENTAO_SET_MODEL => {
            (SET_MODEL_FIELDS, &["_meta"], "model-only, secret-free")
        }
        _ => return Ok(()),
    };
    let Ok(object) = serde_json::from_str::<Meta>(params) else {
        return Ok(());
    };
    // Map keys iterate sorted, like the Python list Agentao prints.
    let unexpected: Vec<&String> = object
        .keys()
        .filter(|key| !allowed.contains(&key.as_str()) && !extra_allowed.contains(&key.as_str()))
        .collect();
    if unexpected.is_empty() {
        return Ok(());
    }
    let quoted = |names: &mut dyn Iterator<Item = &str>| {
        let mut out = String::from("[");
        for (i, name) in names.enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "'{name}'");
        }
        out.push(']');
        out
    };
    let message = format!(
        "{method}: unexpected field(s) {}; only {} are accepted ({why})",
        quoted(&mut unexpected.iter().map(|k| k.as_str())),
        quoted(&mut allowed.iter().copied()),
    );
    Err(super::DecodeError::verbatim(method, &message))
}
