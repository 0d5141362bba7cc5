//! `elicitation/create` and `elicitation/complete`: structured input from the user, by form or
//! by URL.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::lenient::{self, Meta, string_enum};
use super::rpc::RpcId;
use super::tagged::tagged_union;

/// `elicitation/create` params (agent → client; needs `elicitation.form` / `.url`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CreateElicitationRequest {
    /// What to ask.
    pub message: String,
    /// Form or URL.
    pub mode: ElicitationMode,
    /// What the elicitation belongs to.
    pub scope: ElicitationScope,
    /// Extension data.
    pub meta: Option<Meta>,
}

/// How the client collects the answer (`mode`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitationMode {
    /// `mode: "form"`: the client shows a form.
    Form {
        /// The form's schema.
        requested_schema: ElicitationSchema,
    },
    /// `mode: "url"`: the client opens a URL.
    Url {
        /// Matched by `elicitation/complete`.
        elicitation_id: String,
        /// The URL.
        url: String,
    },
}

/// What an elicitation belongs to.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitationScope {
    /// A session, optionally one tool call in it.
    Session {
        /// The session.
        session_id: String,
        /// The tool call.
        tool_call_id: Option<String>,
    },
    /// A request in progress.
    Request {
        /// The request.
        request_id: RpcId,
    },
}

fn some_request_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RpcId>, D::Error> {
    RpcId::deserialize(d).map(Some)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateFields {
    message: String,
    mode: ModeName,
    #[serde(default)]
    requested_schema: Option<ElicitationSchema>,
    #[serde(default)]
    elicitation_id: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    tool_call_id: Option<String>,
    #[serde(default, deserialize_with = "some_request_id")]
    request_id: Option<RpcId>,
    #[serde(rename = "_meta", default, deserialize_with = "lenient::meta")]
    meta: Option<Meta>,
}

string_enum! {
    /// The elicitation modes.
    enum ModeName (closed) {
        /// A form.
        Form = "form",
        /// A URL.
        Url = "url",
    }
}

impl<'de> Deserialize<'de> for CreateElicitationRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = CreateFields::deserialize(d)?;
        let mode = match fields.mode {
            ModeName::Form => ElicitationMode::Form {
                requested_schema: fields
                    .requested_schema
                    .ok_or_else(|| de::Error::missing_field("requestedSchema"))?,
            },
            ModeName::Url => ElicitationMode::Url {
                elicitation_id: fields
                    .elicitation_id
                    .ok_or_else(|| de::Error::missing_field("elicitationId"))?,
                url: fields.url.ok_or_else(|| de::Error::missing_field("url"))?,
            },
        };
        let scope = match (fields.session_id, fields.request_id) {
            (Some(session_id), _) => ElicitationScope::Session {
                session_id,
                tool_call_id: fields.tool_call_id,
            },
            (None, Some(request_id)) => ElicitationScope::Request { request_id },
            (None, None) => return Err(de::Error::missing_field("sessionId")),
        };
        Ok(Self {
            message: fields.message,
            mode,
            scope,
            meta: fields.meta,
        })
    }
}

impl Serialize for CreateElicitationRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_map(None)?;
        out.serialize_entry("message", &self.message)?;
        match &self.mode {
            ElicitationMode::Form { requested_schema } => {
                out.serialize_entry("mode", "form")?;
                out.serialize_entry("requestedSchema", requested_schema)?;
            }
            ElicitationMode::Url {
                elicitation_id,
                url,
            } => {
                out.serialize_entry("mode", "url")?;
                out.serialize_entry("elicitationId", elicitation_id)?;
                out.serialize_entry("url", url)?;
            }
        }
        match &self.scope {
            ElicitationScope::Session {
                session_id,
                tool_call_id,
            } => {
                out.serialize_entry("sessionId", session_id)?;
                if let Some(tool_call_id) = tool_call_id {
                    out.serialize_entry("toolCallId", tool_call_id)?;
                }
            }
            ElicitationScope::Request { request_id } => {
                out.serialize_entry("requestId", request_id)?
            }
        }
        if let Some(meta) = &self.meta {
            out.serialize_entry("_meta", meta)?;
        }
        out.end()
    }
}

/// The schema of an elicitation form: a flat object of primitive properties.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationSchema {
    /// Always `object`.
    #[serde(
        rename = "type",
        default = "object_type",
        deserialize_with = "object_or_default"
    )]
    pub schema_type: String,
    /// The form's title.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub title: Option<String>,
    /// The fields, by name.
    #[serde(default)]
    pub properties: BTreeMap<String, ElicitationPropertySchema>,
    /// Names of the fields that must be filled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// What the form is for.
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

fn object_type() -> String {
    String::from("object")
}

fn object_or_default<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(lenient::opt::<D, String>(d)?
        .filter(|t| t == "object")
        .unwrap_or_else(object_type))
}

/// One form field, discriminated by `type`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitationPropertySchema {
    /// `type: "string"`.
    String(StringPropertySchema),
    /// `type: "number"`.
    Number(NumberPropertySchema),
    /// `type: "integer"`.
    Integer(IntegerPropertySchema),
    /// `type: "boolean"`.
    Boolean(BooleanPropertySchema),
    /// `type: "array"`: a multi-select.
    Array(MultiSelectPropertySchema),
    /// A type this version does not know: the whole object.
    Unknown(Meta),
}

tagged_union!(ElicitationPropertySchema, "type", {
    String(StringPropertySchema) = "string",
    Number(NumberPropertySchema) = "number",
    Integer(IntegerPropertySchema) = "integer",
    Boolean(BooleanPropertySchema) = "boolean",
    Array(MultiSelectPropertySchema) = "array",
}, unknown = Unknown);

string_enum! {
    /// Formats of a string field.
    pub enum StringFormat (closed) {
        /// An e-mail address.
        Email = "email",
        /// A URI.
        Uri = "uri",
        /// A date.
        Date = "date",
        /// A date and time.
        DateTime = "date-time",
    }
}

/// A titled choice.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// Its label.
    pub title: String,
    /// What it means.
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

/// `type: "string"` field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StringPropertySchema {
    /// Label.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub title: Option<String>,
    /// Help text.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// A regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// A format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// The default value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub default: Option<String>,
    /// Allowed values.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<String>>,
    /// Allowed values with titles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<EnumOption>>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `type: "number"` field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NumberPropertySchema {
    /// Label.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub title: Option<String>,
    /// Help text.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub description: Option<String>,
    /// Minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// The default value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub default: Option<f64>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `type: "integer"` field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct IntegerPropertySchema {
    /// Label.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub title: Option<String>,
    /// Help text.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub description: Option<String>,
    /// Minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i64>,
    /// Maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i64>,
    /// The default value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub default: Option<i64>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `type: "boolean"` field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BooleanPropertySchema {
    /// Label.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub title: Option<String>,
    /// Help text.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub description: Option<String>,
    /// The default value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub default: Option<bool>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `type: "array"` field: choose several values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MultiSelectPropertySchema {
    /// Label.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub title: Option<String>,
    /// Help text.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub description: Option<String>,
    /// Minimum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: MultiSelectItems,
    /// Chosen by default.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt_skip_invalid"
    )]
    pub default: Option<Vec<String>>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// The choices of a multi-select: plain strings (`{type:"string", enum}`), titled options
/// (`{anyOf}`), or a shape this version does not know.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MultiSelectItems {
    /// `{"type":"string","enum":[…]}`.
    Strings(Vec<String>),
    /// `{"anyOf":[{const,title},…]}`.
    Titled(Vec<EnumOption>),
    /// Anything else, kept as sent.
    Unknown(Meta),
}

impl<'de> Deserialize<'de> for MultiSelectItems {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let object = Meta::deserialize(d)?;
        if let Some(options) = object.get("anyOf") {
            return Vec::<EnumOption>::deserialize(options)
                .map(Self::Titled)
                .map_err(de::Error::custom);
        }
        match (object.get("type"), object.get("enum")) {
            (Some(Value::String(kind)), Some(values)) if kind == "string" => {
                Vec::<String>::deserialize(values)
                    .map(Self::Strings)
                    .map_err(de::Error::custom)
            }
            _ => Ok(Self::Unknown(object)),
        }
    }
}

impl Serialize for MultiSelectItems {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Strings(values) => {
                let mut out = s.serialize_map(Some(2))?;
                out.serialize_entry("type", "string")?;
                out.serialize_entry("enum", values)?;
                out.end()
            }
            Self::Titled(options) => {
                let mut out = s.serialize_map(Some(1))?;
                out.serialize_entry("anyOf", options)?;
                out.end()
            }
            Self::Unknown(object) => object.serialize(s),
        }
    }
}

/// `elicitation/create` result, discriminated by `action`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CreateElicitationResponse {
    /// The user submitted; `content` holds the form's values (none in URL mode).
    Accept {
        /// Field name → value (string, number, boolean or list of strings).
        content: Option<BTreeMap<String, Value>>,
    },
    /// The user declined.
    Decline,
    /// The user dismissed the request.
    Cancel,
    /// An action this version does not know: the whole object.
    Unknown(Meta),
}

impl<'de> Deserialize<'de> for CreateElicitationResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let object = Meta::deserialize(d)?;
        let action = match object.get("action") {
            Some(Value::String(action)) => action.as_str(),
            Some(other) => {
                return Err(de::Error::invalid_type(
                    lenient::unexpected(other),
                    &"a string",
                ));
            }
            None => return Err(de::Error::missing_field("action")),
        };
        Ok(match action {
            "accept" => {
                let content = match object.get("content") {
                    None | Some(Value::Null) => None,
                    Some(content) => Some(
                        BTreeMap::<String, Value>::deserialize(content)
                            .map_err(de::Error::custom)?,
                    ),
                };
                Self::Accept { content }
            }
            "decline" => Self::Decline,
            "cancel" => Self::Cancel,
            _ => Self::Unknown(object),
        })
    }
}

impl Serialize for CreateElicitationResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let action = match self {
            Self::Accept { .. } => "accept",
            Self::Decline => "decline",
            Self::Cancel => "cancel",
            Self::Unknown(object) => return object.serialize(s),
        };
        let mut out = s.serialize_map(None)?;
        out.serialize_entry("action", action)?;
        if let Self::Accept {
            content: Some(content),
        } = self
        {
            out.serialize_entry("content", content)?;
        }
        out.end()
    }
}

/// `elicitation/complete` params (agent → client notification, URL mode).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteElicitationNotification {
    /// The elicitation that finished.
    pub elicitation_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}
