//! A whole line that is a text chunk notification in the form SDKs write it, checked and
//! decoded in one pass: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":…,
//! "update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":…}}}}`,
//! compact, in this order, nothing else. Most lines of a turn are these; here the envelope
//! scan, the params' member walk and the text's decoding are one walk over the two strings,
//! which are validated as the envelope scan validates them (UTF-8, escapes, no control
//! characters). Any other line, or a string this reader leaves alone (a `\u` escape), is
//! `None`: then the line goes through `envelope::scan_bytes` and `decode_raw`, which give the
//! same notification.

use super::canonical::{CONTENT, KINDS, UPDATE};
use crate::schema::{
    AgentNotification, ContentBlock, ContentChunk, SessionNotification, TextContent,
};
use crate::wire::json::checked_string_at;

/// The line up to the session id's contents.
const HEAD: &[u8] = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":""#;
/// What follows the text's closing quote: the ends of `content`, `update`, `params`, the line.
const TAIL: &[u8] = b"}}}}";

impl AgentNotification {
    /// The `session/update` text chunk on `line` (one line without its newline), when the line
    /// is exactly the form SDKs write (see the module notes), validated and decoded in one
    /// pass; `None` for any other line. When `Some`, [`envelope::scan_bytes`] accepts the
    /// line as a notification of `session/update` whose params [`Self::decode_raw`] decodes
    /// to the same value; the params are `line[Self::TEXT_CHUNK_LINE_PARAMS_AT..line.len() - 1]`.
    ///
    /// [`envelope::scan_bytes`]: crate::wire::envelope::scan_bytes
    pub fn decode_text_chunk_line(line: &[u8]) -> Option<Self> {
        let at = HEAD.len();
        if !line.starts_with(HEAD) {
            return None;
        }
        let (session_id, at) = checked_string_at(line, at)?;
        let at = literal(line, at, UPDATE)?;
        let (kind, wrap) = KINDS
            .iter()
            .find(|(kind, _)| line.get(at..at + kind.len()) == Some(*kind))?;
        let at = literal(line, at + kind.len(), CONTENT)?;
        let (text, at) = checked_string_at(line, at)?;
        if line.get(at..)? != TAIL || session_id.is_empty() {
            return None;
        }
        Some(Self::SessionUpdate(SessionNotification {
            session_id,
            update: wrap(ContentChunk {
                content: ContentBlock::Text(TextContent {
                    text,
                    annotations: None,
                    meta: None,
                }),
                message_id: None,
                meta: None,
            }),
            meta: None,
        }))
    }

    /// Where the params start on a line [`Self::decode_text_chunk_line`] read.
    pub const TEXT_CHUNK_LINE_PARAMS_AT: usize = HEAD.len() - br#"{"sessionId":""#.len();
}

/// The position past `expected` when it is at `at`.
#[inline]
fn literal(bytes: &[u8], at: usize, expected: &[u8]) -> Option<usize> {
    (bytes.get(at..at + expected.len())? == expected).then_some(at + expected.len())
}
