//! What the model is told: a system prompt, then the session's history as Chat Completions
//! messages, so a loaded or resumed session goes on with its earlier turns, tool calls and
//! results.
//!
//! The history is what the client saw (every update the agent sent), so a tool result is
//! the text of the tool call's final content. Each assistant `tool_calls` entry is followed
//! by its `tool` message, as the API requires: a call that never finished (the turn was
//! cancelled) is answered with an error text.

use acp_core::schema::{
    ContentBlock, EmbeddedResourceResource, ToolCall, ToolCallContent, ToolCallStatus, ToolKind,
};
use serde_json::Value;

use super::tools::TOOL_NAMES;
use crate::model::chat::{ChatMessage, ModelToolCall};
use crate::store::{SessionHistory, TurnItem};

/// The `_meta` key under which a tool call keeps the model's tool name (its title is for
/// people), so the next turns can tell `replace` from `write_file`.
pub(crate) const TOOL_NAME_META: &str = "acp-cli/tool";

/// The system prompt: who the agent is, where it works, which tools it has, then the
/// client's `systemPrompt` (append mode) when it gave one.
pub(crate) fn system_prompt(cwd: &str, client: Option<&str>) -> String {
    let built_in = format!(
        "You are acp-cli, a coding agent working in the directory {cwd} on the user's machine, \
         through an editor. Use the tools to look at and change the project: {}. Relative paths \
         are resolved against {cwd}; paths outside it are refused. Edits and shell commands may \
         need the user's permission; if a tool fails or is refused, its result says why. Be \
         concise, and say what you changed.",
        TOOL_NAMES.join(", ")
    );
    match client {
        Some(text) if !text.trim().is_empty() => format!("{built_in}\n\n{text}"),
        _ => built_in,
    }
}

/// The prompt that forces a compaction (R-LLM-CONTEXT-1); it is not sent to the model.
pub(crate) const COMPACT_COMMAND: &str = "/compact";

/// Whether a prompt is the `/compact` command.
pub(crate) fn is_compact_command(prompt: &str) -> bool {
    prompt.trim() == COMPACT_COMMAND
}

/// How the model is handed a compaction's summary, in place of what it summarizes.
pub(crate) fn summary_message(summary: &str) -> ChatMessage {
    ChatMessage::User(format!(
        "[The earlier conversation was compacted to fit the context window. Its summary:]\n\n{summary}"
    ))
}

/// The user message of a turn's prompt, unless it is empty or `/compact`.
pub(crate) fn prompt_message(prompt: &[ContentBlock]) -> Option<ChatMessage> {
    let text = prompt_text(prompt);
    (!text.is_empty() && !is_compact_command(&text)).then_some(ChatMessage::User(text))
}

/// The conversation for the model: `system`, then every turn of `history` (the running
/// turn's prompt last). From the last compaction on (R-LLM-CONTEXT-2): its summary, the
/// prompt of the turn it happened in, then what followed it.
pub(crate) fn messages(system: String, history: &SessionHistory) -> Vec<ChatMessage> {
    let mut messages = vec![ChatMessage::System(system)];
    let turns = history.turns();
    let point = turns.iter().enumerate().rev().find_map(|(index, turn)| {
        turn.items
            .iter()
            .rposition(|item| matches!(item, TurnItem::Compaction(_)))
            .map(|at| (index, at))
    });
    for (index, turn) in turns.iter().enumerate() {
        let items = match point {
            Some((at_turn, _)) if index < at_turn => continue,
            Some((at_turn, at_item)) if index == at_turn => {
                if let TurnItem::Compaction(compaction) = &turn.items[at_item] {
                    messages.push(summary_message(&compaction.summary));
                }
                &turn.items[at_item + 1..]
            }
            _ => &turn.items[..],
        };
        messages.extend(prompt_message(&turn.prompt));
        let mut draft = Draft::default();
        for item in items {
            match item {
                TurnItem::Message(block) => {
                    // Text after tool calls belongs to the next answer.
                    if !draft.calls.is_empty() {
                        draft.flush(&mut messages);
                    }
                    draft
                        .text
                        .push_str(&prompt_text(core::slice::from_ref(block)));
                }
                TurnItem::ToolCall(call) => {
                    let id = call.tool_call_id.clone();
                    draft.calls.push(ModelToolCall {
                        id: id.clone(),
                        name: tool_name(call).to_owned(),
                        arguments: call
                            .raw_input
                            .as_ref()
                            .map_or_else(|| "{}".to_owned(), Value::to_string),
                    });
                    draft.results.push(ChatMessage::Tool {
                        tool_call_id: id,
                        content: tool_result(call),
                    });
                }
                TurnItem::Thought(_) | TurnItem::Plan(_) | TurnItem::Compaction(_) => {}
            }
        }
        draft.flush(&mut messages);
    }
    messages
}

/// One assistant message being put together: its text, its calls, then their results.
#[derive(Default)]
struct Draft {
    text: String,
    calls: Vec<ModelToolCall>,
    results: Vec<ChatMessage>,
}

impl Draft {
    fn flush(&mut self, messages: &mut Vec<ChatMessage>) {
        let draft = std::mem::take(self);
        if draft.text.is_empty() && draft.calls.is_empty() {
            return;
        }
        messages.push(ChatMessage::Assistant {
            content: (!draft.text.is_empty()).then_some(draft.text),
            tool_calls: draft.calls,
        });
        messages.extend(draft.results);
    }
}

/// The model's name for a recorded call: kept in `_meta` by this backend; a call loaded
/// from Agentao's `messages` has it as its title; otherwise Agentao's name for its kind.
fn tool_name(call: &ToolCall) -> &str {
    if let Some(name) = call
        .meta
        .as_ref()
        .and_then(|meta| meta.get(TOOL_NAME_META))
        .and_then(Value::as_str)
    {
        return name;
    }
    if TOOL_NAMES.contains(&call.title.as_str()) {
        return &call.title;
    }
    match call.kind() {
        ToolKind::Read => "read_file",
        ToolKind::Edit => "write_file",
        ToolKind::Search => "search_file_content",
        ToolKind::Execute => "run_shell_command",
        _ => "other",
    }
}

/// A recorded call's result: its content's text; a failed call's starts with `Error:`.
fn tool_result(call: &ToolCall) -> String {
    let text = content_text(&call.content);
    match call.status() {
        ToolCallStatus::Completed => text,
        ToolCallStatus::Failed if text.starts_with("Error:") => text,
        ToolCallStatus::Failed if text.is_empty() => "Error: the tool call failed".to_owned(),
        ToolCallStatus::Failed => format!("Error: {text}"),
        _ => "Error: the tool call did not finish (the turn was cancelled)".to_owned(),
    }
}

/// The text of a tool call's content: text blocks as they are, a diff as one line.
fn content_text(content: &[ToolCallContent]) -> String {
    let mut lines = Vec::new();
    for item in content {
        match item {
            ToolCallContent::Content(block) => {
                lines.push(prompt_text(core::slice::from_ref(&block.content)))
            }
            ToolCallContent::Diff(diff) => lines.push(format!("(diff of {})", diff.path)),
            _ => {}
        }
    }
    lines.retain(|line| !line.is_empty());
    lines.join("\n")
}

/// The text of prompt blocks: text, resource links as their URI, embedded text resources
/// with their URI; one per line.
pub(crate) fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(link.uri.clone()),
            ContentBlock::Resource(resource) => {
                if let EmbeddedResourceResource::Text(text) = &resource.resource {
                    parts.push(format!("{}:\n{}", text.uri, text.text));
                }
            }
            _ => {}
        }
    }
    parts.join("\n")
}
