//! Making agent text safe to show to a person on a terminal.
//!
//! An agent's text (messages, tool titles, permission prompts, stderr lines) reaches the user's
//! terminal. A hostile or broken agent could hide commands in it: escape sequences that move the
//! cursor, rewrite the title or the clipboard (OSC 52), or bidirectional overrides that make
//! text read differently from what it is ("Trojan Source"). Everything here removes, character
//! by character, the classes that can do that:
//!
//! | class | range | kept |
//! |---|---|---|
//! | C0 controls | U+0000–U+001F | `\n` and `\t` only; `\r` goes (it can overwrite a line) |
//! | DEL | U+007F | never |
//! | C1 controls | U+0080–U+009F | never (U+009B is a one-byte CSI on some terminals) |
//! | bidi embeddings and overrides | U+202A–U+202E (LRE, RLE, PDF, LRO, RLO) | never |
//! | bidi isolates | U+2066–U+2069 (LRI, RLI, FSI, PDI) | never |
//!
//! **Decision on the implicit marks** U+200E (LRM), U+200F (RLM) and U+061C (ALM): they are
//! **kept**. They are single zero-width characters with no scope: unlike an override or an
//! isolate they cannot open a region that spills past the end of the agent's text, so they
//! cannot reorder what follows it, and right-to-left writers use them to place digits and
//! punctuation correctly. Zero-width joiners (U+200D, emoji sequences) are kept for the same
//! reason.
//!
//! Only the control character itself is removed. The printable rest of an escape sequence
//! (`[31m` after an ESC) stays visible: harmless once the ESC is gone, and it shows the reader
//! that something odd was sent.
//!
//! Nothing here allocates: [`Sanitized`] is a `Display` adapter, [`SafeChars`] an iterator and
//! [`SanitizingWriter`] a `core::fmt::Write` filter. Under `alloc`, [`sanitize`] returns a
//! `String`.

use core::fmt;

/// Whether `c` is removed from text shown to a person (see the module table).
pub const fn is_stripped(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' // C0 minus \t (U+0009) and \n (U+000A)
        | '\u{7f}'                              // DEL
        | '\u{80}'..='\u{9f}'                   // C1
        | '\u{202a}'..='\u{202e}'               // bidi embeddings and overrides
        | '\u{2066}'..='\u{2069}'               // bidi isolates
    )
}

/// Whether `text` contains anything [`is_stripped`] would remove.
pub fn needs_sanitizing(text: &str) -> bool {
    text.chars().any(is_stripped)
}

/// The characters of `text` that are safe to show, in order.
pub fn safe_chars(text: &str) -> SafeChars<'_> {
    SafeChars {
        inner: text.chars(),
    }
}

/// Iterator over the characters of a text that are safe to show; see [`safe_chars`].
#[derive(Clone, Debug)]
pub struct SafeChars<'a> {
    inner: core::str::Chars<'a>,
}

impl Iterator for SafeChars<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        self.inner.by_ref().find(|&c| !is_stripped(c))
    }
}

/// Displays a text with the stripped classes removed, writing the safe runs as whole slices.
///
/// `format!("{}", Sanitized(text))` or `write!(out, "{}", Sanitized(text))`.
#[derive(Clone, Copy, Debug)]
pub struct Sanitized<'a>(pub &'a str);

impl fmt::Display for Sanitized<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_safe(f, self.0)
    }
}

/// A `core::fmt::Write` that passes everything written to it on to `inner`, minus the stripped
/// classes. Wrap a terminal writer in it so no code path can forget to sanitise.
#[derive(Debug)]
pub struct SanitizingWriter<W> {
    inner: W,
}

impl<W: fmt::Write> SanitizingWriter<W> {
    /// Filters everything written into `inner`.
    pub fn new(inner: W) -> Self {
        Self { inner }
    }

    /// The wrapped writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: fmt::Write> fmt::Write for SanitizingWriter<W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        write_safe(&mut self.inner, s)
    }
}

/// Writes the runs of safe characters of `text` into `out`, skipping the stripped ones.
fn write_safe(out: &mut impl fmt::Write, text: &str) -> fmt::Result {
    let mut run_start = 0;
    for (at, c) in text.char_indices() {
        if is_stripped(c) {
            if run_start < at {
                out.write_str(&text[run_start..at])?;
            }
            run_start = at + c.len_utf8();
        }
    }
    if run_start < text.len() {
        out.write_str(&text[run_start..])?;
    }
    Ok(())
}

/// `text` with the stripped classes removed, as a new `String`.
pub fn sanitize(text: &str) -> alloc::string::String {
    let mut out = alloc::string::String::with_capacity(text.len());
    // Writing into a String cannot fail.
    let _ = write_safe(&mut out, text);
    out
}
