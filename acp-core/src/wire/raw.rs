/// A span of JSON text that the scanner has already validated: exactly one JSON value, with no
/// surrounding whitespace. Borrowed from the line it came from.
///
/// Typed decoding (serde_json under `alloc`, or the borrowed views) starts from here, so the
/// method can pick the type before any of it is parsed.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RawValue<'a>(&'a str);

impl<'a> RawValue<'a> {
    /// Wraps text the caller has validated as exactly one JSON value.
    ///
    /// Only the scanner and the tests construct these; passing text that is not one valid
    /// JSON value breaks the guarantees of everything that reads it (but never memory safety).
    pub(crate) const fn new_unchecked(text: &'a str) -> Self {
        Self(text)
    }

    /// `{}`: what an absent or `null` object reads as where that is allowed.
    pub const EMPTY_OBJECT: RawValue<'static> = RawValue("{}");

    /// The JSON text of the value.
    pub const fn get(&self) -> &'a str {
        self.0
    }
}

impl core::fmt::Debug for RawValue<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "RawValue({})", self.0)
    }
}

impl core::fmt::Display for RawValue<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.0)
    }
}

/// The contents of a JSON string literal, between its quotes and still escaped exactly as they
/// appeared on the wire. Validated: every escape is well formed.
///
/// Most strings on the wire carry no escapes; [`JsonStr::as_plain`] returns those without any
/// copying. Unescaping is done on demand (see the methods in [`crate::wire::json`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct JsonStr<'a> {
    raw: &'a str,
    escaped: bool,
}

impl<'a> JsonStr<'a> {
    /// Wraps the validated contents of a string literal; `escaped` says whether it holds a `\`.
    pub(crate) const fn new_unchecked(raw: &'a str, escaped: bool) -> Self {
        Self { raw, escaped }
    }

    /// The contents as they appear on the wire, escapes included (no quotes).
    pub const fn raw(&self) -> &'a str {
        self.raw
    }

    /// Whether the contents hold at least one escape sequence.
    pub const fn has_escapes(&self) -> bool {
        self.escaped
    }

    /// The decoded text when it needed no unescaping, without copying.
    pub const fn as_plain(&self) -> Option<&'a str> {
        if self.escaped { None } else { Some(self.raw) }
    }
}

impl core::fmt::Debug for JsonStr<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "JsonStr(\"{}\")", self.raw)
    }
}
