//! Op sequences against a scripted agent (quickcheck): whatever the application and the
//! agent do, in any order,
//!
//! - nothing panics;
//! - every request of the agent is answered at most once, and exactly once unless the
//!   connection reached EOF first;
//! - every request of ours is settled exactly once (one event), and nothing is pending
//!   after EOF or after every deadline has passed;
//! - after `cancel`, the session's open permission and ask_user requests are answered
//!   `cancelled`.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

mod client_support;

use std::collections::{BTreeMap, BTreeSet};

use acp_core::Instant;
use acp_core::conn::client::{
    AgentMethod, AskUserAnswer, ClientEvent, NO_MCP_SERVERS, PermissionAnswer, Serves,
};
use acp_core::machine::{RequestId, Ticket};
use acp_core::wire::ErrorCode;
use client_support::Host;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use serde_json::Value;

#[derive(Clone, Debug)]
enum Op {
    // The application.
    Initialize,
    NewSession,
    Prompt(u8),
    Cancel(u8),
    SetMode(u8),
    Respond(u8, u8),
    // The agent.
    Answer(u8, u8),
    Ask(u8, u8),
    Update(u8),
    CancelRequest(u8),
    Garbage(u8),
    // The world.
    Advance(u32),
    Eof,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = || u8::arbitrary(&mut Gen::new(256));
        match u8::arbitrary(g) % 30 {
            0..=1 => Op::Initialize,
            2..=3 => Op::NewSession,
            4..=6 => Op::Prompt(n()),
            7..=8 => Op::Cancel(n()),
            9 => Op::SetMode(n()),
            10..=13 => Op::Respond(n(), n()),
            14..=18 => Op::Answer(n(), n()),
            19..=22 => Op::Ask(n(), n()),
            23..=24 => Op::Update(n()),
            25 => Op::CancelRequest(n()),
            26 => Op::Garbage(n()),
            27..=28 => Op::Advance(u32::arbitrary(g) % 70_000),
            _ => Op::Eof,
        }
    }
}

/// The scripted agent and the bookkeeping of both sides.
#[derive(Default)]
struct World {
    /// Our requests the agent has not answered: id → (method, sessionId).
    ours: BTreeMap<u64, (String, Option<String>)>,
    /// Sessions the application knows are open.
    sessions: Vec<String>,
    /// Requests of the agent: id (raw text) → times answered.
    answered: BTreeMap<String, usize>,
    /// Answers written, by agent id.
    answers: BTreeMap<String, Value>,
    /// Open tickets the application may answer: ticket → (agent id, method).
    open: BTreeMap<Ticket, (String, AgentMethod)>,
    /// Agent ids that must be answered `cancelled` (open permission/ask_user of a cancelled
    /// session).
    must_cancel: BTreeSet<String>,
    /// Agent id of each ticket, and its session.
    tickets: BTreeMap<Ticket, (String, Option<String>)>,
    /// Our requests settled, by id: times reported.
    settled: BTreeMap<RequestId, usize>,
    /// Our requests sent.
    sent: BTreeSet<RequestId>,
    /// Tickets the connection registered (a Request event arrived).
    registered: BTreeSet<Ticket>,
    next_agent_id: u64,
    next_session: u64,
    eof: bool,
    closed_events: usize,
}

fn pick<T: Clone>(items: &[T], n: u8) -> Option<T> {
    (!items.is_empty()).then(|| items[n as usize % items.len()].clone())
}

impl World {
    /// Reads what the connection wrote.
    fn take_output(&mut self, host: &mut Host) -> Result<(), String> {
        for line in host.sent() {
            if self.eof {
                return Err(format!("written after EOF: {line}"));
            }
            let value: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
            match (value.get("method"), value.get("id")) {
                (Some(method), Some(id)) => {
                    let id = id.as_u64().ok_or("our ids are integers")?;
                    let session = value["params"]["sessionId"].as_str().map(str::to_owned);
                    self.ours
                        .insert(id, (method.as_str().unwrap().to_owned(), session));
                    self.sent.insert(RequestId(id));
                }
                (Some(_), None) => {} // session/cancel
                (None, Some(id)) => {
                    let key = id.to_string();
                    let Some(count) = self.answered.get_mut(&key) else {
                        continue; // a reply to garbage
                    };
                    *count += 1;
                    self.answers.insert(key, value);
                }
                (None, None) => return Err(format!("neither request nor response: {line}")),
            }
        }
        Ok(())
    }

    fn take_events(&mut self, host: &mut Host) -> Result<(), String> {
        for event in host.events() {
            if self.closed_events > 0 {
                return Err(format!("event after Closed: {event:?}"));
            }
            let settled = match &event {
                ClientEvent::Initialized { request, .. }
                | ClientEvent::HandshakeFailed { request, .. }
                | ClientEvent::Answered { request, .. }
                | ClientEvent::Failed { request, .. }
                | ClientEvent::TurnEnded { request, .. } => Some(*request),
                ClientEvent::SessionOpened {
                    request, session, ..
                } => {
                    self.sessions.push(session.as_str().to_owned());
                    Some(*request)
                }
                _ => None,
            };
            if let Some(request) = settled {
                *self.settled.entry(request).or_default() += 1;
            }
            match event {
                ClientEvent::Request(request) => {
                    let (id, _) = self
                        .tickets
                        .get(&request.ticket)
                        .cloned()
                        .unwrap_or_default();
                    self.registered.insert(request.ticket);
                    self.open.insert(request.ticket, (id, request.method));
                }
                ClientEvent::RequestSettled { ticket, .. } => {
                    self.open.remove(&ticket);
                }
                ClientEvent::Closed => self.closed_events += 1,
                _ => {}
            }
        }
        Ok(())
    }

    fn agent_line(&mut self, host: &mut Host, line: &str) {
        if !self.eof {
            host.agent(line);
        }
    }

    fn apply(&mut self, host: &mut Host, op: &Op) -> Result<(), String> {
        let now = Instant(host.now);
        match *op {
            Op::Initialize => {
                let _ = host.conn.initialize(now);
            }
            Op::NewSession => {
                let _ = host.conn.new_session(now, "/w", NO_MCP_SERVERS);
            }
            Op::Prompt(n) => {
                if let Some(s) = pick(&self.sessions, n) {
                    let _ = host.conn.prompt_text(now, &s, "hi");
                }
            }
            Op::Cancel(n) => {
                if let Some(s) = pick(&self.sessions, n) {
                    // Every open question of the session must come back `cancelled`.
                    let due: Vec<String> = self
                        .open
                        .iter()
                        .filter(|(t, (_, m))| {
                            matches!(m, AgentMethod::RequestPermission | AgentMethod::AskUser)
                                && self.tickets.get(t).and_then(|(_, s)| s.clone()).as_deref()
                                    == Some(s.as_str())
                        })
                        .map(|(_, (id, _))| id.clone())
                        .collect();
                    if host.conn.cancel(now, &s).is_ok() {
                        self.must_cancel.extend(due);
                    }
                }
            }
            Op::SetMode(n) => {
                if let Some(s) = pick(&self.sessions, n) {
                    let _ = host.conn.set_mode(now, &s, "plan");
                }
            }
            Op::Respond(n, how) => {
                let tickets: Vec<Ticket> = self.open.keys().copied().collect();
                if let Some(ticket) = pick(&tickets, n) {
                    let (_, method) = self.open[&ticket].clone();
                    let result = match (method, how % 3) {
                        (_, 0) => {
                            host.conn
                                .respond_error(now, ticket, ErrorCode::INTERNAL_ERROR, "no")
                        }
                        (AgentMethod::RequestPermission, 1) => host.conn.respond_permission(
                            now,
                            ticket,
                            PermissionAnswer::Selected("allow_once"),
                        ),
                        (AgentMethod::RequestPermission, _) => {
                            host.conn
                                .respond_permission(now, ticket, PermissionAnswer::Cancelled)
                        }
                        (AgentMethod::AskUser, _) => {
                            host.conn
                                .respond_ask_user(now, ticket, AskUserAnswer::Answered("x"))
                        }
                        _ => host.conn.respond(now, ticket, &serde_json::json!({})),
                    };
                    if result.is_ok() {
                        self.open.remove(&ticket);
                    }
                }
            }
            Op::Answer(n, how) => {
                let ids: Vec<u64> = self.ours.keys().copied().collect();
                if let Some(id) = pick(&ids, n) {
                    let (method, _) = self.ours.remove(&id).unwrap();
                    let line = match how % 4 {
                        0 => format!(
                            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"no"}}}}"#
                        ),
                        1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":"x"}}}}"#),
                        _ => {
                            let result = match method.as_str() {
                                "initialize" => {
                                    r#"{"protocolVersion":1,"agentCapabilities":{}}"#.to_owned()
                                }
                                "session/new" => {
                                    self.next_session += 1;
                                    format!(r#"{{"sessionId":"s{}"}}"#, self.next_session)
                                }
                                "session/prompt" => r#"{"stopReason":"end_turn"}"#.to_owned(),
                                _ => "{}".to_owned(),
                            };
                            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
                        }
                    };
                    self.agent_line(host, &line);
                }
            }
            Op::Ask(n, what) => {
                let session = pick(&self.sessions, n).unwrap_or_else(|| "zz".to_owned());
                self.next_agent_id += 1;
                let id = format!("\"a{}\"", self.next_agent_id);
                let (method, params) = match what % 5 {
                    0 | 1 => (
                        "session/request_permission",
                        format!(
                            r#"{{"sessionId":"{session}","toolCall":{{"toolCallId":"t"}},"options":[]}}"#
                        ),
                    ),
                    2 => (
                        "_agentao.cn/ask_user",
                        format!(r#"{{"sessionId":"{session}","question":"?"}}"#),
                    ),
                    3 => (
                        "fs/read_text_file",
                        format!(r#"{{"sessionId":"{session}","path":"/a"}}"#),
                    ),
                    _ => ("x/unknown", "{}".to_owned()),
                };
                // Tickets count up per request the connection registers, in order; note the
                // id now and match it when the event arrives.
                let next_ticket = Ticket(self.tickets.len() as u64);
                self.tickets
                    .insert(next_ticket, (id.clone(), Some(session)));
                self.answered.entry(id.clone()).or_default();
                self.agent_line(
                    host,
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
                    ),
                );
                self.take_events(host)?;
                if !self.registered.contains(&next_ticket) {
                    // Refused at once (not registered): no ticket was used.
                    self.tickets.remove(&next_ticket);
                }
                if self.eof {
                    self.answered.remove(&id);
                }
            }
            Op::Update(n) => {
                let session = pick(&self.sessions, n).unwrap_or_else(|| "zz".to_owned());
                self.agent_line(host, &format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{session}","update":{{"sessionUpdate":"agent_message_chunk"}}}}}}"#));
            }
            Op::CancelRequest(n) => {
                let ids: Vec<String> = self.answered.keys().cloned().collect();
                if let Some(id) = pick(&ids, n) {
                    self.agent_line(host, &format!(r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{id}}}}}"#));
                }
            }
            Op::Garbage(n) => {
                let junk = ["[1]", "{", "42", r#"{"jsonrpc":"2.0","id":7}"#, "\u{0}"];
                self.agent_line(host, junk[n as usize % junk.len()]);
            }
            Op::Advance(ms) => host.advance(host.now + u64::from(ms)),
            Op::Eof => {
                if !self.eof {
                    host.conn.handle_eof(now);
                    self.take_events(host)?;
                    self.take_output(host)?;
                    self.eof = true;
                }
            }
        }
        self.take_events(host)?;
        self.take_output(host)
    }
}

fn check(ops: Vec<Op>) -> Result<(), String> {
    let mut host = Host::new(Serves::EVERYTHING);
    let mut world = World::default();
    for op in &ops {
        world.apply(&mut host, op)?;
    }
    if !world.eof {
        // Every deadline passes: nothing of ours is left waiting.
        host.advance(host.now + 1_000_000);
        world.take_events(&mut host)?;
        world.take_output(&mut host)?;
        if host.conn.requests_in_flight() != 0 {
            return Err(format!(
                "{} requests still in flight after every deadline",
                host.conn.requests_in_flight()
            ));
        }
        // The application answers whatever is still open.
        let open: Vec<Ticket> = world.open.keys().copied().collect();
        for ticket in open {
            host.conn
                .respond_error(Instant(host.now), ticket, ErrorCode::INTERNAL_ERROR, "end")
                .map_err(|e| format!("open ticket {ticket} refused: {e}"))?;
        }
        world.open.clear();
        world.take_output(&mut host)?;
        for (id, count) in &world.answered {
            if *count != 1 {
                return Err(format!("agent request {id} answered {count} times"));
            }
        }
        for id in &world.sent {
            let times = world.settled.get(id).copied().unwrap_or(0);
            if times != 1 {
                return Err(format!("our request {id} settled {times} times"));
            }
        }
    } else {
        if world.closed_events != 1 {
            return Err(format!("{} Closed events", world.closed_events));
        }
        if host.conn.requests_in_flight() != 0 || host.conn.requests_owed() != 0 {
            return Err("something pending after EOF".into());
        }
        if host.conn.poll_timeout().is_some() {
            return Err("a deadline after EOF".into());
        }
        for (id, count) in &world.answered {
            if *count > 1 {
                return Err(format!("agent request {id} answered {count} times"));
            }
        }
        for id in &world.sent {
            let times = world.settled.get(id).copied().unwrap_or(0);
            if times != 1 {
                return Err(format!("our request {id} settled {times} times after EOF"));
            }
        }
    }
    for id in &world.must_cancel {
        let answer = &world
            .answers
            .get(id)
            .ok_or(format!("{id} never answered after cancel"))?["result"];
        let cancelled = answer == &serde_json::json!({"outcome":{"outcome":"cancelled"}})
            || answer == &serde_json::json!({"outcome":"cancelled"});
        if !cancelled {
            return Err(format!(
                "{id} answered {answer} after its session was cancelled"
            ));
        }
    }
    Ok(())
}

#[test]
fn op_sequences_keep_every_promise() {
    fn prop(ops: Vec<Op>) -> quickcheck::TestResult {
        match check(ops) {
            Ok(()) => quickcheck::TestResult::passed(),
            Err(why) => quickcheck::TestResult::error(why),
        }
    }
    QuickCheck::new()
        .tests(500)
        .quickcheck(prop as fn(Vec<Op>) -> quickcheck::TestResult);
}

#[test]
fn a_handwritten_sequence_exercises_every_op() {
    use Op::*;
    let ops = vec![
        Initialize,
        Answer(0, 2),
        NewSession,
        Answer(0, 2),
        NewSession,
        Answer(0, 3),
        Prompt(0),
        Ask(0, 0),
        Ask(0, 2),
        Ask(1, 3),
        Ask(0, 4),
        Update(0),
        Respond(2, 1),
        Cancel(0),
        Ask(0, 0),
        CancelRequest(2),
        Garbage(1),
        SetMode(1),
        Advance(61_000),
        Answer(0, 2),
        Prompt(1),
        Respond(0, 0),
        Eof,
        Prompt(0),
    ];
    check(ops).unwrap();
}
