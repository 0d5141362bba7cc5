//! The owned decode's fast path: the hot `session/update` kinds (message and thought chunks,
//! tool calls, tool call updates, plans), and in [`turn`] the prompt and permission requests
//! and their results, built from the borrowed views of the span the envelope scanner already
//! validated, and from their readers (tool calls, read in one walk by [`tool_call`]), instead
//! of parsing it again with serde_json.
//!
//! Before all of these, [`canonical`] reads the text chunk and the tool call update in the
//! exact form SDKs write them by matching their bytes.
//!
//! The result is the same value the serde path gives, or nothing: any shape the fast path is not
//! sure to read exactly as serde does (a tag that is not the object's first member, a block
//! of a type this version does not know, a list item that does not decode, a number serde_json
//! cannot hold (see [`numbers`]), any error) falls back to the serde path
//! ([`AgentNotification::decode`] and its siblings), so errors keep their exact messages.
//! `_meta`, annotations and raw tool input/output are still read by serde_json, from their own
//! spans.

use alloc::string::String;
use alloc::vec::Vec;

use crate::schema::lenient::LeafKind;
use crate::schema::{
    AgentNotification, Annotations, AudioContent, BlobResourceContents, ContentBlock, ContentChunk,
    DecodeError, EmbeddedResource, EmbeddedResourceResource, ImageContent, Meta, Plan, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, ResourceLink, SessionNotification, SessionUpdate,
    TextContent, TextResourceContents, ToolCallLocation, ToolCallStatus, ToolKind,
};
use crate::wire::json::ValueKind;
use crate::wire::{JsonStr, RawValue};

use super::content::{ContentBlockView, ResourceContents};
use super::enums;
use super::error::{Detail, Fault};
use super::progress::PlanEntryView;
use super::read::{first_key_is, lenient_object};
use super::update::{ContentChunkView, LocationView, SessionNotificationView, SessionUpdateView};

mod canonical;
mod line;
mod numbers;
mod tool_call;
mod turn;

impl AgentNotification {
    /// [`AgentNotification::decode`] from params the envelope scanner has validated (a
    /// [`RawValue`]), with the same result, faster for the common `session/update` kinds.
    pub fn decode_raw(method: &str, params: Option<RawValue<'_>>) -> Result<Self, DecodeError> {
        if method == crate::schema::methods::SESSION_UPDATE
            && let Some(params) = params
        {
            // Built in the returned value: the notification is a few hundred bytes, and
            // moving it out through each layer costs as much as reading a chunk.
            let mut decoded = Ok(Self::SessionUpdate(empty_notification()));
            if let Ok(Self::SessionUpdate(notification)) = &mut decoded
                && (canonical::text_chunk(params.get(), notification).is_some()
                    || canonical::tool_call_update(params.get(), notification).is_some()
                    || session_notification(params, notification).is_some())
            {
                return decoded;
            }
        }
        Self::decode(method, params.map(|p| p.get()))
    }
}

/// The decoded text of a wire string: copied whole when it has no escapes, else unescaped
/// run by run ([`JsonStr::to_cow`]).
fn owned(text: JsonStr<'_>) -> String {
    text.to_cow().into_owned()
}

/// What a fast-path walk returns to stop: the message is left to serde.
const DECLINE: Fault<'static> = Fault::here(Detail::MustBe("read by serde"));

/// `Some(None)` when absent, `Some(Some(map))` for an object serde reads, `None` to fall back.
fn meta(raw: Option<RawValue<'_>>) -> Option<Option<Meta>> {
    match raw {
        None => Some(None),
        Some(raw) => serde_json::from_str(raw.get()).ok().map(Some),
    }
}

/// [`meta`] for a `_meta` member as sent, whatever it holds: serde_json reads any value, keeps
/// an object, and fails (`None`, fall back) on what it cannot read.
fn meta_any(raw: Option<RawValue<'_>>) -> Option<Option<Meta>> {
    match raw.map(|raw| raw.kind()) {
        None | Some(ValueKind::String | ValueKind::Bool | ValueKind::Null) => Some(None),
        Some(ValueKind::Object) => meta(raw),
        Some(ValueKind::Array | ValueKind::Number) => {
            serde_json::from_str::<serde_json::Value>(raw?.get())
                .ok()
                .map(|_| None)
        }
    }
}

/// Whether the first member of `object` is `tag`: then serde streams the object and reads the
/// first occurrence of every member, as the views do.
#[inline]
fn tag_first(object: RawValue<'_>, tag: &str) -> bool {
    object.get().starts_with('{') && first_key_is(object.get(), 0, tag)
}

/// What the fast path fills in place: every field is overwritten.
fn empty_notification() -> SessionNotification {
    SessionNotification {
        session_id: String::new(),
        update: SessionUpdate::Unknown(Meta::new()),
        meta: None,
    }
}

/// An empty chunk, for [`session_notification`] to fill in place.
fn empty_chunk() -> ContentChunk {
    ContentChunk {
        content: ContentBlock::Text(TextContent::new(String::new())),
        message_id: None,
        meta: None,
    }
}

/// Decodes `params` into `out`; `None` to fall back (then `out` holds a partial value).
fn session_notification(params: RawValue<'_>, out: &mut SessionNotification) -> Option<()> {
    let mut view = SessionNotificationView::EMPTY;
    view.read_into(params).ok()?;
    if !tag_first(view.update_raw, "sessionUpdate") {
        return None;
    }
    // Numbers serde_json would refuse (see [`numbers`]). A text chunk streams into structs
    // that ignore unknown members unread, so only a dropped `_meta` or `messageId` (its
    // `lossy` marks) can hold one; elsewhere they are looked for in what the views read
    // leniently: everywhere but a block's long string, and around the update of a tool call,
    // whose reader checks its own members.
    let fit = match &view.update {
        SessionUpdateView::AgentMessageChunk(chunk)
        | SessionUpdateView::AgentThoughtChunk(chunk)
        | SessionUpdateView::UserMessageChunk(chunk) => match &chunk.content {
            ContentBlockView::Text(text) => !(view.lossy || chunk.lossy || text.lossy),
            other => match long_string(other) {
                Some(long) => numbers::fit_around(params.get(), long.raw()),
                None => numbers::fit(params.get()),
            },
        },
        SessionUpdateView::ToolCall(_) | SessionUpdateView::ToolCallUpdate(_) => {
            numbers::fit_around(params.get(), view.update_raw.get())
        }
        _ => numbers::fit(params.get()),
    };
    if !fit {
        return None;
    }
    out.meta = meta(view.meta)?;
    out.session_id = owned(view.session_id);
    match &view.update {
        SessionUpdateView::AgentMessageChunk(chunk) => {
            content_chunk(chunk, &mut out.update, SessionUpdate::AgentMessageChunk)?;
        }
        SessionUpdateView::AgentThoughtChunk(chunk) => {
            content_chunk(chunk, &mut out.update, SessionUpdate::AgentThoughtChunk)?;
        }
        SessionUpdateView::UserMessageChunk(chunk) => {
            content_chunk(chunk, &mut out.update, SessionUpdate::UserMessageChunk)?;
        }
        SessionUpdateView::ToolCall(_) => {
            out.update =
                SessionUpdate::ToolCall(tool_call::tool_call_at(view.update_raw.get(), 0)?.0);
        }
        SessionUpdateView::ToolCallUpdate(_) => {
            out.update = SessionUpdate::ToolCallUpdate(
                tool_call::tool_call_update_at(view.update_raw.get(), 0)?.0,
            );
        }
        SessionUpdateView::Plan(plan) => {
            out.update = SessionUpdate::Plan(Plan {
                entries: plan
                    .raw_entries()
                    .elements()
                    .map(|entry| PlanEntryView::read(entry).ok().and_then(plan_entry))
                    .collect::<Option<Vec<_>>>()?,
                meta: meta(plan.meta)?,
            });
        }
        _ => return None,
    }
    Some(())
}

/// The chunk of `view` into `out`, as the variant `wrap` makes, built in place.
fn content_chunk(
    view: &ContentChunkView<'_>,
    out: &mut SessionUpdate,
    wrap: fn(ContentChunk) -> SessionUpdate,
) -> Option<()> {
    *out = wrap(empty_chunk());
    let (SessionUpdate::AgentMessageChunk(chunk)
    | SessionUpdate::AgentThoughtChunk(chunk)
    | SessionUpdate::UserMessageChunk(chunk)) = out
    else {
        return None;
    };
    chunk.message_id = view.message_id.map(owned);
    chunk.meta = meta(view.meta)?;
    block_into(&view.content, view.content_raw, &mut chunk.content)
}

/// A block of a known type whose tag comes first (then serde streams it, reading each member
/// once, as the views do); blocks of unknown types are left to serde.
fn block(view: ContentBlockView<'_>, raw: RawValue<'_>) -> Option<ContentBlock> {
    let mut out = ContentBlock::Text(TextContent::new(String::new()));
    block_into(&view, raw, &mut out)?;
    Some(out)
}

/// [`block`] into `out`: a text block (most of them) is built in place.
fn block_into(
    view: &ContentBlockView<'_>,
    raw: RawValue<'_>,
    out: &mut ContentBlock,
) -> Option<()> {
    if !tag_first(raw, "type") {
        return None;
    }
    match view {
        ContentBlockView::Text(text) => {
            *out = ContentBlock::Text(TextContent {
                text: owned(text.text),
                annotations: annotations(text.annotations),
                meta: meta(text.meta)?,
            });
        }
        other => *out = other_block(*other, raw)?,
    }
    Some(())
}

/// The blocks other than text: rarer, kept out of the text block's way.
#[inline(never)]
fn other_block(view: ContentBlockView<'_>, raw: RawValue<'_>) -> Option<ContentBlock> {
    Some(match view {
        ContentBlockView::Image(image) => ContentBlock::Image(ImageContent {
            data: owned(image.data),
            mime_type: owned(image.mime_type),
            uri: image.uri.map(owned),
            annotations: annotations(image.annotations),
            meta: meta(image.meta)?,
        }),
        ContentBlockView::Audio(audio) => ContentBlock::Audio(AudioContent {
            data: owned(audio.data),
            mime_type: owned(audio.mime_type),
            annotations: annotations(audio.annotations),
            meta: meta(audio.meta)?,
        }),
        ContentBlockView::ResourceLink(link) => ContentBlock::ResourceLink(ResourceLink {
            uri: owned(link.uri),
            name: owned(link.name),
            title: link.title.map(owned),
            description: link.description.map(owned),
            mime_type: link.mime_type.map(owned),
            size: match link.size {
                // serde_json reads `-0` as a float, which is no `i64`.
                Some(0) if !zero_is_plain(raw.get_field("size")) => return None,
                size => size,
            },
            annotations: annotations(link.annotations),
            meta: meta(link.meta)?,
        }),
        ContentBlockView::Resource(resource) => {
            // The view hands over the block's `_meta`; the contents' own is read here.
            let contents_meta = meta(lenient_object(
                raw.get_field("resource")?.get_field("_meta"),
            ))?;
            let uri = owned(resource.uri);
            let mime_type = resource.mime_type.map(owned);
            ContentBlock::Resource(EmbeddedResource {
                resource: match resource.contents {
                    ResourceContents::Text(text) => {
                        EmbeddedResourceResource::Text(TextResourceContents {
                            uri,
                            text: owned(text),
                            mime_type,
                            meta: contents_meta,
                        })
                    }
                    ResourceContents::Blob(blob) => {
                        EmbeddedResourceResource::Blob(BlobResourceContents {
                            uri,
                            blob: owned(blob),
                            mime_type,
                            meta: contents_meta,
                        })
                    }
                },
                annotations: annotations(resource.annotations),
                meta: meta(resource.meta)?,
            })
        }
        _ => return None,
    })
}

/// The long string of a block, where no number can be: its text, data or contents.
fn long_string<'a>(view: &ContentBlockView<'a>) -> Option<JsonStr<'a>> {
    match view {
        ContentBlockView::Text(text) => Some(text.text),
        ContentBlockView::Image(media) | ContentBlockView::Audio(media) => Some(media.data),
        ContentBlockView::Resource(resource) => match resource.contents {
            ResourceContents::Text(contents) | ResourceContents::Blob(contents) => Some(contents),
        },
        _ => None,
    }
}

/// [`block`] for a block read on its own: its numbers are checked first (see [`numbers`]),
/// around its long string.
fn guarded_block(view: ContentBlockView<'_>, raw: RawValue<'_>) -> Option<ContentBlock> {
    let fit = match long_string(&view) {
        Some(long) => numbers::fit_around(raw.get(), long.raw()),
        None => numbers::fit(raw.get()),
    };
    if fit { block(view, raw) } else { None }
}

/// Default-on-error display hints: an object that does not decode reads as absent.
fn annotations(raw: Option<RawValue<'_>>) -> Option<Annotations> {
    serde_json::from_str(raw?.get()).ok()
}

/// Whether a number the view read as 0 was sent as `0`: serde_json reads `-0` as a float.
fn zero_is_plain(raw: Option<RawValue<'_>>) -> bool {
    raw.is_some_and(|raw| raw.get() == "0")
}

fn tool_kind(kind: enums::ToolKindView<'_>) -> Option<ToolKind> {
    match kind {
        enums::ToolKindView::Known(known) => <ToolKind as LeafKind>::from_str(known.as_str()),
        enums::ToolKindView::Unknown(name) => <ToolKind as LeafKind>::from_str(&owned(name)),
    }
}

fn status(status: enums::ToolCallStatusView) -> Option<ToolCallStatus> {
    <ToolCallStatus as LeafKind>::from_str(status.as_str())
}

fn location(item: RawValue<'_>) -> Option<ToolCallLocation> {
    let view: LocationView<'_> = LocationView::read(item).ok()?;
    if view.line == Some(0) && !zero_is_plain(item.get_field("line")) {
        return None;
    }
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

fn plan_entry(entry: PlanEntryView<'_>) -> Option<PlanEntry> {
    Some(PlanEntry {
        content: owned(entry.content),
        priority: <PlanEntryPriority as LeafKind>::from_str(entry.priority.as_str())?,
        status: <PlanEntryStatus as LeafKind>::from_str(entry.status.as_str())?,
        meta: meta(entry.meta)?,
    })
}
