//! A validating, zero-copy JSON scanner over text the framer has already checked as UTF-8, or
//! over bytes it checks as UTF-8 itself in the same pass (`scan_bytes`, for the envelope).
//!
//! [`parse_value`] checks one line against RFC 8259 in a single pass and hands back the
//! span of its value as a [`RawValue`]; nothing is copied and nothing is decoded. Reading a
//! validated value is done on demand through the accessors below ([`RawValue::kind`],
//! [`RawValue::get_field`] (`get` already names the text), [`RawValue::fields`],
//! [`RawValue::elements`], [`JsonStr::eq_str`], [`JsonStr::unescape_into`], …), which walk
//! the text again without re-validating it, and never panic even on text that was not
//! validated. Looking a key up costs a walk over the members before it.
//!
//! # Decisions
//!
//! - **Nesting** is limited to [`MAX_DEPTH`] (128) arrays and objects, counting the outermost
//!   one. The scanner is iterative, with the open containers kept in a 128-bit stack, so deep
//!   input costs no call stack. (serde_json accepts one level less, 127.)
//! - **Lone surrogates** in `\u` escapes (a `\uD800`–`\uDBFF` not followed by a `\uDC00`–`\uDFFF`
//!   escape, or a trailing one on its own) are rejected, as serde_json rejects them when it
//!   decodes a string. So every validated string decodes to valid UTF-8, and unescaping never
//!   fails for any reason but the size of the buffer.
//! - **Raw control characters** (U+0000 to U+001F) inside strings are rejected; DEL and
//!   non-ASCII characters are not.
//! - **Numbers** follow the grammar exactly: no leading zeros, no `+`, no `.5`, no `1.`, no
//!   `NaN` or `Infinity`. Their magnitude is not limited: validation does not convert them.
//!
//! # Speed
//!
//! Most bytes of ACP traffic sit inside long strings (message chunks, diffs, file contents).
//! The string scanner therefore looks at 16 bytes at a time for the bytes that need attention
//! (`"`, `\` and control characters), with SSE2 on x86_64 and word arithmetic elsewhere (see
//! `stops.rs`), and only stops where one is found. Past a few stops a string is taken for a
//! long one (code, diffs: a backslash every dozen bytes) and scanned 64 bytes at a time on bit
//! masks, escapes resolved by arithmetic rather than one stop each (see `chunk.rs`).

use core::fmt;

use self::chunk::{StringChunks, below, from};
use self::stops::{BLOCK, quotes_and_backslashes, stops};
use super::{JsonStr, RawValue};

mod chunk;
pub(super) mod stops;
mod unescape;

#[cfg(feature = "alloc")]
pub(crate) use self::unescape::unescape_string_at;

/// How many stops a string scan takes one by one before it takes the string for a long one
/// and goes on a chunk at a time.
const SHORT_STOPS: usize = 2;

/// The deepest nesting of arrays and objects [`parse_value`] accepts, the outermost one
/// counting as 1.
pub const MAX_DEPTH: u32 = 128;

/// Why a text is not one JSON value, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JsonError {
    /// What is wrong.
    pub kind: JsonErrorKind,
    /// Byte offset within the scanned text of the first byte that is wrong (the text length
    /// for [`JsonErrorKind::UnexpectedEnd`]).
    pub offset: usize,
}

/// The kinds of [`JsonError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The text ended inside a value, or held nothing but whitespace.
    UnexpectedEnd,
    /// A value was expected here (at the start, after `[`, `,` or `:`).
    ExpectedValue,
    /// Something other than whitespace follows the value.
    TrailingCharacters,
    /// A `t`, `f` or `n` that does not start `true`, `false` or `null`.
    InvalidLiteral,
    /// A number that breaks the grammar (`-`, `01` inside a number, `1.`, `1e`, …). The offset
    /// is the first byte that does not fit.
    InvalidNumber,
    /// A `\` followed by anything but `"`, `\`, `/`, `b`, `f`, `n`, `r`, `t` or `u` and four hex
    /// digits. The offset is the backslash.
    InvalidEscape,
    /// A `\u` escape of a UTF-16 surrogate that is not part of a well formed pair. The offset
    /// is the backslash.
    LoneSurrogate,
    /// A raw control character (below U+0020) inside a string.
    ControlCharacter,
    /// An object member that does not start with a string key.
    ExpectedKey,
    /// A key not followed by `:`.
    ExpectedColon,
    /// An object member followed by something other than `,` or `}`.
    ExpectedCommaOrBrace,
    /// An array element followed by something other than `,` or `]`.
    ExpectedCommaOrBracket,
    /// An array or object nested deeper than [`MAX_DEPTH`]. The offset is its opening bracket.
    TooDeep,
    /// The bytes are not UTF-8 (only from a scan of bytes, which checks it as it goes). The
    /// offset is where `core::str::from_utf8` says the valid prefix ends, whatever else is
    /// wrong with the text.
    InvalidUtf8,
}

impl JsonError {
    const fn new(kind: JsonErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use JsonErrorKind::*;
        let what = match self.kind {
            UnexpectedEnd => return f.write_str("unexpected end of input"),
            TooDeep => return write!(f, "nesting deeper than {MAX_DEPTH} at byte {}", self.offset),
            ExpectedValue => "expected value",
            TrailingCharacters => "trailing characters",
            InvalidLiteral => "invalid literal",
            InvalidNumber => "invalid number",
            InvalidEscape => "invalid escape",
            LoneSurrogate => "unpaired surrogate escape",
            ControlCharacter => "control character in string",
            ExpectedKey => "expected string key",
            ExpectedColon => "expected ':'",
            ExpectedCommaOrBrace => "expected ',' or '}'",
            ExpectedCommaOrBracket => "expected ',' or ']'",
            InvalidUtf8 => "invalid UTF-8",
        };
        write!(f, "{what} at byte {}", self.offset)
    }
}

impl core::error::Error for JsonError {}

/// Checks that `text` is exactly one JSON value, optionally surrounded by JSON whitespace,
/// and returns the value's span without that whitespace.
pub fn parse_value(text: &str) -> Result<RawValue<'_>, JsonError> {
    scan(text, &mut ())
}

/// Where one member of the outermost object sits in the scanned text, as byte ranges.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MemberSpan {
    /// The key's contents, between its quotes.
    pub(crate) key: (usize, usize),
    /// Whether the key holds an escape.
    pub(crate) key_escaped: bool,
    /// The value.
    pub(crate) value: (usize, usize),
    /// Whether the value is a string holding an escape (known from the scan, so reading it
    /// as a string needs no second look for backslashes).
    pub(crate) value_escaped: bool,
}

/// Told about each member of the outermost object while [`scan`] validates it, so the
/// envelope scanner can pick out its fields in the same pass. Ranges rather than `&str`s, so
/// members nobody wants cost no slicing.
pub(crate) trait TopMembers {
    /// Whether [`member`](TopMembers::member) wants to hear about anything. When not, the
    /// outermost object is scanned like any nested one.
    const LISTENS: bool = true;

    /// One member of the outermost object, in text order, duplicates included. The key and
    /// value are already validated (as UTF-8 too) when this is called, but the rest of the
    /// text may not be.
    fn member(&mut self, text: &[u8], member: MemberSpan);
}

impl TopMembers for () {
    const LISTENS: bool = false;

    #[inline(always)]
    fn member(&mut self, _text: &[u8], _member: MemberSpan) {}
}

/// [`parse_value`], reporting the members of the outermost value to `members` when it is an
/// object.
pub(crate) fn scan<'a, M: TopMembers>(
    text: &'a str,
    members: &mut M,
) -> Result<RawValue<'a>, JsonError> {
    let (start, end) = value_span::<false, M>(text.as_bytes(), members)?;
    Ok(RawValue::new_unchecked(
        text.get(start..end).unwrap_or_default(),
    ))
}

/// [`scan`] over bytes not yet known to be UTF-8, checking that they are in the same pass;
/// returns them as text with the value.
///
/// Outside strings the grammar admits ASCII only, so only strings can hold other bytes, and
/// the string scan stops at every byte of `0x80` and above and checks its sequence. ASCII runs
/// cost nothing more than in [`scan`]. Any error, of JSON or of UTF-8, is then checked
/// against `core::str::from_utf8`: when the text is not UTF-8 that is the error
/// ([`JsonErrorKind::InvalidUtf8`] at its `valid_up_to`), so the verdict is the one a
/// `from_utf8` before [`scan`] would give.
pub(crate) fn scan_bytes<'a, M: TopMembers>(
    bytes: &'a [u8],
    members: &mut M,
) -> Result<(&'a str, RawValue<'a>), JsonError> {
    let (start, end) = match value_span::<true, M>(bytes, members) {
        Ok(span) => span,
        Err(error) => return Err(utf8_error_first(bytes, error)),
    };
    // SAFETY: the scan succeeded, so `bytes` is one JSON value with whitespace around it.
    // Outside strings the grammar only accepts ASCII bytes, and inside strings the checking
    // scan stops at every byte of 0x80 and above and accepts it only as part of a complete
    // UTF-8 sequence (`utf8_sequence_len`: no overlong forms, no surrogates, nothing past
    // U+10FFFF). So every byte is ASCII or in a well formed sequence: `bytes` is UTF-8. The
    // tests compare this verdict with `core::str::from_utf8` on corpora and random bytes.
    #[allow(unsafe_code)]
    let text = unsafe { core::str::from_utf8_unchecked(bytes) };
    Ok((
        text,
        RawValue::new_unchecked(text.get(start..end).unwrap_or_default()),
    ))
}

/// The error of a failed [`scan_bytes`]: the UTF-8 one when the text is not UTF-8.
#[cold]
fn utf8_error_first(bytes: &[u8], error: JsonError) -> JsonError {
    match core::str::from_utf8(bytes) {
        Ok(_) => error,
        Err(utf8) => JsonError::new(JsonErrorKind::InvalidUtf8, utf8.valid_up_to()),
    }
}

/// Validates `bytes` as one JSON value (checking UTF-8 inside strings when `UTF8`) and
/// returns the value's span without the whitespace around it.
#[inline(always)]
fn value_span<const UTF8: bool, M: TopMembers>(
    bytes: &[u8],
    members: &mut M,
) -> Result<(usize, usize), JsonError> {
    let mut scanner = Scanner::<UTF8> { bytes, pos: 0 };
    scanner.skip_ws();
    let start = scanner.pos;
    if M::LISTENS && scanner.bytes.get(start) == Some(&b'{') {
        scanner.top_object(members)?;
    } else {
        scanner.value(0)?;
    }
    let end = scanner.pos;
    scanner.skip_ws();
    if scanner.pos != bytes.len() {
        return Err(JsonError::new(
            JsonErrorKind::TrailingCharacters,
            scanner.pos,
        ));
    }
    Ok((start, end))
}

/// The validating scanner; with `UTF8` it also checks the bytes of `0x80` and above (which
/// valid JSON only has inside strings).
struct Scanner<'a, const UTF8: bool> {
    bytes: &'a [u8],
    pos: usize,
}

impl<const UTF8: bool> Scanner<'_, UTF8> {
    fn end_or(&self, kind: JsonErrorKind, at: usize) -> JsonError {
        if at >= self.bytes.len() {
            JsonError::new(JsonErrorKind::UnexpectedEnd, self.bytes.len())
        } else {
            JsonError::new(kind, at)
        }
    }

    #[inline(always)]
    fn skip_ws(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            // Every token byte is above the space: one compare for the usual no whitespace.
            if b > b' ' || !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            self.pos += 1;
        }
    }

    /// Scans the outermost object, whose `{` is at `self.pos`, reporting each member to
    /// `members` as soon as its value is validated. The values are scanned by
    /// [`value`](Self::value), which keeps no books about members.
    fn top_object<M: TopMembers>(&mut self, members: &mut M) -> Result<(), JsonError> {
        self.pos += 1;
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(self.end_or(JsonErrorKind::ExpectedKey, self.pos));
            }
            self.pos += 1;
            let key_start = self.pos;
            let key_escaped = self.string()?;
            let key_end = self.pos - 1;
            self.colon()?;
            let value_start = self.pos;
            // Strings (`jsonrpc`, `method`, string ids) without the call into the general
            // loop.
            let value_escaped = if self.bytes.get(value_start) == Some(&b'"') {
                self.pos += 1;
                self.string()?
            } else {
                self.value(1)?;
                false
            };
            let member = MemberSpan {
                key: (key_start, key_end),
                key_escaped,
                value: (value_start, self.pos),
                value_escaped,
            };
            members.member(self.bytes, member);
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.end_or(JsonErrorKind::ExpectedCommaOrBrace, self.pos)),
            }
        }
    }

    /// Scans one value starting at `self.pos` (whitespace already skipped), leaving `pos`
    /// just past it; `outer` containers are already open around it. Iterative: `stack` holds
    /// one bit per container opened here, 1 for an object.
    fn value(&mut self, outer: u32) -> Result<(), JsonError> {
        let mut stack: u128 = 0;
        let mut depth = outer;
        loop {
            // A value is expected at `self.pos`.
            let start = self.pos;
            // Strings first, on a branch of their own: most values are strings, and one
            // compare predicts better than the jump table of the `match`.
            if self.bytes.get(start) == Some(&b'"') {
                self.pos += 1;
                self.string()?;
            } else {
                match self.bytes.get(start) {
                    Some(&open @ (b'{' | b'[')) => {
                        if depth == MAX_DEPTH {
                            return Err(JsonError::new(JsonErrorKind::TooDeep, start));
                        }
                        self.pos += 1;
                        self.skip_ws();
                        let close = if open == b'{' { b'}' } else { b']' };
                        if self.bytes.get(self.pos) == Some(&close) {
                            self.pos += 1;
                        } else {
                            depth += 1;
                            stack = (stack << 1) | u128::from(open == b'{');
                            if open == b'{' {
                                self.key_and_colon()?;
                            }
                            continue;
                        }
                    }
                    Some(b'-' | b'0'..=b'9') => self.number()?,
                    Some(b't') => self.literal(b"true")?,
                    Some(b'f') => self.literal(b"false")?,
                    Some(b'n') => self.literal(b"null")?,
                    Some(_) => return Err(JsonError::new(JsonErrorKind::ExpectedValue, start)),
                    None => return Err(self.end_or(JsonErrorKind::ExpectedValue, start)),
                }
            }
            // A value just ended at `self.pos`: close containers until one goes on.
            loop {
                if depth == outer {
                    return Ok(());
                }
                let in_object = stack & 1 == 1;
                self.skip_ws();
                match self.bytes.get(self.pos) {
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_ws();
                        if in_object {
                            self.key_and_colon()?;
                        }
                        break;
                    }
                    Some(b'}') if in_object => {
                        self.pos += 1;
                        depth -= 1;
                        stack >>= 1;
                    }
                    Some(b']') if !in_object => {
                        self.pos += 1;
                        depth -= 1;
                        stack >>= 1;
                    }
                    _ => {
                        let kind = if in_object {
                            JsonErrorKind::ExpectedCommaOrBrace
                        } else {
                            JsonErrorKind::ExpectedCommaOrBracket
                        };
                        return Err(self.end_or(kind, self.pos));
                    }
                }
            }
        }
    }

    /// Scans `"key" :` and the whitespace after it.
    #[inline(always)]
    fn key_and_colon(&mut self) -> Result<(), JsonError> {
        if self.bytes.get(self.pos) != Some(&b'"') {
            return Err(self.end_or(JsonErrorKind::ExpectedKey, self.pos));
        }
        self.pos += 1;
        self.string()?;
        self.colon()
    }

    /// Scans the whitespace, `:` and whitespace after a key.
    #[inline(always)]
    fn colon(&mut self) -> Result<(), JsonError> {
        self.skip_ws();
        if self.bytes.get(self.pos) != Some(&b':') {
            return Err(self.end_or(JsonErrorKind::ExpectedColon, self.pos));
        }
        self.pos += 1;
        self.skip_ws();
        Ok(())
    }

    /// Scans the rest of a string whose opening quote is just behind `self.pos`, leaving `pos`
    /// past the closing quote. Returns whether the string holds an escape.
    ///
    /// Keys and short values end within a few stops, which cost less one by one than the
    /// masks of a chunk; past [`SHORT_STOPS`] stops the string is a long one and goes on a
    /// chunk at a time.
    #[inline(always)]
    fn string(&mut self) -> Result<bool, JsonError> {
        let mut pos = self.pos;
        let mut escaped = false;
        for _ in 0..SHORT_STOPS {
            match self.past_stop(skip_plain::<UTF8>(self.bytes, pos), &mut escaped)? {
                Some(next) => pos = next,
                None => return Ok(escaped),
            }
        }
        self.long_string(pos, escaped)
    }

    /// Takes the stop at `pos` inside a string (as [`skip_plain`] finds it): the closing
    /// quote ends the string, leaving `self.pos` past it (`None`); an escape (setting
    /// `escaped`) or a non-ASCII run is checked and passed over (the position after it); a
    /// control character or the end of the text is the error.
    #[inline(always)]
    fn past_stop(&mut self, pos: usize, escaped: &mut bool) -> Result<Option<usize>, JsonError> {
        let bytes = self.bytes;
        match bytes.get(pos) {
            Some(b'"') => {
                self.pos = pos + 1;
                Ok(None)
            }
            Some(&b) if UTF8 && b >= 0x80 => non_ascii_run(bytes, pos).map(Some),
            Some(b'\\') => {
                *escaped = true;
                // The two-byte escapes are most of them; `\u` takes the long way.
                let next = bytes.get(pos + 1).copied().unwrap_or(0);
                if is_short_escape(next) {
                    Ok(Some(pos + 2))
                } else {
                    self.escape(pos).map(Some)
                }
            }
            Some(_) => Err(JsonError::new(JsonErrorKind::ControlCharacter, pos)),
            None => Err(JsonError::new(JsonErrorKind::UnexpectedEnd, bytes.len())),
        }
    }

    /// [`string`](Self::string) a chunk at a time (see `chunk.rs`): per chunk, the closing
    /// quote is the first quote no escape holds, and before it every escape's second byte is
    /// checked and every non-ASCII run (with `UTF8`) is checked as UTF-8. A control character
    /// before the closing quote hands over to [`string_by_stops`](Self::string_by_stops),
    /// which finds the first error in text order.
    ///
    /// Starts at `start`, inside the string but not inside an escape or a UTF-8 sequence;
    /// `escaped` tells whether an escape came before.
    #[inline(never)]
    fn long_string(&mut self, start: usize, mut escaped: bool) -> Result<bool, JsonError> {
        let bytes = self.bytes;
        // Escapes and UTF-8 sequences are checked up to here: a `\u` escape or a sequence may
        // run on into the next chunk, whose bits for it are then not looked at again.
        let mut escapes_checked = start;
        let mut utf8_checked = start;
        for chunk in StringChunks::new(bytes, start) {
            let pos = chunk.pos;
            let inside = chunk.inside();
            if chunk.bits.controls & inside != 0 {
                let resume = if chunk.carried { pos - 1 } else { pos };
                return self
                    .string_by_stops(resume.max(escapes_checked).max(utf8_checked), escaped);
            }
            escaped |= chunk.bits.backslashes & inside != 0;
            let mut escapes = chunk.held & inside & from(escapes_checked.saturating_sub(pos));
            while escapes != 0 {
                let at = pos + escapes.trailing_zeros() as usize;
                if is_short_escape(bytes.get(at).copied().unwrap_or(0)) {
                    escapes &= escapes - 1;
                } else {
                    // `\u` and its surrogate pair, or the error.
                    escapes_checked = self.escape(at - 1)?;
                    escapes &= from(escapes_checked - pos);
                }
            }
            if UTF8 {
                let mut non_ascii =
                    chunk.bits.non_ascii & inside & from(utf8_checked.saturating_sub(pos));
                while non_ascii != 0 {
                    utf8_checked = non_ascii_run(bytes, pos + non_ascii.trailing_zeros() as usize)?;
                    non_ascii &= from(utf8_checked - pos);
                }
            }
            if let Some(at) = chunk.closing {
                self.pos = pos + at + 1;
                return Ok(escaped);
            }
        }
        Err(JsonError::new(JsonErrorKind::UnexpectedEnd, bytes.len()))
    }

    /// The string scan by its first stop: from `pos` inside a string (not inside an escape or
    /// a UTF-8 sequence), `escaped` telling whether an escape came before. Slower on escapes,
    /// but it meets every error in text order; [`long_string`](Self::long_string) hands over
    /// to it where the order matters.
    #[cold]
    fn string_by_stops(&mut self, mut pos: usize, mut escaped: bool) -> Result<bool, JsonError> {
        // Bounded by the text: every stop passed over moves `pos` forward.
        loop {
            match self.past_stop(skip_plain::<UTF8>(self.bytes, pos), &mut escaped)? {
                Some(next) => pos = next,
                None => return Ok(escaped),
            }
        }
    }

    /// Checks the escape whose backslash is at `at`; returns the position after it.
    #[cold]
    fn escape(&self, at: usize) -> Result<usize, JsonError> {
        match self.bytes.get(at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
            Some(b'u') => {
                let unit = self.hex4(at, at + 2)?;
                match unit {
                    0xD800..=0xDBFF => {
                        let follows = self.bytes.get(at + 6) == Some(&b'\\')
                            && self.bytes.get(at + 7) == Some(&b'u');
                        if !follows {
                            return Err(self.end_or(JsonErrorKind::LoneSurrogate, at + 6).at(at));
                        }
                        match self.hex4(at + 6, at + 8)? {
                            0xDC00..=0xDFFF => Ok(at + 12),
                            _ => Err(JsonError::new(JsonErrorKind::LoneSurrogate, at)),
                        }
                    }
                    0xDC00..=0xDFFF => Err(JsonError::new(JsonErrorKind::LoneSurrogate, at)),
                    _ => Ok(at + 6),
                }
            }
            Some(_) => Err(JsonError::new(JsonErrorKind::InvalidEscape, at)),
            None => Err(JsonError::new(
                JsonErrorKind::UnexpectedEnd,
                self.bytes.len(),
            )),
        }
    }

    /// Reads the four hex digits at `digits` of the `\u` escape whose backslash is at `at`.
    fn hex4(&self, at: usize, digits: usize) -> Result<u32, JsonError> {
        let mut unit = 0;
        for i in digits..digits + 4 {
            let Some(&b) = self.bytes.get(i) else {
                return Err(JsonError::new(
                    JsonErrorKind::UnexpectedEnd,
                    self.bytes.len(),
                ));
            };
            let Some(digit) = hex_digit(b) else {
                return Err(JsonError::new(JsonErrorKind::InvalidEscape, at));
            };
            unit = unit << 4 | digit;
        }
        Ok(unit)
    }

    /// Scans a number starting at `self.pos`.
    fn number(&mut self) -> Result<(), JsonError> {
        let bytes = self.bytes;
        let mut pos = self.pos;
        if bytes.get(pos) == Some(&b'-') {
            pos += 1;
        }
        match bytes.get(pos) {
            Some(b'0') => pos += 1,
            Some(b'1'..=b'9') => pos = skip_digits(bytes, pos + 1),
            _ => return Err(self.end_or(JsonErrorKind::InvalidNumber, pos)),
        }
        if bytes.get(pos) == Some(&b'.') {
            pos += 1;
            if !matches!(bytes.get(pos), Some(b'0'..=b'9')) {
                return Err(self.end_or(JsonErrorKind::InvalidNumber, pos));
            }
            pos = skip_digits(bytes, pos);
        }
        if matches!(bytes.get(pos), Some(b'e' | b'E')) {
            pos += 1;
            if matches!(bytes.get(pos), Some(b'+' | b'-')) {
                pos += 1;
            }
            if !matches!(bytes.get(pos), Some(b'0'..=b'9')) {
                return Err(self.end_or(JsonErrorKind::InvalidNumber, pos));
            }
            pos = skip_digits(bytes, pos);
        }
        self.pos = pos;
        Ok(())
    }

    /// Scans the literal `word` at `self.pos`.
    fn literal(&mut self, word: &[u8]) -> Result<(), JsonError> {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        if rest.starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else if word.starts_with(rest) {
            Err(JsonError::new(
                JsonErrorKind::UnexpectedEnd,
                self.bytes.len(),
            ))
        } else {
            Err(JsonError::new(JsonErrorKind::InvalidLiteral, self.pos))
        }
    }
}

impl JsonError {
    /// The same error reported at `offset`, unless it is the end of input.
    fn at(self, offset: usize) -> Self {
        match self.kind {
            JsonErrorKind::UnexpectedEnd => self,
            kind => Self::new(kind, offset),
        }
    }
}

/// Whether each byte may follow a backslash on its own (`"`, `\`, `/`, `b`, `f`, `n`, `r`, `t`).
const SHORT_ESCAPES: [bool; 256] = {
    let mut set = [false; 256];
    let mut i = 0;
    let bytes = *b"\"\\/bfnrt";
    while i < bytes.len() {
        set[bytes[i] as usize] = true;
        i += 1;
    }
    set
};

/// Whether `\` followed by `b` is a complete escape. A table rather than a `match`, which
/// compiles to a jump table on the hot path, or a 128-bit set, whose shift takes a dozen
/// instructions.
#[inline(always)]
const fn is_short_escape(b: u8) -> bool {
    SHORT_ESCAPES[b as usize]
}

const fn hex_digit(b: u8) -> Option<u32> {
    match b {
        b'0'..=b'9' => Some((b - b'0') as u32),
        b'a'..=b'f' => Some((b - b'a' + 10) as u32),
        b'A'..=b'F' => Some((b - b'A' + 10) as u32),
        _ => None,
    }
}

fn skip_digits(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(b'0'..=b'9') = bytes.get(pos) {
        pos += 1;
    }
    pos
}

/// Checks the UTF-8 sequences from `pos` (a byte of `0x80` and above) up to the next ASCII
/// byte, and returns its position. Non-ASCII text comes in runs (words, CJK lines), checked
/// here in one go rather than a stop per character.
#[inline(always)]
fn non_ascii_run(bytes: &[u8], mut pos: usize) -> Result<usize, JsonError> {
    // Every pass takes at least one byte or returns.
    while let Some(&lead) = bytes.get(pos) {
        if lead < 0x80 {
            break;
        }
        match utf8_sequence_len(bytes, pos) {
            Some(len) => pos += len,
            // Placed exactly by `utf8_error_first`.
            None => return Err(JsonError::new(JsonErrorKind::InvalidUtf8, pos)),
        }
    }
    Ok(pos)
}

/// The length of the well formed UTF-8 sequence of two to four bytes at `at`, or `None`
/// (Unicode table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF).
///
/// The four bytes from `at` are read as one little-endian word (zeros past the end, which are
/// no continuation bytes), and the lead's form and the continuation bytes are checked by one
/// mask each; the few forbidden values are then excluded from the code point's bits.
#[inline(always)]
fn utf8_sequence_len(bytes: &[u8], at: usize) -> Option<usize> {
    let rest = bytes.get(at..).unwrap_or_default();
    let word = match rest.first_chunk::<4>() {
        Some(word) => *word,
        None => {
            let mut word = [0; 4];
            word[..rest.len()].copy_from_slice(rest);
            word
        }
    };
    let word = u32::from_le_bytes(word);
    if word & 0xC0E0 == 0x80C0 {
        // 110xxxxx 10xxxxxx: C0 and C1 (no bit in 0x1E) are overlong.
        (word & 0x1E != 0).then_some(2)
    } else if word & 0xC0_C0F0 == 0x80_80E0 {
        // 1110xxxx 10xxxxxx 10xxxxxx: the lead's low nibble and the second byte's 0x20 bit
        // are both zero for an overlong form (E0 80..9F) and are D and 1 for a surrogate
        // (ED A0..BF).
        let high = word & 0x200F;
        (high != 0 && high != 0x200D).then_some(3)
    } else if word & 0xC0C0_C0F8 == 0x8080_80F0 {
        // 11110xxx and three continuations: the code point must be U+10000 to U+10FFFF.
        let point = (word & 0x07) << 18
            | (word >> 8 & 0x3F) << 12
            | (word >> 16 & 0x3F) << 6
            | word >> 24 & 0x3F;
        (0x1_0000..=0x10_FFFF).contains(&point).then_some(4)
    } else {
        None
    }
}

/// The position of the first byte at or after `pos` that is a quote, a backslash or a control
/// character (or with `NON_ASCII` a byte of `0x80` and above), or the length of `bytes` (`pos`
/// when it is past the end).
///
/// Sixteen bytes per step (see [`stops`]). The last bytes of the text, when fewer than a
/// block, are looked at as the last block of the text less the bytes before `pos`.
#[inline(always)]
fn skip_plain<const NON_ASCII: bool>(bytes: &[u8], mut pos: usize) -> usize {
    // `pos < end` rather than a range check per step: one compare, and the block read below
    // is then known to be in bounds.
    let end = bytes.len().saturating_sub(BLOCK - 1);
    while pos < end {
        let Some(block) = bytes
            .get(pos..pos + BLOCK)
            .and_then(|block| <&[u8; BLOCK]>::try_from(block).ok())
        else {
            break;
        };
        let stops = stops::<NON_ASCII>(block);
        if stops.any() {
            return pos + stops.first();
        }
        pos += BLOCK;
    }
    let Some(last) = bytes.last_chunk::<BLOCK>() else {
        return skip_plain_short::<NON_ASCII>(bytes, pos);
    };
    let before = (pos + BLOCK).saturating_sub(bytes.len());
    let stops = stops::<NON_ASCII>(last).after(before);
    if stops.any() {
        pos + stops.first()
    } else {
        bytes.len().max(pos)
    }
}

/// Reads the string whose contents start at `start` in `bytes`, which are not yet known to be
/// JSON or UTF-8, checking it as the validating scan does and decoding it in the same pass;
/// returns the decoded text and the position past the closing quote. `None` for anything that
/// is not a valid string, and also for a `\u` escape (left to the general path, which decodes
/// surrogate pairs): a `Some` is always a string the validating scan accepts, decoded as
/// [`JsonStr::to_cow`] decodes it.
#[cfg(feature = "alloc")]
pub(crate) fn checked_string_at(
    bytes: &[u8],
    start: usize,
) -> Option<(alloc::string::String, usize)> {
    use unescape::SIMPLE_ESCAPES;
    let mut out = alloc::vec::Vec::with_capacity(bytes.len().saturating_sub(start));
    let mut pos = start;
    // Bounded by the text: every pass moves `pos` forward or returns.
    loop {
        let stop = skip_plain::<true>(bytes, pos);
        out.extend_from_slice(bytes.get(pos..stop)?);
        pos = stop;
        match *bytes.get(pos)? {
            b'"' => break,
            b'\\' => {
                let decoded = SIMPLE_ESCAPES[usize::from(*bytes.get(pos + 1)?)];
                if decoded == 0 {
                    return None;
                }
                out.push(decoded);
                pos += 2;
            }
            0x80.. => {
                let end = non_ascii_run(bytes, pos).ok()?;
                out.extend_from_slice(bytes.get(pos..end)?);
                pos = end;
            }
            _ => return None,
        }
    }
    // SAFETY: `out` holds only the runs `skip_plain::<true>` went over, which stops at every
    // byte of 0x80 and above (so they are ASCII), the ASCII bytes of one-letter escapes, and
    // the runs `non_ascii_run` accepted, which are whole well formed UTF-8 sequences
    // (`utf8_sequence_len`, as in `scan_bytes`). So `out` is UTF-8. Checking it again cost an
    // eighth of the owned decode of a turn; the agreement tests compare every value with the
    // general path's, which builds its strings from `&str` pieces.
    #[allow(unsafe_code)]
    let text = unsafe { alloc::string::String::from_utf8_unchecked(out) };
    Some((text, pos + 1))
}

/// [`skip_plain`] for a text shorter than a block.
fn skip_plain_short<const NON_ASCII: bool>(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(&b) = bytes.get(pos) {
        if b == b'"' || b == b'\\' || b < 0x20 || (NON_ASCII && b >= 0x80) {
            break;
        }
        pos += 1;
    }
    pos
}

// ---------------------------------------------------------------------------------------------
// Reading validated values. Everything below walks text without validating it again; on text
// that is not valid JSON it returns nonsense or nothing, but it never panics and never loops.
// ---------------------------------------------------------------------------------------------

/// The type of a JSON value, from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// `{…}`
    Object,
    /// `[…]`
    Array,
    /// `"…"`
    String,
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
}

/// The position just past the closing quote of a string whose contents start at `start`, and
/// whether the contents hold a backslash; without validation.
///
/// Escapes are no stop here: the closing quote is the first quote not escaped, that is not
/// after an odd run of backslashes, so text and code full of `\n` and `\"` go by sixteen
/// bytes a step.
#[inline]
pub(crate) fn skip_string_unchecked(bytes: &[u8], start: usize) -> (usize, bool) {
    // Keys and most values: a quote in the first block with no backslash before it.
    if let Some(block) = bytes
        .get(start..start + BLOCK)
        .and_then(|block| <&[u8; BLOCK]>::try_from(block).ok())
    {
        let (quotes, backslashes) = quotes_and_backslashes(block);
        if quotes.any() && !backslashes.before(quotes.first()).any() {
            return (start + quotes.first() + 1, false);
        }
    }
    skip_long_string(bytes, start)
}

/// [`skip_string_unchecked`] past the first block, or with escapes in it: a chunk at a time,
/// the closing quote being the first quote no escape holds (see `chunk.rs`).
fn skip_long_string(bytes: &[u8], start: usize) -> (usize, bool) {
    let mut escaped = false;
    for chunk in StringChunks::new(bytes, start) {
        let backslashes = chunk.bits.backslashes;
        if let Some(at) = chunk.closing {
            return (chunk.pos + at + 1, escaped || backslashes & below(at) != 0);
        }
        escaped |= backslashes != 0;
    }
    (bytes.len(), escaped)
}

/// The position just past the value starting at `pos`, without validation. Strings (most of
/// what views skip) inline; containers and scalars out of line.
#[inline]
pub(crate) fn skip_value_unchecked(bytes: &[u8], pos: usize) -> usize {
    match bytes.get(pos) {
        Some(b'"') => skip_string_unchecked(bytes, pos + 1).0,
        Some(b'{' | b'[') => skip_container_unchecked(bytes, pos),
        Some(_) => skip_scalar_unchecked(bytes, pos),
        None => pos,
    }
}

/// [`skip_value_unchecked`] for the object or array whose bracket is at `pos`.
fn skip_container_unchecked(bytes: &[u8], mut pos: usize) -> usize {
    let mut depth = 0usize;
    while let Some(&b) = bytes.get(pos) {
        match b {
            b'"' => {
                pos = skip_string_unchecked(bytes, pos + 1).0;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return pos + 1;
                }
            }
            _ => {}
        }
        pos += 1;
    }
    pos
}

/// [`skip_value_unchecked`] for a number or a literal.
fn skip_scalar_unchecked(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(&b) = bytes.get(pos) {
        if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t' | b':') {
            break;
        }
        pos += 1;
    }
    pos
}

pub(crate) fn skip_ws_unchecked(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = bytes.get(pos) {
        pos += 1;
    }
    pos
}

/// Whether `bytes` holds a backslash: a plain loop for the short strings envelopes are made
/// of, the block scanner for long ones.
fn has_backslash(bytes: &[u8]) -> bool {
    if bytes.len() <= 32 {
        // Branch-free: no early exit to predict on strings this short.
        return bytes.iter().fold(false, |found, &b| found | (b == b'\\'));
    }
    let mut pos = 0;
    while pos < bytes.len() {
        pos = skip_plain::<false>(bytes, pos);
        match bytes.get(pos) {
            Some(b'\\') => return true,
            Some(_) => pos += 1,
            None => break,
        }
    }
    false
}

fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

impl<'a> RawValue<'a> {
    /// The type of the value.
    ///
    /// Text that does not start like any JSON value (only possible if it was never
    /// validated) reads as [`ValueKind::Null`].
    pub fn kind(&self) -> ValueKind {
        match self.get().as_bytes().first() {
            Some(b'{') => ValueKind::Object,
            Some(b'[') => ValueKind::Array,
            Some(b'"') => ValueKind::String,
            Some(b'-' | b'0'..=b'9') => ValueKind::Number,
            Some(b't' | b'f') => ValueKind::Bool,
            _ => ValueKind::Null,
        }
    }

    /// The string, when the value is one.
    pub fn as_str(&self) -> Option<JsonStr<'a>> {
        let inner = self.get().strip_prefix('"')?.strip_suffix('"')?;
        Some(JsonStr::new_unchecked(
            inner,
            has_backslash(inner.as_bytes()),
        ))
    }

    /// The value as an `i64`, when it is an integer (no fraction, no exponent) that fits.
    pub fn as_i64(&self) -> Option<i64> {
        let text = self.get();
        if is_integer_text(text) {
            text.parse().ok()
        } else {
            None
        }
    }

    /// The value as a `u64`, when it is a non-negative integer (no fraction, no exponent)
    /// that fits.
    pub fn as_u64(&self) -> Option<u64> {
        let text = self.get();
        if is_integer_text(text) {
            text.parse().ok()
        } else {
            None
        }
    }

    /// The value as a `bool`, when it is `true` or `false`.
    pub fn as_bool(&self) -> Option<bool> {
        match self.get() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        self.get() == "null"
    }

    /// The members of an object, in text order, duplicates included. Empty for any other
    /// kind of value.
    pub fn fields(&self) -> Fields<'a> {
        let text = self.get();
        let pos = if text.starts_with('{') { 1 } else { text.len() };
        Fields { text, pos }
    }

    /// The value of the first member of an object whose decoded key equals `key`.
    pub fn get_field(&self, key: &str) -> Option<RawValue<'a>> {
        self.fields().find(|(k, _)| k.eq_str(key)).map(|(_, v)| v)
    }

    /// The elements of an array, in order. Empty for any other kind of value.
    pub fn elements(&self) -> Elements<'a> {
        let text = self.get();
        let pos = if text.starts_with('[') { 1 } else { text.len() };
        Elements { text, pos }
    }
}

/// The members of a JSON object; see [`RawValue::fields`].
#[derive(Clone, Debug)]
pub struct Fields<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Fields<'a> {
    type Item = (JsonStr<'a>, RawValue<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.text.as_bytes();
        let mut pos = skip_ws_unchecked(bytes, self.pos);
        if bytes.get(pos) == Some(&b',') {
            pos = skip_ws_unchecked(bytes, pos + 1);
        }
        if bytes.get(pos) != Some(&b'"') {
            self.pos = bytes.len();
            return None;
        }
        let (key_end, escaped) = skip_string_unchecked(bytes, pos + 1);
        let key = self
            .text
            .get(pos + 1..key_end.saturating_sub(1))
            .unwrap_or_default();
        pos = skip_ws_unchecked(bytes, key_end);
        if bytes.get(pos) != Some(&b':') {
            self.pos = bytes.len();
            return None;
        }
        let value_start = skip_ws_unchecked(bytes, pos + 1);
        let value_end = skip_value_unchecked(bytes, value_start);
        let value = self.text.get(value_start..value_end).unwrap_or_default();
        // Always make progress, whatever the text holds.
        self.pos = value_end.max(self.pos + 1);
        Some((
            JsonStr::new_unchecked(key, escaped),
            RawValue::new_unchecked(value),
        ))
    }
}

/// The elements of a JSON array; see [`RawValue::elements`].
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = RawValue<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.text.as_bytes();
        let mut pos = skip_ws_unchecked(bytes, self.pos);
        if bytes.get(pos) == Some(&b',') {
            pos = skip_ws_unchecked(bytes, pos + 1);
        }
        match bytes.get(pos) {
            None | Some(b']' | b'}' | b',' | b':') => {
                self.pos = bytes.len();
                None
            }
            Some(_) => {
                let end = skip_value_unchecked(bytes, pos);
                let value = self.text.get(pos..end).unwrap_or_default();
                self.pos = end.max(self.pos + 1);
                Some(RawValue::new_unchecked(value))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding strings.
// ---------------------------------------------------------------------------------------------

/// A piece of a decoded string: a run of text that needed no unescaping, or the character
/// one escape stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fragment<'a> {
    /// Text copied as is from the wire.
    Text(&'a str),
    /// The character of one escape (a surrogate pair counts as one escape).
    Char(char),
}

/// The decoded pieces of a [`JsonStr`]; see [`JsonStr::fragments`].
#[derive(Clone, Debug)]
pub struct Fragments<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Fragments<'a> {
    type Item = Fragment<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.rest.as_bytes();
        if bytes.is_empty() {
            return None;
        }
        if bytes[0] != b'\\' {
            let end = unescape::next_backslash(bytes);
            let (text, rest) = self.rest.split_at(end);
            self.rest = rest;
            return Some(Fragment::Text(text));
        }
        let (ch, used) = decode_escape(bytes);
        self.rest = self.rest.get(used..).unwrap_or_default();
        Some(Fragment::Char(ch))
    }
}

/// Decodes the escape at the start of `bytes` (which starts with a backslash): the character
/// and the number of bytes used. Malformed escapes (only in text that was never validated)
/// decode to U+FFFD and use at least one byte, never splitting a UTF-8 sequence.
fn decode_escape(bytes: &[u8]) -> (char, usize) {
    let simple = match bytes.get(1) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => return decode_unicode_escape(bytes),
        Some(b) if b.is_ascii() => return (char::REPLACEMENT_CHARACTER, 2),
        _ => return (char::REPLACEMENT_CHARACTER, 1),
    };
    (simple, 2)
}

fn hex4_unchecked(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    digits
        .iter()
        .try_fold(0, |unit, &b| Some(unit << 4 | hex_digit(b)?))
}

fn decode_unicode_escape(bytes: &[u8]) -> (char, usize) {
    let Some(unit) = hex4_unchecked(bytes, 2) else {
        return (char::REPLACEMENT_CHARACTER, 2);
    };
    if (0xD800..0xDC00).contains(&unit)
        && bytes.get(6) == Some(&b'\\')
        && bytes.get(7) == Some(&b'u')
        && let Some(low @ 0xDC00..=0xDFFF) = hex4_unchecked(bytes, 8)
    {
        let scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
        return (
            char::from_u32(scalar).unwrap_or(char::REPLACEMENT_CHARACTER),
            12,
        );
    }
    (
        char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER),
        6,
    )
}

/// The buffer given to [`JsonStr::unescape_into`] cannot hold the decoded string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferTooSmall {
    /// The number of bytes the decoded string needs.
    pub needed: usize,
}

impl fmt::Display for BufferTooSmall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "buffer too small: the decoded string needs {} bytes",
            self.needed
        )
    }
}

impl core::error::Error for BufferTooSmall {}

impl<'a> JsonStr<'a> {
    /// The decoded string, piece by piece, without allocating.
    pub fn fragments(&self) -> Fragments<'a> {
        Fragments { rest: self.raw() }
    }

    /// The decoded characters.
    pub fn chars(&self) -> impl Iterator<Item = char> + 'a {
        self.fragments().flat_map(|fragment| {
            let (text, ch) = match fragment {
                Fragment::Text(text) => (text, None),
                Fragment::Char(ch) => ("", Some(ch)),
            };
            text.chars().chain(ch)
        })
    }

    /// The length in bytes of the decoded string.
    pub fn decoded_len(&self) -> usize {
        if !self.has_escapes() {
            return self.raw().len();
        }
        let mut count = unescape::Count(0);
        unescape::unescape(self.raw(), &mut count);
        count.0
    }

    /// Whether the decoded string equals `s`. Costs one comparison when the string has no
    /// escapes.
    pub fn eq_str(&self, s: &str) -> bool {
        if !self.has_escapes() {
            return self.raw() == s;
        }
        let mut rest = s;
        for fragment in self.fragments() {
            let matched = match fragment {
                Fragment::Text(text) => rest.strip_prefix(text),
                Fragment::Char(ch) => rest.strip_prefix(ch),
            };
            match matched {
                Some(after) => rest = after,
                None => return false,
            }
        }
        rest.is_empty()
    }

    /// Decodes the string into `buf` and returns the decoded text, which borrows `buf`.
    pub fn unescape_into<'b>(&self, buf: &'b mut [u8]) -> Result<&'b str, BufferTooSmall> {
        let mut sink = unescape::Slice { buf, len: 0 };
        unescape::unescape(self.raw(), &mut sink);
        let too_small = BufferTooSmall { needed: sink.len };
        let written = sink.buf.get(..sink.len).ok_or(too_small)?;
        // Whole UTF-8 sequences were written (see `unescape`), so this only re-checks what
        // is known.
        core::str::from_utf8(written).map_err(|_| too_small)
    }

    /// The decoded string, borrowed from the line when it has no escapes.
    #[cfg(feature = "alloc")]
    pub fn to_cow(&self) -> alloc::borrow::Cow<'a, str> {
        use alloc::{borrow::Cow, string::String};
        if let Some(plain) = self.as_plain() {
            return Cow::Borrowed(plain);
        }
        // Room for the text and the block the last run is stored with: no escape decodes
        // to more bytes than it takes (only malformed ones, never validated, may grow).
        let mut out = String::with_capacity(self.raw().len() + stops::BLOCK);
        unescape::unescape(self.raw(), &mut unescape::Grow(&mut out));
        Cow::Owned(out)
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use quickcheck::QuickCheck;
    use std::{string::String, vec};

    /// Reads `text` through every accessor as if it had been validated; returns how many
    /// pieces were seen, so the work cannot be optimised away.
    fn read_everything(text: &str, depth: usize) -> usize {
        let raw = RawValue::new_unchecked(text);
        let mut seen = 0;
        let _ = (
            raw.kind(),
            raw.as_i64(),
            raw.as_u64(),
            raw.as_bool(),
            raw.is_null(),
        );
        let _ = raw.get_field("a");
        if let Some(s) = raw.as_str() {
            seen += read_string(s);
        }
        for (key, value) in raw.fields().take(10_000) {
            seen += 1 + read_string(key);
            if depth > 0 {
                seen += read_everything(value.get(), depth - 1);
            }
        }
        for value in raw.elements().take(10_000) {
            seen += 1;
            if depth > 0 {
                seen += read_everything(value.get(), depth - 1);
            }
        }
        seen
    }

    fn read_string(s: JsonStr<'_>) -> usize {
        let mut buf = vec![0u8; s.decoded_len()];
        let decoded = s
            .unescape_into(&mut buf)
            .map(String::from)
            .unwrap_or_default();
        assert_eq!(s.chars().collect::<String>(), decoded);
        assert!(s.eq_str(&decoded));
        assert_eq!(s.to_cow(), decoded);
        s.fragments().count()
    }

    #[test]
    fn accessors_never_panic_on_text_that_was_not_validated() {
        fn property(text: String) -> bool {
            read_everything(&text, 3);
            // Also as the inside of an object and of an array, and as string contents.
            read_everything(&std::format!("{{{text}"), 3);
            read_everything(&std::format!("[{text}"), 3);
            read_string(JsonStr::new_unchecked(&text, true));
            true
        }
        QuickCheck::new()
            .tests(5_000)
            .quickcheck(property as fn(String) -> bool);
        for text in [
            "{",
            "[",
            "{\"",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1,",
            "[1,",
            "[,]",
            "{,}",
            "\"\\",
            "\"\\u",
            "\"\\ud800",
            "\"\\ud800\\u",
            "\"\\uzzzz\"",
            "{]",
            "[}",
            "{\"a\"1}",
            "\"\\é\"",
            "}}}",
        ] {
            read_everything(text, 3);
            read_string(JsonStr::new_unchecked(text, true));
        }
    }

    #[test]
    fn lone_surrogates_in_unvalidated_text_decode_to_the_replacement_character() {
        let s = JsonStr::new_unchecked(r"a\ud800b\udc00", true);
        assert_eq!(s.chars().collect::<String>(), "a\u{fffd}b\u{fffd}");
    }

    /// The owned decoding against the characters one by one, on texts dense in escapes of
    /// every kind and multi-byte characters, at every length across block edges.
    #[test]
    fn to_cow_agrees_with_the_characters_one_by_one() {
        let pieces = [
            "a",
            "é",
            "€",
            "😀",
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\t",
            "\\u00e9",
            "\\ud83d\\ude00",
            "\\u0000",
            "xyz0123456789",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in 0..60 {
            for _ in 0..40 {
                let text: String = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        pieces[(state % pieces.len() as u64) as usize]
                    })
                    .collect();
                let s = JsonStr::new_unchecked(&text, true);
                assert_eq!(s.to_cow(), s.chars().collect::<String>(), "{text:?}");
            }
        }
    }

    /// Skipping a validated string (first unescaped quote, and whether a backslash comes
    /// before it) against a byte loop that decodes escapes, from every start, on texts dense
    /// in quotes and backslash runs of every parity, across block boundaries.
    /// The chunk scan of strings against the scan by first stop, which meets every byte in
    /// order: same verdict, same end, same escape flag, same error and offset, on text dense
    /// in what a string scan must look at (escapes of every kind, surrogates, control
    /// characters, UTF-8 good and bad) and long enough to cross chunks.
    #[test]
    fn the_chunk_string_scan_agrees_with_the_scan_by_first_stop() {
        const PIECES: [&[u8]; 20] = [
            b"a",
            b"abcdefghijklmnop",
            b"\"",
            b"\\",
            b"\\\\",
            b"\\n",
            b"\\\"",
            b"\\u00e9",
            b"\\ud83d\\ude00",
            b"\\ud83d",
            b"\\ude00",
            b"\\u12",
            b"\\x",
            b"\n",
            b"\x1f",
            "\u{e9}".as_bytes(),
            "\u{65e5}\u{672c}".as_bytes(),
            "\u{1f680}".as_bytes(),
            b"\xe6\x97",
            b"\xff",
        ];
        fn both<const UTF8: bool>(bytes: &[u8]) {
            let mut by_stops = Scanner::<UTF8> { bytes, pos: 0 };
            let want = by_stops
                .string_by_stops(0, false)
                .map(|escaped| (escaped, by_stops.pos));
            let mut chunked = Scanner::<UTF8> { bytes, pos: 0 };
            let chunks_only = chunked
                .long_string(0, false)
                .map(|escaped| (escaped, chunked.pos));
            let mut chunked = Scanner::<UTF8> { bytes, pos: 0 };
            let stops_then_chunks = chunked.string().map(|escaped| (escaped, chunked.pos));
            let text = std::string::String::from_utf8_lossy(bytes);
            for got in [chunks_only, stops_then_chunks] {
                if UTF8 && core::str::from_utf8(bytes).is_err() && want.is_err() {
                    // Then the error reported is the UTF-8 one (`utf8_error_first`), wherever
                    // either scan stopped.
                    assert!(got.is_err(), "{text:?}: {got:?}");
                } else {
                    assert_eq!(got, want, "{text:?}");
                }
            }
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..20_000 {
            let mut bytes = std::vec::Vec::new();
            let target = (next() % 260) as usize;
            // Mostly plain text with a rare piece that is an error, so errors sit anywhere.
            while bytes.len() < target {
                let piece = match next() % 64 {
                    0..=29 => 0,
                    30..=39 => 1,
                    40..=47 => 5,
                    48..=50 => 6,
                    51..=53 => 3,
                    54..=56 => 15,
                    57..=58 => 16,
                    n if round % 4 == 0 => (n as usize) % PIECES.len(),
                    n => [4, 7, 8, 17][n as usize % 4],
                };
                bytes.extend_from_slice(PIECES[piece]);
            }
            if next() % 8 != 0 {
                bytes.push(b'"');
            }
            bytes.extend_from_slice(b" tail \\\"");
            both::<true>(&bytes);
            if let Ok(text) = core::str::from_utf8(&bytes) {
                both::<false>(text.as_bytes());
            }
        }
    }

    #[test]
    fn the_string_skip_agrees_with_a_byte_loop_at_every_offset_and_length() {
        fn by_bytes(bytes: &[u8], start: usize) -> (usize, bool) {
            let (mut pos, mut escaped) = (start, false);
            while let Some(&b) = bytes.get(pos) {
                match b {
                    b'"' => return (pos + 1, escaped),
                    b'\\' => {
                        escaped = true;
                        pos += 2;
                    }
                    _ => pos += 1,
                }
            }
            (bytes.len(), escaped)
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in (0..80).chain([127, 128, 129, 191, 200]) {
            for _ in 0..60 {
                let bytes: std::vec::Vec<u8> = (0..len)
                    .map(|_| match next() % 16 {
                        0 => b'"',
                        1..=3 => b'\\',
                        _ => b'a',
                    })
                    .collect();
                for start in 0..=len {
                    let want = by_bytes(&bytes, start);
                    assert_eq!(
                        skip_string_unchecked(&bytes, start),
                        want,
                        "{:?} from {start}",
                        std::string::String::from_utf8_lossy(&bytes)
                    );
                }
            }
        }
    }

    /// The block scan against a byte loop, from every start on texts of every length up to a
    /// few blocks, so every split between whole blocks and the overlapping last block is hit.
    #[test]
    fn the_string_stop_scan_agrees_with_a_byte_loop_at_every_offset_and_length() {
        fn by_bytes(bytes: &[u8], pos: usize, non_ascii: bool) -> usize {
            (pos..bytes.len())
                .find(|&i| {
                    matches!(bytes[i], b'"' | b'\\' | 0..=0x1f) || (non_ascii && bytes[i] >= 0x80)
                })
                .unwrap_or(bytes.len().max(pos))
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in 0..80 {
            for _ in 0..40 {
                // Mostly plain bytes, a stop now and then, so runs of every length occur.
                let bytes: std::vec::Vec<u8> = (0..len)
                    .map(|_| match next() % 24 {
                        0 => b'"',
                        1 => b'\\',
                        2 => 0x1f,
                        3 => 0x80,
                        _ => b'a',
                    })
                    .collect();
                for pos in 0..=len + 2 {
                    assert_eq!(
                        skip_plain::<false>(&bytes, pos),
                        by_bytes(&bytes, pos, false),
                        "{bytes:?} {pos}"
                    );
                    assert_eq!(
                        skip_plain::<true>(&bytes, pos),
                        by_bytes(&bytes, pos, true),
                        "{bytes:?} {pos}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_string_stop_scan_finds_the_first_special_byte() {
        for len in 0..40 {
            for special in [b'"', b'\\', 0x00, 0x1f] {
                for at in 0..len {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    // Bytes around the stop that could confuse the word arithmetic.
                    if at + 1 < len {
                        bytes[at + 1] = 0x80;
                    }
                    if at > 0 {
                        bytes[at - 1] = 0xff;
                    }
                    assert_eq!(skip_plain::<false>(&bytes, 0), at, "{bytes:?}");
                }
                assert_eq!(skip_plain::<false>(&vec![b'a'; len], 0), len);
            }
        }
        // Bytes just above the stops are plain.
        let plain = [b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xc3, 0xff, 0x21];
        let bytes: std::vec::Vec<u8> = plain.iter().cycle().take(64).copied().collect();
        assert_eq!(skip_plain::<false>(&bytes, 0), 64);
    }

    /// The sequence check against `core::str::from_utf8` for every lead and second byte,
    /// with the third and fourth bytes at and around the continuation range's edges.
    #[test]
    fn utf8_sequences_agree_with_core_on_every_two_byte_prefix() {
        let edges = [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff];
        for lead in 0x80..=0xffu8 {
            for second in 0..=0xffu8 {
                for third in edges {
                    for fourth in edges {
                        let bytes = [lead, second, third, fourth];
                        // The sequence is the shortest prefix of two bytes or more that is
                        // UTF-8 (a shorter one would be a whole sequence already).
                        let want = (2..=4).find(|&len| core::str::from_utf8(&bytes[..len]).is_ok());
                        assert_eq!(utf8_sequence_len(&bytes, 0), want, "{bytes:x?}");
                        // Cut short at every length.
                        for len in 0..4 {
                            let cut = &bytes[..len];
                            let want = (2..=len).find(|&n| core::str::from_utf8(&cut[..n]).is_ok());
                            assert_eq!(utf8_sequence_len(cut, 0), want, "{cut:x?}");
                        }
                    }
                }
            }
        }
    }

    /// The checking scan against `from_utf8` then [`scan`]: the same verdict on random byte
    /// strings (JSON strings with random bytes inside, valid UTF-8 or not, and random bytes
    /// anywhere), and the text it hands back is the input.
    #[test]
    fn the_checking_scan_agrees_with_from_utf8_then_scan() {
        fn property(prefix: std::vec::Vec<u8>, inside: std::vec::Vec<u8>, text: String) -> bool {
            let mut bytes = std::vec::Vec::from(&b"{\"a\":[\""[..]);
            bytes.extend_from_slice(&prefix);
            bytes.extend_from_slice(text.as_bytes());
            bytes.extend_from_slice(&inside);
            bytes.extend_from_slice(b"\"]}");
            for candidate in [&bytes[..], &prefix, &inside, text.as_bytes()] {
                let want = match core::str::from_utf8(candidate) {
                    Ok(text) => parse_value(text).map(|value| (text, value)),
                    Err(error) => Err(JsonError::new(
                        JsonErrorKind::InvalidUtf8,
                        error.valid_up_to(),
                    )),
                };
                let got = scan_bytes(candidate, &mut ());
                if got != want {
                    return false;
                }
                if let Ok((text, _)) = got
                    && text.as_bytes() != candidate
                {
                    return false;
                }
            }
            true
        }
        QuickCheck::new()
            .tests(5_000)
            .quickcheck(property as fn(std::vec::Vec<u8>, std::vec::Vec<u8>, String) -> bool);
    }

    /// Hand-picked lines: where the UTF-8 error is reported whatever the JSON error is, and
    /// runs of non-ASCII text across the block edges.
    #[test]
    fn the_checking_scan_reports_utf8_before_json() {
        let invalid_utf8 = |offset| Err(JsonError::new(JsonErrorKind::InvalidUtf8, offset));
        let cases: [(&[u8], Result<(), JsonError>); 10] = [
            (b"\"\xff\"", invalid_utf8(1)),
            // Not JSON before the bad byte: the UTF-8 error still wins.
            (b"x \"\xc3\x28\"", invalid_utf8(3)),
            (
                b"\xe2\x82\xac",
                Err(JsonError::new(JsonErrorKind::ExpectedValue, 0)),
            ),
            (b"\"\xed\xa0\x80\"", invalid_utf8(1)),
            (b"\"\xf4\x90\x80\x80\"", invalid_utf8(1)),
            (b"\"\xc0\xaf\"", invalid_utf8(1)),
            (b"\"\xe2\x82\"", invalid_utf8(1)),
            (b"\"\xe2\x82", invalid_utf8(1)),
            ("\"ab\u{20ac}\u{10ffff}\u{e9}\"".as_bytes(), Ok(())),
            (
                "[\"\u{4e2d}\u{6587}\u{6587}\u{6587}\u{6587}\u{6587}\u{6587}\",1]".as_bytes(),
                Ok(()),
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(scan_bytes(bytes, &mut ()).map(|_| ()), want, "{bytes:x?}");
        }
        // Every split of a non-ASCII run against the blocks.
        for before in 0..40 {
            let text = std::format!("\"{}\u{e9}\u{4e2d}\u{1f600}z\"", "a".repeat(before));
            assert!(scan_bytes(text.as_bytes(), &mut ()).is_ok(), "{text}");
            let mut bytes = text.into_bytes();
            let at = 1 + before + 1;
            bytes[at] = b'a';
            assert_eq!(
                scan_bytes(&bytes, &mut ()).map(|_| ()),
                invalid_utf8(at - 1),
                "{bytes:x?}"
            );
        }
    }
}
