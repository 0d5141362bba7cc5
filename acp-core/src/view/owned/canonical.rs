//! The text chunk as every SDK writes it, read by matching its bytes: most messages of a turn
//! are `{"sessionId":"…","update":{"sessionUpdate":"agent_message_chunk","content":{"type":
//! "text","text":"…"}}}`, compact, in this member order (the official SDKs' and ours). When the
//! params are exactly that (nothing before, between or after the literal parts but the two
//! strings), the owned value is the two strings decoded and nothing else, so the member walk
//! of the views is skipped. Anything else (spaces, another order, another member, an escaped
//! key) is left to the general fast path, which gives the same value.
//!
//! Sound only on params the envelope scanner validated: the strings are known to be well
//! formed, so finding their closing quote is enough.

use alloc::string::String;
use alloc::vec::Vec;

use super::owned;
use crate::schema::lenient::LeafKind;
use crate::schema::{
    ContentBlock, ContentChunk, Diff, SessionNotification, SessionUpdate, TextContent,
    ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolContent,
};
use crate::wire::JsonStr;
use crate::wire::json::{skip_string_unchecked, unescape_string_at};

const HEAD: &[u8] = br#"{"sessionId":""#;
pub(super) const UPDATE: &[u8] = br#","update":{"sessionUpdate":""#;
pub(super) const CONTENT: &[u8] = br#"","content":{"type":"text","text":""#;
const TAIL: &[u8] = b"}}}";

/// The variant of [`SessionUpdate`] a chunk kind makes.
type Wrap = fn(ContentChunk) -> SessionUpdate;

/// The chunk kinds a text chunk comes as, with the variant each makes.
pub(super) const KINDS: [(&[u8], Wrap); 3] = [
    (b"agent_message_chunk", SessionUpdate::AgentMessageChunk),
    (b"agent_thought_chunk", SessionUpdate::AgentThoughtChunk),
    (b"user_message_chunk", SessionUpdate::UserMessageChunk),
];

/// Decodes `params` into `out` when they are a text chunk in the canonical form (built in
/// place: moving the notification out costs as much as matching it); `None`, with `out`
/// untouched, for any other text.
pub(super) fn text_chunk(params: &str, out: &mut SessionNotification) -> Option<()> {
    let bytes = params.as_bytes();
    let at = HEAD.len();
    if !bytes.starts_with(HEAD) {
        return None;
    }
    let (session_id, at) = string_at(params, at)?;
    let at = literal(bytes, at, UPDATE)?;
    let (kind, wrap) = KINDS
        .iter()
        .find(|(kind, _)| bytes.get(at..at + kind.len()) == Some(*kind))?;
    let at = literal(bytes, at + kind.len(), CONTENT)?;
    let (text, at) = long_string_at(params, at)?;
    if bytes.get(at..)? != TAIL || session_id.raw().is_empty() {
        return None;
    }
    out.session_id = owned(session_id);
    out.update = wrap(ContentChunk {
        content: ContentBlock::Text(TextContent {
            text,
            annotations: None,
            meta: None,
        }),
        message_id: None,
        meta: None,
    });
    out.meta = None;
    Some(())
}

const TOOL_UPDATE: &[u8] = br#","update":{"sessionUpdate":"tool_call_update","toolCallId":""#;
const STATUS: &[u8] = br#","status":""#;
const CONTENT_LIST: &[u8] = br#","content":["#;
const TEXT_ITEM: &[u8] = br#"{"type":"content","content":{"type":"text","text":""#;
const TEXT_ITEM_END: &[u8] = b"}}";
const DIFF_ITEM: &[u8] = br#"{"type":"diff","path":""#;
const OLD_TEXT: &[u8] = br#","oldText":""#;
const NEW_TEXT: &[u8] = br#","newText":""#;

/// Decodes `params` into `out` when they are a `tool_call_update` in the form SDKs write it:
/// `toolCallId`, then optionally `status`, then optionally `content`, a list of text outputs
/// (`{"type":"content","content":{"type":"text","text":…}}`) and diffs (`path`, `oldText`,
/// `newText`), compact, in that order, nothing else. The outputs and diffs are most of a
/// turn's bytes; here each is decoded in the one pass that finds its end. `None`, with `out`
/// untouched, for any other text.
pub(super) fn tool_call_update(params: &str, out: &mut SessionNotification) -> Option<()> {
    let bytes = params.as_bytes();
    if !bytes.starts_with(HEAD) {
        return None;
    }
    let (session_id, at) = string_at(params, HEAD.len())?;
    let at = literal(bytes, at, TOOL_UPDATE)?;
    let (tool_call_id, mut at) = string_at(params, at)?;
    if session_id.raw().is_empty() || tool_call_id.raw().is_empty() {
        return None;
    }
    let mut status = None;
    if let Some(after) = literal(bytes, at, STATUS) {
        let (name, after) = string_at(params, after)?;
        status = Some(<ToolCallStatus as LeafKind>::from_str(name.as_plain()?)?);
        at = after;
    }
    let mut content = None;
    if let Some(mut after) = literal(bytes, at, CONTENT_LIST) {
        let mut items = Vec::new();
        loop {
            let (item, end) = content_item(params, after)?;
            items.push(item);
            match bytes.get(end) {
                Some(b',') => after = end + 1,
                Some(b']') => {
                    at = end + 1;
                    break;
                }
                _ => return None,
            }
        }
        content = Some(items);
    }
    if bytes.get(at..)? != b"}}" {
        return None;
    }
    out.session_id = owned(session_id);
    out.update = SessionUpdate::ToolCallUpdate(ToolCallUpdate {
        tool_call_id: owned(tool_call_id),
        kind: None,
        status,
        title: None,
        name: None,
        content,
        locations: None,
        raw_input: None,
        raw_output: None,
        meta: None,
    });
    out.meta = None;
    Some(())
}

/// A text output or a diff at `at`, and the position past it.
fn content_item(params: &str, at: usize) -> Option<(ToolCallContent, usize)> {
    let bytes = params.as_bytes();
    if let Some(at) = literal(bytes, at, TEXT_ITEM) {
        let (text, at) = long_string_at(params, at)?;
        let at = literal(bytes, at, TEXT_ITEM_END)?;
        let item = ToolCallContent::Content(ToolContent {
            content: ContentBlock::Text(TextContent {
                text,
                annotations: None,
                meta: None,
            }),
            meta: None,
        });
        return Some((item, at));
    }
    let at = literal(bytes, at, DIFF_ITEM)?;
    let (path, at) = string_at(params, at)?;
    let at = literal(bytes, at, OLD_TEXT)?;
    let (old_text, at) = long_string_at(params, at)?;
    let at = literal(bytes, at, NEW_TEXT)?;
    let (new_text, at) = long_string_at(params, at)?;
    if bytes.get(at) != Some(&b'}') {
        return None;
    }
    let item = ToolCallContent::Diff(Diff {
        path: owned(path),
        old_text: Some(old_text),
        new_text,
        meta: None,
    });
    Some((item, at + 1))
}

/// The decoded string whose contents start at `at`, and the position past its closing quote,
/// in one pass ([`unescape_string_at`]). Its length is not known before, so it gets room for
/// the rest of the text, and gives back what it did not use when that is much.
#[inline]
fn long_string_at(text: &str, at: usize) -> Option<(String, usize)> {
    // A block more than the text: the decoder stores whole blocks (see `unescape`).
    let mut out = String::with_capacity(text.len().saturating_sub(at) + 16);
    let end = unescape_string_at(text, at, &mut out)?;
    if out.capacity() - out.len() > 256 {
        out.shrink_to_fit();
    }
    Some((out, end))
}

/// The position past `expected` when it is at `at`.
#[inline]
fn literal(bytes: &[u8], at: usize, expected: &[u8]) -> Option<usize> {
    (bytes.get(at..at + expected.len())? == expected).then_some(at + expected.len())
}

/// The string whose contents start at `at`, and the position past its closing quote.
#[inline]
fn string_at(text: &str, at: usize) -> Option<(JsonStr<'_>, usize)> {
    let (end, escaped) = skip_string_unchecked(text.as_bytes(), at);
    // The closing quote is a byte of its own, so both ends are on character boundaries.
    let raw = text.get(at..end.checked_sub(1)?)?;
    (end > at && text.as_bytes().get(end - 1) == Some(&b'"'))
        .then(|| (JsonStr::new_unchecked(raw, escaped), end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SessionUpdate;

    fn empty() -> SessionNotification {
        SessionNotification {
            session_id: Default::default(),
            update: SessionUpdate::AgentMessageChunk(ContentChunk {
                content: ContentBlock::Text(TextContent {
                    text: Default::default(),
                    annotations: None,
                    meta: None,
                }),
                message_id: None,
                meta: None,
            }),
            meta: None,
        }
    }

    /// The canonical form is read here (the agreement test in `tests/view_owned.rs` cannot
    /// tell this path from the general one); one change away from it is left alone.
    #[test]
    fn the_canonical_form_is_taken_and_a_near_miss_is_not() {
        let mut out = empty();
        let canonical = r#"{"sessionId":"s\"1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"a\\b"}}}"#;
        assert_eq!(text_chunk(canonical, &mut out), Some(()));
        assert_eq!(out.session_id, "s\"1");
        match &out.update {
            SessionUpdate::AgentThoughtChunk(chunk) => match &chunk.content {
                ContentBlock::Text(text) => assert_eq!(text.text, "a\\b"),
                other => panic!("not text: {other:?}"),
            },
            other => panic!("not a thought chunk: {other:?}"),
        }
        let spaced = r#"{"sessionId": "s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}"#;
        assert_eq!(text_chunk(spaced, &mut empty()), None);
        let extra = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}},"_meta":{}}"#;
        assert_eq!(text_chunk(extra, &mut empty()), None);
    }

    /// The canonical tool call update is read here, diffs and outputs included; one change
    /// away from it is left alone.
    #[test]
    fn the_canonical_tool_call_update_is_taken_and_a_near_miss_is_not() {
        let canonical = r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c\"1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"out\n\"}}]}}"}},{"type":"diff","path":"/a","oldText":"o\\","newText":"\u00e9"}]}}"#;
        let mut out = empty();
        assert_eq!(tool_call_update(canonical, &mut out), Some(()));
        let SessionUpdate::ToolCallUpdate(update) = &out.update else {
            panic!("not a tool call update: {:?}", out.update);
        };
        assert_eq!(update.tool_call_id, "c\"1");
        assert_eq!(update.status, Some(ToolCallStatus::Completed));
        let content = update.content.as_deref().unwrap_or_default();
        match content {
            [
                ToolCallContent::Content(output),
                ToolCallContent::Diff(diff),
            ] => {
                assert_eq!(
                    output.content,
                    ContentBlock::Text(TextContent::new("out\n\"}}]}}"))
                );
                assert_eq!(diff.path, "/a");
                assert_eq!(diff.old_text.as_deref(), Some("o\\"));
                assert_eq!(diff.new_text, "é");
            }
            other => panic!("content: {other:?}"),
        }
        let bare =
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c"}}"#;
        assert_eq!(tool_call_update(bare, &mut empty()), Some(()));
        for near in [
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"done"}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"t"}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"diff","path":"/a","newText":"n"}]}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c"},"_meta":{}}"#,
        ] {
            assert_eq!(tool_call_update(near, &mut empty()), None, "{near}");
        }
    }
}
