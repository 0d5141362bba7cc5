//! MCP server descriptions passed to `session/new`, `session/load` and `session/resume`.
//!
//! These are strict (unlike the schema's skip-invalid hint): a malformed server is an error that
//! names its index and field, because silently dropping a tool server the user configured is
//! worse than refusing the session.

use alloc::string::String;
use alloc::vec::Vec;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use super::lenient::{self, Meta, string_enum};
use super::tagged::serialize_tagged;

/// One MCP server the agent should connect to.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum McpServer {
    /// No `type` (or `type: "stdio"`): a local process. Always supported.
    Stdio(McpServerStdio),
    /// `type: "http"`: needs `mcpCapabilities.http`.
    Http(McpServerHttp),
    /// `type: "sse"`: needs `mcpCapabilities.sse`.
    Sse(McpServerSse),
}

impl McpServer {
    /// The server's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Stdio(s) => &s.name,
            Self::Http(s) => &s.name,
            Self::Sse(s) => &s.name,
        }
    }
}

/// A local MCP server process.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpServerStdio {
    /// The server's name.
    pub name: String,
    /// The executable.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its extra environment.
    pub env: Vec<EnvVariable>,
    /// Extension data.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl McpServerStdio {
    /// A server with no arguments or environment.
    pub fn new(name: impl Into<String>, command: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            command: command.into(),
            ..Self::default()
        }
    }
}

/// An MCP server over HTTP.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpServerHttp {
    /// The server's name.
    pub name: String,
    /// Its URL.
    pub url: String,
    /// Headers to send.
    pub headers: Vec<HttpHeader>,
    /// Extension data.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// An MCP server over server-sent events (same fields as HTTP).
pub type McpServerSse = McpServerHttp;

/// An environment variable.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EnvVariable {
    /// The variable's name.
    pub name: String,
    /// Its value.
    pub value: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl EnvVariable {
    /// `name=value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
            meta: None,
        }
    }
}

/// An HTTP header (same shape as [`EnvVariable`]).
pub type HttpHeader = EnvVariable;

string_enum! {
    /// The transports an MCP server entry can name.
    enum McpTransport (closed) {
        /// A local process.
        Stdio = "stdio",
        /// Server-sent events.
        Sse = "sse",
        /// Streamable HTTP.
        Http = "http",
    }
}

/// Every field any server shape can have, read in one pass so errors keep their path.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerFields {
    #[serde(default)]
    r#type: Option<McpTransport>,
    name: String,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    env: Option<Vec<EnvVariable>>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: Option<Vec<HttpHeader>>,
    #[serde(rename = "_meta", default, deserialize_with = "lenient::meta")]
    meta: Option<Meta>,
}

impl<'de> Deserialize<'de> for McpServer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = ServerFields::deserialize(d)?;
        match fields.r#type.unwrap_or(McpTransport::Stdio) {
            McpTransport::Stdio => Ok(Self::Stdio(McpServerStdio {
                name: fields.name,
                command: fields
                    .command
                    .ok_or_else(|| de::Error::missing_field("command"))?,
                args: fields.args.unwrap_or_default(),
                env: fields.env.unwrap_or_default(),
                meta: fields.meta,
            })),
            transport => {
                let server = McpServerHttp {
                    name: fields.name,
                    url: fields.url.ok_or_else(|| de::Error::missing_field("url"))?,
                    headers: fields.headers.unwrap_or_default(),
                    meta: fields.meta,
                };
                Ok(if transport == McpTransport::Http {
                    Self::Http(server)
                } else {
                    Self::Sse(server)
                })
            }
        }
    }
}

impl Serialize for McpServer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Stdio(server) => server.serialize(s),
            Self::Http(server) => serialize_tagged(s, "type", "http", server),
            Self::Sse(server) => serialize_tagged(s, "type", "sse", server),
        }
    }
}
