//! The trace file formats: writing them (the proxy) and reading them back (lint, view, replay).
//!
//! The default format is the official conductor's `.jsons` event format (one JSON object per
//! line; `type` is `request`, `response` or `notification`; `ts` seconds since start;
//! `protocol`, `from`, `to`, `id`, `method`, `session`, `params`; `is_error` and `payload` for
//! responses), so the official trace viewer opens our traces. Two extra event types keep what
//! that format has no room for: `invalid` (a line that is not a JSON-RPC message, with its text
//! in `raw`) and `dropped` (events the recorder had to skip, with their `count`; R-TRACE-2).
//!
//! `--raw` writes `DIR TS LINE` instead: `>` for client → agent, `<` for agent → client, the
//! time with microseconds, then the exact bytes of the line.
//!
//! Reading accepts both, and plain NDJSON captures whose lines start with `>` or `<` (with or
//! without a time), so a capture pasted from a log can be linted too.

use serde_json::{Map, Value, json};

/// Who sent a message: the client (editor) or the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The editor, which launched the proxy.
    Client,
    /// The agent, which the proxy launched.
    Agent,
}

impl Side {
    /// The other end.
    pub fn other(self) -> Side {
        match self {
            Side::Client => Side::Agent,
            Side::Agent => Side::Client,
        }
    }

    /// The component name of the conductor's format (`Client`, `Agent`).
    pub fn component(self) -> &'static str {
        match self {
            Side::Client => "Client",
            Side::Agent => "Agent",
        }
    }

    /// The direction prefix of raw captures: `>` client → agent, `<` agent → client.
    pub fn arrow(self) -> char {
        match self {
            Side::Client => '>',
            Side::Agent => '<',
        }
    }

    /// `client` or `agent`, as findings blame them.
    pub fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Agent => "agent",
        }
    }
}

/// Appends the conductor-format event for one line `from` sent at `ts`, newline included.
///
/// A well-formed message (acp-core's envelope scan validates the whole line in one pass) is
/// written straight from its spans: `id`, `method`, `params`, `result` and `sessionId` are
/// copied as the bytes they came as, with no `Value` built. Anything else (errors, lines the
/// scan refuses) takes [`event_of`]; both give the same JSON (R-TRACE-2: the recorder must
/// keep up with the fastest stream).
pub fn write_event(from: Side, ts: f64, line: &[u8], out: &mut Vec<u8>) {
    write_event_at(from, ts, &ts_text(ts), line, out);
}

/// The text of `ts` in an event: the shortest that reads back as the same f64 (Debug's; a
/// time since the start is never NaN or infinite).
pub fn ts_text(ts: f64) -> String {
    format!("{ts:?}")
}

/// [`write_event`] with the time already written as `ts_text` (the lines of one read share
/// it, so the proxy writes it once per read).
pub fn write_event_at(from: Side, ts: f64, ts_text: &str, line: &[u8], out: &mut Vec<u8>) {
    if !write_event_from_spans(from, ts_text, line, out) {
        let event = event_of(from, ts, line);
        // Serializing a `Value` into a Vec cannot fail.
        serde_json::to_writer(&mut *out, &event).expect("a JSON value serializes");
        out.push(b'\n');
    }
}

/// The fast path of [`write_event`]; `false` (and nothing written) when the line needs
/// [`event_of`].
fn write_event_from_spans(from: Side, ts: &str, line: &[u8], out: &mut Vec<u8>) -> bool {
    use acp_core::wire::envelope::{Message, Outcome, scan_bytes};
    use acp_core::wire::{Id, RawValue};

    let Ok(message) = scan_bytes(line) else {
        return false;
    };
    let put_id = |id: &Id<'_>, out: &mut Vec<u8>| match id {
        Id::Int(digits) => out.extend_from_slice(digits.as_bytes()),
        Id::Str(text) => {
            out.push(b'"');
            out.extend_from_slice(text.raw().as_bytes());
            out.push(b'"');
        }
        Id::Null => out.extend_from_slice(b"null"),
    };
    let head = |kind: &str, protocol: bool, out: &mut Vec<u8>| {
        out.extend_from_slice(b"{\"type\":\"");
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(b"\",\"ts\":");
        out.extend_from_slice(ts.as_bytes());
        if protocol {
            out.extend_from_slice(b",\"protocol\":\"acp\"");
        }
        out.extend_from_slice(b",\"from\":\"");
        out.extend_from_slice(from.component().as_bytes());
        out.extend_from_slice(b"\",\"to\":\"");
        out.extend_from_slice(from.other().component().as_bytes());
        out.push(b'"');
    };
    let call = |id: Option<&Id<'_>>, params: Option<RawValue<'_>>, out: &mut Vec<u8>| {
        head(
            if id.is_some() {
                "request"
            } else {
                "notification"
            },
            true,
            out,
        );
        if let Some(id) = id {
            out.extend_from_slice(b",\"id\":");
            put_id(id, out);
        }
        out.extend_from_slice(b",\"method\":\"");
        out.extend_from_slice(message.method().map_or("", |m| m.raw()).as_bytes());
        out.push(b'"');
        if let Some(session) = message.session_id() {
            out.extend_from_slice(b",\"session\":\"");
            out.extend_from_slice(session.raw().as_bytes());
            out.push(b'"');
        }
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(params.map_or("null", |p| p.get()).as_bytes());
        out.extend_from_slice(b"}\n");
    };
    match message {
        Message::Request(request) => call(Some(&request.id), request.params, out),
        Message::Notification(notification) => call(None, notification.params, out),
        Message::Response(response) => {
            let Outcome::Result(result) = response.outcome else {
                return false;
            };
            head("response", false, out);
            out.extend_from_slice(b",\"id\":");
            put_id(&response.id, out);
            out.extend_from_slice(b",\"is_error\":false,\"payload\":");
            out.extend_from_slice(result.get().as_bytes());
            out.extend_from_slice(b"}\n");
        }
    }
    true
}

/// Appends the `--raw` line for one line `from` sent at `ts`: `DIR TS LINE\n`, LINE exact.
pub fn write_raw(from: Side, ts: f64, line: &[u8], out: &mut Vec<u8>) {
    use std::io::Write;
    // Writing into a Vec cannot fail.
    let _ = write!(out, "{} {ts:.6} ", from.arrow());
    out.extend_from_slice(line);
    out.push(b'\n');
}

/// Appends the event saying `count` lines were not recorded (the recorder fell behind).
pub fn write_dropped(ts: f64, count: u64, raw: bool, out: &mut Vec<u8>) {
    let event = json!({"type": "dropped", "ts": ts, "count": count});
    if raw {
        out.extend_from_slice(b"# ");
    }
    serde_json::to_writer(&mut *out, &event).expect("a JSON value serializes");
    out.push(b'\n');
}

/// The conductor event for one line: a request, response or notification when the line is a
/// JSON-RPC message, else an `invalid` event with the text.
pub fn event_of(from: Side, ts: f64, line: &[u8]) -> Value {
    let (from_name, to_name) = (from.component(), from.other().component());
    let parsed = serde_json::from_slice::<Value>(line).ok();
    let Some(Value::Object(message)) = parsed else {
        return invalid(ts, from, line);
    };
    let session = message
        .get("params")
        .and_then(|p| p.get("sessionId"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let id = message.get("id").filter(|id| !id.is_null());
    match (message.get("method"), id) {
        (Some(Value::String(method)), Some(id)) => {
            let mut event = json!({
                "type": "request", "ts": ts, "protocol": "acp", "from": from_name,
                "to": to_name, "id": id, "method": method,
            });
            put_session_and_params(&mut event, session, params);
            event
        }
        (Some(Value::String(method)), None) => {
            let mut event = json!({
                "type": "notification", "ts": ts, "protocol": "acp", "from": from_name,
                "to": to_name, "method": method,
            });
            put_session_and_params(&mut event, session, params);
            event
        }
        (None, _) if message.contains_key("result") || message.contains_key("error") => {
            let (is_error, payload) = match (message.get("error"), message.get("result")) {
                (Some(error), _) => (true, error.clone()),
                (None, result) => (false, result.cloned().unwrap_or(Value::Null)),
            };
            json!({
                "type": "response", "ts": ts, "from": from_name, "to": to_name,
                "id": message.get("id").cloned().unwrap_or(Value::Null),
                "is_error": is_error, "payload": payload,
            })
        }
        _ => invalid(ts, from, line),
    }
}

fn put_session_and_params(event: &mut Value, session: Option<String>, params: Value) {
    if let Value::Object(map) = event {
        if let Some(session) = session {
            map.insert("session".into(), Value::String(session));
        }
        map.insert("params".into(), params);
    }
}

fn invalid(ts: f64, from: Side, line: &[u8]) -> Value {
    json!({
        "type": "invalid", "ts": ts, "from": from.component(), "to": from.other().component(),
        "raw": String::from_utf8_lossy(line),
    })
}

/// One message read back from a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Its 1-based line in the trace file.
    pub line: usize,
    /// Who sent it.
    pub from: Side,
    /// Seconds since the start, when the trace has times.
    pub ts: Option<f64>,
    /// The JSON-RPC line as sent (raw captures), or rebuilt from the event (event traces).
    pub text: Vec<u8>,
}

/// What a trace held besides its messages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// The messages, in order.
    pub entries: Vec<Entry>,
    /// Lines that were skipped: `(line, why)` (blank lines, comments and other legs of a
    /// conductor chain are skipped silently).
    pub unreadable: Vec<(usize, String)>,
    /// Events the recorder dropped, by the line of the `dropped` event.
    pub dropped: Vec<(usize, u64)>,
}

/// Reads a trace in any of the accepted forms (see the module docs).
pub fn read(bytes: &[u8]) -> Trace {
    let mut trace = Trace::default();
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let number = index + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match line[0] {
            b'>' | b'<' => trace.entries.push(read_prefixed(number, line)),
            b'#' => {
                if let Some(count) = dropped_count(&line[1..]) {
                    trace.dropped.push((number, count));
                }
            }
            _ => read_event(number, line, &mut trace),
        }
    }
    trace
}

/// `> LINE`, `> TS LINE` or `>LINE` (and the same with `<`).
fn read_prefixed(number: usize, line: &[u8]) -> Entry {
    let from = if line[0] == b'>' {
        Side::Client
    } else {
        Side::Agent
    };
    let rest = line[1..].strip_prefix(b" ").unwrap_or(&line[1..]);
    let (ts, text) = split_time(rest);
    Entry {
        line: number,
        from,
        ts,
        text: text.to_vec(),
    }
}

/// A leading `SECONDS ` before a line that is not itself a number.
fn split_time(rest: &[u8]) -> (Option<f64>, &[u8]) {
    let Some(space) = rest.iter().position(|&b| b == b' ') else {
        return (None, rest);
    };
    let head = &rest[..space];
    let is_time = !head.is_empty() && head.iter().all(|b| b.is_ascii_digit() || *b == b'.');
    match std::str::from_utf8(head).ok().filter(|_| is_time) {
        Some(text) => match text.parse::<f64>() {
            Ok(ts) => (Some(ts), &rest[space + 1..]),
            Err(_) => (None, rest),
        },
        None => (None, rest),
    }
}

fn dropped_count(json: &[u8]) -> Option<u64> {
    let value: Value = serde_json::from_slice(json.trim_ascii()).ok()?;
    (value.get("type")? == "dropped").then(|| value.get("count")?.as_u64())?
}

/// One line of an event trace (ours or the conductor's).
fn read_event(number: usize, line: &[u8], trace: &mut Trace) {
    let event = match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(event)) => event,
        Ok(_) => {
            trace
                .unreadable
                .push((number, "not a JSON object".to_owned()));
            return;
        }
        Err(error) => {
            trace
                .unreadable
                .push((number, format!("not JSON: {error}")));
            return;
        }
    };
    let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
    if kind == "dropped" {
        let count = event.get("count").and_then(Value::as_u64).unwrap_or(0);
        trace.dropped.push((number, count));
        return;
    }
    let Some(from) = leg(&event) else {
        // Another leg of a conductor chain (proxy to proxy): not the editor's conversation.
        return;
    };
    let ts = event.get("ts").and_then(Value::as_f64);
    let text = match kind {
        "request" | "notification" => {
            let mut message = Map::new();
            message.insert("jsonrpc".into(), "2.0".into());
            if kind == "request" {
                message.insert("id".into(), event.get("id").cloned().unwrap_or(Value::Null));
            }
            message.insert(
                "method".into(),
                event.get("method").cloned().unwrap_or(Value::Null),
            );
            match event.get("params") {
                None | Some(Value::Null) => {}
                Some(params) => {
                    message.insert("params".into(), params.clone());
                }
            }
            serde_json::to_vec(&message).expect("a JSON value serializes")
        }
        "response" => {
            let payload = event.get("payload").cloned().unwrap_or(Value::Null);
            let is_error = event.get("is_error").and_then(Value::as_bool) == Some(true);
            let id = event.get("id").cloned().unwrap_or(Value::Null);
            let message = if is_error {
                json!({"jsonrpc": "2.0", "id": id, "error": payload})
            } else {
                json!({"jsonrpc": "2.0", "id": id, "result": payload})
            };
            serde_json::to_vec(&message).expect("a JSON value serializes")
        }
        "invalid" => event
            .get("raw")
            .and_then(Value::as_str)
            .unwrap_or("")
            .as_bytes()
            .to_vec(),
        other => {
            trace
                .unreadable
                .push((number, format!("unknown event type '{other}'")));
            return;
        }
    };
    trace.entries.push(Entry {
        line: number,
        from,
        ts,
        text,
    });
}

/// The sender of an event on the editor's leg: `from: Client` is the client, `to: Client` the
/// agent side (the agent, or the first proxy of a conductor chain). Other legs are skipped.
fn leg(event: &Map<String, Value>) -> Option<Side> {
    let name = |key: &str| {
        event
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
    };
    match (name("from").as_deref(), name("to").as_deref()) {
        (Some("client"), _) => Some(Side::Client),
        (_, Some("client")) => Some(Side::Agent),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(from: Side, line: &str) -> Value {
        event_of(from, 0.5, line.as_bytes())
    }

    #[test]
    fn a_request_becomes_a_conductor_request_event_with_its_session() {
        let e = event(
            Side::Client,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#,
        );
        assert_eq!(
            e,
            json!({"type":"request","ts":0.5,"protocol":"acp","from":"Client","to":"Agent",
                   "id":3,"method":"session/prompt","session":"s1",
                   "params":{"sessionId":"s1","prompt":[]}})
        );
    }

    fn fast_and_value_paths_agree(from: Side, line: &[u8]) {
        let mut out = Vec::new();
        write_event(from, 0.25, line, &mut out);
        assert_eq!(
            out.last(),
            Some(&b'\n'),
            "{}",
            String::from_utf8_lossy(line)
        );
        assert_eq!(memchr::memchr_iter(b'\n', &out).count(), 1);
        let written: Value = serde_json::from_slice(&out).expect("the event is JSON");
        assert_eq!(
            written,
            event_of(from, 0.25, line),
            "{}",
            String::from_utf8_lossy(line)
        );
    }

    /// Every combination of the envelope's members (ids of each kind, escapes, absent and
    /// null params, sessions that are not strings, bad versions, results and errors): the
    /// events written from spans equal the ones built as values.
    #[test]
    fn events_from_spans_equal_events_from_values() {
        let versions = [r#""jsonrpc":"2.0","#, "", r#""jsonrpc":"1.0","#];
        let ids = [
            "",
            r#""id":7,"#,
            r#""id":-0,"#,
            r#""id":12345678901234567890123,"#,
            r#""id":"a"bA","#,
            r#""id":null,"#,
            r#""id":1.5,"#,
        ];
        let heads = [
            r#""method":"session/update","#,
            r#""method":"ab/c","#,
            r#""method":"","#,
            r#""result":{"k":[1,2.50,"é"]},"#,
            r#""result":null,"#,
            r#""error":{"code":-32601,"message":"no"},"#,
            r#""result":1,"error":{"code":1,"message":"m"},"#,
            "",
        ];
        let params = [
            "",
            r#""params":null,"#,
            r#""params":{"sessionId":"s
1","x":{"sessionId":"deep"}},"#,
            r#""params":{"sessionId":5},"#,
            r#""params":[1, true ,null],"#,
        ];
        for version in versions {
            for id in ids {
                for head in heads {
                    for param in params {
                        let body = format!("{version}{id}{head}{param}");
                        let line = format!("{{{}}}", body.trim_end_matches(','));
                        for side in [Side::Client, Side::Agent] {
                            fast_and_value_paths_agree(side, line.as_bytes());
                        }
                    }
                }
            }
        }
    }

    /// Any bytes at all make exactly one event line, JSON that says the same as the value path.
    #[test]
    fn any_line_makes_one_event_equal_to_the_value_path() {
        fn property(bytes: Vec<u8>, message: bool) -> bool {
            let mut line = if message {
                br#"{"jsonrpc":"2.0","id":1,"method":"m","params":"#.to_vec()
            } else {
                Vec::new()
            };
            line.extend(bytes.into_iter().filter(|&b| b != b'\n'));
            fast_and_value_paths_agree(Side::Agent, &line);
            true
        }
        quickcheck::QuickCheck::new()
            .tests(2000)
            .quickcheck(property as fn(Vec<u8>, bool) -> bool);
    }

    #[test]
    fn responses_notifications_and_garbage_have_their_own_events() {
        let ok = event(
            Side::Agent,
            r#"{"jsonrpc":"2.0","id":"a","result":{"x":1}}"#,
        );
        assert_eq!(ok["type"], "response");
        assert_eq!(ok["is_error"], false);
        assert_eq!(ok["payload"], json!({"x":1}));
        assert_eq!(ok["from"], "Agent");
        let err = event(
            Side::Agent,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}"#,
        );
        assert_eq!(err["is_error"], true);
        let note = event(Side::Client, r#"{"jsonrpc":"2.0","method":"x/y"}"#);
        assert_eq!(note["type"], "notification");
        assert_eq!(note["params"], Value::Null);
        assert!(note.get("session").is_none());
        let bad = event(Side::Client, "not json");
        assert_eq!(
            bad,
            json!({"type":"invalid","ts":0.5,"from":"Client","to":"Agent","raw":"not json"})
        );
    }

    #[test]
    fn events_read_back_as_the_messages_they_record() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#,
            "garbage",
        ];
        let sides = [Side::Client, Side::Agent, Side::Client, Side::Agent];
        let mut file = Vec::new();
        for (line, side) in lines.iter().zip(sides) {
            write_event(side, 1.0, line.as_bytes(), &mut file);
        }
        write_dropped(2.0, 7, false, &mut file);
        let trace = read(&file);
        assert_eq!(trace.dropped, [(5, 7)]);
        assert_eq!(trace.entries.len(), 4);
        for ((entry, line), side) in trace.entries.iter().zip(lines).zip(sides) {
            assert_eq!(entry.from, side);
            assert_eq!(entry.ts, Some(1.0));
            let want: Option<Value> = serde_json::from_str(line).ok();
            let got: Option<Value> = serde_json::from_slice(&entry.text).ok();
            assert_eq!(got, want, "line {}", entry.line);
        }
        assert_eq!(trace.entries[3].text, b"garbage");
    }

    #[test]
    fn raw_lines_keep_their_bytes_and_plain_prefixed_captures_read_too() {
        let mut file = Vec::new();
        write_raw(Side::Client, 0.25, b"{\"a\":1}", &mut file);
        write_raw(Side::Agent, 1.5, b"12 \xff odd", &mut file);
        file.extend_from_slice(b"> {\"b\":2}\n<{\"c\":3}\n\n");
        let trace = read(&file);
        let got: Vec<_> = trace
            .entries
            .iter()
            .map(|e| (e.line, e.from, e.ts, e.text.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (1, Side::Client, Some(0.25), b"{\"a\":1}".to_vec()),
                (2, Side::Agent, Some(1.5), b"12 \xff odd".to_vec()),
                (3, Side::Client, None, b"{\"b\":2}".to_vec()),
                (4, Side::Agent, None, b"{\"c\":3}".to_vec()),
            ]
        );
    }

    #[test]
    fn conductor_chains_keep_the_client_leg() {
        let file = br#"{"type":"request","ts":0,"protocol":"acp","from":"Client","to":"Proxy(0)","id":1,"method":"initialize","params":{}}
{"type":"request","ts":0,"protocol":"acp","from":"Proxy(0)","to":"Agent","id":1,"method":"initialize","params":{}}
{"type":"response","ts":0,"from":"Proxy(0)","to":"Client","id":1,"is_error":false,"payload":{}}
"#;
        let trace = read(file);
        let sides: Vec<_> = trace.entries.iter().map(|e| (e.line, e.from)).collect();
        assert_eq!(sides, [(1, Side::Client), (3, Side::Agent)]);
    }
}
