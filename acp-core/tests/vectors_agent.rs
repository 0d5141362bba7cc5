//! Replays every `vectors/agent/` scenario against `acp_core::AgentConnection`: the client's
//! lines go in, `app` steps become application commands, and the connection's output lines
//! and events are compared with the file.
//!
//! Each vector is replayed whole and in 7-byte pieces. Application events are rendered as
//! compact JSON (`{"kind":"app","name":…}`, see `vectors/README.md`); `PeerViolation`
//! events are for logging and are not compared.
#![cfg(feature = "std")] // files, hash maps and the std-only connection defaults

use std::collections::HashMap;
use std::time::Duration;

use acp_core::Instant;
use acp_core::conn::agent::{
    AgentConfig, AgentConnection, AgentEvent, AgentFeatures, AgentInfo, AuthMethodSpec, Dialect,
    RawUpdate,
};
use acp_core::machine::Ticket;
use acp_core::machine::permission::PermissionDecision;
use acp_core::machine::turn::StopReason;
use acp_core::schema::{AskUserRequest, NewSessionResponse, ReadTextFileRequest, ToolCallUpdate};
use acp_core::wire::ErrorCode;
use acp_testkit::vectors::{Event, Harness, Vector, load_dir, replay, vectors_dir};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// The agent under test plus the runner's bookkeeping: wire id of each ticket handed over.
struct Agent {
    conn: AgentConnection<acp_core::conn::Growable>,
    now: Instant,
    tickets: HashMap<String, Ticket>,
    outputs: Vec<Vec<u8>>,
    events: Vec<Event>,
    /// A `message` step came: output is taken a message at a time, as a message transport
    /// takes it (R-MSG-2).
    messages: bool,
}

/// The features the vectors assume unless their `config` says otherwise (Agentao's).
fn features(vector: &Vector) -> AgentFeatures {
    let mut f = AgentFeatures {
        load_session: true,
        prompt_image: true,
        mcp_http: true,
        mcp_sse: true,
        set_model: true,
        ask_user: true,
        ..AgentFeatures::default()
    };
    for (name, on) in &vector.config.features {
        let flag = match name.as_str() {
            "load_session" => &mut f.load_session,
            "prompt_image" => &mut f.prompt_image,
            "prompt_audio" => &mut f.prompt_audio,
            "prompt_embedded_context" => &mut f.prompt_embedded_context,
            "mcp_http" => &mut f.mcp_http,
            "mcp_sse" => &mut f.mcp_sse,
            "session_list" => &mut f.session_list,
            "session_resume" => &mut f.session_resume,
            "session_close" => &mut f.session_close,
            "session_delete" => &mut f.session_delete,
            "additional_directories" => &mut f.additional_directories,
            "system_prompt" => &mut f.system_prompt,
            "set_model" => &mut f.set_model,
            "ask_user" => &mut f.ask_user,
            "logout" => &mut f.logout,
            // Auth switches, applied to the configuration by `Agent::new`.
            "auth_agent" | "auth_terminal" | "auth_required" => continue,
            other => panic!("{}: unknown feature {other}", vector.name),
        };
        *flag = *on;
    }
    f
}

impl Agent {
    fn new(vector: &Vector) -> Self {
        let mut config = AgentConfig::agentao(AgentInfo::new("agentao", "Agentao", "0.4.20"));
        config.features = features(vector);
        config.limits.permission_timeout = Some(Duration::from_millis(30_000));
        match vector.config.dialect.as_deref() {
            Some("acp") => config = config.with_dialect(Dialect::Acp),
            Some(_) => config = config.with_dialect(Dialect::Agentao),
            None => {}
        }
        if let Some(max_line) = vector.config.max_line {
            config.limits.max_line = max_line;
        }
        let on = |name: &str| vector.config.features.get(name).copied().unwrap_or(false);
        if on("auth_agent") {
            let method = AuthMethodSpec::agent("api-key", "API key")
                .description("Use the API key of the environment");
            config.offer_auth(&method).unwrap();
        }
        if on("auth_terminal") {
            let method = AuthMethodSpec::terminal("login", "Log in")
                .description("Log in in a terminal")
                .args(&["--login"])
                .env(&[("LOGIN_MODE", "terminal")]);
            config.offer_auth(&method).unwrap();
        }
        config.auth_required = on("auth_required");
        Self {
            conn: AgentConnection::new(config),
            now: Instant(0),
            tickets: HashMap::new(),
            outputs: Vec::new(),
            messages: false,
            events: Vec::new(),
        }
    }

    /// The documented call order: drain events, then take the output.
    fn drain(&mut self) {
        while let Some(event) = self.conn.poll_event() {
            if let Some(rendered) = self.render(&event) {
                self.events.push(Event::App(rendered));
            }
        }
        if self.messages {
            while let Some(message) = self.conn.poll_transmit_message() {
                assert!(!message.contains(&b'\n'), "one message per frame");
                self.outputs.push(message.to_vec());
                self.conn.transmitted_message();
            }
            assert!(self.conn.poll_transmit().is_empty(), "whole messages only");
            return;
        }
        let bytes = self.conn.poll_transmit().to_vec();
        self.conn.transmitted(bytes.len());
        for line in bytes.split_inclusive(|b| *b == b'\n') {
            assert_eq!(line.last(), Some(&b'\n'), "whole lines only");
            self.outputs.push(line[..line.len() - 1].to_vec());
        }
    }

    /// The wire id of a request handed over; `null` when it was answered already (a line
    /// processed at EOF is handed over and then answered by the EOF rules).
    fn ticket_id(&mut self, ticket: Ticket) -> String {
        let Some(id) = self.conn.peer_request_id(ticket) else {
            return "null".to_owned();
        };
        let id = id.to_owned();
        self.tickets.insert(id.clone(), ticket);
        id
    }

    fn render(&mut self, event: &AgentEvent) -> Option<String> {
        let text = match event {
            AgentEvent::Initialized { .. } => r#"{"kind":"app","name":"initialized"}"#.to_owned(),
            AgentEvent::NewSession { ticket, .. } => {
                let id = self.ticket_id(*ticket);
                format!(r#"{{"kind":"app","name":"new_session","id":{id}}}"#)
            }
            AgentEvent::LoadSession {
                ticket,
                session,
                resume,
                ..
            } => {
                let id = self.ticket_id(*ticket);
                let name = if *resume {
                    "resume_session"
                } else {
                    "load_session"
                };
                format!(
                    r#"{{"kind":"app","name":"{name}","id":{id},"session":{}}}"#,
                    json!(session.as_str())
                )
            }
            AgentEvent::Prompt {
                ticket, session, ..
            } => {
                let id = self.ticket_id(*ticket);
                format!(
                    r#"{{"kind":"app","name":"prompt","id":{id},"session":{}}}"#,
                    json!(session.as_str())
                )
            }
            AgentEvent::Cancelled { session } => {
                format!(
                    r#"{{"kind":"app","name":"cancelled","session":{}}}"#,
                    json!(session.as_str())
                )
            }
            AgentEvent::PermissionResolved {
                request,
                decision,
                remembered,
                ..
            } => {
                let decision = match decision {
                    PermissionDecision::Allowed(option) => format!("allowed:{option}"),
                    PermissionDecision::Rejected(reason) => format!("rejected:{reason:?}"),
                    PermissionDecision::Cancelled => "cancelled".to_owned(),
                };
                format!(
                    r#"{{"kind":"app","name":"permission","request":{},"decision":{},"remembered":{remembered}}}"#,
                    request.0,
                    json!(decision)
                )
            }
            AgentEvent::AskUserAnswered { request, text, .. } => format!(
                r#"{{"kind":"app","name":"ask_user","request":{},"text":{}}}"#,
                request.0,
                json!(text.as_str())
            ),
            AgentEvent::Response { request, result } => match result {
                Ok(_) => format!(
                    r#"{{"kind":"app","name":"response","request":{},"ok":true}}"#,
                    request.0
                ),
                Err(e) => format!(
                    r#"{{"kind":"app","name":"response","request":{},"error":{}}}"#,
                    request.0, e.code.0
                ),
            },
            AgentEvent::Request { ticket, method, .. } => {
                let id = self.ticket_id(*ticket);
                format!(
                    r#"{{"kind":"app","name":"request","id":{id},"method":{}}}"#,
                    json!(method.as_str())
                )
            }
            AgentEvent::Authenticate {
                ticket, method_id, ..
            } => {
                let id = self.ticket_id(*ticket);
                format!(
                    r#"{{"kind":"app","name":"authenticate","id":{id},"method_id":{}}}"#,
                    json!(method_id.as_str())
                )
            }
            AgentEvent::Logout { ticket, .. } => {
                let id = self.ticket_id(*ticket);
                format!(r#"{{"kind":"app","name":"logout","id":{id}}}"#)
            }
            AgentEvent::RequestCancelled { ticket } => {
                let id = self
                    .tickets
                    .iter()
                    .find(|(_, t)| *t == ticket)
                    .map(|(id, _)| id.clone())
                    .unwrap_or_default();
                format!(r#"{{"kind":"app","name":"request_cancelled","id":{id}}}"#)
            }
            AgentEvent::SaveSession { session } => {
                format!(
                    r#"{{"kind":"app","name":"save_session","session":{}}}"#,
                    json!(session.as_str())
                )
            }
            AgentEvent::Closed => r#"{"kind":"app","name":"closed"}"#.to_owned(),
            AgentEvent::PeerViolation(_) => return None,
            other => panic!("the runner cannot render {other:?}"),
        };
        Some(text)
    }

    fn ticket(&self, command: &Value) -> Result<Ticket, String> {
        let id = command
            .get("id")
            .ok_or("the command needs the request's `id`")?;
        self.tickets
            .get(&id.to_string())
            .copied()
            .ok_or_else(|| format!("no request {id} was handed to the app"))
    }

    fn run(
        &mut self,
        command: &Value,
        raw: &HashMap<String, Box<RawValue>>,
    ) -> Result<Result<(), acp_core::machine::UsageError>, String> {
        // Objects are passed on as written (a `Value` would sort their keys).
        let verbatim = |key: &str| -> Result<&RawValue, String> {
            raw.get(key)
                .map(|v| &**v)
                .ok_or_else(|| format!("the command needs `{key}`"))
        };
        let text = |key: &str| -> Result<String, String> {
            command
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("the command needs a string `{key}`"))
        };
        let timeout = command
            .get("timeout_ms")
            .and_then(Value::as_u64)
            .map(Duration::from_millis);
        let what = text("do")?;
        let conn = &mut self.conn;
        Ok(match what.as_str() {
            "accept_new_session" => {
                let ticket = self.ticket(command)?;
                match command.get("result") {
                    Some(result) => {
                        let result: NewSessionResponse =
                            serde_json::from_value(result.clone()).map_err(|e| e.to_string())?;
                        self.conn.accept_new_session(ticket, &result)
                    }
                    None => self.conn.accept_new_session_id(ticket, &text("session")?),
                }
            }
            "accept_load" => {
                let ticket = self.ticket(command)?;
                self.conn.accept_load(ticket, verbatim("result")?)
            }
            "load_not_found" => {
                let ticket = self.ticket(command)?;
                self.conn.load_not_found(ticket)
            }
            "reject" => {
                let ticket = self.ticket(command)?;
                let code = command["code"]
                    .as_i64()
                    .ok_or("`code` must be an integer")?;
                let message = text("message")?;
                self.conn
                    .respond_error(ticket, ErrorCode(code as i32), &message)
            }
            "respond" => {
                let ticket = self.ticket(command)?;
                self.conn.respond(ticket, verbatim("result")?)
            }
            "accept_authenticate" => {
                let ticket = self.ticket(command)?;
                self.conn.accept_authenticate(ticket)
            }
            "accept_logout" => {
                let ticket = self.ticket(command)?;
                self.conn.accept_logout(ticket)
            }
            "accept_mode" => {
                let ticket = self.ticket(command)?;
                self.conn.accept_mode(ticket, &text("mode")?)
            }
            "update" => {
                let update = RawUpdate::new(verbatim("update")?.get())
                    .ok_or("`update` must be an update object")?;
                conn.send_update(&text("session")?, &update)
            }
            "replay" => {
                let update = RawUpdate::new(verbatim("update")?.get())
                    .ok_or("`update` must be an update object")?;
                conn.send_replay(&text("session")?, &update)
            }
            "end_turn" => {
                let stop = StopReason::from_wire(&text("stop")?).ok_or("unknown stop reason")?;
                // `usage`, when given: the turn's token usage (`PromptResponse.usage`).
                let usage: Option<acp_core::schema::Usage> = match command.get("usage") {
                    Some(usage) => {
                        Some(serde_json::from_value(usage.clone()).map_err(|e| e.to_string())?)
                    }
                    None => None,
                };
                conn.end_turn_with_usage(&text("session")?, stop, usage.as_ref())
                    .map(drop)
            }
            "fail_turn" => conn
                .fail_turn(&text("session")?, &text("message")?)
                .map(drop),
            "request_permission" => {
                let call: ToolCallUpdate = serde_json::from_value(command["tool_call"].clone())
                    .map_err(|e| e.to_string())?;
                conn.request_permission(self.now, &text("session")?, &call, timeout)
                    .map(drop)
            }
            "ask_user" => {
                let request: AskUserRequest = serde_json::from_value(command["request"].clone())
                    .map_err(|e| e.to_string())?;
                conn.ask_user(self.now, &request, timeout).map(drop)
            }
            "read_text_file" => {
                let request: ReadTextFileRequest =
                    serde_json::from_value(command["request"].clone())
                        .map_err(|e| e.to_string())?;
                conn.read_text_file(self.now, &request, timeout).map(drop)
            }
            "cancel_request" => {
                let id = command["request"]
                    .as_u64()
                    .ok_or("`request` must be our integer id")?;
                conn.cancel_request(acp_core::machine::RequestId(id))
            }
            other => return Err(format!("unknown app command `{other}`")),
        })
    }
}

impl Harness for Agent {
    fn feed(&mut self, mut bytes: &[u8]) {
        // The documented loop: feed, drain; what was not taken goes in again.
        let mut rounds = 0;
        while !bytes.is_empty() || self.conn.is_input_held() {
            let taken = self.conn.handle_bytes(self.now, bytes);
            bytes = &bytes[taken..];
            self.drain();
            rounds += 1;
            assert!(rounds < 1_000_000, "no progress");
        }
    }

    fn message(&mut self, message: &[u8]) -> Result<(), String> {
        // The documented loop: a message not taken goes in again once drained.
        self.messages = true;
        for _ in 0..1_000 {
            let taken = self.conn.handle_message(self.now, message);
            self.drain();
            if taken {
                return Ok(());
            }
        }
        Err("the connection never took the message".to_owned())
    }

    fn eof(&mut self) {
        self.conn.handle_eof(self.now);
        self.drain();
    }

    fn advance_to(&mut self, now_ms: u64) {
        self.now = Instant(now_ms);
        self.conn.handle_timeout(self.now);
        self.drain();
    }

    fn take_outputs(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.outputs)
    }

    fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn app(&mut self, command: &str) -> Result<(), String> {
        let raw: HashMap<String, Box<RawValue>> =
            serde_json::from_str(command).map_err(|e| e.to_string())?;
        let command: Value = serde_json::from_str(command).map_err(|e| e.to_string())?;
        let outcome = self.run(&command, &raw)?;
        let expected = command.get("expect_error").and_then(Value::as_str);
        match (outcome, expected) {
            (Ok(()), None) => {}
            (Err(error), Some(name)) if format!("{error:?}") == name => {}
            (outcome, expected) => {
                return Err(format!(
                    "command {command}: expected {expected:?}, got {outcome:?}"
                ));
            }
        }
        self.drain();
        Ok(())
    }
}

/// Holds the agent connection to every rule its vectors' headers cite
/// (R-INIT-*, R-SESSION-*, R-TURN-*, R-CANCEL-*, …);
/// a failure names the vector's rules before its file and line.
#[test]
fn every_agent_vector_replays_whole_and_in_pieces() {
    let vectors = load_dir(&vectors_dir().join("agent")).expect("the agent vectors parse");
    assert!(
        vectors.len() >= 20,
        "vectors/agent/ holds one scenario per group of agent rules (vectors/README.md lists them)"
    );
    for vector in &vectors {
        for chunk in [usize::MAX, 7] {
            let mut agent = Agent::new(vector);
            if let Err(failure) = replay(vector, &mut agent, chunk) {
                panic!("{failure} (pieces of {chunk} bytes)");
            }
        }
    }
}
