//! `session/request_permission`: the agent asks the user before running a tool.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use super::lenient::{self, Meta, string_enum};
use super::tagged::{self, Tagged, serialize_tagged};
use super::tool_call::ToolCallUpdate;

/// `session/request_permission` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RequestPermissionRequest {
    /// The session.
    pub session_id: String,
    /// The tool call asking; its id is the one of the `tool_call` update sent before.
    pub tool_call: ToolCallUpdate,
    /// The choices offered.
    pub options: Vec<PermissionOption>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// One choice offered to the user.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PermissionOption {
    /// Sent back when chosen.
    pub option_id: String,
    /// A human label.
    pub name: String,
    /// What choosing it means.
    pub kind: PermissionOptionKind,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl PermissionOption {
    /// An option whose id is its kind's name (the convention this crate uses).
    pub fn of_kind(kind: PermissionOptionKind, name: impl Into<String>) -> Self {
        Self {
            option_id: String::from(kind.as_str()),
            name: name.into(),
            kind,
            meta: None,
        }
    }
}

string_enum! {
    /// What a permission option means.
    pub enum PermissionOptionKind (closed) {
        /// Allow this once.
        AllowOnce = "allow_once",
        /// Allow from now on.
        AllowAlways = "allow_always",
        /// Refuse this once.
        RejectOnce = "reject_once",
        /// Refuse from now on.
        RejectAlways = "reject_always",
    }
}

/// `session/request_permission` result.
///
/// Reads the standard nested shape `{"outcome":{"outcome":"selected","optionId":…}}` and also
/// the flat shape some clients send, `{"outcome":"selected","optionId":…}`. Always writes the
/// nested one.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RequestPermissionResponse {
    /// What the user decided.
    pub outcome: RequestPermissionOutcome,
    /// Extension data.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl RequestPermissionResponse {
    /// A response with this outcome.
    pub fn new(outcome: RequestPermissionOutcome) -> Self {
        Self {
            outcome,
            meta: None,
        }
    }
}

/// The user's decision, discriminated by `outcome`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RequestPermissionOutcome {
    /// The turn was cancelled before the user chose.
    Cancelled,
    /// The user chose an option.
    Selected(SelectedPermissionOutcome),
}

impl RequestPermissionOutcome {
    /// The user chose `option_id`.
    pub fn selected(option_id: impl Into<String>) -> Self {
        Self::Selected(SelectedPermissionOutcome {
            option_id: option_id.into(),
            meta: None,
        })
    }
}

/// `outcome: "selected"`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SelectedPermissionOutcome {
    /// The chosen option.
    pub option_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl Tagged for RequestPermissionOutcome {
    const TAG: &'static str = "outcome";
    const KNOWN: &'static [&'static str] = &["cancelled", "selected"];

    fn variant<'de, D: Deserializer<'de>>(tag: &str, fields: D) -> Result<Self, D::Error> {
        match tag {
            "cancelled" => IgnoredAny::deserialize(fields).map(|_| Self::Cancelled),
            "selected" => SelectedPermissionOutcome::deserialize(fields).map(Self::Selected),
            _ => Self::unknown_fields(tag, fields),
        }
    }
}

impl<'de> Deserialize<'de> for RequestPermissionOutcome {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged::deserialize(d)
    }
}

impl Serialize for RequestPermissionOutcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Cancelled => {
                let mut out = s.serialize_struct("cancelled", 1)?;
                out.serialize_field("outcome", "cancelled")?;
                out.end()
            }
            Self::Selected(selected) => serialize_tagged(s, "outcome", "selected", selected),
        }
    }
}

/// The `outcome` field as sent: the nested object, or (flat shape) just the name.
enum OutcomeField {
    Nested(RequestPermissionOutcome),
    Flat(String),
}

impl<'de> Deserialize<'de> for OutcomeField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OutcomeField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OutcomeField, E> {
                Ok(OutcomeField::Flat(String::from(v)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<OutcomeField, A::Error> {
                tagged::deserialize(MapAccessDeserializer::new(map)).map(OutcomeField::Nested)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResponseFields {
    outcome: OutcomeField,
    #[serde(default)]
    option_id: Option<String>,
    #[serde(rename = "_meta", default, deserialize_with = "lenient::meta")]
    meta: Option<Meta>,
}

impl<'de> Deserialize<'de> for RequestPermissionResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = ResponseFields::deserialize(d)?;
        let outcome = match fields.outcome {
            OutcomeField::Nested(outcome) => outcome,
            OutcomeField::Flat(name) => match name.as_str() {
                "cancelled" => RequestPermissionOutcome::Cancelled,
                "selected" => match fields.option_id {
                    Some(option_id) => RequestPermissionOutcome::selected(option_id),
                    None => return Err(de::Error::missing_field("optionId")),
                },
                other => {
                    return Err(de::Error::unknown_variant(
                        other,
                        RequestPermissionOutcome::KNOWN,
                    ));
                }
            },
        };
        Ok(Self {
            outcome,
            meta: fields.meta,
        })
    }
}
