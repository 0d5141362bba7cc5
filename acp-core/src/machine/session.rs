//! The session table of one connection: which sessions exist, whether each is being created,
//! active or closed, and the turn each one runs.
//!
//! The same table serves both sides. Who acts is told by the input: a [`ReqRef::Peer`]
//! prompt was sent by the peer (refusing it is a [`Rejection`] reply), a [`ReqRef::Ours`]
//! prompt is the application's own command (refusing it is a [`UsageError`]).

use super::time::Monotonic;
use super::turn::{self, StopReason, Turn, TurnInput, TurnOutput};
use super::{
    Instant, Rejection, ReqRef, SESSION_ID_MAX, SessionId, Table, UsageError, trace_transition,
};

/// Where one session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionState {
    /// A `session/new` or `session/load` is in flight; the session becomes usable when its
    /// answer is sent (agent side) or received (client side).
    Creating {
        /// The `session/new` or `session/load` request.
        req: ReqRef,
        /// `session/load`: the id is known already, and history replay updates may be sent
        /// before the answer (R-SESSION-6).
        load: bool,
        /// A `session/load` of a session the table knows: its state before, put back if the
        /// load fails (R-SESSION-10); `None` for a new session or an id the table did not know.
        before: Option<Reloaded>,
    },
    /// Usable; runs at most one turn.
    Active {
        /// The turn in progress, if any.
        turn: Option<Turn>,
    },
    /// Closed (`session/close`, EOF). Kept so late messages get "is not active" rather than
    /// "unknown"; evicted first when the table is full.
    Closed,
}

impl SessionState {
    /// The state's name, for traces and transcripts.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Creating { .. } => "Creating",
            Self::Active { turn: None } => "Active",
            Self::Active {
                turn: Some(Turn::Running { .. }),
            } => "Active(Running)",
            Self::Active {
                turn: Some(Turn::Cancelling { .. }),
            } => "Active(Cancelling)",
            Self::Closed => "Closed",
        }
    }

    /// The turn in progress, if any.
    pub const fn turn(&self) -> Option<Turn> {
        match *self {
            Self::Active { turn } => turn,
            _ => None,
        }
    }
}

/// The state a session reloaded by `session/load` (or `session/resume`) was in; a load that
/// fails leaves it there (R-SESSION-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reloaded {
    /// Active without a turn (a session with a turn cannot be reloaded: R-CONFIG-3).
    Idle,
    /// Closed.
    Closed,
}

impl Reloaded {
    const fn state(self) -> SessionState {
        match self {
            Self::Idle => SessionState::Active { turn: None },
            Self::Closed => SessionState::Closed,
        }
    }
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// The session id; empty while a `session/new` is in flight (its id is not known yet).
    pub id: SessionId,
    /// Where it is.
    pub state: SessionState,
}

/// How a `session/cancel` arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelVia {
    /// The peer sent it as a notification (the ACP form): never answered.
    PeerNotification,
    /// The peer sent it as a request: answered `{}` or with an error.
    PeerRequest,
    /// The application cancels (client side).
    Local,
}

/// Who is acting, for inputs that do not carry a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    /// The peer's message: refusals are replies.
    Peer,
    /// The application's command: refusals are [`UsageError`]s.
    Local,
}

/// An input to the session table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionInput<'a> {
    /// A `session/new` is in flight (received: `req` is the peer's; sent: it is ours).
    NewStarted {
        /// The request.
        req: ReqRef,
    },
    /// A `session/load` of `id` is in flight.
    LoadStarted {
        /// The `sessionId` to load.
        id: &'a str,
        /// The request.
        req: ReqRef,
    },
    /// The successful answer to `session/new` or `session/load` went out (agent side: the
    /// application answered) or came in (client side).
    Opened {
        /// The `session/new` or `session/load` request.
        req: ReqRef,
        /// The session id in the answer (for a load, the id being loaded).
        id: &'a str,
    },
    /// The `session/new` or `session/load` failed.
    OpenFailed {
        /// The request.
        req: ReqRef,
    },
    /// A `session/prompt` for `id` (received, or sent by the application).
    Prompt {
        /// The `sessionId`.
        id: &'a str,
        /// The prompt request.
        req: ReqRef,
    },
    /// A `session/cancel` for `id`.
    Cancel {
        /// The `sessionId`.
        id: &'a str,
        /// How it arrived.
        via: CancelVia,
    },
    /// The turn answering `prompt` ends with `stop` (agent side: the application ends it;
    /// client side: the prompt's answer arrived).
    EndTurn {
        /// The `sessionId`.
        id: &'a str,
        /// The prompt request the turn answers.
        prompt: ReqRef,
        /// The stop reason given.
        stop: StopReason,
    },
    /// The turn answering `prompt` ends with an error instead of a stop reason (agent side:
    /// the application answers the prompt with an error; client side: the answer was an
    /// error or malformed). After a cancel it still ends `cancelled`.
    FailTurn {
        /// The `sessionId`.
        id: &'a str,
        /// The prompt request the turn answers.
        prompt: ReqRef,
    },
    /// A change of mode, model or config option (`session/set_mode`,
    /// `session/set_config_option`, `_agentao.cn/set_model`): refused during a turn.
    Configure {
        /// The `sessionId`.
        id: &'a str,
        /// The method, for the refusal text.
        method: &'a str,
        /// Who asks.
        actor: Actor,
    },
    /// A `session/update` for `id` (agent side: about to be sent; client side: received).
    Update {
        /// The `sessionId`.
        id: &'a str,
        /// The turn the update belongs to (its prompt), or `None` for an update outside any
        /// turn (e.g. `available_commands_update`).
        turn: Option<ReqRef>,
        /// Who sends it.
        actor: Actor,
    },
    /// `session/close` (or the application closing a session).
    Close {
        /// The `sessionId`.
        id: &'a str,
        /// Who asks.
        actor: Actor,
    },
}

/// Something the peer sent that breaks the protocol but has no request to answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionViolation {
    /// A `session/update` for a session we do not know.
    UpdateForUnknownSession,
    /// A `session/new` answer with an id that an open session already has.
    DuplicateSessionId,
    /// A `session/new` answer with an id longer than [`SESSION_ID_MAX`].
    SessionIdTooLong,
}

/// What the session table produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionOutput<'a> {
    /// Accepted; carry on (send the message, or hand it to the application).
    Proceed,
    /// Drop it silently (e.g. a `session/cancel` notification for an unknown session).
    Ignore,
    /// Answer the peer's request with this error.
    Reject(Rejection<'a>),
    /// The session is now active.
    Opened,
    /// A turn started: hand the prompt to the application (agent side).
    TurnStarted {
        /// The prompt request.
        prompt: ReqRef,
    },
    /// A cancel reached a running turn: settle the session's pending permission and
    /// ask_user requests as cancelled and tell the application to stop.
    CancelStarted {
        /// The prompt request of the turn.
        prompt: ReqRef,
        /// The cancel was a request: answer it with `{}`.
        answer: bool,
    },
    /// A cancel with nothing to cancel (idle, already cancelling, closed, being created).
    CancelNoop {
        /// The cancel was a request: answer it with `{}`.
        answer: bool,
    },
    /// A turn is over: answer (agent) or report (client) the prompt with `stop`.
    TurnEnded {
        /// The session.
        session: SessionId,
        /// The prompt request.
        prompt: ReqRef,
        /// The stop reason to send or report (`cancelled` after a cancel).
        stop: StopReason,
        /// The given stop reason was replaced by `cancelled`.
        rewritten: bool,
    },
    /// A turn is over with an error: answer (agent) or report (client) the prompt with it.
    TurnFailed {
        /// The session.
        session: SessionId,
        /// The prompt request.
        prompt: ReqRef,
    },
    /// The session is closed; `ended` is the turn it was running, which ends `cancelled`.
    Closed {
        /// The prompt request of the turn that was running, if any.
        ended: Option<ReqRef>,
    },
    /// The peer broke a rule; log it.
    Violation(SessionViolation),
}

/// The session table over storage `S`: `heapless::Vec<Session, N>` without `alloc`
/// ([`FixedSessions`]), `Vec<Session>` with it.
#[derive(Clone, Debug)]
pub struct Sessions<S> {
    rows: S,
    limit: usize,
    clock: Monotonic,
    eof: bool,
}

/// A session table of fixed capacity `N`.
pub type FixedSessions<const N: usize> = Sessions<heapless::Vec<Session, N>>;

impl<const N: usize> Default for FixedSessions<N> {
    fn default() -> Self {
        Self::new(heapless::Vec::new(), N)
    }
}

impl<S: Table<Session>> Sessions<S> {
    /// A table on `rows` (normally empty) holding at most `limit` live sessions (and never
    /// more than the storage can).
    pub fn new(rows: S, limit: usize) -> Self {
        Self {
            rows,
            limit,
            clock: Monotonic::default(),
            eof: false,
        }
    }

    /// Puts a session straight into `state` (fixtures, and sessions restored from disk).
    /// Replaces the state of an existing row with that id.
    pub fn restore(&mut self, id: &str, state: SessionState) -> Result<(), UsageError> {
        let id = SessionId::new(id).ok_or(UsageError::IdTooLong)?;
        if let Some(index) = self.index_of(id.as_str()) {
            self.transition(index, state);
            return Ok(());
        }
        self.push(Session { id, state })
    }

    /// The state of session `id`.
    pub fn get(&self, id: &str) -> Option<SessionState> {
        self.index_of(id).map(|i| self.rows.rows()[i].state)
    }

    /// Every row, in creation order.
    pub fn rows(&self) -> &[Session] {
        self.rows.rows()
    }

    /// Whether [`Sessions::handle_eof`] has been called.
    pub const fn is_eof(&self) -> bool {
        self.eof
    }

    /// Feeds one input at `now`. `Err` only for the application's own misuse; the peer's
    /// mistakes come back as [`SessionOutput::Reject`] or [`SessionOutput::Violation`].
    pub fn handle<'a>(
        &mut self,
        now: Instant,
        input: SessionInput<'a>,
    ) -> Result<SessionOutput<'a>, UsageError> {
        use SessionInput as I;
        use SessionOutput as O;
        use SessionState as S;

        let now = self.clock.observe(now);
        if self.eof {
            // R-RPC-11: after EOF every session is closed; the peer can send
            // nothing more and the application can start nothing new.
            return if self.actor_is_peer(&input) {
                Ok(O::Ignore)
            } else {
                Err(UsageError::Closed)
            };
        }
        // The row the input is about, with its state: the left half of the protocol table.
        let row = self.locate(&input).map(|i| (i, self.rows.rows()[i].state));
        let peer = self.actor_is_peer(&input);

        match (row, input) {
            // session/new: a row without id until the answer names it.
            (_, I::NewStarted { req }) => {
                let row = Session {
                    id: SessionId::default(),
                    state: S::Creating {
                        req,
                        load: false,
                        before: None,
                    },
                };
                match self.push(row) {
                    Ok(()) => Ok(O::Proceed),
                    Err(_) if peer => Ok(O::Reject(Rejection::TooManySessions {
                        limit: self.capacity(),
                    })),
                    Err(e) => Err(e),
                }
            }
            // session/load of an unknown id: the application decides whether it exists; an
            // id too long to store cannot exist (R-SESSION-6: exact match).
            (None, I::LoadStarted { id, req }) => {
                let row = match SessionId::new(id) {
                    Some(sid) => Session {
                        id: sid,
                        state: S::Creating {
                            req,
                            load: true,
                            before: None,
                        },
                    },
                    None if peer => return Ok(O::Reject(Rejection::LoadNotFound { session: id })),
                    None => return Err(UsageError::IdTooLong),
                };
                match self.push(row) {
                    Ok(()) => Ok(O::Proceed),
                    Err(_) if peer => Ok(O::Reject(Rejection::TooManySessions {
                        limit: self.capacity(),
                    })),
                    Err(e) => Err(e),
                }
            }
            // Reloading a session that runs a turn would pull its history away mid-turn:
            // the busy gate (R-CONFIG-3) applies.
            (Some((_, S::Active { turn: Some(_) })), I::LoadStarted { id, .. }) => refuse(
                peer,
                Rejection::Busy {
                    method: "session/load",
                    session: id,
                },
                UsageError::TurnInProgress,
            ),
            // Reloading an idle or closed session starts over from its stored history; the
            // state it leaves is kept for a load that fails.
            (
                Some((i, state @ (S::Active { turn: None } | S::Closed))),
                I::LoadStarted { req, .. },
            ) => {
                let before = match state {
                    S::Closed => Reloaded::Closed,
                    _ => Reloaded::Idle,
                };
                self.transition(
                    i,
                    S::Creating {
                        req,
                        load: true,
                        before: Some(before),
                    },
                );
                Ok(O::Proceed)
            }
            // A second load while one is in flight.
            (Some((_, S::Creating { .. })), I::LoadStarted { id, .. }) => refuse(
                peer,
                Rejection::SessionNotActive { session: id },
                UsageError::SessionNotActive,
            ),
            // The answer to session/new names the id; the session is usable from now on
            // (R-TURN-4: never before the session/new response).
            (Some((i, S::Creating { load: false, .. })), I::Opened { id, .. }) => {
                let existing = self.index_of(id).map(|j| (j, self.rows.rows()[j].state));
                match (SessionId::new(id), existing) {
                    // The agent named the session with an id we cannot store, or one an
                    // open session already has: the session cannot be tracked, so it is
                    // dropped and the peer's mistake reported.
                    (None, _) | (Some(_), Some((_, S::Active { .. } | S::Creating { .. })))
                        if peer =>
                    {
                        self.rows.remove_at(i);
                        Ok(O::Violation(if existing.is_some() {
                            SessionViolation::DuplicateSessionId
                        } else {
                            SessionViolation::SessionIdTooLong
                        }))
                    }
                    // The application's own mistake: nothing changes, it may answer again.
                    (None, _) => Err(UsageError::IdTooLong),
                    (Some(_), Some((_, S::Active { .. } | S::Creating { .. }))) => {
                        Err(UsageError::SessionExists)
                    }
                    // A closed session's id is reused: the new session replaces it.
                    (Some(sid), Some((old, S::Closed))) => {
                        self.rows.rows_mut()[i].id = sid;
                        self.transition(i, S::Active { turn: None });
                        self.rows.remove_at(old);
                        Ok(O::Opened)
                    }
                    (Some(sid), None) => {
                        self.rows.rows_mut()[i].id = sid;
                        self.transition(i, S::Active { turn: None });
                        Ok(O::Opened)
                    }
                }
            }
            // R-SESSION-6: usable for prompts as soon as the response is sent.
            (Some((i, S::Creating { load: true, .. })), I::Opened { .. }) => {
                self.transition(i, S::Active { turn: None });
                Ok(O::Opened)
            }
            // A failed session/new or session/load leaves no session behind; a failed reload
            // leaves the session as it was (R-SESSION-10).
            (Some((i, S::Creating { before, .. })), I::OpenFailed { .. }) => {
                match before {
                    Some(before) => self.transition(i, before.state()),
                    None => {
                        self.rows.remove_at(i);
                    }
                }
                Ok(O::Proceed)
            }
            // The creating row is gone (closed by EOF or close, or answered twice).
            (_, I::Opened { .. } | I::OpenFailed { .. }) => {
                if peer {
                    Ok(O::Ignore)
                } else {
                    Err(UsageError::AlreadySettled)
                }
            }
            // R-SESSION-3: -32600 `unknown sessionId: <id>`.
            (None, I::Prompt { id, .. } | I::Configure { id, .. } | I::Close { id, .. }) => refuse(
                peer,
                Rejection::UnknownSession { session: id },
                UsageError::UnknownSession,
            ),
            // R-SESSION-9 (Agentao's common session gate, step 5): `session <id> is not active`.
            (
                Some((_, S::Creating { .. } | S::Closed)),
                I::Prompt { id, .. } | I::Configure { id, .. },
            ) => refuse(
                peer,
                Rejection::SessionNotActive { session: id },
                UsageError::SessionNotActive,
            ),
            // R-TURN-2: one turn per session, no queue.
            (Some((_, S::Active { turn: Some(_) })), I::Prompt { id, .. }) => refuse(
                peer,
                Rejection::TurnAlreadyActive { session: id },
                UsageError::TurnInProgress,
            ),
            // An idle session starts a turn; other sessions are unaffected (R-TURN-2).
            (Some((i, S::Active { turn: None })), I::Prompt { req, .. }) => {
                self.transition(
                    i,
                    S::Active {
                        turn: Some(Turn::Running { prompt: req }),
                    },
                );
                Ok(O::TurnStarted { prompt: req })
            }
            // R-CANCEL-2: silent as a notification for an unknown session;
            // as a request, -32600 unknown sessionId.
            (None, I::Cancel { id, via }) => match via {
                CancelVia::PeerNotification => Ok(O::Ignore),
                CancelVia::PeerRequest => Ok(O::Reject(Rejection::UnknownSession { session: id })),
                CancelVia::Local => Err(UsageError::UnknownSession),
            },
            // R-CANCEL-2: a closed, idle or still-opening session is cancelled quietly.
            (
                Some((_, S::Creating { .. } | S::Closed | S::Active { turn: None })),
                I::Cancel { via, .. },
            ) => Ok(O::CancelNoop {
                answer: via == CancelVia::PeerRequest,
            }),
            // ACP prompt turn: the running turn moves to cancelling (idempotent).
            (Some((i, S::Active { turn: Some(t) })), I::Cancel { via, .. }) => {
                let answer = via == CancelVia::PeerRequest;
                let (next, out) = turn::step(t, now, TurnInput::Cancel);
                self.transition(i, S::Active { turn: next });
                Ok(match out {
                    TurnOutput::CancelStarted { prompt } => O::CancelStarted { prompt, answer },
                    _ => O::CancelNoop { answer },
                })
            }
            // R-CANCEL-3: the turn ends `cancelled` after a cancel; `end_turn`
            // answers the prompt exactly once.
            (
                Some((i, S::Active { turn: Some(t) })),
                I::EndTurn { prompt, .. } | I::FailTurn { prompt, .. },
            ) if t.prompt() == prompt => {
                let index = i;
                let end = match input {
                    I::EndTurn { stop, .. } => TurnInput::End(stop),
                    _ => TurnInput::Fail,
                };
                let (next, out) = turn::step(t, now, end);
                self.transition(index, S::Active { turn: next });
                let session = self.rows.rows()[index].id.clone();
                Ok(match out {
                    TurnOutput::Ended {
                        prompt,
                        stop,
                        rewritten,
                    } => O::TurnEnded {
                        session,
                        prompt,
                        stop,
                        rewritten,
                    },
                    TurnOutput::Failed { prompt } => O::TurnFailed { session, prompt },
                    TurnOutput::CancelStarted { .. } | TurnOutput::AlreadyCancelling => O::Proceed,
                })
            }
            // The turn was already answered (by end_turn, or as cancelled at close/EOF).
            (
                Some((_, S::Active { .. } | S::Closed)),
                I::EndTurn { prompt, .. } | I::FailTurn { prompt, .. },
            ) => {
                if prompt.is_peer() {
                    Err(UsageError::TurnAnswered)
                } else {
                    Ok(O::Ignore)
                }
            }
            (
                None | Some((_, S::Creating { .. })),
                I::EndTurn { prompt, .. } | I::FailTurn { prompt, .. },
            ) => {
                if prompt.is_peer() {
                    Err(UsageError::NoTurn)
                } else {
                    Ok(O::Ignore)
                }
            }
            // R-CONFIG-3: mode/model/config changes wait for the turn to end.
            (Some((_, S::Active { turn: Some(_) })), I::Configure { id, method, .. }) => refuse(
                peer,
                Rejection::Busy {
                    method,
                    session: id,
                },
                UsageError::TurnInProgress,
            ),
            (Some((_, S::Active { turn: None })), I::Configure { .. }) => Ok(O::Proceed),
            // Updates from the peer for a session we do not know: logged, not answered.
            (
                None,
                I::Update {
                    actor: Actor::Peer, ..
                },
            ) => Ok(O::Violation(SessionViolation::UpdateForUnknownSession)),
            (
                Some(_),
                I::Update {
                    actor: Actor::Peer, ..
                },
            ) => Ok(O::Proceed),
            // R-TURN-4: never before the session/new response (the id is
            // unknown until then).
            (
                None,
                I::Update {
                    actor: Actor::Local,
                    ..
                },
            ) => Err(UsageError::UnknownSession),
            (
                Some((_, S::Closed)),
                I::Update {
                    actor: Actor::Local,
                    ..
                },
            ) => Err(UsageError::SessionNotActive),
            // R-SESSION-6: history replay comes before the answer.
            (
                Some((_, S::Creating { .. })),
                I::Update {
                    actor: Actor::Local,
                    turn,
                    ..
                },
            ) => {
                if turn.is_some() {
                    Err(UsageError::TurnAnswered)
                } else {
                    Ok(O::Proceed)
                }
            }
            // R-TURN-3: updates of a turn come before its answer.
            (
                Some((_, S::Active { turn: current })),
                I::Update {
                    actor: Actor::Local,
                    turn,
                    ..
                },
            ) => match (turn, current) {
                (None, _) => Ok(O::Proceed),
                (Some(p), Some(t)) if t.prompt() == p => Ok(O::Proceed),
                (Some(_), _) => Err(UsageError::TurnAnswered),
            },
            // Closing twice is harmless.
            (Some((_, S::Closed)), I::Close { .. }) => Ok(O::Closed { ended: None }),
            // Closing ends a running turn as cancelled.
            (Some((i, s)), I::Close { .. }) => {
                self.transition(i, S::Closed);
                Ok(O::Closed {
                    ended: s.turn().map(|t| t.prompt()),
                })
            }
        }
    }

    /// The connection reached EOF (R-RPC-11): every running turn ends `cancelled` and
    /// every session closes. Call until it returns `None`; each call reports one ended turn.
    pub fn handle_eof(&mut self, now: Instant) -> Option<SessionOutput<'static>> {
        self.clock.observe(now);
        self.eof = true;
        // Bounded: each pass closes one row or finishes.
        for index in 0..self.rows.rows().len() {
            let row = &self.rows.rows()[index];
            match row.state {
                SessionState::Active { turn: Some(t) } => {
                    let session = row.id.clone();
                    self.transition(index, SessionState::Closed);
                    return Some(SessionOutput::TurnEnded {
                        session,
                        prompt: t.prompt(),
                        stop: StopReason::Cancelled,
                        rewritten: true,
                    });
                }
                SessionState::Active { turn: None } | SessionState::Creating { .. } => {
                    self.transition(index, SessionState::Closed);
                }
                SessionState::Closed => {}
            }
        }
        None
    }

    fn actor_is_peer(&self, input: &SessionInput<'_>) -> bool {
        use SessionInput as I;
        match *input {
            I::NewStarted { req } | I::LoadStarted { req, .. } | I::Prompt { req, .. } => {
                req.is_peer()
            }
            // The answer is produced by whoever did not send the request.
            I::Opened { req, .. } | I::OpenFailed { req } => !req.is_peer(),
            I::EndTurn { prompt, .. } | I::FailTurn { prompt, .. } => !prompt.is_peer(),
            I::Cancel { via, .. } => via != CancelVia::Local,
            I::Configure { actor, .. } | I::Update { actor, .. } | I::Close { actor, .. } => {
                actor == Actor::Peer
            }
        }
    }

    /// The row an input is about: by request for answers to session/new and load, by id
    /// for everything else.
    fn locate(&self, input: &SessionInput<'_>) -> Option<usize> {
        use SessionInput as I;
        match *input {
            I::NewStarted { .. } => None,
            I::Opened { req, .. } | I::OpenFailed { req } => {
                self.rows.rows().iter().position(
                    |r| matches!(r.state, SessionState::Creating { req: q, .. } if q == req),
                )
            }
            I::LoadStarted { id, .. }
            | I::Prompt { id, .. }
            | I::Cancel { id, .. }
            | I::EndTurn { id, .. }
            | I::FailTurn { id, .. }
            | I::Configure { id, .. }
            | I::Update { id, .. }
            | I::Close { id, .. } => self.index_of(id),
        }
    }

    /// The row of session `id`; rows of a `session/new` still in flight have no id yet.
    fn index_of(&self, id: &str) -> Option<usize> {
        if id.len() > SESSION_ID_MAX {
            return None;
        }
        self.rows.rows().iter().position(|r| {
            r.id.as_str() == id && !matches!(r.state, SessionState::Creating { load: false, .. })
        })
    }

    /// The most live sessions: the configured limit, or less if the storage is smaller.
    pub fn capacity(&self) -> usize {
        self.limit.min(self.rows.max_rows())
    }

    /// Adds a row, evicting the oldest closed session when the table is at its limit.
    fn push(&mut self, row: Session) -> Result<(), UsageError> {
        let cap = self.capacity();
        let live = self
            .rows
            .rows()
            .iter()
            .filter(|r| r.state != SessionState::Closed)
            .count();
        if live >= cap {
            return Err(UsageError::TooManyInFlight);
        }
        if self.rows.rows().len() >= cap
            && let Some(old) = self
                .rows
                .rows()
                .iter()
                .position(|r| r.state == SessionState::Closed)
        {
            self.rows.remove_at(old);
        }
        self.rows
            .try_push(row)
            .map_err(|_| UsageError::TooManyInFlight)
    }

    /// The single point where a session changes state.
    fn transition(&mut self, index: usize, to: SessionState) {
        let row = &mut self.rows.rows_mut()[index];
        trace_transition!(row.id, row.state.name(), to.name());
        row.state = to;
    }
}

/// A refusal: a reply when the peer asked, a usage error when the application did.
fn refuse<'a>(
    peer: bool,
    reply: Rejection<'a>,
    local: UsageError,
) -> Result<SessionOutput<'a>, UsageError> {
    if peer {
        Ok(SessionOutput::Reject(reply))
    } else {
        Err(local)
    }
}
