//! A scripted OpenAI-compatible model server on loopback, for the `llm_*` tests.
//!
//! [`MockModel::start`] binds `127.0.0.1:0` and answers each request with the next
//! [`Reply`] of its script: an SSE stream (pieces, pauses, a hold until the client closes,
//! a cut) or a plain HTTP status with headers and body. It records every request (path,
//! headers, JSON body) so a test can check what the client sent, e.g. the `tool` messages
//! of a tool loop, and it reports when a held connection was closed by the client.
//!
//! Plain threads and `std::net`: it shares nothing with the client under test. A request
//! beyond the script is answered `500` `mock: no scripted reply left`.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use futures_rustls::rustls::pki_types::pem::PemObject;
use futures_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use futures_rustls::rustls::{self, ServerConfig, ServerConnection, StreamOwned};
use serde_json::{Value, json};

/// How long a test waits for the mock to report something before failing (a guard against
/// hangs, not a timing assertion).
pub const GUARD: Duration = Duration::from_secs(30);

/// One part of a streamed answer.
#[derive(Clone, Debug)]
pub enum Piece {
    /// `data: <text>\n\n`, one HTTP chunk.
    Data(String),
    /// Raw bytes, one HTTP chunk (for malformed or split SSE).
    Bytes(Vec<u8>),
    /// Wait this long before the next piece (a slow stream).
    Pause(Duration),
    /// Send nothing more; wait until the client closes the connection, then report it.
    HoldUntilClosed,
    /// Close the connection here, without ending the body.
    Cut,
}

/// How a streamed body is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`, one chunk per piece.
    Chunked,
    /// No length: the body ends when the server closes.
    Close,
}

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `200` `text/event-stream` with these pieces.
    Stream {
        /// The pieces, in order.
        pieces: Vec<Piece>,
        /// How the body is framed.
        framing: Framing,
    },
    /// A status with headers and a body (`Content-Length` is added).
    Status {
        /// The status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The body.
        body: String,
    },
    /// These bytes, as they are, then close.
    Raw(Vec<u8>),
    /// Take the request and answer nothing, not even a head; wait until the client closes
    /// the connection, then report it (as [`Piece::HoldUntilClosed`] does).
    Silent,
}

impl Reply {
    /// A chunked SSE stream of these `data:` texts.
    pub fn sse(data: &[String]) -> Self {
        Self::Stream {
            pieces: data.iter().cloned().map(Piece::Data).collect(),
            framing: Framing::Chunked,
        }
    }

    /// A chunked SSE stream of these pieces.
    pub fn pieces(pieces: Vec<Piece>) -> Self {
        Self::Stream {
            pieces,
            framing: Framing::Chunked,
        }
    }

    /// A plain answer streamed as text chunks, then `stop` and `[DONE]`.
    pub fn text(parts: &[&str]) -> Self {
        let mut data: Vec<String> = parts.iter().map(|p| text(p)).collect();
        data.push(finish("stop"));
        data.push(done());
        Self::sse(&data)
    }

    /// A status answer with a JSON error body `{"error":{"message":…}}`.
    pub fn error(status: u16, message: &str) -> Self {
        Self::error_with(status, message, &[])
    }

    /// The same with extra headers (`Retry-After`, say).
    pub fn error_with(status: u16, message: &str, extra: &[(&str, &str)]) -> Self {
        let mut headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
        headers.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        Self::Status {
            status,
            headers,
            body: json!({"error": {"message": message, "type": "mock_error"}}).to_string(),
        }
    }
}

/// A chunk with `delta.content`.
pub fn text(content: &str) -> String {
    chunk(json!({"content": content}), None)
}

/// A chunk with `delta.reasoning_content`.
pub fn reasoning(content: &str) -> String {
    chunk(json!({"reasoning_content": content}), None)
}

/// A chunk with one tool-call piece (`id` and `name` only in a call's first piece).
pub fn tool_call(index: usize, id: Option<&str>, name: Option<&str>, arguments: &str) -> String {
    let mut call = json!({"index": index, "function": {"arguments": arguments}});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
    }
    if let Some(name) = name {
        call["function"]["name"] = json!(name);
    }
    chunk(json!({"tool_calls": [call]}), None)
}

/// A chunk with an empty delta and this `finish_reason`.
pub fn finish(reason: &str) -> String {
    chunk(json!({}), Some(reason))
}

/// The end marker.
pub fn done() -> String {
    "[DONE]".to_owned()
}

/// A `chat.completion.chunk` with one choice.
fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "mock-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
    .to_string()
}

/// A request the mock received.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// `POST /v1/chat/completions`.
    pub request_line: String,
    /// The headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body as sent.
    pub body: Vec<u8>,
}

impl Recorded {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the client sent a JSON body")
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The `role: "tool"` messages of the body.
    pub fn tool_messages(&self) -> Vec<Value> {
        self.json()["messages"]
            .as_array()
            .map(|messages| {
                messages
                    .iter()
                    .filter(|m| m["role"] == "tool")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// What the server shares with its connection threads.
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    closed: Mutex<Sender<usize>>,
    stop: AtomicBool,
}

/// The running mock server. Dropping it stops accepting.
pub struct MockModel {
    address: SocketAddr,
    tls: bool,
    shared: Arc<Shared>,
    closed: Receiver<usize>,
}

impl MockModel {
    /// Starts a server that answers with `script`, in order.
    pub fn start(script: Vec<Reply>) -> Self {
        Self::start_with(0, script, None)
    }

    /// The same on this loopback port: a server that comes up where a client first found
    /// nothing listening (a port from [`dead_port`]).
    pub fn start_on(port: u16, script: Vec<Reply>) -> Self {
        Self::start_with(port, script, None)
    }

    /// The same over TLS, with the test-only certificate of `fixtures/llm_tls/` (for
    /// `localhost` and `127.0.0.1`; trust it with `SSL_CERT_FILE=`[`tls_certificate_path`]).
    pub fn start_tls(script: Vec<Reply>) -> Self {
        Self::start_with(0, script, Some(tls_server_config()))
    }

    /// Starts the server on `port` (0: any free one), in TLS when `tls` is given.
    fn start_with(port: u16, script: Vec<Reply>, tls: Option<Arc<ServerConfig>>) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind loopback");
        let address = listener.local_addr().expect("local address");
        let is_tls = tls.is_some();
        let (closed_tx, closed) = channel();
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            requests: Mutex::new(Vec::new()),
            closed: Mutex::new(closed_tx),
            stop: AtomicBool::new(false),
        });
        let accept_shared = Arc::clone(&shared);
        thread::spawn(move || {
            let mut number = 0;
            for stream in listener.incoming() {
                if accept_shared.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&accept_shared);
                number += 1;
                let connection = number;
                let tls = tls.clone();
                thread::spawn(move || {
                    let Ok(tcp) = stream.try_clone() else { return };
                    let _ = tcp.set_read_timeout(Some(GUARD));
                    match tls {
                        None => serve(stream, &tcp, connection, &shared),
                        Some(config) => {
                            let Ok(session) = ServerConnection::new(config) else {
                                return;
                            };
                            serve(StreamOwned::new(session, stream), &tcp, connection, &shared);
                        }
                    }
                });
            }
        });
        Self {
            address,
            tls: is_tls,
            shared,
            closed,
        }
    }

    /// `http://127.0.0.1:<port>/v1` (`https://` for [`MockModel::start_tls`]), the value
    /// for `OPENAI_BASE_URL`.
    pub fn base_url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}/v1", self.address)
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Waits (up to [`GUARD`]) until the client closed a connection held by
    /// [`Piece::HoldUntilClosed`]; returns that connection's number (1-based).
    pub fn wait_client_closed(&self) -> Option<usize> {
        self.closed.recv_timeout(GUARD).ok()
    }

    /// The replies not used yet.
    pub fn unused_replies(&self) -> usize {
        self.shared.script.lock().unwrap().len()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.address);
    }
}

/// The test-only certificate [`MockModel::start_tls`] serves, as a PEM file path.
pub fn tls_certificate_path() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/llm_tls/cert.pem"
    )
    .to_owned()
}

/// The TLS server configuration of the test-only certificate and key.
fn tls_server_config() -> Arc<ServerConfig> {
    let directory = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/llm_tls");
    let certificates: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(format!("{directory}/cert.pem"))
            .expect("the test certificate")
            .collect::<Result<_, _>>()
            .expect("a PEM certificate");
    let key = PrivateKeyDer::from_pem_file(format!("{directory}/test-only-key.pem"))
        .expect("the test key");
    let config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(certificates, key)
            .expect("a usable certificate");
    Arc::new(config)
}

/// A free loopback port with nothing listening on it (bound, then released).
pub fn dead_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    listener.local_addr().expect("local address").port()
}

/// Serves one connection: reads the request, answers with the next reply.
fn serve(mut stream: impl Read + Write, tcp: &TcpStream, connection: usize, shared: &Shared) {
    let Some(recorded) = read_request(&mut stream) else {
        // Not HTTP (a TLS hello, say): answer like a plain server would, then close.
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        return;
    };
    shared.requests.lock().unwrap().push(recorded);
    let reply = shared
        .script
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| Reply::error(500, "mock: no scripted reply left"));
    match reply {
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} Mock\r\n");
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str(&format!(
                "Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            ));
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
        Reply::Raw(bytes) => {
            let _ = stream.write_all(&bytes);
        }
        Reply::Silent => {
            if wait_for_close(&mut stream, tcp) {
                let _ = shared.closed.lock().unwrap().send(connection);
            }
            return;
        }
        Reply::Stream { pieces, framing } => {
            let mut head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                            Cache-Control: no-cache\r\nConnection: close\r\n"
                .to_owned();
            if framing == Framing::Chunked {
                head.push_str("Transfer-Encoding: chunked\r\n");
            }
            head.push_str("\r\n");
            if stream.write_all(head.as_bytes()).is_err() {
                return;
            }
            for piece in pieces {
                let bytes = match piece {
                    Piece::Data(text) => format!("data: {text}\n\n").into_bytes(),
                    Piece::Bytes(bytes) => bytes,
                    Piece::Pause(delay) => {
                        thread::sleep(delay);
                        continue;
                    }
                    Piece::HoldUntilClosed => {
                        let _ = stream.flush();
                        if wait_for_close(&mut stream, tcp) {
                            let _ = shared.closed.lock().unwrap().send(connection);
                        }
                        return;
                    }
                    Piece::Cut => {
                        let _ = tcp.shutdown(Shutdown::Both);
                        return;
                    }
                };
                let framed = match framing {
                    Framing::Chunked => {
                        let mut framed = format!("{:x}\r\n", bytes.len()).into_bytes();
                        framed.extend_from_slice(&bytes);
                        framed.extend_from_slice(b"\r\n");
                        framed
                    }
                    Framing::Close => bytes,
                };
                if stream.write_all(&framed).is_err() {
                    return;
                }
            }
            if framing == Framing::Chunked {
                let _ = stream.write_all(b"0\r\n\r\n");
            }
        }
    }
    let _ = stream.flush();
    let _ = tcp.shutdown(Shutdown::Write);
}

/// Reads until the client closes (EOF or a reset). No timeout: only the client's close ends
/// the wait, so a client that never closes fails the test at [`MockModel::wait_client_closed`].
/// Returns whether it saw the close (false on any other error).
fn wait_for_close(stream: &mut impl Read, tcp: &TcpStream) -> bool {
    let _ = tcp.set_read_timeout(None);
    let mut buffer = [0u8; 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => {
                return matches!(
                    error.kind(),
                    ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
                );
            }
        }
    }
}

/// Reads one request: head (until a blank line) and a `Content-Length` body.
fn read_request(stream: &mut impl Read) -> Option<Recorded> {
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = bytes.windows(4).position(|w: &[u8]| w == b"\r\n\r\n") {
            break at;
        }
        if bytes.first().is_some_and(|b| !b.is_ascii_uppercase()) {
            return None;
        }
        let read = stream.read(&mut buffer).ok()?;
        if read == 0 {
            return None;
        }
        bytes.extend_from_slice(&buffer[..read]);
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = bytes[head_end + 4..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut buffer).ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&buffer[..read]);
    }
    Some(Recorded {
        request_line,
        headers,
        body,
    })
}
