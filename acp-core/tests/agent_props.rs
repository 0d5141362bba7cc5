//! Properties over random sequences of client messages, application commands and clock
//! jumps: no panic; every client request answered exactly once (by EOF at the latest);
//! a cancelled turn always answers `cancelled`; no turn update after the turn's answer;
//! nothing pending after `handle_eof`.
#![cfg(feature = "std")]

use std::collections::{HashMap, HashSet};

use acp_core::Instant;
use acp_core::conn::agent::{AgentConnection, AgentEvent};
use acp_core::machine::turn::StopReason;
use acp_core::machine::{RequestId, Ticket};
use acp_core::schema::{
    AskUserRequest, ContentBlock, ContentChunk, SessionUpdate, ToolCall, ToolCallUpdate,
};
use quickcheck::{Arbitrary, Gen, QuickCheck};
use serde_json::Value;

#[path = "agent_support/mod.rs"]
mod agent_support;

#[derive(Clone, Debug)]
enum Op {
    Init,
    NewSession,
    Prompt(u8),
    CancelNote(u8),
    CancelRequest(u8),
    CancelById(u8),
    SetMode(u8),
    Unknown,
    Garbage(Vec<u8>),
    AnswerOurs(u8, u8),
    AcceptNew(u8),
    RejectNew(u8),
    Update(u8),
    Announce(u8),
    EndTurn(u8, u8),
    FailTurn(u8),
    Permission(u8),
    AskUser(u8),
    Respond(u8),
    Advance(u16),
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = u8::arbitrary(g) % 8;
        match u8::arbitrary(g) % 21 {
            0 | 1 => Op::Init,
            2 => Op::NewSession,
            3 | 4 => Op::Prompt(n),
            5 => Op::CancelNote(n),
            6 => Op::CancelRequest(n),
            7 => Op::CancelById(u8::arbitrary(g)),
            8 => Op::SetMode(n),
            9 => Op::Unknown,
            10 => Op::Garbage(Vec::<u8>::arbitrary(g)),
            11 => Op::AnswerOurs(n, u8::arbitrary(g)),
            12 | 13 => Op::AcceptNew(n),
            14 => Op::RejectNew(n),
            15 => Op::Update(n),
            16 => Op::Announce(n),
            17 => Op::EndTurn(n, u8::arbitrary(g)),
            18 => Op::FailTurn(n),
            19 => match n % 3 {
                0 => Op::Permission(n),
                1 => Op::AskUser(n),
                _ => Op::Respond(n),
            },
            _ => Op::Advance(u16::arbitrary(g) % 2000),
        }
    }
}

/// The client's and the application's view of one run.
#[derive(Default)]
struct World {
    next_id: u64,
    /// Request ids sent, and how often each was answered.
    answered: HashMap<u64, u32>,
    /// Prompt request id -> session.
    prompts: HashMap<u64, String>,
    /// Prompts whose turn started (the app saw them).
    started: HashSet<u64>,
    /// Prompts cancelled while running: their answer must be `cancelled`.
    cancelled: HashSet<u64>,
    /// Sessions with a turn whose answer has not been written yet.
    open_turn: HashMap<String, u64>,
    sessions: Vec<String>,
    new_tickets: Vec<Ticket>,
    request_tickets: Vec<Ticket>,
    ours: Vec<RequestId>,
    failures: Vec<String>,
}

impl World {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.answered.insert(self.next_id, 0);
        self.next_id
    }

    fn session(&self, n: u8) -> String {
        if self.sessions.is_empty() {
            format!("s{n}")
        } else {
            self.sessions[n as usize % self.sessions.len()].clone()
        }
    }

    fn observe(&mut self, agent: &mut AgentConnection<acp_core::conn::Growable>) {
        while let Some(event) = agent.poll_event() {
            match event {
                AgentEvent::NewSession { ticket, .. } => self.new_tickets.push(ticket),
                AgentEvent::Request { ticket, .. } => self.request_tickets.push(ticket),
                AgentEvent::Prompt { session, .. } => {
                    let id = self
                        .prompts
                        .iter()
                        .filter(|(id, s)| s.as_str() == session.as_str() && self.answered[id] == 0)
                        .map(|(id, _)| *id)
                        .max();
                    if let Some(id) = id {
                        self.started.insert(id);
                        self.open_turn.insert(session.as_str().to_owned(), id);
                    }
                }
                _ => {}
            }
        }
        let bytes = agent.poll_transmit().to_vec();
        agent.transmitted(bytes.len());
        for line in String::from_utf8(bytes).unwrap().lines() {
            let v: Value = serde_json::from_str(line).expect("output is JSON");
            if v.get("method").and_then(Value::as_str) == Some("session/update") {
                let session = v["params"]["sessionId"].as_str().unwrap().to_owned();
                let kind = v["params"]["update"]["sessionUpdate"].as_str().unwrap();
                if kind == "agent_message_chunk" && !self.open_turn.contains_key(&session) {
                    self.failures
                        .push(format!("update after the turn's answer: {line}"));
                }
                continue;
            }
            if v.get("method").is_some() {
                continue; // a request of ours
            }
            let Some(id) = v["id"].as_u64() else { continue };
            let Some(count) = self.answered.get_mut(&id) else {
                continue;
            };
            *count += 1;
            if *count > 1 {
                self.failures
                    .push(format!("request {id} answered twice: {line}"));
            }
            if let Some(session) = self.prompts.get(&id).cloned() {
                if self.open_turn.get(&session) == Some(&id) {
                    self.open_turn.remove(&session);
                }
                if self.cancelled.contains(&id)
                    && v["result"]["stopReason"].as_str() != Some("cancelled")
                {
                    self.failures
                        .push(format!("cancelled turn {id} answered {line}"));
                }
            }
        }
    }

    fn cancel_session(&mut self, session: &str) {
        if let Some(id) = self.open_turn.get(session) {
            self.cancelled.insert(*id);
        }
    }
}

fn send(agent: &mut AgentConnection<acp_core::conn::Growable>, now: Instant, line: &str) {
    let bytes = format!("{line}\n");
    assert_eq!(agent.handle_bytes(now, bytes.as_bytes()), bytes.len());
}

fn run(ops: Vec<Op>) -> Vec<String> {
    let mut agent: AgentConnection<acp_core::conn::Growable> =
        AgentConnection::new(agent_support::config());
    let mut w = World::default();
    let mut now = Instant(0);
    for op in ops {
        match op {
            Op::Init => {
                let id = w.id();
                send(
                    &mut agent,
                    now,
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{{}}}}}}"#
                    ),
                );
            }
            Op::NewSession => {
                let id = w.id();
                send(
                    &mut agent,
                    now,
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/w","mcpServers":[]}}}}"#
                    ),
                );
            }
            Op::Prompt(n) => {
                let id = w.id();
                let s = w.session(n);
                w.prompts.insert(id, s.clone());
                send(
                    &mut agent,
                    now,
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{s}","prompt":[{{"type":"text","text":"x"}}]}}}}"#
                    ),
                );
            }
            Op::CancelNote(n) => {
                let s = w.session(n);
                w.cancel_session(&s);
                send(
                    &mut agent,
                    now,
                    &format!(
                        r#"{{"jsonrpc":"2.0","method":"session/cancel","params":{{"sessionId":"{s}"}}}}"#
                    ),
                );
            }
            Op::CancelRequest(n) => {
                let id = w.id();
                let s = w.session(n);
                w.cancel_session(&s);
                send(
                    &mut agent,
                    now,
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/cancel","params":{{"sessionId":"{s}"}}}}"#
                    ),
                );
            }
            Op::CancelById(k) => {
                let target = u64::from(k) % (w.next_id + 1);
                if let Some(session) = w.prompts.get(&target).cloned()
                    && w.open_turn.get(&session) == Some(&target)
                {
                    w.cancelled.insert(target);
                }
                send(
                    &mut agent,
                    now,
                    &format!(
                        r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{target}}}}}"#
                    ),
                );
            }
            Op::SetMode(n) => {
                let id = w.id();
                let s = w.session(n);
                send(
                    &mut agent,
                    now,
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/set_mode","params":{{"sessionId":"{s}","modeId":"plan"}}}}"#
                    ),
                );
            }
            Op::Unknown => {
                let id = w.id();
                send(
                    &mut agent,
                    now,
                    &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x/y"}}"#),
                );
            }
            Op::Garbage(mut bytes) => {
                bytes.retain(|b| *b != b'\n');
                bytes.push(b'\n');
                assert_eq!(agent.handle_bytes(now, &bytes), bytes.len());
            }
            Op::AnswerOurs(n, how) => {
                if !w.ours.is_empty() {
                    let id = w.ours[n as usize % w.ours.len()].0;
                    let body = match how % 5 {
                        0 => {
                            r#""result":{"outcome":{"outcome":"selected","optionId":"allow_always"}}"#
                        }
                        1 => r#""result":{"outcome":"answered","text":"t"}"#,
                        2 => r#""error":{"code":-32603,"message":"no"}"#,
                        3 => r#""error":{"code":"x"}"#,
                        _ => r#""result":null"#,
                    };
                    send(
                        &mut agent,
                        now,
                        &format!(r#"{{"jsonrpc":"2.0","id":{id},{body}}}"#),
                    );
                }
            }
            Op::AcceptNew(n) => {
                if !w.new_tickets.is_empty() {
                    let t = w.new_tickets.remove(n as usize % w.new_tickets.len());
                    let s = format!("s{}", w.sessions.len());
                    if agent.accept_new_session_id(t, &s).is_ok() {
                        w.sessions.push(s);
                    }
                }
            }
            Op::RejectNew(n) => {
                if !w.new_tickets.is_empty() {
                    let t = w.new_tickets.remove(n as usize % w.new_tickets.len());
                    let _ = agent.respond_error(t, acp_core::wire::ErrorCode::INTERNAL_ERROR, "no");
                }
            }
            Op::Update(n) => {
                let s = w.session(n);
                let u =
                    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text("c")));
                let _ = agent.send_update(&s, &u);
            }
            Op::Announce(n) => {
                let s = w.session(n);
                let _ = agent.send_update(&s, &SessionUpdate::ToolCall(ToolCall::new("call", "t")));
            }
            Op::EndTurn(n, stop) => {
                let s = w.session(n);
                let stop = StopReason::ALL[stop as usize % StopReason::ALL.len()];
                let _ = agent.end_turn(&s, stop);
            }
            Op::FailTurn(n) => {
                let s = w.session(n);
                let _ = agent.fail_turn(&s, "boom");
            }
            Op::Permission(n) => {
                let s = w.session(n);
                let timeout = Some(core::time::Duration::from_millis(700));
                if let Ok(id) =
                    agent.request_permission(now, &s, &ToolCallUpdate::new("call"), timeout)
                {
                    w.ours.push(id);
                }
            }
            Op::AskUser(n) => {
                let s = w.session(n);
                if let Ok(id) = agent.ask_user(now, &AskUserRequest::new(s, "q"), None) {
                    w.ours.push(id);
                }
            }
            Op::Respond(n) => {
                if !w.request_tickets.is_empty() {
                    let t = w
                        .request_tickets
                        .remove(n as usize % w.request_tickets.len());
                    let _ = agent.respond(t, &serde_json::json!({}));
                }
            }
            Op::Advance(ms) => {
                now = Instant(now.0 + u64::from(ms));
                agent.handle_timeout(now);
            }
        }
        w.observe(&mut agent);
    }
    agent.handle_eof(now);
    w.observe(&mut agent);
    if agent.requests_owed() != 0 || agent.requests_in_flight() != 0 {
        w.failures.push(format!(
            "pending after EOF: {} owed, {} ours",
            agent.requests_owed(),
            agent.requests_in_flight()
        ));
    }
    for (id, count) in &w.answered {
        if *count != 1 {
            w.failures
                .push(format!("request {id} answered {count} times"));
        }
    }
    w.failures
}

#[test]
fn op_sequences_keep_the_protocol_invariants() {
    fn prop(ops: Vec<Op>) -> bool {
        let failures = run(ops);
        if !failures.is_empty() {
            eprintln!("{failures:#?}");
        }
        failures.is_empty()
    }
    QuickCheck::new()
        .tests(1_000)
        .quickcheck(prop as fn(Vec<Op>) -> bool);
}

#[test]
fn a_scripted_sequence_exercises_every_op() {
    use Op::*;
    let ops = vec![
        Prompt(0),
        Init,
        NewSession,
        AcceptNew(0),
        NewSession,
        RejectNew(0),
        Prompt(0),
        Update(0),
        Announce(0),
        Permission(0),
        AskUser(0),
        CancelById(2),
        SetMode(0),
        CancelNote(0),
        Update(0),
        EndTurn(0, 0),
        Update(0),
        Prompt(0),
        Permission(0),
        Advance(800),
        AnswerOurs(0, 0),
        CancelRequest(0),
        FailTurn(0),
        Unknown,
        Garbage(b"{".to_vec()),
        SetMode(0),
        Respond(0),
        Prompt(0),
        CancelById(17),
    ];
    assert_eq!(run(ops), Vec::<String>::new());
}
