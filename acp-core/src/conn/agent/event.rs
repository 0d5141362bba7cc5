//! What the connection hands the application: [`AgentEvent`], drained with
//! [`poll_event`](super::AgentConnection::poll_event).
//!
//! Events own their data so the application can keep one while it issues commands (read a
//! prompt while sending updates). With `alloc` they carry the typed messages of
//! [`crate::schema`]; without it they carry a bounded copy of the raw `params` JSON
//! ([`RawParams`], at most [`RAW_PARAMS_MAX`] bytes), which the application reads with
//! [`crate::wire::json`]. A request whose params do not fit is answered
//! `-32603` by the connection and never becomes an event.

use crate::machine::handshake::Capabilities;
use crate::machine::permission::PermissionDecision;
use crate::machine::{RequestId, SessionId, Ticket};
use crate::wire::ErrorCode;

#[cfg(feature = "alloc")]
use alloc::string::String;

/// Most bytes of `params` an event carries without `alloc`.
pub const RAW_PARAMS_MAX: usize = 2048;

/// Longest method name an event carries without `alloc`.
pub const METHOD_MAX: usize = 64;

/// The raw `params` JSON of a request, copied (no `alloc`). `{}` when the request had none.
pub type RawParams = heapless::String<RAW_PARAMS_MAX>;

/// Something the application must act on (or may log). Each variant says what to do.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// The client completed `initialize` (possibly again). Nothing to answer: the connection
    /// answered with the configured capabilities.
    Initialized {
        /// The client's capabilities the connection acts on (`fs`, `terminal`, elicitation).
        client: Capabilities,
        /// The whole request, typed.
        #[cfg(feature = "alloc")]
        request: crate::schema::InitializeRequest,
    },
    /// `session/new`, validated. Answer with
    /// [`accept_new_session`](super::AgentConnection::accept_new_session) (or
    /// `accept_new_session_id`) or [`respond_error`](super::AgentConnection::respond_error).
    NewSession {
        /// The request to answer.
        ticket: Ticket,
        /// `cwd`, `mcpServers`, … (checked: absolute cwd, advertised MCP transports).
        #[cfg(feature = "alloc")]
        request: crate::schema::NewSessionRequest,
        /// The raw params.
        #[cfg(not(feature = "alloc"))]
        params: RawParams,
    },
    /// `session/load` (or `session/resume`) of `session`. Send the history with
    /// [`send_update`](super::AgentConnection::send_update) (load only), then answer with
    /// `accept_load` or [`respond_error`](super::AgentConnection::respond_error) (for a missing session:
    /// [`load_not_found`](super::AgentConnection::load_not_found)).
    LoadSession {
        /// The request to answer.
        ticket: Ticket,
        /// The session to load.
        session: SessionId,
        /// `true` for `session/resume` (no replay).
        resume: bool,
        /// The raw params JSON (`cwd`, `mcpServers`).
        #[cfg(feature = "alloc")]
        params: String,
    },
    /// A prompt turn started. Send updates, then answer once with
    /// [`end_turn`](super::AgentConnection::end_turn) or
    /// [`fail_turn`](super::AgentConnection::fail_turn).
    Prompt {
        /// The prompt request (answered through `end_turn`).
        ticket: Ticket,
        /// The session.
        session: SessionId,
        /// The content blocks (checked against `promptCapabilities`).
        #[cfg(feature = "alloc")]
        prompt: alloc::vec::Vec<crate::schema::ContentBlock>,
        /// The raw params.
        #[cfg(not(feature = "alloc"))]
        params: RawParams,
    },
    /// The client cancelled the session's turn (or the connection is closing). Stop work and
    /// call `end_turn`; the answer will be `cancelled` whatever reason is given. Permission
    /// and ask_user requests of the session have been settled already.
    Cancelled {
        /// The session.
        session: SessionId,
    },
    /// A `session/request_permission` of ours is settled.
    PermissionResolved {
        /// Our request.
        request: RequestId,
        /// Its session.
        session: SessionId,
        /// Allowed (with the option), rejected (with why) or cancelled.
        decision: PermissionDecision,
        /// The decision came from a remembered `*_always` answer; nothing was sent.
        remembered: bool,
    },
    /// An `_agentao.cn/ask_user` of ours is settled. Never aborts the turn.
    AskUserAnswered {
        /// Our request.
        request: RequestId,
        /// Its session.
        session: SessionId,
        /// The answer, or the sentinel `(user unavailable)`.
        #[cfg(feature = "alloc")]
        text: String,
        /// Whether a usable answer came (false: the text is the sentinel).
        answered: bool,
    },
    /// Another request of ours (`fs/*`, `terminal/*`, `elicitation/create`) is settled.
    #[cfg(feature = "alloc")]
    Response {
        /// Our request.
        request: RequestId,
        /// The typed result, or the error.
        result: Result<crate::schema::ClientResponse, ResponseError>,
    },
    /// A request the application answers with [`respond`](super::AgentConnection::respond) or
    /// [`respond_error`](super::AgentConnection::respond_error): `session/set_mode`
    /// (answer with `accept_mode`), `session/set_config_option`, `_agentao.cn/set_model`,
    /// `session/list`, `session/close`, `session/delete`, `authenticate`, `logout`, and
    /// registered extension methods. Validated (session known and idle where it matters).
    Request {
        /// The request to answer.
        ticket: Ticket,
        /// The method.
        #[cfg(feature = "alloc")]
        method: String,
        /// The method.
        #[cfg(not(feature = "alloc"))]
        method: heapless::String<METHOD_MAX>,
        /// The session it is about, when it names one.
        session: Option<SessionId>,
        /// The typed request (`None` for an extension method; read `params`).
        #[cfg(feature = "alloc")]
        request: Option<crate::schema::ClientRequest>,
        /// The raw params JSON.
        #[cfg(feature = "alloc")]
        params: String,
        /// The raw params JSON.
        #[cfg(not(feature = "alloc"))]
        params: RawParams,
    },
    /// The client sent `$/cancel_request` for a request handed over earlier; it has been
    /// answered `-32800` already. Stop working on it (a later answer is refused).
    RequestCancelled {
        /// The request.
        ticket: Ticket,
    },
    /// The client broke the protocol in a way that needs no answer, or was answered
    /// automatically. For logging.
    PeerViolation(ClientViolation),
    /// EOF: save this session (it was open). One per session, before [`AgentEvent::Closed`].
    SaveSession {
        /// The session.
        session: SessionId,
    },
    /// EOF handling is complete: nothing is pending; write out the last bytes and exit.
    Closed,
}

/// The error a request of ours was settled with.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg(feature = "alloc")]
pub struct ResponseError {
    /// The code (`-32800` for a cancel, `-32603` for a malformed answer, timeouts and EOF).
    pub code: ErrorCode,
    /// The message.
    pub message: String,
}

/// What the peer did wrong, for logging.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientViolation {
    /// A line that was not a valid JSON-RPC message; answered with this code when it had to be.
    Rejected(ErrorCode),
    /// A request refused with this error code (bad params, unknown method, wrong state).
    Refused(ErrorCode),
    /// A response whose id is none of our requests; ignored.
    UnknownResponse,
    /// A response to a request already settled (timed out, cancelled); ignored.
    LateResponse(RequestId),
    /// A `session/cancel` or `$/cancel_request` notification with unreadable params; ignored.
    BadNotification,
}
