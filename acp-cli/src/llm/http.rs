//! The model client's transport: one streamed Chat Completions request over HTTP/1.1, on
//! smol's TCP, wrapped in TLS (rustls, ring, the webpki roots) for `https://`.
//!
//! [`stream_chat`] hands each [`StreamEvent`] to its callback as it arrives and resolves to
//! the [`Finished`] answer or a [`ModelError`]. It holds the connection and nothing else, so
//! dropping the future (a cancelled turn races it against the cancel) closes the socket at
//! once: the response is never drained. Each request has its own connection
//! (`Connection: close`).
//!
//! The connection, the request and response heads and the body framing are `crate::net`'s,
//! shared with the MCP streamable HTTP transport (`mcp::http`): one HTTP client in the agent.
//!
//! Two timeouts bound a request (R-LLM-6): connecting (TCP and the TLS handshake) and
//! silence (no byte while the head or the next piece of the body is awaited). Either fails
//! the request with [`ModelError::Timeout`], naming it and its seconds.
//!
//! The API key is written into the `Authorization` header and nowhere else: tracing logs
//! name the provider, model and URL only, and every error text is scrubbed of the key in
//! case a server echoes it.

use std::time::Duration;

use super::config::{ModelConfig, Timeouts};
use super::openai::{self, Progress, StreamAssembler};
use super::retry::{self, RetryPolicy, Sleeper, TimerSleeper};
use crate::model::chat::{ChatRequest, Finished, ModelError, StreamEvent};
use crate::model::{Completion, ModelClient};
use crate::net::connection::{
    ConnectError, Connection, HeadError, READ_SIZE, read_head, within, write_request_head,
};
use crate::net::endpoint::Endpoint;
use crate::net::response::{BodyDecoder, ResponseHead};
use crate::net::sse::SseParser;

/// The most bytes of an error body that are read (for its message).
const ERROR_BODY_LIMIT: usize = 64 << 10;

/// Streams one chat completion with the default retry policy and real timers.
pub async fn stream_chat(
    config: &ModelConfig,
    request: &ChatRequest,
    on_event: impl FnMut(StreamEvent),
) -> Result<Finished, ModelError> {
    stream_chat_with(
        config,
        request,
        on_event,
        &RetryPolicy::default(),
        &mut TimerSleeper,
    )
    .await
}

/// Whether a request asks for usage, and whether the server refused the field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsageAsk {
    /// Send `stream_options.include_usage`; if the server refuses it, send the request again
    /// without it.
    Ask,
    /// Leave it out (the server refused it before).
    Skip,
}

/// The answer of [`stream_chat_usage`]: the outcome, and whether the server refused
/// `stream_options` on the way (so the caller stops asking, R-LLM-USAGE-1).
pub struct UsageOutcome {
    /// The answer or the error.
    pub result: Result<Finished, ModelError>,
    /// The server answered 400 or 422 naming `stream_options` or `include_usage`.
    pub refused: bool,
}

/// Streams one chat completion as [`stream_chat_with`], asking for usage as `ask` says.
/// A 400 or 422 whose message names `stream_options` or `include_usage` is the server
/// refusing the field: the request is sent once more without it (R-LLM-USAGE-1).
pub async fn stream_chat_usage(
    config: &ModelConfig,
    request: &ChatRequest,
    mut on_event: impl FnMut(StreamEvent),
    ask: UsageAsk,
    policy: &RetryPolicy,
    sleeper: &mut impl Sleeper,
) -> UsageOutcome {
    if ask == UsageAsk::Ask {
        let result = stream_once(config, request, &mut on_event, true, policy, sleeper).await;
        match &result {
            Err(ModelError::Status { status, message }) if refuses_usage(*status, message) => {
                tracing::info!(
                    provider = %config.provider,
                    status,
                    "the server refused stream_options; asking without usage from now on"
                );
            }
            _ => {
                return UsageOutcome {
                    result,
                    refused: false,
                };
            }
        }
    }
    let result = stream_once(config, request, &mut on_event, false, policy, sleeper).await;
    UsageOutcome {
        result,
        refused: ask == UsageAsk::Ask,
    }
}

/// Whether an error answer is the server refusing `stream_options`: 400 or 422 whose
/// message names the field.
pub(crate) fn refuses_usage(status: u16, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    matches!(status, 400 | 422)
        && (message.contains("stream_options") || message.contains("include_usage"))
}

/// Streams one chat completion: `POST <base_url>/chat/completions` with `stream: true`.
/// 429 and 5xx answers are retried as `policy` says, waiting through `sleeper`; once the
/// body streams, a failure is final (its events were already handed out).
pub async fn stream_chat_with(
    config: &ModelConfig,
    request: &ChatRequest,
    mut on_event: impl FnMut(StreamEvent),
    policy: &RetryPolicy,
    sleeper: &mut impl Sleeper,
) -> Result<Finished, ModelError> {
    stream_once(config, request, &mut on_event, false, policy, sleeper).await
}

/// One streamed completion, with `stream_options.include_usage` when `include_usage`.
async fn stream_once(
    config: &ModelConfig,
    request: &ChatRequest,
    mut on_event: impl FnMut(StreamEvent),
    include_usage: bool,
    policy: &RetryPolicy,
    sleeper: &mut impl Sleeper,
) -> Result<Finished, ModelError> {
    config.check()?;
    let endpoint = config.endpoint()?;
    let timeouts = config.timeouts.clone().map_err(ModelError::Config)?;
    let key = config
        .api_key
        .as_ref()
        .map(|key| key.expose())
        .unwrap_or_default();
    let body = openai::request_body(request, include_usage);
    let head = request_head(&endpoint, key, body.len());
    let url = format!(
        "{}://{}{}/chat/completions",
        if endpoint.tls { "https" } else { "http" },
        endpoint.host_header(),
        endpoint.path
    );
    let mut attempt = 1;
    let outcome = loop {
        tracing::debug!(
            provider = %config.provider,
            model = %request.model,
            %url,
            attempt,
            messages = request.messages.len(),
            "model request"
        );
        match exchange(
            &endpoint,
            config.ca_file.as_deref(),
            timeouts,
            &head,
            &body,
            &mut on_event,
        )
        .await
        {
            Err(Attempt::Busy {
                status,
                message,
                retry_after,
            }) => {
                if attempt >= policy.attempts {
                    break Err(ModelError::Status { status, message });
                }
                let delay = policy.delay(attempt, retry_after);
                tracing::warn!(
                    status,
                    attempt,
                    delay_ms = delay.as_millis() as u64,
                    "the model server is busy; retrying"
                );
                sleeper.sleep(delay).await;
                attempt += 1;
            }
            Err(Attempt::Failed(error)) => break Err(error),
            Ok(finished) => break Ok(finished),
        }
    };
    match outcome {
        Ok(finished) => {
            tracing::debug!(
                reason = ?finished.reason,
                tool_calls = finished.tool_calls.len(),
                "model answer finished"
            );
            Ok(finished)
        }
        Err(error) => {
            let error = scrub(error, key);
            tracing::warn!(%error, "model request failed");
            Err(error)
        }
    }
}

/// How one try ended when it did not stream an answer.
enum Attempt {
    /// 429 or 5xx: worth another try.
    Busy {
        /// The status.
        status: u16,
        /// The provider's message.
        message: String,
        /// `Retry-After`, when sent.
        retry_after: Option<core::time::Duration>,
    },
    /// Anything else: final.
    Failed(ModelError),
}

impl From<ModelError> for Attempt {
    fn from(error: ModelError) -> Self {
        Self::Failed(error)
    }
}

/// The request line and headers (the only place the key is written).
fn request_head(endpoint: &Endpoint, key: &str, body_length: usize) -> Vec<u8> {
    let authorization = format!("Bearer {key}");
    write_request_head(
        "POST",
        &format!("{}/chat/completions", endpoint.path),
        &endpoint.host_header(),
        &[
            ("Authorization", authorization.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "text/event-stream"),
        ],
        Some(body_length),
    )
}

/// The error of the idle timeout running out at `place` (R-LLM-6).
fn idle_timeout(idle: Duration, place: &str) -> ModelError {
    ModelError::Timeout(format!(
        "idle timeout: no byte for {} s {place} (LLM_IDLE_TIMEOUT)",
        crate::net::seconds(idle)
    ))
}

/// One try: connect, send, read the head, then stream the body or read the error body.
async fn exchange(
    endpoint: &Endpoint,
    ca_file: Option<&str>,
    timeouts: Timeouts,
    head: &[u8],
    body: &[u8],
    on_event: &mut impl FnMut(StreamEvent),
) -> Result<Finished, Attempt> {
    let mut connection = Connection::open(endpoint, ca_file, timeouts.connect).await?;
    let waiting_for_head = "while waiting for the response head";
    within(timeouts.idle, connection.send(head, body))
        .await
        .ok_or_else(|| idle_timeout(timeouts.idle.unwrap_or_default(), waiting_for_head))?
        .map_err(|error| ModelError::Connect(format!("sending the request failed: {error}")))?;
    let (head, rest) =
        read_head(&mut connection, timeouts.idle)
            .await
            .map_err(|error| match error {
                HeadError::Closed(why) => ModelError::Connect(why),
                HeadError::Malformed(why) => ModelError::Stream(why),
                HeadError::Idle(idle) => idle_timeout(idle, waiting_for_head),
            })?;
    let mut decoder = head.body_decoder().map_err(ModelError::Stream)?;
    if !(200..300).contains(&head.status) {
        let message =
            read_error_body(&mut connection, &mut decoder, rest, &head, timeouts.idle).await;
        return Err(match head.status {
            401 | 403 => ModelError::Unauthorized {
                status: head.status,
                message,
            }
            .into(),
            status if retry::is_retryable(status) => Attempt::Busy {
                status,
                message,
                retry_after: head.retry_after(),
            },
            status => ModelError::Status { status, message }.into(),
        });
    }
    if let Some(kind) = head.header("content-type")
        && !kind.contains("text/event-stream")
    {
        let message =
            read_error_body(&mut connection, &mut decoder, rest, &head, timeouts.idle).await;
        return Err(ModelError::Stream(format!(
            "the server answered {kind}, not an event stream: {message}"
        ))
        .into());
    }
    stream_body(&mut connection, decoder, rest, timeouts.idle, on_event)
        .await
        .map_err(Attempt::Failed)
}

/// Reads a successful body through the SSE parser and the chunk assembler.
async fn stream_body(
    connection: &mut Connection,
    mut decoder: BodyDecoder,
    first: Vec<u8>,
    idle: Option<Duration>,
    on_event: &mut impl FnMut(StreamEvent),
) -> Result<Finished, ModelError> {
    let mut parser = SseParser::new();
    let mut assembler = StreamAssembler::new();
    let mut events = Vec::new();
    let mut body = Vec::with_capacity(READ_SIZE);
    let mut raw = first;
    loop {
        body.clear();
        let complete = decoder
            .decode(&raw, &mut body)
            .map_err(|why| ModelError::Stream(format!("the response body is malformed: {why}")))?;
        events.clear();
        let parsed = parser.feed(&body, &mut events);
        for event in &events {
            if assembler.on_event(event, on_event)? == Progress::Done {
                return assembler.finish();
            }
        }
        parsed.map_err(|why| ModelError::Stream(why.to_string()))?;
        if complete {
            return assembler.finish();
        }
        raw.clear();
        let read = within(idle, connection.read_more(&mut raw))
            .await
            .ok_or_else(|| {
                idle_timeout(
                    idle.unwrap_or_default(),
                    &format!("after {} chunk(s) of the response", assembler.chunks()),
                )
            })?
            .map_err(ModelError::Stream)?;
        if read == 0 {
            if !decoder.complete_at_close() && !assembler.has_finish_reason() {
                return Err(ModelError::Stream(format!(
                    "the server closed the connection in the middle of the response (after {} chunk(s))",
                    assembler.chunks()
                )));
            }
            return assembler.finish();
        }
    }
}

/// Reads what there is of an error body (bounded in size, and by `idle` between reads) and
/// returns the provider's message, or the reason phrase when the body says nothing.
async fn read_error_body(
    connection: &mut Connection,
    decoder: &mut BodyDecoder,
    first: Vec<u8>,
    head: &ResponseHead,
    idle: Option<Duration>,
) -> String {
    let mut body = Vec::new();
    let mut raw = first;
    loop {
        match decoder.decode(&raw, &mut body) {
            Ok(false) if body.len() < ERROR_BODY_LIMIT => {}
            _ => break,
        }
        raw.clear();
        match within(idle, connection.read_more(&mut raw)).await {
            Some(Ok(n)) if n > 0 => {}
            _ => break,
        }
    }
    body.truncate(ERROR_BODY_LIMIT);
    let message = openai::error_message(&body);
    if !message.is_empty() {
        message
    } else if !head.reason.is_empty() {
        head.reason.clone()
    } else {
        "(no message)".to_owned()
    }
}

impl From<ConnectError> for ModelError {
    fn from(error: ConnectError) -> Self {
        match error {
            ConnectError::Config(why) => ModelError::Config(why),
            ConnectError::Unreachable(why) => ModelError::Connect(why),
            timed_out @ ConnectError::TimedOut { .. } => {
                ModelError::Timeout(format!("{} (LLM_CONNECT_TIMEOUT)", timed_out.text()))
            }
        }
    }
}

impl From<ConnectError> for Attempt {
    fn from(error: ConnectError) -> Self {
        Self::Failed(error.into())
    }
}

/// `error` with every occurrence of `key` replaced, in case a server echoed it.
fn scrub(error: ModelError, key: &str) -> ModelError {
    if key.is_empty() {
        return error;
    }
    let clean = |text: String| text.replace(key, "[redacted]");
    match error {
        ModelError::Unauthorized { status, message } => ModelError::Unauthorized {
            status,
            message: clean(message),
        },
        ModelError::Status { status, message } => ModelError::Status {
            status,
            message: clean(message),
        },
        ModelError::Connect(why) => ModelError::Connect(clean(why)),
        ModelError::Timeout(why) => ModelError::Timeout(clean(why)),
        ModelError::Stream(why) => ModelError::Stream(clean(why)),
        ModelError::Config(why) => ModelError::Config(clean(why)),
        missing @ ModelError::MissingKey { .. } => missing,
    }
}

/// The OpenAI-compatible server of the configuration, over HTTP(S). It asks for usage until
/// the server refuses the field, then remembers that for the rest of the run
/// (R-LLM-USAGE-1): one `HttpModel` serves one provider.
#[derive(Clone, Debug)]
pub struct HttpModel {
    config: ModelConfig,
    /// The server refused `stream_options`.
    usage_refused: std::rc::Rc<core::cell::Cell<bool>>,
}

impl HttpModel {
    /// A client for the server, key and model of `config` (the request names its model).
    pub fn new(config: ModelConfig) -> Self {
        Self {
            config,
            usage_refused: Default::default(),
        }
    }
}

impl ModelClient for HttpModel {
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_event: &'a mut dyn FnMut(StreamEvent),
    ) -> Completion<'a> {
        Box::pin(async move {
            let ask = if self.usage_refused.get() {
                UsageAsk::Skip
            } else {
                UsageAsk::Ask
            };
            let outcome = stream_chat_usage(
                &self.config,
                request,
                on_event,
                ask,
                &RetryPolicy::default(),
                &mut TimerSleeper,
            )
            .await;
            if outcome.refused {
                self.usage_refused.set(true);
            }
            outcome.result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::chat::ChatMessage;

    #[test]
    fn the_request_head_carries_the_key_only_in_authorization() {
        let endpoint = Endpoint::parse("http://127.0.0.1:8080/v1").unwrap();
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![ChatMessage::User("hi".into())],
            tools: vec![],
        };
        let length = openai::request_body(&request, false).len();
        let head = String::from_utf8(request_head(&endpoint, "sk-k", length)).unwrap();
        assert_eq!(
            head,
            format!(
                "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\
                 Authorization: Bearer sk-k\r\nContent-Type: application/json\r\n\
                 Accept: text/event-stream\r\nContent-Length: {length}\r\n\
                 User-Agent: acp-cli/{}\r\nConnection: close\r\n\r\n",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert_eq!(head.matches("sk-k").count(), 1);
    }

    #[test]
    fn connect_errors_read_as_the_user_sees_them() {
        let timed_out = ConnectError::TimedOut {
            place: "api.example.test:443".into(),
            limit: Duration::from_millis(2500),
        };
        assert_eq!(
            ModelError::from(timed_out).to_string(),
            "the model server timed out: connect timeout: no connection to \
             api.example.test:443 within 2.5 s (LLM_CONNECT_TIMEOUT)"
        );
        assert_eq!(
            idle_timeout(
                Duration::from_secs(120),
                "while waiting for the response head"
            )
            .to_string(),
            "the model server timed out: idle timeout: no byte for 120 s while waiting for the \
             response head (LLM_IDLE_TIMEOUT)"
        );
    }

    #[test]
    fn scrub_removes_an_echoed_key_from_every_kind_of_error() {
        let errors = [
            ModelError::Unauthorized {
                status: 401,
                message: "Incorrect API key provided: sk-k".into(),
            },
            ModelError::Status {
                status: 500,
                message: "sk-k".into(),
            },
            ModelError::Connect("sk-k".into()),
            ModelError::Timeout("sk-k".into()),
            ModelError::Stream("sk-k".into()),
            ModelError::Config("sk-k".into()),
        ];
        for error in errors {
            let text = scrub(error, "sk-k").to_string();
            assert!(
                !text.contains("sk-k") && text.contains("[redacted]"),
                "{text}"
            );
        }
    }
}
