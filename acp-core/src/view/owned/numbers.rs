//! Numbers serde_json cannot hold. It refuses a number beyond `f64` (`1e400`) wherever it
//! reads one as a number: in the lenient fields the views read as absent when they hold no
//! string, and anywhere inside a `_meta` that is not an object, which the views drop unread.
//! The fast path declines where such a number may be; the checks here are conservative (any
//! exponent or very long number counts) and cheap, since they decide the common case.

use crate::wire::json::skip_ws_unchecked;

/// Whether every number in `text` that follows a `:`, `,` or `[` (a member's value or an
/// array element) fits; numbers inside strings count too, which only makes the fast path
/// decline more often.
///
/// Most lines hold a few such bytes among hundreds of bytes of text, so the text is checked
/// 32 bytes at a time without branches (the compiler makes it a few vector compares) for one
/// followed by what may start a number; only those blocks are looked at closely.
pub(super) fn fit(text: &str) -> bool {
    const BLOCK: usize = 32;
    let bytes = text.as_bytes();
    let mut at = 0;
    // Bounded by the text: every step moves one block on.
    while let Some(window) = bytes
        .get(at..at + BLOCK + 2)
        .and_then(|window| <&[u8; BLOCK + 2]>::try_from(window).ok())
    {
        let mut suspect = false;
        for i in 0..BLOCK {
            let (next, after) = (window[i + 1], window[i + 2]);
            suspect |= separator(window[i])
                & (starts_number(next) | (space(next) & (starts_number(after) | space(after))));
        }
        if suspect && !(at..at + BLOCK).all(|i| fits_after(bytes, i)) {
            return false;
        }
        at += BLOCK;
    }
    (at..bytes.len()).all(|i| fits_after(bytes, i))
}

/// [`fit`] for `outer` but the span of `hole` (a string's contents, inside `outer`), where no
/// number can be: the long text of a block need not be looked at.
pub(super) fn fit_around(outer: &str, hole: &str) -> bool {
    let start = (hole.as_ptr() as usize).wrapping_sub(outer.as_ptr() as usize);
    match (
        outer.get(..start),
        outer.get(start.saturating_add(hole.len())..),
    ) {
        (Some(before), Some(after)) => fit(before) && fit(after),
        _ => fit(outer),
    }
}

/// Whether the value starting at `bytes[at]` (after whitespace), if a number, fits.
pub(super) fn value_fits(bytes: &[u8], at: usize) -> bool {
    let start = skip_ws_unchecked(bytes, at);
    let mut end = start;
    // Bounded by the text.
    while let Some(&byte) = bytes.get(end) {
        match byte {
            b'0'..=b'9' | b'-' | b'.' => end += 1,
            b'e' | b'E' if end > start => return false,
            _ => break,
        }
    }
    // Far below the length of a number that overflows an `f64` without an exponent.
    end - start <= 300
}

/// Unless `bytes[i]` is a separator, true; else [`value_fits`] for what follows it.
fn fits_after(bytes: &[u8], i: usize) -> bool {
    !bytes.get(i).is_some_and(|&b| separator(b)) || value_fits(bytes, i + 1)
}

fn separator(b: u8) -> bool {
    (b == b':') | (b == b',') | (b == b'[')
}

fn starts_number(b: u8) -> bool {
    (b == b'-') | b.is_ascii_digit()
}

fn space(b: u8) -> bool {
    (b == b' ') | (b == b'\n') | (b == b'\r') | (b == b'\t')
}

#[cfg(test)]
mod tests {
    use super::{fit, fit_around};
    use alloc::format;

    #[test]
    fn numbers_past_f64_are_found_at_every_offset() {
        for pad in 0..70 {
            let pad = "x".repeat(pad);
            for (value, fits) in [
                ("1", true),
                ("-12.5", true),
                ("\"1e400\"", true),
                ("[1,2]", true),
                ("1e400", false),
                ("-2E+999", false),
                ("0.5e-3", false),
                (" \n1e5", false),
                ("[1e400]", false),
                ("[1, \t-1e400]", false),
                ("[[ 1E9]]", false),
            ] {
                let text = format!(r#"{{"{pad}":{value}}}"#);
                assert_eq!(fit(&text), fits, "{text}");
            }
            let long = "9".repeat(301);
            assert!(!fit(&format!(r#"{{"{pad}":{long}}}"#)));
            assert!(fit(&format!(r#"{{"{pad}":{}}}"#, &long[1..])));
            // Inside a string too: conservative.
            assert!(!fit(&format!(r#"{{"k":"{pad}:1e5"}}"#)));
            assert!(!fit(&format!(r#"{{"k":"{pad}, 2e5"}}"#)));
        }
    }

    #[test]
    fn the_hole_is_not_looked_at() {
        let text = r#"{"text":"a:1e5","_meta":1e400}"#;
        let hole = &text[9..14];
        assert_eq!(hole, "a:1e5");
        assert!(!fit_around(text, hole));
        let text = r#"{"text":"a:1e5","_meta":1}"#;
        assert!(fit_around(text, &text[9..14]));
        assert!(!fit(text));
    }
}
