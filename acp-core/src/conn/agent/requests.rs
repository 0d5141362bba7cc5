//! Requests the agent sends the client (`alloc`): permission, ask_user, `fs/*`,
//! `terminal/*`, `elicitation/create`. Each is tracked until settled exactly once, and the
//! settlement arrives as an event.

use core::time::Duration;

use serde::Serialize;

use super::{AgentConnection, Ask, AskedKind, Buffers};
use crate::machine::handshake::Capabilities;
use crate::machine::session::SessionState;
use crate::machine::{Instant, RequestId, UsageError};
use crate::schema::{
    AskUserRequest, CreateElicitationRequest, CreateTerminalRequest, ReadTextFileRequest,
    TerminalRequest, ToolCallUpdate, WriteTextFileRequest,
};

/// The key a `*_always` answer is remembered under: the tool's kind and title (the demo
/// backend's identity of a tool), or its call id when it has neither.
pub fn tool_key(tool_call: &ToolCallUpdate) -> alloc::string::String {
    match (&tool_call.kind, &tool_call.title) {
        (None, None) => tool_call.tool_call_id.clone(),
        (kind, title) => alloc::format!(
            "{} {}",
            kind.as_ref().map_or("other", |k| k.as_str()),
            title.as_deref().unwrap_or("")
        ),
    }
}

impl<B: Buffers> AgentConnection<B> {
    /// Asks the client for permission to run a tool call of the running turn
    /// (`session/request_permission` with the four options, `optionId` = kind).
    ///
    /// `tool_call.toolCallId` must have been announced by a `tool_call` update of this turn
    /// ([`UsageError::UnknownToolCall`] otherwise). When the user answered `allow_always` or
    /// `reject_always` for the same tool (see [`tool_key`]) earlier in this session, nothing
    /// is sent and [`AgentEvent::PermissionResolved`](crate::conn::agent::AgentEvent::PermissionResolved) with `remembered: true` is queued at
    /// once. `timeout` overrides the configured default; a timeout means rejected.
    pub fn request_permission(
        &mut self,
        now: Instant,
        session: &str,
        tool_call: &ToolCallUpdate,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        let key = tool_key(tool_call);
        self.ask_permission(
            now,
            session,
            &tool_call.tool_call_id,
            &key,
            tool_call,
            timeout,
        )
    }

    /// Asks the user a free-form question (`_agentao.cn/ask_user`). The answer comes as
    /// [`AgentEvent::AskUserAnswered`](crate::conn::agent::AgentEvent::AskUserAnswered): the text, or the sentinel `(user unavailable)` for
    /// anything else (cancel, error, timeout, EOF). Never aborts the turn.
    pub fn ask_user(
        &mut self,
        now: Instant,
        request: &AskUserRequest,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        self.ask_user_with(now, &request.session_id, request, timeout)
    }

    fn client_request<P: Serialize>(
        &mut self,
        now: Instant,
        needed: Capabilities,
        method: &'static str,
        session: &str,
        params: &P,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        self.core.live()?;
        // R-FS-1: only what the client advertised.
        self.core.require_client(needed)?;
        if !matches!(
            self.core.sessions.get(session),
            Some(SessionState::Active { .. })
        ) {
            return Err(UsageError::UnknownSession);
        }
        let timeout = timeout.or(self.core.config.limits.request_timeout);
        let ask = Ask {
            method,
            kind: AskedKind::Method(method),
            session,
            tool: "",
        };
        self.send_request(now, ask, params, timeout)
    }

    /// `fs/read_text_file`; needs the client's `fs.readTextFile`. Answered with
    /// [`AgentEvent::Response`](crate::conn::agent::AgentEvent::Response).
    pub fn read_text_file(
        &mut self,
        now: Instant,
        request: &ReadTextFileRequest,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        let session = request.session_id.clone();
        self.client_request(
            now,
            Capabilities::FS_READ,
            "fs/read_text_file",
            &session,
            request,
            timeout,
        )
    }

    /// `fs/write_text_file`; needs the client's `fs.writeTextFile`.
    pub fn write_text_file(
        &mut self,
        now: Instant,
        request: &WriteTextFileRequest,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        let session = request.session_id.clone();
        self.client_request(
            now,
            Capabilities::FS_WRITE,
            "fs/write_text_file",
            &session,
            request,
            timeout,
        )
    }

    /// `terminal/create`; needs the client's `terminal`.
    pub fn terminal_create(
        &mut self,
        now: Instant,
        request: &CreateTerminalRequest,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        let session = request.session_id.clone();
        self.client_request(
            now,
            Capabilities::TERMINAL,
            "terminal/create",
            &session,
            request,
            timeout,
        )
    }

    /// `terminal/output`, `terminal/wait_for_exit`, `terminal/kill` or `terminal/release`
    /// (`method`); needs the client's `terminal`. Any other method is
    /// [`UsageError::CapabilityNotAdvertised`].
    pub fn terminal(
        &mut self,
        now: Instant,
        method: &str,
        request: &TerminalRequest,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        let method: &'static str = match method {
            "terminal/output" => "terminal/output",
            "terminal/wait_for_exit" => "terminal/wait_for_exit",
            "terminal/kill" => "terminal/kill",
            "terminal/release" => "terminal/release",
            _ => return Err(UsageError::CapabilityNotAdvertised),
        };
        let session = request.session_id.clone();
        self.client_request(
            now,
            Capabilities::TERMINAL,
            method,
            &session,
            request,
            timeout,
        )
    }

    /// `elicitation/create` in `session`; needs the client's `elicitation`.
    pub fn elicitation(
        &mut self,
        now: Instant,
        session: &str,
        request: &CreateElicitationRequest,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        self.client_request(
            now,
            Capabilities::ELICITATION,
            "elicitation/create",
            session,
            request,
            timeout,
        )
    }
}
