//! Op-sequence properties over the machines glued together the way an agent connection
//! will glue them (without JSON): random peer messages, application commands and clock
//! jumps, then EOF. Checks (R-RPC-1 … R-RPC-3, R-CANCEL-3, R-RPC-11): no panic; every peer
//! request answered exactly once; every request we sent settled exactly once; a cancelled
//! turn always ends `cancelled`; nothing pending after EOF; `poll_timeout() > now` right
//! after `handle_timeout(now)`.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use acp_core::machine::handshake::{
    Capabilities, Handshake, HandshakeInput, HandshakeOutput, RequestedVersion,
};
use acp_core::machine::pending::{
    CancelRequestVerdict, FixedOwing, FixedPending, MethodKind, Received, ReplyKind,
    ResponseVerdict, Settle,
};
use acp_core::machine::session::{
    Actor, CancelVia, FixedSessions, SessionInput, SessionOutput, SessionState,
};
use acp_core::machine::turn::StopReason;
use acp_core::machine::{Instant, ReqRef, RequestId, Ticket, UsageError};
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// One step of a scenario. Indices pick among known things modulo their count, with one
/// extra value meaning "something unknown".
#[derive(Clone, Debug)]
enum Op {
    PeerInitialize(i64),
    PeerNewSession,
    AppAnswerNew(u8),
    AppFailNew(u8),
    PeerPrompt(u8),
    PeerCancel { session: u8, as_request: bool },
    PeerCancelRequest(u8),
    PeerSetMode(u8),
    AppEndTurn { session: u8, stop: u8 },
    AppUpdate { session: u8, in_turn: bool },
    AppRequestPermission { session: u8, timeout: Option<u8> },
    PeerAnswer { request: u8, how: u8 },
    Tick(u16),
    PeerClose(u8),
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        let pick = u8::arbitrary(g) % 14;
        let a = u8::arbitrary(g);
        let b = bool::arbitrary(g);
        match pick {
            0 => Op::PeerInitialize(*g.choose(&[-1, 0, 1, 7, 65535, 65536]).unwrap_or(&1)),
            1 => Op::PeerNewSession,
            2 => Op::AppAnswerNew(a),
            3 => Op::AppFailNew(a),
            4 => Op::PeerPrompt(a),
            5 => Op::PeerCancel {
                session: a,
                as_request: b,
            },
            6 => Op::PeerCancelRequest(a),
            7 => Op::PeerSetMode(a),
            8 => Op::AppEndTurn {
                session: a,
                stop: u8::arbitrary(g),
            },
            9 => Op::AppUpdate {
                session: a,
                in_turn: b,
            },
            10 => Op::AppRequestPermission {
                session: a,
                timeout: if b { Some(u8::arbitrary(g)) } else { None },
            },
            11 => Op::PeerAnswer {
                request: a,
                how: u8::arbitrary(g),
            },
            12 => Op::Tick(u16::arbitrary(g) % 500),
            _ => Op::PeerClose(a),
        }
    }
}

/// What was written back for one peer request.
#[derive(Clone, Debug, PartialEq)]
enum Reply {
    Error(i32),
    Stop(StopReason),
    Result,
}

/// The machines of one agent connection plus the bookkeeping the properties check.
struct Agent {
    now: Instant,
    handshake: Handshake,
    sessions: FixedSessions<4>,
    ours: FixedPending<4>,
    theirs: FixedOwing<6>,
    /// Raw peer id -> replies written for it.
    replies: HashMap<String, Vec<Reply>>,
    /// Every peer request id sent (each is unique in these scenarios).
    peer_requests: Vec<String>,
    next_peer_id: u64,
    /// Ticket -> (raw id, method kind) for tickets still owed.
    tickets: HashMap<Ticket, String>,
    /// Prompts whose turn saw a cancel.
    cancelled_prompts: HashSet<Ticket>,
    /// Session ids the application handed out.
    known_sessions: Vec<String>,
    next_session: u32,
    /// Our request id -> times settled.
    our_settlements: HashMap<RequestId, u32>,
    our_requests: Vec<RequestId>,
}

impl Agent {
    fn new() -> Self {
        Self {
            now: Instant(0),
            handshake: Handshake::new(Capabilities::LOAD_SESSION),
            sessions: FixedSessions::default(),
            ours: FixedPending::default(),
            theirs: FixedOwing::default(),
            replies: HashMap::new(),
            peer_requests: Vec::new(),
            next_peer_id: 0,
            tickets: HashMap::new(),
            cancelled_prompts: HashSet::new(),
            known_sessions: Vec::new(),
            next_session: 0,
            our_settlements: HashMap::new(),
            our_requests: Vec::new(),
        }
    }

    fn session_name(&self, pick: u8) -> String {
        let n = self.known_sessions.len() + 1;
        self.known_sessions
            .get(usize::from(pick) % n)
            .cloned()
            .unwrap_or_else(|| "unknown".to_owned())
    }

    fn reply(&mut self, raw: &str, reply: Reply) {
        self.replies.entry(raw.to_owned()).or_default().push(reply);
    }

    /// A peer request arrives: the handshake gate, then the owed table.
    fn receive(&mut self, method: &str, session: Option<&str>) -> Option<(Ticket, String)> {
        let raw = self.next_peer_id.to_string();
        self.next_peer_id += 1;
        self.peer_requests.push(raw.clone());
        if let HandshakeOutput::Reject(r) = self
            .handshake
            .handle(HandshakeInput::PeerRequest { method })
        {
            assert_eq!(r.code().0, -32002);
            self.reply(&raw, Reply::Error(r.code().0));
            return None;
        }
        match self.theirs.receive(&raw, MethodKind::of(method), session) {
            Received::Owed(ticket) => {
                self.tickets.insert(ticket, raw.clone());
                Some((ticket, raw))
            }
            Received::Reject(r) => {
                self.reply(&raw, Reply::Error(r.code().0));
                None
            }
        }
    }

    /// The application (or the glue) answers a ticket; exactly-once is enforced by the table.
    fn answer(&mut self, ticket: Ticket, reply: Reply) -> Result<(), UsageError> {
        let row = self.theirs.answer(ticket)?;
        self.tickets.remove(&ticket);
        self.reply(row.id.as_raw(), reply);
        Ok(())
    }

    fn session_output(
        &mut self,
        ticket: Option<Ticket>,
        out: Result<SessionOutput<'_>, UsageError>,
    ) {
        match out {
            Ok(SessionOutput::Reject(r)) => {
                let code = r.code().0;
                let ticket = ticket.expect("only peer requests are rejected");
                self.answer(ticket, Reply::Error(code))
                    .expect("rejection answers an owed request");
            }
            Ok(SessionOutput::TurnEnded { prompt, stop, .. }) => self.turn_ended(prompt, stop),
            Ok(SessionOutput::TurnFailed { prompt, .. }) => {
                let ReqRef::Peer(t) = prompt else {
                    panic!("agent side turns answer peer prompts")
                };
                assert!(
                    !self.cancelled_prompts.contains(&t),
                    "a cancelled turn must end cancelled"
                );
                self.answer(t, Reply::Error(-32603))
                    .expect("a turn is answered exactly once");
            }
            Ok(SessionOutput::CancelStarted { prompt, answer }) => {
                if let ReqRef::Peer(t) = prompt {
                    self.cancelled_prompts.insert(t);
                }
                self.cancel_pending_of(prompt);
                if answer {
                    self.answer(ticket.expect("cancel request"), Reply::Result)
                        .unwrap();
                }
            }
            Ok(SessionOutput::CancelNoop { answer: true }) => {
                self.answer(ticket.expect("cancel request"), Reply::Result)
                    .unwrap();
            }
            Ok(SessionOutput::Closed {
                ended: Some(ReqRef::Peer(t)),
            }) => {
                self.cancelled_prompts.insert(t);
                self.answer(t, Reply::Stop(StopReason::Cancelled)).unwrap();
                if let Some(ticket) = ticket {
                    self.answer(ticket, Reply::Result).unwrap();
                }
            }
            Ok(SessionOutput::Closed { .. } | SessionOutput::Proceed | SessionOutput::Opened) => {
                if let Some(ticket) = ticket {
                    self.answer(ticket, Reply::Result).unwrap();
                }
            }
            Ok(_) | Err(_) => {}
        }
    }

    fn turn_ended(&mut self, prompt: ReqRef, stop: StopReason) {
        let ReqRef::Peer(ticket) = prompt else {
            panic!("agent side turns answer peer prompts")
        };
        if self.cancelled_prompts.contains(&ticket) {
            assert_eq!(
                stop,
                StopReason::Cancelled,
                "a cancelled turn must end cancelled"
            );
        }
        self.answer(ticket, Reply::Stop(stop))
            .expect("a turn is answered exactly once");
    }

    /// A session's turn was cancelled: settle its permission requests now.
    fn cancel_pending_of(&mut self, prompt: ReqRef) {
        let session = self
            .sessions
            .rows()
            .iter()
            .find(|r| r.state.turn().is_some_and(|t| t.prompt() == prompt))
            .map(|r| r.id.as_str().to_owned());
        if let Some(session) = session {
            self.ours.cancel_session(&session);
            self.drain_ours();
        }
    }

    fn drain_ours(&mut self) {
        for _ in 0..100 {
            let Some(settled) = self.ours.poll_settled() else {
                return;
            };
            *self.our_settlements.entry(settled.id).or_default() += 1;
        }
        panic!("poll_settled never ran dry");
    }

    fn drain_theirs(&mut self) {
        for _ in 0..100 {
            let Some((row, how)) = self.theirs.poll_settled() else {
                return;
            };
            self.tickets.remove(&row.ticket);
            let reply = match how.rejection(row.kind) {
                Some(r) => Reply::Error(r.code().0),
                None if how == Settle::ConnectionClosed => Reply::Stop(StopReason::Cancelled),
                None => Reply::Result,
            };
            self.reply(row.id.as_raw(), reply);
        }
        panic!("poll_settled never ran dry");
    }

    fn tickets_of(&self, kind: MethodKind) -> Vec<Ticket> {
        let mut v: Vec<_> = self
            .theirs
            .rows()
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.ticket)
            .collect();
        v.sort();
        v
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::PeerInitialize(v) => {
                let raw = self.next_peer_id.to_string();
                self.next_peer_id += 1;
                self.peer_requests.push(raw.clone());
                let out = self.handshake.handle(HandshakeInput::PeerInitialize {
                    version: RequestedVersion::Integer(v),
                    capabilities: Capabilities::FS_READ,
                });
                let reply = match out {
                    HandshakeOutput::AnswerInitialize { protocol_version } => {
                        assert_eq!(protocol_version, 1);
                        Reply::Result
                    }
                    HandshakeOutput::Reject(r) => Reply::Error(r.code().0),
                    other => panic!("{other:?}"),
                };
                self.reply(&raw, reply);
            }
            Op::PeerNewSession => {
                if let Some((ticket, _)) = self.receive("session/new", None) {
                    let out = self.sessions.handle(
                        self.now,
                        SessionInput::NewStarted {
                            req: ReqRef::Peer(ticket),
                        },
                    );
                    if let Ok(SessionOutput::Reject(r)) = out {
                        self.answer(ticket, Reply::Error(r.code().0)).unwrap();
                    }
                }
            }
            Op::AppAnswerNew(pick) | Op::AppFailNew(pick) => {
                let tickets = self.tickets_of(MethodKind::NewSession);
                if tickets.is_empty() {
                    return;
                }
                let ticket = tickets[usize::from(pick) % tickets.len()];
                let req = ReqRef::Peer(ticket);
                if matches!(op, Op::AppAnswerNew(_)) {
                    let id = format!("s{}", self.next_session);
                    self.next_session += 1;
                    let out = self
                        .sessions
                        .handle(self.now, SessionInput::Opened { req, id: &id });
                    if out == Ok(SessionOutput::Opened) {
                        self.known_sessions.push(id);
                        self.answer(ticket, Reply::Result).unwrap();
                    } else {
                        // The row is gone (only at EOF) or the table refused: answer an error.
                        let _ = self
                            .sessions
                            .handle(self.now, SessionInput::OpenFailed { req });
                        self.answer(ticket, Reply::Error(-32603)).unwrap();
                    }
                } else {
                    let _ = self
                        .sessions
                        .handle(self.now, SessionInput::OpenFailed { req });
                    self.answer(ticket, Reply::Error(-32603)).unwrap();
                }
            }
            Op::PeerPrompt(pick) => {
                let id = self.session_name(pick);
                if let Some((ticket, _)) = self.receive("session/prompt", Some(&id)) {
                    let out = self.sessions.handle(
                        self.now,
                        SessionInput::Prompt {
                            id: &id,
                            req: ReqRef::Peer(ticket),
                        },
                    );
                    match out {
                        Ok(SessionOutput::TurnStarted { .. }) => {}
                        other => self.session_output(Some(ticket), other),
                    }
                }
            }
            Op::PeerCancel {
                session,
                as_request,
            } => {
                let id = self.session_name(session);
                if as_request {
                    if let Some((ticket, _)) = self.receive("session/cancel", Some(&id)) {
                        let out = self.sessions.handle(
                            self.now,
                            SessionInput::Cancel {
                                id: &id,
                                via: CancelVia::PeerRequest,
                            },
                        );
                        self.session_output(Some(ticket), out);
                    }
                } else if self.handshake.handle(HandshakeInput::PeerNotification)
                    == HandshakeOutput::Proceed
                {
                    let out = self.sessions.handle(
                        self.now,
                        SessionInput::Cancel {
                            id: &id,
                            via: CancelVia::PeerNotification,
                        },
                    );
                    self.session_output(None, out);
                }
            }
            Op::PeerCancelRequest(pick) => {
                // `$/cancel_request` is a notification.
                if self.handshake.handle(HandshakeInput::PeerNotification)
                    != HandshakeOutput::Proceed
                {
                    return;
                }
                let raw = if self.peer_requests.is_empty() {
                    "none".to_owned()
                } else {
                    self.peer_requests[usize::from(pick) % self.peer_requests.len()].clone()
                };
                match self.theirs.handle_cancel_request(&raw) {
                    CancelRequestVerdict::Settling(_) => self.drain_theirs(),
                    CancelRequestVerdict::CancelTurn { ticket } => {
                        let session = self.theirs.get(ticket).and_then(|r| r.session.clone());
                        if let Some(session) = session {
                            let out = self.sessions.handle(
                                self.now,
                                SessionInput::Cancel {
                                    id: session.as_str(),
                                    via: CancelVia::PeerNotification,
                                },
                            );
                            self.session_output(None, out);
                        }
                    }
                    CancelRequestVerdict::Unknown => {}
                }
            }
            Op::PeerSetMode(pick) => {
                let id = self.session_name(pick);
                if let Some((ticket, _)) = self.receive("session/set_mode", Some(&id)) {
                    let out = self.sessions.handle(
                        self.now,
                        SessionInput::Configure {
                            id: &id,
                            method: "session/set_mode",
                            actor: Actor::Peer,
                        },
                    );
                    self.session_output(Some(ticket), out);
                }
            }
            Op::PeerClose(pick) => {
                let id = self.session_name(pick);
                if let Some((ticket, _)) = self.receive("session/close", Some(&id)) {
                    let out = self.sessions.handle(
                        self.now,
                        SessionInput::Close {
                            id: &id,
                            actor: Actor::Peer,
                        },
                    );
                    self.session_output(Some(ticket), out);
                }
            }
            Op::AppEndTurn { session, stop } => {
                let id = self.session_name(session);
                let Some(SessionState::Active { turn: Some(turn) }) = self.sessions.get(&id) else {
                    // Ending a turn that is not running is a usage error, never a panic.
                    let out = self.sessions.handle(
                        self.now,
                        SessionInput::EndTurn {
                            id: &id,
                            prompt: ReqRef::Peer(Ticket(u64::MAX)),
                            stop: StopReason::EndTurn,
                        },
                    );
                    assert!(out.is_err(), "{out:?}");
                    return;
                };
                let stop = StopReason::ALL[usize::from(stop) % StopReason::ALL.len()];
                let out = self.sessions.handle(
                    self.now,
                    SessionInput::EndTurn {
                        id: &id,
                        prompt: turn.prompt(),
                        stop,
                    },
                );
                self.session_output(None, out);
                // A second end of the same turn is refused.
                let again = self.sessions.handle(
                    self.now,
                    SessionInput::EndTurn {
                        id: &id,
                        prompt: turn.prompt(),
                        stop,
                    },
                );
                assert_eq!(again, Err(UsageError::TurnAnswered));
                let again = self.sessions.handle(
                    self.now,
                    SessionInput::FailTurn {
                        id: &id,
                        prompt: turn.prompt(),
                    },
                );
                assert_eq!(again, Err(UsageError::TurnAnswered));
            }
            Op::AppUpdate { session, in_turn } => {
                let id = self.session_name(session);
                let turn = if in_turn {
                    Some(
                        self.sessions
                            .get(&id)
                            .and_then(|s| s.turn())
                            .map_or(ReqRef::Peer(Ticket(u64::MAX)), |t| t.prompt()),
                    )
                } else {
                    None
                };
                let _ = self.sessions.handle(
                    self.now,
                    SessionInput::Update {
                        id: &id,
                        turn,
                        actor: Actor::Local,
                    },
                );
            }
            Op::AppRequestPermission { session, timeout } => {
                let id = self.session_name(session);
                let timeout = timeout.map(|t| Duration::from_millis(u64::from(t)));
                if let Ok(rid) =
                    self.ours
                        .send(self.now, MethodKind::Permission, Some(&id), timeout)
                {
                    self.our_requests.push(rid);
                }
            }
            Op::PeerAnswer { request, how } => {
                let id = if self.our_requests.is_empty() {
                    999
                } else {
                    self.our_requests[usize::from(request) % self.our_requests.len()].0
                };
                let response = match how % 3 {
                    0 => ReplyKind::Result,
                    1 => ReplyKind::Error(acp_core::wire::ErrorCode(-32601)),
                    _ => ReplyKind::Malformed,
                };
                if let ResponseVerdict::Settled(s) =
                    self.ours.handle_response(self.now, Some(id), response)
                {
                    *self.our_settlements.entry(s.id).or_default() += 1;
                }
            }
            Op::Tick(ms) => {
                self.now = Instant(self.now.0 + u64::from(ms));
                self.ours.handle_timeout(self.now);
                if let Some(deadline) = self.ours.poll_timeout() {
                    assert!(
                        deadline > self.now,
                        "poll_timeout {deadline} <= now {}",
                        self.now
                    );
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
            let SessionOutput::TurnEnded { prompt, stop, .. } = out else {
                panic!("{out:?}")
            };
            assert_eq!(stop, StopReason::Cancelled);
            self.turn_ended(prompt, stop);
        }
        assert_eq!(self.sessions.handle_eof(self.now), None);
        self.theirs.handle_eof();
        self.drain_theirs();
        self.ours.handle_eof(self.now);
        self.drain_ours();
    }

    fn check(&self) {
        // Nothing pending after EOF.
        assert!(
            self.theirs.rows().is_empty(),
            "owed: {:?}",
            self.theirs.rows()
        );
        assert!(
            self.ours.rows().is_empty(),
            "pending: {:?}",
            self.ours.rows()
        );
        assert_eq!(self.ours.poll_timeout(), None);
        assert!(
            self.sessions
                .rows()
                .iter()
                .all(|r| r.state == SessionState::Closed)
        );
        // Every peer request answered exactly once.
        for raw in &self.peer_requests {
            let n = self.replies.get(raw).map_or(0, Vec::len);
            assert_eq!(
                n,
                1,
                "request {raw} answered {n} times: {:?}",
                self.replies.get(raw)
            );
        }
        assert_eq!(
            self.replies.len(),
            self.peer_requests.len(),
            "replies to unknown ids"
        );
        // Every request we sent settled exactly once.
        for id in &self.our_requests {
            assert_eq!(self.our_settlements.get(id), Some(&1), "our request {id}");
        }
    }
}

fn run(ops: Vec<Op>) -> bool {
    let mut agent = Agent::new();
    // Most scenarios start with a handshake, so that the rest gets exercised.
    if !ops.len().is_multiple_of(4) {
        agent.apply(&Op::PeerInitialize(1));
    }
    for op in &ops {
        agent.apply(op);
    }
    agent.eof();
    agent.check();
    true
}

#[test]
fn op_sequences_keep_every_promise() {
    QuickCheck::new()
        .tests(2_000)
        .quickcheck(run as fn(Vec<Op>) -> bool);
}

#[test]
fn a_cancelled_turn_with_a_pending_permission_ends_cancelled() {
    use Op::*;
    let ops = vec![
        PeerInitialize(1),
        PeerNewSession,
        AppAnswerNew(0),
        PeerPrompt(0),
        AppRequestPermission {
            session: 0,
            timeout: None,
        },
        PeerCancel {
            session: 0,
            as_request: false,
        },
        PeerAnswer { request: 0, how: 0 },
        AppEndTurn {
            session: 0,
            stop: 0,
        },
    ];
    let mut agent = Agent::new();
    for op in &ops {
        agent.apply(op);
    }
    assert_eq!(agent.our_settlements.get(&RequestId(0)), Some(&1));
    // The prompt (peer id 2) was answered cancelled though the app said end_turn.
    assert_eq!(agent.replies["2"], [Reply::Stop(StopReason::Cancelled)]);
    agent.eof();
    agent.check();
}
