//! The JSON-RPC message writers: each writes exactly one compact line ending in `\n`.
//!
//! Keys come in the order `jsonrpc`, `id`, `method`/`result`/`error`, `params`, as Agentao and
//! the official SDKs write them:
//! `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{…}}`.

use core::fmt::{self, Write as _};

use serde::Serialize;

use super::error::{EncodeError, ValueError};
use super::escape::{EscapingWriter, write_escaped};
use super::number::{write_i64, write_u64};
use super::ser::to_sink;
use super::sink::Sink;
use crate::wire::{ErrorCode, Id};

type Result<S> = core::result::Result<(), EncodeError<<S as Sink>::Error>>;

/// The id of a request we write: one of our own counters, or an id taken from the wire (a proxy
/// forwarding a request, a test replaying one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutgoingId<'a> {
    /// Our own outgoing id: an integer counting up per connection.
    Counter(u64),
    /// An id as it appeared on the wire, written back exactly.
    Wire(Id<'a>),
}

impl From<u64> for OutgoingId<'_> {
    fn from(counter: u64) -> Self {
        OutgoingId::Counter(counter)
    }
}

impl<'a> From<Id<'a>> for OutgoingId<'a> {
    fn from(id: Id<'a>) -> Self {
        OutgoingId::Wire(id)
    }
}

#[inline]
fn put<S: Sink + ?Sized>(sink: &mut S, bytes: &[u8]) -> Result<S> {
    sink.write_bytes(bytes).map_err(EncodeError::Sink)
}

#[inline]
fn put_id<S: Sink + ?Sized>(sink: &mut S, id: Id<'_>) -> Result<S> {
    match id {
        Id::Null => put(sink, b"null"),
        id => to_sink(sink, &id),
    }
}

/// Writes `"method"` (quoted, escaped).
#[inline]
fn put_method<S: Sink + ?Sized>(sink: &mut S, method: &str) -> Result<S> {
    write_escaped(sink, method).map_err(EncodeError::Sink)?;
    put(sink, b"\"")
}

/// Writes `,"params":…` when there are params, then closes the line.
#[inline]
fn finish_with_params<S, P>(sink: &mut S, params: Option<&P>) -> Result<S>
where
    S: Sink + ?Sized,
    P: Serialize + ?Sized,
{
    if let Some(params) = params {
        put(sink, b",\"params\":")?;
        to_sink(sink, params)?;
    }
    put(sink, b"}\n")
}

/// Writes a request line. `params: None` omits the member (write `None::<&()>`).
///
/// ```
/// use acp_core::wire::encode::{encode_line, write_request};
///
/// let mut buf = [0u8; 128];
/// let n = encode_line(&mut buf, |line| {
///     write_request(line, 1, "session/new", Some(&[("cwd", "/tmp")]))
/// })
/// .unwrap();
/// assert_eq!(
///     &buf[..n],
///     b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":[[\"cwd\",\"/tmp\"]]}\n"
/// );
/// ```
pub fn write_request<'a, S, P>(
    sink: &mut S,
    id: impl Into<OutgoingId<'a>>,
    method: &str,
    params: Option<&P>,
) -> Result<S>
where
    S: Sink + ?Sized,
    P: Serialize + ?Sized,
{
    put(sink, b"{\"jsonrpc\":\"2.0\",\"id\":")?;
    match id.into() {
        OutgoingId::Counter(n) => write_u64(sink, n).map_err(EncodeError::Sink)?,
        OutgoingId::Wire(id) => put_id(sink, id)?,
    }
    put(sink, b",\"method\":\"")?;
    put_method(sink, method)?;
    finish_with_params(sink, params)
}

/// Writes a notification line. `params: None` omits the member (write `None::<&()>`).
pub fn write_notification<S, P>(sink: &mut S, method: &str, params: Option<&P>) -> Result<S>
where
    S: Sink + ?Sized,
    P: Serialize + ?Sized,
{
    put(sink, b"{\"jsonrpc\":\"2.0\",\"method\":\"")?;
    put_method(sink, method)?;
    finish_with_params(sink, params)
}

/// Writes a success response line. A `result` that serializes as `null` is written as
/// `"result":null`.
pub fn write_result<S, R>(sink: &mut S, id: Id<'_>, result: &R) -> Result<S>
where
    S: Sink + ?Sized,
    R: Serialize + ?Sized,
{
    put(sink, b"{\"jsonrpc\":\"2.0\",\"id\":")?;
    put_id(sink, id)?;
    put(sink, b",\"result\":")?;
    to_sink(sink, result)?;
    put(sink, b"}\n")
}

/// Writes an error response line. `message` is formatted straight into the sink, escaped as it
/// goes; `data: None` omits the member (write `None::<&()>`).
pub fn write_error<S, M, D>(
    sink: &mut S,
    id: Id<'_>,
    code: ErrorCode,
    message: &M,
    data: Option<&D>,
) -> Result<S>
where
    S: Sink + ?Sized,
    M: fmt::Display + ?Sized,
    D: Serialize + ?Sized,
{
    put(sink, b"{\"jsonrpc\":\"2.0\",\"id\":")?;
    put_id(sink, id)?;
    put(sink, b",\"error\":{\"code\":")?;
    write_i64(sink, i64::from(code.0)).map_err(EncodeError::Sink)?;
    put(sink, b",\"message\":\"")?;
    let mut writer = EscapingWriter::new(&mut *sink);
    if write!(writer, "{message}").is_err() {
        return Err(match writer.error.take() {
            Some(e) => EncodeError::Sink(e),
            None => EncodeError::Value(ValueError::DISPLAY_FAILED),
        });
    }
    put(sink, b"\"")?;
    if let Some(data) = data {
        put(sink, b",\"data\":")?;
        to_sink(sink, data)?;
    }
    put(sink, b"}}\n")
}

/// The kind of a text chunk written by [`write_text_chunk`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextChunkKind {
    /// `agent_message_chunk`: the agent's visible answer.
    AgentMessage,
    /// `agent_thought_chunk`: the agent's reasoning.
    AgentThought,
}

impl TextChunkKind {
    /// The `sessionUpdate` tag.
    pub const fn tag(self) -> &'static str {
        match self {
            TextChunkKind::AgentMessage => "agent_message_chunk",
            TextChunkKind::AgentThought => "agent_thought_chunk",
        }
    }
}

/// A sink that counts what passes through it, so a writer can say where a piece landed.
struct Counting<'s, S: ?Sized> {
    sink: &'s mut S,
    written: usize,
}

impl<S: Sink + ?Sized> Sink for Counting<'_, S> {
    type Error = S::Error;

    #[inline]
    fn write_bytes(&mut self, bytes: &[u8]) -> core::result::Result<(), S::Error> {
        self.sink.write_bytes(bytes)?;
        self.written += bytes.len();
        Ok(())
    }

    #[inline]
    fn write_byte(&mut self, byte: u8) -> core::result::Result<(), S::Error> {
        self.sink.write_byte(byte)?;
        self.written += 1;
        Ok(())
    }
}

/// Writes the `session/update` notification of one plain text chunk (no annotations, no
/// `_meta`, no `messageId`) and returns where the text's escaped contents (between its quotes)
/// lie in the bytes this call wrote, counted from the start of the line.
///
/// The line is byte-identical to [`write_notification`] with the typed update
/// (`{"sessionId":…,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text",
/// "text":…}}}`), written without going through serde: the hot path of a streaming agent.
/// The returned span lets the caller keep the text as it was escaped here (an agent's session
/// history, saved as JSON later) instead of escaping it again.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use acp_core::wire::encode::{TextChunkKind, write_text_chunk};
///
/// let mut line = Vec::new();
/// let span = write_text_chunk(&mut line, "s1", TextChunkKind::AgentMessage, "a \"b\"").unwrap();
/// assert_eq!(&line[span], b"a \\\"b\\\"");
/// # }
/// ```
pub fn write_text_chunk<S: Sink + ?Sized>(
    sink: &mut S,
    session: &str,
    kind: TextChunkKind,
    text: &str,
) -> core::result::Result<core::ops::Range<usize>, EncodeError<S::Error>> {
    let mut out = Counting { sink, written: 0 };
    put(
        &mut out,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"",
    )?;
    write_escaped(&mut out, session).map_err(EncodeError::Sink)?;
    put(&mut out, b"\",\"update\":{\"sessionUpdate\":\"")?;
    put(&mut out, kind.tag().as_bytes())?;
    put(&mut out, b"\",\"content\":{\"type\":\"text\",\"text\":\"")?;
    let start = out.written;
    write_escaped(&mut out, text).map_err(EncodeError::Sink)?;
    let end = out.written;
    put(&mut out, b"\"}}}}\n")?;
    Ok(start..end)
}
