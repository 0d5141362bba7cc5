//! `acp-cli trace replay FILE -- AGENT`: the client side of a recorded trace played against a
//! fresh agent, and every place where the agent now says something else (R-TRACE-3).
//!
//! The trace is walked in its order. A client request or notification is sent as recorded; a
//! client answer to one of the agent's requests is sent when its turn comes, with the id the
//! agent used this time; an agent message is awaited and compared with the recorded one.
//! What differs between two honest runs is mapped, not reported: session ids (the id a
//! `session/new` answer gives now replaces the recorded one in every later client message, and
//! the agent's messages are compared with it mapped back) and the ids of the agent's own
//! requests. Times are not compared. The comparison is in order: an agent that says the same
//! things in another order differs.
//!
//! Each difference is one line, `LINE: PATH: recorded R, now N`, with the trace line of the
//! recorded message, a path into its JSON (`$.params.update.content.text`), and both values
//! as compact JSON (`absent` where a member is missing).

use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use serde_json::Value;

use acp_conform::trace::{self as format, Entry, Side};
use acp_core::wire::frame::Framer;

use super::proxy::MAX_LINE_BYTES;

/// How long replay waits for each agent message by default.
pub(crate) const DEFAULT_WAIT_SECS: f64 = 10.0;

/// One place where the agent's answer differs from the recording.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Difference {
    /// The trace line of the recorded message (0: after the last one).
    pub line: usize,
    /// Where in the message: `$` is the whole message.
    pub path: String,
    /// The recorded value (compact JSON, or `absent`, or a description).
    pub recorded: String,
    /// What the agent said now.
    pub now: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let line = match self.line {
            0 => "end".to_owned(),
            n => n.to_string(),
        };
        write!(
            f,
            "{line}: {}: recorded {}, now {}",
            self.path, self.recorded, self.now
        )
    }
}

/// What came of a replay.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Every difference, in trace order.
    pub differences: Vec<Difference>,
    /// How many recorded agent messages were compared.
    pub compared: usize,
}

/// The agent's side of the pipe: its stdin, and its stdout lines arriving on a channel (so a
/// silent agent can be waited for with a deadline).
struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    wait: Duration,
}

/// Sends every non-blank line the agent writes, as written (`\r` included, as `trace`
/// records it), until its stdout ends or nobody listens. A line longer than `trace` records
/// (R-FRAME-5's 16 MiB) is skipped: no recorded message can match it.
fn read_lines(mut stdout: impl Read, send: &Sender<Vec<u8>>) {
    let mut framer = Framer::with_limit(MAX_LINE_BYTES).raw();
    let mut buf = vec![0u8; 64 * 1024];
    let mut ended = false;
    while !ended {
        let mut input = match stdout.read(&mut buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Ok(0) | Err(_) => {
                framer.finish();
                ended = true;
                &[][..]
            }
            Ok(n) => &buf[..n],
        };
        while let Some(line) = framer.next_line_bytes_from(&mut input) {
            if let Ok(line) = line
                && !line.trim_ascii().is_empty()
                && send.send(line.to_vec()).is_err()
            {
                return;
            }
        }
    }
}

impl Agent {
    fn start(argv: &[String], wait: Duration) -> Result<Agent, String> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| String::from("no agent command given after --"))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (send, lines) = channel();
        std::thread::spawn(move || read_lines(stdout, &send));
        Ok(Agent {
            stdin: child.stdin.take(),
            child,
            lines,
            wait,
        })
    }

    /// Sends one line; a closed pipe is noticed when the next answer does not come.
    fn send(&mut self, line: &[u8]) {
        if let Some(stdin) = self.stdin.as_mut()
            && stdin
                .write_all(line)
                .and_then(|()| stdin.write_all(b"\n"))
                .and_then(|()| stdin.flush())
                .is_err()
        {
            self.stdin = None;
        }
    }

    /// The next line the agent writes, or why there is none.
    fn next(&self) -> Result<Vec<u8>, String> {
        match self.lines.recv_timeout(self.wait) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "nothing (the agent was silent for {} s)",
                self.wait.as_secs_f64()
            )),
            Err(RecvTimeoutError::Disconnected) => Err("nothing (the agent ended)".to_owned()),
        }
    }
}

/// The ids that differ between the recording and now.
#[derive(Default)]
struct Mapping {
    /// Recorded session id → the agent's session id now.
    sessions: HashMap<String, String>,
    /// The agent's request ids: recorded (as JSON text) → now.
    agent_ids: HashMap<String, Value>,
}

impl Mapping {
    /// Every string equal to a recorded session id, replaced by the session id now.
    fn to_now(&self, value: &mut Value) {
        replace_strings(value, &|s| self.sessions.get(s).cloned());
    }

    /// Every string equal to a session id now, replaced by the recorded one.
    fn to_recorded(&self, value: &mut Value) {
        replace_strings(value, &|s| {
            self.sessions
                .iter()
                .find(|(_, now)| *now == s)
                .map(|(recorded, _)| recorded.clone())
        });
    }
}

fn replace_strings(value: &mut Value, with: &dyn Fn(&str) -> Option<String>) {
    match value {
        Value::String(s) => {
            if let Some(new) = with(s) {
                *s = new;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, with)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_strings(v, with)),
        _ => {}
    }
}

fn is_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some_and(|id| !id.is_null())
}

fn is_response(message: &Value) -> bool {
    message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
}

/// Replays `entries` against the agent `argv`; `Err` when the agent cannot be started.
pub(crate) fn replay(
    entries: &[Entry],
    argv: &[String],
    wait: Duration,
) -> Result<Outcome, String> {
    let mut agent = Agent::start(argv, wait)?;
    let mut mapping = Mapping::default();
    let mut outcome = Outcome::default();
    // The recorded session-creating requests of the client, by id, so their answers teach
    // the session mapping.
    let mut creating = HashSet::new();
    let mut ended = false;
    for entry in entries {
        let recorded: Option<Value> = serde_json::from_slice(&entry.text).ok();
        match entry.from {
            Side::Client => {
                let Some(mut message) = recorded else {
                    agent.send(&entry.text);
                    continue;
                };
                if is_response(&message) {
                    // The answer to one of the agent's requests: under the id it used now.
                    let key = message.get("id").map(Value::to_string).unwrap_or_default();
                    let Some(id) = mapping.agent_ids.get(&key).cloned() else {
                        continue;
                    };
                    message["id"] = id;
                } else if is_request(&message)
                    && matches!(
                        message.get("method").and_then(Value::as_str),
                        Some("session/new" | "session/fork")
                    )
                {
                    creating.insert(message["id"].to_string());
                }
                mapping.to_now(&mut message);
                agent.send(message.to_string().as_bytes());
            }
            Side::Agent if ended => {}
            Side::Agent => {
                outcome.compared += 1;
                let now = match agent.next() {
                    Ok(line) => line,
                    Err(why) => {
                        outcome.differences.push(Difference {
                            line: entry.line,
                            path: "$".into(),
                            recorded: summary(&entry.text),
                            now: why,
                        });
                        ended = true;
                        continue;
                    }
                };
                let (Some(recorded), Ok(mut now_value)) =
                    (recorded, serde_json::from_slice::<Value>(&now))
                else {
                    if entry.text != now {
                        outcome.differences.push(Difference {
                            line: entry.line,
                            path: "$".into(),
                            recorded: summary(&entry.text),
                            now: summary(&now),
                        });
                    }
                    continue;
                };
                if is_response(&recorded)
                    && creating.contains(&recorded["id"].to_string())
                    && let (Some(old), Some(new)) = (
                        recorded
                            .pointer("/result/sessionId")
                            .and_then(Value::as_str),
                        now_value
                            .pointer("/result/sessionId")
                            .and_then(Value::as_str),
                    )
                {
                    mapping.sessions.insert(old.to_owned(), new.to_owned());
                }
                if is_request(&recorded) && is_request(&now_value) {
                    mapping
                        .agent_ids
                        .insert(recorded["id"].to_string(), now_value["id"].clone());
                    now_value["id"] = recorded["id"].clone();
                }
                mapping.to_recorded(&mut now_value);
                compare(
                    entry.line,
                    "$",
                    Some(&recorded),
                    Some(&now_value),
                    &mut outcome.differences,
                );
            }
        }
    }
    // The agent's last words: whatever it says after the recording ended, until it exits.
    agent.stdin = None;
    if !ended {
        while let Ok(line) = agent.next() {
            outcome.differences.push(Difference {
                line: 0,
                path: "$".into(),
                recorded: "nothing".into(),
                now: summary(&line),
            });
        }
    }
    let _ = agent.child.kill();
    let _ = agent.child.wait();
    Ok(outcome)
}

/// A recorded or received line, as compact JSON when it is JSON, else as a JSON string.
fn summary(line: &[u8]) -> String {
    match serde_json::from_slice::<Value>(line) {
        Ok(value) => value.to_string(),
        Err(_) => Value::String(String::from_utf8_lossy(line).into_owned()).to_string(),
    }
}

fn show(value: Option<&Value>) -> String {
    value.map_or_else(|| "absent".to_owned(), Value::to_string)
}

/// The differences between two JSON values, one per leaf (or per member present on one side
/// only, or per array length).
fn compare(
    line: usize,
    path: &str,
    recorded: Option<&Value>,
    now: Option<&Value>,
    out: &mut Vec<Difference>,
) {
    match (recorded, now) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let mut keys: Vec<&String> = a
                .keys()
                .chain(b.keys().filter(|k| !a.contains_key(*k)))
                .collect();
            keys.sort();
            for key in keys {
                let child = if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    format!("{path}.{key}")
                } else {
                    format!("{path}[{}]", Value::String(key.clone()))
                };
                compare(line, &child, a.get(key), b.get(key), out);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                compare(line, &format!("{path}[{index}]"), Some(x), Some(y), out);
            }
        }
        (a, b) if a != b => out.push(Difference {
            line,
            path: path.to_owned(),
            recorded: show(a),
            now: show(b),
        }),
        _ => {}
    }
}

/// Reads `file` and replays it; the exit status: 0 no difference, 1 some, 2 the file or the
/// agent could not be used.
pub(crate) fn run(file: &std::path::Path, agent: &[String], wait: Duration) -> i32 {
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("acp-cli trace replay: cannot read {}: {e}", file.display());
            return 2;
        }
    };
    let trace = format::read(&bytes);
    for (line, why) in &trace.unreadable {
        eprintln!("acp-cli trace replay: line {line} skipped: {why}");
    }
    let outcome = match replay(&trace.entries, agent, wait) {
        Ok(outcome) => outcome,
        Err(message) => {
            eprintln!("acp-cli trace replay: {message}");
            return 2;
        }
    };
    let mut out = String::new();
    for difference in &outcome.differences {
        out.push_str(&format!("{difference}\n"));
    }
    crate::stdout::print(format_args!("{out}"));
    let n = outcome.differences.len();
    eprintln!(
        "acp-cli trace replay: {} in {} agent messages",
        match n {
            0 => "no differences".to_owned(),
            1 => "1 difference".to_owned(),
            n => format!("{n} differences"),
        },
        outcome.compared
    );
    i32::from(n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn diffs(a: Value, b: Value) -> Vec<String> {
        let mut out = Vec::new();
        compare(7, "$", Some(&a), Some(&b), &mut out);
        out.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn differences_name_the_path_and_both_values() {
        assert_eq!(
            diffs(
                json!({"params":{"update":{"content":{"text":"hi"}},"x-y":[1,2]},"gone":1}),
                json!({"params":{"update":{"content":{"text":"ho"}},"x-y":[1,3]},"new":true}),
            ),
            [
                "7: $.gone: recorded 1, now absent",
                "7: $.new: recorded absent, now true",
                r#"7: $.params.update.content.text: recorded "hi", now "ho""#,
                r#"7: $.params["x-y"][1]: recorded 2, now 3"#,
            ]
        );
        assert_eq!(
            diffs(json!([1, 2]), json!([1])),
            ["7: $: recorded [1,2], now [1]"]
        );
        assert!(diffs(json!({"a":[{"b":null}]}), json!({"a":[{"b":null}]})).is_empty());
    }

    #[test]
    fn session_ids_map_both_ways() {
        let mut mapping = Mapping::default();
        mapping.sessions.insert("old".into(), "new".into());
        let mut v = json!({"sessionId":"old","list":["old","other"]});
        mapping.to_now(&mut v);
        assert_eq!(v, json!({"sessionId":"new","list":["new","other"]}));
        mapping.to_recorded(&mut v);
        assert_eq!(v, json!({"sessionId":"old","list":["old","other"]}));
    }
}
