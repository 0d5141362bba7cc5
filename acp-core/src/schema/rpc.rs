//! Protocol-level pieces: request ids inside params, and `$/cancel_request`.

use alloc::string::String;
use core::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::lenient::{self, Meta};

/// A JSON-RPC request id as it appears inside params (`$/cancel_request`, elicitation scopes):
/// `null`, a 64-bit integer or a string.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RpcId {
    /// `null`.
    Null,
    /// An integer.
    Number(i64),
    /// A string.
    Str(String),
}

impl Serialize for RpcId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Null => s.serialize_unit(),
            Self::Number(n) => s.serialize_i64(*n),
            Self::Str(text) => s.serialize_str(text),
        }
    }
}

impl<'de> Deserialize<'de> for RpcId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RpcId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, an integer or null")
            }
            fn visit_unit<E: de::Error>(self) -> Result<RpcId, E> {
                Ok(RpcId::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<RpcId, E> {
                Ok(RpcId::Null)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RpcId, E> {
                Ok(RpcId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RpcId, E> {
                i64::try_from(v)
                    .map(RpcId::Number)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &"a 64-bit integer"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RpcId, E> {
                Ok(RpcId::Str(String::from(v)))
            }
        }
        d.deserialize_any(V)
    }
}

/// `$/cancel_request` params (either direction): stop working on a request. The receiver must
/// still answer it, with its result or with `-32800`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelRequestNotification {
    /// The request to cancel.
    pub request_id: RpcId,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl CancelRequestNotification {
    /// Cancels `request_id`.
    pub fn new(request_id: RpcId) -> Self {
        Self {
            request_id,
            meta: None,
        }
    }
}
