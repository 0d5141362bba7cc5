//! The agent side of ACP: [`AgentConnection`], a sans-IO connection that owns the protocol
//! while the application owns the work.
//!
//! Peer bytes go in through [`AgentConnection::handle_bytes`]; the connection answers what it
//! can by itself (the handshake, every invalid request, cancellations, EOF) and hands the
//! rest to the application as [`AgentEvent`]s. The application answers with commands
//! (`accept_new_session`, `send_update`, `end_turn`, `request_permission`, …), each of which
//! either queues exactly the lines the protocol allows or returns a [`UsageError`] and
//! changes nothing.
//!
//! The rules enforced are the agent's rules of docs/protocol.md (R-INIT-*, R-AUTH-*, R-SESSION-*,
//! R-TURN-*, R-CANCEL-*, R-PERM-*, R-ASK-*, R-CONFIG-*, R-MODE-*, R-FS-1); the state lives in
//! the [`machine`] tables (handshake, sessions and turns, requests owed and pending, permission
//! memory).
//!
//! [`machine`]: crate::machine

mod asks;
mod auth;
mod config;
mod event;
mod inbound;
mod outcome;
mod state;
mod update;
mod wire_out;

use core::fmt;
use core::time::Duration;

pub use asks::RawToolCall;
pub use auth::{
    AUTH_ID_MAX, AUTH_METHODS_MAX, AUTH_REQUIRED_MESSAGE, AUTH_TEXT_MAX, AuthKind, AuthMethodList,
    AuthMethodRef, AuthMethodSpec, AuthRefused,
};
pub use config::{
    AgentConfig, AgentFeatures, AgentInfo, Dialect, EXTENSION_DESCRIPTION_MAX, EXTENSION_NAME_MAX,
    EXTENSIONS_MAX, Extension, Limits,
};
#[cfg(feature = "alloc")]
pub use event::ResponseError;
pub use event::{AgentEvent, ClientViolation, METHOD_MAX, Params};
pub use outcome::TurnEnd;
pub use state::{Announced, Asked, AskedKind, TOOL_CALL_ID_MAX};
pub use update::{RawUpdate, TURN_KINDS, Update};
pub use wire_out::{ASK_USER_DESCRIPTION, SET_MODEL_DESCRIPTION};

use super::transport::{Outbox, REPLY_RESERVE, Transport};
#[cfg(feature = "alloc")]
pub use crate::conn::storage::Growable;
pub use crate::conn::storage::{Buffers, Fixed};
use crate::machine::handshake::{Capabilities, Handshake};
use crate::machine::pending::{MethodKind, Owing, Pending, Settled};
use crate::machine::permission::{self, PermissionDecision, PermissionMemory, PermissionReply};
use crate::machine::session::{SessionInput, SessionOutput, SessionState, Sessions};
use crate::machine::time::Monotonic;
use crate::machine::turn::StopReason;
use crate::machine::{Instant, Rejection, ReqRef, RequestId, SessionId, Table, Ticket, UsageError};
use crate::view::{ClientRequestView, ViewError};
use crate::wire::encode::{self, TextChunkKind};
use crate::wire::frame::Framer;
use crate::wire::{ErrorCode, RawValue};
use state::Asked as AskedRow;
use wire_out::{
    CancelRequestParams, ModeResult, ModeUpdate, SessionIdResult, StopResult, UpdateParams,
};

/// The agent side of one ACP connection.
///
/// # Call order
///
/// 1. Feed one input: [`handle_bytes`](Self::handle_bytes) (peer bytes),
///    [`handle_timeout`](Self::handle_timeout) (the deadline from `poll_timeout` passed) or
///    [`handle_eof`](Self::handle_eof) (stdin closed).
/// 2. Drain [`poll_event`](Self::poll_event) until `None`, acting on each event with
///    commands (commands may be issued at any time between inputs).
/// 3. Write out [`poll_transmit`](Self::poll_transmit) and report what was written with
///    [`transmitted`](Self::transmitted) — as much as the writer takes in one go.
/// 4. Wait for the next input, or [`poll_timeout`](Self::poll_timeout), whichever is first.
///
/// Debug builds check step 2: feeding an input while events are still queued panics. In every
/// build, the [`Params`] of an event read after the next input are `None`.
/// `handle_bytes` returns how many bytes it took; it takes fewer only under backpressure
/// (the outbox is full, the event queue cannot take another line's events, or a request's
/// params are kept for the events of this input: one request line per input). Keep the rest,
/// write out, drain, and feed it again; when everything was taken but
/// [`is_input_held`](Self::is_input_held) is true, call `handle_bytes(now, &[])` after
/// writing out.
///
/// ```
/// use acp_core::conn::agent::{AgentConfig, AgentConnection, AgentEvent, AgentInfo};
/// use acp_core::machine::turn::StopReason;
/// use acp_core::Instant;
///
/// let mut agent: AgentConnection<acp_core::conn::Fixed<4096, 4096, 1, 2, 4>> =
///     AgentConnection::new(AgentConfig::new(AgentInfo::new("demo", "Demo", "0.1.0")));
/// let mut wire = Vec::new();
/// let input = concat!(
///     r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#, "\n",
///     r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#, "\n",
/// );
/// let now = Instant(0);
/// // One request line is taken per call (its params are kept for the events of this input):
/// // drain, write out, and feed the rest again until everything was taken.
/// let feed = |agent: &mut AgentConnection<_>, input: &[u8], wire: &mut Vec<u8>| {
///     let mut rest = input;
///     loop {
///         rest = &rest[agent.handle_bytes(now, rest)..];
///         while let Some(event) = agent.poll_event() {
///             match event {
///                 AgentEvent::NewSession { ticket, .. } => {
///                     agent.accept_new_session_id(ticket, "s1").unwrap();
///                 }
///                 AgentEvent::Prompt { session, .. } => {
///                     let chunk = acp_core::conn::agent::RawUpdate::new(
///                         r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}"#,
///                     ).unwrap();
///                     agent.send_update(session.as_str(), &chunk).unwrap();
///                     agent.end_turn(session.as_str(), StopReason::EndTurn).unwrap();
///                 }
///                 _ => {}
///             }
///         }
///         let n = agent.poll_transmit().len();
///         wire.extend_from_slice(agent.poll_transmit());
///         agent.transmitted(n);
///         if rest.is_empty() && !agent.is_input_held() {
///             return;
///         }
///     }
/// };
/// feed(&mut agent, input.as_bytes(), &mut wire);
/// let prompt = concat!(
///     r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}"#,
///     "\n"
/// );
/// feed(&mut agent, prompt.as_bytes(), &mut wire);
/// let text = String::from_utf8(wire).unwrap();
/// assert!(text.ends_with("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}\n"));
/// ```
pub struct AgentConnection<B: Buffers> {
    transport: Transport<B::Input, B::Output>,
    core: Core<B>,
}

/// Everything but the transport, so peer lines (borrowed from the framer) can be routed
/// while the core is borrowed mutably.
pub(crate) struct Core<B: Buffers> {
    config: AgentConfig,
    handshake: Handshake,
    sessions: Sessions<B::Sessions>,
    owing: Owing<B::Owing>,
    pending: Pending<B::Pending>,
    memory: PermissionMemory<B::Memory>,
    events: B::Events,
    announced: B::Announced,
    asked: B::Asked,
    clock: Monotonic,
    /// Events lost because a fixed queue was full (never happens with growable storage).
    dropped_events: u64,
    /// `handle_eof` has run.
    eof: bool,
    /// Complete lines wait in the framer because of backpressure.
    held: bool,
    /// Inputs seen, so a [`Params`] handle of an earlier input reads as nothing.
    input: u32,
    /// The params of the line being routed, to keep once routing is done (address, length).
    to_keep: Option<(usize, usize)>,
    /// Where the kept params are in the framer's storage (start, length).
    kept: Option<(usize, usize)>,
    /// A successful `authenticate` answer was sent, and no `logout` answer since (R-AUTH-3).
    authenticated: bool,
    /// `authenticate` (`true`) and `logout` (`false`) requests handed over and not answered
    /// yet: their successful answer flips [`Self::authenticated`].
    auth_owed: heapless::Vec<(Ticket, bool), AUTH_OWED_MAX>,
}

/// Most `authenticate` and `logout` requests handed over at once (more: `-32603`, R-RPC-6).
pub(super) const AUTH_OWED_MAX: usize = 4;

impl<B: Buffers> fmt::Debug for AgentConnection<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentConnection")
            .field("transport", &self.transport)
            .field("handshake", &self.core.handshake.state())
            .field("sessions", &self.core.sessions.rows().len())
            .field("owed", &self.core.owing.rows().len())
            .field("pending", &self.core.pending.in_flight())
            .field("events", &self.core.events.rows().len())
            .field("eof", &self.core.eof)
            .finish()
    }
}

impl<B: Buffers> AgentConnection<B> {
    /// A connection that has seen nothing yet.
    pub fn new(config: AgentConfig) -> Self {
        let limits = config.limits;
        let transport = Transport::new(
            Framer::new(B::Input::default(), limits.max_line),
            Outbox::new(
                B::Output::default(),
                limits.outbox_limit,
                limits.outbox_high_water,
            ),
        );
        let core = Core {
            handshake: Handshake::new(config.features.capabilities()),
            sessions: Sessions::new(B::Sessions::default(), limits.max_sessions),
            owing: Owing::new(B::Owing::default(), limits.max_owed),
            pending: Pending::new(B::Pending::default(), limits.max_pending),
            memory: PermissionMemory::new(B::Memory::default(), limits.max_pending.max(16)),
            events: B::Events::default(),
            announced: B::Announced::default(),
            asked: B::Asked::default(),
            clock: Monotonic::default(),
            dropped_events: 0,
            eof: false,
            held: false,
            input: 0,
            to_keep: None,
            kept: None,
            authenticated: false,
            auth_owed: heapless::Vec::new(),
            config,
        };
        Self { transport, core }
    }

    // ----- inputs -----

    /// Peer bytes arrived at `now`. Returns how many were taken (fewer only under
    /// backpressure; see the [call order](Self#call-order)). Peer garbage is answered
    /// automatically and reported as [`AgentEvent::PeerViolation`]; it is never an error.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> usize {
        self.check_drained();
        self.core.next_input();
        let now = self.core.clock.observe(now);
        let mut rest = bytes;
        self.process_lines(now, &mut rest);
        bytes.len() - rest.len()
    }

    /// One whole message arrived at `now` on a message transport (a WebSocket text frame,
    /// an SSE event's data, an HTTP body; R-MSG-1): the frame is the message, no newline
    /// ends it. Returns `false` and takes nothing while the outbox or the event queue lacks
    /// room or an earlier input still waits: drain the events, write out, and give the same
    /// message again. Everything else is as for a line of [`handle_bytes`](Self::handle_bytes).
    pub fn handle_message(&mut self, now: Instant, message: &[u8]) -> bool {
        self.check_drained();
        self.core.next_input();
        let now = self.core.clock.observe(now);
        let mut nothing: &[u8] = &[];
        if self.transport.buffered_input() > 0 {
            // Input fed earlier waits (backpressure): it goes first, this message later.
            self.process_lines(now, &mut nothing);
            return false;
        }
        if !self.core.has_room_for_line(self.transport.outbox_ref())
            || !self.transport.feed_message(message)
        {
            return false;
        }
        self.process_lines(now, &mut nothing);
        true
    }

    /// The peer's input ended (stdin closed, SIGTERM). A last line without newline is
    /// processed; then every running turn is answered `cancelled`, every request of ours is
    /// settled, every request still owed is answered, [`AgentEvent::SaveSession`] names each
    /// open session and [`AgentEvent::Closed`] comes last. Nothing is pending afterwards.
    pub fn handle_eof(&mut self, now: Instant) {
        self.check_drained();
        if self.core.eof {
            return;
        }
        self.core.next_input();
        let now = self.core.clock.observe(now);
        self.transport.finish();
        self.core.held = false;
        // Bounded by the lines in the framer (at most the last, unterminated one);
        // backpressure does not apply any more.
        while let Some((incoming, out)) = self.transport.next_incoming() {
            self.core.on_incoming(now, incoming, out);
            self.keep_params(&[]);
        }
        self.core.on_eof(now, self.transport.outbox());
    }

    /// The clock reached `now`: requests of ours past their deadline are settled (a
    /// permission as rejected, an ask_user with the sentinel). Spurious calls do nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.check_drained();
        self.core.next_input();
        let now = self.core.clock.observe(now);
        self.core.pending.handle_timeout(now);
        self.core.drain_settled();
    }

    // ----- outputs -----

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<AgentEvent> {
        if self.core.events.rows().is_empty() {
            return None;
        }
        Some(self.core.events.remove_at(0))
    }

    /// Bytes to write: whole lines, in order. Report what was written with
    /// [`transmitted`](Self::transmitted).
    #[must_use]
    pub fn poll_transmit(&self) -> &[u8] {
        self.transport.outbox_ref().pending()
    }

    /// The next message to send on a message transport: [`poll_transmit`](Self::poll_transmit)'s
    /// first line without its newline (R-MSG-2). Report it sent with
    /// [`transmitted_message`](Self::transmitted_message).
    #[must_use]
    pub fn poll_transmit_message(&self) -> Option<&[u8]> {
        self.transport.outbox_ref().next_message()
    }

    /// The message [`poll_transmit_message`](Self::poll_transmit_message) gave was sent.
    pub fn transmitted_message(&mut self) {
        self.transport.outbox().consume_message();
    }

    /// The first `n` bytes of [`poll_transmit`](Self::poll_transmit) were written.
    pub fn transmitted(&mut self, n: usize) {
        self.transport.outbox().consume(n);
    }

    /// The outbox itself (to batch writes or inspect the high-water mark).
    pub fn outbox(&mut self) -> &mut Outbox<B::Output> {
        self.transport.outbox()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.core.pending.poll_timeout()
    }

    // ----- getters -----

    /// Whether complete peer lines wait because of backpressure: write out, then call
    /// `handle_bytes(now, &[])`.
    pub fn is_input_held(&self) -> bool {
        self.core.held
    }

    /// Whether `handle_eof` has run.
    pub fn is_closed(&self) -> bool {
        self.core.eof
    }

    /// The handshake machine (initialized? the client's capabilities).
    pub fn handshake(&self) -> &Handshake {
        &self.core.handshake
    }

    /// The state of session `id`.
    pub fn session_state(&self, id: &str) -> Option<SessionState> {
        self.core.sessions.get(id)
    }

    /// Peer requests still owed an answer.
    pub fn requests_owed(&self) -> usize {
        self.core.owing.rows().len()
    }

    /// The wire id (raw JSON text, e.g. `7` or `"abc"`) of a request still owed.
    pub fn peer_request_id(&self, ticket: Ticket) -> Option<&str> {
        self.core.owing.get(ticket).map(|o| o.id.as_raw())
    }

    /// Requests of ours not yet settled and reported.
    pub fn requests_in_flight(&self) -> usize {
        self.core.pending.in_flight()
    }

    /// Whether updates may be sent now (the outbox is under its high-water mark).
    pub fn has_room_for_updates(&self) -> bool {
        self.transport.outbox_ref().has_room_for_updates()
    }

    /// Events lost because a fixed event queue was full (always 0 with growable storage).
    pub fn dropped_events(&self) -> u64 {
        self.core.dropped_events
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.core.config
    }

    // ----- params of the events of the last input -----

    /// The raw JSON text of an event's params (`{}` for a request without params); `None`
    /// for a handle of an earlier input (params are kept until the next input only). The
    /// check is made in every build: a stale handle never reads as other params or as none.
    pub fn params(&self, params: Params) -> Option<&str> {
        if params == Params::NONE {
            return Some("{}");
        }
        let (start, len) = self.core.kept?;
        if params.input != self.core.input
            || (params.start as usize, params.len as usize) != (start, len)
        {
            return None;
        }
        core::str::from_utf8(self.transport.kept(start, len)).ok()
    }

    /// An event's params as a JSON value to read with [`crate::wire::json`]; `None` for a
    /// handle of an earlier input.
    pub fn params_value(&self, params: Params) -> Option<RawValue<'_>> {
        crate::wire::json::parse_value(self.params(params)?).ok()
    }

    /// An event's params as the borrowed view of request `method` (`initialize`,
    /// `session/new`, `session/prompt`; other methods are [`ViewErrorKind::NoView`]).
    ///
    /// [`ViewErrorKind::NoView`]: crate::view::ViewErrorKind::NoView
    pub fn request_view<'s>(
        &'s self,
        method: &'s str,
        params: Params,
    ) -> Option<Result<ClientRequestView<'s>, ViewError<'s>>> {
        let value = self.params_value(params)?;
        Some(ClientRequestView::decode(method, Some(value)))
    }

    /// An event's params as the owned request `method` of [`crate::schema`]; `None` for a
    /// handle of an earlier input.
    #[cfg(feature = "alloc")]
    pub fn request(&self, method: &str, params: Params) -> Option<crate::schema::ClientRequest> {
        crate::schema::ClientRequest::decode(method, Some(self.params(params)?)).ok()
    }

    /// The owned `initialize` request of [`AgentEvent::Initialized`].
    #[cfg(feature = "alloc")]
    pub fn initialize_request(&self, params: Params) -> Option<crate::schema::InitializeRequest> {
        match self.request("initialize", params)? {
            crate::schema::ClientRequest::Initialize(request) => Some(request),
            _ => None,
        }
    }

    /// The owned `session/new` request of [`AgentEvent::NewSession`].
    #[cfg(feature = "alloc")]
    pub fn new_session_request(&self, params: Params) -> Option<crate::schema::NewSessionRequest> {
        match self.request("session/new", params)? {
            crate::schema::ClientRequest::NewSession(request) => Some(request),
            _ => None,
        }
    }

    /// The content blocks of [`AgentEvent::Prompt`]; `None` for a handle of an earlier input
    /// (never an empty prompt in its place).
    #[cfg(feature = "alloc")]
    pub fn prompt(&self, params: Params) -> Option<alloc::vec::Vec<crate::schema::ContentBlock>> {
        match self.request("session/prompt", params)? {
            crate::schema::ClientRequest::Prompt(request) => Some(request.prompt),
            _ => None,
        }
    }

    // ----- fixtures -----

    /// Puts the connection straight into "initialized, the client advertised `client`"
    /// (smoltcp-style fixtures for tests, or a connection handed over mid-life).
    pub fn restore_handshake(&mut self, client: Capabilities) {
        self.core.handshake = Handshake::with_state(
            self.core.config.features.capabilities(),
            crate::machine::handshake::HandshakeState::Initialized {
                protocol_version: crate::machine::handshake::PROTOCOL_VERSION,
                peer: client,
            },
        );
    }

    /// Adds an active, idle session `id` without a `session/new` (fixtures, or sessions
    /// restored from disk).
    pub fn restore_session(&mut self, id: &str) -> Result<(), UsageError> {
        self.core.live()?;
        if self.core.sessions.get(id).is_some() {
            return Err(UsageError::SessionExists);
        }
        self.core
            .sessions
            .restore(id, SessionState::Active { turn: None })
    }

    // ----- commands: sessions -----

    /// Answers `session/new` with `{"sessionId":…}`; the session is usable (for prompts and
    /// updates) from now on.
    pub fn accept_new_session_id(
        &mut self,
        ticket: Ticket,
        session_id: &str,
    ) -> Result<(), UsageError> {
        self.accept_new(ticket, session_id, &SessionIdResult { session_id })
    }

    /// Answers `session/new` with a full result (`sessionId`, `modes`, `configOptions`).
    #[cfg(feature = "alloc")]
    pub fn accept_new_session(
        &mut self,
        ticket: Ticket,
        result: &crate::schema::NewSessionResponse,
    ) -> Result<(), UsageError> {
        self.accept_new(ticket, &result.session_id, result)
    }

    fn accept_new<R: serde::Serialize + ?Sized>(
        &mut self,
        ticket: Ticket,
        session_id: &str,
        result: &R,
    ) -> Result<(), UsageError> {
        let core = &mut self.core;
        core.live()?;
        let id = core.owed_of(ticket, |k| k == MethodKind::NewSession)?;
        if SessionId::new(session_id).is_none() {
            return Err(UsageError::IdTooLong);
        }
        if matches!(
            core.sessions.get(session_id),
            Some(SessionState::Active { .. } | SessionState::Creating { .. })
        ) {
            return Err(UsageError::SessionExists);
        }
        wire_out::result(self.transport.outbox(), id.as_raw(), result)?;
        let opened = core.sessions.handle(
            core.clock.latest(),
            SessionInput::Opened {
                req: ReqRef::Peer(ticket),
                id: session_id,
            },
        );
        debug_assert!(opened.is_ok(), "checked above: {opened:?}");
        let _ = core.owing.answer(ticket);
        Ok(())
    }

    /// Answers `session/load` or `session/resume` with `result` (e.g. `{"configOptions":…,
    /// "modes":…}`), after the history was replayed with `send_update`. The session is
    /// usable from now on.
    pub fn accept_load<R: serde::Serialize + ?Sized>(
        &mut self,
        ticket: Ticket,
        result: &R,
    ) -> Result<(), UsageError> {
        let core = &mut self.core;
        core.live()?;
        let owed = core
            .owing
            .get(ticket)
            .filter(|o| o.kind == MethodKind::LoadSession || o.kind == MethodKind::Other)
            .ok_or(UsageError::AlreadySettled)?;
        let (id, session) = (owed.id.clone(), owed.session.clone().unwrap_or_default());
        if !matches!(
            core.sessions.get(session.as_str()),
            Some(SessionState::Creating { load: true, req, .. }) if req == ReqRef::Peer(ticket)
        ) {
            return Err(UsageError::AlreadySettled);
        }
        wire_out::result(self.transport.outbox(), id.as_raw(), result)?;
        let _ = core.sessions.handle(
            core.clock.latest(),
            SessionInput::Opened {
                req: ReqRef::Peer(ticket),
                id: session.as_str(),
            },
        );
        let _ = core.owing.answer(ticket);
        Ok(())
    }

    /// Answers a `session/load` with `-32600 session/load: Session '<id>' not found`.
    pub fn load_not_found(&mut self, ticket: Ticket) -> Result<(), UsageError> {
        let session = self
            .core
            .owing
            .get(ticket)
            .and_then(|o| o.session.clone())
            .unwrap_or_default();
        let rejection = Rejection::LoadNotFound {
            session: session.as_str(),
        };
        self.respond_error(ticket, rejection.code(), &rejection)
    }

    /// Answers any request handed over (except a prompt: use [`fail_turn`](Self::fail_turn))
    /// with an error. A refused `session/new` or `session/load` leaves no session behind; a
    /// refused reload of a session the connection knows leaves it as it was (R-SESSION-10).
    pub fn respond_error<M: fmt::Display + ?Sized>(
        &mut self,
        ticket: Ticket,
        code: ErrorCode,
        message: &M,
    ) -> Result<(), UsageError> {
        let core = &mut self.core;
        core.live()?;
        let owed = core.owing.get(ticket).ok_or(UsageError::AlreadySettled)?;
        if owed.kind == MethodKind::Prompt {
            return Err(UsageError::TurnInProgress);
        }
        let id = owed.id.clone();
        wire_out::error(self.transport.outbox(), id.as_raw(), code, message)?;
        // A refused authenticate or logout changes nothing (R-AUTH-4).
        core.auth_owed.retain(|(t, _)| *t != ticket);
        let _ = core.sessions.handle(
            core.clock.latest(),
            SessionInput::OpenFailed {
                req: ReqRef::Peer(ticket),
            },
        );
        let _ = core.owing.answer(ticket);
        Ok(())
    }

    /// Answers a request handed over (except a prompt: use [`fail_turn`](Self::fail_turn))
    /// with `-32603 Internal error: <message>`: the application failed it (R-RPC-10). As
    /// [`respond_error`](Self::respond_error) otherwise.
    pub fn fail_request<M: fmt::Display + ?Sized>(
        &mut self,
        ticket: Ticket,
        message: &M,
    ) -> Result<(), UsageError> {
        self.respond_error(ticket, ErrorCode::INTERNAL_ERROR, &Internal(message))
    }

    /// Answers an [`AgentEvent::Request`] with `result` (any `Serialize`, e.g. the typed
    /// response of [`crate::schema`]).
    pub fn respond<R: serde::Serialize + ?Sized>(
        &mut self,
        ticket: Ticket,
        result: &R,
    ) -> Result<(), UsageError> {
        let core = &mut self.core;
        core.live()?;
        // A `session/resume` opens its session when answered: that is `accept_load`.
        let opening = core.owing.get(ticket).and_then(|o| o.session.clone());
        if let Some(session) = opening
            && matches!(
                core.sessions.get(session.as_str()),
                Some(SessionState::Creating { req, .. }) if req == ReqRef::Peer(ticket)
            )
        {
            return self.accept_load(ticket, result);
        }
        let id = core.owed_of(ticket, |k| {
            !matches!(
                k,
                MethodKind::Prompt | MethodKind::NewSession | MethodKind::LoadSession
            )
        })?;
        wire_out::result(self.transport.outbox(), id.as_raw(), result)?;
        let _ = core.owing.answer(ticket);
        // R-AUTH-4, R-AUTH-5: a successful authenticate logs in, a successful logout out.
        if let Some(at) = core.auth_owed.iter().position(|(t, _)| *t == ticket) {
            core.authenticated = core.auth_owed.swap_remove(at).1;
        }
        Ok(())
    }

    /// Answers an [`AgentEvent::Authenticate`] with `{}`: the connection is authenticated
    /// from now on (R-AUTH-4). [`UsageError::WrongKind`] for another request.
    pub fn accept_authenticate(&mut self, ticket: Ticket) -> Result<(), UsageError> {
        self.accept_auth(ticket, true)
    }

    /// Answers an [`AgentEvent::Logout`] with `{}`: the connection is not authenticated from
    /// now on (R-AUTH-5). [`UsageError::WrongKind`] for another request.
    pub fn accept_logout(&mut self, ticket: Ticket) -> Result<(), UsageError> {
        self.accept_auth(ticket, false)
    }

    fn accept_auth(&mut self, ticket: Ticket, login: bool) -> Result<(), UsageError> {
        self.core.live()?;
        if self.core.owing.get(ticket).is_none() {
            return Err(UsageError::AlreadySettled);
        }
        if !self.core.auth_owed.contains(&(ticket, login)) {
            return Err(UsageError::WrongKind);
        }
        self.respond(ticket, &wire_out::Empty {})
    }

    /// Whether the client is authenticated: a successful `authenticate` answer was sent and
    /// no successful `logout` answer since, or the application said so with
    /// [`set_authenticated`](Self::set_authenticated) (R-AUTH-3).
    pub fn is_authenticated(&self) -> bool {
        self.core.authenticated
    }

    /// Sets the authenticated state without a request: an agent that finds stored
    /// credentials at start serves sessions at once; one whose credentials expire stops
    /// serving new ones. Only [`AgentConfig::auth_required`] makes the state matter.
    pub fn set_authenticated(&mut self, authenticated: bool) {
        self.core.authenticated = authenticated;
    }

    /// Answers `session/set_mode`: sends `current_mode_update` for the session, then
    /// `{"modeId":…}` in Agentao's dialect (R-MODE-1), `{}` in plain ACP (R-MODE-3).
    pub fn accept_mode(&mut self, ticket: Ticket, mode_id: &str) -> Result<(), UsageError> {
        let core = &mut self.core;
        core.live()?;
        let owed = core.owing.get(ticket).ok_or(UsageError::AlreadySettled)?;
        let (id, session) = (owed.id.clone(), owed.session.clone().unwrap_or_default());
        let out = self.transport.outbox();
        if !out.has_room_for(2 * REPLY_RESERVE + 2 * mode_id.len()) {
            return Err(UsageError::WouldBlock);
        }
        wire_out::notification(
            out,
            "session/update",
            &UpdateParams {
                session_id: session.as_str(),
                update: &ModeUpdate {
                    session_update: "current_mode_update",
                    current_mode_id: mode_id,
                },
            },
        )?;
        match core.config.dialect {
            Dialect::Agentao => wire_out::result(out, id.as_raw(), &ModeResult { mode_id })?,
            Dialect::Acp => wire_out::result(out, id.as_raw(), &wire_out::Empty {})?,
        }
        let _ = core.owing.answer(ticket);
        Ok(())
    }

    // ----- commands: turns -----

    /// Sends one `session/update` for `session`.
    ///
    /// Turn updates (message and thought chunks, tool calls, plans) need a running turn and
    /// are refused once it has been answered ([`UsageError::TurnAnswered`]); other kinds
    /// (`available_commands_update`, `current_mode_update`, …) may be sent any time after the
    /// `session/new` answer. While a `session/load` is in flight, any update is history
    /// replay and goes out before the load's answer. Refused with [`UsageError::WouldBlock`]
    /// while the outbox is above its high-water mark: write out, then retry.
    pub fn send_update<U: Update + ?Sized>(
        &mut self,
        session: &str,
        update: &U,
    ) -> Result<(), UsageError> {
        let in_turn = self.update_allowed(session, update.belongs_to_turn())?;
        wire_out::notification(
            self.transport.outbox(),
            "session/update",
            &UpdateParams {
                session_id: session,
                update,
            },
        )?;
        if in_turn && let Some(tool_call) = update.announced_tool_call() {
            self.core.announce(session, tool_call);
        }
        Ok(())
    }

    /// Sends one plain text chunk (`agent_message_chunk` or `agent_thought_chunk`: no
    /// annotations, `_meta` or `messageId`) for `session`, exactly as
    /// [`send_update`](Self::send_update) sends the same chunk as a typed update (same line,
    /// same rules), and returns the text as it was escaped into the line: a JSON string's
    /// contents without its quotes. An agent that keeps the conversation as JSON text (to save
    /// it) records these bytes instead of escaping the text a second time. The returned text
    /// borrows the outbox (or, when nothing needed escaping, is `text` itself): record it
    /// before anything else is sent.
    pub fn send_text_chunk<'a>(
        &'a mut self,
        session: &str,
        kind: TextChunkKind,
        text: &'a str,
    ) -> Result<&'a str, UsageError> {
        self.update_allowed(session, true)?;
        let out = self.transport.outbox();
        let (line_start, span) =
            out.push_line_with(|sink| encode::write_text_chunk(sink, session, kind, text))?;
        // Escaping only ever lengthens: a span as long as the text is the text, unescaped (the
        // common case), and needs no second look.
        if span.len() == text.len() {
            return Ok(text);
        }
        // Escaping copies the text's own UTF-8 runs and adds ASCII escapes: always UTF-8, so
        // the check cannot fail (if it did, the line would be taken back, as for a full outbox).
        let range = line_start + span.start..line_start + span.end;
        if core::str::from_utf8(out.stored(range.clone())).is_err() {
            let line = out.len() - line_start;
            out.retract(line);
            return Err(UsageError::WouldBlock);
        }
        Ok(core::str::from_utf8(out.stored(range)).unwrap_or_default())
    }

    /// Whether an update may go out now (the checks of [`send_update`](Self::send_update));
    /// `Ok` says whether it is part of the running turn.
    fn update_allowed(&mut self, session: &str, belongs_to_turn: bool) -> Result<bool, UsageError> {
        let core = &mut self.core;
        core.live()?;
        let state = core
            .sessions
            .get(session)
            .ok_or(UsageError::UnknownSession)?;
        let in_turn = match state {
            SessionState::Creating { load: true, .. } => false,
            SessionState::Creating { .. } | SessionState::Closed => {
                return Err(UsageError::SessionNotActive);
            }
            SessionState::Active { turn: Some(_) } => belongs_to_turn,
            SessionState::Active { turn: None } if belongs_to_turn => {
                return Err(UsageError::TurnAnswered);
            }
            SessionState::Active { turn: None } => false,
        };
        if !self.transport.outbox().has_room_for_updates() {
            return Err(UsageError::WouldBlock);
        }
        Ok(in_turn)
    }

    /// Sends one update of a stored session's history for a session that is already open: the
    /// replay of a session resumed through `session/new` (R-STORE-3:
    /// `--resume` answers `session/new` first, then replays the history behind the
    /// response). Any kind goes, turn content included, whether or not a turn runs: the
    /// application keeps a new turn's own updates until its replay is out. A replayed
    /// `tool_call` is history, never a call a permission request may name. While a
    /// `session/load` is in flight this is [`send_update`](Self::send_update).
    ///
    /// Refused for a session not open ([`UsageError::UnknownSession`] before the answer,
    /// [`UsageError::SessionNotActive`] once closed), and with [`UsageError::WouldBlock`]
    /// while the outbox is above its high-water mark.
    pub fn send_replay<U: Update + ?Sized>(
        &mut self,
        session: &str,
        update: &U,
    ) -> Result<(), UsageError> {
        let core = &mut self.core;
        core.live()?;
        match core.sessions.get(session) {
            None => return Err(UsageError::UnknownSession),
            Some(SessionState::Active { .. } | SessionState::Creating { load: true, .. }) => {}
            Some(SessionState::Creating { .. } | SessionState::Closed) => {
                return Err(UsageError::SessionNotActive);
            }
        }
        let out = self.transport.outbox();
        if !out.has_room_for_updates() {
            return Err(UsageError::WouldBlock);
        }
        wire_out::notification(
            out,
            "session/update",
            &UpdateParams {
                session_id: session,
                update,
            },
        )?;
        Ok(())
    }

    /// Answers the running turn's `session/prompt` with `stop` — or with `cancelled` if the
    /// client cancelled it, whatever `stop` says. Exactly once per turn. Returns the stop
    /// reason sent.
    pub fn end_turn(&mut self, session: &str, stop: StopReason) -> Result<StopReason, UsageError> {
        match self.finish_turn(session, Ok((stop, None)))? {
            TurnEnd::Ended(stop) => Ok(stop),
            TurnEnd::Cancelled | TurnEnd::Failed => Ok(StopReason::Cancelled),
        }
    }

    /// [`end_turn`](Self::end_turn), the answer carrying the turn's token `usage`
    /// (`PromptResponse.usage`) when given. A cancelled turn's answer carries it too: the
    /// tokens were spent. (With `alloc`: the usage is the schema's type.)
    #[cfg(feature = "alloc")]
    pub fn end_turn_with_usage(
        &mut self,
        session: &str,
        stop: StopReason,
        usage: Option<&crate::schema::Usage>,
    ) -> Result<StopReason, UsageError> {
        match self.finish_turn(session, Ok((stop, usage)))? {
            TurnEnd::Ended(stop) => Ok(stop),
            TurnEnd::Cancelled | TurnEnd::Failed => Ok(StopReason::Cancelled),
        }
    }

    /// Answers the running turn's `session/prompt` with `-32603 Internal error: <message>`
    /// (or `cancelled` after a cancel). Returns which of the two was sent:
    /// [`TurnEnd::Failed`] or [`TurnEnd::Cancelled`].
    pub fn fail_turn<M: fmt::Display + ?Sized>(
        &mut self,
        session: &str,
        message: &M,
    ) -> Result<TurnEnd, UsageError> {
        self.finish_turn(
            session,
            Err((ErrorCode::INTERNAL_ERROR, &Internal(message))),
        )
    }

    /// Answers the running turn's `session/prompt` with this error code and exactly this
    /// message (or `cancelled` after a cancel): for failures with a code of their own, such
    /// as `-32000` when the model needs credentials. Returns which was sent, as
    /// [`fail_turn`](Self::fail_turn).
    pub fn fail_turn_with<M: fmt::Display + ?Sized>(
        &mut self,
        session: &str,
        code: ErrorCode,
        message: &M,
    ) -> Result<TurnEnd, UsageError> {
        self.finish_turn(session, Err((code, &message)))
    }

    fn finish_turn(
        &mut self,
        session: &str,
        how: Result<(StopReason, Option<&wire_out::TurnUsage>), (ErrorCode, &dyn fmt::Display)>,
    ) -> Result<TurnEnd, UsageError> {
        let core = &mut self.core;
        core.live()?;
        let state = core
            .sessions
            .get(session)
            .ok_or(UsageError::UnknownSession)?;
        let turn = match state {
            SessionState::Active { turn: Some(turn) } => turn,
            _ => return Err(UsageError::NoTurn),
        };
        let ReqRef::Peer(ticket) = turn.prompt() else {
            return Err(UsageError::NoTurn);
        };
        let id = core
            .owing
            .get(ticket)
            .map(|o| o.id.clone())
            .ok_or(UsageError::AlreadySettled)?;
        let out = self.transport.outbox();
        let usage = match &how {
            Ok((_, usage)) => *usage,
            Err(_) => None,
        };
        let stop = match how {
            Ok((stop, _)) if !turn.is_cancelling() => stop,
            Err((code, message)) if !turn.is_cancelling() => {
                wire_out::error(out, id.as_raw(), code, message)?;
                let _ = core.sessions.handle(
                    core.clock.latest(),
                    SessionInput::FailTurn {
                        id: session,
                        prompt: ReqRef::Peer(ticket),
                    },
                );
                let _ = core.owing.answer(ticket);
                core.forget_turn(session);
                return Ok(TurnEnd::Failed);
            }
            // R-CANCEL-3: after a cancel the turn ends `cancelled`.
            _ => StopReason::Cancelled,
        };
        wire_out::result(
            out,
            id.as_raw(),
            &StopResult {
                stop_reason: stop.as_str(),
                usage,
            },
        )?;
        let ended = core.sessions.handle(
            core.clock.latest(),
            SessionInput::EndTurn {
                id: session,
                prompt: ReqRef::Peer(ticket),
                stop,
            },
        );
        debug_assert!(matches!(ended, Ok(SessionOutput::TurnEnded { .. })));
        let _ = core.owing.answer(ticket);
        core.forget_turn(session);
        Ok(if turn.is_cancelling() {
            TurnEnd::Cancelled
        } else {
            TurnEnd::Ended(stop)
        })
    }

    // ----- commands: requests to the client -----

    /// Sends `$/cancel_request` for a request of ours. It stays pending until the client
    /// answers (normally `-32800`), and is then settled as usual.
    pub fn cancel_request(&mut self, request: RequestId) -> Result<(), UsageError> {
        let core = &mut self.core;
        core.live()?;
        match core.pending.get(request).map(|r| r.state) {
            Some(crate::machine::pending::OutgoingState::Waiting { .. }) => {}
            _ => return Err(UsageError::AlreadySettled),
        }
        wire_out::notification(
            self.transport.outbox(),
            "$/cancel_request",
            &CancelRequestParams {
                request_id: request.0,
            },
        )?;
        core.pending.request_cancel(request)
    }

    /// Registers and writes a request of ours. `check` runs after registration so a refusal
    /// withdraws the id.
    fn send_request<P: serde::Serialize + ?Sized>(
        &mut self,
        now: Instant,
        ask: Ask<'_>,
        params: &P,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        let Ask {
            method,
            kind,
            session,
            tool,
        } = ask;
        let core = &mut self.core;
        let now = core.clock.observe(now);
        core.live()?;
        let sid = SessionId::new(session).ok_or(UsageError::IdTooLong)?;
        let id = core.pending.send(
            now,
            MethodKind::of(method),
            (!session.is_empty()).then_some(session),
            timeout,
        )?;
        let row = AskedRow {
            id,
            kind,
            session: sid,
            tool: config::truncated(tool),
        };
        if core.asked.try_push(row).is_err() {
            let _ = core.pending.withdraw(id);
            return Err(UsageError::TooManyInFlight);
        }
        if let Err(e) = wire_out::request(self.transport.outbox(), id.0, method, params) {
            let _ = core.pending.withdraw(id);
            core.take_asked(id);
            return Err(e);
        }
        Ok(id)
    }
}

#[cfg(feature = "alloc")]
mod requests;
#[cfg(feature = "alloc")]
pub use requests::tool_key;

/// What a request of ours is: its method, how its answer is read, its session and (for a
/// permission) the tool key its `*_always` answer is remembered under.
struct Ask<'a> {
    method: &'static str,
    kind: AskedKind,
    session: &'a str,
    tool: &'a str,
}

/// `Internal error: <message>` (Agentao's -32603 text).
struct Internal<'a, M: ?Sized>(&'a M);

impl<M: fmt::Display + ?Sized> fmt::Display for Internal<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Internal error: {}", self.0)
    }
}

impl<B: Buffers> AgentConnection<B> {
    /// Processes the lines held and those of `input` (taken from it without copying) while
    /// the outbox and the event queue have room; `input` is advanced past what was taken.
    fn process_lines(&mut self, now: Instant, input: &mut &[u8]) {
        self.core.held = false;
        // Bounded: each pass takes a line or stops.
        loop {
            if !self.core.has_room_for_line(self.transport.outbox_ref()) {
                self.core.held = self.transport.buffered_input() > 0;
                return;
            }
            let before: &[u8] = input;
            let Some((incoming, out)) = self.transport.next_incoming_from(input) else {
                return;
            };
            self.core.on_incoming(now, incoming, out);
            self.keep_params(before);
        }
    }

    /// Keeps the params of the line just routed when an event refers to them, and gives
    /// those events their handle. `input` is the caller's input the line may have been served
    /// from (else it was served from the framer's storage).
    fn keep_params(&mut self, input: &[u8]) {
        let Some((addr, len)) = self.core.to_keep.take() else {
            return;
        };
        let kept = self.transport.keep(addr, len, input);
        debug_assert!(kept.is_some(), "a routed line's params can always be kept");
        self.core.kept = kept;
        let handle = match kept {
            Some((start, len)) => Params {
                start: start as u32,
                len: len as u32,
                input: self.core.input,
            },
            None => Params::NONE,
        };
        for event in self.core.events.rows_mut() {
            if let Some(params) = event.params_mut()
                && *params == Params::UNPLACED
            {
                *params = handle;
            }
        }
    }

    /// Debug builds: the previous input's events must have been drained (call order step 2).
    fn check_drained(&self) {
        debug_assert!(
            self.core.events.rows().is_empty(),
            "AgentConnection: drain poll_event() until None after every input (call order)"
        );
    }
}

impl<B: Buffers> Core<B> {
    /// A new input starts: the params kept for the previous one go.
    fn next_input(&mut self) {
        self.input = match self.input.wrapping_add(1) {
            u32::MAX => 0,
            n => n,
        };
        self.kept = None;
        self.to_keep = None;
    }

    /// The handle for `params` of the line being routed: they are kept once routing is done.
    pub(super) fn keep_later(&mut self, params: Option<RawValue<'_>>) -> Params {
        match params {
            Some(p) => {
                self.to_keep = Some((p.get().as_ptr() as usize, p.get().len()));
                Params::UNPLACED
            }
            None => Params::NONE,
        }
    }

    /// Commands are refused after EOF.
    fn live(&self) -> Result<(), UsageError> {
        if self.eof {
            Err(UsageError::Closed)
        } else {
            Ok(())
        }
    }

    /// The raw id of owed request `ticket`, if its kind passes `kind_ok`.
    fn owed_of(
        &self,
        ticket: Ticket,
        kind_ok: impl Fn(MethodKind) -> bool,
    ) -> Result<crate::machine::PeerRequestId, UsageError> {
        self.owing
            .get(ticket)
            .filter(|o| kind_ok(o.kind))
            .map(|o| o.id.clone())
            .ok_or(UsageError::AlreadySettled)
    }

    fn push_event(&mut self, event: AgentEvent) {
        if self.events.try_push(event).is_err() {
            self.dropped_events += 1;
        }
    }

    /// Room for what one more peer line may produce: a reply, and up to one event per
    /// pending request plus two.
    fn has_room_for_line(&self, out: &Outbox<B::Output>) -> bool {
        let worst = self.pending.rows().len().saturating_add(2);
        let free = self.events.max_rows() - self.events.rows().len();
        // One line's params are kept at a time (until the next input).
        self.kept.is_none() && free >= worst && out.has_room_for(REPLY_RESERVE)
    }

    fn announce(&mut self, session: &str, tool_call: &str) {
        let (Some(session), Ok(tool_call)) = (
            SessionId::new(session),
            heapless::String::try_from(tool_call),
        ) else {
            return;
        };
        if self
            .announced
            .rows()
            .iter()
            .any(|a| a.session == session && a.tool_call == tool_call)
        {
            return;
        }
        if self.announced.rows().len() >= self.config.limits.max_pending.max(1) {
            self.announced.remove_at(0);
        }
        let _ = self.announced.try_push(Announced { session, tool_call });
    }

    fn is_announced(&self, session: &str, tool_call: &str) -> bool {
        self.announced
            .rows()
            .iter()
            .any(|a| a.session.as_str() == session && a.tool_call.as_str() == tool_call)
    }

    /// The turn of `session` is over: its announcements go.
    fn forget_turn(&mut self, session: &str) {
        let mut i = 0;
        while i < self.announced.rows().len() {
            if self.announced.rows()[i].session.as_str() == session {
                self.announced.remove_at(i);
            } else {
                i += 1;
            }
        }
    }

    fn take_asked(&mut self, id: RequestId) -> Option<AskedRow> {
        let index = self.asked.rows().iter().position(|a| a.id == id)?;
        Some(self.asked.remove_at(index))
    }

    /// Reports every request of ours settled without an answer (timeout, cancel, EOF).
    fn drain_settled(&mut self) {
        // Bounded: each call removes a settlement.
        while let Some(settled) = self.pending.poll_settled() {
            self.report_settled(settled, None, None);
        }
    }

    /// Tells the application how a request of ours ended. `answer` is the result text when
    /// the client answered with one.
    fn report_settled(
        &mut self,
        settled: Settled,
        answer: Option<&str>,
        _message: Option<crate::wire::JsonStr<'_>>,
    ) {
        let Some(asked) = self.take_asked(settled.id) else {
            return;
        };
        let request = settled.id;
        let session = asked.session.clone();
        match asked.kind {
            AskedKind::Permission => {
                let decision = match answer {
                    Some(text) => inbound::read_permission(text),
                    None => permission::decide(PermissionReply::Settled(settled.outcome)),
                };
                self.memory
                    .record(session.as_str(), asked.tool.as_str(), decision);
                self.push_event(AgentEvent::PermissionResolved {
                    request,
                    session,
                    decision,
                    remembered: false,
                });
            }
            AskedKind::AskUser => {
                let reply = inbound::read_ask_user(answer, settled.outcome);
                self.push_event(AgentEvent::AskUserAnswered {
                    request,
                    session,
                    answered: reply.is_some(),
                    text: reply
                        .unwrap_or_else(|| event::Text::new(crate::machine::ask_user::UNAVAILABLE)),
                });
            }
            AskedKind::Method(_method) => {
                #[cfg(feature = "alloc")]
                {
                    let message = _message.map(|m| m.to_cow().into_owned());
                    let result = inbound::read_response(_method, answer, settled.outcome, message);
                    self.push_event(AgentEvent::Response { request, result });
                }
            }
        }
    }

    /// A remembered `*_always` answer for `tool` in `session`, if any.
    fn recall(&self, session: &str, tool: &str) -> Option<PermissionDecision> {
        use crate::machine::permission::{PermissionChoice, RejectReason};
        self.memory.recall(session, tool).map(|allow| {
            if allow {
                PermissionDecision::Allowed(PermissionChoice::AllowAlways)
            } else {
                PermissionDecision::Rejected(RejectReason::Chosen(PermissionChoice::RejectAlways))
            }
        })
    }

    /// Whether the client advertised `needed`.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    fn require_client(&self, needed: Capabilities) -> Result<(), UsageError> {
        self.handshake.require_peer(needed)
    }

    /// A `session/cancel` (or a close or `$/cancel_request` of a prompt) reached a running
    /// turn: settle the session's permission and ask_user requests as cancelled, tell the app.
    fn turn_cancelled(&mut self, session: &str) {
        self.pending.cancel_session(session);
        self.drain_settled();
        if let Some(session) = SessionId::new(session) {
            self.push_event(AgentEvent::Cancelled { session });
        }
    }

    /// Answers a prompt `cancelled` without the application (close, EOF).
    fn answer_prompt_cancelled(&mut self, out: &mut Outbox<B::Output>, ticket: Ticket) {
        if let Ok(owed) = self.owing.answer(ticket) {
            let _ = wire_out::result(
                out,
                owed.id.as_raw(),
                &StopResult {
                    stop_reason: StopReason::Cancelled.as_str(),
                    usage: None,
                },
            );
        }
    }

    fn on_eof(&mut self, now: Instant, out: &mut Outbox<B::Output>) {
        // Sessions open before EOF are the ones to save.
        let mut index = 0;
        // Bounded: one pass over the session rows, in creation order.
        while index < self.sessions.rows().len() {
            let row = &self.sessions.rows()[index];
            if matches!(row.state, SessionState::Active { .. }) {
                let session = row.id.clone();
                self.push_event(AgentEvent::SaveSession { session });
            }
            index += 1;
        }
        // Every running turn ends `cancelled` (R-RPC-11).
        while let Some(out_event) = self.sessions.handle_eof(now) {
            if let SessionOutput::TurnEnded {
                session,
                prompt: ReqRef::Peer(ticket),
                ..
            } = out_event
            {
                self.answer_prompt_cancelled(out, ticket);
                self.forget_turn(session.as_str());
                self.push_event(AgentEvent::Cancelled { session });
            }
        }
        // Requests of ours: settled as disconnected.
        self.pending.handle_eof(now);
        self.drain_settled();
        // Requests still owed: answered without the application.
        self.owing.handle_eof();
        while let Some((owed, settle)) = self.owing.poll_settled() {
            let _ = match settle.rejection(owed.kind) {
                Some(rejection) => {
                    wire_out::error(out, owed.id.as_raw(), rejection.code(), &rejection)
                }
                None => wire_out::result(
                    out,
                    owed.id.as_raw(),
                    &StopResult {
                        stop_reason: StopReason::Cancelled.as_str(),
                        usage: None,
                    },
                ),
            };
        }
        self.eof = true;
        self.push_event(AgentEvent::Closed);
    }
}
