//! Op-sequence properties for the client side: the same machines glued the way a client
//! connection will glue them (without JSON). The application initializes, creates
//! sessions, prompts and cancels; the agent answers (or not), sends permission and ask_user
//! requests and `$/cancel_request`; the clock jumps; then EOF. Checks: no panic; every
//! agent request answered exactly once; every request we sent settled exactly once; a turn
//! we cancelled is always reported `cancelled`; nothing pending after EOF;
//! `poll_timeout() > now` right after `handle_timeout(now)`.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use acp_core::machine::handshake::{Capabilities, Handshake, HandshakeInput};
use acp_core::machine::pending::{
    CancelRequestVerdict, FixedOwing, FixedPending, MethodKind, Received, ReplyKind,
    ResponseVerdict, Settle, Settled, SettledOutcome,
};
use acp_core::machine::session::{CancelVia, FixedSessions, SessionInput, SessionOutput};
use acp_core::machine::turn::StopReason;
use acp_core::machine::{Instant, ReqRef, RequestId, Ticket, UsageError};
use acp_core::wire::ErrorCode;
use quickcheck::{Arbitrary, Gen, QuickCheck};

#[derive(Clone, Debug)]
enum Op {
    AppInitialize,
    AppNewSession { timeout: bool },
    AppPrompt(u8),
    AppCancel(u8),
    AppAnswerAgent(u8),
    AgentAnswer { request: u8, how: u8 },
    AgentRequest { session: u8, ask_user: bool },
    AgentCancelRequest(u8),
    Tick(u16),
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        let a = u8::arbitrary(g);
        let b = bool::arbitrary(g);
        match u8::arbitrary(g) % 9 {
            0 => Op::AppInitialize,
            1 => Op::AppNewSession { timeout: b },
            2 => Op::AppPrompt(a),
            3 => Op::AppCancel(a),
            4 => Op::AppAnswerAgent(a),
            5 => Op::AgentAnswer {
                request: a,
                how: u8::arbitrary(g),
            },
            6 => Op::AgentRequest {
                session: a,
                ask_user: b,
            },
            7 => Op::AgentCancelRequest(a),
            _ => Op::Tick(u16::arbitrary(g) % 300),
        }
    }
}

struct Client {
    now: Instant,
    handshake: Handshake,
    sessions: FixedSessions<4>,
    ours: FixedPending<6>,
    theirs: FixedOwing<4>,
    /// What each of our requests is for: the session it creates or prompts.
    purpose: HashMap<RequestId, (MethodKind, Option<String>)>,
    settled: HashMap<RequestId, u32>,
    sent: Vec<RequestId>,
    /// Agent requests: raw id -> replies.
    replies: HashMap<String, u32>,
    agent_requests: Vec<String>,
    next_agent_id: u64,
    sessions_known: Vec<String>,
    next_session: u32,
    /// Prompts we cancelled.
    cancelled: HashSet<RequestId>,
    /// Turns reported over: prompt -> stop (None: failed).
    reported: HashMap<RequestId, Option<StopReason>>,
}

impl Client {
    fn new() -> Self {
        Self {
            now: Instant(0),
            handshake: Handshake::new(Capabilities::FS_READ),
            sessions: FixedSessions::default(),
            ours: FixedPending::default(),
            theirs: FixedOwing::default(),
            purpose: HashMap::new(),
            settled: HashMap::new(),
            sent: Vec::new(),
            replies: HashMap::new(),
            agent_requests: Vec::new(),
            next_agent_id: 0,
            sessions_known: Vec::new(),
            next_session: 0,
            cancelled: HashSet::new(),
            reported: HashMap::new(),
        }
    }

    fn session_name(&self, pick: u8) -> String {
        let n = self.sessions_known.len() + 1;
        self.sessions_known
            .get(usize::from(pick) % n)
            .cloned()
            .unwrap_or_else(|| "unknown".to_owned())
    }

    fn send(
        &mut self,
        kind: MethodKind,
        session: Option<&str>,
        timeout: Option<u64>,
    ) -> Option<RequestId> {
        let timeout = timeout.map(Duration::from_millis);
        let id = self.ours.send(self.now, kind, session, timeout).ok()?;
        self.purpose.insert(id, (kind, session.map(str::to_owned)));
        self.sent.push(id);
        Some(id)
    }

    fn drain_theirs(&mut self) {
        for _ in 0..100 {
            let Some((row, how)) = self.theirs.poll_settled() else {
                return;
            };
            assert!(
                how != Settle::SessionCancelled || row.kind.settles_on_session_cancel(),
                "{row:?}"
            );
            *self.replies.entry(row.id.as_raw().to_owned()).or_default() += 1;
        }
        panic!("poll_settled never ran dry");
    }

    /// One of our requests is settled (answered, or locally).
    fn settle(&mut self, s: Settled) {
        *self.settled.entry(s.id).or_default() += 1;
        let (kind, session) = self.purpose[&s.id].clone();
        match kind {
            MethodKind::Initialize if s.outcome == SettledOutcome::Answered => {
                self.handshake.handle(HandshakeInput::InitializeAnswered {
                    protocol_version: 1,
                    capabilities: Capabilities::LOAD_SESSION,
                });
            }
            MethodKind::NewSession => {
                let req = ReqRef::Ours(s.id);
                if s.outcome == SettledOutcome::Answered {
                    let id = format!("s{}", self.next_session);
                    self.next_session += 1;
                    if self
                        .sessions
                        .handle(self.now, SessionInput::Opened { req, id: &id })
                        == Ok(SessionOutput::Opened)
                    {
                        self.sessions_known.push(id);
                    }
                } else {
                    let _ = self
                        .sessions
                        .handle(self.now, SessionInput::OpenFailed { req });
                }
            }
            MethodKind::Prompt => {
                let id = session.expect("prompts have a session");
                let prompt = ReqRef::Ours(s.id);
                let input = match s.outcome {
                    // The agent says end_turn, whatever we did.
                    SettledOutcome::Answered => SessionInput::EndTurn {
                        id: &id,
                        prompt,
                        stop: StopReason::EndTurn,
                    },
                    _ => SessionInput::FailTurn { id: &id, prompt },
                };
                match self.sessions.handle(self.now, input) {
                    Ok(SessionOutput::TurnEnded { stop, .. }) => {
                        assert!(self.reported.insert(s.id, Some(stop)).is_none());
                    }
                    Ok(SessionOutput::TurnFailed { .. }) => {
                        assert!(self.reported.insert(s.id, None).is_none());
                    }
                    // Already reported (closed at EOF).
                    Ok(SessionOutput::Ignore) => assert!(self.reported.contains_key(&s.id)),
                    other => panic!("{other:?}"),
                }
            }
            _ => {}
        }
    }

    fn drain_ours(&mut self) {
        for _ in 0..100 {
            let Some(s) = self.ours.poll_settled() else {
                return;
            };
            self.settle(s);
        }
        panic!("poll_settled never ran dry");
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::AppInitialize => {
                self.send(MethodKind::Initialize, None, None);
            }
            Op::AppNewSession { timeout } => {
                if self.handshake.require_initialized() != Ok(()) {
                    return;
                }
                let Some(id) = self.send(MethodKind::NewSession, None, timeout.then_some(50))
                else {
                    return;
                };
                if self
                    .sessions
                    .handle(
                        self.now,
                        SessionInput::NewStarted {
                            req: ReqRef::Ours(id),
                        },
                    )
                    .is_err()
                {
                    self.ours.withdraw(id).unwrap();
                    self.sent.retain(|s| *s != id);
                }
            }
            Op::AppPrompt(pick) => {
                let session = self.session_name(pick);
                let Some(id) = self.send(MethodKind::Prompt, Some(&session), None) else {
                    return;
                };
                let out = self.sessions.handle(
                    self.now,
                    SessionInput::Prompt {
                        id: &session,
                        req: ReqRef::Ours(id),
                    },
                );
                match out {
                    Ok(SessionOutput::TurnStarted { prompt }) => {
                        assert_eq!(prompt, ReqRef::Ours(id))
                    }
                    Err(
                        UsageError::UnknownSession
                        | UsageError::TurnInProgress
                        | UsageError::SessionNotActive,
                    ) => {
                        // Refused before anything was written.
                        self.ours.withdraw(id).unwrap();
                        self.sent.retain(|s| *s != id);
                    }
                    other => panic!("{other:?}"),
                }
            }
            Op::AppCancel(pick) => {
                let session = self.session_name(pick);
                match self.sessions.handle(
                    self.now,
                    SessionInput::Cancel {
                        id: &session,
                        via: CancelVia::Local,
                    },
                ) {
                    Ok(SessionOutput::CancelStarted {
                        prompt: ReqRef::Ours(p),
                        answer: false,
                    }) => {
                        self.cancelled.insert(p);
                        // The agent's permission and ask_user requests are answered now.
                        self.theirs.cancel_session(&session);
                        self.drain_theirs();
                    }
                    Ok(SessionOutput::CancelNoop { answer: false })
                    | Err(UsageError::UnknownSession) => {}
                    other => panic!("{other:?}"),
                }
            }
            Op::AppAnswerAgent(pick) => {
                let tickets: Vec<Ticket> = self.theirs.rows().iter().map(|r| r.ticket).collect();
                if tickets.is_empty() {
                    return;
                }
                let ticket = tickets[usize::from(pick) % tickets.len()];
                if let Ok(row) = self.theirs.answer(ticket) {
                    *self.replies.entry(row.id.as_raw().to_owned()).or_default() += 1;
                }
                assert_eq!(
                    self.theirs.answer(ticket).unwrap_err(),
                    UsageError::AlreadySettled
                );
            }
            Op::AgentAnswer { request, how } => {
                let id = self
                    .sent
                    .get(usize::from(request) % (self.sent.len() + 1))
                    .map(|r| r.0);
                let response = match how % 3 {
                    0 => ReplyKind::Result,
                    1 => ReplyKind::Error(ErrorCode::INTERNAL_ERROR),
                    _ => ReplyKind::Malformed,
                };
                match self.ours.handle_response(self.now, id, response) {
                    ResponseVerdict::Settled(s) => self.settle(s),
                    ResponseVerdict::Late { .. } | ResponseVerdict::Unknown => {}
                }
            }
            Op::AgentRequest { session, ask_user } => {
                let raw = format!("\"a{}\"", self.next_agent_id);
                self.next_agent_id += 1;
                self.agent_requests.push(raw.clone());
                let session = self.session_name(session);
                let kind = if ask_user {
                    MethodKind::AskUser
                } else {
                    MethodKind::Permission
                };
                if let Received::Reject(_) = self.theirs.receive(&raw, kind, Some(&session)) {
                    *self.replies.entry(raw).or_default() += 1;
                }
            }
            Op::AgentCancelRequest(pick) => {
                let Some(raw) = self
                    .agent_requests
                    .get(usize::from(pick) % (self.agent_requests.len() + 1))
                    .cloned()
                else {
                    return;
                };
                match self.theirs.handle_cancel_request(&raw) {
                    CancelRequestVerdict::Settling(_) => self.drain_theirs(),
                    CancelRequestVerdict::Unknown => {}
                    CancelRequestVerdict::CancelTurn { .. } => panic!("agents send no prompts"),
                }
            }
            Op::Tick(ms) => {
                self.now = Instant(self.now.0 + u64::from(ms));
                self.ours.handle_timeout(self.now);
                if let Some(deadline) = self.ours.poll_timeout() {
                    assert!(deadline > self.now);
                }
                self.drain_ours();
            }
        }
    }

    fn eof(&mut self) {
        for _ in 0..100 {
            let Some(out) = self.sessions.handle_eof(self.now) else {
                break;
            };
            let SessionOutput::TurnEnded {
                prompt: ReqRef::Ours(p),
                stop,
                ..
            } = out
            else {
                panic!("{out:?}")
            };
            assert_eq!(stop, StopReason::Cancelled);
            assert!(
                self.reported.insert(p, Some(stop)).is_none(),
                "turn reported twice"
            );
        }
        self.theirs.handle_eof();
        self.drain_theirs();
        self.ours.handle_eof(self.now);
        self.drain_ours();
    }

    fn check(&self) {
        assert!(self.ours.rows().is_empty());
        assert!(self.theirs.rows().is_empty());
        assert_eq!(self.ours.poll_timeout(), None);
        for id in &self.sent {
            assert_eq!(self.settled.get(id), Some(&1), "request {id}");
        }
        for raw in &self.agent_requests {
            assert_eq!(self.replies.get(raw), Some(&1), "agent request {raw}");
        }
        for id in &self.cancelled {
            assert_eq!(
                self.reported.get(id),
                Some(&Some(StopReason::Cancelled)),
                "cancelled prompt {id}"
            );
        }
        for id in &self.sent {
            if self.purpose[id].0 == MethodKind::Prompt {
                assert!(self.reported.contains_key(id), "prompt {id} never reported");
            }
        }
    }
}

fn run(ops: Vec<Op>) -> bool {
    let mut client = Client::new();
    if !ops.len().is_multiple_of(4) {
        client.apply(&Op::AppInitialize);
        client.apply(&Op::AgentAnswer { request: 0, how: 0 });
    }
    for op in &ops {
        client.apply(op);
    }
    client.eof();
    client.check();
    true
}

#[test]
fn client_op_sequences_keep_every_promise() {
    QuickCheck::new()
        .tests(2_000)
        .quickcheck(run as fn(Vec<Op>) -> bool);
}
