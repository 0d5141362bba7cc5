//! Side tables the agent connection keeps next to the machines: tool calls a turn announced,
//! and what each request of ours asked.

use crate::machine::permission::TOOL_KEY_MAX;
use crate::machine::{RequestId, SessionId};

/// Longest `toolCallId` remembered for the announcement rule.
pub const TOOL_CALL_ID_MAX: usize = 128;

/// A `tool_call` update sent during the running turn of `session` (R-PERM-2:
/// the permission request must name a tool call announced before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Announced {
    /// The session whose turn sent it.
    pub session: SessionId,
    /// Its `toolCallId`.
    pub tool_call: heapless::String<TOOL_CALL_ID_MAX>,
}

/// What a request of ours was about, to read its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskedKind {
    /// `session/request_permission`.
    Permission,
    /// `_agentao.cn/ask_user`.
    AskUser,
    /// Any other method (its answer is decoded by name).
    Method(&'static str),
}

/// One request of ours in flight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    /// Our id.
    pub id: RequestId,
    /// What it asked.
    pub kind: AskedKind,
    /// The session it belongs to (empty for none).
    pub session: SessionId,
    /// Permission: the tool key its `*_always` answer is remembered under.
    pub tool: heapless::String<TOOL_KEY_MAX>,
}
