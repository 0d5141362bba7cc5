//! Authentication: the `authMethods` an agent offers in its `initialize` answer (R-AUTH-1,
//! R-AUTH-2), kept in one fixed pool so a configuration needs no allocator, and how they go on
//! the wire.
//!
//! The same list type holds what a client read from an agent's answer
//! ([`ClientConnection::auth_methods`](crate::conn::client::ClientConnection::auth_methods)).

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::wire::RawValue;
use crate::wire::json::ValueKind;

/// Most auth methods a list holds.
pub const AUTH_METHODS_MAX: usize = 4;
/// Bytes of text (ids, names, descriptions, terminal args and env) all methods share.
pub const AUTH_TEXT_MAX: usize = 512;
/// Longest auth method id (the `methodId` of `authenticate` events is this long at most).
pub const AUTH_ID_MAX: usize = 64;

/// `-32000`'s message when a session method needs authentication first (R-AUTH-3): the
/// official schema's text for `auth_required`.
pub const AUTH_REQUIRED_MESSAGE: &str = "Authentication required";

/// Which flow an auth method uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthKind {
    /// The agent authenticates through `authenticate` (no `type` on the wire).
    Agent,
    /// `type: "terminal"`: the client runs the agent binary with `args` and `env` in a
    /// terminal for the user; never passed to `authenticate`. Offered only to clients that
    /// set `clientCapabilities.auth.terminal`.
    Terminal,
}

/// One auth method to offer, borrowed: build it with [`AuthMethodSpec::agent`] or
/// [`AuthMethodSpec::terminal`] and add it with
/// [`AgentConfig::offer_auth`](super::AgentConfig::offer_auth).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuthMethodSpec<'a> {
    /// The flow.
    pub kind: AuthKind,
    /// `id`: what `authenticate.methodId` names (at most [`AUTH_ID_MAX`] bytes).
    pub id: &'a str,
    /// `name`: shown to people.
    pub name: &'a str,
    /// `description`.
    pub description: Option<&'a str>,
    /// Terminal only: `args` appended to the agent's command line.
    pub args: &'a [&'a str],
    /// Terminal only: `env` set for the agent's process.
    pub env: &'a [(&'a str, &'a str)],
}

impl<'a> AuthMethodSpec<'a> {
    /// An `agent` method: the client calls `authenticate` with `id`.
    pub const fn agent(id: &'a str, name: &'a str) -> Self {
        Self {
            kind: AuthKind::Agent,
            id,
            name,
            description: None,
            args: &[],
            env: &[],
        }
    }

    /// A `terminal` method: the client runs the agent with `args` and `env` for the user.
    pub const fn terminal(id: &'a str, name: &'a str) -> Self {
        Self {
            kind: AuthKind::Terminal,
            ..Self::agent(id, name)
        }
    }

    /// With a `description`.
    #[must_use]
    pub const fn description(mut self, description: &'a str) -> Self {
        self.description = Some(description);
        self
    }

    /// With terminal `args`.
    #[must_use]
    pub const fn args(mut self, args: &'a [&'a str]) -> Self {
        self.args = args;
        self
    }

    /// With terminal `env` (name, value) pairs.
    #[must_use]
    pub const fn env(mut self, env: &'a [(&'a str, &'a str)]) -> Self {
        self.env = env;
        self
    }
}

/// A run of the pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: u16,
    len: u16,
}

/// One stored method: spans of the pool. `args` holds each argument followed by NUL, `env`
/// each name and value followed by NUL (neither can hold NUL on a command line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    kind: AuthKind,
    id: Span,
    name: Span,
    description: Option<Span>,
    args: Span,
    env: Span,
}

/// A list of auth methods in fixed storage: [`AUTH_METHODS_MAX`] methods sharing
/// [`AUTH_TEXT_MAX`] bytes of text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthMethodList {
    text: heapless::String<AUTH_TEXT_MAX>,
    entries: heapless::Vec<Entry, AUTH_METHODS_MAX>,
}

/// Why [`AuthMethodList::push`] refused a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthRefused {
    /// An empty id, an id longer than [`AUTH_ID_MAX`], or a NUL in an arg or env entry.
    Invalid,
    /// Another method has this id.
    Duplicate,
    /// [`AUTH_METHODS_MAX`] methods, or [`AUTH_TEXT_MAX`] bytes of text, are used up.
    Full,
}

impl AuthMethodList {
    /// No method.
    pub const fn new() -> Self {
        Self {
            text: heapless::String::new(),
            entries: heapless::Vec::new(),
        }
    }

    /// Adds a method at the end; on refusal nothing changes.
    pub fn push(&mut self, spec: &AuthMethodSpec<'_>) -> Result<(), AuthRefused> {
        let nul_free = |s: &str| !s.contains('\0');
        if spec.id.is_empty()
            || spec.id.len() > AUTH_ID_MAX
            || !spec.args.iter().all(|a| nul_free(a))
            || !spec.env.iter().all(|(n, v)| nul_free(n) && nul_free(v))
        {
            return Err(AuthRefused::Invalid);
        }
        if self.find(spec.id).is_some() {
            return Err(AuthRefused::Duplicate);
        }
        let mark = self.text.len();
        let stored = self.store(spec);
        match stored {
            Some(entry) if self.entries.push(entry).is_ok() => Ok(()),
            _ => {
                self.text.truncate(mark);
                Err(AuthRefused::Full)
            }
        }
    }

    fn store(&mut self, spec: &AuthMethodSpec<'_>) -> Option<Entry> {
        let id = self.put(&[spec.id])?;
        let name = self.put(&[spec.name])?;
        let description = match spec.description {
            Some(d) => Some(self.put(&[d])?),
            None => None,
        };
        let start = self.text.len();
        for arg in spec.args {
            self.put(&[arg, "\0"])?;
        }
        let args = self.since(start);
        let start = self.text.len();
        for (name, value) in spec.env {
            self.put(&[name, "\0", value, "\0"])?;
        }
        let env = self.since(start);
        Some(Entry {
            kind: spec.kind,
            id,
            name,
            description,
            args,
            env,
        })
    }

    /// Appends `parts` to the pool as one span.
    fn put(&mut self, parts: &[&str]) -> Option<Span> {
        let start = self.text.len();
        for part in parts {
            self.text.push_str(part).ok()?;
        }
        Some(self.since(start))
    }

    fn since(&self, start: usize) -> Span {
        // The pool is at most AUTH_TEXT_MAX (< u16::MAX) bytes.
        Span {
            start: start as u16,
            len: (self.text.len() - start) as u16,
        }
    }

    fn slice(&self, span: Span) -> &str {
        let start = usize::from(span.start);
        &self.text[start..start + usize::from(span.len)]
    }

    /// How many methods are stored.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no method is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The methods in order.
    pub fn iter(&self) -> impl Iterator<Item = AuthMethodRef<'_>> + '_ {
        self.entries.iter().map(|e| self.entry(e))
    }

    fn entry(&self, e: &Entry) -> AuthMethodRef<'_> {
        AuthMethodRef {
            kind: e.kind,
            id: self.slice(e.id),
            name: self.slice(e.name),
            description: e.description.map(|d| self.slice(d)),
            args: self.slice(e.args),
            env: self.slice(e.env),
        }
    }

    /// The method with this id.
    pub fn find(&self, id: &str) -> Option<AuthMethodRef<'_>> {
        self.iter().find(|m| m.id == id)
    }

    /// Reads the `authMethods` of an `initialize` result (client side): methods with a string
    /// `id` and `name` and a known `type` (none, `agent` or `terminal`), in order, as many as
    /// fit. Returns whether every readable method fit.
    pub(crate) fn read_result(&mut self, result: RawValue<'_>) -> bool {
        *self = Self::new();
        let mut complete = true;
        for method in result
            .get_field("authMethods")
            .into_iter()
            .flat_map(|m| m.elements())
        {
            match self.read_one(method) {
                Some(true) | None => {}
                Some(false) => complete = false,
            }
        }
        complete
    }

    /// One method from JSON: `None` when it is unreadable (skipped, as the schema's readers
    /// skip invalid items), `Some(fit)` otherwise.
    fn read_one(&mut self, method: RawValue<'_>) -> Option<bool> {
        let kind = match method.get_field("type") {
            None => AuthKind::Agent,
            Some(t) if t.is_null() => AuthKind::Agent,
            Some(t) if t.as_str()?.eq_str("agent") => AuthKind::Agent,
            Some(t) if t.as_str()?.eq_str("terminal") => AuthKind::Terminal,
            Some(_) => return None,
        };
        let text = |key: &str| method.get_field(key).and_then(|v| v.as_str());
        let (id, name) = (text("id")?, text("name")?);
        let description = text("description");
        let mark = (self.text.len(), self.entries.len());
        let stored = (|| {
            let id_span = self.put_chars(id.chars())?;
            if id_span.len == 0 || usize::from(id_span.len) > AUTH_ID_MAX {
                return None;
            }
            let name = self.put_chars(name.chars())?;
            let description = match description {
                Some(d) => Some(self.put_chars(d.chars())?),
                None => None,
            };
            let start = self.text.len();
            if kind == AuthKind::Terminal {
                for arg in method
                    .get_field("args")
                    .into_iter()
                    .flat_map(|a| a.elements())
                {
                    self.put_chars(arg.as_str()?.chars().chain(Some('\0')))?;
                }
            }
            let args = self.since(start);
            let start = self.text.len();
            if kind == AuthKind::Terminal
                && let Some(env) = method
                    .get_field("env")
                    .filter(|e| e.kind() == ValueKind::Object)
            {
                for (key, value) in env.fields() {
                    self.put_chars(key.chars().chain(Some('\0')))?;
                    self.put_chars(value.as_str()?.chars().chain(Some('\0')))?;
                }
            }
            let env = self.since(start);
            let entry = Entry {
                kind,
                id: id_span,
                name,
                description,
                args,
                env,
            };
            let duplicate = self.iter().any(|m| m.id == self.slice(id_span));
            (!duplicate).then_some(entry)
        })();
        match stored.map(|entry| self.entries.push(entry)) {
            Some(Ok(())) => Some(true),
            _ => {
                self.text.truncate(mark.0);
                self.entries.truncate(mark.1);
                Some(false)
            }
        }
    }

    fn put_chars(&mut self, chars: impl Iterator<Item = char>) -> Option<Span> {
        let start = self.text.len();
        for c in chars {
            self.text.push(c).ok()?;
        }
        Some(self.since(start))
    }
}

/// A stored auth method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuthMethodRef<'a> {
    /// The flow.
    pub kind: AuthKind,
    /// `id`.
    pub id: &'a str,
    /// `name`.
    pub name: &'a str,
    /// `description`.
    pub description: Option<&'a str>,
    args: &'a str,
    env: &'a str,
}

impl<'a> AuthMethodRef<'a> {
    /// Terminal `args`, in order.
    pub fn args(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.args.split_terminator('\0')
    }

    /// Terminal `env` as (name, value) pairs, in order.
    pub fn env(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let mut parts = self.env.split_terminator('\0');
        core::iter::from_fn(move || Some((parts.next()?, parts.next()?)))
    }
}

/// The `authMethods` of an `initialize` answer: every method, `terminal` ones only when the
/// client set `clientCapabilities.auth.terminal` (R-AUTH-2).
pub(crate) struct AuthMethodsJson<'a> {
    pub(crate) methods: &'a AuthMethodList,
    pub(crate) terminal: bool,
}

impl Serialize for AuthMethodsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for method in self.methods.iter() {
            if method.kind == AuthKind::Agent || self.terminal {
                seq.serialize_element(&MethodJson(method))?;
            }
        }
        seq.end()
    }
}

/// One method in the official schema's shape (`agent`: no `type`; `terminal`: `type` first,
/// `args` and `env` only when not empty).
struct MethodJson<'a>(AuthMethodRef<'a>);

impl Serialize for MethodJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = &self.0;
        let mut map = s.serialize_map(None)?;
        if m.kind == AuthKind::Terminal {
            map.serialize_entry("type", "terminal")?;
        }
        map.serialize_entry("id", m.id)?;
        map.serialize_entry("name", m.name)?;
        if let Some(description) = m.description {
            map.serialize_entry("description", description)?;
        }
        if m.kind == AuthKind::Terminal {
            if m.args().next().is_some() {
                map.serialize_entry("args", &Args(*m))?;
            }
            if m.env().next().is_some() {
                map.serialize_entry("env", &Env(*m))?;
            }
        }
        map.end()
    }
}

struct Args<'a>(AuthMethodRef<'a>);

impl Serialize for Args<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for arg in self.0.args() {
            seq.serialize_element(arg)?;
        }
        seq.end()
    }
}

struct Env<'a>(AuthMethodRef<'a>);

impl Serialize for Env<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (name, value) in self.0.env() {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-AUTH-1: a method is stored whole or not at all; the pool is shared.
    #[test]
    fn push_is_all_or_nothing() {
        let mut list = AuthMethodList::new();
        let long = "x".repeat(AUTH_TEXT_MAX);
        assert_eq!(
            list.push(&AuthMethodSpec::agent("a", &long)),
            Err(AuthRefused::Full)
        );
        assert!(list.is_empty());
        list.push(
            &AuthMethodSpec::terminal("t", "T")
                .args(&["--login", ""])
                .env(&[("K", "v"), ("E", "")]),
        )
        .unwrap();
        let t = list.find("t").unwrap();
        assert_eq!(t.args().collect::<heapless::Vec<_, 4>>(), ["--login", ""]);
        assert_eq!(
            t.env().collect::<heapless::Vec<_, 4>>(),
            [("K", "v"), ("E", "")]
        );
        assert_eq!(
            list.push(&AuthMethodSpec::agent("t", "again")),
            Err(AuthRefused::Duplicate)
        );
        assert_eq!(
            list.push(&AuthMethodSpec::agent("", "empty")),
            Err(AuthRefused::Invalid)
        );
        assert_eq!(
            list.push(&AuthMethodSpec::terminal("n", "N").args(&["a\0b"])),
            Err(AuthRefused::Invalid)
        );
        assert_eq!(list.len(), 1);
    }
}
