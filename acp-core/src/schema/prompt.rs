//! Prompt turns: `session/prompt` and `session/cancel`.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::content::ContentBlock;
use super::lenient::{self, Meta};

/// `session/prompt` params: one user turn.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptRequest {
    /// The session.
    pub session_id: String,
    /// The user's message. Every block must decode (no skipping: a prompt is never silently
    /// changed).
    #[serde(deserialize_with = "content_blocks")]
    pub prompt: Vec<ContentBlock>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl PromptRequest {
    /// A prompt for a session.
    pub fn new(session_id: impl Into<String>, prompt: Vec<ContentBlock>) -> Self {
        Self {
            session_id: session_id.into(),
            prompt,
            meta: None,
        }
    }
}

/// A strict array of blocks, named the way Agentao's error message names it.
fn content_blocks<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ContentBlock>, D::Error> {
    struct Blocks;
    impl<'de> serde::de::Visitor<'de> for Blocks {
        type Value = Vec<ContentBlock>;
        fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.write_str("a JSON array of ContentBlocks")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
            while let Some(block) = seq.next_element()? {
                blocks.push(block);
            }
            Ok(blocks)
        }
    }
    d.deserialize_seq(Blocks)
}

/// `session/prompt` result: the turn is over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptResponse {
    /// Why the turn ended.
    pub stop_reason: StopReason,
    /// The turn's token usage. Unstable in schema 1.20.0 (`unstable_end_turn_token_usage`):
    /// a client on the stable schema ignores it; one that is not an object reads as absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::or_default"
    )]
    pub usage: Option<Usage>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl PromptResponse {
    /// A turn that ended for `stop_reason`.
    pub fn new(stop_reason: StopReason) -> Self {
        Self {
            stop_reason,
            usage: None,
            meta: None,
        }
    }

    /// The same answer, with the turn's token usage.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }
}

/// A turn's token usage (`PromptResponse.usage`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Usage {
    /// All tokens: input and output.
    pub total_tokens: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Reasoning tokens, when known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub thought_tokens: Option<u64>,
    /// Input tokens read from the provider's cache, when known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub cached_read_tokens: Option<u64>,
    /// Input tokens written to the provider's cache, when known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub cached_write_tokens: Option<u64>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl Usage {
    /// `input_tokens` in and `output_tokens` out; `total_tokens` is their sum.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            total_tokens: input_tokens.saturating_add(output_tokens),
            input_tokens,
            output_tokens,
            ..Self::default()
        }
    }
}

/// Why a turn ended: the one [`StopReason`](crate::machine::turn::StopReason) of the crate,
/// which the connections' machines use too.
pub use crate::machine::turn::StopReason;

impl super::lenient::LeafKind for StopReason {
    fn from_str(name: &str) -> Option<Self> {
        StopReason::from_wire(name)
    }
}

/// `session/cancel` params (a notification; Agentao also accepts it as a request).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelNotification {
    /// The session whose turn to cancel.
    pub session_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl CancelNotification {
    /// Cancels a session's turn.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            meta: None,
        }
    }
}

/// The result of `session/cancel` sent as a request: `{}` (Agentao answers `null`, which is
/// read as `{}` too).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CancelResponse {
    /// Extension data.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl<'de> Deserialize<'de> for CancelResponse {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Fields {
            #[serde(rename = "_meta", default, deserialize_with = "lenient::meta")]
            meta: Option<Meta>,
        }
        let fields: Option<Fields> = Deserialize::deserialize(d)?;
        Ok(Self {
            meta: fields.and_then(|f| f.meta),
        })
    }
}
