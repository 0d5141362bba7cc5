//! What [`send_update`](super::AgentConnection::send_update) accepts: anything that
//! serializes as a `session/update` `update` object and can say what kind it is.

use serde::{Serialize, Serializer};

use crate::wire::RawValue;
use crate::wire::json::{self, ValueKind};

/// The `sessionUpdate` kinds that belong to a prompt turn: refused once the turn has been
/// answered (R-TURN-3).
pub const TURN_KINDS: [&str; 6] = [
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
];

/// A `session/update` payload.
pub trait Update: Serialize {
    /// Whether this kind belongs to a prompt turn (chunks, tool calls, plans) rather than to
    /// the session (available commands, mode, config options, session info, usage).
    fn belongs_to_turn(&self) -> bool;

    /// The `toolCallId` of a `tool_call` update: it announces a tool call that a permission
    /// request may then name.
    fn announced_tool_call(&self) -> Option<&str>;
}

#[cfg(feature = "alloc")]
impl Update for crate::schema::SessionUpdate {
    fn belongs_to_turn(&self) -> bool {
        use crate::schema::SessionUpdate as U;
        matches!(
            self,
            U::UserMessageChunk(_)
                | U::AgentMessageChunk(_)
                | U::AgentThoughtChunk(_)
                | U::ToolCall(_)
                | U::ToolCallUpdate(_)
                | U::Plan(_)
        )
    }

    fn announced_tool_call(&self) -> Option<&str> {
        match self {
            crate::schema::SessionUpdate::ToolCall(call) => Some(&call.tool_call_id),
            _ => None,
        }
    }
}

/// An update given as raw JSON text (no `alloc` needed), e.g.
/// `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}`.
/// Written verbatim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawUpdate<'a> {
    value: RawValue<'a>,
    turn: bool,
    tool_call: Option<&'a str>,
}

impl<'a> RawUpdate<'a> {
    /// Checks that `json` is one JSON object with a string `sessionUpdate`; `None` otherwise.
    pub fn new(json: &'a str) -> Option<Self> {
        let value = json::parse_value(json.trim()).ok()?;
        if value.kind() != ValueKind::Object {
            return None;
        }
        let kind = value.get_field("sessionUpdate")?.as_str()?;
        let kind = kind.as_plain()?;
        let tool_call = if kind == "tool_call" {
            value
                .get_field("toolCallId")
                .and_then(|v| v.as_str())
                .and_then(|s| s.as_plain())
        } else {
            None
        };
        Some(Self {
            value,
            turn: TURN_KINDS.contains(&kind),
            tool_call,
        })
    }

    /// The JSON text.
    pub fn get(&self) -> &'a str {
        self.value.get()
    }
}

impl Serialize for RawUpdate<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

impl Update for RawUpdate<'_> {
    fn belongs_to_turn(&self) -> bool {
        self.turn
    }

    fn announced_tool_call(&self) -> Option<&str> {
        self.tool_call
    }
}

impl<U: Update + ?Sized> Update for &U {
    fn belongs_to_turn(&self) -> bool {
        (**self).belongs_to_turn()
    }

    fn announced_tool_call(&self) -> Option<&str> {
        (**self).announced_tool_call()
    }
}
