//! `Serialize` for the borrowed wire types, so they are written back verbatim.
//!
//! - [`RawValue`] uses serde_json's raw-value protocol (a struct with serde_json's private
//!   name and one string field). Our serializer copies the text verbatim, and so does serde_json
//!   (`to_writer` and `to_value`) when its `raw_value` feature is on. Any other serializer sees a
//!   struct with one string field: serde_json without `raw_value` writes
//!   `{"$serde_json::private::RawValue":"<the text>"}`, which is valid JSON but not the value.
//! - [`JsonStr`] is a newtype struct with our private name: our serializer copies the escaped
//!   contents verbatim; every other serializer gets the decoded string, which is always correct.
//! - [`Id`]: an integer that a JSON serializer writes back with the same digits (no leading
//!   zeros, not `-0`, within 128 bits) is serialized as that integer, so every serializer writes
//!   the exact digits; any other integer text goes through the raw-value protocol. A string is a
//!   [`JsonStr`]; `Null` is a unit (`null`).

use core::fmt;

use serde::ser::{Error as _, Serialize, SerializeStruct, Serializer};

use super::ser::{JSON_STR_TOKEN, RAW_VALUE_TOKEN};
use crate::wire::{Id, JsonStr, RawValue};

impl Serialize for RawValue<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut raw = serializer.serialize_struct(RAW_VALUE_TOKEN, 1)?;
        raw.serialize_field(RAW_VALUE_TOKEN, self.get())?;
        raw.end()
    }
}

impl Serialize for JsonStr<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(JSON_STR_TOKEN, &Contents(*self))
    }
}

/// What a [`JsonStr`] hands to the serializer inside its newtype struct.
struct Contents<'a>(JsonStr<'a>);

impl Serialize for Contents<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.as_plain() {
            Some(plain) => serializer.serialize_str(plain),
            None => serializer.collect_str(&Unescaped(self.0.raw())),
        }
    }
}

/// Displays escaped string contents decoded, or verbatim under the alternate flag (`{:#}`),
/// which is how our serializer asks for the raw text.
struct Unescaped<'a>(&'a str);

impl fmt::Display for Unescaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            return f.write_str(self.0);
        }
        write_unescaped(f, self.0)
    }
}

/// Decodes JSON string escapes. The input has been validated, but a malformed escape still
/// cannot panic: it decodes to U+FFFD.
fn write_unescaped(f: &mut impl fmt::Write, raw: &str) -> fmt::Result {
    let mut rest = raw;
    // Bounded: every turn consumes at least the backslash or returns.
    while let Some(at) = rest.find('\\') {
        f.write_str(&rest[..at])?;
        let after = &rest[at + 1..];
        let mut chars = after.chars();
        let decoded = match chars.next() {
            Some('"') => '"',
            Some('\\') => '\\',
            Some('/') => '/',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => {
                let (decoded, used) = decode_unicode_escape(&after[1..]);
                f.write_char(decoded)?;
                rest = &after[1 + used..];
                continue;
            }
            Some(_) | None => char::REPLACEMENT_CHARACTER,
        };
        f.write_char(decoded)?;
        rest = chars.as_str();
    }
    f.write_str(rest)
}

/// Decodes the `XXXX` after `\u` (and a following `\uXXXX` low surrogate); returns the char and
/// how many bytes of `text` it used.
fn decode_unicode_escape(text: &str) -> (char, usize) {
    let Some(high) = hex4(text) else {
        return (char::REPLACEMENT_CHARACTER, 0);
    };
    if (0xD800..0xDC00).contains(&high) {
        if text.get(4..6) == Some("\\u")
            && let Some(low) = text.get(6..).and_then(hex4)
            && (0xDC00..0xE000).contains(&low)
        {
            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
            return (
                char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER),
                10,
            );
        }
        return (char::REPLACEMENT_CHARACTER, 4);
    }
    (
        char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER),
        4,
    )
}

fn hex4(text: &str) -> Option<u32> {
    let digits = text.get(..4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

impl Serialize for Id<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Id::Int(digits) => serialize_int_digits(digits, serializer),
            Id::Str(text) => text.serialize(serializer),
            Id::Null => serializer.serialize_unit(),
        }
    }
}

/// Writes integer id digits so that they come out unchanged.
fn serialize_int_digits<S: Serializer>(digits: &str, serializer: S) -> Result<S::Ok, S::Error> {
    let (negative, magnitude) = match digits.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, digits),
    };
    let valid = !magnitude.is_empty()
        && magnitude.bytes().all(|b| b.is_ascii_digit())
        && (magnitude.len() == 1 || !magnitude.starts_with('0'));
    if !valid {
        return Err(S::Error::custom(format_args!(
            "integer id is not a JSON integer: {digits:?}"
        )));
    }
    // Canonical means any serializer writes the number back with exactly these digits.
    let canonical = !(negative && magnitude == "0");
    if canonical {
        if negative {
            if let Ok(n) = digits.parse::<i64>() {
                return serializer.serialize_i64(n);
            }
            if let Ok(n) = digits.parse::<i128>() {
                return serializer.serialize_i128(n);
            }
        } else {
            if let Ok(n) = digits.parse::<u64>() {
                return serializer.serialize_u64(n);
            }
            if let Ok(n) = digits.parse::<u128>() {
                return serializer.serialize_u128(n);
            }
        }
    }
    RawValue::new_unchecked(digits).serialize(serializer)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::String;

    use super::*;

    fn unescape(raw: &str) -> String {
        let mut out = String::new();
        write_unescaped(&mut out, raw).unwrap();
        out
    }

    #[test]
    fn unescaping_decodes_every_escape_form() {
        assert_eq!(
            unescape(r#"a\"b\\c\/d\b\f\n\r\t"#),
            "a\"b\\c/d\u{8}\u{c}\n\r\t"
        );
        assert_eq!(unescape(r"\u00e9\u4e2d\ud83d\ude80"), "é中🚀");
        assert_eq!(unescape("plain é"), "plain é");
    }

    #[test]
    fn malformed_escapes_decode_to_the_replacement_character() {
        assert_eq!(unescape(r"\ud83dx"), "\u{fffd}x");
        assert_eq!(unescape(r"\uzzzz"), "\u{fffd}zzzz");
        assert_eq!(unescape("\\"), "\u{fffd}");
        assert_eq!(unescape(r"\q"), "\u{fffd}");
        assert_eq!(unescape(r"\ud83d\u0041"), "\u{fffd}A");
    }
}
