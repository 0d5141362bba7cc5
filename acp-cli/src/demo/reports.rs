//! What the demo agent tells the client about a session outside the conversation itself
//! (R-SESSION-8, R-TURN-5): the commands it offers, the title taken from the first prompt, and how
//! much text the session has exchanged.
//!
//! Editors show the offered commands when the user types `/`, the title in their session
//! list, and the usage as a context meter; the demo fills each with honest, deterministic
//! figures so a client can be tested against them.

use acp_core::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentBlock,
    SessionInfoUpdate, SessionUpdate, UsageUpdate,
};

use super::script::COMMANDS;
use crate::store::{SessionHistory, TurnItem};

/// The context window the demo reports in `usage_update.size`.
pub const CONTEXT_SIZE: u64 = 1_000_000;

/// The longest title taken from a first prompt, in characters.
pub const TITLE_MAX_CHARS: usize = 80;

/// `available_commands_update` with every demo command: its name, a one-line description
/// and, for a command that takes arguments, those arguments as the input hint.
pub fn available_commands() -> SessionUpdate {
    let mut update = AvailableCommandsUpdate::default();
    update.available_commands = COMMANDS
        .iter()
        .map(|spec| {
            let mut command = AvailableCommand::default();
            command.name = spec.name.to_owned();
            command.description = spec.description.to_owned();
            if !spec.args.is_empty() {
                let mut input = AvailableCommandInput::default();
                input.hint = spec.args.to_owned();
                command.input = Some(input);
            }
            command
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(update)
}

/// The title a session gets from its first prompt: the first line of the prompt's text
/// that is not blank, trimmed, cut to [`TITLE_MAX_CHARS`] characters. `None` when the
/// prompt has no text.
pub fn title_from_prompt(prompt: &[ContentBlock]) -> Option<String> {
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
pub fn title_update(title: String) -> SessionUpdate {
    let mut update = SessionInfoUpdate::default();
    update.title = Some(Some(title));
    SessionUpdate::SessionInfoUpdate(update)
}

/// `usage_update` with these figures and no cost.
pub fn usage_update(used: u64, size: u64) -> SessionUpdate {
    let mut update = UsageUpdate::default();
    update.used = used;
    update.size = size;
    SessionUpdate::UsageUpdate(update)
}

/// Bytes of text a session has exchanged: its prompts' text blocks and the text of the
/// agent's messages and thoughts, over every turn of `history` (loaded ones and the running
/// one included). Text relayed from subagents (`session_message`) is another session's and
/// is not counted, so the figure never shrinks when a loaded history lacks it.
pub fn exchanged_bytes(history: &SessionHistory) -> u64 {
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
                    _ => 0,
                })
                .sum();
            (prompt + output) as u64
        })
        .sum()
}

/// The bytes of text an update carries, as [`exchanged_bytes`] counts them.
pub fn update_text_len(update: &SessionUpdate) -> u64 {
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
    fn every_command_is_offered_with_a_description_and_args_as_the_hint() {
        let SessionUpdate::AvailableCommandsUpdate(update) = available_commands() else {
            panic!("an available_commands_update");
        };
        let names: Vec<&str> = update
            .available_commands
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let expected: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        assert_eq!(names, expected);
        assert!(names.contains(&"notice") && names.contains(&"title"));
        for command in &update.available_commands {
            assert!(!command.description.is_empty(), "{}", command.name);
            assert!(!command.name.starts_with('/'), "names go without the slash");
        }
        let echo = &update.available_commands[0];
        assert_eq!(echo.description, "Send TEXT back as one message chunk");
        assert_eq!(echo.input.as_ref().map(|i| i.hint.as_str()), Some("TEXT"));
        let history = update
            .available_commands
            .iter()
            .find(|c| c.name == "history")
            .expect("history");
        assert_eq!(
            history.input, None,
            "a command without arguments has no hint"
        );
    }

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
