//! Tool calls: the `tool_call` / `tool_call_update` updates and what they carry.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::ContentBlock;
use super::lenient::{self, Meta, string_enum};
use super::tagged::tagged_union;

string_enum! {
    /// What kind of work a tool call does, so clients can pick an icon. Unknown kinds are kept
    /// in `Unknown(name)` (forward compatible, like the official crate).
    pub enum ToolKind (open) {
        /// Reading files or data.
        Read = "read",
        /// Modifying files or content.
        Edit = "edit",
        /// Removing files or data.
        Delete = "delete",
        /// Moving or renaming files.
        Move = "move",
        /// Searching for information.
        Search = "search",
        /// Running commands or code.
        Execute = "execute",
        /// Internal reasoning.
        Think = "think",
        /// Retrieving external data.
        Fetch = "fetch",
        /// Switching the session mode.
        SwitchMode = "switch_mode",
        /// Anything else (the default).
        Other = "other",
    }
}

#[allow(clippy::derivable_impls)] // the enum comes from a macro
impl Default for ToolKind {
    fn default() -> Self {
        Self::Other
    }
}

string_enum! {
    /// Where a tool call is in its life.
    pub enum ToolCallStatus (closed) {
        /// Not started yet (input streaming or awaiting approval).
        Pending = "pending",
        /// Running.
        InProgress = "in_progress",
        /// Finished successfully.
        Completed = "completed",
        /// Failed.
        Failed = "failed",
    }
}

#[allow(clippy::derivable_impls)] // the enum comes from a macro
impl Default for ToolCallStatus {
    fn default() -> Self {
        Self::Pending
    }
}

/// `sessionUpdate: "tool_call"`: a new tool call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolCall {
    /// Unique within the session.
    pub tool_call_id: String,
    /// A human title.
    pub title: String,
    /// The tool's own name (e.g. `read_file`), beside the human title.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub name: Option<String>,
    /// `None` (absent) means `other`; see [`ToolCall::kind`].
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub kind: Option<ToolKind>,
    /// `None` (absent) means `pending`; see [`ToolCall::status`].
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub status: Option<ToolCallStatus>,
    /// Content produced so far.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::skip_invalid"
    )]
    pub content: Vec<ToolCallContent>,
    /// Files the call touches, for follow-along.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::skip_invalid"
    )]
    pub locations: Vec<ToolCallLocation>,
    /// The raw input sent to the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    /// The raw output of the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<Value>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl ToolCall {
    /// A pending call of kind `other` with no content.
    pub fn new(tool_call_id: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            title: title.into(),
            ..Self::default()
        }
    }

    /// The kind, with its default (`other`) when absent.
    pub fn kind(&self) -> ToolKind {
        self.kind.clone().unwrap_or_default()
    }

    /// The status, with its default (`pending`) when absent.
    pub fn status(&self) -> ToolCallStatus {
        self.status.unwrap_or_default()
    }
}

/// `sessionUpdate: "tool_call_update"` (and the `toolCall` of a permission request): only the
/// fields present change; arrays replace the old ones wholesale.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolCallUpdate {
    /// The call being updated.
    pub tool_call_id: String,
    /// New kind.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub kind: Option<ToolKind>,
    /// New status.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub status: Option<ToolCallStatus>,
    /// New title.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub title: Option<String>,
    /// New tool name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub name: Option<String>,
    /// Replaces the content.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt_skip_invalid"
    )]
    pub content: Option<Vec<ToolCallContent>>,
    /// Replaces the locations.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt_skip_invalid"
    )]
    pub locations: Option<Vec<ToolCallLocation>>,
    /// New raw input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    /// New raw output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<Value>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl ToolCallUpdate {
    /// An update that changes nothing yet.
    pub fn new(tool_call_id: impl Into<String>) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            ..Self::default()
        }
    }
}

/// Content a tool call produced, discriminated by `type`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ToolCallContent {
    /// `type: "content"`: a content block.
    Content(ToolContent),
    /// `type: "diff"`: a file change.
    Diff(Diff),
    /// `type: "terminal"`: a live terminal.
    Terminal(TerminalContent),
    /// `type: "session"`: another session (a subagent's) doing the call's work.
    Session(SessionReference),
}

tagged_union!(ToolCallContent, "type", {
    Content(ToolContent) = "content",
    Diff(Diff) = "diff",
    Terminal(TerminalContent) = "terminal",
    Session(SessionReference) = "session",
});

/// `type: "content"` inside tool call content (the schema's `Content`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolContent {
    /// The block.
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

impl ToolContent {
    /// Wraps a block.
    pub fn new(content: ContentBlock) -> Self {
        Self {
            content,
            meta: None,
        }
    }
}

/// `type: "diff"`: a change to one file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Diff {
    /// Absolute path of the file.
    pub path: String,
    /// The old text; `None` for a new file.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub old_text: Option<String>,
    /// The new text.
    pub new_text: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `type: "terminal"`: embeds a terminal created with `terminal/create`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TerminalContent {
    /// The terminal's id.
    pub terminal_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `type: "session"`: points at a session (usually a subagent's) whose updates show the
/// call's progress.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionReference {
    /// The session's id.
    pub session_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl SessionReference {
    /// A reference to `session_id`.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            meta: None,
        }
    }
}

/// A file location a tool call touches.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolCallLocation {
    /// Absolute path.
    pub path: String,
    /// 1-based line.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub line: Option<u32>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}
