//! JSON string escaping, in bulk runs.
//!
//! Only `"`, `\` and the control characters U+0000–U+001F are escaped; everything else,
//! non-ASCII included, is copied as is. So no raw newline can appear inside an encoded string,
//! and the output is byte-identical to serde_json's.
//!
//! The scanner looks at eight bytes at a time (SWAR over a `u64`) for the first byte needing an
//! escape, then the whole run before it is copied with one write.

use core::fmt;

use super::sink::Sink;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `word` that needs an escape. Exact for the lowest flagged byte
/// (the borrow of the subtraction can only set flags above a true hit), which is all we use.
#[inline(always)]
fn escape_mask(word: u64) -> u64 {
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGHS
}

/// Which bytes need an escape, for strings too short for a word.
const NEEDS_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// The eight bytes at `at` as a little-endian word (one unaligned load).
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// The index of the first byte of `bytes` that needs an escape, or `bytes.len()`.
#[inline(always)]
pub(crate) fn find_escape(bytes: &[u8]) -> usize {
    let len = bytes.len();
    if len < 8 {
        return bytes
            .iter()
            .position(|&b| NEEDS_ESCAPE[usize::from(b)])
            .unwrap_or(len);
    }
    let mut offset = 0;
    while offset + 8 <= len {
        let mask = escape_mask(word_at(bytes, offset));
        if mask != 0 {
            return offset + (mask.trailing_zeros() / 8) as usize;
        }
        offset += 8;
    }
    if offset < len {
        // The last word overlaps bytes already checked; their flags are masked off (they hold
        // no hit, so they cannot have set false flags above them either).
        let start = len - 8;
        let checked = offset - start;
        let mask = escape_mask(word_at(bytes, start)) & (u64::MAX << (8 * checked));
        if mask != 0 {
            return start + (mask.trailing_zeros() / 8) as usize;
        }
    }
    len
}

/// Writes the escape sequence of one byte that [`find_escape`] flagged.
#[inline]
fn write_escape<S: Sink + ?Sized>(sink: &mut S, byte: u8) -> Result<(), S::Error> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        0x08 => b'b',
        0x0c => b'f',
        _ => {
            let hex = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ];
            return sink.write_bytes(&hex);
        }
    };
    sink.write_bytes(&[b'\\', short])
}

/// Writes the contents of a JSON string literal for `text` (no quotes).
#[inline(always)]
pub(crate) fn write_escaped<S: Sink + ?Sized>(sink: &mut S, text: &str) -> Result<(), S::Error> {
    let bytes = text.as_bytes();
    let run = find_escape(bytes);
    if run == bytes.len() {
        // The common case: nothing to escape, one copy.
        return sink.write_bytes(bytes);
    }
    write_escaped_from(sink, bytes, run)
}

/// Writes `bytes` escaped, knowing that the first escape is at `first`.
#[inline(never)]
fn write_escaped_from<S: Sink + ?Sized>(
    sink: &mut S,
    bytes: &[u8],
    first: usize,
) -> Result<(), S::Error> {
    let mut run = first;
    let mut rest = bytes;
    // Bounded: every turn consumes at least one byte or returns.
    loop {
        let (plain, tail) = rest.split_at(run);
        if !plain.is_empty() {
            sink.write_bytes(plain)?;
        }
        match tail.split_first() {
            None => return Ok(()),
            Some((&byte, after)) => {
                write_escape(sink, byte)?;
                rest = after;
                run = find_escape(rest);
            }
        }
    }
}

/// Appends the contents of a JSON string literal for `text` (no quotes) to `out`: the same
/// bytes the encoder writes for it (so serde_json's), for text kept as JSON to be written
/// later without escaping it again.
#[cfg(feature = "alloc")]
pub fn escape_into(out: &mut alloc::string::String, text: &str) {
    let mut rest = text;
    // Bounded: every turn consumes at least one byte or returns.
    loop {
        let run = find_escape(rest.as_bytes());
        // `run` is the end or an ASCII byte: a character boundary either way.
        out.push_str(&rest[..run]);
        let Some(&byte) = rest.as_bytes().get(run) else {
            return;
        };
        // At most six ASCII bytes (`\u00XX`): they fit.
        let mut escape = heapless::Vec::<u8, 6>::new();
        let _ = write_escape(&mut escape, byte);
        out.extend(escape.iter().map(|&b| char::from(b)));
        rest = &rest[run + 1..];
    }
}

/// Writes `text` as a quoted JSON string.
#[inline(always)]
pub(crate) fn write_quoted<S: Sink + ?Sized>(sink: &mut S, text: &str) -> Result<(), S::Error> {
    sink.write_byte(b'"')?;
    write_escaped(sink, text)?;
    sink.write_byte(b'"')
}

/// A [`fmt::Write`] that escapes what it is given straight into a sink, so any `Display` can be
/// written as the contents of a JSON string without an intermediate buffer.
pub(crate) struct EscapingWriter<'s, S: Sink + ?Sized> {
    sink: &'s mut S,
    /// The sink's error, kept because `fmt::Error` cannot carry it.
    pub(crate) error: Option<S::Error>,
}

impl<'s, S: Sink + ?Sized> EscapingWriter<'s, S> {
    pub(crate) fn new(sink: &'s mut S) -> Self {
        Self { sink, error: None }
    }
}

impl<S: Sink + ?Sized> fmt::Write for EscapingWriter<'_, S> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        write_escaped(self.sink, text).map_err(|e| {
            self.error = Some(e);
            fmt::Error
        })
    }
}

/// A [`fmt::Write`] that copies verbatim into a sink.
pub(crate) struct VerbatimWriter<'s, S: Sink + ?Sized> {
    sink: &'s mut S,
    /// The sink's error, kept because `fmt::Error` cannot carry it.
    pub(crate) error: Option<S::Error>,
}

impl<'s, S: Sink + ?Sized> VerbatimWriter<'s, S> {
    pub(crate) fn new(sink: &'s mut S) -> Self {
        Self { sink, error: None }
    }
}

impl<S: Sink + ?Sized> fmt::Write for VerbatimWriter<'_, S> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.sink.write_bytes(text.as_bytes()).map_err(|e| {
            self.error = Some(e);
            fmt::Error
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(bytes: &[u8]) -> usize {
        bytes
            .iter()
            .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
            .unwrap_or(bytes.len())
    }

    #[test]
    fn find_escape_agrees_with_a_byte_loop_at_every_position_and_length() {
        let specials = [
            0u8, 0x1f, b'"', b'\\', b'\n', 0x7f, 0x80, 0xff, 0x20, b'!', b'#', b'[',
        ];
        for len in 0..20 {
            for pos in 0..len {
                for &special in &specials {
                    let mut bytes = [b'a'; 20];
                    bytes[pos] = special;
                    // A second hit after the first must not change the answer.
                    if pos + 2 < len {
                        bytes[pos + 2] = b'"';
                    }
                    let bytes = &bytes[..len];
                    assert_eq!(find_escape(bytes), naive(bytes), "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn every_byte_value_is_classified_like_a_byte_loop() {
        for byte in 0..=255u8 {
            for pos in 0..16 {
                let mut bytes = [b'z'; 16];
                bytes[pos] = byte;
                assert_eq!(
                    find_escape(&bytes),
                    naive(&bytes),
                    "byte {byte:#x} at {pos}"
                );
            }
        }
    }
}
