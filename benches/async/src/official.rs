//! The echo agent on the official Rust SDK (`agent-client-protocol` 5.2.0), served over one end
//! of a `tokio::io::duplex` through the SDK's own NDJSON transport (`ByteStreams`, with
//! `tokio_util::compat` for the futures-io traits it takes).
//!
//! The logic is [`crate::echo`]'s: one chunk echoing the prompt, or `flood N` chunks of
//! [`crate::echo::FLOOD_CHUNK`], yielding to the runtime every [`crate::echo::YIELD_EVERY`]
//! sends. `send_notification` queues without bound, so the flood goes as fast as the agent can
//! produce it, not as fast as the client reads.

use std::sync::atomic::{AtomicU64, Ordering};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, ContentBlock, ContentChunk, InitializeRequest, InitializeResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, SessionNotification,
    SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client};
use tokio::io::DuplexStream;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::echo::{self, Reply};

/// Serves the echo agent on `stream` until the client closes its end.
pub async fn serve(stream: DuplexStream) {
    let (read, write) = tokio::io::split(stream);
    let sessions = AtomicU64::new(0);
    let result = Agent
        .v1()
        .name("bench-official")
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                let _ = request;
                responder.respond(
                    InitializeResponse::new(ProtocolVersion::V1)
                        .agent_capabilities(AgentCapabilities::new()),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                let n = sessions.fetch_add(1, Ordering::Relaxed) + 1;
                responder.respond(NewSessionResponse::new(format!("session-{n}")))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse>,
                        cx: ConnectionTo<Client>| {
                // The turn runs outside the dispatch loop, as an agent that streams must (an
                // SDK callback holds the loop until it returns).
                let task_cx = cx.clone();
                cx.spawn(async move {
                    turn(&task_cx, &request).await;
                    responder.respond(PromptResponse::new(StopReason::EndTurn))
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(ByteStreams::new(write.compat_write(), read.compat()))
        .await;
    // The client closing its end ends the connection; any other error is a bench failure.
    if let Err(error) = result {
        eprintln!("official agent: {error}");
    }
}

async fn turn(cx: &ConnectionTo<Client>, request: &PromptRequest) {
    let text = request
        .prompt
        .iter()
        .find_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .unwrap_or("");
    let say = |text: &str| {
        // A send error means the connection is closing; the turn ends with it.
        let _ = cx.send_notification(SessionNotification::new(
            request.session_id.clone(),
            SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(
                TextContent::new(text.to_owned()),
            ))),
        ));
    };
    match echo::reply(text) {
        Reply::Echo(text) => say(text),
        Reply::Flood(count) => {
            for sent in 1..=count {
                say(echo::FLOOD_CHUNK);
                if sent % echo::YIELD_EVERY == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }
    }
}
