//! `session/update`: the agent's progress reports during (and between) prompt turns.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use serde::{Deserialize, Serialize};

use super::capabilities::Marker;
use super::config::SessionConfigOption;
use super::content::ContentBlock;
use super::lenient::{self, Meta, string_enum};
use super::plan::{Plan, PlanRemoved, PlanUpdate};
use super::tagged::tagged_union;
use super::tool_call::{ToolCall, ToolCallUpdate};

/// `session/update` params (a notification from the agent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionNotification {
    /// The session the update belongs to.
    pub session_id: String,
    /// What happened.
    pub update: SessionUpdate,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl SessionNotification {
    /// An update for a session.
    pub fn new(session_id: impl Into<String>, update: SessionUpdate) -> Self {
        Self {
            session_id: session_id.into(),
            update,
            meta: None,
        }
    }
}

/// One update, discriminated by `sessionUpdate`.
///
/// Updates of a kind this version does not know are kept in [`SessionUpdate::Unknown`] and
/// re-encode unchanged, so a proxy can pass them on.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SessionUpdate {
    /// A chunk of the user's message (history replay).
    UserMessageChunk(ContentChunk),
    /// A chunk of the agent's answer.
    AgentMessageChunk(ContentChunk),
    /// A chunk of the agent's reasoning.
    AgentThoughtChunk(ContentChunk),
    /// A new tool call.
    ToolCall(ToolCall),
    /// A change to a tool call.
    ToolCallUpdate(ToolCallUpdate),
    /// The whole current plan.
    Plan(Plan),
    /// The slash commands the agent offers.
    AvailableCommandsUpdate(AvailableCommandsUpdate),
    /// The session mode changed.
    CurrentModeUpdate(CurrentModeUpdate),
    /// The config options changed (the full set).
    ConfigOptionUpdate(ConfigOptionUpdate),
    /// The session's title or timestamp changed.
    SessionInfoUpdate(SessionInfoUpdate),
    /// Context window use and cost.
    UsageUpdate(UsageUpdate),
    /// A message for the user that is not part of the conversation.
    Notice(Notice),
    /// Context compaction progress.
    CompactionUpdate(CompactionUpdate),
    /// A chunk of a compaction summary.
    CompactionSummaryChunk(CompactionSummaryChunk),
    /// One plan, by id (items or Markdown).
    PlanUpdate(PlanUpdate),
    /// A plan, by id, is gone.
    PlanRemoved(PlanRemoved),
    /// A subagent session started or changed.
    SubagentUpdate(SubagentUpdate),
    /// A message between sessions (a subagent's), created or changed.
    SessionMessage(SessionMessage),
    /// A streamed chunk of a message between sessions.
    SessionMessageChunk(SessionMessageChunk),
    /// An update of a kind this version does not know: the whole object, tag included.
    Unknown(Meta),
}

tagged_union!(SessionUpdate, "sessionUpdate", {
    UserMessageChunk(ContentChunk) = "user_message_chunk",
    AgentMessageChunk(ContentChunk) = "agent_message_chunk",
    AgentThoughtChunk(ContentChunk) = "agent_thought_chunk",
    ToolCall(ToolCall) = "tool_call",
    ToolCallUpdate(ToolCallUpdate) = "tool_call_update",
    Plan(Plan) = "plan",
    AvailableCommandsUpdate(AvailableCommandsUpdate) = "available_commands_update",
    CurrentModeUpdate(CurrentModeUpdate) = "current_mode_update",
    ConfigOptionUpdate(ConfigOptionUpdate) = "config_option_update",
    SessionInfoUpdate(SessionInfoUpdate) = "session_info_update",
    UsageUpdate(UsageUpdate) = "usage_update",
    Notice(Notice) = "notice",
    CompactionUpdate(CompactionUpdate) = "compaction_update",
    CompactionSummaryChunk(CompactionSummaryChunk) = "compaction_summary_chunk",
    PlanUpdate(PlanUpdate) = "plan_update",
    PlanRemoved(PlanRemoved) = "plan_removed",
    SubagentUpdate(SubagentUpdate) = "subagent_update",
    SessionMessage(SessionMessage) = "session_message",
    SessionMessageChunk(SessionMessageChunk) = "session_message_chunk",
}, unknown = Unknown);

impl SessionUpdate {
    /// Every `sessionUpdate` value this version decodes into a typed variant.
    pub const KNOWN: &'static [&'static str] = <Self as super::tagged::Tagged>::KNOWN;

    /// The `sessionUpdate` value.
    pub fn kind(&self) -> &str {
        match self {
            Self::UserMessageChunk(_) => "user_message_chunk",
            Self::AgentMessageChunk(_) => "agent_message_chunk",
            Self::AgentThoughtChunk(_) => "agent_thought_chunk",
            Self::ToolCall(_) => "tool_call",
            Self::ToolCallUpdate(_) => "tool_call_update",
            Self::Plan(_) => "plan",
            Self::AvailableCommandsUpdate(_) => "available_commands_update",
            Self::CurrentModeUpdate(_) => "current_mode_update",
            Self::ConfigOptionUpdate(_) => "config_option_update",
            Self::SessionInfoUpdate(_) => "session_info_update",
            Self::UsageUpdate(_) => "usage_update",
            Self::Notice(_) => "notice",
            Self::CompactionUpdate(_) => "compaction_update",
            Self::CompactionSummaryChunk(_) => "compaction_summary_chunk",
            Self::PlanUpdate(_) => "plan_update",
            Self::PlanRemoved(_) => "plan_removed",
            Self::SubagentUpdate(_) => "subagent_update",
            Self::SessionMessage(_) => "session_message",
            Self::SessionMessageChunk(_) => "session_message_chunk",
            Self::Unknown(object) => object
                .get("sessionUpdate")
                .and_then(|v| v.as_str())
                .unwrap_or(""),
        }
    }
}

/// A streamed chunk of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ContentChunk {
    /// The chunk.
    pub content: ContentBlock,
    /// Groups chunks of one message.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub message_id: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl ContentChunk {
    /// A chunk with no message id.
    pub fn new(content: ContentBlock) -> Self {
        Self {
            content,
            message_id: None,
            meta: None,
        }
    }
}

/// `available_commands_update`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AvailableCommandsUpdate {
    /// The commands.
    #[serde(deserialize_with = "lenient::required_skip_invalid")]
    pub available_commands: Vec<AvailableCommand>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// A slash command the user can run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AvailableCommand {
    /// The name, without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The input it takes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub input: Option<AvailableCommandInput>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// A command's input: free text with a hint (the schema's only shape).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AvailableCommandInput {
    /// Shown when the user has typed nothing yet.
    pub hint: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `current_mode_update`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CurrentModeUpdate {
    /// The new mode.
    pub current_mode_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl CurrentModeUpdate {
    /// The mode is now `current_mode_id`.
    pub fn new(current_mode_id: impl Into<String>) -> Self {
        Self {
            current_mode_id: current_mode_id.into(),
            meta: None,
        }
    }
}

/// `config_option_update`: the full set of options.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ConfigOptionUpdate {
    /// Every option.
    #[serde(deserialize_with = "lenient::required_skip_invalid")]
    pub config_options: Vec<SessionConfigOption>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `session_info_update`: a patch. Absent fields stay; `null` clears.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionInfoUpdate {
    /// `Some(None)` clears the title.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub title: Option<Option<String>>,
    /// `Some(None)` clears the timestamp.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub updated_at: Option<Option<String>>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `usage_update`: context window use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UsageUpdate {
    /// Tokens in context.
    pub used: u64,
    /// The context window's size.
    pub size: u64,
    /// What the session cost so far.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub cost: Option<Cost>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// An amount of money.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Cost {
    /// The amount.
    pub amount: f64,
    /// ISO 4217 code, e.g. `USD`.
    pub currency: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `notice`: something the user should see outside the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Notice {
    /// How serious it is.
    pub severity: NoticeSeverity,
    /// A short title.
    pub title: String,
    /// Details.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub description: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

string_enum! {
    /// A notice's severity; unknown severities are kept.
    pub enum NoticeSeverity (open) {
        /// Informational.
        Info = "info",
        /// A warning.
        Warning = "warning",
        /// An error.
        Error = "error",
    }
}

/// `compaction_update`: progress of a context compaction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompactionUpdate {
    /// Which compaction.
    pub compaction_id: String,
    /// Where it stands.
    pub status: CompactionStatus,
    /// The summary so far; `Some(None)` clears it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch_skip_invalid"
    )]
    pub summary: Option<Option<Vec<ContentBlock>>>,
    /// Why it failed; `Some(None)` clears it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub error: Option<Option<String>>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

string_enum! {
    /// A compaction's progress; unknown statuses are kept.
    pub enum CompactionStatus (open) {
        /// Running.
        InProgress = "in_progress",
        /// Done.
        Completed = "completed",
        /// Failed.
        Failed = "failed",
        /// Cancelled.
        Cancelled = "cancelled",
    }
}

/// `compaction_summary_chunk`: a streamed piece of a compaction summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompactionSummaryChunk {
    /// Which compaction.
    pub compaction_id: String,
    /// The chunk.
    pub content: ContentBlock,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `session_message_chunk`: a streamed piece of a [`SessionMessage`]'s content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionMessageChunk {
    /// The message the chunk belongs to.
    pub message_id: String,
    /// The chunk.
    pub content: ContentBlock,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl SessionMessageChunk {
    /// A chunk of message `message_id`.
    pub fn new(message_id: impl Into<String>, content: ContentBlock) -> Self {
        Self {
            message_id: message_id.into(),
            content,
            meta: None,
        }
    }
}

/// `session_message`: an upsert of a message sent between sessions (a subagent and its
/// parent), keyed by `messageId`. Every other field is a patch: absent keeps, `null` clears.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionMessage {
    /// The message, within this session's transcript.
    pub message_id: String,
    /// The sending session.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub sender_session_id: Option<Option<String>>,
    /// The receiving session.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub recipient_session_id: Option<Option<String>>,
    /// On an incoming copy, the id of the outgoing copy in the sender's transcript.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub sender_message_id: Option<Option<String>>,
    /// On an outgoing copy, the id of the incoming copy in the recipient's transcript.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub recipient_message_id: Option<Option<String>>,
    /// Replaces the content; `Some(None)` (or an empty list) clears it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch_skip_invalid"
    )]
    pub content: Option<Option<Vec<ContentBlock>>>,
    /// Extension data; `Some(None)` removes it.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub meta: Option<Option<Meta>>,
}

impl SessionMessage {
    /// A message with only its id (changes nothing else).
    pub fn new(message_id: impl Into<String>) -> Self {
        Self {
            message_id: message_id.into(),
            ..Self::default()
        }
    }
}

/// `subagent_update`: an upsert of a subagent session, keyed by its `sessionId`. Every other
/// field is a patch: absent keeps, `null` clears.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubagentUpdate {
    /// The subagent's own session.
    pub session_id: String,
    /// A short title.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub title: Option<Option<String>>,
    /// What it is doing.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub description: Option<Option<String>>,
    /// What the client may do with it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub capabilities: Option<Option<SubagentSessionCapabilities>>,
    /// Whether it is working.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub state: Option<Option<StateUpdate>>,
    /// Its working directory.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub cwd: Option<Option<String>>,
    /// Its other directories.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub additional_directories: Option<Option<Vec<String>>>,
    /// Extension data; `Some(None)` removes it.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::patch"
    )]
    pub meta: Option<Option<Meta>>,
}

impl SubagentUpdate {
    /// An update of subagent session `session_id` that changes nothing yet.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            ..Self::default()
        }
    }
}

/// What a client may do with a subagent session.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubagentSessionCapabilities {
    /// `session/cancel` on the subagent's session.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub cancel: Option<Marker>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// A session's work state, discriminated by `state`. States this version does not know are
/// kept in [`StateUpdate::Other`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StateUpdate {
    /// `running`: working in the foreground.
    Running(StateDetails),
    /// `idle`: stopped, with why.
    Idle(IdleState),
    /// `requires_action`: waiting for the user (a permission, an elicitation).
    RequiresAction(StateDetails),
    /// `unknown`: the agent cannot tell.
    Unknown(StateDetails),
    /// A state this version does not know: the whole object, tag included.
    Other(Meta),
}

tagged_union!(StateUpdate, "state", {
    Running(StateDetails) = "running",
    Idle(IdleState) = "idle",
    RequiresAction(StateDetails) = "requires_action",
    Unknown(StateDetails) = "unknown",
}, unknown = Other);

impl StateUpdate {
    /// The `state` value.
    pub fn state(&self) -> &str {
        match self {
            Self::Running(_) => "running",
            Self::Idle(_) => "idle",
            Self::RequiresAction(_) => "requires_action",
            Self::Unknown(_) => "unknown",
            Self::Other(object) => object.get("state").and_then(|v| v.as_str()).unwrap_or(""),
        }
    }
}

/// The fields of a state that carries nothing but extension data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StateDetails {
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `state: "idle"`: why the foreground work stopped, when the agent says.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct IdleState {
    /// Why it stopped; `None` when not reported.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub stop_reason: Option<IdleStopReason>,
    /// With `stopReason: "error"`: what went wrong.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub error: Option<StateError>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

string_enum! {
    /// Why a session went idle: a prompt's stop reasons plus `error`; unknown ones are kept
    /// (their own extra fields are not).
    pub enum IdleStopReason (open) {
        /// The turn ended.
        EndTurn = "end_turn",
        /// The token limit was reached.
        MaxTokens = "max_tokens",
        /// The turn request limit was reached.
        MaxTurnRequests = "max_turn_requests",
        /// The model refused.
        Refusal = "refusal",
        /// Cancelled.
        Cancelled = "cancelled",
        /// Failed; see [`IdleState::error`].
        Error = "error",
    }
}

/// A JSON-RPC style error object inside an update.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StateError {
    /// The error code.
    pub code: i32,
    /// What went wrong.
    pub message: String,
    /// More about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}
