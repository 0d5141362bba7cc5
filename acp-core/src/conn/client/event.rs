//! What a client connection hands the application: [`ClientEvent`] and the types it carries.

use core::fmt;

use crate::machine::handshake::Capabilities;
use crate::machine::pending::{MethodKind, Settle};
use crate::machine::turn::StopReason;
use crate::machine::{PeerRequestId, RequestId, SessionId, Ticket};
use crate::wire::ErrorCode;

use super::text::{Payload, Text};

/// The requests a client sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClientMethod {
    /// `initialize`
    Initialize,
    /// `session/new`
    NewSession,
    /// `session/load`
    LoadSession,
    /// `session/resume`
    ResumeSession,
    /// `session/prompt`
    Prompt,
    /// `session/set_mode`
    SetMode,
    /// `session/set_config_option`
    SetConfigOption,
    /// Any other method, sent with [`ClientConnection::request`](super::ClientConnection::request).
    Other,
}

impl ClientMethod {
    /// The wire name (`None` for [`ClientMethod::Other`]).
    pub const fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::Initialize => "initialize",
            Self::NewSession => "session/new",
            Self::LoadSession => "session/load",
            Self::ResumeSession => "session/resume",
            Self::Prompt => "session/prompt",
            Self::SetMode => "session/set_mode",
            Self::SetConfigOption => "session/set_config_option",
            Self::Other => return None,
        })
    }

    /// How the pending-request machine treats it.
    pub(crate) const fn kind(self) -> MethodKind {
        match self {
            Self::Initialize => MethodKind::Initialize,
            Self::NewSession => MethodKind::NewSession,
            Self::LoadSession | Self::ResumeSession => MethodKind::LoadSession,
            Self::Prompt => MethodKind::Prompt,
            Self::SetMode | Self::SetConfigOption | Self::Other => MethodKind::Other,
        }
    }
}

/// The requests an agent sends to a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AgentMethod {
    /// `session/request_permission`: always served.
    RequestPermission,
    /// `_agentao.cn/ask_user`
    AskUser,
    /// `fs/read_text_file`
    ReadTextFile,
    /// `fs/write_text_file`
    WriteTextFile,
    /// `terminal/create`
    TerminalCreate,
    /// `terminal/output`
    TerminalOutput,
    /// `terminal/wait_for_exit`
    TerminalWaitForExit,
    /// `terminal/kill`
    TerminalKill,
    /// `terminal/release`
    TerminalRelease,
    /// `elicitation/create`
    ElicitationCreate,
    /// A method this crate does not know (its name is in the event).
    Other,
}

impl AgentMethod {
    /// Every known method, for lookups.
    pub(crate) const KNOWN: [Self; 10] = [
        Self::RequestPermission,
        Self::AskUser,
        Self::ReadTextFile,
        Self::WriteTextFile,
        Self::TerminalCreate,
        Self::TerminalOutput,
        Self::TerminalWaitForExit,
        Self::TerminalKill,
        Self::TerminalRelease,
        Self::ElicitationCreate,
    ];

    /// The wire name (`None` for [`AgentMethod::Other`]).
    pub const fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::RequestPermission => "session/request_permission",
            Self::AskUser => "_agentao.cn/ask_user",
            Self::ReadTextFile => "fs/read_text_file",
            Self::WriteTextFile => "fs/write_text_file",
            Self::TerminalCreate => "terminal/create",
            Self::TerminalOutput => "terminal/output",
            Self::TerminalWaitForExit => "terminal/wait_for_exit",
            Self::TerminalKill => "terminal/kill",
            Self::TerminalRelease => "terminal/release",
            Self::ElicitationCreate => "elicitation/create",
            Self::Other => return None,
        })
    }

    /// How the owed-request machine treats it.
    pub(crate) const fn kind(self) -> MethodKind {
        match self {
            Self::RequestPermission => MethodKind::Permission,
            Self::AskUser => MethodKind::AskUser,
            Self::ReadTextFile | Self::WriteTextFile => MethodKind::Fs,
            Self::TerminalCreate
            | Self::TerminalOutput
            | Self::TerminalWaitForExit
            | Self::TerminalKill
            | Self::TerminalRelease => MethodKind::Terminal,
            Self::ElicitationCreate | Self::Other => MethodKind::Other,
        }
    }
}

/// Optional agent methods learnt from `initialize` beyond the [`Capabilities`] bitset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdvertisedMethods {
    /// `agentCapabilities.sessionCapabilities.resume`: `session/resume`.
    pub resume: bool,
    /// `agentCapabilities.sessionCapabilities.list`: `session/list`.
    pub list: bool,
    /// `agentCapabilities.sessionCapabilities.close`: `session/close`.
    pub close: bool,
    /// `agentCapabilities.sessionCapabilities.delete`: `session/delete`.
    pub delete: bool,
    /// `agentCapabilities.auth.logout`: `logout`.
    pub logout: bool,
    /// A non-empty `authMethods`: `authenticate`.
    pub authenticate: bool,
}

/// Why a request of ours did not get a usable result.
#[derive(Clone, Debug, PartialEq, Eq)]
// Without `alloc` text is stored inline (bounded, no boxes), which makes variants uneven.
#[allow(clippy::large_enum_variant)]
pub enum Failure {
    /// The agent answered with an error.
    Error {
        /// Its code (any `i32`, unknown ones included).
        code: ErrorCode,
        /// Its message.
        message: Text,
    },
    /// The agent answered with an unreadable error object (bad `code` or `message`), or
    /// with both `result` and `error`. Settled anyway: never hang (Agentao hangs).
    Malformed,
    /// The result does not have the shape the method needs (e.g. no `sessionId`, an unknown
    /// `stopReason`).
    BadResult,
    /// No answer before the deadline.
    TimedOut,
    /// The agent's output ended first.
    Disconnected,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Error { code, message } => write!(f, "JSON-RPC error {}: {message}", code.0),
            Self::Malformed => f.write_str("the agent sent a malformed response"),
            Self::BadResult => f.write_str("the agent's result does not match the method"),
            Self::TimedOut => f.write_str("no response before the deadline"),
            Self::Disconnected => f.write_str("the agent's output ended before it answered"),
        }
    }
}

/// Why the `initialize` handshake failed; the connection then refuses every command with
/// [`UsageError::HandshakeFailed`](crate::machine::UsageError::HandshakeFailed).
#[derive(Clone, Debug, PartialEq, Eq)]
// Without `alloc` text is stored inline (bounded, no boxes), which makes variants uneven.
#[allow(clippy::large_enum_variant)]
pub enum HandshakeError {
    /// The agent negotiated a version this crate does not speak (only 1 exists). Agentao's
    /// client never checks it (its bug 23).
    UnsupportedVersion(i64),
    /// The result has no integer `protocolVersion`.
    MissingVersion,
    /// The request failed.
    Failed(Failure),
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedVersion(v) => write!(
                f,
                "the agent answered initialize with protocolVersion {v}; this client speaks only protocolVersion 1"
            ),
            Self::MissingVersion => {
                f.write_str("the agent's initialize result has no integer protocolVersion")
            }
            Self::Failed(failure) => write!(f, "initialize failed: {failure}"),
        }
    }
}

impl core::error::Error for HandshakeError {}

/// How a prompt turn ended.
#[derive(Clone, Debug, PartialEq, Eq)]
// Without `alloc` text is stored inline (bounded, no boxes), which makes variants uneven.
#[allow(clippy::large_enum_variant)]
pub enum TurnOutcome {
    /// The agent answered with a `stopReason`. After a cancel it is always `cancelled`;
    /// `rewritten` says the agent sent another reason, which the connection replaced.
    Stopped {
        /// The stop reason.
        stop: StopReason,
        /// The agent's own reason was replaced by `cancelled`.
        rewritten: bool,
    },
    /// The agent answered with an error or an unreadable result.
    Failed(Failure),
    /// No answer before the prompt deadline: `session/cancel` was sent and the session's
    /// open permission and ask_user requests were answered `cancelled` (Agentao's blocking
    /// path sends no cancel: its bug 18). A late answer is reported as
    /// [`AgentViolation::LateResponse`].
    TimedOut,
    /// The agent's output ended during the turn.
    Disconnected,
}

impl TurnOutcome {
    /// Whether the turn hit its deadline.
    pub fn timed_out(&self) -> bool {
        matches!(self, Self::TimedOut)
    }
}

/// Where a `session/update` arrived, relative to its session's life. Updates are never
/// dropped: the unexpected ones are delivered with a context that
/// [flags](UpdateContext::is_flagged) them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateContext {
    /// During a prompt turn of the session.
    Turn,
    /// While `session/load` replays history (before its answer).
    Replay,
    /// Between turns, of a kind that belongs there (`available_commands_update`,
    /// `current_mode_update`, `config_option_update`, `session_info_update`, …).
    Idle,
    /// Turn content (`agent_message_chunk`, `tool_call`, `plan`, …) after the turn was
    /// answered, or with no turn at all. Flagged.
    AfterTurn,
    /// For a closed session. Flagged.
    Closed,
    /// For a session this connection does not know (or with no readable `sessionId`).
    /// Flagged.
    UnknownSession,
}

impl UpdateContext {
    /// Whether the update breaks the expected order and deserves the application's notice.
    pub const fn is_flagged(self) -> bool {
        matches!(self, Self::AfterTurn | Self::Closed | Self::UnknownSession)
    }
}

/// A request from the agent the application must answer, exactly once, with the
/// `respond_*` command that fits its method.
#[derive(Clone, Debug, PartialEq)]
pub struct IncomingRequest {
    /// The handle to answer it with.
    pub ticket: Ticket,
    /// Its JSON-RPC id as raw JSON text (for logs; answers echo it exactly).
    pub id: PeerRequestId,
    /// Its method.
    pub method: AgentMethod,
    /// The method name as received (useful for [`AgentMethod::Other`]).
    pub name: Text,
    /// Its `sessionId`, when it has one.
    pub session: Option<SessionId>,
    /// Its params, as sent.
    pub params: Payload,
    /// The params decoded by method (`None` for [`AgentMethod::Other`]). A request whose
    /// params do not decode never gets here: it is answered `-32602` automatically.
    /// Without `alloc` only `sessionId` is checked; the application reads [`Self::params`].
    #[cfg(feature = "alloc")]
    pub decoded: Option<crate::schema::AgentRequest>,
}

/// Something the agent did wrong that needs no action beyond logging; answers due were
/// already written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
// Without `alloc` text is stored inline (bounded, no boxes), which makes variants uneven.
#[allow(clippy::large_enum_variant)]
pub enum AgentViolation {
    /// A line that was not a valid JSON-RPC message; it was answered with this code.
    RejectedLine {
        /// The error code of the reply.
        code: ErrorCode,
    },
    /// A response to an id we never used (ignored, never answered).
    UnknownResponse,
    /// A response to a request already settled locally (timed out): ignored.
    LateResponse {
        /// Our id.
        request: RequestId,
    },
    /// A request the connection answered with an error at once.
    RequestRefused {
        /// The method as received.
        method: Text,
        /// The error code sent.
        code: ErrorCode,
    },
    /// The agent named a new session with an id that an open session has, or that is too
    /// long to store; the session could not be opened.
    BadSessionId,
}

/// What the application must know or do. Drained with
/// [`ClientConnection::poll_event`](super::ClientConnection::poll_event).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
// Without `alloc` text is stored inline (bounded, no boxes), which makes variants uneven.
#[allow(clippy::large_enum_variant)]
pub enum ClientEvent {
    /// `initialize` succeeded with protocol version 1: sessions can be opened.
    Initialized {
        /// Our `initialize` request.
        request: RequestId,
        /// The agent's capabilities that gate behaviour.
        agent: Capabilities,
        /// Optional agent methods.
        features: AdvertisedMethods,
        /// The whole result, as sent.
        result: Payload,
        /// The result, decoded.
        #[cfg(feature = "alloc")]
        decoded: Option<crate::schema::InitializeResponse>,
    },
    /// `initialize` failed; every command now returns `HandshakeFailed`.
    HandshakeFailed {
        /// Our `initialize` request.
        request: RequestId,
        /// Why.
        error: HandshakeError,
    },
    /// A `session/new`, `session/load` or `session/resume` succeeded: the session is usable.
    SessionOpened {
        /// The request.
        request: RequestId,
        /// Which method opened it.
        method: ClientMethod,
        /// The session.
        session: SessionId,
        /// The whole result, as sent (modes, config options, …).
        result: Payload,
    },
    /// A request other than `initialize` and `session/prompt` succeeded
    /// (`session/set_mode`, `session/set_config_option`, [`ClientConnection::request`](super::ClientConnection::request)).
    Answered {
        /// The request.
        request: RequestId,
        /// Its method.
        method: ClientMethod,
        /// The result, as sent (a `null` where every member is optional reads `{}`: see
        /// [`empty_result`](super::empty_result)).
        result: Payload,
    },
    /// A request other than `initialize` and `session/prompt` failed. For `session/new`,
    /// `load` and `resume`, no session was opened.
    Failed {
        /// The request.
        request: RequestId,
        /// Its method.
        method: ClientMethod,
        /// Why.
        failure: Failure,
    },
    /// A `session/update`. Always delivered; look at `context` for the unexpected ones.
    Update {
        /// The `sessionId` (empty when missing or unreadable).
        session: SessionId,
        /// Where it arrived in the session's life.
        context: UpdateContext,
        /// `update.sessionUpdate` (empty when missing).
        kind: Text,
        /// The notification's params, as sent.
        params: Payload,
        /// The params, decoded (an error when they do not match the schema).
        #[cfg(feature = "alloc")]
        decoded: Result<crate::schema::SessionNotification, crate::schema::DecodeError>,
    },
    /// A prompt turn is over.
    TurnEnded {
        /// The session.
        session: SessionId,
        /// The `session/prompt` request.
        request: RequestId,
        /// How it ended.
        outcome: TurnOutcome,
    },
    /// The agent asks something: answer it with the `respond_*` command for its method.
    Request(IncomingRequest),
    /// A request of the agent was answered without the application, which must not answer
    /// it any more: `SessionCancelled` (answered `cancelled` after [`cancel`](super::ClientConnection::cancel)
    /// or a prompt timeout), `CancelRequested` (the agent sent `$/cancel_request`: answered
    /// `-32800`), `ConnectionClosed` (the agent's output ended: nothing is written).
    RequestSettled {
        /// The request.
        ticket: Ticket,
        /// Its method kind.
        kind: MethodKind,
        /// How it was settled.
        how: Settle,
    },
    /// A notification other than `session/update` and `$/cancel_request`
    /// (e.g. `elicitation/complete`, extensions). Never answered.
    Notification {
        /// The method.
        method: Text,
        /// Its params, as sent.
        params: Payload,
    },
    /// The agent broke a rule; for logs.
    PeerViolation(AgentViolation),
    /// The agent's output ended and everything pending was settled. Last event.
    Closed,
}
