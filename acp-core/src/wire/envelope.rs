//! The JSON-RPC envelope: one line in, one [`Message`] out, or the exact error reply the line
//! deserves.
//!
//! [`scan`] validates the whole line (a syntax error deep inside `params` is still a parse
//! error) and picks out the envelope members in the same pass. `params`, `result` and
//! `error.data` stay raw: the method handler decides what they must hold.
//!
//! # Rules, checked in this order (R-ENV-1 … R-ENV-8, R-ID-2, R-ID-3 of docs/protocol.md)
//!
//! | line | verdict |
//! |---|---|
//! | not JSON | `-32700`, id null, `Parse error: <where>` |
//! | JSON, not an object (arrays and batches too) | `-32600`, id null, `Invalid Request: expected JSON object` |
//! | `id` not an integer, a string or null (floats and exponents are not integers) | `-32600`, id null, `Invalid Request: id must be an integer, a string or null` |
//! | an envelope member (`jsonrpc`, `id`, `method`, `params`, `result`, `error`) appears twice | `-32600`, the id (null if `id` is the duplicate), `Invalid Request: duplicate member "<key>"` |
//! | `jsonrpc` missing or not exactly `"2.0"` | `-32600`, the id, `Invalid Request: jsonrpc must be '2.0'` |
//! | `method` present but not a non-empty string | `-32600`, the id, `Invalid Request: missing method` |
//! | no `method`, but `result` or `error` | a [`Message::Response`] (see [`Outcome`]) |
//! | no `method`, no `result`, no `error` | `-32600`, the id, `Invalid Request: missing method` |
//! | `method` with an integer or string id | a [`Message::Request`] |
//! | `method` with `id` null or absent | a [`Message::Notification`] (never answered) |
//!
//! Duplicate members are refused rather than resolved first-wins or last-wins because two
//! readers of the same line could otherwise disagree about what it asks for. Duplicates of
//! other members are not looked at: unknown members are ignored. When a request or
//! notification has both `method` and `result`/`error`, `method` wins.
//!
//! Member names are compared after unescaping, so `"jso\u006erpc"` is `jsonrpc`.

use core::fmt;

use super::frame::FrameError;
use super::json::{self, JsonError, JsonErrorKind, MemberSpan, TopMembers, ValueKind};
use super::{ErrorCode, Id, JsonStr, RawValue};

/// One JSON-RPC message, borrowed from its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message<'a> {
    /// A call that expects exactly one response.
    Request(Request<'a>),
    /// A call that must never be answered (`id` absent or null).
    Notification(Notification<'a>),
    /// The answer to one of our requests.
    Response(Response<'a>),
}

/// A request: a method call with an integer or string id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    /// The id to echo in the response; never [`Id::Null`].
    pub id: Id<'a>,
    /// The method name, non-empty.
    pub method: JsonStr<'a>,
    /// The parameters, any JSON value, when present.
    pub params: Option<RawValue<'a>>,
}

/// A notification: a method call without id (or with `id: null`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notification<'a> {
    /// The method name, non-empty.
    pub method: JsonStr<'a>,
    /// The parameters, any JSON value, when present.
    pub params: Option<RawValue<'a>>,
}

/// A response: no `method`, and a `result` or an `error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response<'a> {
    /// The id of the request it answers; [`Id::Null`] when the peer did not know it (or
    /// omitted it).
    pub id: Id<'a>,
    /// What the response says.
    pub outcome: Outcome<'a>,
}

/// What a response says. Malformed responses are still responses, so the request they answer
/// can be settled instead of waiting forever.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome<'a> {
    /// A success: `result`, any JSON value (`null` included).
    Result(RawValue<'a>),
    /// A well formed error object.
    Error(ErrorObject<'a>),
    /// A response the request must be settled with as an error.
    Malformed(MalformedResponse),
}

/// A JSON-RPC error object as received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorObject<'a> {
    /// The error code.
    pub code: ErrorCode,
    /// The message text, still escaped.
    pub message: JsonStr<'a>,
    /// Extra data, when present.
    pub data: Option<RawValue<'a>>,
}

/// Why a response's outcome could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MalformedResponse {
    /// Both `result` and `error` are present.
    ResultAndError,
    /// `error` is not an object.
    ErrorNotObject,
    /// `error.code` is missing, not an integer, or outside `i32`.
    BadCode,
    /// `error.message` is missing or not a string.
    BadMessage,
}

impl fmt::Display for MalformedResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MalformedResponse::ResultAndError => "response has both result and error",
            MalformedResponse::ErrorNotObject => "response error is not an object",
            MalformedResponse::BadCode => "response error code is not a 32-bit integer",
            MalformedResponse::BadMessage => "response error message is not a string",
        })
    }
}

impl core::error::Error for MalformedResponse {}

impl<'a> Message<'a> {
    /// `params.sessionId` when it is a string: a cheap peek for routing, looking only at the
    /// top level of `params`. Always `None` for responses.
    pub fn session_id(&self) -> Option<JsonStr<'a>> {
        let params = match self {
            Message::Request(request) => request.params,
            Message::Notification(notification) => notification.params,
            Message::Response(_) => None,
        };
        params?.get_field("sessionId")?.as_str()
    }

    /// The method name of a request or notification.
    pub fn method(&self) -> Option<JsonStr<'a>> {
        match self {
            Message::Request(request) => Some(request.method),
            Message::Notification(notification) => Some(notification.method),
            Message::Response(_) => None,
        }
    }
}

/// A line that is not a valid JSON-RPC message, and the error reply it gets:
/// `{"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":"<Display of this>"}}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRejection<'a> {
    /// The error code of the reply.
    pub code: ErrorCode,
    /// The id of the reply: the message's id when it could be read, otherwise null.
    pub id: Id<'a>,
    /// What is wrong; its text is the reply's message.
    pub reason: Reason,
}

/// What is wrong with a rejected line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// The framer could not deliver the line.
    Frame(FrameError),
    /// The line is not JSON.
    Json(JsonError),
    /// The line is JSON but not an object.
    NotAnObject,
    /// `id` is neither an integer, a string nor null.
    InvalidId,
    /// An envelope member appears more than once.
    DuplicateMember(&'static str),
    /// `jsonrpc` is missing or not `"2.0"`.
    Version,
    /// No usable `method`, and not a response either.
    MissingMethod,
}

impl LineRejection<'static> {
    /// The reply to a line the framer could not deliver: `-32700` with id null.
    pub fn from_frame_error(error: FrameError) -> Self {
        Self {
            code: ErrorCode::PARSE_ERROR,
            id: Id::Null,
            reason: Reason::Frame(error),
        }
    }
}

impl fmt::Display for LineRejection<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.reason.fmt(f)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Frame(error) => write!(f, "Parse error: {error}"),
            Reason::Json(error) => write!(f, "Parse error: {error}"),
            Reason::NotAnObject => f.write_str("Invalid Request: expected JSON object"),
            Reason::InvalidId => {
                f.write_str("Invalid Request: id must be an integer, a string or null")
            }
            Reason::DuplicateMember(key) => {
                write!(f, "Invalid Request: duplicate member \"{key}\"")
            }
            Reason::Version => f.write_str("Invalid Request: jsonrpc must be '2.0'"),
            Reason::MissingMethod => f.write_str("Invalid Request: missing method"),
        }
    }
}

impl core::error::Error for LineRejection<'_> {}

/// The envelope members, by index into [`Envelope::slots`].
const MEMBERS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];
/// The index of `id` in [`MEMBERS`].
const ID: usize = 1;

/// The envelope members seen while the line is validated, as byte ranges of the line.
#[derive(Default)]
struct Envelope {
    slots: [Option<(usize, usize)>; 6],
    /// Whether each slot is a string holding an escape.
    escaped: [bool; 6],
    /// The first member seen twice.
    duplicate: Option<usize>,
}

/// The index in [`MEMBERS`] of a key, from its contents on the wire.
fn member_index(bytes: &[u8], member: &MemberSpan) -> Option<usize> {
    let (start, end) = member.key;
    if member.key_escaped {
        // The scan checked the key as UTF-8 already; escaped keys are rare enough to check
        // again rather than trust it.
        let key = core::str::from_utf8(bytes.get(start..end)?).ok()?;
        let key = JsonStr::new_unchecked(key, true);
        return MEMBERS.iter().position(|name| key.eq_str(name));
    }
    let len = end - start;
    // The key and its closing quote as one little-endian word, the bytes past the quote
    // cleared: the quote ends every name at its own length and an unescaped key holds none,
    // so the word equals a name's word only when the key is that name.
    if len < 8
        && let Some(word) = bytes.get(start..).and_then(|rest| rest.first_chunk::<8>())
    {
        let key = u64::from_le_bytes(*word) & (u64::MAX >> (8 * (7 - len)));
        return QUOTED_MEMBERS.iter().position(|&name| name == key);
    }
    // Too near the end of the text for a whole word: spelled out, each comparison against a
    // constant.
    match bytes.get(start..end).unwrap_or_default() {
        b"jsonrpc" => Some(0),
        b"id" => Some(1),
        b"method" => Some(2),
        b"params" => Some(3),
        b"result" => Some(4),
        b"error" => Some(5),
        _ => None,
    }
}

/// [`MEMBERS`] each followed by its closing quote, as little-endian words (all are shorter
/// than eight bytes).
const QUOTED_MEMBERS: [u64; 6] = {
    let mut words = [0; 6];
    let mut i = 0;
    while i < MEMBERS.len() {
        let name = MEMBERS[i].as_bytes();
        let mut word = [0u8; 8];
        let mut j = 0;
        while j < name.len() {
            word[j] = name[j];
            j += 1;
        }
        word[name.len()] = b'"';
        words[i] = u64::from_le_bytes(word);
        i += 1;
    }
    words
};

impl TopMembers for Envelope {
    #[inline]
    fn member(&mut self, text: &[u8], member: MemberSpan) {
        if let Some(index) = member_index(text, &member) {
            if self.slots[index].is_some() {
                self.duplicate.get_or_insert(index);
            } else {
                self.slots[index] = Some(member.value);
                self.escaped[index] = member.value_escaped;
            }
        }
    }
}

/// The string a value holds, when it is one; `escaped` is what the scan saw, which spares
/// [`RawValue::as_str`]'s look for backslashes.
fn scanned_str(value: RawValue<'_>, escaped: bool) -> Option<JsonStr<'_>> {
    let inner = value.get().strip_prefix('"')?.strip_suffix('"')?;
    Some(JsonStr::new_unchecked(inner, escaped))
}

/// Reads an `id` value: `None` when it is not an integer, a string or null.
fn read_id(value: RawValue<'_>, escaped: bool) -> Option<Id<'_>> {
    match value.kind() {
        ValueKind::Null => Some(Id::Null),
        ValueKind::String => scanned_str(value, escaped).map(Id::Str),
        ValueKind::Number => {
            let text = value.get();
            let integer = !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'));
            integer.then_some(Id::Int(text))
        }
        _ => None,
    }
}

fn read_outcome<'a>(result: Option<RawValue<'a>>, error: Option<RawValue<'a>>) -> Outcome<'a> {
    match (result, error) {
        (Some(_), Some(_)) => Outcome::Malformed(MalformedResponse::ResultAndError),
        (Some(result), None) => Outcome::Result(result),
        (None, Some(error)) => read_error_object(error),
        // `scan` only builds a response when one of the two is there.
        (None, None) => Outcome::Malformed(MalformedResponse::ErrorNotObject),
    }
}

fn read_error_object(error: RawValue<'_>) -> Outcome<'_> {
    if error.kind() != ValueKind::Object {
        return Outcome::Malformed(MalformedResponse::ErrorNotObject);
    }
    let (mut code, mut message, mut data) = (None, None, None);
    for (key, value) in error.fields() {
        if code.is_none() && key.eq_str("code") {
            code = Some(value);
        } else if message.is_none() && key.eq_str("message") {
            message = Some(value);
        } else if data.is_none() && key.eq_str("data") {
            data = Some(value);
        }
    }
    let Some(code) = code.and_then(|code| i32::try_from(code.as_i64()?).ok()) else {
        return Outcome::Malformed(MalformedResponse::BadCode);
    };
    let Some(message) = message.and_then(|message| message.as_str()) else {
        return Outcome::Malformed(MalformedResponse::BadMessage);
    };
    Outcome::Error(ErrorObject {
        code: ErrorCode(code),
        message,
        data,
    })
}

/// Classifies one line (without its newline) as a JSON-RPC message, or says which error reply
/// it gets. The rules are in the [module docs](self).
pub fn scan(line: &str) -> Result<Message<'_>, LineRejection<'_>> {
    let mut envelope = Envelope::default();
    match json::scan(line, &mut envelope) {
        Ok(value) => classify(line, value, &envelope),
        Err(error) => Err(LineRejection::from_json_error(error)),
    }
}

/// [`scan`] over a line not yet checked as UTF-8 (as [`Framer::next_line_bytes`] gives it),
/// checking it in the same pass. A line that is not UTF-8 gets exactly the rejection the
/// framer's check would have given it (`Parse error: invalid UTF-8 at byte N`, N as
/// `core::str::from_utf8` reports it), whatever else is wrong with it.
///
/// [`Framer::next_line_bytes`]: super::frame::Framer::next_line_bytes
pub fn scan_bytes(line: &[u8]) -> Result<Message<'_>, LineRejection<'_>> {
    let mut envelope = Envelope::default();
    match json::scan_bytes(line, &mut envelope) {
        Ok((line, value)) => classify(line, value, &envelope),
        Err(error) => Err(LineRejection::from_json_error(error)),
    }
}

impl LineRejection<'static> {
    /// The reply to a line that is not JSON (or, from a byte scan, not UTF-8).
    fn from_json_error(error: JsonError) -> Self {
        match error.kind {
            JsonErrorKind::InvalidUtf8 => Self::from_frame_error(FrameError::InvalidUtf8 {
                valid_up_to: error.offset,
            }),
            _ => Self {
                code: ErrorCode::PARSE_ERROR,
                id: Id::Null,
                reason: Reason::Json(error),
            },
        }
    }
}

/// The verdict on a line whose JSON is valid, from the members the scan saw.
#[inline(always)]
fn classify<'a>(
    line: &'a str,
    value: RawValue<'a>,
    envelope: &Envelope,
) -> Result<Message<'a>, LineRejection<'a>> {
    let reject = |code, id, reason| Err(LineRejection { code, id, reason });
    if value.kind() != ValueKind::Object {
        return reject(ErrorCode::INVALID_REQUEST, Id::Null, Reason::NotAnObject);
    }
    // Each member is sliced out of the line only where it is used.
    let raw = |slot: Option<(usize, usize)>| {
        slot.map(|(start, end)| RawValue::new_unchecked(line.get(start..end).unwrap_or_default()))
    };
    let [jsonrpc, id, method, params, result, error] = envelope.slots;
    let [jsonrpc_escaped, id_escaped, method_escaped, ..] = envelope.escaped;
    let id = match raw(id).map(|id| read_id(id, id_escaped)) {
        None => Id::Null,
        Some(Some(id)) => id,
        Some(None) => return reject(ErrorCode::INVALID_REQUEST, Id::Null, Reason::InvalidId),
    };
    if let Some(index) = envelope.duplicate {
        let id = if index == ID { Id::Null } else { id };
        return reject(
            ErrorCode::INVALID_REQUEST,
            id,
            Reason::DuplicateMember(MEMBERS[index]),
        );
    }
    let version_ok = match raw(jsonrpc) {
        // The usual spelling, compared as one constant.
        Some(version) if !jsonrpc_escaped => version.get() == "\"2.0\"",
        version => version
            .and_then(|v| scanned_str(v, jsonrpc_escaped))
            .is_some_and(|v| v.eq_str("2.0")),
    };
    if !version_ok {
        return reject(ErrorCode::INVALID_REQUEST, id, Reason::Version);
    }
    match raw(method) {
        Some(method) => {
            // Any escape decodes to at least one character, so a non-empty raw text is a
            // non-empty name.
            let method = scanned_str(method, method_escaped);
            let Some(method) = method.filter(|m| !m.raw().is_empty()) else {
                return reject(ErrorCode::INVALID_REQUEST, id, Reason::MissingMethod);
            };
            let params = raw(params);
            Ok(match id {
                Id::Null => Message::Notification(Notification { method, params }),
                id => Message::Request(Request { id, method, params }),
            })
        }
        None if result.is_some() || error.is_some() => Ok(Message::Response(Response {
            id,
            outcome: read_outcome(raw(result), raw(error)),
        })),
        None => reject(ErrorCode::INVALID_REQUEST, id, Reason::MissingMethod),
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// `jsonrpc`, `method` and a string `id` are read with the escape flag the scan found, not
    /// looked at again: escaped and plain spellings must read the same.
    #[test]
    fn string_members_carry_the_escape_flag_of_the_scan() {
        let line = r#"{"jsonrpc":"2\u002e0","id":"r\u0031","method":"a\/b","params":[]}"#;
        let Ok(Message::Request(request)) = scan(line) else {
            panic!("{line}");
        };
        assert!(request.method.has_escapes());
        assert!(request.method.eq_str("a/b"));
        let Id::Str(id) = request.id else {
            panic!("{:?}", request.id);
        };
        assert!(id.has_escapes());
        assert!(id.eq_str("r1"));

        let line = r#"{"jsonrpc":"2.0","id":"r1","method":"a/b"}"#;
        let Ok(Message::Request(request)) = scan(line) else {
            panic!("{line}");
        };
        assert_eq!(request.method.as_plain(), Some("a/b"));
        assert_eq!(request.id, Id::Str(JsonStr::new_unchecked("r1", false)));
    }

    /// The word comparison against names that differ by one byte or one letter more or less,
    /// and the same keys too near the end of the text for a whole word (the slice comparison).
    #[test]
    fn member_names_match_exactly_by_word_and_by_slice() {
        let keys = [
            ("jsonrpc", Some(0)),
            ("id", Some(1)),
            ("method", Some(2)),
            ("params", Some(3)),
            ("result", Some(4)),
            ("error", Some(5)),
            ("", None),
            ("i", None),
            ("ids", None),
            ("Id", None),
            ("jsonrp", None),
            ("jsonrpcx", None),
            ("jsonrpd", None),
            ("method2", None),
            ("metho", None),
            ("errors", None),
            ("erro", None),
            ("resul", None),
            ("paramsXY", None),
            ("d", None),
        ];
        for (key, want) in keys {
            for tail in ["\":1,\"more\":2}", "\""] {
                let text = std::format!("{{\"{key}{tail}");
                let member = MemberSpan {
                    key: (2, 2 + key.len()),
                    key_escaped: false,
                    value: (0, 0),
                    value_escaped: false,
                };
                assert_eq!(member_index(text.as_bytes(), &member), want, "{text}");
            }
        }
    }
}
