//! What the model is told: a system prompt, then the session's history as Chat Completions
//! messages, so a loaded or resumed session goes on with its earlier turns, tool calls and
//! results.
//!
//! The history is what the client saw (every update the agent sent), so a tool result is
//! the text of the tool call's final content. Each assistant `tool_calls` entry is followed
//! by its `tool` message, as the API requires: a call that never finished (the turn was
//! cancelled) is answered with an error text.

use acp_core::schema::{
    ContentBlock, EmbeddedResourceResource, Plan, ToolCall, ToolCallContent, ToolCallStatus,
    ToolKind,
};
use serde_json::Value;

use super::instructions::{self, Instruction};
use super::tools::{TODO_DONE, TOOL_NAMES};
use crate::model::chat::{ChatMessage, ModelToolCall, UserPart};
use crate::store::{SessionHistory, TurnItem};

/// The `_meta` key under which a tool call keeps the model's tool name (its title is for
/// people), so the next turns can tell `replace` from `write_file`.
pub(crate) const TOOL_NAME_META: &str = "acp-cli/tool";

/// The system prompt, in this order (R-LLM-7): who the agent is, where it works and which
/// tools it has; then the project's instruction files, from the repository root down to the
/// cwd; then the client's `systemPrompt` (append mode) when it gave one. Later parts are
/// more specific, so they come nearer the conversation.
pub(crate) fn system_prompt(
    cwd: &str,
    instructions: &[Instruction],
    client: Option<&str>,
) -> String {
    let mut prompt = format!(
        "You are acp-cli, a coding agent working in the directory {cwd} on the user's machine, \
         through an editor. Use the tools to look at and change the project: {}. Relative paths \
         are resolved against {cwd}; paths outside it are refused. Edits and shell commands may \
         need the user's permission; if a tool fails or is refused, its result says why. For \
         work of several steps, keep a plan with todo_write and update it as steps are done. \
         Be concise, and say what you changed.",
        TOOL_NAMES.join(", ")
    );
    let section = instructions::section(instructions);
    if !section.is_empty() {
        prompt.push_str("\n\n");
        prompt.push_str(&section);
    }
    if let Some(text) = client.filter(|text| !text.trim().is_empty()) {
        prompt.push_str("\n\n");
        prompt.push_str(text);
    }
    prompt
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

/// The user message of a turn's prompt (with its images when `images`), unless it is empty
/// or `/compact`.
pub(crate) fn prompt_message(prompt: &[ContentBlock], images: bool) -> Option<ChatMessage> {
    if is_compact_command(&prompt_text(prompt)) {
        return None;
    }
    user_message(prompt, images)
}

/// The conversation for the model: `system`, then every turn of `history` (the running
/// turn's prompt last). From the last compaction on (R-LLM-CONTEXT-2): its summary, the
/// prompt of the turn it happened in, then what followed it. With `images` a prompt's image
/// blocks go along as images (R-LLM-9); without, they are left out.
pub(crate) fn messages(system: String, history: &SessionHistory, images: bool) -> Vec<ChatMessage> {
    let mut messages = vec![ChatMessage::System(system)];
    let turns = history.turns();
    let point = turns.iter().enumerate().rev().find_map(|(index, turn)| {
        turn.items
            .iter()
            .rposition(|item| matches!(item, TurnItem::Compaction(_)))
            .map(|at| (index, at))
    });
    for (turn_index, turn) in turns.iter().enumerate() {
        let items = match point {
            Some((at_turn, _)) if turn_index < at_turn => continue,
            Some((at_turn, at_item)) if turn_index == at_turn => {
                if let TurnItem::Compaction(compaction) = &turn.items[at_item] {
                    messages.push(summary_message(&compaction.summary));
                }
                &turn.items[at_item + 1..]
            }
            _ => &turn.items[..],
        };
        messages.extend(prompt_message(&turn.prompt, images));
        let mut draft = Draft::default();
        for (item_index, item) in items.iter().enumerate() {
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
                TurnItem::MessageText(text) => {
                    if !draft.calls.is_empty() {
                        draft.flush(&mut messages);
                    }
                    draft.text.push_str(&text.to_plain());
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
                // A plan was a `todo_write`: the model sees its call again (R-LLM-8).
                TurnItem::Plan(plan) => {
                    let id = format!("plan_{turn_index}_{item_index}");
                    draft.calls.push(ModelToolCall {
                        id: id.clone(),
                        name: "todo_write".to_owned(),
                        arguments: todo_arguments(plan),
                    });
                    draft.results.push(ChatMessage::Tool {
                        tool_call_id: id,
                        content: TODO_DONE.to_owned(),
                    });
                }
                TurnItem::Thought(_) | TurnItem::ThoughtText(_) | TurnItem::Compaction(_) => {}
            }
        }
        draft.flush(&mut messages);
    }
    messages
}

/// A prompt as the user's message: its text, or its parts when it has images and the model
/// takes them; `None` when there is nothing to send.
fn user_message(prompt: &[ContentBlock], images: bool) -> Option<ChatMessage> {
    let has_image = prompt.iter().any(|b| matches!(b, ContentBlock::Image(_)));
    if !(images && has_image) {
        let text = prompt_text(prompt);
        return (!text.is_empty()).then_some(ChatMessage::User(text));
    }
    let mut parts = Vec::new();
    for block in prompt {
        match block {
            ContentBlock::Image(image) => parts.push(UserPart::Image {
                mime_type: image.mime_type.clone(),
                data: image.data.clone(),
            }),
            other => {
                let text = prompt_text(core::slice::from_ref(other));
                if text.is_empty() {
                    continue;
                }
                // Text blocks in a row are one part, as `prompt_text` joins them.
                match parts.last_mut() {
                    Some(UserPart::Text(last)) => {
                        last.push('\n');
                        last.push_str(&text);
                    }
                    _ => parts.push(UserPart::Text(text)),
                }
            }
        }
    }
    Some(ChatMessage::UserParts(parts))
}

/// A plan as `todo_write`'s arguments: `{"todos":[{"content","status"}]}`.
fn todo_arguments(plan: &Plan) -> String {
    let todos: Vec<Value> = plan
        .entries
        .iter()
        .map(|entry| serde_json::json!({"content": entry.content, "status": entry.status.as_str()}))
        .collect();
    serde_json::json!({ "todos": todos }).to_string()
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
