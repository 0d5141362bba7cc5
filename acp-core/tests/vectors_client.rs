//! Replays every `vectors/client/` scenario against acp-core's `ClientConnection`: the
//! vector plays the agent (`in`) and the application (`client`), and checks what the
//! connection writes (`out`) and tells the application (`client_event`).
//!
//! Each vector is replayed whole, in 7-byte pieces and one byte at a time.
#![cfg(feature = "std")] // files, hash maps and the std-only connection defaults

use std::collections::BTreeMap;
use std::time::Duration;

use acp_core::Instant;
use acp_core::conn::client::{
    AgentViolation, AskUserAnswer, ClientConfig, ClientConnection, ClientEvent, Growable,
    NO_MCP_SERVERS, PermissionAnswer, Serves, TurnOutcome,
};
use acp_core::machine::{Ticket, UsageError};
use acp_core::wire::ErrorCode;
use acp_testkit::vectors::{Event, Harness, Vector, load_dir, replay};
use serde_json::{Value, json};

struct Client {
    conn: ClientConnection<Growable>,
    now: u64,
    outputs: Vec<Vec<u8>>,
    events: Vec<Event>,
    /// Agent request ids (raw JSON text) and their tickets, both ways.
    tickets: BTreeMap<String, Ticket>,
    ids: BTreeMap<Ticket, String>,
    /// A `message` step came: output is taken a message at a time (R-MSG-2).
    messages: bool,
}

fn config(vector: &Vector) -> ClientConfig {
    let options = vector.config.client.clone().unwrap_or(json!({}));
    let mut serves = Serves::NOTHING;
    for name in options["serves"].as_array().into_iter().flatten() {
        match name.as_str().unwrap_or_default() {
            "fs_read" => serves.fs_read = true,
            "fs_write" => serves.fs_write = true,
            "terminal" => serves.terminal = true,
            "ask_user" => serves.ask_user = true,
            "elicitation" => serves.elicitation = true,
            "extension_methods" => serves.extension_methods = true,
            "terminal_auth" => serves.terminal_auth = true,
            other => panic!("unknown serves entry {other}"),
        }
    }
    let mut config = ClientConfig::new("acp-vectors", "1.0.0", serves);
    let ms = |key: &str, default: Option<Duration>| match options.get(key) {
        None => default,
        Some(Value::Null) => None,
        Some(v) => Some(Duration::from_millis(
            v.as_u64().expect("checked by the parser"),
        )),
    };
    config.request_timeout = ms("request_timeout_ms", config.request_timeout);
    config.prompt_timeout = ms("prompt_timeout_ms", config.prompt_timeout);
    if let Some(max_line) = vector.config.max_line {
        config.max_line = max_line;
    }
    config
}

impl Client {
    fn new(vector: &Vector) -> Self {
        Self {
            conn: ClientConnection::new(config(vector)),
            now: 0,
            outputs: Vec::new(),
            messages: false,
            events: Vec::new(),
            tickets: BTreeMap::new(),
            ids: BTreeMap::new(),
        }
    }

    /// The documented loop: drain events, write the outbox, until both are empty.
    fn pump(&mut self) {
        for _ in 0..10_000 {
            while let Some(event) = self.conn.poll_event() {
                let rendered = self.render(event);
                self.events.push(Event::Client(rendered));
            }
            if self.messages {
                let Some(message) = self.conn.poll_transmit_message() else {
                    assert!(self.conn.poll_transmit().is_empty(), "whole messages only");
                    return;
                };
                assert!(!message.contains(&b'\n'), "one message per frame");
                self.outputs.push(message.to_vec());
                self.conn.transmitted_message();
                continue;
            }
            let pending = self.conn.outbox().pending().to_vec();
            if pending.is_empty() {
                return;
            }
            self.conn.outbox().consume(pending.len());
            for line in pending.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                self.outputs.push(line.to_vec());
            }
        }
        panic!("the connection never settles");
    }

    fn render(&mut self, event: ClientEvent) -> Value {
        match event {
            ClientEvent::Initialized { request, .. } => {
                json!({"event":"Initialized","request":request.0})
            }
            ClientEvent::HandshakeFailed { request, error } => {
                json!({"event":"HandshakeFailed","request":request.0,"error":error.to_string()})
            }
            ClientEvent::SessionOpened {
                request,
                method,
                session,
                ..
            } => json!({
                "event":"SessionOpened","request":request.0,"method":method.name(),"session":session.as_str()
            }),
            ClientEvent::Answered {
                request, method, ..
            } => {
                json!({"event":"Answered","request":request.0,"method":method.name()})
            }
            ClientEvent::Failed {
                request,
                method,
                failure,
            } => json!({
                "event":"Failed","request":request.0,"method":method.name(),"failure":failure.to_string()
            }),
            ClientEvent::Update {
                session,
                context,
                kind,
                ..
            } => json!({
                "event":"Update","session":session.as_str(),"context":format!("{context:?}"),"kind":kind.as_str()
            }),
            ClientEvent::TurnEnded {
                session,
                request,
                outcome,
            } => {
                let outcome = match outcome {
                    TurnOutcome::Stopped {
                        stop,
                        rewritten: false,
                    } => format!("stopped:{stop}"),
                    TurnOutcome::Stopped {
                        stop,
                        rewritten: true,
                    } => format!("stopped:{stop}:rewritten"),
                    TurnOutcome::Failed(failure) => format!("failed:{failure}"),
                    TurnOutcome::TimedOut => "timed_out".to_owned(),
                    TurnOutcome::Disconnected => "disconnected".to_owned(),
                };
                json!({"event":"TurnEnded","session":session.as_str(),"request":request.0,"outcome":outcome})
            }
            ClientEvent::Request(request) => {
                let id = request.id.as_raw().to_owned();
                self.tickets.insert(id.clone(), request.ticket);
                self.ids.insert(request.ticket, id.clone());
                json!({
                    "event":"Request",
                    "id":serde_json::from_str::<Value>(&id).expect("ids are JSON"),
                    "method":request.name.as_str(),
                    "session":request.session.as_ref().map(|s| s.as_str())
                })
            }
            ClientEvent::RequestSettled { ticket, how, .. } => {
                let id = self.ids.get(&ticket).cloned().unwrap_or_default();
                json!({
                    "event":"RequestSettled",
                    "id":serde_json::from_str::<Value>(&id).unwrap_or(Value::Null),
                    "how":format!("{how:?}")
                })
            }
            ClientEvent::Notification { method, .. } => {
                json!({"event":"Notification","method":method.as_str()})
            }
            ClientEvent::PeerViolation(violation) => {
                let text = match violation {
                    AgentViolation::RejectedLine { code } => format!("RejectedLine {}", code.0),
                    AgentViolation::UnknownResponse => "UnknownResponse".to_owned(),
                    AgentViolation::LateResponse { request } => {
                        format!("LateResponse {}", request.0)
                    }
                    AgentViolation::RequestRefused { method, code } => {
                        format!("RequestRefused {method} {}", code.0)
                    }
                    AgentViolation::BadSessionId => "BadSessionId".to_owned(),
                    other => format!("{other:?}"),
                };
                json!({"event":"Violation","violation":text})
            }
            ClientEvent::Closed => json!({"event":"Closed"}),
            other => json!({"event":format!("{other:?}")}),
        }
    }

    fn ticket(&self, command: &Value) -> Result<Ticket, String> {
        let id = command["id"].to_string();
        self.tickets
            .get(&id)
            .copied()
            .ok_or_else(|| format!("no agent request with id {id} was seen"))
    }

    fn run(&mut self, command: &Value) -> Result<Result<(), UsageError>, String> {
        let now = Instant(self.now);
        let s = |key: &str| command[key].as_str().unwrap_or_default().to_owned();
        let conn = &mut self.conn;
        Ok(match command["do"].as_str().unwrap_or_default() {
            "initialize" => conn.initialize(now).map(drop),
            "new_session" => conn.new_session(now, &s("cwd"), NO_MCP_SERVERS).map(drop),
            "load_session" => conn
                .load_session(now, &s("sessionId"), &s("cwd"), NO_MCP_SERVERS)
                .map(drop),
            "resume_session" => conn
                .resume_session(now, &s("sessionId"), &s("cwd"), NO_MCP_SERVERS)
                .map(drop),
            "prompt" => conn.prompt_text(now, &s("sessionId"), &s("text")).map(drop),
            "cancel" => conn.cancel(now, &s("sessionId")).map(drop),
            "set_mode" => conn.set_mode(now, &s("sessionId"), &s("modeId")).map(drop),
            "set_config_option" => conn
                .set_config_option(now, &s("sessionId"), &s("configId"), &command["value"])
                .map(drop),
            "request" => conn
                .request(now, &s("method"), &command["params"])
                .map(drop),
            "respond_permission" => {
                let ticket = self.ticket(command)?;
                let option = s("optionId");
                let answer = if command.get("optionId").is_some() {
                    PermissionAnswer::Selected(&option)
                } else {
                    PermissionAnswer::Cancelled
                };
                self.conn.respond_permission(now, ticket, answer)
            }
            "respond_ask_user" => {
                let ticket = self.ticket(command)?;
                let text = s("text");
                let answer = if command.get("text").is_some() {
                    AskUserAnswer::Answered(&text)
                } else {
                    AskUserAnswer::Cancelled
                };
                self.conn.respond_ask_user(now, ticket, answer)
            }
            "respond" => {
                let ticket = self.ticket(command)?;
                self.conn.respond(now, ticket, &command["result"])
            }
            "respond_error" => {
                let ticket = self.ticket(command)?;
                let code = ErrorCode(command["code"].as_i64().unwrap_or(0) as i32);
                self.conn.respond_error(now, ticket, code, &s("message"))
            }
            other => return Err(format!("unknown command {other}")),
        })
    }
}

impl Harness for Client {
    fn message(&mut self, message: &[u8]) -> Result<(), String> {
        self.messages = true;
        for _ in 0..1_000 {
            let taken = self.conn.handle_message(Instant(self.now), message);
            self.pump();
            if taken {
                return Ok(());
            }
        }
        Err("the connection never took the message".to_owned())
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        for _ in 0..100_000 {
            if bytes.is_empty() {
                break;
            }
            let n = self.conn.handle_bytes(Instant(self.now), bytes);
            bytes = &bytes[n..];
            if n == 0 {
                self.pump();
            }
        }
        self.pump();
    }

    fn eof(&mut self) {
        self.conn.handle_eof(Instant(self.now));
        self.pump();
    }

    fn advance_to(&mut self, now_ms: u64) {
        self.now = now_ms;
        self.conn.handle_timeout(Instant(now_ms));
        self.pump();
    }

    fn take_outputs(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.outputs)
    }

    fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn client(&mut self, command: &Value) -> Result<(), String> {
        let result = self.run(command)?;
        let expected = command.get("error").and_then(Value::as_str);
        // The variant's name only: `NotAdvertised { method, needs }` is `NotAdvertised`.
        let got = result.err().map(|e| {
            let debug = format!("{e:?}");
            let name = debug.split([' ', '(', '{']).next().unwrap_or_default();
            name.to_owned()
        });
        self.pump();
        if got.as_deref() != expected {
            return Err(format!(
                "`{}` returned {got:?}, expected {expected:?}",
                command["do"]
            ));
        }
        Ok(())
    }
}

/// Holds the client connection to every rule its vectors' headers cite
/// (R-INIT-6, R-INIT-7, R-RPC-8, R-RPC-12, …);
/// a failure names the vector's rules before its file and line.
#[test]
fn every_client_vector_replays_against_acp_core_however_the_bytes_are_chunked() {
    let dir = acp_testkit::vectors::vectors_dir().join("client");
    let vectors = load_dir(&dir).unwrap_or_else(|error| panic!("{error}"));
    assert!(
        vectors.len() >= 8,
        "expected the client vectors, found {}",
        vectors.len()
    );
    let mut failures = Vec::new();
    for vector in &vectors {
        for chunk in [usize::MAX, 7, 1] {
            if let Err(failure) = replay(vector, &mut Client::new(vector), chunk) {
                failures.push(format!("[chunk {chunk}] {failure}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
