//! A small reference model of the wire layer (R-FRAME-*, R-ENV-*, R-ID-*, R-RPC-4 of
//! docs/protocol.md), written the plain way with serde_json, and a replay of every `vectors/wire/`
//! file against it.
//!
//! It checks the vectors, not acp-core: a vector that contradicts the rules as this model reads
//! them (a wrong byte offset, a line that is not really invalid JSON, a 65-byte line that is
//! really 64) fails here before anyone runs it against the real layer. A runner for the real
//! layer is the same: implement [`Harness`] for it and call [`replay`].

use serde_json::value::RawValue;

use super::{Event, Harness, ResponseOutcome, Step, Vector, load_dir, replay, vectors_dir};

/// The default line limit when a vector sets none (R-FRAME-5: 16 MiB under `alloc`).
const DEFAULT_MAX_LINE: usize = 16 << 20;

/// The members of an object in order, duplicates kept, names unescaped, values raw.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;

        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Members<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }

        deserializer.deserialize_map(Visit)
    }
}

/// The wire layer, modelled: bytes in, output lines and events out.
struct Model {
    max_line: usize,
    line: Vec<u8>,
    oversized: bool,
    outputs: Vec<String>,
    events: Vec<Event>,
}

fn error_line(id: &str, code: i32, message: &str) -> String {
    let message = serde_json::to_string(message).expect("strings serialize");
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#)
}

impl Model {
    fn new(max_line: usize) -> Self {
        Self {
            max_line,
            line: Vec::new(),
            oversized: false,
            outputs: Vec::new(),
            events: Vec::new(),
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if byte == b'\n' {
                self.end_line();
            } else if !self.oversized {
                self.line.push(byte);
                if self.line.len() > self.max_line {
                    // Discard now, answer when the line ends: memory stays bounded.
                    self.oversized = true;
                    self.line.clear();
                }
            }
        }
    }

    fn eof(&mut self) {
        if self.oversized || !self.line.is_empty() {
            self.end_line();
        }
    }

    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.oversized) {
            let message = format!(
                "Parse error: line exceeds the maximum length of {} bytes",
                self.max_line
            );
            self.outputs.push(error_line("null", -32700, &message));
        } else {
            self.line_complete(&line);
        }
    }

    fn line_complete(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|byte| b" \t\r\n".contains(byte)) {
            return;
        }
        let text = match std::str::from_utf8(line) {
            Ok(text) => text,
            Err(error) => {
                let message = format!("Parse error: invalid UTF-8 at byte {}", error.valid_up_to());
                self.outputs.push(error_line("null", -32700, &message));
                return;
            }
        };
        let value: serde_json::Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(error) => {
                let message = format!("Parse error: {error}");
                self.outputs.push(error_line("null", -32700, &message));
                return;
            }
        };
        if !value.is_object() {
            let message = "Invalid Request: expected JSON object";
            self.outputs.push(error_line("null", -32600, message));
            return;
        }
        let Members(members) = serde_json::from_str(text).expect("a valid object has members");
        let member = |name: &str| {
            members
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| *value)
        };

        // The id, as written, when it is of a valid kind.
        let id = match member("id").map(RawValue::get) {
            None | Some("null") => None,
            Some(raw) if raw.starts_with('"') => Some(raw),
            Some(raw) if !raw.contains(['.', 'e', 'E']) && value["id"].is_number() => Some(raw),
            Some(_) => {
                let message = "Invalid Request: id must be an integer, a string or null";
                self.outputs.push(error_line("null", -32600, message));
                return;
            }
        };
        let envelope = ["jsonrpc", "id", "method", "params", "result", "error"];
        let duplicate = members.iter().enumerate().find(|(index, (key, _))| {
            envelope.contains(&key.as_str())
                && members[..*index].iter().any(|(seen, _)| seen == key)
        });
        if let Some((_, (key, _))) = duplicate {
            let echo = if key == "id" {
                "null"
            } else {
                id.unwrap_or("null")
            };
            let message = format!("Invalid Request: duplicate member \"{key}\"");
            self.outputs.push(error_line(echo, -32600, &message));
            return;
        }
        let echo = id.unwrap_or("null");
        if value["jsonrpc"] != "2.0" {
            let message = "Invalid Request: jsonrpc must be '2.0'";
            self.outputs.push(error_line(echo, -32600, message));
            return;
        }
        if member("method").is_some() {
            let Some(method) = value["method"].as_str().filter(|m| !m.is_empty()) else {
                let message = "Invalid Request: missing method";
                self.outputs.push(error_line(echo, -32600, message));
                return;
            };
            let method = method.to_owned();
            self.events.push(match id {
                Some(id) => Event::Request {
                    id: id.to_owned(),
                    method,
                },
                None => Event::Notification { method },
            });
            return;
        }
        let result = member("result").is_some();
        let error = member("error").is_some();
        if result || error {
            let outcome = if result && error {
                ResponseOutcome::Malformed
            } else if result {
                ResponseOutcome::Result
            } else {
                let error = &value["error"];
                let code_ok = error["code"]
                    .as_i64()
                    .is_some_and(|code| i32::try_from(code).is_ok());
                let well_formed = code_ok && error["message"].is_string();
                if well_formed {
                    ResponseOutcome::Error
                } else {
                    ResponseOutcome::Malformed
                }
            };
            self.events.push(Event::Response {
                id: echo.to_owned(),
                outcome,
            });
            return;
        }
        let message = "Invalid Request: missing method";
        self.outputs.push(error_line(echo, -32600, message));
    }
}

impl Harness for Model {
    fn feed(&mut self, bytes: &[u8]) {
        Model::feed(self, bytes);
    }

    /// R-MSG-1, written out plainly: a newline outside a string is a space, one inside a
    /// string another control character (still not JSON), and the frame's end ends the line.
    fn message(&mut self, message: &[u8]) -> Result<(), String> {
        let mut line = Vec::with_capacity(message.len() + 1);
        let (mut in_string, mut escaped) = (false, false);
        for &byte in message {
            if byte == b'\n' || byte == b'\r' {
                line.push(if in_string { 0x1F } else { b' ' });
                escaped = false;
                continue;
            }
            if in_string {
                if escaped {
                    escaped = false;
                } else if byte == b'\\' {
                    escaped = true;
                } else if byte == b'"' {
                    in_string = false;
                }
            } else if byte == b'"' {
                in_string = true;
            }
            line.push(byte);
        }
        line.push(b'\n');
        Model::feed(self, &line);
        Ok(())
    }

    fn eof(&mut self) {
        Model::eof(self);
    }

    fn advance_to(&mut self, _now_ms: u64) {
        // The wire layer has no timers.
    }

    fn take_outputs(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.outputs)
            .into_iter()
            .map(String::into_bytes)
            .collect()
    }

    fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }
}

/// Replays one vector against a fresh model.
fn replay_model(vector: &Vector, chunk: usize) -> Result<(), String> {
    let mut model = Model::new(vector.config.max_line.unwrap_or(DEFAULT_MAX_LINE));
    replay(vector, &mut model, chunk)
}

#[test]
fn wire_vectors_agree_with_the_reference_model() {
    let vectors = load_dir(&vectors_dir().join("wire")).unwrap_or_else(|error| panic!("{error}"));
    for vector in &vectors {
        // Whole steps, and awkward chunkings: the result may not depend on how bytes arrive.
        // The 20 MiB vectors are fed in 64 KiB pieces only, as a reader would.
        let big = vector
            .steps
            .iter()
            .any(|step| matches!(step, Step::In(input) if input.len() > 1 << 20));
        let chunkings: &[usize] = if big { &[1 << 16] } else { &[usize::MAX, 7, 1] };
        for &chunk in chunkings {
            if let Err(failure) = replay_model(vector, chunk) {
                panic!("(chunk {chunk}) {failure}");
            }
        }
    }
}

#[test]
fn the_model_catches_a_wrong_vector() {
    // A vector that expects the wrong UTF-8 offset must fail the replay.
    let vector = super::parse(
        "bad.jsonl",
        concat!(
            r#"{"in_hex":"61 ff 0a"}"#,
            "\n",
            r#"{"out":{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: invalid UTF-8 at byte 0"}}}"#,
        ),
    )
    .expect("well-formed vector");
    let failure = replay_model(&vector, 1).expect_err("the vector is wrong");
    assert_eq!(
        failure,
        "bad.jsonl:1: expected {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: invalid UTF-8 at byte 0\"}}\n    \
         got      {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: invalid UTF-8 at byte 1\"}}"
    );
}

#[test]
fn replay_reports_missing_extra_and_wrong_items() {
    let run = |text: &str| replay_model(&super::parse("t.jsonl", text).expect("valid"), 3);
    // An output nobody expected.
    assert_eq!(
        run("{\"in\":\"42\\n\"}"),
        Err("t.jsonl:1: expected 0 output line(s), got 1:\n    \
             {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: expected JSON object\"}}"
            .to_owned())
    );
    // An event that did not come.
    assert_eq!(
        run("{\"in\":\"\\n\"}\n{\"event\":{\"kind\":\"notification\",\"method\":\"n\"}}"),
        Err("t.jsonl:1: expected events [Notification { method: \"n\" }], got []".to_owned())
    );
    // The wrong id: raw text differs ("1" vs 1).
    assert!(
        run(concat!(
            r#"{"in":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n"}"#,
            "\n",
            r#"{"event":{"kind":"request","id":"1","method":"m"}}"#
        ))
        .is_err_and(|failure| failure.starts_with("t.jsonl:1: expected events"))
    );
    // Expectations are checked against the action before them, not later ones.
    assert!(
        run(concat!(
            r#"{"event":{"kind":"notification","method":"n"}}"#,
            "\n",
            r#"{"in":"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n"}"#,
        ))
        .is_err_and(|failure| failure == "t.jsonl: expectations before any action")
    );
}
