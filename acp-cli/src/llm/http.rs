//! The model client's transport: one streamed Chat Completions request over HTTP/1.1, on
//! smol's TCP, wrapped in TLS (rustls, ring, the webpki roots) for `https://`.
//!
//! [`stream_chat`] hands each [`StreamEvent`] to its callback as it arrives and resolves to
//! the [`Finished`] answer or a [`ModelError`]. It holds the connection and nothing else, so
//! dropping the future (a cancelled turn races it against the cancel) closes the socket at
//! once: the response is never drained. Each request has its own connection
//! (`Connection: close`).
//!
//! [`Connection`], [`write_request_head`] and [`read_head`] are the HTTP/1.1 client the MCP
//! streamable HTTP transport uses too (`mcp::http`): one HTTP client in the agent.
//!
//! Two timeouts bound a request (R-LLM-6): connecting (TCP and the TLS handshake) and
//! silence (no byte while the head or the next piece of the body is awaited). Either fails
//! the request with [`ModelError::Timeout`], naming it and its seconds.
//!
//! The API key is written into the `Authorization` header and nowhere else: tracing logs
//! name the provider, model and URL only, and every error text is scrubbed of the key in
//! case a server echoes it.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_rustls::TlsConnector;
use futures_rustls::client::TlsStream;
use futures_rustls::rustls::pki_types::pem::{self, PemObject};
use futures_rustls::rustls::pki_types::{CertificateDer, ServerName};
use futures_rustls::rustls::{self, ClientConfig, RootCertStore};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::net::TcpStream;

use super::config::{self, Endpoint, ModelConfig, Timeouts};
use super::openai::{self, Progress, StreamAssembler};
use super::response::{self, BodyDecoder, ResponseHead};
use super::retry::{self, RetryPolicy, Sleeper, TimerSleeper};
use super::sse::SseParser;
use crate::model::chat::{ChatRequest, Finished, ModelError, StreamEvent};
use crate::model::{Completion, ModelClient};

/// How many bytes one socket read asks for.
const READ_SIZE: usize = 16 << 10;

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
    config.check()?;
    let endpoint = config.endpoint()?;
    let timeouts = config.timeouts.clone().map_err(ModelError::Config)?;
    let key = config
        .api_key
        .as_ref()
        .map(|key| key.expose())
        .unwrap_or_default();
    let body = openai::request_body(request);
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

/// An HTTP/1.1 request head: the request line, `Host`, `headers` in order, `Content-Length`
/// (when there is a body), our `User-Agent`, and `Connection: close` (one request per
/// connection). Callers check header names and values first (no line breaks).
pub fn write_request_head(
    method: &str,
    target: &str,
    host: &str,
    headers: &[(&str, &str)],
    body_length: Option<usize>,
) -> Vec<u8> {
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: {host}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(length) = body_length {
        head.push_str(&format!("Content-Length: {length}\r\n"));
    }
    head.push_str(&format!(
        "User-Agent: acp-cli/{}\r\nConnection: close\r\n\r\n",
        env!("CARGO_PKG_VERSION")
    ));
    head.into_bytes()
}

/// Why a response head could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// The server closed (or the read failed) before the head was complete.
    Closed(String),
    /// The bytes are not an HTTP/1.1 response head.
    Malformed(String),
    /// The server sent nothing for this long (the idle limit the caller gave).
    Idle(Duration),
}

/// Reads until a whole response head is in: the head and the body bytes read with it. With
/// `idle`, a wait that long for the next byte gives up.
pub async fn read_head(
    connection: &mut Connection,
    idle: Option<Duration>,
) -> Result<(ResponseHead, Vec<u8>), HeadError> {
    let mut buffer = Vec::with_capacity(READ_SIZE);
    let (head, used) = loop {
        if let Some(parsed) = response::parse_head(&buffer).map_err(HeadError::Malformed)? {
            break parsed;
        }
        let read = within(idle, connection.read_more(&mut buffer))
            .await
            .ok_or(HeadError::Idle(idle.unwrap_or_default()))?;
        if read.map_err(HeadError::Closed)? == 0 {
            return Err(HeadError::Closed(if buffer.is_empty() {
                "the server closed the connection without answering".to_owned()
            } else {
                "the server closed the connection in the middle of the response head".to_owned()
            }));
        }
    };
    Ok((head, buffer.split_off(used)))
}

/// `work`, or `None` when `limit` runs out first (no limit: always `work`).
pub async fn within<T>(limit: Option<Duration>, work: impl Future<Output = T>) -> Option<T> {
    let Some(limit) = limit else {
        return Some(work.await);
    };
    smol::future::or(async { Some(work.await) }, async {
        smol::Timer::after(limit).await;
        None
    })
    .await
}

/// The error of the idle timeout running out at `place` (R-LLM-6).
fn idle_timeout(idle: Duration, place: &str) -> ModelError {
    ModelError::Timeout(format!(
        "idle timeout: no byte for {} s {place} (LLM_IDLE_TIMEOUT)",
        config::seconds(idle)
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

/// Why a connection could not be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectError {
    /// The TLS settings cannot be used (`SSL_CERT_FILE`).
    Config(String),
    /// The server could not be reached (refused, DNS, TLS handshake).
    Unreachable(String),
    /// Connecting (TCP and the TLS handshake) took longer than the limit: where, how long.
    TimedOut {
        /// `host:port`.
        place: String,
        /// The limit.
        limit: Duration,
    },
}

impl ConnectError {
    /// The error's text for the user: what failed, without the model's wording.
    pub fn text(&self) -> String {
        match self {
            Self::Config(why) | Self::Unreachable(why) => why.clone(),
            Self::TimedOut { place, limit } => format!(
                "connect timeout: no connection to {place} within {} s",
                config::seconds(*limit)
            ),
        }
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

/// An open connection to an HTTP server (the model's, or an MCP server's).
pub enum Connection {
    /// `http://`.
    Plain(TcpStream),
    /// `https://`.
    Tls(Box<TlsStream<TcpStream>>),
}

impl Connection {
    /// Connects (and shakes hands, for TLS, trusting `ca_file`'s certificates too), all of it
    /// within `limit` when one is given.
    pub async fn open(
        endpoint: &Endpoint,
        ca_file: Option<&str>,
        limit: Option<Duration>,
    ) -> Result<Self, ConnectError> {
        let place = format!("{}:{}", endpoint.host, endpoint.port);
        within(limit, Self::connect(endpoint, ca_file, &place))
            .await
            .unwrap_or_else(|| {
                Err(ConnectError::TimedOut {
                    place: place.clone(),
                    limit: limit.unwrap_or_default(),
                })
            })
    }

    /// Connects and shakes hands, without a limit.
    async fn connect(
        endpoint: &Endpoint,
        ca_file: Option<&str>,
        place: &str,
    ) -> Result<Self, ConnectError> {
        let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port))
            .await
            .map_err(|error| ConnectError::Unreachable(format!("{place}: {error}")))?;
        // Streamed tokens are small writes from the server; our request is one write.
        let _ = tcp.set_nodelay(true);
        if !endpoint.tls {
            return Ok(Self::Plain(tcp));
        }
        let name = ServerName::try_from(endpoint.host.clone()).map_err(|_| {
            ConnectError::Unreachable(format!(
                "'{}' is not a valid TLS server name",
                endpoint.host
            ))
        })?;
        let tls = TlsConnector::from(tls_config(ca_file)?)
            .connect(name, tcp)
            .await
            .map_err(|error| {
                ConnectError::Unreachable(format!("TLS handshake with {place} failed: {error}"))
            })?;
        Ok(Self::Tls(Box::new(tls)))
    }

    /// Writes the request head and body, then flushes.
    pub async fn send(&mut self, head: &[u8], body: &[u8]) -> std::io::Result<()> {
        match self {
            Self::Plain(stream) => {
                stream.write_all(head).await?;
                stream.write_all(body).await?;
                stream.flush().await
            }
            Self::Tls(stream) => {
                stream.write_all(head).await?;
                stream.write_all(body).await?;
                stream.flush().await
            }
        }
    }

    /// Reads once, appending to `buffer`; 0 means the server closed.
    pub async fn read_more(&mut self, buffer: &mut Vec<u8>) -> Result<usize, String> {
        let start = buffer.len();
        buffer.resize(start + READ_SIZE, 0);
        let read = match self {
            Self::Plain(stream) => stream.read(&mut buffer[start..]).await,
            Self::Tls(stream) => stream.read(&mut buffer[start..]).await,
        };
        match read {
            Ok(n) => {
                buffer.truncate(start + n);
                Ok(n)
            }
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                // rustls: the peer closed without close_notify. Treat it as a close.
                buffer.truncate(start);
                Ok(0)
            }
            Err(error) => {
                buffer.truncate(start);
                Err(format!("reading the response failed: {error}"))
            }
        }
    }
}

/// The TLS client configuration: ring's provider, the webpki roots (plus the certificates
/// of `ca_file`, when set), ALPN `http/1.1`. Without `ca_file` it is built once.
fn tls_config(ca_file: Option<&str>) -> Result<Arc<ClientConfig>, ConnectError> {
    static DEFAULT: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    let Some(path) = ca_file else {
        return Ok(DEFAULT.get_or_init(|| build_tls_config(Vec::new())).clone());
    };
    let unreadable = |why: String| ConnectError::Config(format!("SSL_CERT_FILE '{path}' {why}"));
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|error| match error {
            pem::Error::Io(error) => unreadable(format!("cannot be read: {error}")),
            error => unreadable(format!("is not a PEM file: {error}")),
        })?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| unreadable(format!("is not a PEM file: {error}")))?;
    if certificates.is_empty() {
        return Err(unreadable("holds no certificate".to_owned()));
    }
    Ok(build_tls_config(certificates))
}

/// A client configuration trusting the webpki roots and `extra`.
fn build_tls_config(extra: Vec<CertificateDer<'static>>) -> Arc<ClientConfig> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    // A certificate webpki cannot use as a trust anchor is skipped, as browsers do.
    let _ = roots.add_parsable_certificates(extra);
    let mut config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("ring supports the default TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
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

/// The OpenAI-compatible server of the configuration, over HTTP(S).
#[derive(Clone, Debug)]
pub struct HttpModel {
    config: ModelConfig,
}

impl HttpModel {
    /// A client for the server, key and model of `config` (the request names its model).
    pub fn new(config: ModelConfig) -> Self {
        Self { config }
    }
}

impl ModelClient for HttpModel {
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_event: &'a mut dyn FnMut(StreamEvent),
    ) -> Completion<'a> {
        Box::pin(stream_chat(&self.config, request, on_event))
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
        let length = openai::request_body(&request).len();
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

    /// R-LLM-6: a limit that runs out gives `None`; work that is done in time, or has no
    /// limit, gives its value.
    #[test]
    fn within_gives_up_only_when_its_limit_runs_out() {
        smol::block_on(async {
            let never = smol::future::pending::<()>();
            assert_eq!(within(Some(Duration::ZERO), never).await, None);
            assert_eq!(within(None, async { 7 }).await, Some(7));
            assert_eq!(
                within(Some(Duration::from_secs(600)), async { 7 }).await,
                Some(7)
            );
        });
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
