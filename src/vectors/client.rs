//! The client-connection part of the vector format (`vectors/client/`): application
//! commands as actions, client events as expectations, and the client options of `config`.
//!
//! A client vector plays the agent: `in` steps are the agent's lines, `out` steps what the
//! client must write to the agent, `client` steps what the application does, `client_event`
//! steps what the application must be told. See `vectors/README.md`, "Client vectors".
//!
//! | step | meaning |
//! |---|---|
//! | `{"config":{"client":{"serves":["fs_read"],"prompt_timeout_ms":1000}}}` | client options |
//! | `{"client":{"do":"prompt","sessionId":"s1","text":"hi"}}` | a command (an action) |
//! | `{"client":{"do":"prompt","sessionId":"s1","text":"hi","error":"TurnInProgress"}}` | a command that must fail with this usage error |
//! | `{"client_event":{"event":"TurnEnded","session":"s1","request":2,"outcome":"stopped:end_turn"}}` | an expected event |

use std::collections::BTreeMap;

use serde_json::Value;
use serde_json::value::RawValue;

/// Every command, with the members it takes besides `do` and the optional `error`.
pub const COMMANDS: &[(&str, &[&str])] = &[
    ("initialize", &[]),
    ("new_session", &["cwd"]),
    ("load_session", &["sessionId", "cwd"]),
    ("resume_session", &["sessionId", "cwd"]),
    ("prompt", &["sessionId", "text"]),
    ("cancel", &["sessionId"]),
    ("set_mode", &["sessionId", "modeId"]),
    ("set_config_option", &["sessionId", "configId", "value"]),
    ("request", &["method", "params"]),
    ("respond_permission", &["id", "optionId", "outcome"]),
    ("respond_ask_user", &["id", "text", "outcome"]),
    ("respond", &["id", "result"]),
    ("respond_error", &["id", "code", "message"]),
];

/// Every event kind, with the members it has besides `event`.
pub const EVENTS: &[(&str, &[&str])] = &[
    ("Initialized", &["request"]),
    ("HandshakeFailed", &["request", "error"]),
    ("SessionOpened", &["request", "method", "session"]),
    ("Answered", &["request", "method"]),
    ("Failed", &["request", "method", "failure"]),
    ("Update", &["session", "context", "kind"]),
    ("TurnEnded", &["session", "request", "outcome"]),
    ("Request", &["id", "method", "session"]),
    ("RequestSettled", &["id", "how"]),
    ("Notification", &["method"]),
    ("Violation", &["violation"]),
    ("Closed", &[]),
];

/// The names `serves` may list.
pub const SERVES: &[&str] = &[
    "fs_read",
    "fs_write",
    "terminal",
    "ask_user",
    "elicitation",
    "extension_methods",
    "terminal_auth",
];

fn object(what: &str, value: &RawValue) -> Result<BTreeMap<String, Value>, String> {
    serde_json::from_str(value.get())
        .map_err(|_| format!("`{what}` must be a JSON object, got {}", value.get()))
}

fn check_members(
    what: &str,
    name: &str,
    members: &BTreeMap<String, Value>,
    allowed: &[&str],
    fixed: &[&str],
) -> Result<(), String> {
    match members
        .keys()
        .find(|key| !allowed.contains(&key.as_str()) && !fixed.contains(&key.as_str()))
    {
        Some(extra) => Err(format!("a `{name}` {what} has no `{extra}`")),
        None => Ok(()),
    }
}

/// Parses a `client` step: `{"do":<command>, …members, "error"?:<UsageError name>}`.
pub fn parse_command(value: &RawValue) -> Result<Value, String> {
    let members = object("client", value)?;
    let name = members
        .get("do")
        .and_then(Value::as_str)
        .ok_or("a `client` step needs `do`: the command's name")?;
    let (_, allowed) = COMMANDS
        .iter()
        .find(|(known, _)| *known == name)
        .ok_or_else(|| format!("unknown client command `{name}`"))?;
    check_members("command", name, &members, allowed, &["do", "error"])?;
    serde_json::from_str(value.get()).map_err(|error| error.to_string())
}

/// Parses a `client_event` step: `{"event":<kind>, …members}`.
pub fn parse_event(value: &RawValue) -> Result<Value, String> {
    let members = object("client_event", value)?;
    let name = members
        .get("event")
        .and_then(Value::as_str)
        .ok_or("a `client_event` needs `event`: the event's kind")?;
    let (_, allowed) = EVENTS
        .iter()
        .find(|(known, _)| *known == name)
        .ok_or_else(|| format!("unknown client event `{name}`"))?;
    check_members("event", name, &members, allowed, &["event"])?;
    serde_json::from_str(value.get()).map_err(|error| error.to_string())
}

/// Checks `config.client`: `serves` (names from [`SERVES`]), `request_timeout_ms` and
/// `prompt_timeout_ms` (integers, or null for none).
pub fn check_config(options: &Value) -> Result<(), String> {
    let Some(members) = options.as_object() else {
        return Err(format!("`config.client` must be an object, got {options}"));
    };
    for (key, value) in members {
        match key.as_str() {
            "serves" => {
                let names = value.as_array().ok_or("`serves` must be an array")?;
                for name in names {
                    if !name.as_str().is_some_and(|n| SERVES.contains(&n)) {
                        return Err(format!("`serves` lists an unknown method group {name}"));
                    }
                }
            }
            "request_timeout_ms" | "prompt_timeout_ms" => {
                if !(value.is_u64() || value.is_null()) {
                    return Err(format!("`{key}` must be milliseconds or null, got {value}"));
                }
            }
            other => {
                return Err(format!(
                    "unknown client option `{other}` (known: serves, request_timeout_ms, \
                     prompt_timeout_ms)"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Event, Step, parse};

    fn parse_err(text: &str) -> String {
        parse("c.jsonl", text).unwrap_err().to_string()
    }

    #[test]
    fn client_steps_parse_into_commands_and_events() {
        let vector = parse(
            "c.jsonl",
            concat!(
                r#"{"config":{"client":{"serves":["fs_read"],"prompt_timeout_ms":null}}}"#,
                "\n",
                r#"{"client":{"do":"prompt","sessionId":"s1","text":"hi","error":"TurnInProgress"}}"#,
                "\n",
                r#"{"client_event":{"event":"Closed"}}"#,
                "\n",
            ),
        )
        .unwrap();
        assert_eq!(
            vector.config.client,
            Some(serde_json::json!({"serves":["fs_read"],"prompt_timeout_ms":null}))
        );
        assert_eq!(
            vector.steps,
            [
                Step::Client(
                    serde_json::json!({"do":"prompt","sessionId":"s1","text":"hi","error":"TurnInProgress"})
                ),
                Step::Event(Event::Client(serde_json::json!({"event":"Closed"}))),
            ]
        );
        // A client command is an action: its expectations follow it.
        assert_eq!(vector.expectations(0).events.len(), 1);
    }

    #[test]
    fn malformed_client_steps_are_refused_with_reasons() {
        let cases = [
            (r#"{"client":{"cwd":"/"}}"#, "needs `do`"),
            (r#"{"client":{"do":"fly"}}"#, "unknown client command `fly`"),
            (
                r#"{"client":{"do":"cancel","cwd":"/"}}"#,
                "a `cancel` command has no `cwd`",
            ),
            (r#"{"client":5}"#, "`client` must be a JSON object"),
            (r#"{"client_event":{"kind":"x"}}"#, "needs `event`"),
            (
                r#"{"client_event":{"event":"Boom"}}"#,
                "unknown client event `Boom`",
            ),
            (
                r#"{"client_event":{"event":"Closed","x":1}}"#,
                "a `Closed` event has no `x`",
            ),
            (
                r#"{"config":{"client":{"serves":["fs"]}}}"#,
                "unknown method group",
            ),
            (
                r#"{"config":{"client":{"prompt_timeout_ms":-1}}}"#,
                "milliseconds or null",
            ),
            (
                r#"{"config":{"client":{"x":1}}}"#,
                "unknown client option `x`",
            ),
        ];
        for (line, reason) in cases {
            let error = parse_err(line);
            assert!(error.starts_with("c.jsonl:1: "), "{error}");
            assert!(error.contains(reason), "{line}: {error}");
        }
    }
}
