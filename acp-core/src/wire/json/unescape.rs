//! Unescaping string contents in one pass, sixteen bytes a step.
//!
//! Code and diffs carry an escape every twenty bytes or so (`\n`, `\"`, `\\`), so what each
//! run between escapes costs matters as much as the bytes per step. The walk loads a block,
//! finds its first backslash with the block compare of `stops.rs`, and hands the sink the
//! whole block with the length of the run before it: the growing string of
//! [`JsonStr::to_cow`](crate::wire::JsonStr::to_cow) stores all sixteen bytes at once and
//! is cut back to the run (one store of a known size, no `memcpy` call of a variable length).
//! The eight one-letter escapes decode through a table to their byte; only `\u` escapes and
//! malformed ones take the slow path to a `char`.
//!
//! The pieces are `&str`s cut at character boundaries, so the string is built without
//! `unsafe` and without validating its UTF-8 again (`String::from_utf8` over the result cost
//! a third of the time). The last bytes, fewer than a block, go as one run per escape.

use super::decode_escape;
use super::stops::{BLOCK, quotes_and_backslashes};

/// Where decoded bytes go: a growing string, a caller's slice, or only a count.
pub(super) trait Sink {
    /// Takes the first `len` bytes of `block`, sixteen bytes of the text; `len` falls on a
    /// character boundary.
    fn block(&mut self, block: &str, len: usize);
    /// Takes a run of text of any length.
    fn text(&mut self, text: &str);
    /// Takes one byte, the character of a one-letter escape (ASCII).
    fn byte(&mut self, byte: u8);
    /// Takes the character of a `\u` escape or of a malformed one.
    fn char(&mut self, ch: char);
}

/// The byte each one-letter escape stands for, by the letter; zero for the others (no
/// one-letter escape stands for NUL).
pub(super) const SIMPLE_ESCAPES: [u8; 256] = {
    let mut table = [0; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'/' as usize] = b'/';
    table[b'b' as usize] = 0x08;
    table[b'f' as usize] = 0x0c;
    table[b'n' as usize] = b'\n';
    table[b'r' as usize] = b'\r';
    table[b't' as usize] = b'\t';
    table
};

/// Decodes the string contents `raw` into `sink`, in order.
///
/// Every cut between pieces falls on an ASCII byte (a backslash, or the end of an escape,
/// which is ASCII throughout; a backslash before a non-ASCII byte uses only itself) or, when a
/// character crosses the end of a block, before that character. Malformed escapes (only in
/// text that was never validated) decode as [`decode_escape`] says.
#[inline(always)]
pub(super) fn unescape<S: Sink>(raw: &str, sink: &mut S) {
    let bytes = raw.as_bytes();
    let mut pos = 0;
    // Bounded by the text: every pass moves `pos` forward (an escape uses at least a byte, and
    // a block cut before a character still holds the characters before it).
    while let Some(block) = bytes
        .get(pos..pos + BLOCK)
        .and_then(|block| <&[u8; BLOCK]>::try_from(block).ok())
    {
        let (_, backslashes) = quotes_and_backslashes(block);
        let run = if backslashes.any() {
            backslashes.first()
        } else {
            BLOCK
        };
        if let Some(block) = raw.get(pos..pos + BLOCK) {
            sink.block(block, run);
        } else {
            // A character crosses the end of the block: end the run before it (`pos` is a
            // character's start, so this takes at least the first character).
            let run = (1..=run)
                .rev()
                .find(|&len| raw.is_char_boundary(pos + len))
                .unwrap_or(run);
            sink.text(raw.get(pos..pos + run).unwrap_or_default());
            if bytes.get(pos + run) != Some(&b'\\') {
                pos += run;
                continue;
            }
        }
        if run == BLOCK {
            pos += BLOCK;
        } else {
            pos = escape(raw, pos + run, sink);
        }
    }
    // The last bytes, fewer than a block; bounded as above.
    while pos < raw.len() {
        let run = next_backslash(bytes.get(pos..).unwrap_or_default());
        sink.text(raw.get(pos..pos + run).unwrap_or_default());
        pos += run;
        if pos < raw.len() {
            pos = escape(raw, pos, sink);
        }
    }
}

/// Decodes the string whose contents start at `start` in `text`, which was validated, up to
/// its closing quote, appending to `out`; returns the position past that quote. One pass:
/// the quote is found by the same block compare that finds the escapes, so a string read
/// whole is not first skipped to learn where it ends. `None` only when `text` ends first
/// (never on validated text).
#[cfg(feature = "alloc")]
pub(crate) fn unescape_string_at(
    text: &str,
    start: usize,
    out: &mut alloc::string::String,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut sink = Grow(out);
    let mut pos = start;
    // Bounded by the text: every pass moves `pos` forward or returns (as in `unescape`).
    while let Some(block) = bytes
        .get(pos..pos + BLOCK)
        .and_then(|block| <&[u8; BLOCK]>::try_from(block).ok())
    {
        let (quotes, backslashes) = quotes_and_backslashes(block);
        let stops = quotes.or(backslashes);
        let run = if stops.any() { stops.first() } else { BLOCK };
        match text.get(pos..pos + BLOCK) {
            Some(block) => sink.block(block, run),
            None => {
                // A character crosses the end of the block: end the run before it.
                let cut = (1..=run)
                    .rev()
                    .find(|&len| text.is_char_boundary(pos + len))
                    .unwrap_or(run);
                sink.text(text.get(pos..pos + cut).unwrap_or_default());
                if cut < run {
                    pos += cut;
                    continue;
                }
            }
        }
        pos += run;
        match bytes.get(pos) {
            Some(b'"') if run < BLOCK => return Some(pos + 1),
            Some(b'\\') if run < BLOCK => pos = escape(text, pos, &mut sink),
            _ => {}
        }
    }
    // The last bytes, fewer than a block.
    loop {
        let rest = bytes.get(pos..)?;
        let run = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
        sink.text(text.get(pos..pos + run)?);
        pos += run;
        if bytes.get(pos) == Some(&b'"') {
            return Some(pos + 1);
        }
        pos = escape(text, pos, &mut sink);
    }
}

/// Decodes the escape at `at` (a backslash) into `sink`; returns the position after it.
#[inline(always)]
fn escape<S: Sink>(raw: &str, at: usize, sink: &mut S) -> usize {
    let raw = raw.as_bytes();
    let letter = raw.get(at + 1).copied().unwrap_or(0);
    let simple = SIMPLE_ESCAPES[letter as usize];
    if simple != 0 {
        sink.byte(simple);
        return at + 2;
    }
    let (ch, used) = decode_escape(raw.get(at..).unwrap_or_default());
    sink.char(ch);
    at + used
}

/// The last block of `raw` as a little-endian word, padded with zero bytes when `raw` is
/// shorter, and the position of its first byte.
#[inline(always)]
fn tail_word(raw: &[u8]) -> (usize, u128) {
    if let Some(last) = raw.last_chunk::<BLOCK>() {
        return (raw.len() - BLOCK, u128::from_le_bytes(*last));
    }
    let mut padded = [0; BLOCK];
    if let Some(head) = padded.get_mut(..raw.len()) {
        head.copy_from_slice(raw);
    }
    (0, u128::from_le_bytes(padded))
}

/// The offset of the first backslash in `raw`, or its length.
pub(super) fn next_backslash(raw: &[u8]) -> usize {
    let mut pos = 0;
    // Bounded by the text: every pass moves `pos` forward a block.
    while let Some(block) = raw
        .get(pos..pos + BLOCK)
        .and_then(|block| <&[u8; BLOCK]>::try_from(block).ok())
    {
        let (_, backslashes) = quotes_and_backslashes(block);
        if backslashes.any() {
            return pos + backslashes.first();
        }
        pos += BLOCK;
    }
    if pos >= raw.len() {
        return raw.len();
    }
    let (base, tail) = tail_word(raw);
    let shift = pos.saturating_sub(base) as u32 * 8;
    let block = tail.checked_shr(shift).unwrap_or(0).to_le_bytes();
    let (_, backslashes) = quotes_and_backslashes(&block);
    if backslashes.any() {
        pos + backslashes.first()
    } else {
        raw.len()
    }
}

/// Counts the decoded bytes.
pub(super) struct Count(pub(super) usize);

impl Sink for Count {
    #[inline(always)]
    fn block(&mut self, _block: &str, len: usize) {
        self.0 += len;
    }
    #[inline(always)]
    fn text(&mut self, text: &str) {
        self.0 += text.len();
    }
    #[inline(always)]
    fn byte(&mut self, _byte: u8) {
        self.0 += 1;
    }
    #[inline(always)]
    fn char(&mut self, ch: char) {
        self.0 += ch.len_utf8();
    }
}

/// Writes into a caller's slice, and goes on counting once it is full (so a buffer too small
/// learns the length it needs from the same pass). Writes only the decoded bytes.
pub(super) struct Slice<'b> {
    pub(super) buf: &'b mut [u8],
    /// The decoded bytes so far; past `buf.len()` once it overflowed.
    pub(super) len: usize,
}

impl Slice<'_> {
    #[inline(always)]
    fn put(&mut self, piece: &[u8]) {
        let end = self.len + piece.len();
        if let Some(room) = self.buf.get_mut(self.len..end) {
            room.copy_from_slice(piece);
        }
        self.len = end;
    }
}

impl Sink for Slice<'_> {
    #[inline(always)]
    fn block(&mut self, block: &str, len: usize) {
        self.put(block.as_bytes().get(..len).unwrap_or_default());
    }
    #[inline(always)]
    fn text(&mut self, text: &str) {
        self.put(text.as_bytes());
    }
    #[inline(always)]
    fn byte(&mut self, byte: u8) {
        self.put(&[byte]);
    }
    #[inline(always)]
    fn char(&mut self, ch: char) {
        self.put(ch.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

/// Appends to a growing string, which should have room for the text plus a block: each run
/// is stored as its whole block (one store of a known size, no `memcpy` call), then the string
/// is cut back to the run.
#[cfg(feature = "alloc")]
pub(super) struct Grow<'s>(pub(super) &'s mut alloc::string::String);

#[cfg(feature = "alloc")]
impl Sink for Grow<'_> {
    #[inline(always)]
    fn block(&mut self, block: &str, len: usize) {
        let start = self.0.len();
        self.0.push_str(block);
        // On a character boundary, so `truncate` cannot panic.
        self.0.truncate(start + len);
    }
    #[inline(always)]
    fn text(&mut self, text: &str) {
        self.0.push_str(text);
    }
    #[inline(always)]
    fn byte(&mut self, byte: u8) {
        self.0.push(char::from(byte));
    }
    #[inline(always)]
    fn char(&mut self, ch: char) {
        self.0.push(ch);
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use crate::wire::JsonStr;
    use crate::wire::json::{BufferTooSmall, Fragment};
    use quickcheck::QuickCheck;
    use std::{string::String, vec};

    /// The documented decoding, one character at a time, written apart from the code under
    /// test: the eight one-letter escapes; `\u` with four hex digits, a high surrogate joined
    /// to a `\u` low one that follows, anything else not a scalar value as U+FFFD; and for
    /// malformed escapes U+FFFD using the backslash and the next byte when it is ASCII, else
    /// the backslash alone.
    fn reference(raw: &str) -> String {
        let hex = |at: usize| {
            let digits = raw.get(at..at + 4)?;
            let all_hex = digits.bytes().all(|b| b.is_ascii_hexdigit());
            all_hex.then(|| u32::from_str_radix(digits, 16).ok())?
        };
        let mut out = String::new();
        let mut at = 0;
        while let Some(ch) = raw.get(at..).and_then(|rest| rest.chars().next()) {
            if ch != '\\' {
                out.push(ch);
                at += ch.len_utf8();
                continue;
            }
            let (decoded, used) = match raw.as_bytes().get(at + 1) {
                Some(b'"') => ('"', 2),
                Some(b'\\') => ('\\', 2),
                Some(b'/') => ('/', 2),
                Some(b'b') => ('\u{8}', 2),
                Some(b'f') => ('\u{c}', 2),
                Some(b'n') => ('\n', 2),
                Some(b'r') => ('\r', 2),
                Some(b't') => ('\t', 2),
                Some(b'u') => match hex(at + 2) {
                    None => (char::REPLACEMENT_CHARACTER, 2),
                    Some(high @ 0xD800..=0xDBFF)
                        if raw.get(at + 6..).is_some_and(|r| r.starts_with("\\u"))
                            && matches!(hex(at + 8), Some(0xDC00..=0xDFFF)) =>
                    {
                        let low = hex(at + 8).unwrap_or_default();
                        let scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        (char::from_u32(scalar).expect("a pair is a scalar"), 12)
                    }
                    Some(unit) => (char::from_u32(unit).unwrap_or('\u{fffd}'), 6),
                },
                Some(b) if b.is_ascii() => (char::REPLACEMENT_CHARACTER, 2),
                _ => (char::REPLACEMENT_CHARACTER, 1),
            };
            out.push(decoded);
            at += used;
        }
        out
    }

    /// Every way of decoding `raw` gives the reference's text, with or without the flag that
    /// says it holds escapes (when it holds none).
    fn check(raw: &str) {
        let want = reference(raw);
        let escaped = [true, raw.contains('\\')];
        for s in escaped.map(|escaped| JsonStr::new_unchecked(raw, escaped)) {
            if !s.has_escapes() && raw.contains('\\') {
                continue;
            }
            assert_eq!(s.to_cow(), want, "to_cow {raw:?}");
            assert_eq!(s.decoded_len(), want.len(), "decoded_len {raw:?}");
            assert_eq!(s.chars().collect::<String>(), want, "chars {raw:?}");
            let pieces: String = s
                .fragments()
                .map(|fragment| match fragment {
                    Fragment::Text(text) => String::from(text),
                    Fragment::Char(ch) => String::from(ch),
                })
                .collect();
            assert_eq!(pieces, want, "fragments {raw:?}");
            assert!(s.eq_str(&want), "eq_str {raw:?}");
            let mut exact = vec![0u8; want.len()];
            assert_eq!(s.unescape_into(&mut exact), Ok(want.as_str()), "{raw:?}");
        }
    }

    /// Pieces dense in backslashes, escapes of every kind, malformed ones, and characters of
    /// one to four bytes, so cuts fall on every offset of a block.
    const PIECES: [&str; 32] = [
        "a",
        "é",
        "€",
        "😀",
        "\\",
        "\\n",
        "\\\"",
        "\\\\",
        "\\/",
        "\\b",
        "\\f",
        "\\r",
        "\\t",
        "\\u",
        "\\u00e9",
        "\\u0000",
        "\\u20AC",
        "\\ud83d",
        "\\ude00",
        "\\ud83d\\ude00",
        "\\uDBFF\\uDFFF",
        "\\uzzzz",
        "\\u12",
        "\\x",
        "\\é",
        "0",
        "D",
        "u",
        "\"",
        "\n",
        "xyz0123456789",
        "0123456789abcdef",
    ];

    fn random_texts(mut each: impl FnMut(&str)) {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for pieces in 0..48 {
            for _ in 0..200 {
                let text: String = (0..pieces)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        PIECES[(state % PIECES.len() as u64) as usize]
                    })
                    .collect();
                each(&text);
            }
        }
    }

    #[test]
    fn every_decoding_agrees_with_the_reference_on_texts_dense_in_escapes() {
        random_texts(check);
        for raw in [
            "",
            "\\",
            "a\\",
            "0123456789abcde\\",
            "0123456789abcdef\\",
            "\\u",
            "\\ud800",
            "\\ud800\\",
            "\\ud800\\u",
            "\\ud800\\udbff",
            "\\udc00\\ud800",
            "\\ud800\\ud800\\udc00",
            "\\u+123",
            "\\u-123",
            "\\uD83D\\uDE0",
            "\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\",
        ] {
            check(raw);
        }
    }

    /// The one-pass reader of a whole string (contents, closing quote, what follows) decodes
    /// what the reference does and ends past the closing quote, for every valid string of the
    /// dense texts, at every offset of a block, with text after it that looks like more
    /// string.
    #[cfg(feature = "alloc")]
    #[test]
    fn the_string_reader_decodes_to_the_closing_quote() {
        random_texts(|raw| {
            for prefix in 0..17 {
                for suffix in [
                    "",
                    "}",
                    r#","x":"a\"b"}"#,
                    "\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"",
                ] {
                    let text = std::format!("{}\"{raw}\"{suffix}", " ".repeat(prefix));
                    if crate::wire::json::parse_value(&text[prefix..prefix + raw.len() + 2])
                        .is_err()
                    {
                        continue;
                    }
                    let mut out = String::from("kept");
                    let end = super::unescape_string_at(&text, prefix + 1, &mut out);
                    assert_eq!(end, Some(prefix + raw.len() + 2), "{text:?}");
                    assert_eq!(out, std::format!("kept{}", reference(raw)), "{text:?}");
                }
            }
        });
    }

    #[test]
    fn every_decoding_agrees_with_the_reference_on_any_text() {
        fn property(text: String, prefix: u8) -> bool {
            check(&text);
            // Shifted to every offset of a block.
            check(&(" ".repeat(usize::from(prefix % 17)) + &text));
            true
        }
        QuickCheck::new()
            .tests(3_000)
            .quickcheck(property as fn(String, u8) -> bool);
    }

    /// A buffer one byte short learns the length it needs; a larger one keeps its bytes past
    /// the decoded text.
    #[test]
    fn unescape_into_reports_the_length_needed_and_writes_only_the_decoded_bytes() {
        random_texts(|raw| {
            let want = reference(raw);
            let s = JsonStr::new_unchecked(raw, true);
            if let Some(short) = want.len().checked_sub(1) {
                let needed = want.len();
                let mut buf = vec![0u8; short];
                assert_eq!(s.unescape_into(&mut buf), Err(BufferTooSmall { needed }));
            }
            let mut roomy = vec![0xffu8; want.len() + 20];
            assert_eq!(s.unescape_into(&mut roomy), Ok(want.as_str()), "{raw:?}");
            assert!(roomy[want.len()..].iter().all(|&b| b == 0xff), "{raw:?}");
        });
    }

    #[test]
    fn the_backslash_search_finds_the_first_at_every_offset_and_length() {
        let mut text = std::vec::Vec::new();
        for len in 0..50 {
            for at in 0..=len {
                text.clear();
                text.resize(len, b'a');
                if let Some(b) = text.get_mut(at) {
                    *b = b'\\';
                }
                // And a second one after it, which must not be found first.
                if let Some(b) = text.get_mut(at + 3) {
                    *b = b'\\';
                }
                assert_eq!(super::next_backslash(&text), at, "{len} {at}");
            }
        }
    }
}
