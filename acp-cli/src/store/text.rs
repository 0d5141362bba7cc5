//! Text helpers shared by the file format and the history: prompt text, Agentao's
//! `<system-reminder>` stripping and title shortening.

use acp_core::schema::{ContentBlock, EmbeddedResourceResource, ToolCallContent};

const REMINDER_OPEN: &str = "<system-reminder>";
const REMINDER_CLOSE: &str = "</system-reminder>";

/// The text a prompt carries: text blocks, resource links as their URI, embedded text
/// resources as their text; one line each. Images and audio have no text.
pub(crate) fn prompt_text(blocks: &[ContentBlock]) -> String {
    let parts: Vec<&str> = blocks.iter().filter_map(block_text).collect();
    parts.join("\n")
}

fn block_text(block: &ContentBlock) -> Option<&str> {
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

/// The text of a tool call's output: its content blocks' text, and a line per diff.
pub(crate) fn tool_output_text(content: &[ToolCallContent]) -> String {
    let mut lines = Vec::new();
    for item in content {
        match item {
            ToolCallContent::Content(block) => {
                if let Some(text) = block_text(&block.content) {
                    lines.push(text.to_owned());
                }
            }
            ToolCallContent::Diff(diff) => lines.push(format!("Wrote {}", diff.path)),
            ToolCallContent::Terminal(terminal) => {
                lines.push(format!("Terminal {}", terminal.terminal_id))
            }
            _ => {}
        }
    }
    lines.join("\n")
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
