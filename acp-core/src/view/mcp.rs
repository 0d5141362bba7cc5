//! `session/new` params, borrowed, with the MCP servers checked as strictly as the owned types
//! check them (a server the user configured is never silently dropped).

use crate::wire::{JsonStr, RawValue};

use super::error::{Detail, Fault};
use super::read::{
    Read, lenient_array, lenient_object, members, object, required_str, strict_opt_str,
};
use super::session::non_empty;

/// `session/new` params.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NewSessionRequestView<'a> {
    /// Absolute working directory.
    pub cwd: JsonStr<'a>,
    /// More directories the session may use, when an array (items that are not strings are
    /// to be skipped).
    pub additional_directories: Option<RawValue<'a>>,
    /// The MCP servers to connect; every one was checked when the view was decoded.
    pub mcp_servers: McpServers<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> NewSessionRequestView<'a> {
    pub(crate) fn read(params: RawValue<'a>) -> Read<'a, Self> {
        let [cwd, additional_directories, servers, meta] = members(
            params,
            ["cwd", "additionalDirectories", "mcpServers", "_meta"],
        )?;
        let cwd = required_str(cwd, "cwd")?;
        let servers = match servers {
            None => None,
            Some(list) => Some(array(list).map_err(|fault| fault.at("mcpServers"))?),
        };
        let mut len = 0;
        for (index, server) in servers.iter().flat_map(|list| list.elements()).enumerate() {
            McpServerView::read(server).map_err(|fault| fault.at_index(index).at("mcpServers"))?;
            len += 1;
        }
        Ok(Self {
            cwd,
            additional_directories: lenient_array(additional_directories),
            mcp_servers: McpServers {
                array: servers,
                len,
            },
            meta: lenient_object(meta),
        })
    }

    /// Agentao's value rules: an absolute `cwd`, and every server with a non-empty name and a
    /// non-empty command or URL.
    pub(crate) fn check(&self) -> Read<'a, ()> {
        check_cwd(self.cwd)?;
        for (index, server) in self.mcp_servers.iter().enumerate() {
            let at = |fault: Fault<'a>| fault.at_index(index).at("mcpServers");
            non_empty(server.name, "name").map_err(at)?;
            let field = match server.transport {
                McpTransport::Stdio => "command",
                McpTransport::Http | McpTransport::Sse => "url",
            };
            non_empty(server.target, field).map_err(at)?;
        }
        Ok(())
    }
}

/// `cwd` must be absolute: `/…`, or on Windows `C:\…`, `C:/…` or `\\server\…` (decoded).
fn check_cwd(cwd: JsonStr<'_>) -> Read<'_, ()> {
    let raw = cwd.raw();
    if raw.is_empty() {
        return Err(Fault::field("cwd", Detail::Empty));
    }
    // Decode the first three characters (escapes included) to test the prefix.
    let mut head = ['\0'; 3];
    for (slot, ch) in head.iter_mut().zip(cwd.chars()) {
        *slot = ch;
    }
    let windows_drive =
        head[0].is_ascii_alphabetic() && head[1] == ':' && matches!(head[2], '\\' | '/');
    if head[0] == '/' || (head[0] == '\\' && head[1] == '\\') || windows_drive {
        return Ok(());
    }
    Err(Fault::field("cwd", Detail::NotAbsolute(cwd)))
}

/// The value must be an array.
fn array(value: RawValue<'_>) -> Read<'_, RawValue<'_>> {
    if value.kind() == crate::wire::json::ValueKind::Array {
        Ok(value)
    } else {
        Err(Fault::here(Detail::MustBe("a JSON array")))
    }
}

/// How an MCP server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum McpTransport {
    /// A child process (`command`, `args`, `env`); the default.
    Stdio,
    /// Streamable HTTP (`url`, `headers`).
    Http,
    /// Server-sent events (`url`, `headers`).
    Sse,
}

impl McpTransport {
    /// Every name, in schema order.
    pub const NAMES: &'static [&'static str] = &["stdio", "sse", "http"];
}

/// One MCP server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpServerView<'a> {
    /// How it is reached.
    pub transport: McpTransport,
    /// Its name.
    pub name: JsonStr<'a>,
    /// The command (stdio) or the URL (http, sse).
    pub target: JsonStr<'a>,
    /// The command's arguments (stdio), all strings.
    pub args: Option<RawValue<'a>>,
    /// The environment (stdio) or the headers (http, sse): `{name, value}` objects.
    pub variables: Option<RawValue<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> McpServerView<'a> {
    fn read(value: RawValue<'a>) -> Read<'a, Self> {
        let [kind, name, command, args, env, url, headers, meta] = members(
            object(value)?,
            [
                "type", "name", "command", "args", "env", "url", "headers", "_meta",
            ],
        )?;
        let transport = match strict_opt_str(kind, "type")? {
            None => McpTransport::Stdio,
            Some(name) if name.eq_str("stdio") => McpTransport::Stdio,
            Some(name) if name.eq_str("sse") => McpTransport::Sse,
            Some(name) if name.eq_str("http") => McpTransport::Http,
            Some(name) => {
                return Err(Fault::field(
                    "type",
                    Detail::OneOf {
                        expected: McpTransport::NAMES,
                        got: name,
                    },
                ));
            }
        };
        let name = required_str(name, "name")?;
        let command = strict_opt_str(command, "command")?;
        let args = optional_list(args, "args", |item| {
            item.as_str()
                .map(|_| ())
                .ok_or_else(|| Fault::here(Detail::MustBe("a string")))
        })?;
        let env = optional_list(env, "env", variable)?;
        let url = strict_opt_str(url, "url")?;
        let headers = optional_list(headers, "headers", variable)?;
        let (target, args, variables) = match transport {
            McpTransport::Stdio => (
                command.ok_or_else(|| Fault::field("command", Detail::Required))?,
                args,
                env,
            ),
            McpTransport::Http | McpTransport::Sse => (
                url.ok_or_else(|| Fault::field("url", Detail::Required))?,
                None,
                headers,
            ),
        };
        Ok(Self {
            transport,
            name,
            target,
            args,
            variables,
            meta: lenient_object(meta),
        })
    }

    /// The environment variables or headers, as `(name, value)`.
    pub fn variables(&self) -> impl Iterator<Item = (JsonStr<'a>, JsonStr<'a>)> + 'a {
        let items = self.variables.map(|list| list.elements());
        items.into_iter().flatten().filter_map(|item| {
            Some((
                item.get_field("name")?.as_str()?,
                item.get_field("value")?.as_str()?,
            ))
        })
    }

    /// The command's arguments.
    pub fn args(&self) -> impl Iterator<Item = JsonStr<'a>> + 'a {
        let items = self.args.map(|list| list.elements());
        items.into_iter().flatten().filter_map(|item| item.as_str())
    }
}

/// `{name, value}` with both strings.
fn variable(item: RawValue<'_>) -> Read<'_, ()> {
    let [name, value, _meta] = members(object(item)?, ["name", "value", "_meta"])?;
    required_str(name, "name")?;
    required_str(value, "value")?;
    Ok(())
}

/// A strict optional list (`Option<Vec<T>>` without leniency): absent or `null` is `None`,
/// otherwise an array whose every item passes `check`.
fn optional_list<'a>(
    value: Option<RawValue<'a>>,
    key: &'static str,
    check: impl Fn(RawValue<'a>) -> Read<'a, ()>,
) -> Read<'a, Option<RawValue<'a>>> {
    let Some(list) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let list = array(list).map_err(|fault| fault.at(key))?;
    for (index, item) in list.elements().enumerate() {
        check(item).map_err(|fault| fault.at_index(index).at(key))?;
    }
    Ok(Some(list))
}

/// The MCP servers of a `session/new`, all known to decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McpServers<'a> {
    array: Option<RawValue<'a>>,
    len: usize,
}

impl<'a> McpServers<'a> {
    /// How many servers there are.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The servers, in order.
    pub fn iter(&self) -> impl Iterator<Item = McpServerView<'a>> + 'a {
        // Every server decoded when the view was made; none is skipped here.
        let items = self.array.map(|list| list.elements());
        items
            .into_iter()
            .flatten()
            .filter_map(|server| McpServerView::read(server).ok())
    }
}
