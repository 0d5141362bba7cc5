use super::JsonStr;

/// A JSON-RPC request id as it appeared on the wire, borrowed from the line.
///
/// Ids are echoed exactly: an integer keeps its original digits (so `0`, `-1` and integers past
/// 2^53 or even past `i64` survive), and a string keeps its original escapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Id<'a> {
    /// An integer id; the text is its exact digits, with an optional leading `-`.
    Int(&'a str),
    /// A string id, still escaped as on the wire.
    Str(JsonStr<'a>),
    /// `null`: used in error replies to messages whose id is unknown.
    Null,
}

impl Id<'_> {
    /// The id as an `i64`, when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Id::Int(digits) => digits.parse().ok(),
            _ => None,
        }
    }

    /// The id as a `u64`, when it is a non-negative integer that fits. Our own outgoing ids are
    /// always of this kind.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Id::Int(digits) => digits.parse().ok(),
            _ => None,
        }
    }
}
