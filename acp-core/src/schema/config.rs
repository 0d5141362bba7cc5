//! Session config options (`configOptions`, `session/set_config_option`).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::lenient::{self, Meta, string_enum, unexpected};

/// One option the agent lets the client configure (model, mode, thought level, …).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SessionConfigOption {
    /// The option's id, e.g. `model`.
    pub id: String,
    /// A human name.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// What it is about, for client UIs.
    pub category: Option<SessionConfigOptionCategory>,
    /// Its shape and current value.
    pub kind: SessionConfigKind,
    /// Extension data.
    pub meta: Option<Meta>,
}

/// The two option shapes, discriminated by `type`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SessionConfigKind {
    /// `type: "select"`: one value out of a list.
    Select {
        /// The selected value id.
        current_value: String,
        /// The choices.
        options: SessionConfigSelectOptions,
    },
    /// `type: "boolean"`: on or off.
    Boolean {
        /// The current value.
        current_value: bool,
    },
}

impl SessionConfigOption {
    /// A select option with a flat list of choices.
    pub fn select(
        id: impl Into<String>,
        name: impl Into<String>,
        current_value: impl Into<String>,
        options: Vec<SessionConfigSelectOption>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: None,
            category: None,
            kind: SessionConfigKind::Select {
                current_value: current_value.into(),
                options: SessionConfigSelectOptions::Ungrouped(options),
            },
            meta: None,
        }
    }
}

string_enum! {
    /// What a config option is about; unknown categories are kept.
    pub enum SessionConfigOptionCategory (open) {
        /// Session mode.
        Mode = "mode",
        /// Model choice.
        Model = "model",
        /// Model parameters.
        ModelConfig = "model_config",
        /// Reasoning effort.
        ThoughtLevel = "thought_level",
    }
}

/// The choices of a select option: a flat list, or groups of choices.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SessionConfigSelectOptions {
    /// A flat list.
    Ungrouped(Vec<SessionConfigSelectOption>),
    /// Named groups.
    Grouped(Vec<SessionConfigSelectGroup>),
}

/// One choice of a select option.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionConfigSelectOption {
    /// The value id sent back in `session/set_config_option`.
    pub value: String,
    /// A human name.
    pub name: String,
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

impl SessionConfigSelectOption {
    /// A choice with no description.
    pub fn new(value: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            name: name.into(),
            description: None,
            meta: None,
        }
    }
}

/// A named group of choices.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionConfigSelectGroup {
    /// The group id.
    pub group: String,
    /// A human name.
    pub name: String,
    /// The choices in the group.
    #[serde(deserialize_with = "lenient::required_skip_invalid")]
    pub options: Vec<SessionConfigSelectOption>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Every field a choice or a group can have; decided after reading.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SelectItemFields {
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    group: Option<String>,
    name: String,
    #[serde(default, deserialize_with = "lenient::opt")]
    description: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt_skip_invalid")]
    options: Option<Vec<SessionConfigSelectOption>>,
    #[serde(rename = "_meta", default, deserialize_with = "lenient::meta")]
    meta: Option<Meta>,
}

impl<'de> Deserialize<'de> for SessionConfigSelectOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<SelectItemFields>::deserialize(d)?;
        if items.first().is_some_and(|item| item.group.is_some()) {
            let mut groups = Vec::with_capacity(items.len());
            for item in items {
                let Some(group) = item.group else {
                    return Err(de::Error::missing_field("group"));
                };
                groups.push(SessionConfigSelectGroup {
                    group,
                    name: item.name,
                    options: item.options.unwrap_or_default(),
                    meta: item.meta,
                });
            }
            return Ok(Self::Grouped(groups));
        }
        let mut options = Vec::with_capacity(items.len());
        for item in items {
            let Some(value) = item.value else {
                return Err(de::Error::missing_field("value"));
            };
            options.push(SessionConfigSelectOption {
                value,
                name: item.name,
                description: item.description,
                meta: item.meta,
            });
        }
        Ok(Self::Ungrouped(options))
    }
}

impl Serialize for SessionConfigSelectOptions {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Ungrouped(options) => options.serialize(s),
            Self::Grouped(groups) => groups.serialize(s),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OptionFields {
    id: String,
    name: String,
    #[serde(default, deserialize_with = "lenient::opt")]
    description: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    category: Option<SessionConfigOptionCategory>,
    r#type: String,
    current_value: Value,
    #[serde(default)]
    options: Option<SessionConfigSelectOptions>,
    #[serde(rename = "_meta", default, deserialize_with = "lenient::meta")]
    meta: Option<Meta>,
}

impl<'de> Deserialize<'de> for SessionConfigOption {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = OptionFields::deserialize(d)?;
        let kind = match fields.r#type.as_str() {
            "select" => {
                let Value::String(current_value) = fields.current_value else {
                    return Err(de::Error::invalid_type(
                        unexpected(&fields.current_value),
                        &"a string",
                    ));
                };
                let Some(options) = fields.options else {
                    return Err(de::Error::missing_field("options"));
                };
                SessionConfigKind::Select {
                    current_value,
                    options,
                }
            }
            "boolean" => match fields.current_value {
                Value::Bool(current_value) => SessionConfigKind::Boolean { current_value },
                other => return Err(de::Error::invalid_type(unexpected(&other), &"a boolean")),
            },
            other => return Err(de::Error::unknown_variant(other, &["select", "boolean"])),
        };
        Ok(Self {
            id: fields.id,
            name: fields.name,
            description: fields.description,
            category: fields.category,
            kind,
            meta: fields.meta,
        })
    }
}

impl Serialize for SessionConfigOption {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_struct("SessionConfigOption", 8)?;
        out.serialize_field("id", &self.id)?;
        out.serialize_field("name", &self.name)?;
        if let Some(description) = &self.description {
            out.serialize_field("description", description)?;
        }
        if let Some(category) = &self.category {
            out.serialize_field("category", category)?;
        }
        match &self.kind {
            SessionConfigKind::Select {
                current_value,
                options,
            } => {
                out.serialize_field("type", "select")?;
                out.serialize_field("currentValue", current_value)?;
                out.serialize_field("options", options)?;
            }
            SessionConfigKind::Boolean { current_value } => {
                out.serialize_field("type", "boolean")?;
                out.serialize_field("currentValue", current_value)?;
            }
        }
        if let Some(meta) = &self.meta {
            out.serialize_field("_meta", meta)?;
        }
        out.end()
    }
}

/// The value sent by `session/set_config_option`: a value id, or a boolean (sent with
/// `type: "boolean"`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionConfigValue {
    /// A select option's value id.
    Id(String),
    /// A boolean option's value.
    Boolean(bool),
}

impl<'de> Deserialize<'de> for SessionConfigValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SessionConfigValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(SessionConfigValue::Id(String::from(v)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(SessionConfigValue::Boolean(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// `session/set_config_option` params.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetSessionConfigOptionRequest {
    /// The session.
    pub session_id: String,
    /// The option to set.
    pub config_id: String,
    /// The new value.
    pub value: SessionConfigValue,
    /// Extension data.
    #[serde(rename = "_meta", default, deserialize_with = "lenient::meta")]
    pub meta: Option<Meta>,
}

impl SetSessionConfigOptionRequest {
    /// Sets a select option to a value id.
    pub fn new(
        session_id: impl Into<String>,
        config_id: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        Self {
            session_id: session_id.into(),
            config_id: config_id.into(),
            value: SessionConfigValue::Id(value.into()),
            meta: None,
        }
    }
}

impl Serialize for SetSessionConfigOptionRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_struct("SetSessionConfigOptionRequest", 5)?;
        out.serialize_field("sessionId", &self.session_id)?;
        out.serialize_field("configId", &self.config_id)?;
        match &self.value {
            SessionConfigValue::Id(id) => out.serialize_field("value", id)?,
            SessionConfigValue::Boolean(b) => {
                out.serialize_field("type", "boolean")?;
                out.serialize_field("value", b)?;
            }
        }
        if let Some(meta) = &self.meta {
            out.serialize_field("_meta", meta)?;
        }
        out.end()
    }
}

/// `session/set_config_option` result: the full set of options after the change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetSessionConfigOptionResponse {
    /// Every option, with current values.
    #[serde(deserialize_with = "lenient::required_skip_invalid")]
    pub config_options: Vec<SessionConfigOption>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}
