//! The transcript ("vector") format of `vectors/`: parsing, and the checks a runner needs.
//!
//! A vector file is one scenario: NDJSON, one step per line, each step a JSON object with
//! exactly one key naming its kind. `vectors/README.md` is the full description; in short:
//!
//! | line | step |
//! |---|---|
//! | `{"config":{"max_line":N}}` | options for the layer under test (first line only) |
//! | `{"in":"text"}` | feed these bytes (the string's UTF-8) |
//! | `{"in_hex":"c3 28 0a"}` | feed arbitrary bytes |
//! | `{"in_repeat":{"text":"x","count":N,"then":"\n"}}` | feed `text` N times, then `then` |
//! | `{"message":"text"}` | one whole message of a message transport (the string's UTF-8) |
//! | `{"eof":true}` | the input ends |
//! | `{"at":1000}` | the clock moves to 1000 ms (absolute) |
//! | `{"out":<json>}` | one expected output line, byte for byte the raw text of `<json>` |
//! | `{"out_error":{"id":null,"code":-32700,"message_prefix":"Parse error: "}}` | an expected error line whose message starts with a prefix |
//! | `{"event":{"kind":"request","id":1,"method":"m"}}` | an expected event |
//! | `{"app":{"do":"end_turn","session":"s1","stop":"end_turn"}}` | a scripted application command (agent and client layers) |
//! | `{"event":{"kind":"app","name":"prompt","id":2,"session":"s1"}}` | an expected application event, compared as compact text |
//! | `{"comment":"…"}` | nothing; for the reader |
//!
//! [`parse`] turns a file into a [`Vector`]; every error names the file and the line.
//! [`replay`] drives any layer that implements [`Harness`] through a vector and checks it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::value::RawValue;

/// One parsed vector file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    /// The file name the vector was parsed from (for messages), e.g. `wire/crlf.jsonl`.
    pub name: String,
    /// Options from the `config` line; defaults when there is none.
    pub config: Config,
    /// The steps in file order, `config` excluded, comments included.
    pub steps: Vec<Step>,
    /// The 1-based line number of each step in `steps` (same length).
    pub lines: Vec<usize>,
}

/// Options a vector sets for the layer under test.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// The framer's maximum line length in bytes (newline excluded); `None` keeps the
    /// layer's default.
    pub max_line: Option<usize>,
    /// Feature switches for a connection layer (`{"features":{"mcp_http":false}}`), applied
    /// over the runner's defaults; empty for the wire layer.
    pub features: BTreeMap<String, bool>,
    /// Client-connection options (`vectors/client/`): see [`client`].
    pub client: Option<serde_json::Value>,
    /// The agent's dialect (`"acp"` or `"agentao"`); `None` keeps the runner's default
    /// (Agentao's).
    pub dialect: Option<String>,
}

/// One step of a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Bytes to feed (`in`, `in_hex`, `in_repeat`).
    In(Input),
    /// One whole message of a message transport (`message`: a WebSocket text frame, an SSE
    /// event's data): fed at once, never chunked, no newline framing.
    Message(Vec<u8>),
    /// The input ends.
    Eof,
    /// The clock moves to this many milliseconds (absolute, never backwards).
    At(u64),
    /// One expected output line: its exact bytes (newline excluded), the raw text of the
    /// `out` value as written in the file.
    Out(String),
    /// One expected error line matched by a prefix of its message.
    OutError(OutErrorPattern),
    /// One expected event.
    Event(Event),
    /// A scripted application command: the raw compact JSON object of the `app` step, which
    /// the runner maps to the layer's commands. An action, like `in`.
    App(String),
    /// A note for the reader; runners skip it.
    Comment(String),
    /// A command of the application to a client connection (`vectors/client/`): an action,
    /// see [`client`].
    Client(serde_json::Value),
}

/// Bytes a step feeds.
#[derive(Clone, PartialEq, Eq)]
pub enum Input {
    /// These bytes (`in`, `in_hex`).
    Bytes(Vec<u8>),
    /// `unit` repeated `count` times, then `then` (`in_repeat`). Kept unexpanded, so a 20 MiB
    /// line costs nothing until a runner feeds it.
    Repeat {
        /// The repeated bytes.
        unit: Vec<u8>,
        /// How many times.
        count: usize,
        /// Bytes after the repetitions (often `\n`), fed in the same step.
        then: Vec<u8>,
    },
}

impl Input {
    /// The number of bytes this input feeds.
    pub fn len(&self) -> usize {
        match self {
            Input::Bytes(bytes) => bytes.len(),
            Input::Repeat { unit, count, then } => unit.len() * count + then.len(),
        }
    }

    /// Whether it feeds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Hands the bytes to `feed` in pieces of at most `chunk` bytes (at least 1), in order.
    /// This is how a runner feeds big inputs without building them whole.
    pub fn feed_in_chunks(&self, chunk: usize, mut feed: impl FnMut(&[u8])) {
        let chunk = chunk.max(1);
        match self {
            Input::Bytes(bytes) => bytes.chunks(chunk).for_each(feed),
            Input::Repeat { unit, count, then } => {
                let mut buffer = Vec::with_capacity(chunk.min(self.len()));
                let units = std::iter::repeat_n(unit.as_slice(), *count);
                for piece in units.chain(std::iter::once(then.as_slice())) {
                    let mut piece = piece;
                    while !piece.is_empty() {
                        let take = piece.len().min(chunk - buffer.len());
                        buffer.extend_from_slice(&piece[..take]);
                        piece = &piece[take..];
                        if buffer.len() == chunk {
                            feed(&buffer);
                            buffer.clear();
                        }
                    }
                }
                if !buffer.is_empty() {
                    feed(&buffer);
                }
            }
        }
    }

    /// All the bytes at once.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.len());
        self.feed_in_chunks(1 << 16, |piece| bytes.extend_from_slice(piece));
        bytes
    }
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Bytes(bytes) => write!(f, "Bytes({:?})", String::from_utf8_lossy(bytes)),
            Input::Repeat { unit, count, then } => write!(
                f,
                "Repeat({:?} x {count}, then {:?})",
                String::from_utf8_lossy(unit),
                String::from_utf8_lossy(then)
            ),
        }
    }
}

/// An expected error line: `{"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":…}}`
/// whose message starts with `message_prefix`. Used where the exact text is the
/// implementation's (the detail of a JSON parse error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutErrorPattern {
    /// The raw JSON text of the expected id (`null`, `1`, `"x"`).
    pub id: String,
    /// The expected error code.
    pub code: i64,
    /// What the message must start with.
    pub message_prefix: String,
}

impl OutErrorPattern {
    /// Checks one output line (newline excluded) against the pattern. The line must be
    /// written compactly, in the encoder's key order, up to and including the message prefix;
    /// after the message only a `data` member may follow.
    pub fn check(&self, line: &[u8]) -> Result<(), String> {
        let quoted_prefix = serde_json::to_string(&self.message_prefix)
            .map_err(|error| format!("cannot quote the prefix: {error}"))?;
        let expected_start = format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":{},"message":{}"#,
            self.id,
            self.code,
            &quoted_prefix[..quoted_prefix.len() - 1]
        );
        let text = String::from_utf8_lossy(line);
        if !line.starts_with(expected_start.as_bytes()) {
            return Err(format!(
                "expected a line starting with {expected_start}, got {text}"
            ));
        }
        let value: serde_json::Value = serde_json::from_slice(line)
            .map_err(|error| format!("output is not valid JSON ({error}): {text}"))?;
        let top_keys = value.as_object().map_or(0, |object| object.len());
        let error = value.get("error").and_then(|error| error.as_object());
        let error_keys_ok = error.is_some_and(|error| {
            error
                .get("message")
                .is_some_and(|message| message.is_string())
                && error
                    .keys()
                    .all(|key| ["code", "message", "data"].contains(&key.as_str()))
        });
        if top_keys != 3 || !error_keys_ok {
            return Err(format!("unexpected members in the error line: {text}"));
        }
        Ok(())
    }
}

/// An event the layer under test reports to the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A request arrived.
    Request {
        /// The raw JSON text of the id, exactly as written in the vector (ids are echoed
        /// exactly, so `1`, `"\u0041"` and `"A"` are three different ids).
        id: String,
        /// The method, unescaped.
        method: String,
    },
    /// A notification arrived (including a request with `id: null`).
    Notification {
        /// The method, unescaped.
        method: String,
    },
    /// An event of a client connection (`vectors/client/`), compared as a JSON value; see
    /// [`client`].
    Client(serde_json::Value),
    /// A response arrived.
    Response {
        /// The raw JSON text of the id.
        id: String,
        /// What kind of response it was.
        outcome: ResponseOutcome,
    },
    /// An application event of a connection layer (`"kind":"app"`): the whole event object
    /// as compact JSON text, compared byte for byte with the runner's rendering.
    App(String),
}

/// How a received response settles its request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseOutcome {
    /// `result` (any JSON value, `null` included).
    Result,
    /// A well-formed `error` object: integer `code`, string `message`.
    Error,
    /// An `error` that is not a well-formed error object; it still settles the request.
    Malformed,
}

/// What a runner compares after one input step (or `eof`, or `at`): the steps that follow it
/// up to the next input step, split by queue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expectations<'v> {
    /// Expected output lines in order (`Step::Out` or `Step::OutError`).
    pub outputs: Vec<&'v Step>,
    /// Expected events in order.
    pub events: Vec<&'v Event>,
}

impl Vector {
    /// The steps with their line numbers.
    pub fn numbered(&self) -> impl Iterator<Item = (usize, &Step)> {
        self.lines.iter().copied().zip(&self.steps)
    }

    /// `name:line` of the step at `index`, for failure messages.
    pub fn location(&self, index: usize) -> String {
        format!(
            "{}:{}",
            self.name,
            self.lines.get(index).copied().unwrap_or(0)
        )
    }

    /// The vector's header: its first comment, which names the rules the scenario holds.
    pub fn header(&self) -> &str {
        self.steps
            .iter()
            .find_map(|step| match step {
                Step::Comment(text) => Some(text.as_str()),
                _ => None,
            })
            .unwrap_or("")
    }

    /// The `docs/protocol.md` rule ids the header cites (`R-CANCEL-3`), in order.
    pub fn rules(&self) -> Vec<&str> {
        crate::rules::cited(self.header())
    }

    /// The expectations that follow the action step at `index` (an `In`, `Eof` or `At`), up
    /// to the next action step. Expectations before the first action are returned for
    /// `index == usize::MAX` (a runner checks them right after construction; usually empty).
    pub fn expectations(&self, index: usize) -> Expectations<'_> {
        let start = index.wrapping_add(1);
        let mut expected = Expectations::default();
        for step in self.steps.iter().skip(start) {
            match step {
                Step::In(_)
                | Step::Message(_)
                | Step::Eof
                | Step::At(_)
                | Step::App(_)
                | Step::Client(_) => break,
                Step::Out(_) | Step::OutError(_) => expected.outputs.push(step),
                Step::Event(event) => expected.events.push(event),
                Step::Comment(_) => {}
            }
        }
        expected
    }
}

/// A protocol layer a vector can drive. Implement it for the layer under test (built with the
/// vector's [`Config`]) and [`replay`] does the rest.
pub trait Harness {
    /// Feeds bytes from the peer.
    fn feed(&mut self, bytes: &[u8]);
    /// Signals the end of the peer's input.
    fn eof(&mut self);
    /// Moves the clock to `now_ms` and runs the layer's timeout handling.
    fn advance_to(&mut self, now_ms: u64);
    /// The output lines produced since the last call, in order, without their newline.
    fn take_outputs(&mut self) -> Vec<Vec<u8>>;
    /// The events produced since the last call, in order.
    fn take_events(&mut self) -> Vec<Event>;
    /// Runs a scripted application command (the raw JSON of an `app` step). Layers without
    /// commands refuse it.
    fn app(&mut self, command: &str) -> Result<(), String> {
        Err(format!(
            "this layer takes no application commands: {command}"
        ))
    }
    /// Takes one whole message of a message transport (`message` steps). Layers without one
    /// keep this default, which fails the vector.
    fn message(&mut self, message: &[u8]) -> Result<(), String> {
        Err(format!(
            "this layer has no message transport: {}",
            String::from_utf8_lossy(message)
        ))
    }
    /// Runs one application command on a client connection (`{"client":…}` steps). Layers
    /// that take no commands keep this default, which fails the vector.
    fn client(&mut self, command: &serde_json::Value) -> Result<(), String> {
        Err(format!("this layer takes no client commands: {command}"))
    }
}

/// Replays `vector` against `harness`, feeding every input in pieces of at most `chunk`
/// bytes, and checks every expectation (see `vectors/README.md`, "Replaying a vector").
/// The error names the rules the vector holds (from its header), then the file and line of
/// the action whose expectations were not met: `[R-CANCEL-4] agent/x.jsonl:12: …`.
pub fn replay<H: Harness + ?Sized>(
    vector: &Vector,
    harness: &mut H,
    chunk: usize,
) -> Result<(), String> {
    replay_steps(vector, harness, chunk).map_err(|failure| {
        let rules = vector.rules();
        if rules.is_empty() {
            failure
        } else {
            format!("[{}] {failure}", rules.join(", "))
        }
    })
}

fn replay_steps<H: Harness + ?Sized>(
    vector: &Vector,
    harness: &mut H,
    chunk: usize,
) -> Result<(), String> {
    let before = vector.expectations(usize::MAX);
    if !before.outputs.is_empty() || !before.events.is_empty() {
        return Err(format!("{}: expectations before any action", vector.name));
    }
    for (index, step) in vector.steps.iter().enumerate() {
        match step {
            Step::In(input) => input.feed_in_chunks(chunk, |piece| harness.feed(piece)),
            Step::Message(message) => harness
                .message(message)
                .map_err(|error| format!("{}: {error}", vector.location(index)))?,
            Step::Eof => harness.eof(),
            Step::At(now) => harness.advance_to(*now),
            Step::App(command) => harness
                .app(command)
                .map_err(|error| format!("{}: {error}", vector.location(index)))?,
            Step::Client(command) => harness
                .client(command)
                .map_err(|error| format!("{}: {error}", vector.location(index)))?,
            Step::Out(_) | Step::OutError(_) | Step::Event(_) | Step::Comment(_) => continue,
        }
        let expected = vector.expectations(index);
        let at = vector.location(index);
        let outputs = harness.take_outputs();
        let shown = |lines: &[Vec<u8>]| -> String {
            lines
                .iter()
                .map(|line| format!("\n    {}", String::from_utf8_lossy(line)))
                .collect()
        };
        if outputs.len() != expected.outputs.len() {
            return Err(format!(
                "{at}: expected {} output line(s), got {}:{}",
                expected.outputs.len(),
                outputs.len(),
                shown(&outputs)
            ));
        }
        for (actual, expected) in outputs.iter().zip(&expected.outputs) {
            let verdict = match expected {
                Step::Out(line) if actual == line.as_bytes() => Ok(()),
                Step::Out(line) => Err(format!(
                    "expected {line}\n    got      {}",
                    String::from_utf8_lossy(actual)
                )),
                Step::OutError(pattern) => pattern.check(actual),
                other => Err(format!("not an output expectation: {other:?}")),
            };
            verdict.map_err(|mismatch| format!("{at}: {mismatch}"))?;
        }
        let events = harness.take_events();
        if events.len() != expected.events.len()
            || events.iter().zip(&expected.events).any(|(a, e)| a != *e)
        {
            return Err(format!(
                "{at}: expected events {:?}, got {events:?}",
                expected.events
            ));
        }
    }
    Ok(())
}

/// Why a vector file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VectorError {
    /// The file.
    pub file: String,
    /// The 1-based line (0 when the whole file is at fault).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for VectorError {}

/// The `vectors/` directory of this repository.
pub fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

/// Reads and parses one vector file; the vector's name is the path relative to
/// [`vectors_dir`] when it lies inside it.
pub fn load(path: &Path) -> Result<Vector, VectorError> {
    let base = vectors_dir();
    let name = path
        .strip_prefix(&base)
        .unwrap_or(path)
        .display()
        .to_string();
    let text = std::fs::read_to_string(path).map_err(|error| VectorError {
        file: name.clone(),
        line: 0,
        message: format!("cannot read the file: {error}"),
    })?;
    parse(&name, &text)
}

/// Parses every `*.jsonl` file of a directory (not recursive), in file-name order.
pub fn load_dir(dir: &Path) -> Result<Vec<Vector>, VectorError> {
    let entries = std::fs::read_dir(dir).map_err(|error| VectorError {
        file: dir.display().to_string(),
        line: 0,
        message: format!("cannot list the directory: {error}"),
    })?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|error| VectorError {
                file: dir.display().to_string(),
                line: 0,
                message: format!("cannot list the directory: {error}"),
            })?
            .path();
        if path.extension().is_some_and(|ext| ext == "jsonl") {
            paths.push(path);
        }
    }
    paths.sort();
    paths.iter().map(|path| load(path)).collect()
}

/// Parses the text of one vector file. `name` only labels error messages.
///
/// Blank lines are skipped. Every other line must be one compact JSON object with exactly one
/// key, a known step kind with a well-formed value; `config` may only be the first step.
pub fn parse(name: &str, text: &str) -> Result<Vector, VectorError> {
    let mut vector = Vector {
        name: name.to_owned(),
        config: Config::default(),
        steps: Vec::new(),
        lines: Vec::new(),
    };
    let mut last_at = None;
    for (index, line) in text.split('\n').enumerate() {
        let number = index + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let fail = |message: String| VectorError {
            file: name.to_owned(),
            line: number,
            message,
        };
        let (kind, value) = split_step(line).map_err(fail)?;
        let step = match kind.as_str() {
            "config" => {
                if !vector.steps.is_empty() || vector.config != Config::default() {
                    return Err(fail("`config` must be the first step".to_owned()));
                }
                vector.config = parse_config(value).map_err(fail)?;
                continue;
            }
            _ => parse_step(&kind, value).map_err(fail)?,
        };
        if let Step::At(now) = step {
            if last_at.is_some_and(|last| now < last) {
                return Err(fail(format!(
                    "`at` goes back in time: {now} after {}",
                    last_at.unwrap_or(0)
                )));
            }
            last_at = Some(now);
        }
        vector.steps.push(step);
        vector.lines.push(number);
    }
    if vector.steps.is_empty() {
        return Err(VectorError {
            file: name.to_owned(),
            line: 0,
            message: "the vector has no steps".to_owned(),
        });
    }
    Ok(vector)
}

/// Splits `{"kind":value}` into the kind and the raw value.
fn split_step(line: &str) -> Result<(String, &RawValue), String> {
    let object: BTreeMap<String, &RawValue> = serde_json::from_str(line)
        .map_err(|error| format!("not a JSON object with raw members: {error}"))?;
    let mut members = object.into_iter();
    match (members.next(), members.next()) {
        (Some((kind, value)), None) => Ok((kind, value)),
        (None, _) => Err("a step needs exactly one key, found none".to_owned()),
        (Some((first, _)), Some((second, _))) => Err(format!(
            "a step needs exactly one key, found `{first}` and `{second}`"
        )),
    }
}

fn parse_step(kind: &str, value: &RawValue) -> Result<Step, String> {
    Ok(match kind {
        "in" => Step::In(Input::Bytes(string(kind, value)?.into_bytes())),
        "in_hex" => Step::In(Input::Bytes(hex(&string(kind, value)?)?)),
        "in_repeat" => {
            #[derive(serde::Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Repeat {
                text: String,
                count: usize,
                #[serde(default)]
                then: String,
            }
            let repeat: Repeat = serde_json::from_str(value.get()).map_err(|error| {
                format!("`in_repeat` must be {{\"text\":…,\"count\":…[,\"then\":…]}}: {error}")
            })?;
            if repeat.text.is_empty() {
                return Err("`in_repeat.text` must not be empty".to_owned());
            }
            Step::In(Input::Repeat {
                unit: repeat.text.into_bytes(),
                count: repeat.count,
                then: repeat.then.into_bytes(),
            })
        }
        "message" => Step::Message(string(kind, value)?.into_bytes()),
        "eof" => match value.get() {
            "true" => Step::Eof,
            other => return Err(format!("`eof` must be true, got {other}")),
        },
        "at" => Step::At(value.get().parse().map_err(|_| {
            format!(
                "`at` must be milliseconds as an integer, got {}",
                value.get()
            )
        })?),
        "out" => {
            check_compact(value.get()).map_err(|error| format!("`out` {error}"))?;
            Step::Out(value.get().to_owned())
        }
        "out_error" => Step::OutError(parse_out_error(value)?),
        "event" => Step::Event(parse_event(value)?),
        "comment" => Step::Comment(string(kind, value)?),
        "app" => {
            check_compact(value.get()).map_err(|error| format!("`app` {error}"))?;
            if !value.get().starts_with('{') {
                return Err(format!("`app` must be an object, got {}", value.get()));
            }
            Step::App(value.get().to_owned())
        }
        "client" => Step::Client(client::parse_command(value)?),
        "client_event" => Step::Event(Event::Client(client::parse_event(value)?)),
        other => {
            return Err(format!(
                "unknown step `{other}` (known: in, in_hex, in_repeat, message, eof, at, app, \
                 out, out_error, event, comment, client, client_event; config on the first line)"
            ));
        }
    })
}

fn string(kind: &str, value: &RawValue) -> Result<String, String> {
    serde_json::from_str(value.get())
        .map_err(|_| format!("`{kind}` must be a JSON string, got {}", value.get()))
}

/// Bytes from hex pairs; spaces between them are allowed.
fn hex(text: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = text.bytes().filter(|byte| *byte != b' ').collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!(
            "`in_hex` has an odd number of hex digits: {text:?}"
        ));
    }
    digits
        .chunks(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair).unwrap_or("??");
            u8::from_str_radix(pair, 16)
                .map_err(|_| format!("`in_hex` has a bad hex pair {pair:?} in {text:?}"))
        })
        .collect()
}

/// Output is compared byte for byte with the raw text, so it must be written compactly: no
/// whitespace outside strings. (Valid JSON is already checked by the step split.)
fn check_compact(json: &str) -> Result<(), String> {
    let mut in_string = false;
    let mut escaped = false;
    for (offset, byte) in json.bytes().enumerate() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if byte == b'"' {
            in_string = true;
        } else if byte.is_ascii_whitespace() {
            return Err(format!(
                "must be compact JSON (output is compared byte for byte), but has whitespace at \
                 byte {offset} of {json}"
            ));
        }
    }
    Ok(())
}

fn parse_config(value: &RawValue) -> Result<Config, String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw {
        max_line: Option<usize>,
        #[serde(default)]
        features: BTreeMap<String, bool>,
        client: Option<serde_json::Value>,
        dialect: Option<String>,
    }
    let raw: Raw = serde_json::from_str(value.get()).map_err(|error| {
        format!("bad `config` (known options: max_line, features, client, dialect): {error}")
    })?;
    if let Some(options) = &raw.client {
        client::check_config(options)?;
    }
    if let Some(dialect) = raw.dialect.as_deref()
        && !matches!(dialect, "acp" | "agentao")
    {
        return Err(format!(
            "bad `config`: dialect must be \"acp\" or \"agentao\", not {dialect:?}"
        ));
    }
    Ok(Config {
        max_line: raw.max_line,
        features: raw.features,
        client: raw.client,
        dialect: raw.dialect,
    })
}

fn parse_out_error(value: &RawValue) -> Result<OutErrorPattern, String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw<'a> {
        #[serde(borrow)]
        id: &'a RawValue,
        code: i64,
        message_prefix: String,
    }
    let raw: Raw<'_> = serde_json::from_str(value.get()).map_err(|error| {
        format!("`out_error` must be {{\"id\":…,\"code\":…,\"message_prefix\":…}}: {error}")
    })?;
    check_id(raw.id.get())?;
    Ok(OutErrorPattern {
        id: raw.id.get().to_owned(),
        code: raw.code,
        message_prefix: raw.message_prefix,
    })
}

/// An id in a vector is written as it must appear on the wire: compact, and of a valid kind.
fn check_id(id: &str) -> Result<(), String> {
    let first = id.as_bytes().first().copied();
    let valid_kind = matches!(first, Some(b'"' | b'-' | b'0'..=b'9')) || id == "null";
    if !valid_kind || id.contains(['.', 'e', 'E']) && !id.starts_with('"') {
        return Err(format!(
            "an id must be an integer, a string or null, got {id}"
        ));
    }
    check_compact(id).map_err(|error| format!("the id {error}"))
}

fn parse_event(value: &RawValue) -> Result<Event, String> {
    // Members are read raw: `"id": null` must stay `null`, which `Option` would swallow.
    let members: BTreeMap<String, &RawValue> = serde_json::from_str(value.get())
        .map_err(|error| format!("`event` must be an object ({error}): {}", value.get()))?;
    let text = |field: &str| -> Result<Option<String>, String> {
        members
            .get(field)
            .map(|raw| {
                serde_json::from_str(raw.get()).map_err(|_| {
                    format!("the event's `{field}` must be a string, got {}", raw.get())
                })
            })
            .transpose()
    };
    let kind = text("kind")?.ok_or("an event needs a `kind`")?;
    if kind == "app" {
        check_compact(value.get()).map_err(|error| format!("an `app` event {error}"))?;
        if !value.get().starts_with(r#"{"kind":"app","name":"#) {
            return Err(format!(
                "an `app` event starts with \"kind\":\"app\",\"name\":…, got {}",
                value.get()
            ));
        }
        return Ok(Event::App(value.get().to_owned()));
    }
    let allowed: &[&str] = match kind.as_str() {
        "request" => &["kind", "id", "method"],
        "notification" => &["kind", "method"],
        "response" => &["kind", "id", "outcome"],
        other => {
            return Err(format!(
                "unknown event kind `{other}` (known: request, notification, response, app)"
            ));
        }
    };
    if let Some(extra) = members.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(format!("a `{kind}` event has no `{extra}`"));
    }
    let id = || -> Result<String, String> {
        let id = members
            .get("id")
            .ok_or_else(|| format!("a `{kind}` event needs an `id`"))?;
        check_id(id.get())?;
        Ok(id.get().to_owned())
    };
    let method = || -> Result<String, String> {
        text("method")?.ok_or_else(|| format!("a `{kind}` event needs a `method`"))
    };
    Ok(match kind.as_str() {
        "request" => Event::Request {
            id: id()?,
            method: method()?,
        },
        "notification" => Event::Notification { method: method()? },
        _ => {
            let outcome = match text("outcome")?.as_deref() {
                Some("result") => ResponseOutcome::Result,
                Some("error") => ResponseOutcome::Error,
                Some("malformed") => ResponseOutcome::Malformed,
                other => {
                    return Err(format!(
                        "a `response` event needs `outcome` result, error or malformed, got {other:?}"
                    ));
                }
            };
            Event::Response { id: id()?, outcome }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Vector {
        parse("t.jsonl", text).unwrap_or_else(|error| panic!("{error}"))
    }

    fn parse_err(text: &str) -> String {
        parse("t.jsonl", text).expect_err("should fail").to_string()
    }

    #[test]
    fn parses_app_steps_app_events_and_features() {
        let vector = parse(
            "agent.jsonl",
            concat!(
                r#"{"config":{"features":{"mcp_http":false}}}"#,
                "\n",
                r#"{"app":{"do":"end_turn","session":"s1","stop":"end_turn"}}"#,
                "\n",
                r#"{"event":{"kind":"app","name":"closed"}}"#,
            ),
        )
        .unwrap();
        assert_eq!(vector.config.features.get("mcp_http"), Some(&false));
        assert_eq!(
            vector.steps,
            [
                Step::App(r#"{"do":"end_turn","session":"s1","stop":"end_turn"}"#.to_owned()),
                Step::Event(Event::App(r#"{"kind":"app","name":"closed"}"#.to_owned())),
            ]
        );
        assert_eq!(
            vector.expectations(0).events.len(),
            1,
            "an app step is an action"
        );
        assert!(parse("a", r#"{"app":[1]}"#).is_err());
        assert!(parse("a", r#"{"event":{"name":"x","kind":"app"}}"#).is_err());
    }

    #[test]
    fn parses_every_step_kind() {
        let vector = parse_ok(concat!(
            r#"{"config":{"max_line":64}}"#,
            "\n",
            r#"{"comment":"hello"}"#,
            "\n\n",
            r#"{"in":"{\"a\":1}\r\n"}"#,
            "\n",
            r#"{"in_hex":"c3 28 0A"}"#,
            "\n",
            r#"{"in_repeat":{"text":"xy","count":3,"then":"\n"}}"#,
            "\n",
            r#"{"out":{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: x"}}}"#,
            "\n",
            r#"{"out_error":{"id":null,"code":-32700,"message_prefix":"Parse error: "}}"#,
            "\n",
            r#"{"event":{"kind":"request","id":"\u0041","method":"a\/b"}}"#,
            "\n",
            r#"{"event":{"kind":"notification","method":"n"}}"#,
            "\n",
            r#"{"event":{"kind":"response","id":-1,"outcome":"malformed"}}"#,
            "\n",
            r#"{"event":{"kind":"response","id":null,"outcome":"error"}}"#,
            "\n",
            r#"{"at":1000}"#,
            "\n",
            r#"{"eof":true}"#,
            "\n",
        ));
        assert_eq!(vector.config.max_line, Some(64));
        assert_eq!(vector.lines, [2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
        assert_eq!(
            vector.steps,
            [
                Step::Comment("hello".into()),
                Step::In(Input::Bytes(b"{\"a\":1}\r\n".to_vec())),
                Step::In(Input::Bytes(vec![0xc3, 0x28, 0x0a])),
                Step::In(Input::Repeat {
                    unit: b"xy".to_vec(),
                    count: 3,
                    then: b"\n".to_vec()
                }),
                Step::Out(
                    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: x"}}"#
                        .into()
                ),
                Step::OutError(OutErrorPattern {
                    id: "null".into(),
                    code: -32700,
                    message_prefix: "Parse error: ".into()
                }),
                Step::Event(Event::Request {
                    id: r#""\u0041""#.into(),
                    method: "a/b".into()
                }),
                Step::Event(Event::Notification { method: "n".into() }),
                Step::Event(Event::Response {
                    id: "-1".into(),
                    outcome: ResponseOutcome::Malformed
                }),
                Step::Event(Event::Response {
                    id: "null".into(),
                    outcome: ResponseOutcome::Error
                }),
                Step::At(1000),
                Step::Eof,
            ]
        );
    }

    #[test]
    fn out_keeps_the_raw_text_with_key_order_and_escapes() {
        let raw = r#"{"jsonrpc":"2.0","id":"\u00e9","result":{"z":1,"a":"\n"}}"#;
        let vector = parse_ok(&format!(r#"{{"out":{raw}}}"#));
        assert_eq!(vector.steps, [Step::Out(raw.to_owned())]);
    }

    #[test]
    fn repeat_input_feeds_in_bounded_chunks() {
        let input = Input::Repeat {
            unit: b"abc".to_vec(),
            count: 5,
            then: b"\n".to_vec(),
        };
        assert_eq!(input.len(), 16);
        let mut chunks = Vec::new();
        input.feed_in_chunks(4, |chunk| chunks.push(chunk.to_vec()));
        assert!(chunks.iter().all(|chunk| chunk.len() <= 4));
        assert_eq!(chunks.concat(), b"abcabcabcabcabc\n");
        assert_eq!(input.to_bytes(), b"abcabcabcabcabc\n");
    }

    #[test]
    fn expectations_are_grouped_per_action_step() {
        let vector = parse_ok(concat!(
            r#"{"in":"a"}"#,
            "\n",
            r#"{"out":1}"#,
            "\n",
            r#"{"event":{"kind":"notification","method":"n"}}"#,
            "\n",
            r#"{"comment":"c"}"#,
            "\n",
            r#"{"out":2}"#,
            "\n",
            r#"{"eof":true}"#,
            "\n",
        ));
        let after_in = vector.expectations(0);
        assert_eq!(
            after_in.outputs,
            [&Step::Out("1".into()), &Step::Out("2".into())]
        );
        assert_eq!(
            after_in.events,
            [&Event::Notification { method: "n".into() }]
        );
        assert_eq!(vector.expectations(5), Expectations::default());
        assert_eq!(vector.expectations(usize::MAX), Expectations::default());
        assert_eq!(vector.location(4), "t.jsonl:5");
    }

    #[test]
    fn out_error_pattern_checks_prefix_shape_and_members() {
        let pattern = OutErrorPattern {
            id: "null".into(),
            code: -32700,
            message_prefix: "Parse error: \"".into(),
        };
        let good = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: \"x\" at 3"}}"#;
        assert_eq!(pattern.check(good), Ok(()));
        let with_data = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: \"","data":{}}}"#;
        assert_eq!(pattern.check(with_data), Ok(()));

        let wrong_code =
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Parse error: \""}}"#;
        assert!(
            pattern
                .check(wrong_code)
                .unwrap_err()
                .contains("starting with")
        );
        let spaced =
            br#"{"jsonrpc": "2.0","id":null,"error":{"code":-32700,"message":"Parse error: \""}}"#;
        assert!(pattern.check(spaced).is_err());
        let extra = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: \"","x":1}}"#;
        assert!(
            pattern
                .check(extra)
                .unwrap_err()
                .contains("unexpected members")
        );
        let trailing =
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: \""}} x"#;
        assert!(
            pattern
                .check(trailing)
                .unwrap_err()
                .contains("not valid JSON")
        );
    }

    #[test]
    fn errors_name_the_file_and_line() {
        assert_eq!(
            parse_err("{\"in\":\"a\"}\n\n{\"in\":1}\n"),
            "t.jsonl:3: `in` must be a JSON string, got 1"
        );
        assert!(
            parse_err("{\"in\":\"a\"}\nnot json\n").starts_with("t.jsonl:2: not a JSON object")
        );
        assert_eq!(
            parse_err(r#"{"in":"a","eof":true}"#),
            "t.jsonl:1: a step needs exactly one key, found `eof` and `in`"
        );
        assert_eq!(
            parse_err("{}"),
            "t.jsonl:1: a step needs exactly one key, found none"
        );
        assert!(parse_err(r#"{"inn":"a"}"#).starts_with("t.jsonl:1: unknown step `inn`"));
        assert_eq!(parse_err(""), "t.jsonl: the vector has no steps");
    }

    #[test]
    fn rejects_malformed_steps_with_reasons() {
        let cases = [
            (r#"{"in_hex":"c3 2"}"#, "odd number of hex digits"),
            (r#"{"in_hex":"zz"}"#, "bad hex pair \"zz\""),
            (r#"{"in_repeat":{"text":"x"}}"#, "`in_repeat` must be"),
            (
                r#"{"in_repeat":{"text":"","count":2}}"#,
                "must not be empty",
            ),
            (r#"{"eof":false}"#, "`eof` must be true, got false"),
            (
                r#"{"at":-5}"#,
                "`at` must be milliseconds as an integer, got -5",
            ),
            (r#"{"out":{"a": 1}}"#, "must be compact JSON"),
            (
                r#"{"out_error":{"id":null,"code":-32700}}"#,
                "`out_error` must be",
            ),
            (
                r#"{"out_error":{"id":1.5,"code":1,"message_prefix":""}}"#,
                "an id must be",
            ),
            (
                r#"{"event":{"kind":"request","method":"m"}}"#,
                "needs an `id`",
            ),
            (
                r#"{"event":{"kind":"notification","id":1,"method":"m"}}"#,
                "has no `id`",
            ),
            (
                r#"{"event":{"kind":"response","id":1,"outcome":"ok"}}"#,
                "needs `outcome`",
            ),
            (
                r#"{"event":{"kind":"response","id":1,"method":"m","outcome":"result"}}"#,
                "has no `method`",
            ),
            (r#"{"event":{"kind":"ping"}}"#, "unknown event kind `ping`"),
            (
                r#"{"event":{"kind":"request","id":{},"method":"m"}}"#,
                "an id must be",
            ),
            (r#"{"config":{"max_lines":5}}"#, "known options: max_line"),
            (r#"{"comment":5}"#, "`comment` must be a JSON string"),
        ];
        for (line, reason) in cases {
            let error = parse_err(line);
            assert!(error.starts_with("t.jsonl:1: "), "{error}");
            assert!(error.contains(reason), "{line}: {error}");
        }
    }

    #[test]
    fn config_only_first_and_clock_only_forward() {
        assert_eq!(
            parse_err("{\"in\":\"a\"}\n{\"config\":{\"max_line\":1}}"),
            "t.jsonl:2: `config` must be the first step"
        );
        assert_eq!(
            parse_err("{\"at\":10}\n{\"at\":5}"),
            "t.jsonl:2: `at` goes back in time: 5 after 10"
        );
    }

    #[test]
    fn crlf_vector_files_parse() {
        let vector = parse_ok("{\"in\":\"a\"}\r\n{\"eof\":true}\r\n");
        assert_eq!(vector.steps.len(), 2);
    }

    #[test]
    fn the_repository_vectors_all_parse() {
        let wire = load_dir(&vectors_dir().join("wire")).unwrap_or_else(|error| panic!("{error}"));
        assert!(wire.len() >= 10, "only {} wire vectors", wire.len());
        for vector in &wire {
            assert!(vector.name.starts_with("wire/"), "{}", vector.name);
            // Every vector feeds something and expects something.
            assert!(
                vector
                    .steps
                    .iter()
                    .any(|step| matches!(step, Step::In(_) | Step::Message(_))),
                "{}",
                vector.name
            );
            assert!(
                vector
                    .steps
                    .iter()
                    .any(|step| matches!(step, Step::Out(_) | Step::OutError(_) | Step::Event(_))),
                "{}",
                vector.name
            );
        }
    }
}

pub mod client;
#[cfg(test)]
mod reference;
