//! Requests of ours that need no allocator: `session/request_permission` for a tool call given
//! as raw JSON, and `_agentao.cn/ask_user` with a question. With `alloc` the typed forms
//! (`request_permission`, `ask_user`) go through the same path.

use core::time::Duration;

use serde::Serialize;

use super::{AgentConnection, AgentEvent, Ask, AskedKind, Buffers};
use crate::machine::pending::MethodKind;
use crate::machine::permission::PermissionChoice;
use crate::machine::session::SessionState;
use crate::machine::{Instant, RequestId, SessionId, UsageError};
use crate::wire::RawValue;
use crate::wire::json::{self, ValueKind};

/// The `toolCall` of a permission request given as raw JSON (no `alloc` needed), e.g.
/// `{"toolCallId":"call-1","title":"write notes.txt","kind":"edit"}`, with the key its
/// `*_always` answer is remembered under. Written verbatim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawToolCall<'a> {
    value: RawValue<'a>,
    id: &'a str,
    key: &'a str,
}

impl<'a> RawToolCall<'a> {
    /// Checks that `json` is one JSON object with a plain string `toolCallId`; `None`
    /// otherwise. `key` names the tool for remembered answers (the typed form uses
    /// `"<kind> <title>"`, see `tool_key`).
    pub fn new(json: &'a str, key: &'a str) -> Option<Self> {
        let value = json::parse_value(json.trim()).ok()?;
        if value.kind() != ValueKind::Object {
            return None;
        }
        let id = value.get_field("toolCallId")?.as_str()?.as_plain()?;
        Some(Self { value, id, key })
    }

    /// The `toolCallId`.
    pub fn id(&self) -> &'a str {
        self.id
    }
}

impl Serialize for RawToolCall<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OptionEntry {
    option_id: &'static str,
    name: &'static str,
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PermissionParams<'a, T: Serialize + ?Sized> {
    session_id: &'a str,
    tool_call: &'a T,
    options: [OptionEntry; 4],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AskUserParams<'a> {
    session_id: &'a str,
    question: &'a str,
}

impl<B: Buffers> AgentConnection<B> {
    /// [`request_permission`](Self::request_permission) for a tool call given as raw JSON:
    /// the same rules (R-PERM-*), without an allocator.
    pub fn request_permission_raw(
        &mut self,
        now: Instant,
        session: &str,
        tool_call: &RawToolCall<'_>,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        self.ask_permission(
            now,
            session,
            tool_call.id,
            tool_call.key,
            tool_call,
            timeout,
        )
    }

    /// Asks permission for tool call `id` (serialized as `tool_call`), remembered under `key`.
    pub(super) fn ask_permission<T: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session: &str,
        id: &str,
        key: &str,
        tool_call: &T,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        let core = &self.core;
        core.live()?;
        match core.sessions.get(session) {
            Some(SessionState::Active { turn: Some(turn) }) if !turn.is_cancelling() => {}
            Some(_) => return Err(UsageError::NoTurn),
            None => return Err(UsageError::UnknownSession),
        }
        // R-PERM-2: the tool call was announced in this turn.
        if !core.is_announced(session, id) {
            return Err(UsageError::UnknownToolCall);
        }
        if let Some(decision) = core.recall(session, key) {
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
            tool: key,
        };
        self.send_request(now, ask, &params, timeout)
    }

    /// [`ask_user`](Self::ask_user) with only a question, without an allocator.
    pub fn ask_user_question(
        &mut self,
        now: Instant,
        session: &str,
        question: &str,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        let params = AskUserParams {
            session_id: session,
            question,
        };
        self.ask_user_with(now, session, &params, timeout)
    }

    /// Sends `_agentao.cn/ask_user` with `params` in `session`.
    pub(super) fn ask_user_with<P: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session: &str,
        params: &P,
        timeout: Option<Duration>,
    ) -> Result<RequestId, UsageError> {
        self.core.live()?;
        match self.core.sessions.get(session) {
            Some(SessionState::Active { .. }) => {}
            Some(_) => return Err(UsageError::SessionNotActive),
            None => return Err(UsageError::UnknownSession),
        }
        let timeout = timeout.or(self.core.config.limits.ask_user_timeout);
        let ask = Ask {
            method: "_agentao.cn/ask_user",
            kind: AskedKind::AskUser,
            session,
            tool: "",
        };
        self.send_request(now, ask, params, timeout)
    }
}
