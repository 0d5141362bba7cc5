//! What the connection hands the application: [`AgentEvent`], drained with
//! [`poll_event`](super::AgentConnection::poll_event).
//!
//! Events are small and the same with and without `alloc`. A request's `params` are not
//! copied into its event: the event carries a [`Params`] handle to the request's line, which
//! the connection keeps until the next input (`handle_bytes`, `handle_timeout`,
//! `handle_eof`). Read them while draining, through the connection:
//! [`params`](super::AgentConnection::params) (the raw JSON text, any build),
//! [`request_view`](super::AgentConnection::request_view) (a borrowed view, any build), or
//! with `alloc` the owned message of [`crate::schema`]
//! ([`request`](super::AgentConnection::request),
//! [`prompt`](super::AgentConnection::prompt), …). One line's params are kept at a time, so
//! input after a request waits (backpressure) until the events are drained.

use super::auth::AUTH_ID_MAX;
use crate::machine::handshake::Capabilities;
use crate::machine::permission::PermissionDecision;
use crate::machine::{RequestId, SessionId, Ticket};
use crate::wire::ErrorCode;

pub(super) use crate::conn::client::Text;

#[cfg(feature = "alloc")]
use alloc::string::String;

/// Longest method name an event carries.
pub const METHOD_MAX: usize = 64;

/// A request's `params`, kept by the connection until its next input: a handle, read with
/// [`AgentConnection::params`](super::AgentConnection::params) and its siblings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub(super) start: u32,
    pub(super) len: u32,
    /// Which input the handle belongs to: a stale handle reads as no params.
    pub(super) input: u32,
}

impl Params {
    /// The handle of a request without params (reads as `{}`).
    pub(super) const NONE: Params = Params {
        start: 0,
        len: 0,
        input: u32::MAX,
    };

    /// Not yet placed in the kept line (set once the line has been kept).
    pub(super) const UNPLACED: Params = Params {
        start: u32::MAX,
        len: 0,
        input: u32::MAX,
    };
}

/// Something the application must act on (or may log). Each variant says what to do.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// The client completed `initialize` (possibly again). Nothing to answer: the connection
    /// answered with the configured capabilities.
    Initialized {
        /// The client's capabilities the connection acts on (`fs`, `terminal`, elicitation).
        client: Capabilities,
        /// The whole request (`protocolVersion`, `clientInfo`, …).
        params: Params,
    },
    /// `session/new`, validated. Answer with
    /// [`accept_new_session`](super::AgentConnection::accept_new_session) (or
    /// `accept_new_session_id`) or [`respond_error`](super::AgentConnection::respond_error).
    NewSession {
        /// The request to answer.
        ticket: Ticket,
        /// `cwd`, `mcpServers`, … (checked: absolute cwd, advertised MCP transports).
        params: Params,
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
        /// `cwd`, `mcpServers`, ….
        params: Params,
    },
    /// A prompt turn started. Send updates, then answer once with
    /// [`end_turn`](super::AgentConnection::end_turn) or
    /// [`fail_turn`](super::AgentConnection::fail_turn).
    Prompt {
        /// The prompt request (answered through `end_turn`).
        ticket: Ticket,
        /// The session.
        session: SessionId,
        /// The prompt's content blocks (checked against `promptCapabilities`).
        params: Params,
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
        /// The answer, or the sentinel `(user unavailable)` (without `alloc`, cut to
        /// [`TEXT_MAX`](crate::conn::client::TEXT_MAX) bytes).
        text: Text,
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
    /// `authenticate` naming one of the configured `agent` auth methods (R-AUTH-4). Log the
    /// user in, then answer with
    /// [`accept_authenticate`](super::AgentConnection::accept_authenticate) (or
    /// [`respond`](super::AgentConnection::respond)): from that answer on the connection is
    /// authenticated and serves sessions. Or refuse with
    /// [`respond_error`](super::AgentConnection::respond_error): nothing changes.
    Authenticate {
        /// The request to answer.
        ticket: Ticket,
        /// `methodId`: the id of a configured `agent` method.
        method_id: heapless::String<AUTH_ID_MAX>,
        /// The whole request (`methodId`, `_meta`).
        params: Params,
    },
    /// `logout`, served when [`AgentFeatures::logout`](super::AgentFeatures::logout) is on
    /// (R-AUTH-5). Forget the credentials, then answer with
    /// [`accept_logout`](super::AgentConnection::accept_logout) (or
    /// [`respond`](super::AgentConnection::respond)): from that answer on the connection is
    /// not authenticated. Open sessions go on.
    Logout {
        /// The request to answer.
        ticket: Ticket,
        /// The whole request (`_meta` at most).
        params: Params,
    },
    /// A request the application answers with [`respond`](super::AgentConnection::respond) or
    /// [`respond_error`](super::AgentConnection::respond_error): `session/set_mode`
    /// (answer with `accept_mode`), `session/set_config_option`, `_agentao.cn/set_model`,
    /// `session/list`, `session/close`, `session/delete`, and registered extension methods.
    /// Validated (session known and idle where it matters).
    Request {
        /// The request to answer.
        ticket: Ticket,
        /// The method.
        method: heapless::String<METHOD_MAX>,
        /// The session it is about, when it names one.
        session: Option<SessionId>,
        /// The params (typed with `alloc`: [`request`](super::AgentConnection::request)).
        params: Params,
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

impl AgentEvent {
    /// The params handle this event carries, if any.
    pub(super) fn params_mut(&mut self) -> Option<&mut Params> {
        match self {
            AgentEvent::Initialized { params, .. }
            | AgentEvent::NewSession { params, .. }
            | AgentEvent::LoadSession { params, .. }
            | AgentEvent::Prompt { params, .. }
            | AgentEvent::Authenticate { params, .. }
            | AgentEvent::Logout { params, .. }
            | AgentEvent::Request { params, .. } => Some(params),
            _ => None,
        }
    }
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
