//! Test servers on loopback for the remote client (`tests/remote_*.rs`): a WebSocket server
//! and a Streamable HTTP server, each with `acp-cli --acp --stdio` behind it (one agent per
//! connection), and a server that answers every request with one canned response. Each runs
//! on its own thread with its own smol executor and records what it was sent.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use async_tungstenite::tungstenite::Message;
use async_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use serde_json::Value;
use smol::channel::{Receiver, Sender};
use smol::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use smol::net::{TcpListener, TcpStream};
use smol::stream::StreamExt;

/// The binary under test.
pub fn acp_cli() -> &'static str {
    env!("CARGO_BIN_EXE_acp-cli")
}

/// A fresh empty directory under cargo's `CARGO_TARGET_TMPDIR`.
pub fn scratch_dir(tag: &str) -> PathBuf {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("acp-remote-{tag}-{n}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// How a command ended.
#[derive(Debug)]
pub struct Finished {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `acp-cli ARGS` in `cwd` with `stdin` written and closed; `env` added.
pub fn run(args: &[&str], cwd: &Path, stdin: &str, env: &[(&str, &str)]) -> Finished {
    let mut child = Command::new(acp_cli())
        .args(args)
        .current_dir(cwd)
        .env_remove("ACP_TOKEN")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("acp-cli starts");
    let mut input = child.stdin.take().unwrap();
    let text = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = input.write_all(text.as_bytes());
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Finished {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A listener on a free loopback port, served on a thread of its own.
fn serve<F, Fut>(handle: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        smol::block_on(async move {
            let listener = TcpListener::try_from(listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                // Messages are small writes: send them at once.
                let _ = stream.set_nodelay(true);
                smol::spawn(handle(stream)).detach();
            }
        })
    });
    address
}

/// A loopback port nothing listens on.
pub fn closed_port() -> u16 {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// `acp-cli --acp --stdio` in `cwd`: its stdin, and its stdout lines.
struct Agent {
    _child: smol::process::Child,
    stdin: smol::lock::Mutex<smol::process::ChildStdin>,
    lines: Receiver<String>,
}

impl Agent {
    fn start(cwd: &Path) -> Agent {
        let mut child = smol::process::Command::new(acp_cli())
            .args(["--acp", "--stdio"])
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = smol::channel::unbounded();
        smol::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Some(Ok(line)) = reader.next().await {
                if sender.send(line).await.is_err() {
                    return;
                }
            }
        })
        .detach();
        Agent {
            _child: child,
            stdin: smol::lock::Mutex::new(stdin),
            lines,
        }
    }

    async fn write(&self, line: &str) {
        let mut stdin = self.stdin.lock().await;
        let _ = stdin.write_all(format!("{line}\n").as_bytes()).await;
        let _ = stdin.flush().await;
    }
}

/// What a WebSocket test server saw.
#[derive(Clone, Default)]
pub struct WsLog {
    /// The `Authorization` header of each upgrade.
    pub authorizations: Arc<Mutex<Vec<Option<String>>>>,
    /// Each text frame received, as sent.
    pub frames: Arc<Mutex<Vec<String>>>,
    /// Close frames received.
    pub closes: Arc<Mutex<usize>>,
}

impl WsLog {
    /// Waits until the server has handled a close frame (so every frame before it is logged),
    /// or 10 s; the server runs on its own thread and may still be reading when the client
    /// process has already exited.
    pub fn wait_closed(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while *self.closes.lock().unwrap() == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

/// A WebSocket server at `/acp` with an agent in `cwd` behind each connection; with `token`,
/// an upgrade without `Authorization: Bearer <token>` gets 401.
pub fn ws_agent_server(cwd: &Path, token: Option<&str>) -> (String, WsLog) {
    let log = WsLog::default();
    let (cwd, token, kept) = (cwd.to_path_buf(), token.map(str::to_owned), log.clone());
    let address = serve(move |stream| {
        let (cwd, token, log) = (cwd.clone(), token.clone(), kept.clone());
        async move {
            let Some(socket) = accept(stream, token, &log).await else {
                return;
            };
            let agent = Arc::new(Agent::start(&cwd));
            let (mut sender, mut receiver) = socket.split();
            let lines = agent.lines.clone();
            let to_client = async move {
                while let Ok(line) = lines.recv().await {
                    if sender.send(Message::text(line)).await.is_err() {
                        return;
                    }
                }
            };
            let from_client = async move {
                while let Some(Ok(message)) = receiver.next().await {
                    match message {
                        Message::Text(text) => {
                            log.frames.lock().unwrap().push(text.as_str().to_owned());
                            agent.write(text.as_str()).await;
                        }
                        Message::Close(_) => {
                            *log.closes.lock().unwrap() += 1;
                            return;
                        }
                        _ => {}
                    }
                }
            };
            smol::future::or(to_client, from_client).await;
        }
    });
    (format!("ws://{address}/acp"), log)
}

/// A WebSocket server that records what it gets and, after the first frame, sends a binary
/// frame, a ping and `replies` (one text frame each, as given); it closes when `close_after`
/// frames came in.
pub fn ws_scripted_server(replies: Vec<String>, close_after: Option<usize>) -> (String, WsLog) {
    let log = WsLog::default();
    let kept = log.clone();
    let address = serve(move |stream| {
        let (log, replies) = (kept.clone(), replies.clone());
        async move {
            let Some(mut socket) = accept(stream, None, &log).await else {
                return;
            };
            let mut count = 0;
            while let Some(Ok(message)) = socket.next().await {
                match message {
                    Message::Text(text) => {
                        log.frames.lock().unwrap().push(text.as_str().to_owned());
                        count += 1;
                        if count == 1 {
                            // A binary frame and a ping carry no message.
                            let _ = socket.send(Message::binary(b"{\"id\":9}".to_vec())).await;
                            let _ = socket.send(Message::Ping(b"p".to_vec().into())).await;
                            for reply in &replies {
                                let _ = socket.send(Message::text(reply.clone())).await;
                            }
                        }
                        if close_after == Some(count) {
                            let _ = socket.close(None).await;
                            return;
                        }
                    }
                    Message::Close(_) => {
                        *log.closes.lock().unwrap() += 1;
                        return;
                    }
                    _ => {}
                }
            }
        }
    });
    (format!("ws://{address}/acp"), log)
}

// The handshake callback's error type is the library's.
#[allow(clippy::result_large_err)]
async fn accept(
    stream: TcpStream,
    token: Option<String>,
    log: &WsLog,
) -> Option<async_tungstenite::WebSocketStream<TcpStream>> {
    let authorizations = log.authorizations.clone();
    let check = move |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        let authorization = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        authorizations.lock().unwrap().push(authorization.clone());
        match &token {
            Some(token) if authorization.as_deref() != Some(&format!("Bearer {token}")) => {
                let mut refusal = ErrorResponse::new(None);
                *refusal.status_mut() =
                    async_tungstenite::tungstenite::http::StatusCode::UNAUTHORIZED;
                Err(refusal)
            }
            _ => Ok(response),
        }
    };
    async_tungstenite::accept_hdr_async(stream, check)
        .await
        .ok()
}

/// A server that reads one request head and answers `response` as given, then closes.
pub fn canned_server(response: &'static str) -> SocketAddr {
    serve(move |mut stream| async move {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
            match stream.read(&mut byte).await {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.flush().await;
    })
}

/// A server that writes `bytes` as soon as a connection comes, without reading (a TLS
/// client waits for the server's hello), then closes.
pub fn eager_server(bytes: &'static str) -> SocketAddr {
    serve(move |mut stream| async move {
        let _ = stream.write_all(bytes.as_bytes()).await;
        let _ = stream.flush().await;
    })
}

/// One request the HTTP test server got: method, `Acp-Connection-Id`, `Acp-Session-Id`,
/// `Cookie`, and the body.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub connection: Option<String>,
    pub session: Option<String>,
    pub cookie: Option<String>,
    pub authorization: Option<String>,
    pub body: String,
}

/// Where an answer of the agent goes.
enum Scope {
    /// Back in the POST's response (`initialize`).
    Post(Sender<String>),
    /// On a stream: `""` is the connection's, anything else a session's.
    Stream(String),
}

/// A stream's queue of messages.
type Queue = (Sender<String>, Receiver<String>);

/// A connection's streams' queues by key (`""`: the connection's own).
type Streams = Arc<Mutex<HashMap<String, Queue>>>;

/// One Streamable HTTP connection: its agent, where answers go, its streams' queues.
struct HttpConnection {
    agent: Arc<Agent>,
    scopes: Arc<Mutex<HashMap<String, Scope>>>,
    streams: Streams,
}

/// The Streamable HTTP server's state: connections `c1`, `c2`, … each with its own agent.
struct HttpState {
    cwd: PathBuf,
    token: Option<String>,
    seen: Arc<Mutex<Vec<Seen>>>,
    connections: Mutex<HashMap<String, Arc<HttpConnection>>>,
    opened: std::sync::atomic::AtomicUsize,
}

/// The queue of a stream (`""`: the connection's), made when first needed so what comes
/// before its GET waits.
fn stream_of(
    streams: &Mutex<HashMap<String, Queue>>,
    key: &str,
) -> (Sender<String>, Receiver<String>) {
    streams
        .lock()
        .unwrap()
        .entry(key.to_owned())
        .or_insert_with(smol::channel::unbounded)
        .clone()
}

/// A Streamable HTTP server at `/acp` (per the RFD: initialize answered in the body with
/// `Acp-Connection-Id`, other POSTs 202, answers on the stream of the POST's scope, agent
/// messages on their session's stream, DELETE 202), with `acp-cli --acp --stdio` behind it.
/// It sets a cookie with its initialize answer; with `token`, a request without the bearer
/// token gets 401.
pub fn http_agent_server(cwd: &Path, token: Option<&str>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let state = Arc::new(HttpState {
        cwd: cwd.to_path_buf(),
        token: token.map(str::to_owned),
        seen: Arc::new(Mutex::new(Vec::new())),
        connections: Mutex::new(HashMap::new()),
        opened: std::sync::atomic::AtomicUsize::new(0),
    });
    let seen = state.seen.clone();
    let address = serve(move |stream| handle_http(stream, state.clone()));
    (format!("http://{address}/acp"), seen)
}

async fn handle_http(mut stream: TcpStream, state: Arc<HttpState>) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let (method, headers, body_start) = loop {
        let Ok(n @ 1..) = stream.read(&mut chunk).await else {
            return;
        };
        buffer.extend_from_slice(&chunk[..n]);
        let mut slots = [httparse::EMPTY_HEADER; 32];
        let mut request = httparse::Request::new(&mut slots);
        if let Ok(httparse::Status::Complete(used)) = request.parse(&buffer) {
            let headers: HashMap<String, String> = request
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_ascii_lowercase(),
                        String::from_utf8_lossy(h.value).into_owned(),
                    )
                })
                .collect();
            break (request.method.unwrap_or("").to_owned(), headers, used);
        }
    };
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    while buffer.len() < body_start + length {
        let Ok(n @ 1..) = stream.read(&mut chunk).await else {
            return;
        };
        buffer.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buffer[body_start..body_start + length]).into_owned();
    let seen = Seen {
        method: method.clone(),
        connection: headers.get("acp-connection-id").cloned(),
        session: headers.get("acp-session-id").cloned(),
        cookie: headers.get("cookie").cloned(),
        authorization: headers.get("authorization").cloned(),
        body: body.clone(),
    };
    state.seen.lock().unwrap().push(seen.clone());
    let reply = |status: &str, extra: &str, body: &str| -> String {
        format!(
            "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    if let Some(token) = &state.token
        && seen.authorization.as_deref() != Some(&format!("Bearer {token}"))
    {
        let _ = stream
            .write_all(reply("401 Unauthorized", "", "").as_bytes())
            .await;
        return;
    }
    let known = seen
        .connection
        .as_ref()
        .map(|id| state.connections.lock().unwrap().get(id).cloned());
    let connection = match known {
        Some(Some(connection)) => Some(connection),
        Some(None) => {
            let _ = stream
                .write_all(reply("404 Not Found", "", "").as_bytes())
                .await;
            return;
        }
        None => None,
    };
    match (method.as_str(), connection) {
        ("POST", None) => {
            let n = state
                .opened
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1;
            let id = format!("c{n}");
            let connection = Arc::new(HttpConnection {
                agent: Arc::new(Agent::start(&state.cwd)),
                scopes: Arc::new(Mutex::new(HashMap::new())),
                streams: Arc::new(Mutex::new(HashMap::new())),
            });
            state
                .connections
                .lock()
                .unwrap()
                .insert(id.clone(), connection.clone());
            route(
                connection.agent.clone(),
                connection.scopes.clone(),
                connection.streams.clone(),
            );
            let message: Value = serde_json::from_str(&body).unwrap_or_default();
            let (sender, answer) = smol::channel::bounded(1);
            connection
                .scopes
                .lock()
                .unwrap()
                .insert(message["id"].to_string(), Scope::Post(sender));
            connection.agent.write(&body).await;
            let Ok(answer) = answer.recv().await else {
                return;
            };
            let extra = format!(
                "Content-Type: application/json\r\nAcp-Connection-Id: {id}\r\nSet-Cookie: route=r1; Path=/\r\n"
            );
            let _ = stream
                .write_all(reply("200 OK", &extra, &answer).as_bytes())
                .await;
        }
        ("POST", Some(connection)) => {
            let message: Value = serde_json::from_str(&body).unwrap_or_default();
            if message.get("method").is_some() && message.get("id").is_some() {
                let scope = seen.session.clone().unwrap_or_default();
                connection
                    .scopes
                    .lock()
                    .unwrap()
                    .insert(message["id"].to_string(), Scope::Stream(scope));
            }
            let _ = stream
                .write_all(reply("202 Accepted", "", "").as_bytes())
                .await;
            connection.agent.write(&body).await;
        }
        ("GET", Some(connection)) => {
            let key = seen.session.clone().unwrap_or_default();
            let (_, messages) = stream_of(&connection.streams, &key);
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let _ = stream.flush().await;
            while let Ok(message) = messages.recv().await {
                let event = format!("data: {message}\n\n");
                if stream.write_all(event.as_bytes()).await.is_err() {
                    return;
                }
                let _ = stream.flush().await;
            }
        }
        ("DELETE", Some(_)) => {
            if let Some(id) = &seen.connection {
                state.connections.lock().unwrap().remove(id);
            }
            let _ = stream
                .write_all(reply("202 Accepted", "", "").as_bytes())
                .await;
        }
        (_, None) => {
            let _ = stream
                .write_all(reply("400 Bad Request", "", "").as_bytes())
                .await;
        }
        _ => {
            let _ = stream
                .write_all(reply("405 Method Not Allowed", "", "").as_bytes())
                .await;
        }
    }
}

/// Moves the agent's lines to where they belong: an answer to its request's scope, anything
/// else to its session's stream (or the connection's).
fn route(agent: Arc<Agent>, scopes: Arc<Mutex<HashMap<String, Scope>>>, streams: Streams) {
    let lines = agent.lines.clone();
    smol::spawn(async move {
        while let Ok(line) = lines.recv().await {
            let message: Value = serde_json::from_str(&line).unwrap_or_default();
            let is_answer = message.get("method").is_none();
            let scope = if is_answer {
                scopes.lock().unwrap().remove(&message["id"].to_string())
            } else {
                None
            };
            let key = match scope {
                Some(Scope::Post(sender)) => {
                    let _ = sender.send(line).await;
                    continue;
                }
                Some(Scope::Stream(key)) => key,
                None => message["params"]["sessionId"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            };
            let (sender, _) = stream_of(&streams, &key);
            let _ = sender.send(line).await;
        }
    })
    .detach();
}
