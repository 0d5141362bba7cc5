//! The session file: Agentao's JSON format (R-STORE-1) field for field, plus
//! one extra key with our lossless copy of the turns.
//!
//! ```text
//! {
//!   "session_id": "sess_…",            the ACP id
//!   "title": "first user message…",    ≤ 60 characters then "…"
//!   "created_at": "2026-…+00:00",      ISO 8601 with offset, kept across saves
//!   "updated_at": "2026-…+00:00",
//!   "model": "demo",
//!   "active_skills": [],
//!   "messages": [ OpenAI-format history: user / assistant (content, reasoning_content,
//!                 tool_calls) / tool (tool_call_id, name, content) ],
//!   "_acp": { "version": 1, "message_count": N, "mode": …, "additional_directories": […],
//!             "system_prompt": "…", "turns": [ … ] }
//! }
//! ```
//!
//! `messages` is what Agentao reads, so Agentao can load and continue our sessions. It cannot
//! say everything ACP can (a tool call's real final status, its kind and title, plan priorities,
//! non-text prompt blocks, the mode), so `_acp` keeps the turns exactly as recorded. Agentao
//! ignores the key and does not write it back; a file without it (written by Agentao), or whose
//! `messages` no longer have the length `_acp` was written with (edited by someone else), is
//! read from `messages` alone with the mapping of R-STORE-4.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::convert::Infallible;
use std::fmt;
use std::io::{self, Read};

use acp_core::schema::{
    ContentBlock, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, StopReason, ToolCall,
    ToolCallContent, ToolCallStatus, ToolContent, ToolKind,
};
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::escaped::EscapedText;
use super::history::{SessionHistory, Turn, TurnItem};
use super::text::{block_text, prompt_pieces, strip_system_reminders, tool_output_pieces};
use super::time::Timestamp;

/// The top-level key of our lossless copy.
pub const EXTENSION_KEY: &str = "_acp";
/// The version of the `_acp` object this code writes and reads.
const EXTENSION_VERSION: u32 = 1;
/// How a failed tool's result starts, in Agentao's updates (R-STORE-4) and in the files we write.
const ERROR_PREFIX: &str = "Error:";
/// Agentao's name for the plan tool.
const TODO_WRITE: &str = "todo_write";

/// What listing and matching need from a file: read without building its history.
#[derive(Debug)]
pub(crate) struct SessionHeader {
    pub(crate) session_id: String,
    pub(crate) title: String,
    pub(crate) created_at: Option<Timestamp>,
    pub(crate) updated_at: Option<Timestamp>,
    pub(crate) updated_at_text: Option<String>,
    /// Its `messages` list is empty: a session created and never given a turn
    /// (R-SESSION-11), which gives way to sessions with history under the cap (R-STORE-6).
    pub(crate) empty: bool,
}

impl SessionHeader {
    /// Reads a file's header fields, stopping where they end: listing and matching read only
    /// the start of a file, whatever its size. The writer puts `session_id`, `title`,
    /// `created_at` and `updated_at` before `messages`, so a file of ours (or Agentao's) is
    /// read up to the `[` that opens `messages`; a file where some of them come later, or are
    /// missing, is read on to its end (slower, same answer). What lies after the point where
    /// reading stopped is not checked: a file damaged there is found when it is loaded.
    /// `Err` says why the file is not a session file (the same reasons [`SessionFile::parse`]
    /// gives), or that it could not be read.
    pub(crate) fn read(mut reader: impl io::BufRead) -> Result<Self, String> {
        // The first byte that is not whitespace says whether this can be an object. The
        // whitespace is handed on to the parser, so its error positions are the file's.
        let mut leading = Vec::new();
        let first = loop {
            let buffer = reader.fill_buf().map_err(read_error)?;
            if buffer.is_empty() {
                break None;
            }
            let blank = buffer
                .iter()
                .position(|byte| !byte.is_ascii_whitespace())
                .unwrap_or(buffer.len());
            let first = buffer.get(blank).copied();
            leading.extend_from_slice(&buffer[..blank]);
            reader.consume(blank);
            if first.is_some() {
                break first;
            }
        };
        let reader = io::Cursor::new(leading).chain(reader);
        if first != Some(b'{') {
            return Err(match serde_json::from_reader::<_, IgnoredAny>(reader) {
                Ok(_) => NOT_AN_OBJECT.to_owned(),
                Err(err) => json_error(err),
            });
        }
        let mut fields = HeaderFields::default();
        let mut parser = serde_json::Deserializer::from_reader(reader);
        let parsed = serde::Deserializer::deserialize_map(&mut parser, HeaderVisitor(&mut fields))
            .and_then(|()| parser.end());
        match parsed {
            Ok(()) => {}
            // Stopped on purpose at the start of `messages`: everything needed is read.
            Err(_) if fields.stopped => {}
            Err(err) => return Err(json_error(err)),
        }
        let mut header = Self::from_fields(
            fields.session_id.as_ref(),
            fields.title.as_ref(),
            fields.created_at.as_ref(),
            fields.updated_at.as_ref(),
        )?;
        match fields.messages {
            Some(Shape::List { empty }) => {
                header.empty = empty;
                Ok(header)
            }
            _ => Err(NO_MESSAGES.to_owned()),
        }
    }

    fn from_fields(
        session_id: Option<&Value>,
        title: Option<&Value>,
        created_at: Option<&Value>,
        updated_at: Option<&Value>,
    ) -> Result<Self, String> {
        let session_id = match session_id {
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            _ => return Err(NO_SESSION_ID.to_owned()),
        };
        let updated_at_text = updated_at.and_then(Value::as_str).map(str::to_owned);
        Ok(Self {
            session_id,
            title: title.and_then(Value::as_str).unwrap_or_default().to_owned(),
            created_at: created_at
                .and_then(Value::as_str)
                .and_then(Timestamp::parse_iso),
            updated_at: updated_at_text.as_deref().and_then(Timestamp::parse_iso),
            updated_at_text,
            empty: false,
        })
    }
}

fn read_error(err: io::Error) -> String {
    format!("cannot read ({err})")
}

/// Why a file streamed through serde_json is not usable: unreadable, or not JSON.
fn json_error(err: serde_json::Error) -> String {
    if err.is_io() {
        format!("cannot read ({err})")
    } else {
        format!("not valid JSON ({err})")
    }
}

const NOT_AN_OBJECT: &str = "not a session file (not a JSON object)";
const NO_SESSION_ID: &str = "not a session file (no session_id)";
const NO_MESSAGES: &str = "not a session file (no messages list)";

/// The top-level fields a header needs, as far as the file was read.
#[derive(Default)]
struct HeaderFields {
    session_id: Option<Value>,
    title: Option<Value>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
    messages: Option<Shape>,
    /// Reading stopped at the `[` of `messages`, every header field read before it.
    stopped: bool,
}

impl HeaderFields {
    /// Whether every header field has been read (so nothing after `messages` is needed).
    fn complete(&self) -> bool {
        self.session_id.is_some()
            && self.title.is_some()
            && self.created_at.is_some()
            && self.updated_at.is_some()
    }
}

/// The keys of a session file's top level that a header looks at.
enum HeaderKey {
    SessionId,
    Title,
    CreatedAt,
    UpdatedAt,
    Messages,
    Other,
}

impl<'de> Deserialize<'de> for HeaderKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = HeaderKey;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<HeaderKey, E> {
                Ok(match key {
                    "session_id" => HeaderKey::SessionId,
                    "title" => HeaderKey::Title,
                    "created_at" => HeaderKey::CreatedAt,
                    "updated_at" => HeaderKey::UpdatedAt,
                    "messages" => HeaderKey::Messages,
                    _ => HeaderKey::Other,
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

/// Reads the top-level object into [`HeaderFields`], and stops at `messages` once the header
/// is complete.
struct HeaderVisitor<'a>(&'a mut HeaderFields);

impl<'de> Visitor<'de> for HeaderVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a session file object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let fields = self.0;
        while let Some(key) = map.next_key::<HeaderKey>()? {
            let (slot, name) = match key {
                HeaderKey::SessionId => (&mut fields.session_id, "session_id"),
                HeaderKey::Title => (&mut fields.title, "title"),
                HeaderKey::CreatedAt => (&mut fields.created_at, "created_at"),
                HeaderKey::UpdatedAt => (&mut fields.updated_at, "updated_at"),
                HeaderKey::Messages if fields.messages.is_some() => {
                    return Err(de::Error::duplicate_field("messages"));
                }
                HeaderKey::Messages if fields.complete() => {
                    let entered = std::cell::Cell::new(None);
                    let shape = map.next_value_seed(ListStart(&entered));
                    if let Some(empty) = entered.get() {
                        // The seed stopped the parse on purpose, past the list's `[`.
                        fields.messages = Some(Shape::List { empty });
                        fields.stopped = true;
                    }
                    fields.messages = Some(shape?);
                    continue;
                }
                HeaderKey::Messages => {
                    fields.messages = Some(map.next_value::<Shape>()?);
                    continue;
                }
                HeaderKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(de::Error::duplicate_field(name));
            }
            *slot = Some(map.next_value::<Value>()?);
        }
        Ok(())
    }
}

/// `messages` after a complete header: a list ends the read as soon as its `[` and the start
/// of its first element (or its `]`) are seen, with an error the caller recognises by the
/// flag, which says whether the list is empty; any other value is read as a [`Shape`].
struct ListStart<'a>(&'a std::cell::Cell<Option<bool>>);

impl<'de> de::DeserializeSeed<'de> for ListStart<'_> {
    type Value = Shape;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Shape, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListStart<'_> {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        // The first element stops the read as soon as it starts (an error of its own); only
        // `]` comes back as `None`.
        let empty = matches!(seq.next_element::<FirstElement>(), Ok(None));
        self.0.set(Some(empty));
        Err(de::Error::custom("header read"))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Shape, A::Error> {
        ShapeVisitor.visit_map(map)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
}

/// The first element of a list, refused as soon as it starts: reading it tells only that
/// there is one.
struct FirstElement;

impl<'de> Deserialize<'de> for FirstElement {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Refuse;
        impl Visitor<'_> for Refuse {
            type Value = FirstElement;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("nothing (the list's first element is not read)")
            }
        }
        deserializer.deserialize_any(Refuse)
    }
}

/// Whether a value is a list (and an empty one), found without keeping any of it.
#[derive(Debug)]
enum Shape {
    List { empty: bool },
    Other,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let empty = seq.next_element::<IgnoredAny>()?.is_none();
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::List { empty })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Shape::Other)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
}

/// A session file read in full: the header and the raw history.
#[derive(Debug)]
pub(crate) struct SessionFile {
    pub(crate) header: SessionHeader,
    model: String,
    active_skills: Vec<String>,
    messages: Vec<Value>,
    extension: Option<Value>,
}

impl SessionFile {
    /// Reads a file's bytes. `Err` says why it is not a session file (for the warning).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, String> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|err| format!("not valid JSON ({err})"))?;
        let Value::Object(mut object) = value else {
            return Err(NOT_AN_OBJECT.to_owned());
        };
        let mut header = SessionHeader::from_fields(
            object.get("session_id"),
            object.get("title"),
            object.get("created_at"),
            object.get("updated_at"),
        )?;
        let messages = match object.remove("messages") {
            Some(Value::Array(messages)) => messages,
            _ => return Err(NO_MESSAGES.to_owned()),
        };
        header.empty = messages.is_empty();
        Ok(Self {
            header,
            model: object
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            active_skills: object
                .get("active_skills")
                .and_then(Value::as_array)
                .map(|skills| {
                    skills
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            extension: object.remove(EXTENSION_KEY),
            messages,
        })
    }

    /// The history the file holds, and a note when `_acp` had to be passed over.
    pub(crate) fn into_history(self) -> (SessionHistory, Option<String>) {
        let mut directories = Vec::new();
        let mut system_prompt = None;
        let (turns, mode, note) = match self.extension.map(read_extension) {
            Some(Ok(extension)) if extension.message_count == self.messages.len() => {
                directories = extension.additional_directories;
                system_prompt = extension.system_prompt;
                (extension.turns, extension.mode, None)
            }
            Some(Ok(_)) => (
                turns_from_messages(&self.messages),
                None,
                Some(format!(
                    "its messages were changed by another program; `{EXTENSION_KEY}` ignored"
                )),
            ),
            Some(Err(reason)) => (
                turns_from_messages(&self.messages),
                None,
                Some(format!("`{EXTENSION_KEY}` ignored ({reason})")),
            ),
            None => (turns_from_messages(&self.messages), None, None),
        };
        let finished = turns
            .into_iter()
            .filter(|turn| turn.stop_reason.is_some())
            .collect();
        let mut history = SessionHistory::from_turns(self.header.session_id, self.model, finished);
        history.created_at = self.header.created_at;
        history.mode = mode;
        history.active_skills = self.active_skills;
        history.additional_directories = directories;
        history.system_prompt = system_prompt;
        (history, note)
    }
}

fn read_extension(value: Value) -> Result<ExtensionIn, String> {
    let extension: ExtensionIn = serde_json::from_value(value).map_err(|err| err.to_string())?;
    if extension.version != EXTENSION_VERSION {
        return Err(format!("unknown version {}", extension.version));
    }
    Ok(extension)
}

#[derive(Deserialize)]
struct ExtensionIn {
    version: u32,
    message_count: usize,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    additional_directories: Vec<String>,
    #[serde(default)]
    system_prompt: Option<String>,
    turns: Vec<Turn>,
}

#[derive(Serialize)]
struct ExtensionOut<'a> {
    version: u32,
    message_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    additional_directories: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    system_prompt: Option<&'a str>,
    turns: &'a [&'a Turn],
}

/// The file as written. Field order matters: the header (`session_id` … `updated_at`) comes
/// before `messages`, so a scan reads only the start of the file ([`SessionHeader::read`]).
#[derive(Serialize)]
struct FileOut<'a> {
    session_id: &'a str,
    title: String,
    created_at: String,
    updated_at: String,
    model: &'a str,
    active_skills: &'a [String],
    messages: MessagesOut<'a>,
    #[serde(rename = "_acp")]
    extension: ExtensionOut<'a>,
}

/// The OpenAI-format history, serialised one message at a time straight from the turns.
struct MessagesOut<'a> {
    turns: &'a [&'a Turn],
    count: usize,
}

impl Serialize for MessagesOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.count))?;
        each_message(self.turns, |message| seq.serialize_element(&message))?;
        seq.end()
    }
}

/// One OpenAI-format message, keys in Agentao's order; its texts borrow from the turns.
#[derive(Serialize)]
struct MessageOut<'a> {
    role: &'static str,
    content: Option<Text<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<Text<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCallOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'static str>,
}

#[derive(Serialize)]
struct ToolCallOut<'a> {
    id: Cow<'a, str>,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionOut<'a>,
}

#[derive(Serialize)]
struct FunctionOut<'a> {
    name: &'static str,
    arguments: Text<'a>,
}

/// A JSON string written piece by piece (serde_json escapes each piece as it goes, exactly
/// as it escapes a whole string), so a text joined from many blocks is never copied into one
/// `String`: a one-million-chunk answer costs no second copy when saved.
enum Text<'a> {
    /// These pieces, one after the other.
    Pieces(Vec<&'a str>),
    /// An answer's or reasoning's pieces, one after the other: one kept text alone is written
    /// as it is kept (R-STORE-7), anything else escaped here.
    Joined(Vec<Piece<'a>>),
    /// A JSON value in compact form (a tool call's input as its `arguments` string).
    Json(&'a Value),
    /// A text made up here.
    Owned(String),
}

/// A piece of an answer or a reasoning: a block's text, or a text kept as JSON.
enum Piece<'a> {
    Plain(&'a str),
    Kept(&'a EscapedText),
}

impl<'a> Text<'a> {
    /// Joined pieces, or `None` when together they are empty.
    fn non_empty(pieces: Vec<Piece<'a>>) -> Option<Self> {
        pieces
            .iter()
            .any(|piece| match piece {
                Piece::Plain(text) => !text.is_empty(),
                Piece::Kept(text) => !text.is_empty(),
            })
            .then_some(Text::Joined(pieces))
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Text::Pieces(pieces) => pieces.iter().try_for_each(|piece| f.write_str(piece)),
            Text::Joined(pieces) => pieces.iter().try_for_each(|piece| match piece {
                Piece::Plain(text) => f.write_str(text),
                Piece::Kept(text) => f.write_str(&text.to_plain()),
            }),
            Text::Json(value) => fmt::Display::fmt(value, f),
            Text::Owned(text) => f.write_str(text),
        }
    }
}

impl Serialize for Text<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            // The streamed answer: written as the encoder escaped it, no second escaping.
            Text::Joined(pieces) if let [Piece::Kept(text)] = pieces.as_slice() => {
                text.serialize(serializer)
            }
            _ => serializer.collect_str(self),
        }
    }
}

/// Writes the file for a history's finished turns to `out`: pretty JSON, indent 2, UTF-8
/// unescaped. Streamed: messages are made from the turns one at a time and borrow their
/// texts, so saving needs little memory beyond the history itself, however long it is.
pub(crate) fn write_file(
    out: impl io::Write,
    history: &SessionHistory,
    created_at: Timestamp,
    updated_at: Timestamp,
) -> io::Result<()> {
    let turns: Vec<&Turn> = history.completed_turns().collect();
    let mut count = 0;
    let counted: Result<(), Infallible> = each_message(&turns, |_| {
        count += 1;
        Ok(())
    });
    let Ok(()) = counted;
    let file = FileOut {
        session_id: history.session_id(),
        title: history.title(),
        created_at: created_at.to_iso(),
        updated_at: updated_at.to_iso(),
        model: &history.model,
        active_skills: &history.active_skills,
        messages: MessagesOut {
            turns: &turns,
            count,
        },
        extension: ExtensionOut {
            version: EXTENSION_VERSION,
            message_count: count,
            mode: history.mode.as_deref(),
            additional_directories: &history.additional_directories,
            system_prompt: history.system_prompt.as_deref(),
            turns: &turns,
        },
    };
    // Serialising owned strings, numbers and schema types cannot fail: errors are the
    // writer's, and come back as they were.
    serde_json::to_writer_pretty(out, &file).map_err(io::Error::from)
}

/// One assistant message being put together: reasoning, then text, then tool calls, then
/// the calls' results. An item that would go earlier than what is there starts a new one, so
/// the order of the turn survives the OpenAI shape.
#[derive(Default)]
struct AssistantDraft<'a> {
    rank: u8,
    reasoning: Vec<Piece<'a>>,
    text: Vec<Piece<'a>>,
    calls: Vec<ToolCallOut<'a>>,
    results: Vec<MessageOut<'a>>,
}

impl<'a> AssistantDraft<'a> {
    fn flush_into<E>(
        &mut self,
        emit: &mut impl FnMut(MessageOut<'a>) -> Result<(), E>,
    ) -> Result<(), E> {
        let draft = std::mem::take(self);
        let content = Text::non_empty(draft.text);
        let reasoning_content = Text::non_empty(draft.reasoning);
        if content.is_none() && reasoning_content.is_none() && draft.calls.is_empty() {
            return Ok(());
        }
        emit(MessageOut {
            role: "assistant",
            content,
            reasoning_content,
            tool_calls: draft.calls,
            tool_call_id: None,
            name: None,
        })?;
        draft.results.into_iter().try_for_each(emit)
    }
}

/// Hands `emit` the OpenAI-format messages of `turns`, in order.
fn each_message<'a, E>(
    turns: &[&'a Turn],
    mut emit: impl FnMut(MessageOut<'a>) -> Result<(), E>,
) -> Result<(), E> {
    for (turn_index, turn) in turns.iter().copied().enumerate() {
        emit(MessageOut {
            role: "user",
            content: Some(Text::Pieces(prompt_pieces(&turn.prompt))),
            reasoning_content: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        })?;
        let mut draft = AssistantDraft::default();
        for (item_index, item) in turn.items.iter().enumerate() {
            let rank = match item {
                TurnItem::Thought(_) | TurnItem::ThoughtText(_) => 0,
                TurnItem::Message(_) | TurnItem::MessageText(_) => 1,
                TurnItem::ToolCall(_) | TurnItem::Plan(_) => 2,
                // Agentao gets the whole conversation; the point is kept in `_acp` only.
                TurnItem::Compaction(_) => continue,
            };
            if rank < draft.rank {
                draft.flush_into(&mut emit)?;
            }
            draft.rank = rank;
            match item {
                TurnItem::Thought(block) => {
                    draft.reasoning.extend(block_text(block).map(Piece::Plain));
                }
                TurnItem::Message(block) => draft.text.extend(block_text(block).map(Piece::Plain)),
                TurnItem::ThoughtText(text) => draft.reasoning.push(Piece::Kept(text)),
                TurnItem::MessageText(text) => draft.text.push(Piece::Kept(text)),
                TurnItem::ToolCall(call) => {
                    let name = tool_name_for(&call.kind());
                    let arguments = match &call.raw_input {
                        Some(input) => Text::Json(input),
                        None => Text::Pieces(vec!["{}"]),
                    };
                    let mut result = tool_output_pieces(&call.content);
                    if call.status() == ToolCallStatus::Failed
                        && !starts_with(&result, ERROR_PREFIX)
                    {
                        result = match result.iter().all(|piece| piece.is_empty()) {
                            true => vec![ERROR_PREFIX, " tool call failed"],
                            false => [ERROR_PREFIX, " "].into_iter().chain(result).collect(),
                        };
                    }
                    let id = Cow::Borrowed(call.tool_call_id.as_str());
                    draft
                        .results
                        .push(tool_result(id.clone(), name, Text::Pieces(result)));
                    draft.calls.push(function_call(id, name, arguments));
                }
                TurnItem::Compaction(_) => {}
                TurnItem::Plan(plan) => {
                    let id = format!("plan_{turn_index}_{item_index}");
                    let todos: Vec<Value> = plan
                        .entries
                        .iter()
                        .map(|entry| {
                            let mut todo = Map::new();
                            todo.insert("content".into(), entry.content.clone().into());
                            todo.insert("status".into(), entry.status.as_str().into());
                            Value::Object(todo)
                        })
                        .collect();
                    let mut arguments = Map::new();
                    arguments.insert("todos".into(), Value::Array(todos));
                    draft.results.push(tool_result(
                        Cow::Owned(id.clone()),
                        TODO_WRITE,
                        Text::Pieces(vec!["Todo list updated."]),
                    ));
                    draft.calls.push(function_call(
                        Cow::Owned(id),
                        TODO_WRITE,
                        Text::Owned(Value::Object(arguments).to_string()),
                    ));
                }
            }
        }
        draft.flush_into(&mut emit)?;
    }
    Ok(())
}

/// Whether the pieces, joined, start with `prefix`.
fn starts_with(pieces: &[&str], prefix: &str) -> bool {
    let mut rest = prefix.as_bytes();
    for piece in pieces {
        let shared = rest.len().min(piece.len());
        if piece.as_bytes()[..shared] != rest[..shared] {
            return false;
        }
        rest = &rest[shared..];
        if rest.is_empty() {
            return true;
        }
    }
    rest.is_empty()
}

fn function_call<'a>(id: Cow<'a, str>, name: &'static str, arguments: Text<'a>) -> ToolCallOut<'a> {
    ToolCallOut {
        id,
        kind: "function",
        function: FunctionOut { name, arguments },
    }
}

fn tool_result<'a>(id: Cow<'a, str>, name: &'static str, content: Text<'a>) -> MessageOut<'a> {
    MessageOut {
        role: "tool",
        content: Some(content),
        reasoning_content: None,
        tool_calls: Vec::new(),
        tool_call_id: Some(id),
        name: Some(name),
    }
}

/// The Agentao tool name written for a kind: one Agentao maps back to the same kind.
fn tool_name_for(kind: &ToolKind) -> &'static str {
    match kind {
        ToolKind::Read => "read_file",
        ToolKind::Edit => "write_file",
        ToolKind::Search => "search_file_content",
        ToolKind::Execute => "run_shell_command",
        ToolKind::Fetch => "web_fetch",
        ToolKind::Delete => "delete",
        ToolKind::Move => "move",
        ToolKind::Think => "think",
        ToolKind::SwitchMode => "switch_mode",
        _ => "other",
    }
}

/// The kind of an Agentao tool: its own table (R-STORE-4) plus the real names it misses
/// (`replace`, `search_file_content`).
fn kind_for_tool(name: &str) -> ToolKind {
    match name {
        "read_file" | "read_folder" | "list_directory" => ToolKind::Read,
        "write_file" | "edit_file" | "edit" | "replace" => ToolKind::Edit,
        "find_files" | "search_text" | "grep" | "glob" | "web_search" | "search_file_content" => {
            ToolKind::Search
        }
        "run_shell_command" | "bash" | "shell" => ToolKind::Execute,
        "web_fetch" => ToolKind::Fetch,
        _ => ToolKind::Other,
    }
}

/// R-STORE-4 in one walk: each user message opens a turn; assistant reasoning, text and tool calls
/// and the tool results fill it. Bad entries are skipped, never fatal.
///
/// Fixes over Agentao's replay, which says `completed` for every call: a call whose result is
/// missing (it never finished) or starts with `Error:` (how Agentao reports a failed tool,
/// and how this store writes one) is `failed`. Reasoning is kept as thoughts.
pub(crate) fn turns_from_messages(messages: &[Value]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    let mut plan_ids = BTreeSet::new();
    for (index, message) in messages.iter().enumerate() {
        let Some(message) = message.as_object() else {
            continue;
        };
        match message.get("role").and_then(Value::as_str) {
            Some("user") => {
                let text = strip_system_reminders(&coerce_text(message.get("content")));
                if !text.is_empty() {
                    turns.push(finished_turn(vec![ContentBlock::text(text)]));
                }
            }
            Some("assistant") => {
                let turn = open_turn(&mut turns);
                let reasoning = message.get("reasoning_content").and_then(Value::as_str);
                if let Some(reasoning) = reasoning.filter(|text| !text.is_empty()) {
                    turn.items
                        .push(TurnItem::Thought(ContentBlock::text(reasoning)));
                }
                let text = coerce_text(message.get("content"));
                if !text.is_empty() {
                    turn.items.push(TurnItem::Message(ContentBlock::text(text)));
                }
                let calls = message.get("tool_calls").and_then(Value::as_array);
                for (position, call) in calls.into_iter().flatten().enumerate() {
                    if let Some(item) = replayed_call(call, index, position, &mut plan_ids) {
                        turn.items.push(item);
                    }
                }
            }
            Some("tool") => {
                let Some(id) = message.get("tool_call_id").and_then(Value::as_str) else {
                    continue;
                };
                if id.is_empty() || plan_ids.contains(id) {
                    continue;
                }
                let text = coerce_text(message.get("content"));
                let status = match text.starts_with(ERROR_PREFIX) {
                    true => ToolCallStatus::Failed,
                    false => ToolCallStatus::Completed,
                };
                let content = if text.is_empty() {
                    Vec::new()
                } else {
                    vec![ToolCallContent::Content(ToolContent::new(
                        ContentBlock::text(text),
                    ))]
                };
                let turn = open_turn(&mut turns);
                let known = turn.items.iter_mut().rev().find_map(|item| match item {
                    TurnItem::ToolCall(call) if call.tool_call_id == id => Some(call),
                    _ => None,
                });
                match known {
                    Some(call) => {
                        call.status = Some(status);
                        if !content.is_empty() {
                            call.content = content;
                        }
                    }
                    None => {
                        let name = message
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("tool");
                        let mut call = ToolCall::new(id, name);
                        call.kind = Some(kind_for_tool(name));
                        call.status = Some(status);
                        call.content = content;
                        turn.items.push(TurnItem::ToolCall(call));
                    }
                }
            }
            _ => {}
        }
    }
    turns
}

fn finished_turn(prompt: Vec<ContentBlock>) -> Turn {
    Turn {
        prompt,
        items: Vec::new(),
        stop_reason: Some(StopReason::EndTurn),
    }
}

/// The turn output goes into; output before any user message gets a turn with no prompt.
fn open_turn(turns: &mut Vec<Turn>) -> &mut Turn {
    if turns.is_empty() {
        turns.push(finished_turn(Vec::new()));
    }
    let last = turns.len() - 1;
    &mut turns[last]
}

/// One persisted `tool_calls[]` entry: a plan for a valid `todo_write`, else a tool call that
/// stays `failed` until its result turns up.
fn replayed_call(
    call: &Value,
    index: usize,
    position: usize,
    plan_ids: &mut BTreeSet<String>,
) -> Option<TurnItem> {
    let call = call.as_object()?;
    let id = match call.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => format!(
            "replay_{:012x}",
            ((index as u64) << 16 | position as u64) & 0xffff_ffff_ffff
        ),
    };
    let function = call.get("function").and_then(Value::as_object);
    let name = function
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let arguments = raw_input(function.and_then(|f| f.get("arguments")));
    if name == TODO_WRITE
        && let Some(plan) = plan_from_todos(&arguments)
    {
        plan_ids.insert(id);
        return Some(TurnItem::Plan(plan));
    }
    let mut replayed = ToolCall::new(id, if name.is_empty() { "tool" } else { name });
    replayed.kind = Some(kind_for_tool(name));
    replayed.status = Some(ToolCallStatus::Failed);
    replayed.raw_input = Some(arguments);
    Some(TurnItem::ToolCall(replayed))
}

/// Arguments as `rawInput`: the parsed object; `{"_raw": text}` when the text is not JSON;
/// `{"_value": v}` when it is JSON but not an object (R-STORE-4).
fn raw_input(arguments: Option<&Value>) -> Value {
    let wrap = |key: &str, value: Value| {
        let mut object = Map::new();
        object.insert(key.to_owned(), value);
        Value::Object(object)
    };
    match arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(object)) => Value::Object(object.clone()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => Value::Object(object),
            Ok(other) => wrap("_value", other),
            Err(_) => wrap("_raw", Value::String(text.clone())),
        },
        Some(other) => wrap("_value", other.clone()),
    }
}

/// Agentao's all-or-nothing check: a non-empty `todos` list whose every entry has a string
/// `content` and a known `status`. Priorities are `medium`, as Agentao sends them.
fn plan_from_todos(arguments: &Value) -> Option<Plan> {
    let todos = arguments.get("todos")?.as_array()?;
    if todos.is_empty() {
        return None;
    }
    let mut plan = Plan::default();
    for todo in todos {
        let content = todo.get("content")?.as_str()?;
        let status = match todo.get("status")?.as_str()? {
            "pending" => PlanEntryStatus::Pending,
            "in_progress" => PlanEntryStatus::InProgress,
            "completed" => PlanEntryStatus::Completed,
            _ => return None,
        };
        plan.entries
            .push(PlanEntry::new(content, PlanEntryPriority::Medium, status));
    }
    Some(plan)
}

/// Message content as text: a string as is; a list's text parts joined by newlines (other
/// parts skipped); nothing for null; anything else in its JSON form.
fn coerce_text(content: Option<&Value>) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect();
            texts.join("\n")
        }
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `SessionHeader::read` says of `text`, fed through a reader that holds 4 bytes at
    /// a time (so whitespace and values span many buffers).
    fn read(text: &str) -> Result<SessionHeader, String> {
        SessionHeader::read(io::BufReader::with_capacity(4, text.as_bytes()))
    }

    #[test]
    fn a_streamed_header_fails_with_the_whole_file_parsers_words_and_positions() {
        let cases = [
            "\n\n   {\"session_id\": \"a\", \"messages\": [1,",
            "  \n [1, 2]",
            "\n\n\n      x",
            "",
            "      ",
            "{\"session_id\": \"a\", \"messages\": []} trailing",
        ];
        for text in cases {
            let expected = match serde_json::from_str::<Value>(text) {
                Ok(_) => NOT_AN_OBJECT.to_owned(),
                Err(err) => format!("not valid JSON ({err})"),
            };
            assert_eq!(read(text).unwrap_err(), expected, "{text:?}");
        }
    }

    /// A reader that yields `text`, then fails: anything read past `text` is an error.
    struct ThenFails(io::Cursor<Vec<u8>>);

    impl Read for ThenFails {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(io::Error::other("read past the header")),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn a_header_is_read_up_to_the_start_of_messages_and_no_further() {
        let head = "{\"session_id\":\"s1\",\"title\":\"t\",\"created_at\":\"2026-11-21T07:00:00+00:00\",\"updated_at\":\"2026-11-21T07:00:01+00:00\",\"model\":\"m\",\"active_skills\":[],\"messages\":[";
        let reader = io::BufReader::with_capacity(8, ThenFails(io::Cursor::new(head.into())));
        let header = SessionHeader::read(reader).unwrap();
        assert_eq!(
            (header.session_id.as_str(), header.title.as_str()),
            ("s1", "t")
        );
        assert_eq!(
            header.updated_at_text.as_deref(),
            Some("2026-11-21T07:00:01+00:00")
        );
        assert!(header.created_at.is_some());
        // Not a list after a complete header: still not a session file.
        let text = "{\"session_id\":\"s\",\"title\":\"\",\"created_at\":null,\"updated_at\":null,\"messages\":{\"a\":1}}";
        assert_eq!(read(text).unwrap_err(), NO_MESSAGES);
    }

    #[test]
    fn header_fields_after_messages_or_missing_are_read_from_the_whole_file() {
        // An older order: the header after `messages` (and `_acp`).
        let text = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"_acp\":{},\"session_id\":\"s2\",\"title\":\"late\",\"updated_at\":\"2026-11-21T07:00:00+00:00\",\"created_at\":\"2026-11-21T06:00:00+00:00\"}";
        let header = read(text).unwrap();
        assert_eq!(
            (header.session_id.as_str(), header.title.as_str()),
            ("s2", "late")
        );
        assert!(header.updated_at.is_some() && header.created_at.is_some());
        // No title at all: read to the end, and the file must be whole.
        let text = "{\"session_id\":\"s3\",\"messages\":[1,2],\"updated_at\":\"2026-11-21T07:00:00+00:00\"}";
        let header = read(text).unwrap();
        assert_eq!(
            (header.session_id.as_str(), header.title.as_str()),
            ("s3", "")
        );
        assert!(header.updated_at.is_some());
        assert!(
            read(&text[..text.len() - 1])
                .unwrap_err()
                .starts_with("not valid JSON (EOF")
        );
        assert_eq!(
            read("{\"session_id\":\"a\",\"session_id\":\"b\",\"messages\":[]}").unwrap_err(),
            "not valid JSON (duplicate field `session_id` at line 1 column 31)"
        );
    }

    #[test]
    fn the_writer_puts_the_header_before_messages() {
        let mut history = SessionHistory::new("s", "demo");
        history.record_user_prompt(&[ContentBlock::text("hello")]);
        history.end_turn(StopReason::EndTurn);
        let mut out = Vec::new();
        let at = Timestamp::from_unix_seconds(1_700_000_000);
        write_file(&mut out, &history, at, at).unwrap();
        let text = String::from_utf8(out).unwrap();
        let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap();
        for key in ["session_id", "title", "created_at", "updated_at"] {
            assert!(at(key) < at("messages"), "{key} after messages: {text}");
        }
        assert!(at("messages") < at(EXTENSION_KEY));
    }

    /// R-STORE-7: a turn recorded from the encoder's escaped chunks (the agent's path) saves
    /// to the same bytes as the same turn kept as plain text blocks (how turns were kept
    /// before), and both files load and replay the same updates.
    #[test]
    fn text_kept_escaped_saves_the_bytes_plain_text_saved_and_replays_the_same() {
        use acp_core::schema::{ContentChunk, SessionUpdate, ToolCallStatus};
        use acp_core::wire::encode::{TextChunkKind, write_text_chunk};

        let chunks: [(TextChunkKind, &str); 7] = [
            (TextChunkKind::AgentThought, "thinking \"hard\"\n"),
            (TextChunkKind::AgentThought, "…done"),
            (
                TextChunkKind::AgentMessage,
                "abcdefghijklmnopqrstuvwxyzabcdef",
            ),
            (TextChunkKind::AgentMessage, "tab\there, back\\slash, \u{1}"),
            (TextChunkKind::AgentMessage, "déjà 日本語 🎉"),
            (TextChunkKind::AgentMessage, ""),
            (TextChunkKind::AgentMessage, "\r\nend"),
        ];
        let mut new = SessionHistory::new("sess_1", "demo");
        let mut old_items = Vec::new();
        for prompt in ["first \"turn\"", "second turn"] {
            new.record_user_prompt(&[ContentBlock::text(prompt)]);
            let mut thought = String::new();
            let mut message = String::new();
            for (kind, text) in chunks {
                let mut line = Vec::new();
                let span = write_text_chunk(&mut line, "sess_1", kind, text).unwrap();
                new.record_text_chunk(kind, std::str::from_utf8(&line[span]).unwrap());
                match kind {
                    TextChunkKind::AgentThought => thought.push_str(text),
                    TextChunkKind::AgentMessage => message.push_str(text),
                }
            }
            let mut call = ToolCall::new("tool-1", "read");
            call.status = Some(ToolCallStatus::Completed);
            new.record_update(&SessionUpdate::ToolCall(call.clone()));
            new.record_update(&SessionUpdate::AgentMessageChunk(ContentChunk::new(
                ContentBlock::text("after the \"tool\""),
            )));
            new.end_turn(StopReason::EndTurn);
            old_items.push((
                prompt,
                vec![
                    TurnItem::Thought(ContentBlock::text(thought)),
                    TurnItem::Message(ContentBlock::text(message)),
                    TurnItem::ToolCall(call),
                    TurnItem::Message(ContentBlock::text("after the \"tool\"")),
                ],
            ));
        }
        assert!(matches!(new.turns()[0].items[0], TurnItem::ThoughtText(_)));
        assert!(matches!(new.turns()[0].items[1], TurnItem::MessageText(_)));
        let turns = old_items
            .into_iter()
            .map(|(prompt, items)| Turn {
                prompt: vec![ContentBlock::text(prompt)],
                items,
                stop_reason: Some(StopReason::EndTurn),
            })
            .collect();
        let old = SessionHistory::from_turns("sess_1".into(), "demo".into(), turns);
        assert_eq!(new, old);

        let at = Timestamp::from_unix_seconds(1_700_000_000);
        let mut new_bytes = Vec::new();
        write_file(&mut new_bytes, &new, at, at).unwrap();
        let mut old_bytes = Vec::new();
        write_file(&mut old_bytes, &old, at, at).unwrap();
        assert_eq!(
            String::from_utf8(new_bytes.clone()).unwrap(),
            String::from_utf8(old_bytes).unwrap()
        );

        let (loaded, note) = SessionFile::parse(&new_bytes).unwrap().into_history();
        assert_eq!(note, None);
        assert_eq!(loaded.turns(), old.turns());
        let replayed = crate::store::replay(&loaded);
        assert_eq!(replayed, crate::store::replay(&old));
        assert_eq!(replayed, crate::store::replay(&new));
        // A loaded file keeps its plain text escaped too: saving it again gives the same bytes.
        assert!(matches!(
            loaded.turns()[1].items[1],
            TurnItem::MessageText(_)
        ));
        let mut again = Vec::new();
        write_file(&mut again, &loaded, at, at).unwrap();
        assert_eq!(again, new_bytes);
    }

    #[test]
    fn a_streamed_header_reads_the_fields_after_leading_whitespace() {
        let text = "\n\n      {\"session_id\":\"sess_1\",\"title\":\"t\",\"updated_at\":\"2026-11-21T07:00:00+00:00\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"_acp\":{\"turns\":[]}}\n";
        let header = read(text).unwrap();
        assert_eq!(header.session_id, "sess_1");
        assert_eq!(header.title, "t");
        assert_eq!(
            header.updated_at_text.as_deref(),
            Some("2026-11-21T07:00:00+00:00")
        );
        assert!(header.updated_at.is_some());
        assert_eq!(read("{\"session_id\":\"s\"}").unwrap_err(), NO_MESSAGES);
        assert_eq!(
            read("{\"session_id\":\"\",\"messages\":[]}").unwrap_err(),
            NO_SESSION_ID
        );
    }
}
