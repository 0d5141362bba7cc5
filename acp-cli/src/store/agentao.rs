//! The session file: Agentao's JSON format (agentao-behaviour.md §6.1) field for field, plus
//! one extra key with our lossless copy of the turns.
//!
//! ```text
//! {
//!   "session_id": "sess_…",            the ACP id
//!   "title": "first user message…",    ≤ 60 characters then "…"
//!   "created_at": "2026-…+00:00",      ISO 8601 with offset, kept across saves
//!   "updated_at": "2026-…+00:00",
//!   "model": "demo",
//!   "active_skills": [],
//!   "messages": [ OpenAI-format history: user / assistant (content, reasoning_content,
//!                 tool_calls) / tool (tool_call_id, name, content) ],
//!   "_acp": { "version": 1, "message_count": N, "mode": …, "additional_directories": […],
//!             "system_prompt": "…", "turns": [ … ] }
//! }
//! ```
//!
//! `messages` is what Agentao reads, so Agentao can load and continue our sessions. It cannot
//! say everything ACP can (a tool call's real final status, its kind and title, plan priorities,
//! non-text prompt blocks, the mode), so `_acp` keeps the turns exactly as recorded. Agentao
//! ignores the key and does not write it back; a file without it (written by Agentao), or whose
//! `messages` no longer have the length `_acp` was written with (edited by someone else), is
//! read from `messages` alone with the mapping of agentao-behaviour.md §6.3.

use std::collections::BTreeSet;
use std::fmt;

use acp_core::schema::{
    ContentBlock, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, StopReason, ToolCall,
    ToolCallContent, ToolCallStatus, ToolContent, ToolKind,
};
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::history::{SessionHistory, Turn, TurnItem};
use super::text::{prompt_text, strip_system_reminders, tool_output_text};
use super::time::Timestamp;

/// The top-level key of our lossless copy.
pub const EXTENSION_KEY: &str = "_acp";
/// The version of the `_acp` object this code writes and reads.
const EXTENSION_VERSION: u32 = 1;
/// How a failed tool's result starts, in Agentao's updates (§2.1) and in the files we write.
const ERROR_PREFIX: &str = "Error:";
/// Agentao's name for the plan tool.
const TODO_WRITE: &str = "todo_write";

/// What listing and matching need from a file: read without building its history.
#[derive(Debug)]
pub(crate) struct SessionHeader {
    pub(crate) session_id: String,
    pub(crate) title: String,
    pub(crate) created_at: Option<Timestamp>,
    pub(crate) updated_at: Option<Timestamp>,
    pub(crate) updated_at_text: Option<String>,
}

impl SessionHeader {
    /// Reads a file's header fields; `messages` is checked to be a list but not kept, so
    /// scanning a directory costs no allocation per message. `Err` says why the file is not a
    /// session file (the same reasons [`SessionFile::parse`] gives).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, String> {
        let first = bytes.iter().find(|byte| !byte.is_ascii_whitespace());
        if first != Some(&b'{') {
            return Err(match serde_json::from_slice::<IgnoredAny>(bytes) {
                Ok(_) => NOT_AN_OBJECT.to_owned(),
                Err(err) => format!("not valid JSON ({err})"),
            });
        }
        let fields: HeaderFields =
            serde_json::from_slice(bytes).map_err(|err| format!("not valid JSON ({err})"))?;
        let header = Self::from_fields(
            fields.session_id.as_ref(),
            fields.title.as_ref(),
            fields.created_at.as_ref(),
            fields.updated_at.as_ref(),
        )?;
        match fields.messages {
            Some(Shape::List) => Ok(header),
            _ => Err(NO_MESSAGES.to_owned()),
        }
    }

    fn from_fields(
        session_id: Option<&Value>,
        title: Option<&Value>,
        created_at: Option<&Value>,
        updated_at: Option<&Value>,
    ) -> Result<Self, String> {
        let session_id = match session_id {
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            _ => return Err(NO_SESSION_ID.to_owned()),
        };
        let updated_at_text = updated_at.and_then(Value::as_str).map(str::to_owned);
        Ok(Self {
            session_id,
            title: title.and_then(Value::as_str).unwrap_or_default().to_owned(),
            created_at: created_at
                .and_then(Value::as_str)
                .and_then(Timestamp::parse_iso),
            updated_at: updated_at_text.as_deref().and_then(Timestamp::parse_iso),
            updated_at_text,
        })
    }
}

const NOT_AN_OBJECT: &str = "not a session file (not a JSON object)";
const NO_SESSION_ID: &str = "not a session file (no session_id)";
const NO_MESSAGES: &str = "not a session file (no messages list)";

#[derive(Deserialize)]
struct HeaderFields {
    #[serde(default)]
    session_id: Option<Value>,
    #[serde(default)]
    title: Option<Value>,
    #[serde(default)]
    created_at: Option<Value>,
    #[serde(default)]
    updated_at: Option<Value>,
    #[serde(default)]
    messages: Option<Shape>,
}

/// Whether a value is a list, found without keeping any of it.
#[derive(Debug)]
enum Shape {
    List,
    Other,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::List)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Shape::Other)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
}

/// A session file read in full: the header and the raw history.
#[derive(Debug)]
pub(crate) struct SessionFile {
    pub(crate) header: SessionHeader,
    model: String,
    active_skills: Vec<String>,
    messages: Vec<Value>,
    extension: Option<Value>,
}

impl SessionFile {
    /// Reads a file's bytes. `Err` says why it is not a session file (for the warning).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, String> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|err| format!("not valid JSON ({err})"))?;
        let Value::Object(mut object) = value else {
            return Err(NOT_AN_OBJECT.to_owned());
        };
        let header = SessionHeader::from_fields(
            object.get("session_id"),
            object.get("title"),
            object.get("created_at"),
            object.get("updated_at"),
        )?;
        let messages = match object.remove("messages") {
            Some(Value::Array(messages)) => messages,
            _ => return Err(NO_MESSAGES.to_owned()),
        };
        Ok(Self {
            header,
            model: object
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            active_skills: object
                .get("active_skills")
                .and_then(Value::as_array)
                .map(|skills| {
                    skills
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            extension: object.remove(EXTENSION_KEY),
            messages,
        })
    }

    /// The history the file holds, and a note when `_acp` had to be passed over.
    pub(crate) fn into_history(self) -> (SessionHistory, Option<String>) {
        let mut directories = Vec::new();
        let mut system_prompt = None;
        let (turns, mode, note) = match self.extension.map(read_extension) {
            Some(Ok(extension)) if extension.message_count == self.messages.len() => {
                directories = extension.additional_directories;
                system_prompt = extension.system_prompt;
                (extension.turns, extension.mode, None)
            }
            Some(Ok(_)) => (
                turns_from_messages(&self.messages),
                None,
                Some(format!(
                    "its messages were changed by another program; `{EXTENSION_KEY}` ignored"
                )),
            ),
            Some(Err(reason)) => (
                turns_from_messages(&self.messages),
                None,
                Some(format!("`{EXTENSION_KEY}` ignored ({reason})")),
            ),
            None => (turns_from_messages(&self.messages), None, None),
        };
        let finished = turns
            .into_iter()
            .filter(|turn| turn.stop_reason.is_some())
            .collect();
        let mut history = SessionHistory::from_turns(self.header.session_id, self.model, finished);
        history.created_at = self.header.created_at;
        history.mode = mode;
        history.active_skills = self.active_skills;
        history.additional_directories = directories;
        history.system_prompt = system_prompt;
        (history, note)
    }
}

fn read_extension(value: Value) -> Result<ExtensionIn, String> {
    let extension: ExtensionIn = serde_json::from_value(value).map_err(|err| err.to_string())?;
    if extension.version != EXTENSION_VERSION {
        return Err(format!("unknown version {}", extension.version));
    }
    Ok(extension)
}

#[derive(Deserialize)]
struct ExtensionIn {
    version: u32,
    message_count: usize,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    additional_directories: Vec<String>,
    #[serde(default)]
    system_prompt: Option<String>,
    turns: Vec<Turn>,
}

#[derive(Serialize)]
struct ExtensionOut<'a> {
    version: u32,
    message_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    additional_directories: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    system_prompt: Option<&'a str>,
    turns: Vec<&'a Turn>,
}

#[derive(Serialize)]
struct FileOut<'a> {
    session_id: &'a str,
    title: String,
    created_at: String,
    updated_at: String,
    model: &'a str,
    active_skills: &'a [String],
    messages: Vec<MessageOut>,
    #[serde(rename = "_acp")]
    extension: ExtensionOut<'a>,
}

/// One OpenAI-format message, keys in Agentao's order.
#[derive(Serialize)]
struct MessageOut {
    role: &'static str,
    content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCallOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}

#[derive(Serialize)]
struct ToolCallOut {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionOut,
}

#[derive(Serialize)]
struct FunctionOut {
    name: String,
    arguments: String,
}

/// The file's bytes for a history's finished turns: pretty JSON, indent 2, UTF-8 unescaped.
pub(crate) fn encode(
    history: &SessionHistory,
    created_at: Timestamp,
    updated_at: Timestamp,
) -> Vec<u8> {
    let turns: Vec<&Turn> = history.completed_turns().collect();
    let messages = messages_from_turns(&turns);
    let file = FileOut {
        session_id: history.session_id(),
        title: history.title(),
        created_at: created_at.to_iso(),
        updated_at: updated_at.to_iso(),
        model: &history.model,
        active_skills: &history.active_skills,
        extension: ExtensionOut {
            version: EXTENSION_VERSION,
            message_count: messages.len(),
            mode: history.mode.as_deref(),
            additional_directories: &history.additional_directories,
            system_prompt: history.system_prompt.as_deref(),
            turns,
        },
        messages,
    };
    // Serialising owned strings, numbers and schema types into memory cannot fail.
    serde_json::to_vec_pretty(&file).unwrap_or_default()
}

/// One assistant message being put together: reasoning, then text, then tool calls, then
/// the calls' results. An item that would go earlier than what is there starts a new one, so
/// the order of the turn survives the OpenAI shape.
#[derive(Default)]
struct AssistantDraft {
    rank: u8,
    reasoning: String,
    text: String,
    calls: Vec<ToolCallOut>,
    results: Vec<MessageOut>,
}

impl AssistantDraft {
    fn is_empty(&self) -> bool {
        self.reasoning.is_empty() && self.text.is_empty() && self.calls.is_empty()
    }

    fn flush_into(&mut self, messages: &mut Vec<MessageOut>) {
        let draft = std::mem::take(self);
        if draft.is_empty() {
            return;
        }
        messages.push(MessageOut {
            role: "assistant",
            content: (!draft.text.is_empty()).then_some(draft.text),
            reasoning_content: (!draft.reasoning.is_empty()).then_some(draft.reasoning),
            tool_calls: draft.calls,
            tool_call_id: None,
            name: None,
        });
        messages.extend(draft.results);
    }
}

fn messages_from_turns(turns: &[&Turn]) -> Vec<MessageOut> {
    let mut messages = Vec::new();
    for (turn_index, turn) in turns.iter().enumerate() {
        messages.push(MessageOut {
            role: "user",
            content: Some(prompt_text(&turn.prompt)),
            reasoning_content: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        });
        let mut draft = AssistantDraft::default();
        for (item_index, item) in turn.items.iter().enumerate() {
            let rank = match item {
                TurnItem::Thought(_) => 0,
                TurnItem::Message(_) => 1,
                TurnItem::ToolCall(_) | TurnItem::Plan(_) => 2,
            };
            if rank < draft.rank {
                draft.flush_into(&mut messages);
            }
            draft.rank = rank;
            match item {
                TurnItem::Thought(block) => draft
                    .reasoning
                    .push_str(&prompt_text(core::slice::from_ref(block))),
                TurnItem::Message(block) => draft
                    .text
                    .push_str(&prompt_text(core::slice::from_ref(block))),
                TurnItem::ToolCall(call) => {
                    let name = tool_name_for(&call.kind());
                    let arguments = call
                        .raw_input
                        .as_ref()
                        .map_or_else(|| "{}".to_owned(), Value::to_string);
                    let mut result = tool_output_text(&call.content);
                    if call.status() == ToolCallStatus::Failed && !result.starts_with(ERROR_PREFIX)
                    {
                        result = match result.is_empty() {
                            true => format!("{ERROR_PREFIX} tool call failed"),
                            false => format!("{ERROR_PREFIX} {result}"),
                        };
                    }
                    draft
                        .results
                        .push(tool_result(&call.tool_call_id, name, result));
                    draft
                        .calls
                        .push(function_call(call.tool_call_id.clone(), name, arguments));
                }
                TurnItem::Plan(plan) => {
                    let id = format!("plan_{turn_index}_{item_index}");
                    let todos: Vec<Value> = plan
                        .entries
                        .iter()
                        .map(|entry| {
                            let mut todo = Map::new();
                            todo.insert("content".into(), entry.content.clone().into());
                            todo.insert("status".into(), entry.status.as_str().into());
                            Value::Object(todo)
                        })
                        .collect();
                    let mut arguments = Map::new();
                    arguments.insert("todos".into(), Value::Array(todos));
                    draft.results.push(tool_result(
                        &id,
                        TODO_WRITE,
                        "Todo list updated.".to_owned(),
                    ));
                    draft.calls.push(function_call(
                        id,
                        TODO_WRITE,
                        Value::Object(arguments).to_string(),
                    ));
                }
            }
        }
        draft.flush_into(&mut messages);
    }
    messages
}

fn function_call(id: String, name: &str, arguments: String) -> ToolCallOut {
    ToolCallOut {
        id,
        kind: "function",
        function: FunctionOut {
            name: name.to_owned(),
            arguments,
        },
    }
}

fn tool_result(id: &str, name: &str, content: String) -> MessageOut {
    MessageOut {
        role: "tool",
        content: Some(content),
        reasoning_content: None,
        tool_calls: Vec::new(),
        tool_call_id: Some(id.to_owned()),
        name: Some(name.to_owned()),
    }
}

/// The Agentao tool name written for a kind: one Agentao maps back to the same kind.
fn tool_name_for(kind: &ToolKind) -> &'static str {
    match kind {
        ToolKind::Read => "read_file",
        ToolKind::Edit => "write_file",
        ToolKind::Search => "search_file_content",
        ToolKind::Execute => "run_shell_command",
        ToolKind::Fetch => "web_fetch",
        ToolKind::Delete => "delete",
        ToolKind::Move => "move",
        ToolKind::Think => "think",
        ToolKind::SwitchMode => "switch_mode",
        _ => "other",
    }
}

/// The kind of an Agentao tool: its own table (§2.2) plus the real names it misses
/// (`replace`, `search_file_content`; §10.2 item 5).
fn kind_for_tool(name: &str) -> ToolKind {
    match name {
        "read_file" | "read_folder" | "list_directory" => ToolKind::Read,
        "write_file" | "edit_file" | "edit" | "replace" => ToolKind::Edit,
        "find_files" | "search_text" | "grep" | "glob" | "web_search" | "search_file_content" => {
            ToolKind::Search
        }
        "run_shell_command" | "bash" | "shell" => ToolKind::Execute,
        "web_fetch" => ToolKind::Fetch,
        _ => ToolKind::Other,
    }
}

/// §6.3 in one walk: each user message opens a turn; assistant reasoning, text and tool calls
/// and the tool results fill it. Bad entries are skipped, never fatal.
///
/// Fixes over Agentao's replay, which says `completed` for every call: a call whose result is
/// missing (it never finished) or starts with `Error:` (how Agentao reports a failed tool, §2.1,
/// and how this store writes one) is `failed`. Reasoning is kept as thoughts.
pub(crate) fn turns_from_messages(messages: &[Value]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    let mut plan_ids = BTreeSet::new();
    for (index, message) in messages.iter().enumerate() {
        let Some(message) = message.as_object() else {
            continue;
        };
        match message.get("role").and_then(Value::as_str) {
            Some("user") => {
                let text = strip_system_reminders(&coerce_text(message.get("content")));
                if !text.is_empty() {
                    turns.push(finished_turn(vec![ContentBlock::text(text)]));
                }
            }
            Some("assistant") => {
                let turn = open_turn(&mut turns);
                let reasoning = message.get("reasoning_content").and_then(Value::as_str);
                if let Some(reasoning) = reasoning.filter(|text| !text.is_empty()) {
                    turn.items
                        .push(TurnItem::Thought(ContentBlock::text(reasoning)));
                }
                let text = coerce_text(message.get("content"));
                if !text.is_empty() {
                    turn.items.push(TurnItem::Message(ContentBlock::text(text)));
                }
                let calls = message.get("tool_calls").and_then(Value::as_array);
                for (position, call) in calls.into_iter().flatten().enumerate() {
                    if let Some(item) = replayed_call(call, index, position, &mut plan_ids) {
                        turn.items.push(item);
                    }
                }
            }
            Some("tool") => {
                let Some(id) = message.get("tool_call_id").and_then(Value::as_str) else {
                    continue;
                };
                if id.is_empty() || plan_ids.contains(id) {
                    continue;
                }
                let text = coerce_text(message.get("content"));
                let status = match text.starts_with(ERROR_PREFIX) {
                    true => ToolCallStatus::Failed,
                    false => ToolCallStatus::Completed,
                };
                let content = if text.is_empty() {
                    Vec::new()
                } else {
                    vec![ToolCallContent::Content(ToolContent::new(
                        ContentBlock::text(text),
                    ))]
                };
                let turn = open_turn(&mut turns);
                let known = turn.items.iter_mut().rev().find_map(|item| match item {
                    TurnItem::ToolCall(call) if call.tool_call_id == id => Some(call),
                    _ => None,
                });
                match known {
                    Some(call) => {
                        call.status = Some(status);
                        if !content.is_empty() {
                            call.content = content;
                        }
                    }
                    None => {
                        let name = message
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("tool");
                        let mut call = ToolCall::new(id, name);
                        call.kind = Some(kind_for_tool(name));
                        call.status = Some(status);
                        call.content = content;
                        turn.items.push(TurnItem::ToolCall(call));
                    }
                }
            }
            _ => {}
        }
    }
    turns
}

fn finished_turn(prompt: Vec<ContentBlock>) -> Turn {
    Turn {
        prompt,
        items: Vec::new(),
        stop_reason: Some(StopReason::EndTurn),
    }
}

/// The turn output goes into; output before any user message gets a turn with no prompt.
fn open_turn(turns: &mut Vec<Turn>) -> &mut Turn {
    if turns.is_empty() {
        turns.push(finished_turn(Vec::new()));
    }
    let last = turns.len() - 1;
    &mut turns[last]
}

/// One persisted `tool_calls[]` entry: a plan for a valid `todo_write`, else a tool call that
/// stays `failed` until its result turns up.
fn replayed_call(
    call: &Value,
    index: usize,
    position: usize,
    plan_ids: &mut BTreeSet<String>,
) -> Option<TurnItem> {
    let call = call.as_object()?;
    let id = match call.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => format!(
            "replay_{:012x}",
            ((index as u64) << 16 | position as u64) & 0xffff_ffff_ffff
        ),
    };
    let function = call.get("function").and_then(Value::as_object);
    let name = function
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let arguments = raw_input(function.and_then(|f| f.get("arguments")));
    if name == TODO_WRITE
        && let Some(plan) = plan_from_todos(&arguments)
    {
        plan_ids.insert(id);
        return Some(TurnItem::Plan(plan));
    }
    let mut replayed = ToolCall::new(id, if name.is_empty() { "tool" } else { name });
    replayed.kind = Some(kind_for_tool(name));
    replayed.status = Some(ToolCallStatus::Failed);
    replayed.raw_input = Some(arguments);
    Some(TurnItem::ToolCall(replayed))
}

/// Arguments as `rawInput`: the parsed object; `{"_raw": text}` when the text is not JSON;
/// `{"_value": v}` when it is JSON but not an object (§6.3).
fn raw_input(arguments: Option<&Value>) -> Value {
    let wrap = |key: &str, value: Value| {
        let mut object = Map::new();
        object.insert(key.to_owned(), value);
        Value::Object(object)
    };
    match arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(object)) => Value::Object(object.clone()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => Value::Object(object),
            Ok(other) => wrap("_value", other),
            Err(_) => wrap("_raw", Value::String(text.clone())),
        },
        Some(other) => wrap("_value", other.clone()),
    }
}

/// Agentao's all-or-nothing check: a non-empty `todos` list whose every entry has a string
/// `content` and a known `status`. Priorities are `medium`, as Agentao sends them.
fn plan_from_todos(arguments: &Value) -> Option<Plan> {
    let todos = arguments.get("todos")?.as_array()?;
    if todos.is_empty() {
        return None;
    }
    let mut plan = Plan::default();
    for todo in todos {
        let content = todo.get("content")?.as_str()?;
        let status = match todo.get("status")?.as_str()? {
            "pending" => PlanEntryStatus::Pending,
            "in_progress" => PlanEntryStatus::InProgress,
            "completed" => PlanEntryStatus::Completed,
            _ => return None,
        };
        plan.entries
            .push(PlanEntry::new(content, PlanEntryPriority::Medium, status));
    }
    Some(plan)
}

/// Message content as text: a string as is; a list's text parts joined by newlines (other
/// parts skipped); nothing for null; anything else in its JSON form.
fn coerce_text(content: Option<&Value>) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect();
            texts.join("\n")
        }
        Some(other) => other.to_string(),
    }
}
