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
//! 2. write [`ClientConnection::poll_transmit`] to the agent's stdin and report what was
//!    written with [`ClientConnection::transmitted`]; if anything was pending, go back to 1
//!    (a full outbox pauses processing);
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
//! let line = client.poll_transmit().to_vec();
//! assert!(line.starts_with(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1"#));
//! let n = line.len();
//! client.transmitted(n);
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

mod commands;
mod config;
mod event;
mod inbound;
mod params;
mod peek;
mod settle;
mod storage;
mod text;

use core::fmt;

#[cfg(feature = "alloc")]
pub use crate::conn::storage::Growable;
pub use crate::conn::storage::{Buffers, Fixed};
pub use config::{ClientConfig, Serves, Shows};
pub use event::{
    AdvertisedMethods, AgentMethod, AgentViolation, ClientEvent, ClientMethod, Failure,
    HandshakeError, IncomingRequest, TurnOutcome, UpdateContext,
};
pub use params::{AskUserAnswer, NO_MCP_SERVERS, PermissionAnswer};
pub use storage::OurRequest;
pub use text::{PAYLOAD_MAX, Payload, TEXT_MAX, Text};

use crate::conn::agent::AuthMethodList;
use crate::conn::transport::{Outbox, REPLY_RESERVE, Transport};
use crate::machine::handshake::{Capabilities, Handshake};
use crate::machine::pending::{Owing, Pending};
use crate::machine::session::{SessionInput, SessionState, Sessions};
use crate::machine::time::Monotonic;
use crate::machine::{Instant, RequestId, SessionId, Table, UsageError};
use crate::wire::encode::write_error;
use crate::wire::frame::Framer;
use crate::wire::{ErrorCode, Id, JsonStr};

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
pub struct ClientConnection<S: Buffers> {
    transport: Transport<S::Input, S::Output>,
    core: Core<S>,
}

/// Everything but the transport, so a line borrowed from the transport can be handled.
struct Core<S: Buffers> {
    config: ClientConfig,
    clock: Monotonic,
    handshake: Handshake,
    init: Init,
    features: AdvertisedMethods,
    /// The agent's `authMethods` (as many as fit) and whether all fit.
    auth_methods: AuthMethodList,
    auth_methods_complete: bool,
    sessions: Sessions<S::Sessions>,
    pending: Pending<S::Pending>,
    owing: Owing<S::Owing>,
    requests: S::Requests,
    events: heapless::Deque<ClientEvent, EVENT_SLOTS>,
    eof: Eof,
}

impl<S: Buffers> fmt::Debug for ClientConnection<S> {
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

impl<S: Buffers> ClientConnection<S> {
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
            features: AdvertisedMethods::default(),
            auth_methods: AuthMethodList::new(),
            auth_methods_complete: true,
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

    /// One whole message from the agent on a message transport (a WebSocket text frame, an
    /// SSE event's data, an HTTP body; R-MSG-1): the frame is the message, no newline ends
    /// it. Returns `false` and takes nothing while the outbox lacks room for a reply or an
    /// earlier input is not processed yet: drain the events, write out, and give the same
    /// message again. After EOF messages are discarded (`true`).
    pub fn handle_message(&mut self, now: Instant, message: &[u8]) -> bool {
        self.check_drained();
        self.core.clock.observe(now);
        if self.core.eof != Eof::Open {
            return true;
        }
        self.transport.feed_message(message)
    }

    /// The agent's stdout ended (it exited or closed it). Lines already received, and a
    /// last line without newline, are still processed as usual (garbage among them still
    /// gets its wire-level error reply); then every pending request fails at once
    /// ([`Failure::Disconnected`], [`TurnOutcome::Disconnected`]), every request of the
    /// agent still owed is settled without an answer ([`Settle::ConnectionClosed`](crate::machine::pending::Settle::ConnectionClosed): nobody
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

    /// Bytes to write to the agent's stdin: whole lines, in order. Report what was written
    /// with [`transmitted`](Self::transmitted).
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
    pub fn outbox(&mut self) -> &mut Outbox<S::Output> {
        self.transport.outbox()
    }

    /// Whether more may be sent now (the outbox is under its high-water mark).
    pub fn has_room_for_updates(&self) -> bool {
        self.transport.outbox_ref().has_room_for_updates()
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
    pub fn agent_features(&self) -> AdvertisedMethods {
        self.core.features
    }

    /// The agent's `authMethods` from `initialize` (R-AUTH-6): those with a string `id` and
    /// `name` and a known `type`, in order, as many as fit the fixed storage of [`AuthMethodList`]
    /// (the whole list is in [`ClientEvent::Initialized`]'s `result`). Empty before.
    pub fn auth_methods(&self) -> &AuthMethodList {
        &self.core.auth_methods
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

fn reply_error<O: crate::wire::frame::ByteStorage>(
    outbox: &mut Outbox<O>,
    id: Id<'_>,
    code: ErrorCode,
    message: &dyn fmt::Display,
) {
    // `Transport::feed` and `step` keep REPLY_RESERVE bytes free for exactly this reply.
    let _ = outbox.push_line(|s| write_error(s, id, code, message, None::<&()>));
}

impl<S: Buffers> Core<S> {
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

    fn violation(&mut self, violation: AgentViolation) {
        self.push(ClientEvent::PeerViolation(violation));
    }
}

/// The session ids of a connection's open sessions, for callers that iterate.
impl<S: Buffers> ClientConnection<S> {
    /// Every session the connection knows, with its state, in creation order (sessions whose
    /// `session/new` is in flight have an empty id).
    pub fn sessions(&self) -> impl Iterator<Item = (&SessionId, SessionState)> {
        self.core.sessions.rows().iter().map(|r| (&r.id, r.state))
    }
}
