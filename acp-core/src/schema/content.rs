//! Content blocks: what prompts, message chunks and tool output are made of.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::lenient::{self, Meta, string_enum};
use super::tagged::tagged_union;

/// One piece of content, discriminated by `type`.
///
/// `text` and `resource_link` are always allowed in prompts; `image`, `audio` and `resource`
/// only when the agent advertised them. A block whose `type` this version does not know is kept
/// in [`ContentBlock::Unknown`] and re-encodes unchanged.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `type: "text"`.
    Text(TextContent),
    /// `type: "image"`.
    Image(ImageContent),
    /// `type: "audio"`.
    Audio(AudioContent),
    /// `type: "resource_link"`.
    ResourceLink(ResourceLink),
    /// `type: "resource"`.
    Resource(EmbeddedResource),
    /// A block of a type this version does not know: the whole object, tag included.
    Unknown(Meta),
}

tagged_union!(ContentBlock, "type", {
    Text(TextContent) = "text",
    Image(ImageContent) = "image",
    Audio(AudioContent) = "audio",
    ResourceLink(ResourceLink) = "resource_link",
    Resource(EmbeddedResource) = "resource",
}, unknown = Unknown);

impl ContentBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// The block's `type` value.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Text(_) => "text",
            Self::Image(_) => "image",
            Self::Audio(_) => "audio",
            Self::ResourceLink(_) => "resource_link",
            Self::Resource(_) => "resource",
            Self::Unknown(object) => object.get("type").and_then(|t| t.as_str()).unwrap_or(""),
        }
    }
}

/// `type: "text"`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub annotations: Option<Annotations>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Text with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// `type: "image"`: base64 data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ImageContent {
    /// Base64-encoded image bytes.
    pub data: String,
    /// e.g. `image/png`.
    pub mime_type: String,
    /// Where the image came from.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub uri: Option<String>,
    /// Display hints.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub annotations: Option<Annotations>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `type: "audio"`: base64 data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AudioContent {
    /// Base64-encoded audio bytes.
    pub data: String,
    /// e.g. `audio/wav`.
    pub mime_type: String,
    /// Display hints.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub annotations: Option<Annotations>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `type: "resource_link"`: a reference the agent may fetch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// A name for display.
    pub name: String,
    /// A human title.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub mime_type: Option<String>,
    /// Its size in bytes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub size: Option<i64>,
    /// Display hints.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub annotations: Option<Annotations>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `type: "resource"`: the contents of a resource, inline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// Text or blob contents.
    pub resource: EmbeddedResourceResource,
    /// Display hints.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub annotations: Option<Annotations>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// The contents of an embedded resource: text, or base64 `blob`.
///
/// The schema leaves this untagged; it is decided by which of `text` / `blob` is present
/// (`text` wins when both are).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum EmbeddedResourceResource {
    /// `{uri, text, mimeType?}`.
    Text(TextResourceContents),
    /// `{uri, blob, mimeType?}`.
    Blob(BlobResourceContents),
}

/// Text resource contents.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// The text.
    pub text: String,
    /// Its MIME type.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub mime_type: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Binary resource contents.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BlobResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Base64-encoded bytes.
    pub blob: String,
    /// Its MIME type.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub mime_type: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// Every field either resource shape can have; decided after reading.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceFields {
    uri: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    blob: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    mime_type: Option<String>,
    #[serde(rename = "_meta", default, deserialize_with = "lenient::meta")]
    meta: Option<Meta>,
}

impl<'de> Deserialize<'de> for EmbeddedResourceResource {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = ResourceFields::deserialize(d)?;
        match (fields.text, fields.blob) {
            (Some(text), _) => Ok(Self::Text(TextResourceContents {
                uri: fields.uri,
                text,
                mime_type: fields.mime_type,
                meta: fields.meta,
            })),
            (None, Some(blob)) => Ok(Self::Blob(BlobResourceContents {
                uri: fields.uri,
                blob,
                mime_type: fields.mime_type,
                meta: fields.meta,
            })),
            (None, None) => Err(serde::de::Error::missing_field("text")),
        }
    }
}

impl Serialize for EmbeddedResourceResource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(text) => text.serialize(s),
            Self::Blob(blob) => blob.serialize(s),
        }
    }
}

/// Hints for how a client shows content.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Who the content is for.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt_skip_invalid"
    )]
    pub audience: Option<Vec<Role>>,
    /// ISO 8601 timestamp of the last change.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub last_modified: Option<String>,
    /// Importance from 0 to 1.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub priority: Option<f64>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

string_enum! {
    /// Who a message or annotation is from or for.
    pub enum Role (closed) {
        /// The agent.
        Assistant = "assistant",
        /// The user.
        User = "user",
    }
}
