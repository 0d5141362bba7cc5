//! A real client for `acp-cli --acp --listen` over loopback: raw HTTP/1.1 on a TCP socket,
//! SSE streams read on a thread, and WebSocket by `tungstenite`. Waiting has a generous guard
//! so a broken server fails the test instead of hanging it; no test depends on timing.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::Value;

/// How long to wait for anything before declaring the server stuck.
pub const GUARD: Duration = Duration::from_secs(30);

/// A fresh, empty directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("serve-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The path as a `&str` (scratch paths need no JSON escaping).
pub fn s(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// `acp-cli --acp --listen 127.0.0.1:0 ARGS…`, killed when dropped.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    pub cwd: PathBuf,
}

impl Server {
    /// Starts the server in a scratch cwd and reads its `listening` line.
    pub fn start(name: &str, args: &[&str]) -> Self {
        let cwd = scratch(name);
        Self::start_in(cwd, args)
    }

    pub fn start_in(cwd: PathBuf, args: &[&str]) -> Self {
        let mut all = vec!["--acp", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Self::command_in(cwd, &all)
    }

    /// `acp-cli ARGS…` (which must listen on port 0) in `cwd`.
    pub fn command_in(cwd: PathBuf, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_acp-cli"))
            .args(args)
            .current_dir(&cwd)
            .env("HOME", &cwd)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            // Kept for tests that check what the server logs (`Server::logged`).
            .stderr(std::fs::File::create(cwd.join("stderr.txt")).expect("stderr file"))
            .spawn()
            .expect("start acp-cli");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the listening line");
        let rest = line
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("not a listening line: {line:?}"));
        let host = rest
            .trim()
            .trim_start_matches("http://")
            .trim_start_matches("https://")
            .trim_end_matches("/acp");
        let addr = host.parse().expect("an address");
        Self { child, addr, cwd }
    }
}

impl Server {
    /// Ends the server and returns everything it logged: its stderr and every `*.log` file
    /// under its working directory.
    pub fn logged(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut logged = std::fs::read_to_string(self.cwd.join("stderr.txt")).unwrap_or_default();
        let mut dirs = vec![self.cwd.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "log") {
                    logged += &std::fs::read_to_string(&path).unwrap_or_default();
                }
            }
        }
        logged
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A parsed response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one raw request on a new socket and reads one response (Content-Length bodies).
pub fn request(addr: SocketAddr, raw: &[u8]) -> Response {
    let mut socket = TcpStream::connect(addr).expect("connect");
    socket.set_read_timeout(Some(GUARD)).unwrap();
    socket.write_all(raw).expect("write");
    read_response(&mut BufReader::new(socket))
}

/// Reads a response head and its Content-Length body.
pub fn read_response(reader: &mut impl BufRead) -> Response {
    let (status, headers) = read_head(reader);
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().expect("length"));
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("body");
    Response {
        status,
        headers,
        body,
    }
}

fn read_head(reader: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    reader.read_line(&mut line).expect("status line");
    let status = line
        .split(' ')
        .nth(1)
        .unwrap_or_else(|| panic!("status line {line:?}"))
        .parse()
        .expect("status");
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').expect("header line");
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    (status, headers)
}

/// A POST of `body` with extra header lines.
pub fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> Response {
    let mut raw = format!(
        "POST /acp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    raw.push_str("\r\n");
    raw.push_str(body);
    request(addr, raw.as_bytes())
}

/// The JSON-RPC error body every refusal carries.
pub fn refusal(message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": message}})
        .to_string()
}

/// An SSE stream read on a thread: its events' data, in order.
pub struct Sse {
    pub events: Receiver<Value>,
    pub status: u16,
}

impl Sse {
    /// Opens `GET /acp` for the connection's stream, or a session's.
    pub fn open(addr: SocketAddr, connection: &str, session: Option<&str>) -> Self {
        let mut socket = TcpStream::connect(addr).expect("connect");
        let mut raw = format!(
            "GET /acp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {connection}\r\n"
        );
        if let Some(session) = session {
            raw.push_str(&format!("Acp-Session-Id: {session}\r\n"));
        }
        raw.push_str("\r\n");
        socket.write_all(raw.as_bytes()).expect("write");
        let mut reader = BufReader::new(socket);
        let (status, _) = read_head(&mut reader);
        let (sender, events) = channel();
        std::thread::spawn(move || {
            // Chunked framing around the events: sizes and blank lines are skipped, `data:`
            // lines are the events (each one message, R-MSG-2).
            for line in reader.lines() {
                let Ok(line) = line else { return };
                if let Some(data) = line.strip_prefix("data: ") {
                    let value = serde_json::from_str(data).expect("an event is JSON");
                    if sender.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        Self { events, status }
    }

    pub fn next(&self) -> Value {
        self.events
            .recv_timeout(GUARD)
            .expect("an event before the guard")
    }

    /// Events until the answer with `id`, which is last.
    pub fn until_answer(&self, id: u64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let event = self.next();
            let done = event["id"] == id && event.get("method").is_none();
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    /// Events until the first whose `method` is `method`, which is last.
    pub fn until_method(&self, method: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let event = self.next();
            let done = event["method"] == method;
            seen.push(event);
            if done {
                return seen;
            }
        }
    }
}

/// `initialize` with no capabilities, id 1.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#;

/// `session/new` in `cwd`.
pub fn new_session(id: u64, cwd: &Path) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#,
        s(cwd)
    )
}

/// `session/load` of `session` in `cwd`.
pub fn load_session(id: u64, session: &str, cwd: &Path) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/load","params":{{"sessionId":"{session}","cwd":"{}","mcpServers":[]}}}}"#,
        s(cwd)
    )
}

/// `session/prompt` with one text block.
pub fn prompt(id: u64, session: &str, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":{}}}]}}}}"#,
        serde_json::to_string(text).unwrap()
    )
}

/// The answer to the agent's request `id` choosing `option`.
pub fn choose(id: &Value, option: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"outcome":{{"outcome":"selected","optionId":"{option}"}}}}}}"#
    )
}

/// A WebSocket client on `/acp`.
pub struct Ws {
    pub socket: tungstenite::WebSocket<TcpStream>,
    pub connection_id: String,
}

impl Ws {
    /// Connects with extra request headers; the handshake's error when refused.
    pub fn connect(addr: SocketAddr, headers: &[(&str, &str)]) -> Result<Self, tungstenite::Error> {
        use tungstenite::client::IntoClientRequest;
        let mut request = format!("ws://{addr}/acp").into_client_request().unwrap();
        for (name, value) in headers {
            request.headers_mut().insert(
                tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(GUARD)).unwrap();
        let (socket, response) =
            tungstenite::client::client(request, stream).map_err(|e| match e {
                tungstenite::HandshakeError::Failure(e) => e,
                tungstenite::HandshakeError::Interrupted(_) => panic!("blocking handshake"),
            })?;
        let connection_id = response
            .headers()
            .get("acp-connection-id")
            .expect("101 carries Acp-Connection-Id")
            .to_str()
            .unwrap()
            .to_owned();
        Ok(Self {
            socket,
            connection_id,
        })
    }

    pub fn send(&mut self, text: &str) {
        self.socket
            .send(tungstenite::Message::text(text))
            .expect("send");
    }

    /// The next text message as JSON (binary and control frames skipped).
    pub fn recv(&mut self) -> Value {
        loop {
            match self.socket.read().expect("read") {
                tungstenite::Message::Text(text) => {
                    return serde_json::from_str(text.as_str()).expect("JSON");
                }
                _ => continue,
            }
        }
    }

    pub fn until_answer(&mut self, id: u64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let event = self.recv();
            let done = event["id"] == id && event.get("method").is_none();
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    pub fn until_method(&mut self, method: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let event = self.recv();
            let done = event["method"] == method;
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    /// `initialize` and `session/new` in `cwd`; returns the session id.
    pub fn handshake(&mut self, cwd: &Path) -> String {
        self.send(INITIALIZE);
        let answer = self.until_answer(1);
        assert_eq!(answer.last().unwrap()["result"]["protocolVersion"], 1);
        self.send(&new_session(2, cwd));
        let answer = self.until_answer(2);
        answer.last().unwrap()["result"]["sessionId"]
            .as_str()
            .expect("a sessionId")
            .to_owned()
    }
}
