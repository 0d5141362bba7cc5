//! Text kept as JSON (R-STORE-7): the agent's streamed answer is recorded from the bytes
//! acp-core's encoder escaped into each chunk's `session/update` line, and the session file
//! gets those bytes as they are. A long answer is escaped once, on the wire, however often the
//! session is saved.

use std::borrow::Cow;
use std::fmt;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The struct name under which serde_json (with its `raw_value` feature) writes a field's
/// string as raw JSON text; acp-core's encoder knows it too.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A text as a JSON string literal, quotes included, escaped exactly as serde_json and
/// acp-core's encoder escape (`"`, `\` and control characters only; the two are
/// byte-identical). The literal is one slice, written into a file with no copy and no scan.
#[derive(Clone, PartialEq, Eq)]
pub struct EscapedText {
    /// `"`, the escaped contents, `"`.
    literal: String,
    /// Whether the contents hold an escape; without one they are the plain text.
    escapes: bool,
}

impl Default for EscapedText {
    fn default() -> Self {
        Self {
            literal: "\"\"".to_owned(),
            escapes: false,
        }
    }
}

impl EscapedText {
    /// The JSON string of `text`.
    pub fn from_plain(text: &str) -> Self {
        let mut escaped = Self::default();
        escaped.push_plain(text);
        escaped
    }

    /// Appends contents escaped already: the span acp-core's encoder returns for a text it
    /// wrote ([`acp_core::conn::agent::AgentConnection::send_text_chunk`]).
    pub fn push_escaped(&mut self, escaped: &str) {
        self.literal.pop();
        self.literal.push_str(escaped);
        self.literal.push('"');
        self.escapes |= escaped.as_bytes().contains(&b'\\');
    }

    /// Appends plain text, escaping it.
    pub fn push_plain(&mut self, text: &str) {
        self.literal.pop();
        let from = self.literal.len();
        acp_core::wire::encode::escape_into(&mut self.literal, text);
        self.escapes |= self.literal.as_bytes()[from..].contains(&b'\\');
        self.literal.push('"');
    }

    /// The escaped contents, without the quotes.
    pub fn escaped(&self) -> &str {
        &self.literal[1..self.literal.len() - 1]
    }

    /// The JSON string literal, quotes included.
    pub fn literal(&self) -> &str {
        &self.literal
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.literal.len() == 2
    }

    /// The plain text: borrowed when nothing was escaped (most text), else decoded.
    pub fn to_plain(&self) -> Cow<'_, str> {
        if !self.escapes {
            return Cow::Borrowed(self.escaped());
        }
        // The literal is valid JSON by construction, so this cannot fail; if it did, the
        // escaped form is the closest there is.
        match serde_json::from_str::<String>(&self.literal) {
            Ok(plain) => Cow::Owned(plain),
            Err(_) => Cow::Borrowed(self.escaped()),
        }
    }
}

impl fmt::Debug for EscapedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EscapedText({})", self.literal)
    }
}

/// A JSON string literal written as it is: serde_json (with `raw_value`, which acp-core turns
/// on) and acp-core's encoder copy it; a serializer that does not know the name would write a
/// one-field object, which is why only JSON writers are given these.
pub(crate) struct RawLiteral<'a>(pub(crate) &'a str);

impl Serialize for RawLiteral<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut raw = serializer.serialize_struct(RAW_VALUE_TOKEN, 1)?;
        raw.serialize_field(RAW_VALUE_TOKEN, self.0)?;
        raw.end()
    }
}

impl Serialize for EscapedText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RawLiteral(&self.literal).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for EscapedText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<'de, str>::deserialize(deserializer)?;
        Ok(Self::from_plain(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLES: [&str; 6] = [
        "",
        "plain ascii",
        "quote \" backslash \\ slash /",
        "lines\nand\ttabs\r\u{8}\u{c}\u{0}\u{1f}",
        "déjà vu — 日本語 🎉",
        "\\",
    ];

    /// R-STORE-7: the literal is serde_json's string for the text, however it was built (at
    /// once, plain piece by piece, or from escaped pieces), and decodes back to the text.
    #[test]
    fn the_literal_is_serde_jsons_string_and_decodes_back() {
        for text in SAMPLES {
            let expected = serde_json::to_string(text).unwrap();
            let at_once = EscapedText::from_plain(text);
            assert_eq!(at_once.literal(), expected);
            assert_eq!(at_once.to_plain(), text);
            let mut by_pieces = EscapedText::default();
            let mut by_escaped = EscapedText::default();
            for piece in text.split_inclusive(['\\', '"', 'e', '\n']) {
                by_pieces.push_plain(piece);
                let quoted = serde_json::to_string(piece).unwrap();
                by_escaped.push_escaped(&quoted[1..quoted.len() - 1]);
            }
            assert_eq!(by_pieces, at_once);
            assert_eq!(by_escaped, at_once);
            assert_eq!(serde_json::to_string(&at_once).unwrap(), expected);
            let mut pretty = Vec::new();
            serde_json::to_writer_pretty(&mut pretty, &[&at_once]).unwrap();
            let mut plain = Vec::new();
            serde_json::to_writer_pretty(&mut plain, &[text]).unwrap();
            assert_eq!(pretty, plain);
            let back: EscapedText = serde_json::from_str(&expected).unwrap();
            assert_eq!(back, at_once);
            assert_eq!(at_once.is_empty(), text.is_empty());
        }
    }
}
