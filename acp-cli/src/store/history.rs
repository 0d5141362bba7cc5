//! What a session holds: its turns, built up from the updates the agent sends.
//!
//! The agent feeds the recorder exactly what goes on the wire ([`SessionHistory::record_update`]
//! with each `session/update` it sends), so the history can never disagree with what the
//! client saw. Only completed turns are saved and replayed: a turn cut short by a crash is lost,
//! and nothing else.

use std::borrow::Cow;

use acp_core::schema::{
    CompactionStatus, ContentBlock, Plan, PlanUpdateContent, SessionUpdate, StopReason, ToolCall,
    ToolCallUpdate,
};
use acp_core::wire::encode::TextChunkKind;
use serde::{Deserialize, Serialize};

use super::escaped::EscapedText;
use super::time::Timestamp;

/// The conversation of one session plus the settings that travel with it.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionHistory {
    session_id: String,
    /// When the session was first saved; kept across saves (Agentao copies it the same way).
    pub(crate) created_at: Option<Timestamp>,
    /// The model name (Agentao's `model` key).
    pub model: String,
    /// The session mode (`current_mode_update`), if one was set.
    pub mode: Option<String>,
    /// Agentao's active skills, kept so that saving a session Agentao wrote does not drop them.
    pub active_skills: Vec<String>,
    /// The session's `additionalDirectories` (kept in `_acp`; Agentao has no such field).
    pub additional_directories: Vec<String>,
    /// The client's `systemPrompt` text (kept in `_acp`; Agentao has no such field).
    pub system_prompt: Option<String>,
    turns: Vec<Turn>,
}

/// One prompt turn: what the user sent and what the agent did about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// The user's prompt blocks, as sent.
    pub prompt: Vec<ContentBlock>,
    /// The agent's output, in the order it was sent.
    pub items: Vec<TurnItem>,
    /// `None` while the turn runs.
    pub stop_reason: Option<StopReason>,
}

/// One piece of a turn's output.
///
/// Plain text (a text block without annotations or `_meta`, the common case) is kept as
/// [`TurnItem::MessageText`] and [`TurnItem::ThoughtText`]: the JSON the chunks went out as
/// (R-STORE-7). Such an item equals the [`TurnItem::Message`] (or `Thought`) of a text block
/// with the same text, and is saved as one: the file does not tell them apart.
#[derive(Clone, Debug, Deserialize)]
#[serde(from = "StoredItem")]
pub enum TurnItem {
    /// The agent's visible answer. Consecutive text chunks are joined into one block.
    Message(ContentBlock),
    /// The agent's reasoning. Consecutive text chunks are joined into one block.
    Thought(ContentBlock),
    /// A tool call in its final state: every `tool_call_update` applied.
    ToolCall(ToolCall),
    /// A plan as sent (each plan replaces the previous one on the client).
    Plan(Plan),
    /// The agent's visible answer as plain text, kept escaped. Consecutive chunks are joined.
    MessageText(EscapedText),
    /// The agent's reasoning as plain text, kept escaped. Consecutive chunks are joined.
    ThoughtText(EscapedText),
    /// The compaction point (R-LLM-CONTEXT-2): what came before is, for the model, this
    /// summary; the client saw (and a load replays) all of it.
    Compaction(Compaction),
}

/// A finished context compaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {
    /// Its `compactionId`.
    pub id: String,
    /// The summary's text.
    pub summary: String,
}

/// A turn item as a file holds it (`{"message": {"type": "text", …}}`, …).
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum StoredItem {
    Message(ContentBlock),
    Thought(ContentBlock),
    ToolCall(ToolCall),
    Plan(Plan),
    Compaction(Compaction),
}

impl From<StoredItem> for TurnItem {
    /// Plain text is kept escaped from the start, so that later saves copy it.
    fn from(item: StoredItem) -> Self {
        match item {
            StoredItem::Message(block) => match plain_text(&block) {
                Some(text) => TurnItem::MessageText(EscapedText::from_plain(text)),
                None => TurnItem::Message(block),
            },
            StoredItem::Thought(block) => match plain_text(&block) {
                Some(text) => TurnItem::ThoughtText(EscapedText::from_plain(text)),
                None => TurnItem::Thought(block),
            },
            StoredItem::ToolCall(call) => TurnItem::ToolCall(call),
            StoredItem::Plan(plan) => TurnItem::Plan(plan),
            StoredItem::Compaction(compaction) => TurnItem::Compaction(compaction),
        }
    }
}

/// The text of a text block without annotations or `_meta`.
fn plain_text(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::Text(text) if text.annotations.is_none() && text.meta.is_none() => {
            Some(&text.text)
        }
        _ => None,
    }
}

/// A kept text as the text block it stands for: `{"type": "text", "text": …}`, the text
/// written as it is kept.
struct TextBlockOut<'a>(&'a EscapedText);

impl Serialize for TextBlockOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut block = serializer.serialize_struct("TextContent", 2)?;
        block.serialize_field("type", "text")?;
        block.serialize_field("text", self.0)?;
        block.end()
    }
}

impl Serialize for TurnItem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        const NAME: &str = "TurnItem";
        match self {
            TurnItem::Message(block) => {
                serializer.serialize_newtype_variant(NAME, 0, "message", block)
            }
            TurnItem::Thought(block) => {
                serializer.serialize_newtype_variant(NAME, 1, "thought", block)
            }
            TurnItem::ToolCall(call) => {
                serializer.serialize_newtype_variant(NAME, 2, "tool_call", call)
            }
            TurnItem::Plan(plan) => serializer.serialize_newtype_variant(NAME, 3, "plan", plan),
            TurnItem::Compaction(compaction) => {
                serializer.serialize_newtype_variant(NAME, 4, "compaction", compaction)
            }
            TurnItem::MessageText(text) => {
                serializer.serialize_newtype_variant(NAME, 0, "message", &TextBlockOut(text))
            }
            TurnItem::ThoughtText(text) => {
                serializer.serialize_newtype_variant(NAME, 1, "thought", &TextBlockOut(text))
            }
        }
    }
}

impl TurnItem {
    /// Plain text as `(thought, text)`, however it is kept.
    fn as_plain_text(&self) -> Option<(bool, Cow<'_, str>)> {
        match self {
            TurnItem::MessageText(text) => Some((false, text.to_plain())),
            TurnItem::ThoughtText(text) => Some((true, text.to_plain())),
            TurnItem::Message(block) => plain_text(block).map(|text| (false, Cow::Borrowed(text))),
            TurnItem::Thought(block) => plain_text(block).map(|text| (true, Cow::Borrowed(text))),
            TurnItem::ToolCall(_) | TurnItem::Plan(_) | TurnItem::Compaction(_) => None,
        }
    }
}

impl PartialEq for TurnItem {
    fn eq(&self, other: &Self) -> bool {
        if let (Some(mine), Some(theirs)) = (self.as_plain_text(), other.as_plain_text()) {
            return mine == theirs;
        }
        match (self, other) {
            (TurnItem::Message(a), TurnItem::Message(b))
            | (TurnItem::Thought(a), TurnItem::Thought(b)) => a == b,
            (TurnItem::ToolCall(a), TurnItem::ToolCall(b)) => a == b,
            (TurnItem::Plan(a), TurnItem::Plan(b)) => a == b,
            (TurnItem::Compaction(a), TurnItem::Compaction(b)) => a == b,
            _ => false,
        }
    }
}

/// Most tool calls one turn keeps; further calls are dropped from the history (never a panic,
/// never unbounded memory).
pub(crate) const MAX_ITEMS_PER_TURN: usize = 100_000;

impl SessionHistory {
    /// An empty history for a session.
    pub fn new(session_id: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            created_at: None,
            model: model.into(),
            mode: None,
            active_skills: Vec::new(),
            additional_directories: Vec::new(),
            system_prompt: None,
            turns: Vec::new(),
        }
    }

    /// A history from finished turns (what loading a file produces).
    pub(crate) fn from_turns(session_id: String, model: String, turns: Vec<Turn>) -> Self {
        let mut history = Self::new(session_id, model);
        history.turns = turns;
        history
    }

    /// The session's id, exactly as the client knows it.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// When the session was first saved, if it has been.
    pub fn created_at(&self) -> Option<Timestamp> {
        self.created_at
    }

    /// Every turn, the running one (if any) last.
    pub fn turns(&self) -> &[Turn] {
        &self.turns
    }

    /// The finished turns: what is saved and replayed.
    pub(crate) fn completed_turns(&self) -> impl Iterator<Item = &Turn> {
        self.turns.iter().filter(|turn| turn.stop_reason.is_some())
    }

    /// How many turns have finished (for a `/history` command).
    pub fn turn_count(&self) -> usize {
        self.completed_turns().count()
    }

    /// The session's title as Agentao computes it: the first user message without its
    /// `<system-reminder>` blocks, at most 60 characters and then `…`.
    pub fn title(&self) -> String {
        let first = self
            .completed_turns()
            .map(|turn| {
                super::text::strip_system_reminders(&super::text::prompt_text(&turn.prompt))
            })
            .find(|text| !text.is_empty())
            .unwrap_or_default();
        super::text::shorten(&first, 60)
    }

    /// Starts a turn with the user's prompt. A turn still running is ended first as
    /// `cancelled`, so one lost `end_turn` cannot merge two turns.
    pub fn record_user_prompt(&mut self, prompt: &[ContentBlock]) {
        self.end_turn(StopReason::Cancelled);
        self.turns.push(Turn {
            prompt: prompt.to_vec(),
            items: Vec::new(),
            stop_reason: None,
        });
    }

    /// Records one update the agent sent. Content updates outside a turn are not part of the
    /// conversation and are ignored; `current_mode_update` is kept at any time.
    pub fn record_update(&mut self, update: &SessionUpdate) {
        if let SessionUpdate::CurrentModeUpdate(mode) = update {
            self.mode = Some(mode.current_mode_id.clone());
            return;
        }
        let Some(turn) = self
            .turns
            .last_mut()
            .filter(|turn| turn.stop_reason.is_none())
        else {
            return;
        };
        match update {
            SessionUpdate::UserMessageChunk(chunk) => turn.prompt.push(chunk.content.clone()),
            SessionUpdate::AgentMessageChunk(chunk) => turn.push_text(&chunk.content, false),
            SessionUpdate::AgentThoughtChunk(chunk) => turn.push_text(&chunk.content, true),
            SessionUpdate::ToolCall(call) => match turn.tool_call_mut(&call.tool_call_id) {
                Some(existing) => *existing = call.clone(),
                None => turn.push(TurnItem::ToolCall(call.clone())),
            },
            SessionUpdate::ToolCallUpdate(update) => match turn.tool_call_mut(&update.tool_call_id)
            {
                Some(existing) => apply_tool_update(existing, update),
                None => {
                    let mut call = ToolCall::new(update.tool_call_id.clone(), "");
                    apply_tool_update(&mut call, update);
                    turn.push(TurnItem::ToolCall(call));
                }
            },
            SessionUpdate::Plan(plan) => turn.push(TurnItem::Plan(plan.clone())),
            // A checklist by id is kept as the plan it shows (replayed as a `plan`, which
            // every client renders).
            SessionUpdate::PlanUpdate(update) => {
                if let PlanUpdateContent::Items(items) = &update.plan {
                    let mut plan = Plan::default();
                    plan.entries = items.entries.clone();
                    turn.push(TurnItem::Plan(plan));
                }
            }
            // The compaction point is kept when it completes, with its whole summary.
            SessionUpdate::CompactionUpdate(update)
                if matches!(update.status, CompactionStatus::Completed) =>
            {
                let summary = update
                    .summary
                    .iter()
                    .flatten()
                    .flatten()
                    .filter_map(|block| match block {
                        ContentBlock::Text(text) => Some(text.text.as_str()),
                        _ => None,
                    })
                    .collect::<String>();
                turn.push(TurnItem::Compaction(Compaction {
                    id: update.compaction_id.clone(),
                    summary,
                }));
            }
            _ => {}
        }
    }

    /// Records a plain text chunk the agent sent with acp-core's `send_text_chunk`, given as
    /// the encoder escaped it into the chunk's line: kept as it is (R-STORE-7). Like
    /// [`SessionHistory::record_update`] with the same chunk, without escaping it again.
    pub fn record_text_chunk(&mut self, kind: TextChunkKind, escaped: &str) {
        if let Some(turn) = self
            .turns
            .last_mut()
            .filter(|turn| turn.stop_reason.is_none())
        {
            turn.push_escaped_text(escaped, kind == TextChunkKind::AgentThought);
        }
    }

    /// Ends the running turn (no-op when none runs).
    pub fn end_turn(&mut self, stop_reason: StopReason) {
        if let Some(turn) = self
            .turns
            .last_mut()
            .filter(|turn| turn.stop_reason.is_none())
        {
            turn.stop_reason = Some(stop_reason);
        }
    }
}

impl Turn {
    /// Appends a plain text chunk given as the encoder escaped it (the text of
    /// [`SessionHistory::record_text_chunk`]), joined like [`Turn::push_text`] joins it.
    fn push_escaped_text(&mut self, escaped: &str, thought: bool) {
        match (self.items.last_mut(), thought) {
            (Some(TurnItem::MessageText(last)), false)
            | (Some(TurnItem::ThoughtText(last)), true) => last.push_escaped(escaped),
            (Some(TurnItem::Message(ContentBlock::Text(_))), false)
            | (Some(TurnItem::Thought(ContentBlock::Text(_))), true) => {
                // Joined onto a block with annotations: as plain text, like any chunk.
                let mut text = EscapedText::default();
                text.push_escaped(escaped);
                self.push_text(&ContentBlock::text(text.to_plain()), thought);
            }
            _ => {
                let mut text = EscapedText::default();
                text.push_escaped(escaped);
                self.push(match thought {
                    true => TurnItem::ThoughtText(text),
                    false => TurnItem::MessageText(text),
                });
            }
        }
    }

    fn push(&mut self, item: TurnItem) {
        if self.items.len() < MAX_ITEMS_PER_TURN {
            self.items.push(item);
        }
    }

    /// Appends a message (or, with `thought`, a reasoning) chunk, joining text onto the
    /// previous item of the same kind: a streamed text is copied once, onto its item, never
    /// cloned per chunk. Plain text starts a kept-escaped item (R-STORE-7).
    fn push_text(&mut self, content: &ContentBlock, thought: bool) {
        if let ContentBlock::Text(next) = content {
            match (self.items.last_mut(), thought) {
                (Some(TurnItem::MessageText(last)), false)
                | (Some(TurnItem::ThoughtText(last)), true) => {
                    last.push_plain(&next.text);
                    return;
                }
                (Some(TurnItem::Message(ContentBlock::Text(last))), false)
                | (Some(TurnItem::Thought(ContentBlock::Text(last))), true) => {
                    last.text.push_str(&next.text);
                    return;
                }
                _ => {}
            }
            if let Some(text) = plain_text(content) {
                let text = EscapedText::from_plain(text);
                self.push(match thought {
                    true => TurnItem::ThoughtText(text),
                    false => TurnItem::MessageText(text),
                });
                return;
            }
        }
        let content = content.clone();
        self.push(if thought {
            TurnItem::Thought(content)
        } else {
            TurnItem::Message(content)
        });
    }

    fn tool_call_mut(&mut self, id: &str) -> Option<&mut ToolCall> {
        self.items.iter_mut().rev().find_map(|item| match item {
            TurnItem::ToolCall(call) if call.tool_call_id == id => Some(call),
            _ => None,
        })
    }
}

/// ACP's update rule: fields present replace, absent ones stay.
fn apply_tool_update(call: &mut ToolCall, update: &ToolCallUpdate) {
    if let Some(kind) = &update.kind {
        call.kind = Some(kind.clone());
    }
    if let Some(status) = update.status {
        call.status = Some(status);
    }
    if let Some(title) = &update.title {
        call.title = title.clone();
    }
    if let Some(content) = &update.content {
        call.content = content.clone();
    }
    if let Some(locations) = &update.locations {
        call.locations = locations.clone();
    }
    if let Some(raw_input) = &update.raw_input {
        call.raw_input = Some(raw_input.clone());
    }
    if let Some(raw_output) = &update.raw_output {
        call.raw_output = Some(raw_output.clone());
    }
}
