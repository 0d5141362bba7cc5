//! [`ClientConnection`]: the host side of ACP, sans-IO.
//!
//! The application (an editor, a CLI, a supervisor of agent processes) creates one
//! connection per agent process, feeds it the agent's stdout and the time, issues commands
//! (`initialize`, `new_session`, `prompt`, `cancel`, `respond_*`) and writes what the outbox
//! holds to the agent's stdin. The connection enforces the protocol rules of the client side
//! (docs/protocol.md; each item names its rules):
//!
//! - `initialize` sends `clientInfo` and the capabilities the application serves, checks the
//!   negotiated `protocolVersion` (only 1) and records the agent's capabilities; nothing else
//!   is sent before its answer. Optional methods (`session/load`, `session/list`,
//!   `session/resume`, `session/close`, `session/delete`, `logout`, `authenticate`,
//!   `_agentao.cn/set_model`) and prompt content beyond text and resource links are refused
//!   locally ([`UsageError::NotAdvertised`]) unless the agent advertised them
//!   (R-INIT-6, R-RPC-7).
//! - Every request we send is settled exactly once: by its answer, an error, a malformed
//!   answer, its deadline, or EOF, which fails every pending request at once (Agentao's
//!   client waits for each timeout: its bug 17; R-RPC-2, R-HOST-5).
//! - Every request the agent sends is answered exactly once: by the application through a
//!   `respond_*` command, at once with `-32601` when the application does not serve the
//!   method (never silence: Agentao's bug 16), `cancelled` when its session is cancelled,
//!   `-32800` after `$/cancel_request`. At EOF the requests still owed are settled without
//!   an answer, and once [`ClientEvent::Closed`] is reported nothing more is written (R-RPC-1,
//!   R-FS-2, R-CANCEL-3, R-CANCEL-4, R-RPC-8).
//! - [`ClientConnection::cancel`] sends `session/cancel` (a notification) and answers every
//!   open `session/request_permission` of the session with
//!   `{"outcome":{"outcome":"cancelled"}}` and every `_agentao.cn/ask_user` with
//!   `{"outcome":"cancelled"}`; the application is told with
//!   [`ClientEvent::RequestSettled`]. The turn then ends `cancelled` whatever the agent
//!   answers (R-CANCEL-3).
//! - A prompt that passes its deadline is cancelled the same way and ends
//!   [`TurnOutcome::TimedOut`] (R-HOST-2).
//! - `session/update` is routed by its `sessionId` and always delivered; updates for an
//!   unknown or closed session, or turn content after the turn ended, are flagged
//!   ([`UpdateContext::is_flagged`]; R-TURN-3, R-TURN-4).
//!
//! # Call order
//!
//! After every `handle_*` call and every command:
//!
//! 1. drain [`ClientConnection::poll_event`] until `None` (lines are processed as events are
//!    polled, so nothing happens until you poll; debug builds panic when an input arrives
//!    while events are still queued);
//! 2. write [`Outbox::pending`] to the agent's stdin and report it with [`Outbox::consume`];
//!    if anything was pending, go back to 1 (a full outbox pauses processing);
//! 3. wait for input, a command, or [`ClientConnection::poll_timeout`], then call
//!    `handle_bytes` (feed the rest again if it did not take everything), `handle_eof` or
//!    `handle_timeout`.
//!
//! ```
//! # #[cfg(feature = "alloc")] {
//! use acp_core::conn::client::{ClientConfig, ClientConnection, ClientEvent, Growable, Serves};
//! use acp_core::Instant;
//!
//! let mut client = ClientConnection::<Growable>::new(ClientConfig::new("my-editor", "1.0", Serves::NOTHING));
//! client.initialize(Instant(0)).unwrap();
//! let line = client.outbox().pending().to_vec();
//! assert!(line.starts_with(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1"#));
//! let n = line.len();
//! client.outbox().consume(n);
//!
//! let answer = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}
//! "#;
//! assert_eq!(client.handle_bytes(Instant(5), answer), answer.len());
//! assert!(matches!(client.poll_event(), Some(ClientEvent::Initialized { .. })));
//! assert!(client.poll_event().is_none());
//! # }
//! ```
//!
//! # Without `alloc`
//!
//! [`Fixed`] storage bounds everything: one line of `LINE` bytes, an outbox of `OUT` bytes,
//! `SESSIONS` sessions, `REQUESTS` requests in flight each way. Events are built one line at
//! a time (the event queue never holds more than one step's events), and carry their peer
//! data as [`Payload`] copies of at most [`PAYLOAD_MAX`] bytes: a longer payload is marked
//! [`Payload::is_oversized`] and the event is still delivered, so the request can still be
//! answered. Typed (decoded) fields exist only under `alloc`.

mod config;
mod event;
mod params;
mod peek;
mod storage;
mod text;

use core::fmt;
use core::time::Duration;

use serde::Serialize;

pub use config::{ClientConfig, Serves};
pub use event::{
    AgentFeatures, AgentMethod, ClientEvent, ClientMethod, Failure, HandshakeError,
    IncomingRequest, TurnOutcome, UpdateContext, Violation,
};
pub use params::{AskUserAnswer, NO_MCP_SERVERS, PermissionAnswer};
#[cfg(feature = "alloc")]
pub use storage::Growable;
pub use storage::{ClientStorage, Fixed, OurRequest};
pub use text::{PAYLOAD_MAX, Payload, TEXT_MAX, Text};

use crate::conn::transport::{Incoming, Outbox, REPLY_RESERVE, Transport};
use crate::machine::handshake::{Capabilities, Handshake, HandshakeInput, HandshakeOutput};
use crate::machine::pending::{
    MethodKind, Outcome as SettledOutcome, Owing, Pending, Received, Response as Answer,
    ResponseVerdict, Settle, Settled,
};
use crate::machine::session::{CancelVia, SessionInput, SessionOutput, SessionState, Sessions};
use crate::machine::time::Monotonic;
use crate::machine::turn::StopReason;
use crate::machine::{
    Instant, PEER_ID_MAX, Rejection, ReqRef, RequestId, SessionId, Storage, Ticket, UsageError,
};
use crate::wire::encode::{write_error, write_notification, write_request, write_result};
use crate::wire::envelope::{Message, Notification, Outcome, Request, Response};
use crate::wire::frame::Framer;
use crate::wire::{ErrorCode, Id, JsonStr, RawValue};

use params::{
    AskUserResult, InitializeParams, NewSessionParams, OpenSessionParams, PermissionResult,
    PromptParams, SessionParams, SetConfigParams, SetModeParams, TextBlock,
};

/// Events one processing step can produce at most (a request refused plus its violation, a
/// request plus its settlement).
const EVENT_SLOTS: usize = 4;

/// Where `initialize` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Init {
    NotSent,
    InFlight(RequestId),
    Ready,
    Failed,
}

/// Where the end of the agent's output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Eof {
    /// Input is open.
    Open,
    /// Input ended; lines already received are still processed.
    Draining,
    /// Pending requests are settled; running turns end one by one.
    Sessions,
    /// [`ClientEvent::Closed`] was queued.
    Done,
}

/// The client side of one ACP connection. See the [module docs](self) for the call order.
pub struct ClientConnection<S: ClientStorage> {
    transport: Transport<S::Input, S::Output>,
    core: Core<S>,
}

/// Everything but the transport, so a line borrowed from the transport can be handled.
struct Core<S: ClientStorage> {
    config: ClientConfig,
    clock: Monotonic,
    handshake: Handshake,
    init: Init,
    features: AgentFeatures,
    sessions: Sessions<S::Sessions>,
    pending: Pending<S::Pending>,
    owing: Owing<S::Owing>,
    requests: S::Requests,
    events: heapless::Deque<ClientEvent, EVENT_SLOTS>,
    eof: Eof,
}

impl<S: ClientStorage> fmt::Debug for ClientConnection<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConnection")
            .field("transport", &self.transport)
            .field("init", &self.core.init)
            .field("eof", &self.core.eof)
            .field("in_flight", &self.core.pending.in_flight())
            .field("owed", &self.core.owing.rows().len())
            .finish()
    }
}

impl<S: ClientStorage> ClientConnection<S> {
    /// A connection that has sent nothing yet; call [`ClientConnection::initialize`] first.
    pub fn new(config: ClientConfig) -> Self {
        let framer = Framer::new(S::Input::default(), config.max_line);
        let outbox = Outbox::new(
            S::Output::default(),
            config.outbox_limit(),
            config.high_water,
        );
        let local = Capabilities::empty()
            .with(Capabilities::FS_READ, config.serves.fs_read)
            .with(Capabilities::FS_WRITE, config.serves.fs_write)
            .with(Capabilities::TERMINAL, config.serves.terminal)
            .with(Capabilities::ELICITATION, config.serves.elicitation);
        let core = Core {
            sessions: Sessions::new(S::Sessions::default(), config.max_sessions),
            pending: Pending::new(S::Pending::default(), config.max_in_flight),
            owing: Owing::new(S::Owing::default(), config.max_in_flight),
            requests: S::Requests::default(),
            handshake: Handshake::new(local),
            init: Init::NotSent,
            features: AgentFeatures::default(),
            clock: Monotonic::default(),
            events: heapless::Deque::new(),
            eof: Eof::Open,
            config,
        };
        Self {
            transport: Transport::new(framer, outbox),
            core,
        }
    }

    // ---- inputs -------------------------------------------------------------------------

    /// Bytes from the agent's stdout. Returns how many were taken: fewer than given when the
    /// line buffer is full of lines not yet processed (poll events) or the outbox cannot take
    /// a reply (write it out); feed the rest after that. After EOF bytes are discarded.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> usize {
        self.check_drained();
        self.core.clock.observe(now);
        if self.core.eof != Eof::Open {
            return bytes.len();
        }
        self.transport.feed(bytes)
    }

    /// The agent's stdout ended (it exited or closed it). Lines already received, and a
    /// last line without newline, are still processed as usual (garbage among them still
    /// gets its wire-level error reply); then every pending request fails at once
    /// ([`Failure::Disconnected`], [`TurnOutcome::Disconnected`]), every request of the
    /// agent still owed is settled without an answer ([`Settle::ConnectionClosed`]: nobody
    /// reads it), and [`ClientEvent::Closed`] comes last. After that nothing is written,
    /// input is discarded and every command returns [`UsageError::Closed`].
    pub fn handle_eof(&mut self, now: Instant) {
        self.check_drained();
        self.core.clock.observe(now);
        if self.core.eof == Eof::Open {
            self.transport.finish();
            self.core.eof = Eof::Draining;
        }
    }

    /// The clock reached `now`: requests past their deadline are settled as timed out, and a
    /// timed-out prompt is cancelled. Spurious calls do nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.check_drained();
        let now = self.core.clock.observe(now);
        if self.core.eof == Eof::Open {
            self.core.pending.handle_timeout(now);
        }
    }

    // ---- outputs ------------------------------------------------------------------------

    /// The next event, processing received lines and settlements as needed. Drain it until
    /// `None` after every input and command.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        loop {
            if let Some(event) = self.core.events.pop_front() {
                return Some(event);
            }
            if !self.step() {
                return None;
            }
        }
    }

    /// The earliest deadline of a request in flight; call
    /// [`ClientConnection::handle_timeout`] then.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.core.eof != Eof::Open {
            return None;
        }
        self.core.pending.poll_timeout()
    }

    /// The lines to write to the agent's stdin: take [`Outbox::pending`], write it, then
    /// [`Outbox::consume`] what was written.
    pub fn outbox(&mut self) -> &mut Outbox<S::Output> {
        self.transport.outbox()
    }

    // ---- getters ------------------------------------------------------------------------

    /// Whether `initialize` has succeeded.
    pub fn is_initialized(&self) -> bool {
        self.core.init == Init::Ready
    }

    /// Whether `initialize` failed (every command now returns `HandshakeFailed`).
    pub fn handshake_failed(&self) -> bool {
        self.core.init == Init::Failed
    }

    /// The agent's capabilities from `initialize` (empty before).
    pub fn agent_capabilities(&self) -> Capabilities {
        self.core.handshake.peer()
    }

    /// The agent's optional session methods from `initialize`.
    pub fn agent_features(&self) -> AgentFeatures {
        self.core.features
    }

    /// The state of session `id`, if the connection knows it.
    pub fn session_state(&self, id: &str) -> Option<SessionState> {
        self.core.sessions.get(id)
    }

    /// Requests we sent that are not settled yet (reported settlements excluded).
    pub fn requests_in_flight(&self) -> usize {
        self.core
            .pending
            .rows()
            .iter()
            .filter(|r| {
                matches!(
                    r.state,
                    crate::machine::pending::OutgoingState::Waiting { .. }
                )
            })
            .count()
    }

    /// Requests of the agent that wait for the application's answer.
    pub fn requests_owed(&self) -> usize {
        self.core.owing.rows().len()
    }

    /// Whether EOF was handled and [`ClientEvent::Closed`] has been queued.
    pub fn is_closed(&self) -> bool {
        self.core.eof == Eof::Done
    }

    // ---- commands: requests -------------------------------------------------------------

    /// Sends `initialize` with `clientInfo` and the capabilities of [`ClientConfig::serves`].
    /// Answered by [`ClientEvent::Initialized`] or [`ClientEvent::HandshakeFailed`]. May be
    /// repeated once answered; one at a time ([`UsageError::TooManyInFlight`]).
    pub fn initialize(&mut self, now: Instant) -> Result<RequestId, UsageError> {
        self.core.begin(now)?;
        if matches!(self.core.init, Init::InFlight(_)) {
            return Err(UsageError::TooManyInFlight);
        }
        let config = self.core.config.clone();
        let params = InitializeParams::new(&config);
        let timeout = self.core.config.request_timeout;
        let id = send(
            &mut self.core,
            &mut self.transport,
            Outgoing::new(ClientMethod::Initialize, None, timeout),
            &params,
        )?;
        self.core.init = Init::InFlight(id);
        Ok(id)
    }

    /// Sends `session/new` (always with `mcpServers`; pass [`NO_MCP_SERVERS`] for none).
    /// Answered by [`ClientEvent::SessionOpened`] or [`ClientEvent::Failed`].
    pub fn new_session<M: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        cwd: &str,
        mcp_servers: &M,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        let params = NewSessionParams { cwd, mcp_servers };
        let mut out = Outgoing::new(
            ClientMethod::NewSession,
            None,
            self.core.config.request_timeout,
        );
        out.session_input = SessionStart::New;
        send(&mut self.core, &mut self.transport, out, &params)
    }

    /// Sends `session/load` of `session_id`; only if the agent advertised `loadSession`
    /// ([`UsageError::NotAdvertised`]). History arrives as updates in context
    /// [`UpdateContext::Replay`], then [`ClientEvent::SessionOpened`].
    pub fn load_session<M: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session_id: &str,
        cwd: &str,
        mcp_servers: &M,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.require("session/load")?;
        self.open_existing(ClientMethod::LoadSession, session_id, cwd, mcp_servers)
    }

    /// Sends `session/resume` of `session_id`; only if the agent advertised
    /// `sessionCapabilities.resume` ([`UsageError::NotAdvertised`]).
    pub fn resume_session<M: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session_id: &str,
        cwd: &str,
        mcp_servers: &M,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.require("session/resume")?;
        self.open_existing(ClientMethod::ResumeSession, session_id, cwd, mcp_servers)
    }

    fn open_existing<M: Serialize + ?Sized>(
        &mut self,
        method: ClientMethod,
        session_id: &str,
        cwd: &str,
        mcp_servers: &M,
    ) -> Result<RequestId, UsageError> {
        let params = OpenSessionParams {
            session_id,
            cwd,
            mcp_servers,
        };
        let mut out = Outgoing::new(method, Some(session_id), self.core.config.request_timeout);
        out.session_input = SessionStart::Existing;
        send(&mut self.core, &mut self.transport, out, &params)
    }

    /// Sends `session/prompt` with `prompt` as the content blocks (anything that serializes
    /// as a JSON array of `ContentBlock`s). One turn per session
    /// ([`UsageError::TurnInProgress`]). `image`, `audio` and `resource` blocks need the
    /// agent's `promptCapabilities` ([`UsageError::NotAdvertised`], nothing sent). Answered
    /// by [`ClientEvent::TurnEnded`]; the prompt deadline is [`ClientConfig::prompt_timeout`].
    pub fn prompt<P: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session: &str,
        prompt: &P,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        let params = PromptParams {
            session_id: session,
            prompt,
        };
        let mut out = Outgoing::new(
            ClientMethod::Prompt,
            Some(session),
            self.core.config.prompt_timeout,
        );
        out.session_input = SessionStart::Turn;
        send(&mut self.core, &mut self.transport, out, &params)
    }

    /// [`ClientConnection::prompt`] with one text block: `[{"type":"text","text":…}]`.
    pub fn prompt_text(
        &mut self,
        now: Instant,
        session: &str,
        text: &str,
    ) -> Result<RequestId, UsageError> {
        self.prompt(now, session, &[TextBlock { kind: "text", text }])
    }

    /// Sends `session/set_mode`; refused during a turn ([`UsageError::TurnInProgress`]).
    /// Answered by [`ClientEvent::Answered`] or [`ClientEvent::Failed`].
    pub fn set_mode(
        &mut self,
        now: Instant,
        session: &str,
        mode_id: &str,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.configure(session, "session/set_mode")?;
        let params = SetModeParams {
            session_id: session,
            mode_id,
        };
        let out = Outgoing::new(
            ClientMethod::SetMode,
            Some(session),
            self.core.config.request_timeout,
        );
        send(&mut self.core, &mut self.transport, out, &params)
    }

    /// Sends `session/set_config_option` with exactly `sessionId`, `configId` and `value`;
    /// refused during a turn ([`UsageError::TurnInProgress`]).
    pub fn set_config_option<V: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session: &str,
        config_id: &str,
        value: &V,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.configure(session, "session/set_config_option")?;
        let params = SetConfigParams {
            session_id: session,
            config_id,
            value,
        };
        let out = Outgoing::new(
            ClientMethod::SetConfigOption,
            Some(session),
            self.core.config.request_timeout,
        );
        send(&mut self.core, &mut self.transport, out, &params)
    }

    /// Sends any other request (`authenticate`, `session/list`, `_agentao.cn/set_model`, an
    /// extension) after `initialize`. Answered by [`ClientEvent::Answered`] or
    /// [`ClientEvent::Failed`] with [`ClientMethod::Other`].
    ///
    /// An optional method the agent did not advertise is refused locally with
    /// [`UsageError::NotAdvertised`] naming what it needs, and nothing is sent:
    /// `session/load` (`loadSession`), `session/list`, `session/resume`, `session/close`,
    /// `session/delete` (`sessionCapabilities.*`), `logout` (`auth.logout`), `authenticate`
    /// (a non-empty `authMethods`) and `_agentao.cn/set_model` (listed in the agent's
    /// `_meta` extensions); so is a `session/prompt` with image, audio or resource blocks the
    /// agent's `promptCapabilities` do not allow, as with [`ClientConnection::prompt`].
    pub fn request<P: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        method: &str,
        params: &P,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.require(method)?;
        let out = Outgoing::new(ClientMethod::Other, None, self.core.config.request_timeout);
        send_named(&mut self.core, &mut self.transport, out, method, params)
    }

    /// Cancels the running turn of `session`: sends the `session/cancel` notification, and
    /// answers every open permission request of the session with
    /// `{"outcome":{"outcome":"cancelled"}}` and every ask_user with `{"outcome":"cancelled"}`
    /// (each reported as [`ClientEvent::RequestSettled`]). The turn ends `cancelled` when
    /// the agent answers. Returns whether a turn was running (cancelling an idle session
    /// sends nothing; cancelling twice is harmless).
    pub fn cancel(&mut self, now: Instant, session: &str) -> Result<bool, UsageError> {
        self.core.begin_ready(now)?;
        if !self.transport.outbox_ref().has_room_for(REPLY_RESERVE) {
            return Err(UsageError::OutboxFull);
        }
        let now = self.core.clock.latest();
        let out = self.core.sessions.handle(
            now,
            SessionInput::Cancel {
                id: session,
                via: CancelVia::Local,
            },
        )?;
        let started = matches!(out, SessionOutput::CancelStarted { .. });
        if started {
            write_cancel(self.transport.outbox(), session);
        }
        self.core.owing.cancel_session(session);
        Ok(started)
    }

    // ---- commands: answers --------------------------------------------------------------

    /// Answers a `session/request_permission`.
    pub fn respond_permission(
        &mut self,
        now: Instant,
        ticket: Ticket,
        answer: PermissionAnswer<'_>,
    ) -> Result<(), UsageError> {
        self.respond_with(now, ticket, Some(MethodKind::Permission), |outbox, id| {
            outbox.push_line(|s| write_result(s, id, &PermissionResult::new(answer)))
        })
    }

    /// Answers an `_agentao.cn/ask_user`.
    pub fn respond_ask_user(
        &mut self,
        now: Instant,
        ticket: Ticket,
        answer: AskUserAnswer<'_>,
    ) -> Result<(), UsageError> {
        self.respond_with(now, ticket, Some(MethodKind::AskUser), |outbox, id| {
            outbox.push_line(|s| write_result(s, id, &AskUserResult::new(answer)))
        })
    }

    /// Answers any other request (`fs/*`, `terminal/*`, `elicitation/create`, extensions)
    /// with `result`. Permission and ask_user requests have their own commands
    /// ([`UsageError::WrongKind`]), so their answers always have the right shape.
    pub fn respond<R: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        ticket: Ticket,
        result: &R,
    ) -> Result<(), UsageError> {
        self.respond_with(now, ticket, None, |outbox, id| {
            outbox.push_line(|s| write_result(s, id, result))
        })
    }

    /// Answers any request of the agent with a JSON-RPC error.
    pub fn respond_error(
        &mut self,
        now: Instant,
        ticket: Ticket,
        code: ErrorCode,
        message: &str,
    ) -> Result<(), UsageError> {
        self.core.begin(now)?;
        let row = self
            .core
            .owing
            .get(ticket)
            .filter(|r| r.state == crate::machine::pending::OwedState::Open)
            .ok_or(UsageError::AlreadySettled)?;
        let id = row.id.clone();
        self.transport
            .outbox()
            .push_line(|s| write_error(s, wire_id(id.as_raw()), code, message, None::<&()>))
            .map_err(|_| UsageError::OutboxFull)?;
        self.core.owing.answer(ticket).map(|_| ())
    }

    fn respond_with(
        &mut self,
        now: Instant,
        ticket: Ticket,
        kind: Option<MethodKind>,
        write: impl FnOnce(
            &mut Outbox<S::Output>,
            Id<'_>,
        ) -> Result<(), crate::conn::transport::OutboxFull>,
    ) -> Result<(), UsageError> {
        self.core.begin(now)?;
        let row = self
            .core
            .owing
            .get(ticket)
            .filter(|r| r.state == crate::machine::pending::OwedState::Open)
            .ok_or(UsageError::AlreadySettled)?;
        let special = matches!(row.kind, MethodKind::Permission | MethodKind::AskUser);
        match kind {
            Some(kind) if kind != row.kind => return Err(UsageError::WrongKind),
            None if special => return Err(UsageError::WrongKind),
            _ => {}
        }
        let id = row.id.clone();
        write(self.transport.outbox(), wire_id(id.as_raw())).map_err(|_| UsageError::OutboxFull)?;
        self.core.owing.answer(ticket).map(|_| ())
    }

    // ---- processing ---------------------------------------------------------------------

    /// The call order (module docs, step 1): events are drained to `None` before the next
    /// input. Checked in debug builds only; release builds simply queue behind them.
    fn check_drained(&self) {
        debug_assert!(
            self.core.events.is_empty(),
            "ClientConnection: drain poll_event() until None before the next handle_* call"
        );
    }

    /// One processing step: a settlement, a received line, or a step of the EOF sequence.
    /// Returns whether anything was done.
    fn step(&mut self) -> bool {
        if self.core.eof == Eof::Open && !self.transport.outbox_ref().has_room_for(REPLY_RESERVE) {
            // Replies could not be written: wait until the application writes the outbox.
            // After EOF the agent may be gone and the outbox unwritable, so the EOF sequence
            // never waits for room (replies that do not fit are dropped).
            return false;
        }
        if self.core.step_settled(self.transport.outbox()) {
            return true;
        }
        if self.core.eof == Eof::Done {
            return false;
        }
        if let Some((incoming, outbox)) = self.transport.next_incoming() {
            self.core.on_incoming(incoming, outbox);
            return true;
        }
        self.core.step_eof()
    }
}

/// What the session table made of an answer to `session/new`, `load` or `resume`.
enum Opened {
    Yes,
    Gone,
    Refused,
}

/// How a request we send changes the session table.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SessionStart {
    None,
    New,
    Existing,
    Turn,
}

/// A request about to be sent.
struct Outgoing<'a> {
    method: ClientMethod,
    session: Option<&'a str>,
    timeout: Option<Duration>,
    session_input: SessionStart,
}

impl<'a> Outgoing<'a> {
    fn new(method: ClientMethod, session: Option<&'a str>, timeout: Option<Duration>) -> Self {
        Self {
            method,
            session,
            timeout,
            session_input: SessionStart::None,
        }
    }
}

fn send<S: ClientStorage, P: Serialize + ?Sized>(
    core: &mut Core<S>,
    transport: &mut Transport<S::Input, S::Output>,
    out: Outgoing<'_>,
    params: &P,
) -> Result<RequestId, UsageError> {
    let name = out.method.name().unwrap_or_default();
    send_named(core, transport, out, name, params)
}

/// Registers a request in every table, writes it, and undoes everything if it cannot be
/// written: a command either sends its line and changes state, or does neither.
fn send_named<S: ClientStorage, P: Serialize + ?Sized>(
    core: &mut Core<S>,
    transport: &mut Transport<S::Input, S::Output>,
    out: Outgoing<'_>,
    name: &str,
    params: &P,
) -> Result<RequestId, UsageError> {
    let now = core.clock.latest();
    let id = core
        .pending
        .send(now, out.method.kind(), out.session, out.timeout)?;
    let row = OurRequest {
        id,
        method: out.method,
        empty_result: empty_result(name),
    };
    if core.requests.try_push(row).is_err() {
        let _ = core.pending.withdraw(id);
        return Err(UsageError::TooManyInFlight);
    }
    let req = ReqRef::Ours(id);
    let registered = match (out.session_input, out.session) {
        (SessionStart::None, _) => Ok(SessionOutput::Proceed),
        (SessionStart::New, _) => core.sessions.handle(now, SessionInput::NewStarted { req }),
        (SessionStart::Existing, Some(sid)) => core
            .sessions
            .handle(now, SessionInput::LoadStarted { id: sid, req }),
        (SessionStart::Turn, Some(sid)) => core
            .sessions
            .handle(now, SessionInput::Prompt { id: sid, req }),
        (_, None) => Ok(SessionOutput::Proceed),
    };
    if let Err(error) = registered {
        core.forget(id);
        return Err(error);
    }
    let before = transport.outbox_ref().len();
    let written = transport
        .outbox()
        .push_line(|s| write_request(s, id.0, name, Some(params)))
        .map_err(|_| UsageError::OutboxFull)
        .and_then(|()| {
            // Typed or through `request()`, a prompt carries only advertised content.
            if name != "session/prompt" {
                return Ok(());
            }
            let line = &transport.outbox_ref().pending()[before..];
            let (allowed, written) = (core.prompt_content_advertised(line), line.len());
            if allowed.is_err() {
                transport.outbox().retract(written);
            }
            allowed
        });
    if let Err(error) = written {
        match (out.session_input, out.session) {
            (SessionStart::New | SessionStart::Existing, _) => {
                let _ = core.sessions.handle(now, SessionInput::OpenFailed { req });
            }
            (SessionStart::Turn, Some(sid)) => {
                let _ = core.sessions.handle(
                    now,
                    SessionInput::FailTurn {
                        id: sid,
                        prompt: req,
                    },
                );
            }
            _ => {}
        }
        core.forget(id);
        return Err(error);
    }
    Ok(id)
}

fn write_cancel<O: crate::wire::frame::Storage>(outbox: &mut Outbox<O>, session: &str) {
    // Room was checked by the caller (REPLY_RESERVE covers a session id of SESSION_ID_MAX
    // bytes even fully escaped).
    let _ = outbox.push_line(|s| {
        write_notification(
            s,
            "session/cancel",
            Some(&SessionParams {
                session_id: session,
            }),
        )
    });
}

/// Whether the result of `method` (a request a client sends) is an object whose members are
/// all optional, so `{}` is a whole answer: a `null` result there is read as `{}` (some SDKs
/// answer `null`; R-RPC-5). Without `alloc` the method table is not
/// built, so the names are listed here; a test holds them to the table.
pub fn empty_result(method: &str) -> bool {
    matches!(
        method,
        "authenticate"
            | "logout"
            | "session/load"
            | "session/resume"
            | "session/close"
            | "session/delete"
            | "session/set_mode"
    )
}

/// The id to echo, from the raw JSON text kept by the owed table.
fn wire_id(raw: &str) -> Id<'_> {
    match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => Id::Str(JsonStr::new_unchecked(inner, inner.contains('\\'))),
        None => Id::Int(raw),
    }
}

fn reply_error<O: crate::wire::frame::Storage>(
    outbox: &mut Outbox<O>,
    id: Id<'_>,
    code: ErrorCode,
    message: &dyn fmt::Display,
) {
    // `Transport::feed` and `step` keep REPLY_RESERVE bytes free for exactly this reply.
    let _ = outbox.push_line(|s| write_error(s, id, code, message, None::<&()>));
}

/// `-32601` for a method the application does not serve.
struct MethodNotFound<'a>(&'a str);

impl fmt::Display for MethodNotFound<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Method not found: {}", self.0)
    }
}

/// `-32602` with the decoder's message, e.g. `Invalid params: fs/read_text_file.path is
/// required` (the prefix of every `-32602` text, R-RPC-10).
#[cfg(feature = "alloc")]
struct InvalidParams<'a>(&'a str);

#[cfg(feature = "alloc")]
impl fmt::Display for InvalidParams<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid params: {}", self.0)
    }
}

/// `-32602` for a request without a string `sessionId`.
struct MissingSession<'a>(&'a str);

impl fmt::Display for MissingSession<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid params: {}.sessionId must be a string", self.0)
    }
}

impl<S: ClientStorage> Core<S> {
    /// Every command: refused after EOF; time moves on.
    fn begin(&mut self, now: Instant) -> Result<(), UsageError> {
        self.clock.observe(now);
        if self.eof != Eof::Open {
            return Err(UsageError::Closed);
        }
        Ok(())
    }

    /// Commands that need the handshake done.
    fn begin_ready(&mut self, now: Instant) -> Result<(), UsageError> {
        self.begin(now)?;
        match self.init {
            Init::Ready => Ok(()),
            Init::Failed => Err(UsageError::HandshakeFailed),
            Init::NotSent | Init::InFlight(_) => Err(UsageError::NotInitialized),
        }
    }

    /// Whether the agent advertised what sending `method` needs (R-RPC-7: an agent answers
    /// `-32601` for what it does not advertise, so asking is a local mistake).
    fn require(&self, method: &str) -> Result<(), UsageError> {
        let f = self.features;
        let peer = self.handshake.peer();
        let (advertised, method, needs) = match method {
            "session/load" => (
                peer.contains(Capabilities::LOAD_SESSION),
                "session/load",
                "agentCapabilities.loadSession",
            ),
            "session/list" => (
                f.list,
                "session/list",
                "agentCapabilities.sessionCapabilities.list",
            ),
            "session/resume" => (
                f.resume,
                "session/resume",
                "agentCapabilities.sessionCapabilities.resume",
            ),
            "session/close" => (
                f.close,
                "session/close",
                "agentCapabilities.sessionCapabilities.close",
            ),
            "session/delete" => (
                f.delete,
                "session/delete",
                "agentCapabilities.sessionCapabilities.delete",
            ),
            "logout" => (f.logout, "logout", "agentCapabilities.auth.logout"),
            "authenticate" => (f.authenticate, "authenticate", "a non-empty authMethods"),
            "_agentao.cn/set_model" => (
                peer.contains(Capabilities::SET_MODEL),
                "_agentao.cn/set_model",
                "_agentao.cn/set_model in _meta[\"_agentao.cn/extensions\"]",
            ),
            _ => return Ok(()),
        };
        if advertised {
            Ok(())
        } else {
            Err(UsageError::NotAdvertised { method, needs })
        }
    }

    /// Whether every block of the `session/prompt` line we just wrote is of a type the agent
    /// takes: `text` and `resource_link` always, `image`, `audio` and `resource` only when
    /// advertised in `promptCapabilities` (R-TURN-1).
    fn prompt_content_advertised(&self, line: &[u8]) -> Result<(), UsageError> {
        let peer = self.handshake.peer();
        let every = Capabilities::PROMPT_IMAGE
            .with(Capabilities::PROMPT_AUDIO, true)
            .with(Capabilities::PROMPT_EMBEDDED_CONTEXT, true);
        if peer.contains(every) {
            return Ok(());
        }
        let blocks = core::str::from_utf8(line)
            .ok()
            .and_then(|text| crate::wire::json::parse_value(text.trim_end()).ok())
            .and_then(|request| peek::path(request, &["params", "prompt"]));
        let Some(blocks) = blocks else {
            return Ok(());
        };
        for block in blocks.elements() {
            let Some(kind) = block.get_field("type").and_then(|t| t.as_str()) else {
                continue;
            };
            let needed = [
                (
                    "image",
                    Capabilities::PROMPT_IMAGE,
                    "agentCapabilities.promptCapabilities.image",
                ),
                (
                    "audio",
                    Capabilities::PROMPT_AUDIO,
                    "agentCapabilities.promptCapabilities.audio",
                ),
                (
                    "resource",
                    Capabilities::PROMPT_EMBEDDED_CONTEXT,
                    "agentCapabilities.promptCapabilities.embeddedContext",
                ),
            ];
            for (name, flag, needs) in needed {
                if kind.eq_str(name) && !peer.contains(flag) {
                    return Err(UsageError::NotAdvertised {
                        method: "session/prompt",
                        needs,
                    });
                }
            }
        }
        Ok(())
    }

    /// The busy gate for mode and config changes.
    fn configure(&mut self, session: &str, method: &str) -> Result<(), UsageError> {
        let now = self.clock.latest();
        self.sessions
            .handle(
                now,
                SessionInput::Configure {
                    id: session,
                    method,
                    actor: crate::machine::session::Actor::Local,
                },
            )
            .map(|_| ())
    }

    /// Drops a request that was never written.
    fn forget(&mut self, id: RequestId) {
        let _ = self.pending.withdraw(id);
        let _ = self.take_method(id);
    }

    fn take_method(&mut self, id: RequestId) -> Option<ClientMethod> {
        self.take_request(id).map(|r| r.method)
    }

    fn take_request(&mut self, id: RequestId) -> Option<OurRequest> {
        let index = self.requests.rows().iter().position(|r| r.id == id)?;
        Some(self.requests.remove_at(index))
    }

    fn push(&mut self, event: ClientEvent) {
        // A step produces at most EVENT_SLOTS events and only runs on an empty queue.
        let _ = self.events.push_back(event);
    }

    fn violation(&mut self, violation: Violation) {
        self.push(ClientEvent::Violation(violation));
    }

    // ---- settlements without an answer --------------------------------------------------

    fn step_settled(&mut self, outbox: &mut Outbox<S::Output>) -> bool {
        if let Some(settled) = self.pending.poll_settled() {
            self.on_local_settlement(settled, outbox);
            return true;
        }
        if let Some((row, how)) = self.owing.poll_settled() {
            let id = wire_id(row.id.as_raw());
            match how {
                // Nothing is written after EOF: nothing reads it.
                Settle::ConnectionClosed => {}
                Settle::SessionCancelled if row.kind == MethodKind::AskUser => {
                    let _ = outbox.push_line(|s| {
                        write_result(s, id, &AskUserResult::new(AskUserAnswer::Cancelled))
                    });
                }
                Settle::SessionCancelled => {
                    let _ = outbox.push_line(|s| {
                        write_result(s, id, &PermissionResult::new(PermissionAnswer::Cancelled))
                    });
                }
                Settle::CancelRequested => {
                    let rejection = Rejection::RequestCancelled;
                    reply_error(outbox, id, rejection.code(), &rejection);
                }
            }
            self.push(ClientEvent::RequestSettled {
                ticket: row.ticket,
                kind: row.kind,
                how,
            });
            return true;
        }
        false
    }

    /// A request of ours settled without an answer: its deadline passed, or EOF.
    fn on_local_settlement(&mut self, settled: Settled, outbox: &mut Outbox<S::Output>) {
        let method = self.take_method(settled.id).unwrap_or(ClientMethod::Other);
        let failure = match settled.outcome {
            SettledOutcome::TimedOut => Failure::TimedOut,
            SettledOutcome::Disconnected => Failure::Disconnected,
            // Only permission and ask_user requests settle on a cancel; a client sends none.
            _ => Failure::Malformed,
        };
        let now = self.clock.latest();
        match method {
            ClientMethod::Initialize => {
                self.init = Init::Failed;
                self.push(ClientEvent::HandshakeFailed {
                    request: settled.id,
                    error: HandshakeError::Failed(failure),
                });
            }
            // EOF: the session table reports the turn (step_eof).
            ClientMethod::Prompt if failure == Failure::Disconnected => {}
            ClientMethod::Prompt => {
                let Some(session) = settled.session else {
                    return;
                };
                let sid = session.as_str();
                // R-HOST-2: a prompt timeout sends session/cancel (Agentao's blocking
                // path does not: its bug 18), and settles what the agent asked meanwhile.
                let cancel = self.sessions.handle(
                    now,
                    SessionInput::Cancel {
                        id: sid,
                        via: CancelVia::Local,
                    },
                );
                if matches!(cancel, Ok(SessionOutput::CancelStarted { .. })) {
                    write_cancel(outbox, sid);
                }
                self.owing.cancel_session(sid);
                let prompt = ReqRef::Ours(settled.id);
                let _ = self
                    .sessions
                    .handle(now, SessionInput::FailTurn { id: sid, prompt });
                self.push(ClientEvent::TurnEnded {
                    session,
                    request: settled.id,
                    outcome: TurnOutcome::TimedOut,
                });
            }
            ClientMethod::NewSession | ClientMethod::LoadSession | ClientMethod::ResumeSession => {
                let req = ReqRef::Ours(settled.id);
                let _ = self.sessions.handle(now, SessionInput::OpenFailed { req });
                self.push(ClientEvent::Failed {
                    request: settled.id,
                    method,
                    failure,
                });
            }
            _ => self.push(ClientEvent::Failed {
                request: settled.id,
                method,
                failure,
            }),
        }
    }

    /// One step of the EOF sequence (R-HOST-5: EOF fails every pending request at
    /// once; Agentao's client waits for each timeout: its bug 17).
    fn step_eof(&mut self) -> bool {
        let now = self.clock.latest();
        match self.eof {
            Eof::Open | Eof::Done => false,
            Eof::Draining => {
                self.pending.handle_eof(now);
                self.owing.handle_eof();
                self.eof = Eof::Sessions;
                true
            }
            Eof::Sessions => {
                match self.sessions.handle_eof(now) {
                    Some(SessionOutput::TurnEnded {
                        session,
                        prompt: ReqRef::Ours(request),
                        ..
                    }) => self.push(ClientEvent::TurnEnded {
                        session,
                        request,
                        outcome: TurnOutcome::Disconnected,
                    }),
                    Some(_) => {}
                    None => {
                        self.eof = Eof::Done;
                        self.push(ClientEvent::Closed);
                    }
                }
                true
            }
        }
    }

    // ---- lines from the agent -----------------------------------------------------------

    fn on_incoming(&mut self, incoming: Incoming<'_>, outbox: &mut Outbox<S::Output>) {
        match incoming {
            Incoming::Rejected(rejection) => self.violation(Violation::RejectedLine {
                code: rejection.code,
            }),
            Incoming::Message(Message::Response(response)) => self.on_response(response),
            Incoming::Message(Message::Request(request)) => self.on_request(request, outbox),
            Incoming::Message(Message::Notification(notification)) => {
                self.on_notification(notification)
            }
        }
    }

    fn on_response(&mut self, response: Response<'_>) {
        let now = self.clock.latest();
        let answer = match response.outcome {
            Outcome::Result(_) => Answer::Result,
            Outcome::Error(error) => Answer::Error(error.code),
            Outcome::Malformed(_) => Answer::Malformed,
        };
        match self
            .pending
            .handle_response(now, response.id.as_u64(), answer)
        {
            // R-ID-6: responses with unknown ids are reported, never answered.
            ResponseVerdict::Unknown => self.violation(Violation::UnknownResponse),
            ResponseVerdict::Late { id, .. } => {
                let _ = self.take_method(id);
                self.violation(Violation::LateResponse { request: id });
            }
            ResponseVerdict::Settled(settled) => {
                let row = self.take_request(settled.id);
                let method = row.map_or(ClientMethod::Other, |r| r.method);
                let empty_result = row.is_some_and(|r| r.empty_result);
                let result = match response.outcome {
                    // R-RPC-5: some SDKs answer `null` where `{}` is meant.
                    Outcome::Result(result) if empty_result && result.is_null() => {
                        Ok(RawValue::EMPTY_OBJECT)
                    }
                    Outcome::Result(result) => Ok(result),
                    Outcome::Error(error) => Err(Failure::Error {
                        code: error.code,
                        message: Text::from_json(error.message),
                    }),
                    // R-RPC-4: still settles, as an error.
                    Outcome::Malformed(_) => Err(Failure::Malformed),
                };
                self.on_answer(settled, method, result);
            }
        }
    }

    fn on_answer(
        &mut self,
        settled: Settled,
        method: ClientMethod,
        result: Result<RawValue<'_>, Failure>,
    ) {
        let request = settled.id;
        let now = self.clock.latest();
        match method {
            ClientMethod::Initialize => self.on_initialize(request, result),
            ClientMethod::NewSession | ClientMethod::LoadSession | ClientMethod::ResumeSession => {
                let req = ReqRef::Ours(request);
                let opened = match (method, result) {
                    (_, Err(failure)) => Err(failure),
                    (ClientMethod::NewSession, Ok(r)) => r
                        .get_field("sessionId")
                        .and_then(|v| v.as_str())
                        .ok_or(Failure::BadResult)
                        .map(|id| (Some(id), r)),
                    (_, Ok(r)) => Ok((None, r)),
                };
                match opened {
                    Err(failure) => {
                        let _ = self.sessions.handle(now, SessionInput::OpenFailed { req });
                        self.push(ClientEvent::Failed {
                            request,
                            method,
                            failure,
                        });
                    }
                    Ok((named, r)) => {
                        let session = match named {
                            Some(id) => peek::session_id(id),
                            None => settled.session.clone(),
                        };
                        let out = session.as_ref().map(|sid| {
                            match self.sessions.handle(
                                now,
                                SessionInput::Opened {
                                    req,
                                    id: sid.as_str(),
                                },
                            ) {
                                Ok(SessionOutput::Opened) => Opened::Yes,
                                Ok(SessionOutput::Ignore) => Opened::Gone,
                                _ => Opened::Refused,
                            }
                        });
                        match (out, session) {
                            (Some(Opened::Yes), Some(session)) => {
                                self.push(ClientEvent::SessionOpened {
                                    request,
                                    method,
                                    session,
                                    result: Payload::new(r.get()),
                                });
                            }
                            // Gone already (EOF raced it): nothing to open.
                            (Some(Opened::Gone), _) => {}
                            _ => {
                                let _ = self.sessions.handle(now, SessionInput::OpenFailed { req });
                                self.violation(Violation::BadSessionId);
                                self.push(ClientEvent::Failed {
                                    request,
                                    method,
                                    failure: Failure::BadResult,
                                });
                            }
                        }
                    }
                }
            }
            ClientMethod::Prompt => {
                let Some(session) = settled.session else {
                    return;
                };
                let prompt = ReqRef::Ours(request);
                let sid = session.as_str();
                let stop = result.as_ref().ok().map(|r| {
                    r.get_field("stopReason")
                        .and_then(|v| v.as_str())
                        .and_then(|s| StopReason::ALL.into_iter().find(|k| s.eq_str(k.as_str())))
                });
                let input = match stop {
                    Some(Some(stop)) => SessionInput::EndTurn {
                        id: sid,
                        prompt,
                        stop,
                    },
                    _ => SessionInput::FailTurn { id: sid, prompt },
                };
                let outcome = match self.sessions.handle(now, input) {
                    Ok(SessionOutput::TurnEnded {
                        stop, rewritten, ..
                    }) => TurnOutcome::Stopped { stop, rewritten },
                    Ok(SessionOutput::TurnFailed { .. }) => TurnOutcome::Failed(match result {
                        Err(failure) => failure,
                        Ok(_) => Failure::BadResult,
                    }),
                    // The turn was already settled (timed out, closed).
                    _ => return,
                };
                self.push(ClientEvent::TurnEnded {
                    session,
                    request,
                    outcome,
                });
            }
            _ => match result {
                Ok(r) => self.push(ClientEvent::Answered {
                    request,
                    method,
                    result: Payload::new(r.get()),
                }),
                Err(failure) => self.push(ClientEvent::Failed {
                    request,
                    method,
                    failure,
                }),
            },
        }
    }

    fn on_initialize(&mut self, request: RequestId, result: Result<RawValue<'_>, Failure>) {
        let outcome = match result {
            Err(failure) => Err(HandshakeError::Failed(failure)),
            Ok(r) => match r.get_field("protocolVersion").and_then(|v| v.as_i64()) {
                Some(1) => Ok(r),
                Some(other) => Err(HandshakeError::UnsupportedVersion(other)),
                None => Err(HandshakeError::MissingVersion),
            },
        };
        match outcome {
            Ok(r) => {
                let (agent, features) = peek::agent_capabilities(r);
                let _ = self.handshake.handle(HandshakeInput::InitializeAnswered {
                    protocol_version: 1,
                    capabilities: agent,
                });
                self.features = features;
                self.init = Init::Ready;
                self.push(ClientEvent::Initialized {
                    request,
                    agent,
                    features,
                    result: Payload::new(r.get()),
                    #[cfg(feature = "alloc")]
                    decoded: crate::schema::decode_result("initialize", r.get()).ok(),
                });
            }
            Err(error) => {
                self.init = Init::Failed;
                self.push(ClientEvent::HandshakeFailed { request, error });
            }
        }
    }

    fn on_request(&mut self, request: Request<'_>, outbox: &mut Outbox<S::Output>) {
        let method = AgentMethod::KNOWN
            .into_iter()
            .find(|m| request.method.eq_str(m.name().unwrap_or_default()))
            .unwrap_or(AgentMethod::Other);
        let name = Text::from_json(request.method);
        let refuse =
            |core: &mut Self, outbox: &mut Outbox<S::Output>, code, text: &dyn fmt::Display| {
                reply_error(outbox, request.id, code, text);
                core.violation(Violation::RequestRefused {
                    method: name.clone(),
                    code,
                });
            };
        // Seed appendix C: nothing is served before the handshake.
        if let HandshakeOutput::Reject(rejection) =
            self.handshake.handle(HandshakeInput::PeerRequest {
                method: name.as_str(),
            })
        {
            refuse(self, outbox, rejection.code(), &rejection);
            return;
        }
        // R-FS-2: unserved methods get -32601, never silence.
        if !self.serves(method) {
            refuse(
                self,
                outbox,
                ErrorCode::METHOD_NOT_FOUND,
                &MethodNotFound(name.as_str()),
            );
            return;
        }
        let session_field = request
            .params
            .and_then(|p| p.get_field("sessionId"))
            .and_then(|v| v.as_str());
        let session = match (method, session_field) {
            (AgentMethod::Other, field) => field.and_then(peek::session_id),
            (_, None) => {
                refuse(
                    self,
                    outbox,
                    ErrorCode::INVALID_PARAMS,
                    &MissingSession(name.as_str()),
                );
                return;
            }
            (_, Some(field)) => {
                let known =
                    peek::session_id(field).map(|sid| (self.sessions.get(sid.as_str()), sid));
                match known {
                    Some((Some(SessionState::Active { .. }), sid)) => Some(sid),
                    Some((Some(_), sid)) => {
                        let rejection = Rejection::SessionNotActive {
                            session: sid.as_str(),
                        };
                        refuse(self, outbox, rejection.code(), &rejection);
                        return;
                    }
                    _ => {
                        let text = Text::from_json(field);
                        let rejection = Rejection::UnknownSession {
                            session: text.as_str(),
                        };
                        refuse(self, outbox, rejection.code(), &rejection);
                        return;
                    }
                }
            }
        };
        #[cfg(feature = "alloc")]
        let decoded = match method {
            AgentMethod::Other => None,
            _ => match crate::schema::AgentRequest::decode(
                name.as_str(),
                request.params.map(|p| p.get()),
            ) {
                Ok(decoded) => Some(decoded),
                Err(error) => {
                    refuse(self, outbox, error.code(), &InvalidParams(error.message()));
                    return;
                }
            },
        };
        let mut raw = heapless::String::<{ PEER_ID_MAX + 2 }>::new();
        let raw_id = match request.id {
            Id::Int(digits) => Some(digits),
            Id::Str(s) => {
                let ok =
                    raw.push('"').is_ok() && raw.push_str(s.raw()).is_ok() && raw.push('"').is_ok();
                ok.then_some(raw.as_str())
            }
            Id::Null => None,
        };
        let received = match raw_id {
            Some(raw_id) => {
                self.owing
                    .receive(raw_id, method.kind(), session.as_ref().map(|s| s.as_str()))
            }
            None => Received::Reject(Rejection::IdTooLong),
        };
        let ticket = match received {
            Received::Owed(ticket) => ticket,
            Received::Reject(rejection) => {
                refuse(self, outbox, rejection.code(), &rejection);
                return;
            }
        };
        let cancelling = session
            .as_ref()
            .and_then(|s| self.sessions.get(s.as_str()))
            .and_then(|state| state.turn())
            .is_some_and(|turn| turn.is_cancelling());
        let id = self
            .owing
            .get(ticket)
            .map(|row| row.id.clone())
            .expect("a ticket just handed out is owed");
        self.push(ClientEvent::Request(IncomingRequest {
            ticket,
            id,
            method,
            name,
            session: session.clone(),
            params: request
                .params
                .map_or_else(Payload::none, |p| Payload::new(p.get())),
            #[cfg(feature = "alloc")]
            decoded,
        }));
        // Asked after we cancelled: answered `cancelled` at once, like the ones before.
        if cancelling && let Some(session) = session {
            self.owing.cancel_session(session.as_str());
        }
    }

    /// Whether the application answers `method` (permission requests always).
    fn serves(&self, method: AgentMethod) -> bool {
        let serves = self.config.serves;
        match method {
            AgentMethod::RequestPermission => true,
            AgentMethod::AskUser => serves.ask_user,
            AgentMethod::ReadTextFile => serves.fs_read,
            AgentMethod::WriteTextFile => serves.fs_write,
            AgentMethod::TerminalCreate
            | AgentMethod::TerminalOutput
            | AgentMethod::TerminalWaitForExit
            | AgentMethod::TerminalKill
            | AgentMethod::TerminalRelease => serves.terminal,
            AgentMethod::ElicitationCreate => serves.elicitation,
            AgentMethod::Other => serves.extension_methods,
        }
    }

    fn on_notification(&mut self, notification: Notification<'_>) {
        let params = notification.params;
        if notification.method.eq_str("session/update") {
            self.on_update(params);
        } else if notification.method.eq_str("$/cancel_request") {
            // R-CANCEL-4: the request is answered -32800 (next step).
            if let Some(id) = params.and_then(|p| p.get_field("requestId")) {
                let _ = self.owing.handle_cancel_request(id.get());
            }
        } else {
            self.push(ClientEvent::Notification {
                method: Text::from_json(notification.method),
                params: params.map_or_else(Payload::none, |p| Payload::new(p.get())),
            });
        }
    }

    fn on_update(&mut self, params: Option<RawValue<'_>>) {
        let session = params
            .and_then(|p| p.get_field("sessionId"))
            .and_then(|v| v.as_str())
            .and_then(peek::session_id);
        let kind = params
            .and_then(|p| peek::path(p, &["update", "sessionUpdate"]))
            .and_then(|v| v.as_str());
        let state = session.as_ref().and_then(|s| self.sessions.get(s.as_str()));
        let context = match state {
            None => UpdateContext::UnknownSession,
            Some(SessionState::Creating { .. }) => UpdateContext::Replay,
            Some(SessionState::Active { turn: Some(_) }) => UpdateContext::Turn,
            Some(SessionState::Active { turn: None }) => {
                if kind.is_some_and(peek::is_turn_content) {
                    UpdateContext::AfterTurn
                } else {
                    UpdateContext::Idle
                }
            }
            Some(SessionState::Closed) => UpdateContext::Closed,
        };
        self.push(ClientEvent::Update {
            session: session.unwrap_or_default(),
            context,
            kind: kind.map(Text::from_json).unwrap_or_default(),
            params: params.map_or_else(Payload::none, |p| Payload::new(p.get())),
            #[cfg(feature = "alloc")]
            decoded: crate::schema::decode_params("session/update", params.map(|p| p.get())),
        });
    }
}

/// The session ids of a connection's open sessions, for callers that iterate.
impl<S: ClientStorage> ClientConnection<S> {
    /// Every session the connection knows, with its state, in creation order (sessions whose
    /// `session/new` is in flight have an empty id).
    pub fn sessions(&self) -> impl Iterator<Item = (&SessionId, SessionState)> {
        self.core.sessions.rows().iter().map(|r| (&r.id, r.state))
    }
}
