//! The streamable HTTP transport (MCP 2025-03-26 and later): each message we send is one
//! `POST` to the server's URL; the answer is `202` (a notification or our answer was taken),
//! one JSON message (`application/json`), or an event stream (`text/event-stream`) whose
//! events carry the server's messages, our answer among them (R-MCP-10).
//!
//! The `Mcp-Session-Id` the server gives with its `initialize` answer goes on every later
//! request, with `MCP-Protocol-Version` once the version is agreed; dropping the transport
//! ends the session with a `DELETE`. The HTTP/1.1 client is the agent's one (`crate::net`),
//! shared with the model client, one connection per request. The `headers` of the `session/new` entry are
//! sent as given and never logged (R-MCP-9); only the server's name and statuses are.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use smol::channel::Receiver;

use super::inbound::Inbound;
use super::wire::MAX_LINE;
use crate::net::connection::{Connection, HeadError, read_head, write_request_head};
use crate::net::endpoint::Endpoint;
use crate::net::response::BodyDecoder;
use crate::net::sse::{SseEvent, SseParser};

/// The headers acp-cli writes itself; an entry may not set them (they frame the request).
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
];

/// How long the closing `DELETE` may take before it is given up.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the requests go and what they carry, fixed when the server starts.
#[derive(Debug)]
struct Target {
    name: String,
    endpoint: Endpoint,
    /// The path and query of the URL (`/` when it has none).
    request_target: String,
    /// The entry's headers, checked.
    headers: Vec<(String, String)>,
    /// `SSL_CERT_FILE`, as for the model client.
    ca_file: Option<String>,
}

/// What the server told us that later requests carry.
#[derive(Debug, Default)]
struct SessionState {
    session_id: Option<String>,
    protocol_version: Option<String>,
}

/// A streamable HTTP server: the task posting our messages, and the session it opened.
pub(crate) struct HttpServer {
    target: Arc<Target>,
    state: Arc<Mutex<SessionState>>,
    _poster: smol::Task<()>,
}

impl HttpServer {
    /// Checks the entry and starts posting `lines`; what the server answers goes to
    /// `inbound`. Nothing is sent until the first line (`initialize`).
    pub(super) fn start(
        server: &acp_core::schema::McpServerHttp,
        inbound: Inbound,
        lines: Receiver<Vec<u8>>,
    ) -> Result<Self, String> {
        let target = Arc::new(Target::of(server)?);
        let state = Arc::new(Mutex::new(SessionState::default()));
        let poster = {
            let target = Arc::clone(&target);
            let state = Arc::clone(&state);
            smol::spawn(async move {
                // Each request is its own POST, so a long tool call does not hold back a
                // cancel or a ping answer. Notifications and answers (taken at once with
                // `202`) are sent in order before what follows: `notifications/initialized`
                // reaches the server before our next request. Dropping the transport drops
                // every POST under way.
                let mut posts: Vec<smol::Task<()>> = Vec::new();
                while let Ok(bytes) = lines.recv().await {
                    posts.retain(|post| !post.is_finished());
                    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                        let is_request = our_request_id(line).is_some();
                        let post = post(
                            Arc::clone(&target),
                            Arc::clone(&state),
                            inbound.clone(),
                            line.to_vec(),
                        );
                        if is_request {
                            posts.push(smol::spawn(post));
                        } else {
                            post.await;
                        }
                    }
                }
            })
        };
        Ok(Self {
            target,
            state,
            _poster: poster,
        })
    }

    /// The agreed version, sent as `MCP-Protocol-Version` from now on.
    pub(super) fn set_protocol_version(&self, version: &str) {
        lock(&self.state).protocol_version = Some(version.to_owned());
    }
}

impl Drop for HttpServer {
    /// Ends the server's session with `DELETE` (bounded; a server that refuses is fine).
    fn drop(&mut self) {
        let state = std::mem::take(&mut *lock(&self.state));
        if state.session_id.is_none() {
            return;
        }
        let target = Arc::clone(&self.target);
        smol::spawn(async move {
            let delete = async {
                let headers = target.headers_for(&state, &[]);
                if let Ok((status, _)) = target.exchange("DELETE", &headers, b"").await {
                    tracing::debug!(server = target.name, status, "MCP session deleted");
                }
            };
            smol::future::or(delete, async {
                smol::Timer::after(DELETE_TIMEOUT).await;
            })
            .await;
        })
        .detach();
    }
}

impl Target {
    /// Reads an entry: its URL, and its headers checked so none can break the request.
    fn of(server: &acp_core::schema::McpServerHttp) -> Result<Self, String> {
        // The query may carry a token: it is kept but never shown in an error.
        let (base, query) = match server.url.split_once('?') {
            Some((base, query)) => (base, Some(query.split('#').next().unwrap_or(""))),
            None => (server.url.split('#').next().unwrap_or(""), None),
        };
        let endpoint = Endpoint::parse(base).map_err(|why| format!("its url {why}"))?;
        let request_target = endpoint.request_target(query);
        let mut headers = Vec::new();
        for header in &server.headers {
            check_header(&header.name, &header.value)?;
            headers.push((header.name.clone(), header.value.clone()));
        }
        Ok(Self {
            name: server.name.clone(),
            endpoint,
            request_target,
            headers,
            ca_file: std::env::var("SSL_CERT_FILE").ok(),
        })
    }

    /// The headers of one request: ours, the session's, then the entry's.
    fn headers_for<'a>(
        &'a self,
        state: &'a SessionState,
        ours: &[(&'a str, &'a str)],
    ) -> Vec<(&'a str, &'a str)> {
        let mut headers = ours.to_vec();
        if let Some(id) = &state.session_id {
            headers.push(("Mcp-Session-Id", id));
        }
        if let Some(version) = &state.protocol_version {
            headers.push(("MCP-Protocol-Version", version));
        }
        headers.extend(self.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        headers
    }

    /// One request whose body is not read: the status and the open connection's head.
    async fn exchange(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<(u16, Response), String> {
        let head = write_request_head(
            method,
            &self.request_target,
            &self.endpoint.host_header(),
            headers,
            (!body.is_empty() || method == "POST").then_some(body.len()),
        );
        // No connect or idle limit of the model's (R-LLM-6) here: an MCP request is bounded
        // as a whole by the start timeout (R-MCP-3) or the call timeout (R-MCP-11), and a
        // tool may rightly stream nothing for minutes.
        let mut connection = Connection::open(&self.endpoint, self.ca_file.as_deref(), None)
            .await
            .map_err(|error| format!("cannot reach the MCP server: {}", error.text()))?;
        connection
            .send(&head, body)
            .await
            .map_err(|error| format!("sending to the MCP server failed: {error}"))?;
        let (head, rest) = read_head(&mut connection, None)
            .await
            .map_err(|error| match error {
                HeadError::Closed(why) | HeadError::Malformed(why) => why,
                HeadError::Idle(limit) => format!(
                    "the MCP server sent nothing for {} s",
                    crate::net::seconds(limit)
                ),
            })?;
        let decoder = head.body_decoder()?;
        let status = head.status;
        Ok((
            status,
            Response {
                kind: head
                    .header("content-type")
                    .unwrap_or("")
                    .to_ascii_lowercase(),
                session_id: head.header("mcp-session-id").map(str::to_owned),
                connection,
                decoder,
                pending: rest,
            },
        ))
    }
}

/// A response whose body is still to read.
struct Response {
    /// `Content-Type`, lower-cased.
    kind: String,
    session_id: Option<String>,
    connection: Connection,
    decoder: BodyDecoder,
    /// Body bytes read with the head, not decoded yet.
    pending: Vec<u8>,
}

impl Response {
    /// The next decoded piece of the body; `None` once it is over.
    async fn next_piece(&mut self) -> Result<Option<Vec<u8>>, String> {
        loop {
            let mut piece = Vec::new();
            let raw = std::mem::take(&mut self.pending);
            let complete = self
                .decoder
                .decode(&raw, &mut piece)
                .map_err(|why| format!("the MCP server's response is malformed: {why}"))?;
            if !piece.is_empty() {
                if complete {
                    // Nothing more is read after the body's end.
                    self.decoder = BodyDecoder::Length(0);
                }
                return Ok(Some(piece));
            }
            if complete {
                return Ok(None);
            }
            let read = self.connection.read_more(&mut self.pending).await?;
            if read == 0 {
                return if self.decoder.complete_at_close() {
                    Ok(None)
                } else {
                    Err("the MCP server closed the connection in the middle of its response".into())
                };
            }
        }
    }

    /// The whole body, at most `limit` bytes.
    async fn body(&mut self, limit: usize) -> Result<Vec<u8>, String> {
        let mut body = Vec::new();
        while let Some(piece) = self.next_piece().await? {
            body.extend_from_slice(&piece);
            if body.len() > limit {
                return Err(format!(
                    "the MCP server's response is larger than {limit} bytes"
                ));
            }
        }
        Ok(body)
    }
}

/// Posts one message and hands what comes back to `inbound`. A request whose answer does not
/// come fails with why, so its caller is not left waiting.
async fn post(
    target: Arc<Target>,
    state: Arc<Mutex<SessionState>>,
    inbound: Inbound,
    line: Vec<u8>,
) {
    let request_id = our_request_id(&line);
    let outcome = post_and_read(&target, &state, &inbound, &line).await;
    let failure = match (outcome, request_id) {
        (Err(why), _) => Some(why),
        (Ok(()), Some(id)) if inbound.is_waiting(id) => {
            Some("the MCP server's response ended without an answer".to_owned())
        }
        (Ok(()), _) => None,
    };
    if let Some(why) = failure {
        match request_id {
            Some(id) => inbound.fail(id, why),
            None => tracing::debug!(server = target.name, %why, "MCP message not delivered"),
        }
    }
}

async fn post_and_read(
    target: &Target,
    state: &Mutex<SessionState>,
    inbound: &Inbound,
    line: &[u8],
) -> Result<(), String> {
    let (session_id, protocol_version) = {
        let state = lock(state);
        (state.session_id.clone(), state.protocol_version.clone())
    };
    let snapshot = SessionState {
        session_id,
        protocol_version,
    };
    let headers = target.headers_for(
        &snapshot,
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
    );
    let (status, mut response) = target.exchange("POST", &headers, line).await?;
    tracing::debug!(
        server = target.name,
        status,
        kind = response.kind,
        "MCP HTTP answer"
    );
    if let Some(id) = response.session_id.take() {
        let mut state = lock(state);
        if state.session_id.is_none() {
            state.session_id = Some(id);
        }
    }
    if status == 404 && snapshot.session_id.is_some() {
        return Err("the MCP server ended the session (HTTP 404)".into());
    }
    if response.kind.starts_with("text/event-stream") {
        read_events(&mut response, inbound).await?;
    } else {
        let body = response.body(MAX_LINE).await?;
        if response.kind.starts_with("application/json") && !body.is_empty() {
            inbound.message(&String::from_utf8_lossy(&body));
        }
        if !(200..300).contains(&status) {
            let excerpt: String = String::from_utf8_lossy(&body).chars().take(200).collect();
            return Err(format!(
                "the MCP server answered HTTP {status}: {}",
                excerpt.trim()
            ));
        }
    }
    Ok(())
}

/// Hands each event's data to `inbound` as one message, until the stream ends.
async fn read_events(response: &mut Response, inbound: &Inbound) -> Result<(), String> {
    let mut parser = SseParser::with_limit(MAX_LINE);
    let mut events: Vec<SseEvent> = Vec::new();
    while let Some(piece) = response.next_piece().await? {
        events.clear();
        let parsed = parser.feed(&piece, &mut events);
        for event in &events {
            if (event.event.is_empty() || event.event == "message") && !event.data.is_empty() {
                inbound.message(&event.data);
            }
        }
        parsed.map_err(|why| format!("the MCP server's event stream is unusable: {why}"))?;
    }
    Ok(())
}

/// The id of a request we sent (not of an answer we sent to the server's request).
fn our_request_id(line: &[u8]) -> Option<u64> {
    let message: Value = serde_json::from_slice(line).ok()?;
    message.get("method")?;
    message.get("id")?.as_u64()
}

/// Refuses a header that would break the request or that acp-cli writes itself. The value
/// is never shown (it is often a token).
fn check_header(name: &str, value: &str) -> Result<(), String> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(format!(
            "header name '{name}' is not a valid HTTP header name"
        ));
    }
    if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(format!("header '{name}' is set by acp-cli itself"));
    }
    if value.contains(['\r', '\n', '\0']) {
        return Err(format!("header '{name}' has a line break in its value"));
    }
    Ok(())
}

fn lock(state: &Mutex<SessionState>) -> std::sync::MutexGuard<'_, SessionState> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_core::schema::McpServerHttp;

    fn entry(url: &str, headers: &[(&str, &str)]) -> McpServerHttp {
        let headers: Vec<Value> = headers
            .iter()
            .map(|(name, value)| serde_json::json!({"name": name, "value": value}))
            .collect();
        let server =
            serde_json::json!({"type": "http", "name": "web", "url": url, "headers": headers});
        match serde_json::from_value(server).unwrap() {
            acp_core::schema::McpServer::Http(http) => http,
            other => panic!("not http: {other:?}"),
        }
    }

    #[test]
    fn the_url_gives_host_and_request_target_with_its_query() {
        let target = Target::of(&entry("http://127.0.0.1:9/mcp?key=s3cret#x", &[])).unwrap();
        assert_eq!(target.endpoint.host_header(), "127.0.0.1:9");
        assert_eq!(target.request_target, "/mcp?key=s3cret");
        let target = Target::of(&entry("https://example.test", &[])).unwrap();
        assert_eq!(target.request_target, "/");
        assert!(target.endpoint.tls);
    }

    #[test]
    fn bad_entries_are_refused_without_showing_secrets() {
        let refused =
            |url: &str, headers: &[(&str, &str)]| Target::of(&entry(url, headers)).unwrap_err();
        assert_eq!(
            refused("ftp://h/?token=s3cret", &[]),
            "its url is not an http:// or https:// URL"
        );
        assert_eq!(
            refused("http://h/mcp", &[("X-Key", "s3cret\r\nEvil: 1")]),
            "header 'X-Key' has a line break in its value"
        );
        assert_eq!(
            refused("http://h/mcp", &[("Bad Name", "v")]),
            "header name 'Bad Name' is not a valid HTTP header name"
        );
        assert_eq!(
            refused("http://h/mcp", &[("content-length", "1")]),
            "header 'content-length' is set by acp-cli itself"
        );
    }

    #[test]
    fn only_our_requests_have_ids_to_fail() {
        assert_eq!(
            our_request_id(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#),
            Some(3)
        );
        assert_eq!(
            our_request_id(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            None
        );
        assert_eq!(
            our_request_id(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
    }

    #[test]
    fn session_headers_come_before_the_entrys() {
        let target = Target::of(&entry("http://h/mcp", &[("Authorization", "Bearer t")])).unwrap();
        let state = SessionState {
            session_id: Some("abc".into()),
            protocol_version: Some("2025-11-25".into()),
        };
        assert_eq!(
            target.headers_for(&state, &[("Accept", "x")]),
            [
                ("Accept", "x"),
                ("Mcp-Session-Id", "abc"),
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Authorization", "Bearer t"),
            ]
        );
    }
}
