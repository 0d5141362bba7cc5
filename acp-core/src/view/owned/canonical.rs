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

use super::owned;
use crate::schema::{ContentBlock, ContentChunk, SessionNotification, SessionUpdate, TextContent};
use crate::wire::JsonStr;
use crate::wire::json::skip_string_unchecked;

const HEAD: &[u8] = br#"{"sessionId":""#;
const UPDATE: &[u8] = br#","update":{"sessionUpdate":""#;
const CONTENT: &[u8] = br#"","content":{"type":"text","text":""#;
const TAIL: &[u8] = b"}}}";

/// The variant of [`SessionUpdate`] a chunk kind makes.
type Wrap = fn(ContentChunk) -> SessionUpdate;

/// The chunk kinds a text chunk comes as, with the variant each makes.
const KINDS: [(&[u8], Wrap); 3] = [
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
    let (text, at) = string_at(params, at)?;
    if bytes.get(at..)? != TAIL || session_id.raw().is_empty() {
        return None;
    }
    out.session_id = owned(session_id);
    out.update = wrap(ContentChunk {
        content: ContentBlock::Text(TextContent {
            text: owned(text),
            annotations: None,
            meta: None,
        }),
        message_id: None,
        meta: None,
    });
    out.meta = None;
    Some(())
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
}
