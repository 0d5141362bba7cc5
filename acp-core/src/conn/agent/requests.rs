//! Requests the agent sends the client (`alloc`): permission, ask_user, `fs/*`,
//! `terminal/*`, `elicitation/create`. Each is tracked until settled exactly once, and the
//! settlement arrives as an event.

use core::time::Duration;

use serde::Serialize;

use super::{AgentConnection, AgentEvent, Ask, AskedKind, Buffers};
use crate::machine::handshake::Capabilities;
use crate::machine::pending::MethodKind;
use crate::machine::permission::PermissionChoice;
use crate::machine::session::SessionState;
use crate::machine::{Instant, RequestId, SessionId, UsageError};
use crate::schema::{
    AskUserRequest, CreateElicitationRequest, CreateTerminalRequest, ReadTextFileRequest,
    TerminalRequest, ToolCallUpdate, WriteTextFileRequest,
};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OptionEntry {
    option_id: &'static str,
    name: &'static str,
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PermissionParams<'a> {
    session_id: &'a str,
    tool_call: &'a ToolCallUpdate,
    options: [OptionEntry; 4],
}

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
    /// is sent and [`AgentEvent::PermissionResolved`] with `remembered: true` is queued at
    /// once. `timeout` overrides the configured default; a timeout means rejected.
    pub fn request_permission(
        &mut self,
        now: Instant,
        session: &str,
        tool_call: &ToolCallUpdate,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        let core = &self.core;
        core.live()?;
        match core.sessions.get(session) {
            Some(SessionState::Active { turn: Some(turn) }) if !turn.is_cancelling() => {}
            Some(_) => return Err(UsageError::NoTurn),
            None => return Err(UsageError::UnknownSession),
        }
        if !core.is_announced(session, &tool_call.tool_call_id) {
            return Err(UsageError::UnknownToolCall);
        }
        let key = tool_key(tool_call);
        if let Some(decision) = core.recall(session, &key) {
            // Spend an id so every permission has one, without writing anything.
            let core = &mut self.core;
            let now = core.clock.observe(now);
            let id = core
                .pending
                .send(now, MethodKind::Permission, Some(session), None)?;
            let _ = core.pending.withdraw(id);
            core.push_event(AgentEvent::PermissionResolved {
                request: id,
                session: SessionId::new(session).ok_or(UsageError::IdTooLong)?,
                decision,
                remembered: true,
            });
            return Ok(id);
        }
        let options = PermissionChoice::ALL.map(|o| OptionEntry {
            option_id: o.id(),
            name: o.label(),
            kind: o.id(),
        });
        let params = PermissionParams {
            session_id: session,
            tool_call,
            options,
        };
        let timeout = timeout.or(self.core.config.limits.permission_timeout);
        let ask = Ask {
            method: "session/request_permission",
            kind: AskedKind::Permission,
            session,
            tool: &key,
        };
        self.send_request(now, ask, &params, timeout)
    }

    /// Asks the user a free-form question (`_agentao.cn/ask_user`). The answer comes as
    /// [`AgentEvent::AskUserAnswered`]: the text, or the sentinel `(user unavailable)` for
    /// anything else (cancel, error, timeout, EOF). Never aborts the turn.
    pub fn ask_user(
        &mut self,
        now: Instant,
        request: &AskUserRequest,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        self.core.live()?;
        match self.core.sessions.get(&request.session_id) {
            Some(SessionState::Active { .. }) => {}
            Some(_) => return Err(UsageError::SessionNotActive),
            None => return Err(UsageError::UnknownSession),
        }
        let timeout = timeout.or(self.core.config.limits.ask_user_timeout);
        let ask = Ask {
            method: "_agentao.cn/ask_user",
            kind: AskedKind::AskUser,
            session: &request.session_id,
            tool: "",
        };
        self.send_request(now, ask, request, timeout)
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
    /// [`AgentEvent::Response`].
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
