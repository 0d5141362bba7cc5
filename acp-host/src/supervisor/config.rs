//! `.agentao/acp.json`: the project-local ACP servers a host may run.
//!
//! ```json
//! {"servers": {"planner": {"command": "node", "args": ["index.js"], "env": {"KEY": "$KEY"},
//!                          "cwd": ".", "description": "Planning agent"}}}
//! ```
//!
//! The file is read by the driver and handed over as text; a missing file is
//! [`AcpConfig::default`] (no servers, no error). Every field is type-checked, including the
//! ones Agentao lets through (`args` elements, `env` values, `autoStart`, the timeouts,
//! `capabilities`, `description`). Unknown keys are ignored, as in Agentao.
//!
//! **Errors are collected per server** and every server is checked, so one bad entry never
//! hides another's problems. **Valid servers still load**: a typo in one agent's entry must not
//! take the others down. The rejected entries are kept next to them
//! ([`AcpConfig::rejected`]) for the host to show (for example in its status view); a host that
//! wants all-or-nothing calls [`AcpConfig::into_strict`]. Only a broken document (not JSON, not
//! an object, `servers` not an object) fails [`AcpConfig::parse`] as a whole.
//!
//! Type names in messages are Agentao's (`str`, `int`, `float`, `bool`, `list`, `dict`,
//! `NoneType`), so both tools print the same text for the same mistake.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// `startupTimeoutMs` when absent: 10 s from spawn to a usable session.
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 10_000;
/// `requestTimeoutMs` when absent: 60 s per prompt turn.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 60_000;
/// `maxRecoverableRestarts` when absent.
pub const DEFAULT_MAX_RECOVERABLE_RESTARTS: u32 = 3;

/// How a server's permission requests are answered when no user is there to ask
/// (`nonInteractivePolicy.mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InteractionPolicy {
    /// `reject_all` (the default): pick a reject option, or `cancelled` when there is none.
    #[default]
    RejectAll,
    /// `accept_all`: pick an allow option when there is one.
    AcceptAll,
}

impl InteractionPolicy {
    /// The `mode` string in the file.
    pub const fn as_str(self) -> &'static str {
        match self {
            InteractionPolicy::RejectAll => "reject_all",
            InteractionPolicy::AcceptAll => "accept_all",
        }
    }

    /// Reads a `mode` string; `None` for anything but the two modes.
    pub fn from_mode(mode: &str) -> Option<Self> {
        match mode {
            "reject_all" => Some(InteractionPolicy::RejectAll),
            "accept_all" => Some(InteractionPolicy::AcceptAll),
            _ => None,
        }
    }
}

/// One server entry, type-checked, with defaults applied and `env` expanded.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    /// The key under `servers`.
    pub name: String,
    /// The executable (argv\[0\]); not expanded, no shell.
    pub command: String,
    /// The rest of argv; not expanded.
    pub args: Vec<String>,
    /// Extra environment, `$VAR`/`${VAR}` already expanded; layered over the scrubbed host
    /// environment by [`super::env::child_env`].
    pub env: BTreeMap<String, String>,
    /// The working directory as written; see [`ServerConfig::resolve_cwd`].
    pub cwd: String,
    /// `autoStart` (default `true`): started by bulk starts.
    pub auto_start: bool,
    /// `startupTimeoutMs` (default 10 000): spawn to usable session.
    pub startup_timeout_ms: u64,
    /// `requestTimeoutMs` (default 60 000): one prompt turn.
    pub request_timeout_ms: u64,
    /// `capabilities` (default `{}`): hints, kept as written.
    pub capabilities: Map<String, Value>,
    /// `description` (default `""`).
    pub description: String,
    /// `nonInteractivePolicy.mode` (default `reject_all`).
    pub non_interactive_policy: InteractionPolicy,
    /// `maxRecoverableRestarts` (default 3).
    pub max_recoverable_restarts: u32,
}

impl ServerConfig {
    /// The server's working directory: `cwd` if absolute, else `cwd` joined to
    /// `project_root`, with `.` and `..` removed lexically (`"."` is the root itself).
    ///
    /// Lexical only, because the core touches no file system: symlinks are not resolved and
    /// existence is not checked. A bad directory shows up when the driver spawns.
    pub fn resolve_cwd(&self, project_root: &str) -> String {
        if is_absolute(&self.cwd) {
            return self.cwd.clone();
        }
        let mut parts: Vec<&str> = Vec::new();
        let rooted = project_root.starts_with('/');
        for part in project_root.split('/').chain(self.cwd.split('/')) {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                other => parts.push(other),
            }
        }
        let mut out = String::new();
        if rooted {
            out.push('/');
        }
        out.push_str(&parts.join("/"));
        if out.is_empty() {
            out.push('.');
        }
        out
    }
}

/// Unix `/…`, Windows `\…`, `C:\…` or `C:/…`.
fn is_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    matches!(b.first(), Some(b'/' | b'\\'))
        || (b.len() >= 3
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && matches!(b[2], b'/' | b'\\'))
}

/// The parsed file: the servers that passed every check, in file order, and the ones that
/// did not, with their problems.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AcpConfig {
    servers: Vec<ServerConfig>,
    rejected: Vec<ServerError>,
}

impl AcpConfig {
    /// Parses the text of `.agentao/acp.json`. `path` only appears in messages. `lookup`
    /// answers `$VAR` expansions in `env` values (`None`: unset, left as written); pass
    /// `|_| None` to expand nothing.
    pub fn parse(
        text: &str,
        path: &str,
        mut lookup: impl FnMut(&str) -> Option<String>,
    ) -> Result<AcpConfig, ConfigError> {
        let doc: Value = serde_json::from_str(text).map_err(|e| ConfigError::InvalidJson {
            path: path.to_string(),
            detail: e.to_string(),
        })?;
        let Value::Object(top) = doc else {
            return Err(ConfigError::TopLevelNotObject {
                got: JsonKind::of(&doc),
            });
        };
        let servers = match top.get("servers") {
            None => return Ok(AcpConfig::default()),
            Some(Value::Object(servers)) => servers,
            Some(other) => {
                return Err(ConfigError::ServersNotObject {
                    got: JsonKind::of(other),
                });
            }
        };
        let mut config = AcpConfig::default();
        for name in server_names_in_file_order(text, servers) {
            let Some(entry) = servers.get(&name) else {
                continue;
            };
            match parse_server(&name, entry, &mut lookup) {
                Ok(server) => config.servers.push(server),
                Err(problems) => config.rejected.push(ServerError {
                    server: name,
                    problems,
                }),
            }
        }
        Ok(config)
    }

    /// The servers that loaded, in file order.
    pub fn servers(&self) -> &[ServerConfig] {
        &self.servers
    }

    /// The loaded server called `name`.
    pub fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The names of the loaded servers, in file order (what routing matches against).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|s| s.name.as_str())
    }

    /// The entries that failed their checks, in file order.
    pub fn rejected(&self) -> &[ServerError] {
        &self.rejected
    }

    /// All-or-nothing: the config if no entry was rejected, else every rejection.
    pub fn into_strict(self) -> Result<AcpConfig, ConfigError> {
        if self.rejected.is_empty() {
            Ok(self)
        } else {
            Err(ConfigError::InvalidServers(self.rejected))
        }
    }
}

/// The `servers` keys in the order the file lists them (the parsed map is sorted), each once.
fn server_names_in_file_order(text: &str, servers: &Map<String, Value>) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default)]
        servers: Option<KeyOrder>,
    }
    let mut names: Vec<String> = match serde_json::from_str::<Probe>(text) {
        Ok(Probe {
            servers: Some(KeyOrder(keys)),
        }) => keys,
        // A duplicated top-level key confuses the probe; sorted order is still deterministic.
        _ => servers.keys().cloned().collect(),
    };
    let mut seen = alloc::collections::BTreeSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

/// The keys of a JSON object in document order.
struct KeyOrder(Vec<String>);

impl<'de> Deserialize<'de> for KeyOrder {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeysVisitor;
        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = KeyOrder;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeyOrder, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(KeyOrder(keys))
            }
        }
        deserializer.deserialize_map(KeysVisitor)
    }
}

const REQUIRED: [&str; 4] = ["command", "args", "env", "cwd"];

/// Checks one entry; every problem is collected before giving up.
fn parse_server(
    name: &str,
    entry: &Value,
    lookup: &mut impl FnMut(&str) -> Option<String>,
) -> Result<ServerConfig, Vec<Problem>> {
    let Value::Object(obj) = entry else {
        return Err(alloc::vec![Problem::NotAnObject {
            got: JsonKind::of(entry)
        }]);
    };
    let mut problems = Vec::new();
    let missing: Vec<&'static str> = REQUIRED
        .iter()
        .copied()
        .filter(|k| !obj.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        problems.push(Problem::MissingFields(missing));
    }

    let command = match obj.get("command") {
        Some(Value::String(s)) if s.is_empty() => {
            problems.push(Problem::Empty { field: "command" });
            String::new()
        }
        Some(v) => take_str(v, "command", &mut problems),
        None => String::new(),
    };

    let mut args = Vec::new();
    match obj.get("args") {
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => args.push(s.clone()),
                    other => problems.push(Problem::WrongType {
                        field: alloc::format!("args[{i}]"),
                        expected: "str",
                        got: JsonKind::of(other),
                    }),
                }
            }
        }
        Some(other) => problems.push(wrong_type("args", "list", other)),
        None => {}
    }

    let mut env = BTreeMap::new();
    match obj.get("env") {
        Some(Value::Object(vars)) => {
            for (key, value) in vars {
                if key.is_empty() || key.contains(['=', '\0']) {
                    problems.push(Problem::BadEnvName { name: key.clone() });
                    continue;
                }
                match value {
                    Value::String(s) => {
                        env.insert(key.clone(), expand_vars(s, &mut *lookup));
                    }
                    other => problems.push(Problem::WrongType {
                        field: alloc::format!("env.{key}"),
                        expected: "str",
                        got: JsonKind::of(other),
                    }),
                }
            }
        }
        Some(other) => problems.push(wrong_type("env", "dict", other)),
        None => {}
    }

    let cwd = obj
        .get("cwd")
        .map(|v| take_str(v, "cwd", &mut problems))
        .unwrap_or_default();

    let auto_start = match obj.get("autoStart") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            problems.push(wrong_type("autoStart", "bool", other));
            true
        }
    };
    let startup_timeout_ms = positive_ms(
        obj.get("startupTimeoutMs"),
        "startupTimeoutMs",
        DEFAULT_STARTUP_TIMEOUT_MS,
        &mut problems,
    );
    let request_timeout_ms = positive_ms(
        obj.get("requestTimeoutMs"),
        "requestTimeoutMs",
        DEFAULT_REQUEST_TIMEOUT_MS,
        &mut problems,
    );

    let capabilities = match obj.get("capabilities") {
        None => Map::new(),
        Some(Value::Object(caps)) => caps.clone(),
        Some(other) => {
            problems.push(wrong_type("capabilities", "dict", other));
            Map::new()
        }
    };
    let description = obj
        .get("description")
        .map(|v| take_str(v, "description", &mut problems))
        .unwrap_or_default();

    let non_interactive_policy = match obj.get("nonInteractivePolicy") {
        None => InteractionPolicy::default(),
        Some(value) => policy(value, &mut problems),
    };

    let max_recoverable_restarts = match obj.get("maxRecoverableRestarts") {
        None => DEFAULT_MAX_RECOVERABLE_RESTARTS,
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => match n.as_u64() {
            Some(v) => u32::try_from(v).unwrap_or_else(|_| {
                problems.push(Problem::TooLarge {
                    field: "maxRecoverableRestarts",
                    max: u64::from(u32::MAX),
                    value: n.to_string(),
                });
                DEFAULT_MAX_RECOVERABLE_RESTARTS
            }),
            None => {
                problems.push(Problem::Negative {
                    field: "maxRecoverableRestarts",
                    value: n.to_string(),
                });
                DEFAULT_MAX_RECOVERABLE_RESTARTS
            }
        },
        Some(other) => {
            problems.push(wrong_type("maxRecoverableRestarts", "int", other));
            DEFAULT_MAX_RECOVERABLE_RESTARTS
        }
    };

    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(ServerConfig {
        name: name.to_string(),
        command,
        args,
        env,
        cwd,
        auto_start,
        startup_timeout_ms,
        request_timeout_ms,
        capabilities,
        description,
        non_interactive_policy,
        max_recoverable_restarts,
    })
}

fn wrong_type(field: &str, expected: &'static str, got: &Value) -> Problem {
    Problem::WrongType {
        field: field.to_string(),
        expected,
        got: JsonKind::of(got),
    }
}

fn take_str(value: &Value, field: &str, problems: &mut Vec<Problem>) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => {
            problems.push(wrong_type(field, "str", other));
            String::new()
        }
    }
}

/// A timeout: an integer number of milliseconds, at least 1.
fn positive_ms(
    value: Option<&Value>,
    field: &'static str,
    default: u64,
    problems: &mut Vec<Problem>,
) -> u64 {
    match value {
        None => default,
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => match n.as_u64() {
            Some(ms) if ms > 0 => ms,
            _ => {
                problems.push(Problem::NotPositive {
                    field,
                    value: n.to_string(),
                });
                default
            }
        },
        Some(other) => {
            problems.push(wrong_type(field, "int", other));
            default
        }
    }
}

fn policy(value: &Value, problems: &mut Vec<Problem>) -> InteractionPolicy {
    let fallback = InteractionPolicy::default();
    match value {
        Value::String(bare) => problems.push(Problem::PolicyBareString {
            value: bare.clone(),
        }),
        Value::Object(obj) => match obj.get("mode") {
            None => problems.push(Problem::PolicyMissingMode),
            Some(Value::String(mode)) => match InteractionPolicy::from_mode(mode) {
                Some(policy) => return policy,
                None => problems.push(Problem::PolicyBadMode { got: mode.clone() }),
            },
            Some(other) => problems.push(wrong_type("nonInteractivePolicy.mode", "str", other)),
        },
        other => problems.push(Problem::PolicyNotObject {
            got: JsonKind::of(other),
        }),
    }
    fallback
}

/// Expands `$NAME` and `${NAME}` in `value`, the way Agentao's `os.path.expandvars` does.
///
/// - `NAME` after a bare `$` is the longest run of ASCII letters, digits and `_`.
/// - `${…}` takes everything up to the next `}`.
/// - A name `lookup` does not know is left exactly as written, `$` and braces included; so is
///   a `$` followed by neither form, and a `${` with no closing brace.
/// - No defaults (`${X:-y}` is the variable `X:-y`), no escape for `$`, no recursion: an
///   expanded value is not scanned again.
pub fn expand_vars(value: &str, mut lookup: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let after = &rest[dollar + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = after
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            (&after[..end], end)
        };
        let written = &rest[dollar..dollar + 1 + consumed];
        match (name.is_empty(), consumed) {
            (false, _) => match lookup(name) {
                Some(expanded) => out.push_str(&expanded),
                None => out.push_str(written),
            },
            _ => out.push_str(written),
        }
        rest = &rest[dollar + 1 + consumed..];
    }
    out.push_str(rest);
    out
}

/// The kind of a JSON value, named as Agentao names it in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonKind {
    /// `null` (`NoneType`).
    Null,
    /// `true`/`false` (`bool`).
    Bool,
    /// A number without fraction or exponent (`int`).
    Int,
    /// Any other number (`float`).
    Float,
    /// A string (`str`).
    Str,
    /// An array (`list`).
    List,
    /// An object (`dict`).
    Dict,
}

impl JsonKind {
    /// The kind of `value`.
    pub fn of(value: &Value) -> JsonKind {
        match value {
            Value::Null => JsonKind::Null,
            Value::Bool(_) => JsonKind::Bool,
            Value::Number(n) if n.is_i64() || n.is_u64() => JsonKind::Int,
            Value::Number(_) => JsonKind::Float,
            Value::String(_) => JsonKind::Str,
            Value::Array(_) => JsonKind::List,
            Value::Object(_) => JsonKind::Dict,
        }
    }

    /// The name used in messages.
    pub const fn name(self) -> &'static str {
        match self {
            JsonKind::Null => "NoneType",
            JsonKind::Bool => "bool",
            JsonKind::Int => "int",
            JsonKind::Float => "float",
            JsonKind::Str => "str",
            JsonKind::List => "list",
            JsonKind::Dict => "dict",
        }
    }
}

impl fmt::Display for JsonKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why `.agentao/acp.json` could not be used.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigError {
    /// Not JSON: `invalid JSON in <path>: <detail>`.
    InvalidJson {
        /// The path given to [`AcpConfig::parse`].
        path: String,
        /// The decoder's message, with line and column.
        detail: String,
    },
    /// `expected a JSON object at top level, got <kind>`.
    TopLevelNotObject {
        /// What the top level was.
        got: JsonKind,
    },
    /// `'servers' must be an object, got <kind>`.
    ServersNotObject {
        /// What `servers` was.
        got: JsonKind,
    },
    /// From [`AcpConfig::into_strict`]: every rejected server, one per line.
    InvalidServers(Vec<ServerError>),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::InvalidJson { path, detail } => {
                write!(f, "invalid JSON in {path}: {detail}")
            }
            ConfigError::TopLevelNotObject { got } => {
                write!(f, "expected a JSON object at top level, got {got}")
            }
            ConfigError::ServersNotObject { got } => {
                write!(f, "'servers' must be an object, got {got}")
            }
            ConfigError::InvalidServers(servers) => {
                for (i, server) in servers.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{server}")?;
                }
                Ok(())
            }
        }
    }
}

impl core::error::Error for ConfigError {}

/// One server entry's problems: `server '<name>': <problem>; <problem>…`.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerError {
    /// The entry's key under `servers`.
    pub server: String,
    /// Every problem found, in field order.
    pub problems: Vec<Problem>,
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "server '{}': ", self.server)?;
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl core::error::Error for ServerError {}

/// One thing wrong with one server entry.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// `expected a config object, got <kind>`.
    NotAnObject {
        /// What the entry was.
        got: JsonKind,
    },
    /// `missing required field(s): command, args, env, cwd` (those missing).
    MissingFields(Vec<&'static str>),
    /// `'<field>' must be <expected>, got <kind>`; `field` may be `args[1]` or `env.KEY`.
    WrongType {
        /// The field, with an index or key for elements.
        field: String,
        /// The expected kind's name.
        expected: &'static str,
        /// What was there.
        got: JsonKind,
    },
    /// `'<field>' must not be empty`.
    Empty {
        /// The field.
        field: &'static str,
    },
    /// `'env' key '<name>' is not a valid variable name`: empty, or holding `=` or NUL, which
    /// no process environment can carry.
    BadEnvName {
        /// The key as written.
        name: String,
    },
    /// `'<field>' must be > 0, got <value>`.
    NotPositive {
        /// The field.
        field: &'static str,
        /// The number as written.
        value: String,
    },
    /// `'<field>' must be >= 0, got <value>`.
    Negative {
        /// The field.
        field: &'static str,
        /// The number as written.
        value: String,
    },
    /// `'<field>' must be <= <max>, got <value>`.
    TooLarge {
        /// The field.
        field: &'static str,
        /// The largest accepted value.
        max: u64,
        /// The number as written.
        value: String,
    },
    /// The pre-object string form of `nonInteractivePolicy`, with Agentao's migration hint.
    PolicyBareString {
        /// The string as written.
        value: String,
    },
    /// `'nonInteractivePolicy' object is missing required field 'mode'`.
    PolicyMissingMode,
    /// `'nonInteractivePolicy.mode' must be one of ['accept_all', 'reject_all'], got '<mode>'`.
    PolicyBadMode {
        /// The mode as written.
        got: String,
    },
    /// `'nonInteractivePolicy' must be an object with a 'mode' field, got <kind>`.
    PolicyNotObject {
        /// What was there.
        got: JsonKind,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotAnObject { got } => write!(f, "expected a config object, got {got}"),
            Problem::MissingFields(fields) => {
                write!(f, "missing required field(s): {}", fields.join(", "))
            }
            Problem::WrongType {
                field,
                expected,
                got,
            } => write!(f, "'{field}' must be {expected}, got {got}"),
            Problem::Empty { field } => write!(f, "'{field}' must not be empty"),
            Problem::BadEnvName { name } => {
                write!(f, "'env' key '{name}' is not a valid variable name")
            }
            Problem::NotPositive { field, value } => {
                write!(f, "'{field}' must be > 0, got {value}")
            }
            Problem::Negative { field, value } => write!(f, "'{field}' must be >= 0, got {value}"),
            Problem::TooLarge { field, max, value } => {
                write!(f, "'{field}' must be <= {max}, got {value}")
            }
            Problem::PolicyBareString { value } => write!(
                f,
                "'nonInteractivePolicy' as a bare string ('{value}') is no longer supported. \
                 Migrate to the structured object form:\n  \"nonInteractivePolicy\": {{\"mode\": \"{value}\"}}\n\
                 See developer-guide/*/appendix/e-migration for the full migration example."
            ),
            Problem::PolicyMissingMode => {
                f.write_str("'nonInteractivePolicy' object is missing required field 'mode'")
            }
            Problem::PolicyBadMode { got } => write!(
                f,
                "'nonInteractivePolicy.mode' must be one of ['accept_all', 'reject_all'], got '{got}'"
            ),
            Problem::PolicyNotObject { got } => {
                write!(
                    f,
                    "'nonInteractivePolicy' must be an object with a 'mode' field, got {got}"
                )
            }
        }
    }
}
