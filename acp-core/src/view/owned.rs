//! The owned decode's fast path: the hot `session/update` kinds (message and thought chunks,
//! tool calls, tool call updates, plans), and in [`turn`] the prompt and permission requests
//! and their results, built from the borrowed view of the span the envelope scanner already
//! validated, instead of parsing it again with serde_json.
//!
//! The result is the same value the serde path gives, or nothing: any shape the fast path is not
//! sure to read exactly as serde does (a tag that is not the object's first member, a block
//! of a type this version does not know, a list item that does not decode, a number serde_json
//! cannot hold, any error) falls back to the serde path ([`AgentNotification::decode`] and its
//! siblings), so errors keep their exact messages. `_meta`, annotations and raw tool
//! input/output are still read by serde_json, from their own spans.

use alloc::string::String;
use alloc::vec::Vec;

use crate::schema::lenient::LeafKind;
use crate::schema::{
    AgentNotification, Annotations, AudioContent, BlobResourceContents, ContentBlock, ContentChunk,
    DecodeError, Diff, EmbeddedResource, EmbeddedResourceResource, ImageContent, Meta, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, ResourceLink, SessionNotification,
    SessionUpdate, TerminalContent, TextContent, TextResourceContents, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolContent, ToolKind,
};
use crate::wire::json::skip_ws_unchecked;
use crate::wire::{JsonStr, RawValue};

use super::content::{ContentBlockView, ResourceContents};
use super::enums;
use super::read::lenient_object;
use super::update::{
    ContentChunkView, LocationView, PlanEntryView, SessionNotificationView, SessionUpdateView,
    ToolCallContentView, ToolCallUpdateView, ToolCallView,
};

mod turn;

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

/// The decoded text of a wire string. Runs between escapes are found with `str::find` (a
/// word-at-a-time search) and copied whole; each escape is decoded by the wire layer.
fn owned(text: JsonStr<'_>) -> String {
    let Some(plain) = text.as_plain() else {
        return unescape(text.raw());
    };
    String::from(plain)
}

fn unescape(mut rest: &str) -> String {
    let mut out = String::with_capacity(rest.len());
    // Bounded by the text: every step consumes at least one byte.
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = &rest.as_bytes()[at..];
        let len = match escape.get(1) {
            // A high surrogate escape is followed by its low half (validated text).
            Some(b'u')
                if matches!(escape.get(2), Some(b'd' | b'D'))
                    && matches!(escape.get(3), Some(b'8' | b'9' | b'a' | b'b' | b'A' | b'B')) =>
            {
                12
            }
            Some(b'u') => 6,
            _ => 2,
        };
        let end = (at + len).min(rest.len());
        let piece = rest.get(at..end).unwrap_or_default();
        out.extend(JsonStr::new_unchecked(piece, true).chars());
        rest = rest.get(end..).unwrap_or_default();
        if end == at {
            break;
        }
    }
    out.push_str(rest);
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
    if !numbers_fit(params.get()) {
        return None;
    }
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

/// A block of a known type whose tag comes first (then serde streams it, reading each member
/// once, as the views do); blocks of unknown types are left to serde.
fn block(view: ContentBlockView<'_>, raw: RawValue<'_>) -> Option<ContentBlock> {
    if !tag_first(raw, "type") {
        return None;
    }
    Some(match view {
        ContentBlockView::Text(text) => ContentBlock::Text(TextContent {
            text: owned(text.text),
            annotations: annotations(text.annotations),
            meta: meta(text.meta)?,
        }),
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

/// Default-on-error display hints: an object that does not decode reads as absent.
fn annotations(raw: Option<RawValue<'_>>) -> Option<Annotations> {
    serde_json::from_str(raw?.get()).ok()
}

/// Whether a number the view read as 0 was sent as `0`: serde_json reads `-0` as a float.
fn zero_is_plain(raw: Option<RawValue<'_>>) -> bool {
    raw.is_some_and(|raw| raw.get() == "0")
}

/// Whether every number sent as a member's value (after a `:`) is one serde_json reads without
/// failing. serde_json refuses numbers beyond `f64` (`1e400`) even in the lenient fields the
/// views read as absent, so messages that may hold one are left to serde. Conservative: any
/// exponent or very long number, and any `:` inside a string followed by one, declines.
///
/// Most lines hold a few `:`s among hundreds of bytes of text, so the text is checked 32 bytes
/// at a time, without branches (the compiler makes it a few vector compares), for a `:`
/// followed by what may start a number; only such blocks are looked at closely.
fn numbers_fit(text: &str) -> bool {
    const BLOCK: usize = 32;
    let bytes = text.as_bytes();
    let mut at = 0;
    // Bounded by the text: every step moves one block on.
    while let Some(window) = bytes
        .get(at..at + BLOCK + 1)
        .and_then(|window| <&[u8; BLOCK + 1]>::try_from(window).ok())
    {
        let mut suspect = false;
        for i in 0..BLOCK {
            // Digits, `-` and whitespace are the bytes below `:` other than `"`.
            let next = window[i + 1];
            suspect |= (window[i] == b':') & (next < b':') & (next != b'"');
        }
        if suspect && !(at..at + BLOCK).all(|colon| number_after(bytes, colon)) {
            return false;
        }
        at += BLOCK;
    }
    (at..bytes.len()).all(|colon| number_after(bytes, colon))
}

/// Unless `bytes[colon]` is a `:`, true; else [`number_fits`] for the value after it.
fn number_after(bytes: &[u8], colon: usize) -> bool {
    bytes.get(colon) != Some(&b':') || number_fits(bytes, colon + 1)
}

/// Whether the value starting after a `:` (past whitespace), if a number, is one serde_json
/// reads: no exponent, and far below the length of one that overflows an `f64` without one.
fn number_fits(bytes: &[u8], after: usize) -> bool {
    let start = skip_ws_unchecked(bytes, after);
    let mut end = start;
    // Bounded by the text.
    while let Some(&byte) = bytes.get(end) {
        match byte {
            b'0'..=b'9' | b'-' | b'.' => end += 1,
            b'e' | b'E' if end > start => return false,
            _ => break,
        }
    }
    end - start <= 300
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

#[cfg(test)]
mod tests {
    use super::numbers_fit;
    use alloc::format;

    #[test]
    fn numbers_past_f64_are_found_at_every_offset() {
        for pad in 0..70 {
            let pad = "x".repeat(pad);
            for (value, fits) in [
                ("1", true),
                ("-12.5", true),
                ("\"1e400\"", true),
                ("1e400", false),
                ("-2E+999", false),
                ("0.5e-3", false),
                (" \n1e5", false),
            ] {
                let text = format!(r#"{{"{pad}":{value}}}"#);
                assert_eq!(numbers_fit(&text), fits, "{text}");
            }
            let long = "9".repeat(301);
            assert!(!numbers_fit(&format!(r#"{{"{pad}":{long}}}"#)));
            assert!(numbers_fit(&format!(r#"{{"{pad}":{}}}"#, &long[1..])));
            // Inside a string too: conservative.
            assert!(!numbers_fit(&format!(r#"{{"k":"{pad}:1e5"}}"#)));
        }
    }
}
