//! View decode errors: the method, the path of the bad field and what is wrong with it, worded
//! like the owned types' [`DecodeError`](crate::schema::DecodeError) (`session/prompt.prompt[0].text
//! must be a string`), without allocating: the path is a short fixed array of static keys and
//! indices, and the offending text is borrowed from the line.

use core::fmt;

use crate::wire::json::Fragment;
use crate::wire::{ErrorCode, JsonStr, RawValue};

/// The most segments a [`FieldPath`] keeps. The deepest viewed field,
/// `mcpServers[0].env[0].value`, has five.
pub const MAX_PATH_SEGMENTS: usize = 8;

/// Every member name a view reads, so a path segment fits in two bytes: decode results stay
/// small, which keeps the hot, successful path fast.
const KEYS: [&str; 63] = [
    "_meta",
    "additionalDirectories",
    "agentCapabilities",
    "agentInfo",
    "amount",
    "annotations",
    "args",
    "authMethods",
    "blob",
    "clientCapabilities",
    "clientInfo",
    "command",
    "content",
    "cost",
    "currency",
    "cwd",
    "data",
    "description",
    "entries",
    "env",
    "headers",
    "id",
    "kind",
    "line",
    "locations",
    "mcpServers",
    "messageId",
    "mimeType",
    "modes",
    "name",
    "newText",
    "oldText",
    "optionId",
    "options",
    "outcome",
    "path",
    "plan",
    "planId",
    "priority",
    "prompt",
    "protocolVersion",
    "rawInput",
    "rawOutput",
    "resource",
    "sessionId",
    "sessionUpdate",
    "severity",
    "size",
    "status",
    "stopReason",
    "terminalId",
    "text",
    "title",
    "toolCall",
    "toolCallId",
    "type",
    "update",
    "updatedAt",
    "uri",
    "url",
    "used",
    "value",
    "version",
];

/// A segment naming a key outside [`KEYS`] (a bug; shown as `?`).
const UNKNOWN_KEY: u16 = KEYS.len() as u16;
/// Segments at or above this are array indices.
const INDEX_BASE: u16 = 0x8000;

/// One step of a [`FieldPath`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// An object member.
    Key(&'static str),
    /// An array element (indices past 32766 read as 32767).
    Index(u32),
}

impl Segment {
    fn encode(self) -> u16 {
        match self {
            Segment::Key(key) => {
                let found = KEYS.iter().position(|known| *known == key);
                debug_assert!(found.is_some(), "view key {key:?} missing from KEYS");
                found.map_or(UNKNOWN_KEY, |i| i as u16)
            }
            Segment::Index(index) => INDEX_BASE | index.min(u32::from(INDEX_BASE - 1)) as u16,
        }
    }

    fn decode(code: u16) -> Self {
        if code >= INDEX_BASE {
            Segment::Index(u32::from(code - INDEX_BASE))
        } else {
            Segment::Key(KEYS.get(usize::from(code)).copied().unwrap_or("?"))
        }
    }
}

/// Where a bad field sits inside params or result, e.g. `mcpServers[2].name`. Empty when the
/// whole value is at fault.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldPath {
    /// Innermost first: errors are built where they happen and gain their parents on the way
    /// out.
    reversed: [u16; MAX_PATH_SEGMENTS],
    len: u8,
}

impl FieldPath {
    const EMPTY: Self = Self {
        reversed: [0; MAX_PATH_SEGMENTS],
        len: 0,
    };

    /// Whether the path names the whole value.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> impl Iterator<Item = Segment> + '_ {
        self.reversed[..usize::from(self.len)]
            .iter()
            .rev()
            .map(|&code| Segment::decode(code))
    }

    /// Adds an enclosing segment. Paths deeper than [`MAX_PATH_SEGMENTS`] keep their innermost
    /// segments (no viewed type is that deep).
    fn push_outer(&mut self, segment: Segment) {
        if let Some(slot) = self.reversed.get_mut(usize::from(self.len)) {
            *slot = segment.encode();
            self.len += 1;
        }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

impl fmt::Debug for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FieldPath({self})")
    }
}

/// What is wrong with the field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detail<'a> {
    /// `is required`.
    Required,
    /// `must be <noun>`, e.g. `must be a string`.
    MustBe(&'static str),
    /// `must be one of 'a', 'b', got 'c'`.
    OneOf {
        /// The accepted names.
        expected: &'static [&'static str],
        /// What was sent.
        got: JsonStr<'a>,
    },
    /// ``must be <what>, got integer <n>``: an integer outside its range.
    OutOfRange {
        /// The range, e.g. `an integer from 0 to 65535`.
        expected: &'static str,
        /// The integer as sent.
        got: RawValue<'a>,
    },
    /// `must be a non-empty string`.
    EmptyString,
    /// `must not be empty`.
    Empty,
    /// `must be an absolute path, got '<path>'`.
    NotAbsolute(JsonStr<'a>),
    /// `must not appear twice`: a member the type knows, sent twice.
    Duplicate,
}

impl fmt::Display for Detail<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::Required => f.write_str("is required"),
            Detail::MustBe(noun) => write!(f, "must be {noun}"),
            Detail::OneOf { expected, got } => {
                f.write_str("must be one of ")?;
                for (i, name) in expected.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "'{name}'")?;
                }
                write!(f, ", got '{}'", Decoded(*got))
            }
            Detail::OutOfRange { expected, got } => {
                write!(f, "must be {expected}, got integer `{got}`")
            }
            Detail::EmptyString => f.write_str("must be a non-empty string"),
            Detail::Empty => f.write_str("must not be empty"),
            Detail::NotAbsolute(path) => {
                write!(f, "must be an absolute path, got '{}'", Decoded(*path))
            }
            Detail::Duplicate => f.write_str("must not appear twice"),
        }
    }
}

/// Displays a wire string decoded, without a buffer.
pub(crate) struct Decoded<'a>(pub(crate) JsonStr<'a>);

impl fmt::Display for Decoded<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for fragment in self.0.fragments() {
            match fragment {
                Fragment::Text(text) => f.write_str(text)?,
                Fragment::Char(ch) => fmt::Write::write_char(f, ch)?,
            }
        }
        Ok(())
    }
}

/// A bad field, before the method is known: what view decoders return internally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fault<'a> {
    pub(crate) path: FieldPath,
    pub(crate) detail: Detail<'a>,
}

impl<'a> Fault<'a> {
    /// A fault of the value itself (empty path).
    pub(crate) const fn here(detail: Detail<'a>) -> Self {
        Self {
            path: FieldPath::EMPTY,
            detail,
        }
    }

    /// A fault of the member `key` of the value.
    #[cold]
    pub(crate) fn field(key: &'static str, detail: Detail<'a>) -> Self {
        Self::here(detail).at(key)
    }

    /// The same fault, seen from the object holding it under `key`.
    #[cold]
    pub(crate) fn at(mut self, key: &'static str) -> Self {
        self.path.push_outer(Segment::Key(key));
        self
    }

    /// The same fault, seen from the array holding it at `index`.
    #[cold]
    pub(crate) fn at_index(mut self, index: usize) -> Self {
        self.path
            .push_outer(Segment::Index(u32::try_from(index).unwrap_or(u32::MAX)));
        self
    }
}

/// Which part of a message a view read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// A request's or notification's `params`.
    Params,
    /// A response's `result`.
    Result,
}

/// Why a view decode failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ViewErrorKind {
    /// No borrowed view exists for the method in that direction: it is unknown, or it is one
    /// only the owned types (`alloc`) cover. Replied to with `-32601`.
    NoView,
    /// The params (or result) do not fit the method's type (`-32602`).
    InvalidParams,
}

/// A view decode failure, with a message fit for a JSON-RPC error reply. Borrows the method
/// name and any offending text from the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewError<'a> {
    kind: ViewErrorKind,
    method: &'a str,
    part: Part,
    path: FieldPath,
    detail: Option<Detail<'a>>,
}

impl<'a> ViewError<'a> {
    pub(crate) fn no_view(method: &'a str, part: Part) -> Self {
        Self {
            kind: ViewErrorKind::NoView,
            method,
            part,
            path: FieldPath::EMPTY,
            detail: None,
        }
    }

    pub(crate) fn invalid(method: &'a str, part: Part, fault: Fault<'a>) -> Self {
        Self {
            kind: ViewErrorKind::InvalidParams,
            method,
            part,
            path: fault.path,
            detail: Some(fault.detail),
        }
    }

    /// What went wrong, as a category.
    pub fn kind(&self) -> ViewErrorKind {
        self.kind
    }

    /// The method whose message failed.
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// Whether params or a result failed.
    pub fn part(&self) -> Part {
        self.part
    }

    /// The path of the offending field inside params/result; empty when the whole value is at
    /// fault (and for [`ViewErrorKind::NoView`]).
    pub fn path(&self) -> FieldPath {
        self.path
    }

    /// What is wrong with the field; `None` for [`ViewErrorKind::NoView`].
    pub fn detail(&self) -> Option<Detail<'a>> {
        self.detail
    }

    /// The JSON-RPC error code a reply to this failure carries.
    pub fn code(&self) -> ErrorCode {
        match self.kind {
            ViewErrorKind::NoView => ErrorCode::METHOD_NOT_FOUND,
            ViewErrorKind::InvalidParams => ErrorCode::INVALID_PARAMS,
        }
    }
}

/// The same text as the owned types' `DecodeError`: `Method not found`, or
/// `<method>.<path> <detail>` (`<method> params <detail>` / `<method> result[.<path>] <detail>`).
impl fmt::Display for ViewError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(detail) = self.detail else {
            return f.write_str("Method not found");
        };
        f.write_str(self.method)?;
        match (self.part, self.path.is_empty()) {
            (Part::Params, true) => f.write_str(" params")?,
            (Part::Params, false) => f.write_str(".")?,
            (Part::Result, true) => f.write_str(" result")?,
            (Part::Result, false) => f.write_str(" result.")?,
        }
        if !self.path.is_empty() {
            // A path starting with an index (never produced today) would read `method[0]`.
            write!(f, "{}", self.path)?;
        }
        write!(f, " {detail}")
    }
}

impl core::error::Error for ViewError<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_round_trips_through_a_path() {
        for key in KEYS {
            let fault = Fault::field(key, Detail::Required)
                .at_index(40_000)
                .at("update");
            let segments: [Segment; 3] = [
                Segment::Key("update"),
                Segment::Index(32_767),
                Segment::Key(key),
            ];
            assert!(fault.path.segments().eq(segments));
        }
    }

    #[test]
    fn fault_results_stay_small() {
        assert!(core::mem::size_of::<Fault<'_>>() <= 80);
    }
}
