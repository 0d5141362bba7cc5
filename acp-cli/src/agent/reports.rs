//! What an agent backend tells the client about a session outside the conversation itself
//! (R-SESSION-8, R-TURN-5): the title taken from the first prompt, and the `usage_update`.
//! Both backends title sessions the same way; the demo's usage is the text the session has
//! exchanged, the llm backend's the model's tokens (R-LLM-USAGE-2); the commands each offers
//! are its own (`demo::script::available_commands`).
//!
//! Editors show the title in their session list and the usage as a context meter; these are
//! honest, deterministic figures so a client can be tested against them.

use acp_core::schema::{ContentBlock, SessionInfoUpdate, SessionUpdate, UsageUpdate};

use crate::store::{SessionHistory, TurnItem};

/// The context window the demo reports in `usage_update.size`.
pub(crate) const CONTEXT_SIZE: u64 = 1_000_000;

/// The longest title taken from a first prompt, in characters.
pub(crate) const TITLE_MAX_CHARS: usize = 80;

/// The title a session gets from its first prompt: the first line of the prompt's text
/// that is not blank, trimmed, cut to [`TITLE_MAX_CHARS`] characters. `None` when the
/// prompt has no text.
pub(crate) fn title_from_prompt(prompt: &[ContentBlock]) -> Option<String> {
    let line = prompt
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .flat_map(str::lines)
        .map(str::trim)
        .find(|line| !line.is_empty())?;
    let cut = line
        .char_indices()
        .nth(TITLE_MAX_CHARS)
        .map_or(line.len(), |(at, _)| at);
    Some(line[..cut].to_owned())
}

/// `session_info_update` setting the title.
pub(crate) fn title_update(title: String) -> SessionUpdate {
    let mut update = SessionInfoUpdate::default();
    update.title = Some(Some(title));
    SessionUpdate::SessionInfoUpdate(update)
}

/// `usage_update` with these figures and no cost.
pub(crate) fn usage_update(used: u64, size: u64) -> SessionUpdate {
    let mut update = UsageUpdate::default();
    update.used = used;
    update.size = size;
    SessionUpdate::UsageUpdate(update)
}

/// Bytes of text a session has exchanged: its prompts' text blocks and the text of the
/// agent's messages and thoughts, over every turn of `history` (loaded ones and the running
/// one included). Text relayed from subagents (`session_message`) is another session's and
/// is not counted, so the figure never shrinks when a loaded history lacks it.
pub(crate) fn exchanged_bytes(history: &SessionHistory) -> u64 {
    history
        .turns()
        .iter()
        .map(|turn| {
            let prompt: usize = turn.prompt.iter().map(text_len).sum();
            let output: usize = turn
                .items
                .iter()
                .map(|item| match item {
                    TurnItem::Message(block) | TurnItem::Thought(block) => text_len(block),
                    TurnItem::MessageText(text) | TurnItem::ThoughtText(text) => {
                        text.to_plain().len()
                    }
                    _ => 0,
                })
                .sum();
            (prompt + output) as u64
        })
        .sum()
}

/// The bytes of text an update carries, as [`exchanged_bytes`] counts them.
pub(crate) fn update_text_len(update: &SessionUpdate) -> u64 {
    match update {
        SessionUpdate::AgentMessageChunk(chunk) | SessionUpdate::AgentThoughtChunk(chunk) => {
            text_len(&chunk.content) as u64
        }
        _ => 0,
    }
}

fn text_len(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text(text) => text.text.len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_is_the_first_non_blank_line_cut_to_80_characters() {
        let title = |text: &str| title_from_prompt(&[ContentBlock::text(text)]);
        assert_eq!(
            title("Fix the build\nand more"),
            Some("Fix the build".into())
        );
        assert_eq!(
            title("\n  \r\n  Second line  \nx"),
            Some("Second line".into())
        );
        assert_eq!(title(" \n "), None);
        assert_eq!(title_from_prompt(&[]), None);
        let long = "é".repeat(100);
        let cut = title(&long).expect("a title");
        assert_eq!(cut.chars().count(), 80);
        assert_eq!(cut, "é".repeat(80), "cut on a character boundary");
        let exact = "x".repeat(80);
        assert_eq!(title(&exact), Some(exact.clone()));
    }

    #[test]
    fn exchanged_bytes_count_prompt_and_answer_text_of_every_turn() {
        let mut history = SessionHistory::new("s", "demo");
        history.record_user_prompt(&[ContentBlock::text("héllo")]);
        history.record_update(&SessionUpdate::AgentMessageChunk(
            acp_core::schema::ContentChunk::new(ContentBlock::text("abc")),
        ));
        history.end_turn(acp_core::schema::StopReason::EndTurn);
        history.record_user_prompt(&[ContentBlock::text("xy")]);
        assert_eq!(exchanged_bytes(&history), 6 + 3 + 2);
    }
}
