//! The handshake, borrowed: `initialize` params and result, with the capabilities read on
//! demand.

use crate::wire::{JsonStr, RawValue};

use super::error::{Detail, Fault};
use super::read::{
    Read, flag, integer, lenient_array, lenient_object, lenient_str, members, object, required,
    required_str,
};

/// `initialize` params.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct InitializeRequestView<'a> {
    /// The latest protocol version the client supports.
    pub protocol_version: u16,
    /// What the client offers (`{}` when absent).
    pub client_capabilities: ClientCapabilitiesView<'a>,
    /// Who the client is.
    pub client_info: Option<ImplementationView<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> InitializeRequestView<'a> {
    pub(crate) fn read(params: RawValue<'a>) -> Read<'a, Self> {
        let [version, capabilities, info, meta] = members(
            params,
            [
                "protocolVersion",
                "clientCapabilities",
                "clientInfo",
                "_meta",
            ],
        )?;
        let protocol_version = protocol_version(version)?;
        // Absent reads as `{}`; present, it must be an object (`null` too is refused). An array
        // reads as `{}` as well, as serde's derived struct reads an empty one.
        let capabilities = match capabilities {
            None => super::read::EMPTY_OBJECT,
            Some(value) if value.kind() == crate::wire::json::ValueKind::Array => {
                super::read::EMPTY_OBJECT
            }
            Some(value) => object(value).map_err(|fault| fault.at("clientCapabilities"))?,
        };
        let client_info = match info {
            None => None,
            Some(value) if value.is_null() => None,
            Some(value) => Some(
                object(value)
                    .and_then(ImplementationView::read)
                    .map_err(|fault| fault.at("clientInfo"))?,
            ),
        };
        Ok(Self {
            protocol_version,
            client_capabilities: ClientCapabilitiesView(capabilities),
            client_info,
            meta: lenient_object(meta),
        })
    }
}

const VERSION_RANGE: &str = "an integer from 0 to 65535";

/// `protocolVersion`: a JSON integer from 0 to 65535.
fn protocol_version(value: Option<RawValue<'_>>) -> Read<'_, u16> {
    let value = required(value, "protocolVersion")?;
    let number = integer(value)
        .ok_or_else(|| Fault::field("protocolVersion", Detail::MustBe("an integer")))?;
    u16::try_from(number).map_err(|_| {
        Fault::field(
            "protocolVersion",
            Detail::OutOfRange {
                expected: VERSION_RANGE,
                got: value,
            },
        )
    })
}

/// `initialize` result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct InitializeResponseView<'a> {
    /// The negotiated protocol version.
    pub protocol_version: u16,
    /// What the agent supports (`{}` when absent or malformed).
    pub agent_capabilities: AgentCapabilitiesView<'a>,
    /// How to authenticate.
    pub auth_methods: AuthMethods<'a>,
    /// Who the agent is (`None` when absent or malformed).
    pub agent_info: Option<ImplementationView<'a>>,
    /// Extension data, when an object (Agentao lists its extensions here).
    pub meta: Option<RawValue<'a>>,
}

impl<'a> InitializeResponseView<'a> {
    pub(crate) fn read(result: RawValue<'a>) -> Read<'a, Self> {
        let [version, capabilities, auth_methods, info, meta] = members(
            result,
            [
                "protocolVersion",
                "agentCapabilities",
                "authMethods",
                "agentInfo",
                "_meta",
            ],
        )?;
        Ok(Self {
            protocol_version: protocol_version(version)?,
            agent_capabilities: AgentCapabilitiesView(
                lenient_object(capabilities).unwrap_or(super::read::EMPTY_OBJECT),
            ),
            auth_methods: AuthMethods(lenient_array(auth_methods)),
            agent_info: lenient_object(info).and_then(|info| ImplementationView::read(info).ok()),
            meta: lenient_object(meta),
        })
    }
}

/// Name and version of a client or agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImplementationView<'a> {
    /// Programmatic name.
    pub name: JsonStr<'a>,
    /// Human title.
    pub title: Option<JsonStr<'a>>,
    /// Version string.
    pub version: JsonStr<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> ImplementationView<'a> {
    fn read(value: RawValue<'a>) -> Read<'a, Self> {
        let [name, title, version, meta] = members(value, ["name", "title", "version", "_meta"])?;
        Ok(Self {
            name: required_str(name, "name")?,
            title: lenient_str(title),
            version: required_str(version, "version")?,
            meta: lenient_object(meta),
        })
    }
}

/// Reads `object.a.b…` as a flag: `true` only when every step is an object and the leaf is
/// `true` (each level is default-on-error).
fn nested_flag(object: RawValue<'_>, path: &[&str]) -> bool {
    let Some((leaf, parents)) = path.split_last() else {
        return false;
    };
    let mut at = object;
    for key in parents {
        match lenient_object(at.get_field(key)) {
            Some(next) => at = next,
            None => return false,
        }
    }
    flag(at.get_field(leaf))
}

/// Whether `object.a.b…` is a support marker: an object (`{}` = supported).
fn nested_marker(object: RawValue<'_>, path: &[&str]) -> bool {
    let mut at = object;
    for key in path {
        match lenient_object(at.get_field(key)) {
            Some(next) => at = next,
            None => return false,
        }
    }
    true
}

/// The client's capabilities, read on demand with their defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientCapabilitiesView<'a>(RawValue<'a>);

impl<'a> ClientCapabilitiesView<'a> {
    /// `fs.readTextFile`.
    pub fn can_read_text_file(&self) -> bool {
        nested_flag(self.0, &["fs", "readTextFile"])
    }

    /// `fs.writeTextFile`.
    pub fn can_write_text_file(&self) -> bool {
        nested_flag(self.0, &["fs", "writeTextFile"])
    }

    /// `terminal`: the `terminal/*` methods.
    pub fn terminal(&self) -> bool {
        nested_flag(self.0, &["terminal"])
    }

    /// `auth.terminal`: terminal authentication.
    pub fn can_run_terminal_auth(&self) -> bool {
        nested_flag(self.0, &["auth", "terminal"])
    }

    /// The object as sent.
    pub fn raw(&self) -> RawValue<'a> {
        self.0
    }
}

/// The agent's capabilities, read on demand with their defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentCapabilitiesView<'a>(RawValue<'a>);

impl<'a> AgentCapabilitiesView<'a> {
    /// `loadSession`.
    pub fn load_session(&self) -> bool {
        nested_flag(self.0, &["loadSession"])
    }

    /// `promptCapabilities.image`.
    pub fn prompt_image(&self) -> bool {
        nested_flag(self.0, &["promptCapabilities", "image"])
    }

    /// `promptCapabilities.audio`.
    pub fn prompt_audio(&self) -> bool {
        nested_flag(self.0, &["promptCapabilities", "audio"])
    }

    /// `promptCapabilities.embeddedContext`.
    pub fn prompt_embedded_context(&self) -> bool {
        nested_flag(self.0, &["promptCapabilities", "embeddedContext"])
    }

    /// `mcpCapabilities.http`.
    pub fn mcp_http(&self) -> bool {
        nested_flag(self.0, &["mcpCapabilities", "http"])
    }

    /// `mcpCapabilities.sse`.
    pub fn mcp_sse(&self) -> bool {
        nested_flag(self.0, &["mcpCapabilities", "sse"])
    }

    /// Whether `sessionCapabilities.<name>` is advertised (`list`, `delete`, `resume`,
    /// `close`, `additionalDirectories`).
    pub fn session(&self, name: &str) -> bool {
        nested_marker(self.0, &["sessionCapabilities", name])
    }

    /// `auth.logout`.
    pub fn can_logout(&self) -> bool {
        nested_marker(self.0, &["auth", "logout"])
    }

    /// The object as sent (`{}` when it was absent or not an object).
    pub fn raw(&self) -> RawValue<'a> {
        self.0
    }
}

/// One way to authenticate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthMethodView<'a> {
    /// No `type` (or `"agent"`): handled by `authenticate`.
    Agent(AuthMethodInfo<'a>),
    /// `type: "terminal"`: the client runs the agent binary interactively.
    Terminal(AuthMethodInfo<'a>),
    /// A `type` this version does not know: the whole object.
    Unknown(RawValue<'a>),
}

/// What every known auth method has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthMethodInfo<'a> {
    /// The method's id.
    pub id: JsonStr<'a>,
    /// A human name.
    pub name: JsonStr<'a>,
    /// What it does.
    pub description: Option<JsonStr<'a>>,
    /// The whole object (terminal `args` and `env` are in here).
    pub raw: RawValue<'a>,
}

impl<'a> AuthMethodView<'a> {
    fn read(value: RawValue<'a>) -> Read<'a, Self> {
        let value = object(value)?;
        let [kind, id, name, description] = members(value, ["type", "id", "name", "description"])?;
        let terminal = match kind {
            None => false,
            Some(kind) if kind.is_null() => false,
            Some(kind) => match kind.as_str() {
                Some(name) if name.eq_str("agent") => false,
                Some(name) if name.eq_str("terminal") => true,
                Some(_) => return Ok(Self::Unknown(value)),
                None => return Err(Fault::field("type", Detail::MustBe("a string"))),
            },
        };
        let info = AuthMethodInfo {
            id: required_str(id, "id")?,
            name: required_str(name, "name")?,
            description: lenient_str(description),
            raw: value,
        };
        Ok(if terminal {
            Self::Terminal(info)
        } else {
            Self::Agent(info)
        })
    }
}

/// The `authMethods` of an `initialize` result: the ones that decode, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuthMethods<'a>(Option<RawValue<'a>>);

impl<'a> AuthMethods<'a> {
    /// The valid methods.
    pub fn iter(&self) -> impl Iterator<Item = AuthMethodView<'a>> + 'a {
        let items = self.0.map(|array| array.elements());
        items
            .into_iter()
            .flatten()
            .filter_map(|item| AuthMethodView::read(item).ok())
    }
}
