//! Content blocks, borrowed: what prompts and message chunks are made of.

use crate::wire::{JsonStr, RawValue};

use super::error::{Detail, Fault};
use super::read::{
    EMPTY_OBJECT, Read, dropped, fill, fill_string, key_name, leading_tag, lenient_object,
    lenient_str, members, object, required_object, required_str, skip, span, strict_opt_str,
    walk_after,
};

/// One content block, discriminated by `type`. Blocks of a type this version does not know
/// are kept whole in [`ContentBlockView::Unknown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentBlockView<'a> {
    /// `type: "text"`.
    Text(TextView<'a>),
    /// `type: "image"`.
    Image(MediaView<'a>),
    /// `type: "audio"`.
    Audio(MediaView<'a>),
    /// `type: "resource_link"`.
    ResourceLink(ResourceLinkView<'a>),
    /// `type: "resource"`.
    Resource(EmbeddedResourceView<'a>),
    /// A block of another type: the whole object, tag included.
    Unknown(RawValue<'a>),
}

/// `type: "text"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TextView<'a> {
    /// The text, still escaped (see [`JsonStr::as_plain`] and [`JsonStr::unescape_into`]).
    pub text: JsonStr<'a>,
    /// Display hints, when an object (not looked into).
    pub annotations: Option<RawValue<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
    /// Whether a `_meta` that is no object was dropped: serde_json still reads it as a value
    /// (and refuses a number beyond `f64` in it), so the owned fast path leaves it to serde.
    pub(crate) lossy: bool,
}

/// `type: "image"` or `type: "audio"`: base64 data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MediaView<'a> {
    /// Base64-encoded bytes.
    pub data: JsonStr<'a>,
    /// e.g. `image/png`.
    pub mime_type: JsonStr<'a>,
    /// Where an image came from (images only).
    pub uri: Option<JsonStr<'a>>,
    /// Display hints, when an object.
    pub annotations: Option<RawValue<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

/// `type: "resource_link"`: a reference the agent may fetch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceLinkView<'a> {
    /// The resource's URI.
    pub uri: JsonStr<'a>,
    /// A name for display.
    pub name: JsonStr<'a>,
    /// A human title.
    pub title: Option<JsonStr<'a>>,
    /// What the resource is.
    pub description: Option<JsonStr<'a>>,
    /// Its MIME type.
    pub mime_type: Option<JsonStr<'a>>,
    /// Its size in bytes.
    pub size: Option<i64>,
    /// Display hints, when an object.
    pub annotations: Option<RawValue<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

/// `type: "resource"`: a resource's contents, inline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EmbeddedResourceView<'a> {
    /// The resource's URI.
    pub uri: JsonStr<'a>,
    /// Its text or base64 blob (`text` wins when both are sent).
    pub contents: ResourceContents<'a>,
    /// Its MIME type.
    pub mime_type: Option<JsonStr<'a>>,
    /// Display hints of the block, when an object.
    pub annotations: Option<RawValue<'a>>,
    /// Extension data of the block, when an object.
    pub meta: Option<RawValue<'a>>,
}

/// The contents of an embedded resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceContents<'a> {
    /// Text.
    Text(JsonStr<'a>),
    /// Base64-encoded bytes.
    Blob(JsonStr<'a>),
}

impl<'a> ContentBlockView<'a> {
    /// Reads the block at `text[start]`, in one walk when it is a text block whose `type`
    /// comes first; returns it and the offset just past it.
    pub(crate) fn read_at(text: &'a str, start: usize) -> Read<'a, (Self, usize)> {
        let mut block = Self::Unknown(EMPTY_OBJECT);
        let end = block.read_into(text, start)?;
        Ok((block, end))
    }

    /// [`read_at`](Self::read_at) into `self`, where the caller keeps the block: the hot
    /// text block is built in place instead of being moved out through every layer above.
    /// Returns the offset just past the block.
    pub(crate) fn read_into(&mut self, text: &'a str, start: usize) -> Read<'a, usize> {
        if text.as_bytes().get(start) != Some(&b'{') {
            return Err(Fault::here(Detail::MustBe("a JSON object")));
        }
        let Some((_text, after)) = leading_tag(text, start, "type", ["text"]) else {
            let end = skip(text, start);
            *self = Self::read(span(text, start, end))?;
            return Ok(end);
        };
        let (mut body, mut annotations, mut meta) = (None, None, None);
        let mut string = None;
        // The tag is not read again: a second `type` is an unknown member here.
        let end = walk_after(text, after, |key, at| {
            let (slot, name) = match key_name(key, &["text", "annotations", "_meta"]) {
                "text" => {
                    // The escape flag comes from the skip: the text is not scanned twice.
                    if let Some(end) = fill_string(text, at, &mut body, &mut string, "text")? {
                        return Ok(end);
                    }
                    (&mut body, "text")
                }
                "annotations" => (&mut annotations, "annotations"),
                "_meta" => (&mut meta, "_meta"),
                _ => return Ok(skip(text, at)),
            };
            let end = skip(text, at);
            fill(slot, name, span(text, at, end))?;
            Ok(end)
        })?;
        let text = match string {
            Some(string) => string,
            None => required_str(body, "text")?,
        };
        *self = Self::Text(TextView {
            text,
            annotations: lenient_object(annotations),
            meta: lenient_object(meta),
            lossy: dropped(meta),
        });
        Ok(end)
    }

    /// Reads a block with the owned `ContentBlock`'s rules.
    pub(crate) fn read(value: RawValue<'a>) -> Read<'a, Self> {
        let value = object(value)?;
        let tag = required_str(value.get_field("type"), "type")?;
        let Some(tag) = tag.as_plain() else {
            // Every known tag is plain ASCII; an escaped spelling of one is still that tag.
            return Self::read_escaped_tag(value, tag);
        };
        Self::read_tagged(value, tag)
    }

    #[cold]
    fn read_escaped_tag(value: RawValue<'a>, tag: JsonStr<'a>) -> Read<'a, Self> {
        for known in ["text", "image", "audio", "resource_link", "resource"] {
            if tag.eq_str(known) {
                return Self::read_tagged(value, known);
            }
        }
        Ok(Self::Unknown(value))
    }

    fn read_tagged(value: RawValue<'a>, tag: &str) -> Read<'a, Self> {
        Ok(match tag {
            "text" => {
                let [text, annotations, meta] = members(value, ["text", "annotations", "_meta"])?;
                Self::Text(TextView {
                    text: required_str(text, "text")?,
                    annotations: lenient_object(annotations),
                    meta: lenient_object(meta),
                    lossy: dropped(meta),
                })
            }
            "image" | "audio" => {
                let [data, mime_type, uri, annotations, meta] =
                    members(value, ["data", "mimeType", "uri", "annotations", "_meta"])?;
                let media = MediaView {
                    data: required_str(data, "data")?,
                    mime_type: required_str(mime_type, "mimeType")?,
                    // Audio has no `uri`; it is an unknown member there.
                    uri: if tag == "image" {
                        lenient_str(uri)
                    } else {
                        None
                    },
                    annotations: lenient_object(annotations),
                    meta: lenient_object(meta),
                };
                if tag == "image" {
                    Self::Image(media)
                } else {
                    Self::Audio(media)
                }
            }
            "resource_link" => {
                let [
                    uri,
                    name,
                    title,
                    description,
                    mime_type,
                    size,
                    annotations,
                    meta,
                ] = members(
                    value,
                    [
                        "uri",
                        "name",
                        "title",
                        "description",
                        "mimeType",
                        "size",
                        "annotations",
                        "_meta",
                    ],
                )?;
                Self::ResourceLink(ResourceLinkView {
                    uri: required_str(uri, "uri")?,
                    name: required_str(name, "name")?,
                    title: lenient_str(title),
                    description: lenient_str(description),
                    mime_type: lenient_str(mime_type),
                    size: size.and_then(|s| s.as_i64()),
                    annotations: lenient_object(annotations),
                    meta: lenient_object(meta),
                })
            }
            "resource" => {
                let [resource, annotations, meta] =
                    members(value, ["resource", "annotations", "_meta"])?;
                let resource = required_object(resource, "resource")?;
                let (uri, contents, mime_type) =
                    read_resource(resource).map_err(|fault| fault.at("resource"))?;
                Self::Resource(EmbeddedResourceView {
                    uri,
                    contents,
                    mime_type,
                    annotations: lenient_object(annotations),
                    meta: lenient_object(meta),
                })
            }
            _ => Self::Unknown(value),
        })
    }

    /// The block's `type` value.
    pub fn type_name(&self) -> &'a str {
        match self {
            Self::Text(_) => "text",
            Self::Image(_) => "image",
            Self::Audio(_) => "audio",
            Self::ResourceLink(_) => "resource_link",
            Self::Resource(_) => "resource",
            Self::Unknown(raw) => raw
                .get_field("type")
                .and_then(|t| t.as_str())
                .map_or("", |t| t.raw()),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<JsonStr<'a>> {
        match self {
            Self::Text(text) => Some(text.text),
            _ => None,
        }
    }
}

type ResourceParts<'a> = (JsonStr<'a>, ResourceContents<'a>, Option<JsonStr<'a>>);

/// `{uri, text | blob, mimeType?}`, decided by which of `text` / `blob` is present.
fn read_resource(resource: RawValue<'_>) -> Read<'_, ResourceParts<'_>> {
    let [uri, text, blob, mime_type, _meta] =
        members(resource, ["uri", "text", "blob", "mimeType", "_meta"])?;
    let uri = required_str(uri, "uri")?;
    let text = strict_opt_str(text, "text")?;
    let blob = strict_opt_str(blob, "blob")?;
    let contents = match (text, blob) {
        (Some(text), _) => ResourceContents::Text(text),
        (None, Some(blob)) => ResourceContents::Blob(blob),
        (None, None) => return Err(Fault::field("text", Detail::Required)),
    };
    Ok((uri, contents, lenient_str(mime_type)))
}
