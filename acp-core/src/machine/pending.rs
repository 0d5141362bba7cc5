//! Requests in flight, both directions, each settled exactly once.
//!
//! - [`Pending`]: requests *we* sent, waiting for the peer's answer. Settled by the answer, a
//!   malformed answer, an error, a timeout, a cancel of their session, or EOF (R-RPC-2:
//!   every request we send is settled exactly once).
//! - [`Owing`]: requests the *peer* sent, that we still owe an answer to. Answered by the
//!   application, with `-32800` after `$/cancel_request`, as cancelled when their session is
//!   cancelled, or at EOF ("every request the peer sends gets exactly one response").
//!
//! Settlements that happen without an answer from the peer (timeout, cancel, EOF) are queued
//! inside the table and pulled with `poll_settled()` until `None`.

use core::time::Duration;

use super::time::Monotonic;
use super::{
    Instant, PeerRequestId, Rejection, RequestId, SessionId, Table, Ticket, UsageError,
    trace_transition,
};
use crate::wire::ErrorCode;

/// The methods the machines treat differently; everything else is [`MethodKind::Other`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MethodKind {
    /// `initialize`
    Initialize,
    /// `session/new`
    NewSession,
    /// `session/load`
    LoadSession,
    /// `session/prompt`: cancelling it cancels the turn rather than the request.
    Prompt,
    /// `session/cancel` sent as a request.
    Cancel,
    /// `session/request_permission`: settled as cancelled when its session is cancelled.
    Permission,
    /// `_agentao.cn/ask_user`: settled as cancelled when its session is cancelled.
    AskUser,
    /// `fs/read_text_file`, `fs/write_text_file`.
    Fs,
    /// `terminal/*`.
    Terminal,
    /// Any other method.
    Other,
}

impl MethodKind {
    /// The kind of a method name.
    pub fn of(method: &str) -> Self {
        match method {
            "initialize" => Self::Initialize,
            "session/new" => Self::NewSession,
            "session/load" => Self::LoadSession,
            "session/prompt" => Self::Prompt,
            "session/cancel" => Self::Cancel,
            "session/request_permission" => Self::Permission,
            "_agentao.cn/ask_user" => Self::AskUser,
            m if m.starts_with("fs/") => Self::Fs,
            m if m.starts_with("terminal/") => Self::Terminal,
            _ => Self::Other,
        }
    }

    /// Whether a cancel of the request's session settles it at once (R-CANCEL-3:
    /// every pending permission and ask_user request of that session).
    pub const fn settles_on_session_cancel(self) -> bool {
        matches!(self, Self::Permission | Self::AskUser)
    }
}

/// How a request we sent was settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettledOutcome {
    /// The peer answered with a result (the caller decodes it).
    Answered,
    /// The peer answered with something unreadable: a malformed error object, or a result of
    /// the wrong shape (R-RPC-4: never hang).
    Malformed,
    /// The peer answered with an error.
    Error(ErrorCode),
    /// No answer before the deadline.
    TimedOut,
    /// Its session was cancelled before the answer came.
    Cancelled,
    /// The connection reached EOF before the answer came.
    Disconnected,
}

/// How the peer answered a request of ours, as decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyKind {
    /// A `result`.
    Result,
    /// A well-formed `error`.
    Error(ErrorCode),
    /// An `error` whose `code` is not an integer or `message` not a string, or a response
    /// that has both or neither of `result` and `error`.
    Malformed,
}

/// A request of ours, settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled {
    /// Our id.
    pub id: RequestId,
    /// Its method.
    pub kind: MethodKind,
    /// Its session, if it had one.
    pub session: Option<SessionId>,
    /// How it was settled.
    pub outcome: SettledOutcome,
}

/// Where a request of ours is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutgoingState {
    /// Sent, no answer yet.
    Waiting {
        /// When it times out, if ever.
        deadline: Option<Instant>,
        /// We sent `$/cancel_request` for it; it still settles when its answer comes.
        cancel_sent: bool,
    },
    /// Settled without an answer (timeout, cancel, EOF); waiting for `poll_settled`.
    Settled(SettledOutcome),
    /// Settled and reported; kept so that a late answer is recognised (ignored and
    /// reported) rather than unknown. Evicted first when the table is full.
    Abandoned,
}

impl OutgoingState {
    /// The state's name, for traces and transcripts.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Waiting { .. } => "Waiting",
            Self::Settled(_) => "Settled",
            Self::Abandoned => "Abandoned",
        }
    }
}

/// One request of ours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// Our id.
    pub id: RequestId,
    /// Its method.
    pub kind: MethodKind,
    /// Its session, if it has one.
    pub session: Option<SessionId>,
    /// Where it is.
    pub state: OutgoingState,
}

/// What an answer from the peer did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResponseVerdict {
    /// It settled the request.
    Settled(Settled),
    /// The request had already been settled locally (timed out, cancelled): the answer is
    /// ignored; report it for logging.
    Late {
        /// Our id.
        id: RequestId,
        /// Its method.
        kind: MethodKind,
    },
    /// No request of ours has this id (R-ID-6): ignore it and report it; never answer it.
    Unknown,
}

/// The table of requests we sent, over storage `S`.
#[derive(Clone, Debug)]
pub struct Pending<S> {
    rows: S,
    next_id: u64,
    limit: usize,
    clock: Monotonic,
    eof: bool,
}

/// A table of requests we sent with fixed capacity `N`.
pub type FixedPending<const N: usize> = Pending<heapless::Vec<Outgoing, N>>;

impl<const N: usize> Default for FixedPending<N> {
    fn default() -> Self {
        Self::new(heapless::Vec::new(), N)
    }
}

/// An input to one request of ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutgoingInput {
    /// The peer answered it.
    Reply(ReplyKind),
    /// The clock reached `now`.
    Timeout(Instant),
    /// Its session was cancelled (only fed to permission and ask_user requests of that
    /// session).
    SessionCancelled,
    /// We sent `$/cancel_request` for it.
    CancelRequestSent,
    /// It was registered but never written (another machine refused the command).
    Withdrawn,
    /// The connection reached EOF.
    Eof,
    /// Its local settlement was handed to the application (`eof`: no late answer can come
    /// any more).
    Reported {
        /// The connection has reached EOF.
        eof: bool,
    },
}

/// What one step of a request of ours produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutgoingEffect {
    /// Settled by the answer, now: report this outcome.
    Answered(SettledOutcome),
    /// Settled locally; queued for `poll_settled`.
    Queued,
    /// The settlement queued earlier is reported now.
    Report(SettledOutcome),
    /// An answer to a request already settled locally: ignore it and report it.
    Late,
    /// The input does not apply to this state (e.g. `$/cancel_request` after settlement).
    Refused,
    /// Nothing to do.
    Nothing,
}

/// One transition of a request of ours: the new state (`None`: the row goes away) and what
/// it produced.
pub fn step_outgoing(
    state: OutgoingState,
    input: OutgoingInput,
) -> (Option<OutgoingState>, OutgoingEffect) {
    use OutgoingEffect as E;
    use OutgoingInput as I;
    use OutgoingState as S;
    match (state, input) {
        // R-RPC-4: any answer, even a malformed one, settles the waiting request; Agentao
        // hangs here, we never do.
        (S::Waiting { .. }, I::Reply(response)) => {
            let outcome = match response {
                ReplyKind::Result => SettledOutcome::Answered,
                ReplyKind::Error(code) => SettledOutcome::Error(code),
                ReplyKind::Malformed => SettledOutcome::Malformed,
            };
            (None, E::Answered(outcome))
        }
        // Already settled locally (timeout, cancel): the late answer is ignored and
        // reported (R-ID-6); a settlement not yet reported stays queued.
        (S::Settled(_), I::Reply(_)) => (Some(state), E::Late),
        (S::Abandoned, I::Reply(_)) => (None, E::Late),
        // R-PERM-3: a configurable timeout; deadlines live in the state.
        (
            S::Waiting {
                deadline: Some(d), ..
            },
            I::Timeout(now),
        ) if d <= now => (Some(S::Settled(SettledOutcome::TimedOut)), E::Queued),
        (_, I::Timeout(_)) => (Some(state), E::Nothing),
        // R-CANCEL-3: pending permission and ask_user requests of the session are settled
        // as cancelled at once.
        (S::Waiting { .. }, I::SessionCancelled) => {
            (Some(S::Settled(SettledOutcome::Cancelled)), E::Queued)
        }
        (_, I::SessionCancelled) => (Some(state), E::Nothing),
        // R-CANCEL-4: the sender settles when the answer comes.
        (S::Waiting { deadline, .. }, I::CancelRequestSent) => (
            Some(S::Waiting {
                deadline,
                cancel_sent: true,
            }),
            E::Nothing,
        ),
        (_, I::CancelRequestSent) => (Some(state), E::Refused),
        // Never written, so nobody will answer it: it leaves without a settlement.
        (S::Waiting { .. }, I::Withdrawn) => (None, E::Nothing),
        (_, I::Withdrawn) => (Some(state), E::Refused),
        // R-RPC-11: EOF settles every pending request; nothing can answer late.
        (S::Waiting { .. }, I::Eof) => (Some(S::Settled(SettledOutcome::Disconnected)), E::Queued),
        (S::Settled(_), I::Eof) => (Some(state), E::Nothing),
        (S::Abandoned, I::Eof) => (None, E::Nothing),
        // Reported: kept to recognise a late answer, unless the connection is over.
        (S::Settled(outcome), I::Reported { eof: false }) => {
            (Some(S::Abandoned), E::Report(outcome))
        }
        (S::Settled(outcome), I::Reported { eof: true }) => (None, E::Report(outcome)),
        (_, I::Reported { .. }) => (Some(state), E::Nothing),
    }
}

impl<S: Table<Outgoing>> Pending<S> {
    /// A table on `rows` (normally empty) allowing at most `limit` requests in flight.
    pub fn new(rows: S, limit: usize) -> Self {
        Self {
            rows,
            next_id: 0,
            limit,
            clock: Monotonic::default(),
            eof: false,
        }
    }

    /// Registers a request we are about to send and gives it the next id. `timeout` puts a
    /// deadline on it (`None`: wait for ever, or until cancel or EOF).
    pub fn send(
        &mut self,
        now: Instant,
        kind: MethodKind,
        session: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        let now = self.clock.observe(now);
        if self.eof {
            return Err(UsageError::Closed);
        }
        let session = match session {
            Some(s) => Some(SessionId::new(s).ok_or(UsageError::IdTooLong)?),
            None => None,
        };
        let cap = self.limit.min(self.rows.max_rows());
        if self.in_flight() >= cap {
            return Err(UsageError::TooManyInFlight);
        }
        if self.rows.rows().len() >= cap
            && let Some(old) = self.position(|r| r.state == OutgoingState::Abandoned)
        {
            // Make room by forgetting the oldest abandoned request: its late answer, should
            // it ever come, will be reported as unknown instead of late.
            self.rows.remove_at(old);
        }
        let id = RequestId(self.next_id);
        let deadline = timeout.map(|t| now + t);
        let row = Outgoing {
            id,
            kind,
            session,
            state: OutgoingState::Waiting {
                deadline,
                cancel_sent: false,
            },
        };
        self.rows
            .try_push(row)
            .map_err(|_| UsageError::TooManyInFlight)?;
        self.next_id += 1;
        Ok(id)
    }

    /// The peer answered request `id` (`None`: an id that is not one of ours, such as a
    /// string).
    pub fn handle_response(
        &mut self,
        now: Instant,
        id: Option<u64>,
        response: ReplyKind,
    ) -> ResponseVerdict {
        self.clock.observe(now);
        let Some(index) = id.and_then(|id| self.position(|r| r.id == RequestId(id))) else {
            return ResponseVerdict::Unknown;
        };
        let (id, kind, session) = {
            let row = &self.rows.rows()[index];
            (row.id, row.kind, row.session.clone())
        };
        match self.apply(index, OutgoingInput::Reply(response)) {
            OutgoingEffect::Answered(outcome) => ResponseVerdict::Settled(Settled {
                id,
                kind,
                session,
                outcome,
            }),
            _ => ResponseVerdict::Late { id, kind },
        }
    }

    /// Settles every request whose deadline is at or before `now` as timed out. Spurious
    /// calls do nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        let now = self.clock.observe(now);
        self.apply_all(|_| true, OutgoingInput::Timeout(now));
    }

    /// The earliest deadline of a request still waiting.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.rows
            .rows()
            .iter()
            .filter_map(|r| match r.state {
                OutgoingState::Waiting { deadline, .. } => deadline,
                _ => None,
            })
            .min()
    }

    /// Session `session` was cancelled: its permission and ask_user requests are settled
    /// as cancelled at once (R-CANCEL-3). Returns how many.
    pub fn cancel_session(&mut self, session: &str) -> usize {
        self.apply_all(
            |r| {
                r.kind.settles_on_session_cancel()
                    && r.session.as_ref().is_some_and(|s| s.as_str() == session)
            },
            OutgoingInput::SessionCancelled,
        )
    }

    /// We send `$/cancel_request` for `id`: the request stays waiting and is settled when its
    /// answer (a result or `-32800`) comes (R-CANCEL-4).
    pub fn request_cancel(&mut self, id: RequestId) -> Result<(), UsageError> {
        let index = self
            .position(|r| r.id == id)
            .ok_or(UsageError::AlreadySettled)?;
        match self.apply(index, OutgoingInput::CancelRequestSent) {
            OutgoingEffect::Refused => Err(UsageError::AlreadySettled),
            _ => Ok(()),
        }
    }

    /// Takes back a request registered with [`Pending::send`] but never written, because a
    /// later check refused the command (e.g. the session already runs a turn). Its id is not
    /// reused.
    pub fn withdraw(&mut self, id: RequestId) -> Result<(), UsageError> {
        let index = self
            .position(|r| r.id == id)
            .ok_or(UsageError::AlreadySettled)?;
        match self.apply(index, OutgoingInput::Withdrawn) {
            OutgoingEffect::Refused => Err(UsageError::AlreadySettled),
            _ => Ok(()),
        }
    }

    /// The connection reached EOF: every request still waiting is settled as disconnected
    /// (R-RPC-11), and nothing stays in the table once they are polled.
    pub fn handle_eof(&mut self, now: Instant) {
        self.clock.observe(now);
        self.eof = true;
        self.apply_all(|_| true, OutgoingInput::Eof);
    }

    /// The next request settled without an answer (timeout, cancel, EOF), oldest first. Call
    /// until `None` after `handle_timeout`, `cancel_session` and `handle_eof`.
    #[must_use]
    pub fn poll_settled(&mut self) -> Option<Settled> {
        let index = self.position(|r| matches!(r.state, OutgoingState::Settled(_)))?;
        let (id, kind, session) = {
            let row = &self.rows.rows()[index];
            (row.id, row.kind, row.session.clone())
        };
        match self.apply(index, OutgoingInput::Reported { eof: self.eof }) {
            OutgoingEffect::Report(outcome) => Some(Settled {
                id,
                kind,
                session,
                outcome,
            }),
            _ => None,
        }
    }

    /// The request `id`, if the table still knows it.
    pub fn get(&self, id: RequestId) -> Option<&Outgoing> {
        self.rows.rows().iter().find(|r| r.id == id)
    }

    /// Every row, oldest first.
    pub fn rows(&self) -> &[Outgoing] {
        self.rows.rows()
    }

    /// Requests not yet reported as settled (waiting, or settled and not yet polled).
    pub fn in_flight(&self) -> usize {
        self.rows
            .rows()
            .iter()
            .filter(|r| r.state != OutgoingState::Abandoned)
            .count()
    }

    fn position(&self, pred: impl FnMut(&Outgoing) -> bool) -> Option<usize> {
        self.rows.rows().iter().position(pred)
    }

    /// Feeds `input` to every row `select` picks; returns how many were queued.
    fn apply_all(
        &mut self,
        mut select: impl FnMut(&Outgoing) -> bool,
        input: OutgoingInput,
    ) -> usize {
        let mut queued = 0;
        let mut index = 0;
        // Bounded: every pass removes the row or moves past it.
        while index < self.rows.rows().len() {
            let len = self.rows.rows().len();
            if select(&self.rows.rows()[index])
                && self.apply(index, input) == OutgoingEffect::Queued
            {
                queued += 1;
            }
            if self.rows.rows().len() == len {
                index += 1;
            }
        }
        queued
    }

    /// The single point where a request of ours changes state (or leaves the table).
    fn apply(&mut self, index: usize, input: OutgoingInput) -> OutgoingEffect {
        let row = &mut self.rows.rows_mut()[index];
        let (next, effect) = step_outgoing(row.state, input);
        trace_transition!(row.id, row.state.name(), next.map_or("Gone", |s| s.name()));
        match next {
            Some(state) => row.state = state,
            None => {
                self.rows.remove_at(index);
            }
        }
        effect
    }
}

/// How a request we owe is to be answered without the application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settle {
    /// The peer sent `$/cancel_request`: answer `-32800` ([`Rejection::RequestCancelled`]).
    CancelRequested,
    /// The session was cancelled (client side): answer a permission request with
    /// `{"outcome":{"outcome":"cancelled"}}` and an ask_user request with
    /// `{"outcome":"cancelled"}`.
    SessionCancelled,
    /// EOF: answer `session/prompt` with `{"stopReason":"cancelled"}` and anything else with
    /// `-32800` ([`Rejection::ConnectionClosed`]); the writing side may still be open.
    ConnectionClosed,
}

impl Settle {
    /// The error to answer with, or `None` when the answer is a cancelled *result* (see the
    /// variants).
    pub const fn rejection(self, kind: MethodKind) -> Option<Rejection<'static>> {
        match (self, kind) {
            (Self::CancelRequested, _) => Some(Rejection::RequestCancelled),
            (Self::SessionCancelled, _) | (Self::ConnectionClosed, MethodKind::Prompt) => None,
            (Self::ConnectionClosed, _) => Some(Rejection::ConnectionClosed),
        }
    }
}

/// Where a request we owe is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwedState {
    /// Waiting for the application's answer.
    Open,
    /// To be answered without the application; waiting for `poll_settled`.
    Settling(Settle),
}

/// A request the peer sent us and that we still owe an answer to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owed {
    /// Our handle for it.
    pub ticket: Ticket,
    /// Its id, to echo.
    pub id: PeerRequestId,
    /// Its method.
    pub kind: MethodKind,
    /// Its session, if it has one.
    pub session: Option<SessionId>,
    /// Where it is.
    pub state: OwedState,
}

/// What receiving a peer request did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// Registered: it will be answered exactly once through this ticket.
    Owed(Ticket),
    /// Refused at once: answer it with this error (it is not registered).
    Reject(Rejection<'static>),
}

/// What a `$/cancel_request` from the peer did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelRequestVerdict {
    /// The request will be answered `-32800`: drain `poll_settled`, and tell the application
    /// to stop working on it.
    Settling(Ticket),
    /// It is a `session/prompt`: cancel its session's turn instead (the turn then ends
    /// `cancelled` and the prompt is answered normally).
    CancelTurn {
        /// The prompt's ticket.
        ticket: Ticket,
    },
    /// Nothing we owe has that id (already answered, or never sent): ignore it.
    Unknown,
}

/// The table of peer requests we owe an answer to, over storage `S`.
#[derive(Clone, Debug)]
pub struct Owing<S> {
    rows: S,
    next_ticket: u64,
    limit: usize,
    eof: bool,
}

/// A table of owed peer requests with fixed capacity `N`.
pub type FixedOwing<const N: usize> = Owing<heapless::Vec<Owed, N>>;

impl<const N: usize> Default for FixedOwing<N> {
    fn default() -> Self {
        Self::new(heapless::Vec::new(), N)
    }
}

/// An input to one request we owe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwedInput {
    /// The application answers it.
    AppAnswer,
    /// The peer sent `$/cancel_request` for it.
    CancelRequest,
    /// We cancelled its session (only fed to permission and ask_user requests of that
    /// session).
    SessionCancelled,
    /// The connection reached EOF.
    Eof,
    /// Its automatic answer is handed out for sending.
    Reported,
}

/// What one step of a request we owe produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwedEffect {
    /// The application's answer goes out; the row is gone.
    Answered,
    /// To be answered automatically; queued for `poll_settled`.
    Queued,
    /// The automatic answer goes out now; the row is gone.
    Report(Settle),
    /// A `$/cancel_request` for a prompt: cancel the turn instead.
    CancelTurn,
    /// It was already settled (the application may not answer it any more).
    Refused,
    /// Nothing to do.
    Nothing,
}

/// One transition of a request we owe: the new state (`None`: the row goes away, answered)
/// and what it produced.
pub fn step_owed(
    kind: MethodKind,
    state: OwedState,
    input: OwedInput,
) -> (Option<OwedState>, OwedEffect) {
    use OwedEffect as E;
    use OwedInput as I;
    use OwedState as S;
    match (state, input) {
        // R-RPC-1: every peer request gets exactly one response; this is the app's.
        (S::Open, I::AppAnswer) => (None, E::Answered),
        // Settled without the app (cancel, EOF): its answer is a usage error.
        (S::Settling(_), I::AppAnswer) => (Some(state), E::Refused),
        // A prompt is cancelled through its turn, which then ends `cancelled` and answers
        // normally (R-CANCEL-4).
        (S::Open, I::CancelRequest) if kind == MethodKind::Prompt => (Some(state), E::CancelTurn),
        // R-CANCEL-4: the receiver settles that request with -32800.
        (S::Open, I::CancelRequest) => (Some(S::Settling(Settle::CancelRequested)), E::Queued),
        (S::Settling(_), I::CancelRequest) => (Some(state), E::Nothing),
        // R-CANCEL-3 (client side): pending permission and ask_user requests are answered
        // as cancelled at once.
        (S::Open, I::SessionCancelled) => (Some(S::Settling(Settle::SessionCancelled)), E::Queued),
        (S::Settling(_), I::SessionCancelled) => (Some(state), E::Nothing),
        // R-RPC-11: responses produced during the shutdown drain are still written.
        (S::Open, I::Eof) => (Some(S::Settling(Settle::ConnectionClosed)), E::Queued),
        (S::Settling(_), I::Eof) => (Some(state), E::Nothing),
        (S::Settling(how), I::Reported) => (None, E::Report(how)),
        (S::Open, I::Reported) => (Some(state), E::Nothing),
    }
}

impl<S: Table<Owed>> Owing<S> {
    /// A table on `rows` (normally empty) owing at most `limit` answers at once.
    pub fn new(rows: S, limit: usize) -> Self {
        Self {
            rows,
            next_ticket: 0,
            limit,
            eof: false,
        }
    }

    /// The peer sent a request with id `raw_id` (its raw JSON text).
    pub fn receive(&mut self, raw_id: &str, kind: MethodKind, session: Option<&str>) -> Received {
        let limit = self.limit.min(self.rows.max_rows());
        if self.eof {
            return Received::Reject(Rejection::ConnectionClosed);
        }
        let Some(id) = PeerRequestId::new(raw_id) else {
            return Received::Reject(Rejection::IdTooLong);
        };
        if self.rows.rows().len() >= limit {
            return Received::Reject(Rejection::TooManyRequests { limit });
        }
        // A session id too long to store cannot name a session: the request will be
        // refused as unknown anyway, so it does not need to be cancellable by session.
        let session = session.and_then(SessionId::new);
        let ticket = Ticket(self.next_ticket);
        let row = Owed {
            ticket,
            id,
            kind,
            session,
            state: OwedState::Open,
        };
        if self.rows.try_push(row).is_err() {
            return Received::Reject(Rejection::TooManyRequests { limit });
        }
        self.next_ticket += 1;
        Received::Owed(ticket)
    }

    /// The application answers `ticket`: returns what the answer must carry (the id to
    /// echo). Each ticket can be answered once; a ticket already answered, or settled
    /// without the application (cancel, EOF), is [`UsageError::AlreadySettled`].
    pub fn answer(&mut self, ticket: Ticket) -> Result<Owed, UsageError> {
        let index = self
            .position(|r| r.ticket == ticket)
            .ok_or(UsageError::AlreadySettled)?;
        let row = self.rows.rows()[index].clone();
        match self.apply(index, OwedInput::AppAnswer) {
            OwedEffect::Answered => Ok(row),
            _ => Err(UsageError::AlreadySettled),
        }
    }

    /// The peer sent `$/cancel_request` for `raw_id` (R-CANCEL-4: the receiver settles
    /// that request with `-32800`, or its normal result if already done).
    pub fn handle_cancel_request(&mut self, raw_id: &str) -> CancelRequestVerdict {
        let Some(index) = self.position(|r| r.id.as_raw() == raw_id && r.state == OwedState::Open)
        else {
            return CancelRequestVerdict::Unknown;
        };
        let ticket = self.rows.rows()[index].ticket;
        match self.apply(index, OwedInput::CancelRequest) {
            OwedEffect::CancelTurn => CancelRequestVerdict::CancelTurn { ticket },
            OwedEffect::Queued => CancelRequestVerdict::Settling(ticket),
            _ => CancelRequestVerdict::Unknown,
        }
    }

    /// We cancelled session `session` (client side): the agent's permission and ask_user
    /// requests for it are answered as cancelled at once. Returns how many.
    pub fn cancel_session(&mut self, session: &str) -> usize {
        let mut queued = 0;
        for index in 0..self.rows.rows().len() {
            let row = &self.rows.rows()[index];
            if row.kind.settles_on_session_cancel()
                && row.session.as_ref().is_some_and(|s| s.as_str() == session)
                && self.apply(index, OwedInput::SessionCancelled) == OwedEffect::Queued
            {
                queued += 1;
            }
        }
        queued
    }

    /// EOF: every request still owed is answered without the application.
    pub fn handle_eof(&mut self) {
        self.eof = true;
        for index in 0..self.rows.rows().len() {
            let _ = self.apply(index, OwedInput::Eof);
        }
    }

    /// The next request to answer without the application, oldest first, removed from the
    /// table. Call until `None` after `handle_cancel_request`, `cancel_session` and
    /// `handle_eof`.
    #[must_use]
    pub fn poll_settled(&mut self) -> Option<(Owed, Settle)> {
        let index = self.position(|r| matches!(r.state, OwedState::Settling(_)))?;
        let row = self.rows.rows()[index].clone();
        match self.apply(index, OwedInput::Reported) {
            OwedEffect::Report(how) => Some((row, how)),
            _ => None,
        }
    }

    /// The request behind `ticket`, while it is owed.
    pub fn get(&self, ticket: Ticket) -> Option<&Owed> {
        self.rows.rows().iter().find(|r| r.ticket == ticket)
    }

    /// Every request still owed, oldest first.
    pub fn rows(&self) -> &[Owed] {
        self.rows.rows()
    }

    /// Whether [`Owing::handle_eof`] has been called.
    pub const fn is_eof(&self) -> bool {
        self.eof
    }

    fn position(&self, pred: impl FnMut(&Owed) -> bool) -> Option<usize> {
        self.rows.rows().iter().position(pred)
    }

    /// The single point where an owed request changes state (or leaves the table).
    fn apply(&mut self, index: usize, input: OwedInput) -> OwedEffect {
        let row = &mut self.rows.rows_mut()[index];
        let (next, effect) = step_owed(row.kind, row.state, input);
        trace_transition!(row.ticket, row.state, next);
        match next {
            Some(state) => row.state = state,
            None => {
                self.rows.remove_at(index);
            }
        }
        effect
    }
}
