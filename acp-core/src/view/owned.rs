//! The owned decode's fast path: the hot `session/update` kinds (message and thought chunks,
//! tool calls, tool call updates, plans) built from the borrowed view of the span the envelope
//! scanner already validated, instead of parsing it again with serde_json.
//!
//! The result is the same value the serde path gives, or nothing: any shape the fast path is not
//! sure to read exactly as serde does (a tag that is not the object's first member, a block
//! other than text, a list item that does not decode, any error) falls back to
//! [`AgentNotification::decode`], so errors keep their exact messages. `_meta`, annotations and
//! raw tool input/output are still read by serde_json, from their own spans.

use alloc::string::String;
use alloc::vec::Vec;

use crate::schema::lenient::LeafKind;
use crate::schema::{
    AgentNotification, Annotations, ContentBlock, ContentChunk, DecodeError, Diff, Meta, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionNotification, SessionUpdate,
    TerminalContent, TextContent, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolContent, ToolKind,
};
use crate::wire::json::Fragment;
use crate::wire::{JsonStr, RawValue};

use super::content::ContentBlockView;
use super::enums;
use super::update::{
    ContentChunkView, LocationView, PlanEntryView, SessionNotificationView, SessionUpdateView,
    ToolCallContentView, ToolCallUpdateView, ToolCallView,
};

impl AgentNotification {
    /// [`AgentNotification::decode`] from params the envelope scanner has validated (a
    /// [`RawValue`]), with the same result, faster for the common `session/update` kinds.
    pub fn decode_raw(method: &str, params: Option<RawValue<'_>>) -> Result<Self, DecodeError> {
        if method == crate::schema::methods::SESSION_UPDATE
            && let Some(notification) = params.and_then(session_notification)
        {
            return Ok(Self::SessionUpdate(notification));
        }
        Self::decode(method, params.map(|p| p.get()))
    }
}

/// The decoded text of a wire string. Runs between escapes are found sixteen bytes a step
/// ([`JsonStr::fragments`]) and copied whole; each escape is decoded by the wire layer.
fn owned(text: JsonStr<'_>) -> String {
    let Some(plain) = text.as_plain() else {
        return unescape(text.raw());
    };
    String::from(plain)
}

fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for fragment in JsonStr::new_unchecked(raw, true).fragments() {
        match fragment {
            Fragment::Text(text) => out.push_str(text),
            Fragment::Char(ch) => out.push(ch),
        }
    }
    out
}

/// `Some(None)` when absent, `Some(Some(map))` for an object serde reads, `None` to fall back.
fn meta(raw: Option<RawValue<'_>>) -> Option<Option<Meta>> {
    match raw {
        None => Some(None),
        Some(raw) => serde_json::from_str(raw.get()).ok().map(Some),
    }
}

/// Whether the first member of `object` is `tag`: then serde streams the object and reads the
/// first occurrence of every member, as the views do.
fn tag_first(object: RawValue<'_>, tag: &str) -> bool {
    object
        .fields()
        .next()
        .is_some_and(|(key, _)| key.as_plain() == Some(tag))
}

fn session_notification(params: RawValue<'_>) -> Option<SessionNotification> {
    let view = SessionNotificationView::read(params).ok()?;
    if !tag_first(view.update_raw, "sessionUpdate") {
        return None;
    }
    let update = match view.update {
        SessionUpdateView::AgentMessageChunk(chunk) => {
            SessionUpdate::AgentMessageChunk(content_chunk(chunk)?)
        }
        SessionUpdateView::AgentThoughtChunk(chunk) => {
            SessionUpdate::AgentThoughtChunk(content_chunk(chunk)?)
        }
        SessionUpdateView::UserMessageChunk(chunk) => {
            SessionUpdate::UserMessageChunk(content_chunk(chunk)?)
        }
        SessionUpdateView::ToolCall(call) => SessionUpdate::ToolCall(tool_call(call)?),
        SessionUpdateView::ToolCallUpdate(update) => {
            SessionUpdate::ToolCallUpdate(tool_call_update(update)?)
        }
        SessionUpdateView::Plan(plan) => SessionUpdate::Plan(Plan {
            entries: plan
                .raw_entries()
                .elements()
                .map(|entry| PlanEntryView::read(entry).ok().and_then(plan_entry))
                .collect::<Option<Vec<_>>>()?,
            meta: meta(plan.meta)?,
        }),
        _ => return None,
    };
    Some(SessionNotification {
        session_id: owned(view.session_id),
        update,
        meta: meta(view.meta)?,
    })
}

fn content_chunk(chunk: ContentChunkView<'_>) -> Option<ContentChunk> {
    Some(ContentChunk {
        content: block(chunk.content, chunk.content_raw)?,
        message_id: chunk.message_id.map(owned),
        meta: meta(chunk.meta)?,
    })
}

/// Text blocks only; the others are rare in updates and left to serde.
fn block(view: ContentBlockView<'_>, raw: RawValue<'_>) -> Option<ContentBlock> {
    let ContentBlockView::Text(text) = view else {
        return None;
    };
    if !tag_first(raw, "type") {
        return None;
    }
    let annotations = match text.annotations {
        None => None,
        // Default-on-error: an object that does not decode reads as absent.
        Some(raw) => serde_json::from_str::<Annotations>(raw.get()).ok(),
    };
    Some(ContentBlock::Text(TextContent {
        text: owned(text.text),
        annotations,
        meta: meta(text.meta)?,
    }))
}

fn tool_kind(kind: enums::ToolKind<'_>) -> Option<ToolKind> {
    match kind {
        enums::ToolKind::Known(known) => <ToolKind as LeafKind>::from_str(known.as_str()),
        enums::ToolKind::Unknown(name) => <ToolKind as LeafKind>::from_str(&owned(name)),
    }
}

fn status(status: enums::ToolCallStatus) -> Option<ToolCallStatus> {
    <ToolCallStatus as LeafKind>::from_str(status.as_str())
}

/// Every item of a skip-invalid list, or `None` (fall back) when one does not convert.
fn all<'a, T>(
    list: Option<RawValue<'a>>,
    convert: impl Fn(RawValue<'a>) -> Option<T>,
) -> Option<Vec<T>> {
    list.map_or(Some(Vec::new()), |list| {
        list.elements().map(convert).collect()
    })
}

fn tool_content(item: RawValue<'_>) -> Option<ToolCallContent> {
    if !tag_first(item, "type") {
        return None;
    }
    Some(match ToolCallContentView::read(item).ok()? {
        ToolCallContentView::Content { content, meta: m } => {
            ToolCallContent::Content(ToolContent {
                content: block(content, item.get_field("content")?)?,
                meta: meta(m)?,
            })
        }
        ToolCallContentView::Diff {
            path,
            old_text,
            new_text,
            meta: m,
        } => ToolCallContent::Diff(Diff {
            path: owned(path),
            old_text: old_text.map(owned),
            new_text: owned(new_text),
            meta: meta(m)?,
        }),
        ToolCallContentView::Terminal {
            terminal_id,
            meta: m,
        } => ToolCallContent::Terminal(TerminalContent {
            terminal_id: owned(terminal_id),
            meta: meta(m)?,
        }),
    })
}

fn location(item: RawValue<'_>) -> Option<ToolCallLocation> {
    let view: LocationView<'_> = LocationView::read(item).ok()?;
    Some(ToolCallLocation {
        path: owned(view.path),
        line: view.line,
        meta: meta(view.meta)?,
    })
}

/// `rawInput` / `rawOutput`: any JSON, read by serde_json as the owned type reads it.
fn raw_json(raw: Option<RawValue<'_>>) -> Option<Option<serde_json::Value>> {
    match raw {
        None => Some(None),
        Some(raw) => serde_json::from_str(raw.get()).ok().map(Some),
    }
}

fn tool_call(call: ToolCallView<'_>) -> Option<ToolCall> {
    Some(ToolCall {
        tool_call_id: owned(call.tool_call_id),
        title: owned(call.title),
        kind: match call.kind {
            None => None,
            Some(kind) => Some(tool_kind(kind)?),
        },
        status: match call.status {
            None => None,
            Some(s) => Some(status(s)?),
        },
        content: all(call.content.raw(), tool_content)?,
        locations: all(call.locations.raw(), location)?,
        raw_input: raw_json(call.raw_input)?,
        raw_output: raw_json(call.raw_output)?,
        meta: meta(call.meta)?,
    })
}

fn tool_call_update(update: ToolCallUpdateView<'_>) -> Option<ToolCallUpdate> {
    Some(ToolCallUpdate {
        tool_call_id: owned(update.tool_call_id),
        kind: match update.kind {
            None => None,
            Some(kind) => Some(tool_kind(kind)?),
        },
        status: match update.status {
            None => None,
            Some(s) => Some(status(s)?),
        },
        title: update.title.map(owned),
        content: match update.content {
            None => None,
            Some(content) => Some(all(content.raw(), tool_content)?),
        },
        locations: match update.locations {
            None => None,
            Some(locations) => Some(all(locations.raw(), location)?),
        },
        raw_input: raw_json(update.raw_input)?,
        raw_output: raw_json(update.raw_output)?,
        meta: meta(update.meta)?,
    })
}

fn plan_entry(entry: PlanEntryView<'_>) -> Option<PlanEntry> {
    Some(PlanEntry {
        content: owned(entry.content),
        priority: <PlanEntryPriority as LeafKind>::from_str(entry.priority.as_str())?,
        status: <PlanEntryStatus as LeafKind>::from_str(entry.status.as_str())?,
        meta: meta(entry.meta)?,
    })
}
