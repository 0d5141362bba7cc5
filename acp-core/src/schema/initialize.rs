//! The handshake (`initialize`) and authentication (`authenticate`, `logout`).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::capabilities::{AgentCapabilities, ClientCapabilities};
use super::lenient::{self, Meta};
use super::tagged::serialize_tagged;

/// The protocol version: a JSON integer from 0 to 65535. Version 1 is the only one defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ProtocolVersion(pub u16);

impl ProtocolVersion {
    /// ACP v1.
    pub const V1: Self = Self(1);
}

impl Default for ProtocolVersion {
    fn default() -> Self {
        Self::V1
    }
}

const VERSION_RANGE: &str = "an integer from 0 to 65535";

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ProtocolVersion;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ProtocolVersion, E> {
                u16::try_from(v)
                    .map(ProtocolVersion)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &VERSION_RANGE))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ProtocolVersion, E> {
                u16::try_from(v)
                    .map(ProtocolVersion)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &VERSION_RANGE))
            }
        }
        d.deserialize_any(V)
    }
}

/// Name and version of a client or agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Human title.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub title: Option<String>,
    /// Version string.
    pub version: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl Implementation {
    /// A name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            version: version.into(),
            meta: None,
        }
    }
}

/// `initialize` params.
///
/// A missing `clientCapabilities` reads as `{}` (real clients omit it); one that is present but
/// not an object is an error, as is a `clientInfo` that is neither an object nor `null`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeRequest {
    /// The latest version the client supports.
    pub protocol_version: ProtocolVersion,
    /// What the client offers.
    #[serde(default)]
    pub client_capabilities: ClientCapabilities,
    /// Who the client is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Implementation>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `initialize` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResponse {
    /// The negotiated version.
    pub protocol_version: ProtocolVersion,
    /// What the agent supports.
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub agent_capabilities: AgentCapabilities,
    /// How to authenticate.
    #[serde(default, deserialize_with = "lenient::skip_invalid")]
    pub auth_methods: Vec<AuthMethod>,
    /// Who the agent is.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub agent_info: Option<Implementation>,
    /// Extension data (Agentao lists its extensions here, see [`super::agentao`]).
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// One way to authenticate: `agent` (no `type`, handled by `authenticate`) or `terminal` (the
/// client runs the agent binary interactively).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AuthMethod {
    /// No `type` (or `type: "agent"`).
    Agent(AuthMethodAgent),
    /// `type: "terminal"`.
    Terminal(AuthMethodTerminal),
    /// A `type` this version does not know: the whole object.
    Unknown(Meta),
}

/// An auth method handled by `authenticate`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AuthMethodAgent {
    /// The id passed to `authenticate`.
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

/// An auth method the client runs in a terminal.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AuthMethodTerminal {
    /// The method's id.
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
    /// Extra arguments for the agent binary.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::strings"
    )]
    pub args: Vec<String>,
    /// Extra environment for the agent binary.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "lenient::or_default"
    )]
    pub env: BTreeMap<String, String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl<'de> Deserialize<'de> for AuthMethod {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let object = Meta::deserialize(d)?;
        let terminal = match object.get("type") {
            None | Some(serde_json::Value::Null) => false,
            Some(serde_json::Value::String(kind)) if kind == "agent" => false,
            Some(serde_json::Value::String(kind)) if kind == "terminal" => true,
            Some(serde_json::Value::String(_)) => return Ok(Self::Unknown(object)),
            Some(other) => {
                return Err(de::Error::invalid_type(
                    lenient::unexpected(other),
                    &"a string",
                ));
            }
        };
        let value = serde_json::Value::Object(object);
        if terminal {
            AuthMethodTerminal::deserialize(value)
                .map(Self::Terminal)
                .map_err(de::Error::custom)
        } else {
            AuthMethodAgent::deserialize(value)
                .map(Self::Agent)
                .map_err(de::Error::custom)
        }
    }
}

impl Serialize for AuthMethod {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Agent(agent) => agent.serialize(s),
            Self::Terminal(terminal) => serialize_tagged(s, "type", "terminal", terminal),
            Self::Unknown(object) => object.serialize(s),
        }
    }
}

/// `authenticate` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AuthenticateRequest {
    /// One of the advertised `authMethods` ids.
    pub method_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Declares a message that carries nothing but `_meta` (`{}` on the wire).
macro_rules! empty_message {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        #[non_exhaustive]
        pub struct $name {
            /// Extension data.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::schema::lenient::meta")]
            pub meta: Option<crate::schema::Meta>,
        }
    )*};
}
pub(crate) use empty_message;

empty_message! {
    /// `authenticate` result.
    AuthenticateResponse;
    /// `logout` params.
    LogoutRequest;
    /// `logout` result.
    LogoutResponse;
}
