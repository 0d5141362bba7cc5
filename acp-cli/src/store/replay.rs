//! History → the `session/update`s `session/load` sends before its response.
//!
//! Per turn: the prompt as `user_message_chunk`s, then the output in the order it was sent:
//! `agent_message_chunk`, `agent_thought_chunk`, `plan`, and for each tool call a `tool_call`
//! (as announced: `pending`, with its input) followed by a `tool_call_update` carrying the
//! status it really ended with and its final content; a compaction as one `compaction_update`
//! `completed` with its summary. Agentao replays every tool call as
//! `completed`, failed ones included (R-STORE-4); that is the bug fixed here.

use acp_core::schema::{
    CompactionStatus, CompactionUpdate, ContentBlock, ContentChunk, SessionUpdate, ToolCall,
    ToolCallStatus, ToolCallUpdate,
};

use super::history::{SessionHistory, TurnItem};

/// The updates that replay a history's finished turns, in order.
pub fn replay(history: &SessionHistory) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    for turn in history.completed_turns() {
        for block in turn.prompt.iter().filter(|block| !is_empty_text(block)) {
            updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                block.clone(),
            )));
        }
        for item in &turn.items {
            match item {
                TurnItem::Message(block) => updates.push(SessionUpdate::AgentMessageChunk(
                    ContentChunk::new(block.clone()),
                )),
                TurnItem::Thought(block) => updates.push(SessionUpdate::AgentThoughtChunk(
                    ContentChunk::new(block.clone()),
                )),
                TurnItem::MessageText(text) => updates.push(SessionUpdate::AgentMessageChunk(
                    ContentChunk::new(ContentBlock::text(text.to_plain())),
                )),
                TurnItem::ThoughtText(text) => updates.push(SessionUpdate::AgentThoughtChunk(
                    ContentChunk::new(ContentBlock::text(text.to_plain())),
                )),
                TurnItem::Plan(plan) => updates.push(SessionUpdate::Plan(plan.clone())),
                // R-LLM-CONTEXT-2: the compaction as its final upsert, summary included.
                TurnItem::Compaction(compaction) => {
                    let mut update =
                        CompactionUpdate::new(compaction.id.clone(), CompactionStatus::Completed);
                    update.summary =
                        Some(Some(vec![ContentBlock::text(compaction.summary.clone())]));
                    updates.push(SessionUpdate::CompactionUpdate(update));
                }
                TurnItem::ToolCall(call) => {
                    let (announced, finished) = tool_call_pair(call);
                    updates.push(SessionUpdate::ToolCall(announced));
                    updates.push(SessionUpdate::ToolCallUpdate(finished));
                }
            }
        }
    }
    updates
}

fn is_empty_text(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Text(text) if text.text.trim().is_empty())
}

/// A recorded call as a fresh `tool_call` and the `tool_call_update` that finishes it.
fn tool_call_pair(call: &ToolCall) -> (ToolCall, ToolCallUpdate) {
    let mut announced = ToolCall::new(call.tool_call_id.clone(), call.title.clone());
    announced.kind = call.kind.clone();
    announced.status = Some(ToolCallStatus::Pending);
    announced.locations = call.locations.clone();
    announced.raw_input = call.raw_input.clone();
    announced.meta = call.meta.clone();

    let mut finished = ToolCallUpdate::new(call.tool_call_id.clone());
    finished.status = Some(call.status());
    finished.content = (!call.content.is_empty()).then(|| call.content.clone());
    finished.raw_output = call.raw_output.clone();
    (announced, finished)
}
