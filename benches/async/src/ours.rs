//! The echo agent on our `acp-async` layer: an [`Agent`] served with `acp_async::serve` over
//! one end of a `tokio::io::duplex`, seen as futures-io through `tokio_util::compat`, on
//! acp-async's tokio clock (feature `tokio`).
//!
//! The logic is [`crate::echo`]'s, as on the official side: one chunk echoing the prompt, or
//! `flood N` chunks of [`crate::echo::FLOOD_CHUNK`] sent with `Turn::message` (the typed
//! `agent_message_chunk`, the call an application makes; or, with `--ours-send raw`, one
//! pre-encoded `RawUpdate` sent with `Turn::send`), yielding to the runtime every
//! [`crate::echo::YIELD_EVERY`] sends. Both wait for room in acp-core's outbox, so a client
//! that stops reading holds the flood instead of queueing it.

use acp_async::acp_core::conn::agent::RawUpdate;
use acp_async::acp_core::prelude::{AgentConfig, AgentInfo, StopReason};
use acp_async::acp_core::schema::{ContentBlock, PromptRequest};
use acp_async::tokio::Tokio;
use acp_async::{Agent, Error, Turn};
use tokio::io::DuplexStream;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::echo::{self, Reply};

/// How the flood's chunks are sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkSend {
    /// `Turn::message(text)`: a typed chunk made from the text each time.
    Message,
    /// `Turn::send(&RawUpdate)`: the same chunk, encoded once before the flood.
    Raw,
}

/// The flood's chunk as a `session/update`'s `update`, for [`ChunkSend::Raw`].
const RAW_CHUNK: &str = concat!(
    r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""#,
    "abcdefghijklmnopqrstuvwxyzabcdef",
    r#""}}"#
);

struct Echo {
    send: ChunkSend,
}

impl Agent for Echo {
    async fn prompt(&self, request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        let text = request
            .prompt
            .iter()
            .find_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .unwrap_or("");
        match echo::reply(text) {
            Reply::Echo(text) => turn.message(text).await?,
            Reply::Flood(count) => {
                let raw = RawUpdate::new(RAW_CHUNK).expect("a valid update");
                for sent in 1..=count {
                    match self.send {
                        ChunkSend::Message => turn.message(echo::FLOOD_CHUNK).await?,
                        ChunkSend::Raw => turn.send(&raw).await?,
                    }
                    if sent % echo::YIELD_EVERY == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }
        }
        Ok(StopReason::EndTurn)
    }
}

/// Serves the echo agent on `stream` until the client closes its end.
pub async fn serve(stream: DuplexStream, send: ChunkSend) {
    let (read, write) = tokio::io::split(stream);
    let config = AgentConfig::new(AgentInfo::new("bench-ours", "Bench (acp-async)", "0.0.0"));
    let served = acp_async::serve(
        config,
        Echo { send },
        Tokio::new(),
        read.compat(),
        write.compat_write(),
    )
    .await;
    if let Err(error) = served {
        eprintln!("our agent: {error}");
    }
}
