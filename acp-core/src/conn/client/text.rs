//! Owned copies of peer text an event carries: raw JSON ([`Payload`]) and human text
//! ([`Text`]). Growable under `alloc`; without it they have fixed capacities, and the bounded
//! behaviour is explicit (a payload that does not fit is marked, a message is cut).

use core::fmt;

use crate::wire::JsonStr;

/// The most bytes of raw JSON a [`Payload`] keeps without `alloc`.
pub const PAYLOAD_MAX: usize = 1024;

/// The most bytes of a [`Text`] without `alloc`; longer text is cut at a character boundary.
pub const TEXT_MAX: usize = 256;

#[cfg(feature = "alloc")]
type PayloadBuf = alloc::string::String;
#[cfg(not(feature = "alloc"))]
type PayloadBuf = heapless::String<PAYLOAD_MAX>;

#[cfg(feature = "alloc")]
type TextBuf = alloc::string::String;
#[cfg(not(feature = "alloc"))]
type TextBuf = heapless::String<TEXT_MAX>;

/// A copy of a JSON value from the peer (`params`, `result`), exactly as it was on the wire.
///
/// Under `alloc` every payload is kept. Without `alloc` a payload longer than
/// [`PAYLOAD_MAX`] is not kept: [`Payload::as_json`] is `None` and [`Payload::len`] says how
/// long it was, so the event is still delivered (never dropped) and the application can still
/// answer the request it belongs to.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Payload {
    text: PayloadBuf,
    len: usize,
}

impl Payload {
    /// Copies `json` (which the caller has validated).
    pub fn new(json: &str) -> Self {
        let mut text = PayloadBuf::new();
        if !push_str(&mut text, json) {
            text = PayloadBuf::new();
        }
        Self {
            text,
            len: json.len(),
        }
    }

    /// An absent value (no `params`).
    pub fn none() -> Self {
        Self::default()
    }

    /// The JSON text; `None` when it was absent, or (without `alloc`) too long to keep.
    pub fn as_json(&self) -> Option<&str> {
        (self.len > 0 && self.text.len() == self.len).then_some(self.text.as_str())
    }

    /// The length in bytes of the JSON on the wire (0 when absent).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there was no value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the value was on the wire but is too long to be kept (never under `alloc`).
    pub fn is_oversized(&self) -> bool {
        self.len > 0 && self.text.len() != self.len
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_json() {
            Some(json) => write!(f, "Payload({json})"),
            None if self.is_empty() => f.write_str("Payload(none)"),
            None => write!(f, "Payload(<{} bytes, not kept>)", self.len),
        }
    }
}

/// Text from the peer meant for people or logs (an error message, a method name), unescaped.
/// Without `alloc` it keeps the first [`TEXT_MAX`] bytes.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Text(TextBuf);

impl Text {
    /// Copies `s` (cut without `alloc`).
    pub fn new(s: &str) -> Self {
        let mut text = Self::default();
        text.push_chars(s.chars());
        text
    }

    /// The decoded contents of a JSON string.
    pub fn from_json(s: JsonStr<'_>) -> Self {
        match s.as_plain() {
            Some(plain) => Self::new(plain),
            None => {
                let mut text = Self::default();
                text.push_chars(s.chars());
                text
            }
        }
    }

    fn push_chars(&mut self, chars: impl Iterator<Item = char>) {
        for ch in chars {
            if !push_char(&mut self.0, ch) {
                break;
            }
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Appends `s`; false when it does not fit (never under `alloc`).
#[cfg(feature = "alloc")]
fn push_str(buf: &mut alloc::string::String, s: &str) -> bool {
    buf.push_str(s);
    true
}

#[cfg(not(feature = "alloc"))]
fn push_str<const N: usize>(buf: &mut heapless::String<N>, s: &str) -> bool {
    buf.push_str(s).is_ok()
}

/// Appends `ch`; false when it does not fit (never under `alloc`).
#[cfg(feature = "alloc")]
fn push_char(buf: &mut alloc::string::String, ch: char) -> bool {
    buf.push(ch);
    true
}

#[cfg(not(feature = "alloc"))]
fn push_char<const N: usize>(buf: &mut heapless::String<N>, ch: char) -> bool {
    buf.push(ch).is_ok()
}
