//! When a server's current session can serve the next prompt.
//!
//! A session belongs to a working directory and a set of MCP servers. A prompt for another cwd
//! or other MCP servers needs a new `session/new` (on the same process); the same pair reuses
//! the session. The pair is a [`SessionKey`]: the effective cwd (the caller's, else the
//! config's), compared as a string, and the [`mcp_fingerprint`] of the `mcpServers` list.

use alloc::string::{String, ToString};

use serde_json::Value;

/// The canonical text of an `mcpServers` list, to compare two lists.
///
/// Defined as compact JSON (no spaces) with every object's keys sorted by their UTF-8 bytes
/// (the same as code-point order) at every depth; arrays keep their order, because the order of
/// MCP servers is meaningful; strings are written with JSON's minimal escapes and non-ASCII
/// characters as themselves; numbers as serde_json writes them. A missing list, `null` and `[]`
/// all give `"[]"`. The text does not depend on serde_json's map ordering feature.
pub fn mcp_fingerprint(mcp_servers: Option<&Value>) -> String {
    let mut out = String::new();
    match mcp_servers {
        None | Some(Value::Null) => out.push_str("[]"),
        Some(value) => write_canonical(&mut out, value),
    }
    out
}

fn write_canonical(out: &mut String, value: &Value) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: alloc::vec::Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_canonical(out, &map[key]);
            }
            out.push('}');
        }
        Value::String(s) => write_string(out, s),
        // null, booleans and numbers print the same in every serializer setting.
        other => out.push_str(&other.to_string()),
    }
}

fn write_string(out: &mut String, s: &str) {
    // serde_json's string escaping is the minimal one JSON allows.
    out.push_str(&Value::String(String::from(s)).to_string());
}

/// What a session was made for: the effective cwd and the [`mcp_fingerprint`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionKey {
    /// The effective working directory.
    pub cwd: String,
    /// The fingerprint of the `mcpServers` list.
    pub mcp_fingerprint: String,
}

impl SessionKey {
    /// The key for a prompt: `cwd` if given, else `config_cwd`; `mcp_servers` as given
    /// (absent means none).
    pub fn for_prompt(
        cwd: Option<&str>,
        config_cwd: &str,
        mcp_servers: Option<&Value>,
    ) -> SessionKey {
        SessionKey {
            cwd: String::from(cwd.unwrap_or(config_cwd)),
            mcp_fingerprint: mcp_fingerprint(mcp_servers),
        }
    }
}

/// What to do before prompting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionPlan<'a> {
    /// Prompt the existing session.
    Reuse {
        /// Its id.
        session_id: &'a str,
    },
    /// Send `session/new` first (no session yet, or it was made for another key). The old
    /// session is left alone on the server.
    New,
}

/// The server's current session, if any, and what it was made for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionSlot {
    current: Option<(String, SessionKey)>,
}

impl SessionSlot {
    /// No session yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the next prompt, for `key`, can reuse the current session.
    pub fn plan(&self, key: &SessionKey) -> SessionPlan<'_> {
        match &self.current {
            Some((id, made_for)) if made_for == key => SessionPlan::Reuse { session_id: id },
            _ => SessionPlan::New,
        }
    }

    /// `session/new` answered `session_id` for `key`.
    pub fn created(&mut self, session_id: &str, key: SessionKey) {
        self.current = Some((String::from(session_id), key));
    }

    /// `session/new` failed, or the process went away: the next prompt must create a session.
    pub fn clear(&mut self) {
        self.current = None;
    }

    /// The current session id.
    pub fn session_id(&self) -> Option<&str> {
        self.current.as_ref().map(|(id, _)| id.as_str())
    }
}
