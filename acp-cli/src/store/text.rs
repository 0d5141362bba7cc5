//! Text helpers shared by the file format and the history: prompt text, Agentao's
//! `<system-reminder>` stripping and title shortening.

use acp_core::schema::{ContentBlock, EmbeddedResourceResource, ToolCallContent};

const REMINDER_OPEN: &str = "<system-reminder>";
const REMINDER_CLOSE: &str = "</system-reminder>";

/// The text a prompt carries: text blocks, resource links as their URI, embedded text
/// resources as their text; one line each. Images and audio have no text.
pub(crate) fn prompt_text(blocks: &[ContentBlock]) -> String {
    prompt_pieces(blocks).concat()
}

/// [`prompt_text`] as borrowed pieces, newlines included, for writing without a copy.
pub(crate) fn prompt_pieces(blocks: &[ContentBlock]) -> Vec<&str> {
    joined(blocks.iter().filter_map(block_text))
}

/// The text of one block (see [`prompt_text`]); `None` for images and audio.
pub(crate) fn block_text(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::Text(text) => Some(&text.text),
        ContentBlock::ResourceLink(link) => Some(&link.uri),
        ContentBlock::Resource(resource) => match &resource.resource {
            EmbeddedResourceResource::Text(text) => Some(&text.text),
            _ => None,
        },
        _ => None,
    }
}

/// The text of a tool call's output, as borrowed pieces: its content blocks' text, and a
/// line per diff and per terminal; one line each.
pub(crate) fn tool_output_pieces(content: &[ToolCallContent]) -> Vec<&str> {
    let mut lines: Vec<[&str; 2]> = Vec::new();
    for item in content {
        match item {
            ToolCallContent::Content(block) => {
                if let Some(text) = block_text(&block.content) {
                    lines.push(["", text]);
                }
            }
            ToolCallContent::Diff(diff) => lines.push(["Wrote ", &diff.path]),
            ToolCallContent::Terminal(terminal) => lines.push(["Terminal ", &terminal.terminal_id]),
            _ => {}
        }
    }
    let mut pieces = Vec::with_capacity(lines.len() * 3);
    for (index, line) in lines.iter().enumerate() {
        if index > 0 {
            pieces.push("\n");
        }
        pieces.extend(line.iter().filter(|piece| !piece.is_empty()));
    }
    pieces
}

/// `texts` with a newline between each two.
fn joined<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut pieces = Vec::new();
    for text in texts {
        if !pieces.is_empty() {
            pieces.push("\n");
        }
        pieces.push(text);
    }
    pieces
}

/// Removes every `<system-reminder>…</system-reminder>` block (an unclosed one runs to the
/// end), then surrounding whitespace, as Agentao's replay does.
pub(crate) fn strip_system_reminders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(REMINDER_OPEN) {
        out.push_str(&rest[..start]);
        let after_open = &rest[start + REMINDER_OPEN.len()..];
        rest = match after_open.find(REMINDER_CLOSE) {
            Some(end) => &after_open[end + REMINDER_CLOSE.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out.trim().to_owned()
}

/// At most `max` characters, then `…` if anything was cut.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
