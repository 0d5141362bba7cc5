//! A streamable HTTP MCP server on loopback, for the `mcp_http` and `agent_mcp` tests.
//!
//! Plain threads and `std::net`, sharing nothing with the client under test. It keeps one
//! session (`Mcp-Session-Id: session-7`, given with the `initialize` answer and required on
//! every later request), records every request (method, path, headers, JSON body), and
//! answers by method and tool:
//!
//! - `initialize`: one JSON answer, the client's version accepted.
//! - notifications and answers to our `ping`: `202 Accepted`.
//! - `tools/list`: an event stream that first pings the client, then answers.
//! - `tools/call` `echo`: one JSON answer with the text; `stream`: an event stream whose
//!   answer is cut across chunks; `lost`: an event stream that ends without an answer;
//!   `expire`: `404` (the session is over); `boom`: `500` with a text body.
//! - `DELETE`: `200`, the session is over.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

/// The session id the server hands out.
pub const SESSION: &str = "session-7";

/// One request the server got.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// `POST`, `DELETE`, ...
    pub method: String,
    /// The request target.
    pub path: String,
    /// Header names lower-cased, values as sent.
    pub headers: Vec<(String, String)>,
    /// The raw head, as sent.
    pub raw_head: String,
    /// The JSON body (`Null` when none).
    pub body: Value,
}

impl Recorded {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC method of the body.
    pub fn rpc_method(&self) -> Option<&str> {
        self.body.get("method").and_then(Value::as_str)
    }
}

/// The running server; it stops accepting when dropped.
pub struct McpHttpServer {
    port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl McpHttpServer {
    /// Binds `127.0.0.1:0` and serves each connection on its own thread.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let recorded = Arc::clone(&recorded);
                thread::spawn(move || serve(stream, &recorded));
            }
        });
        Self { port, requests }
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Waits (bounded) until a request matching `wanted` came, and returns it.
    pub fn wait_for(&self, wanted: impl Fn(&Recorded) -> bool) -> Recorded {
        for _ in 0..1000 {
            if let Some(found) = self.requests().into_iter().find(|r| wanted(r)) {
                return found;
            }
            thread::sleep(Duration::from_millis(10));
        }
        panic!("the request never came: {:?}", self.requests());
    }
}

fn serve(mut stream: TcpStream, recorded: &Mutex<Vec<Recorded>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Some(request) = read_request(&mut stream) else {
        return;
    };
    recorded.lock().unwrap().push(request.clone());
    let session_ok = request.header("mcp-session-id") == Some(SESSION);
    if request.method == "DELETE" {
        let status = if session_ok {
            "200 OK"
        } else {
            "404 Not Found"
        };
        return respond(&mut stream, status, &[], b"");
    }
    let method = request.rpc_method().unwrap_or("");
    let id = request.body.get("id").cloned().unwrap_or(Value::Null);
    if method == "initialize" {
        let version = request.body["params"]["protocolVersion"].clone();
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "loopback", "version": "1"},
        }});
        return respond_json(&mut stream, &[("Mcp-Session-Id", SESSION)], &answer);
    }
    if !session_ok {
        return respond(
            &mut stream,
            "400 Bad Request",
            &[("Content-Type", "text/plain")],
            b"missing session",
        );
    }
    if method.is_empty() || id.is_null() {
        // A notification, or the client's answer to our ping.
        return respond(&mut stream, "202 Accepted", &[], b"");
    }
    let answer = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    match method {
        "tools/list" => {
            let ping = json!({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"}).to_string();
            let list = answer(json!({"tools": [
                {"name": "echo", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
                {"name": "stream", "inputSchema": {"type": "object"}},
            ]}));
            respond_events(
                &mut stream,
                &[
                    format!("data: {ping}\n\n"),
                    format!("id: 1\ndata: {list}\n\n"),
                ],
            );
        }
        "tools/call" => {
            let arguments = &request.body["params"]["arguments"];
            let text = arguments["text"].as_str().unwrap_or("").to_owned();
            match request.body["params"]["name"].as_str().unwrap_or("") {
                "echo" => {
                    let body = answer(json!({"content": [{"type": "text", "text": text}]}));
                    respond(
                        &mut stream,
                        "200 OK",
                        &[("Content-Type", "application/json")],
                        body.as_bytes(),
                    );
                }
                "stream" => {
                    let event = format!(
                        ": a comment\r\nevent: message\r\ndata: {}\r\n\r\n",
                        answer(
                            json!({"content": [{"type": "text", "text": format!("streamed {text}")}]})
                        )
                    );
                    let (a, b) = event.split_at(event.len() / 2);
                    respond_events(&mut stream, &[a.to_owned(), b.to_owned()]);
                }
                "lost" => respond_events(&mut stream, &[": nothing to say\n\n".to_owned()]),
                "expire" => respond(&mut stream, "404 Not Found", &[], b""),
                _ => respond(
                    &mut stream,
                    "500 Internal Server Error",
                    &[("Content-Type", "text/plain")],
                    b"boom",
                ),
            }
        }
        _ => respond_json(
            &mut stream,
            &[],
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
        ),
    }
}

fn respond_json(stream: &mut TcpStream, extra: &[(&str, &str)], value: &Value) {
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend_from_slice(extra);
    respond(stream, "200 OK", &headers, value.to_string().as_bytes());
}

fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// A chunked event stream, one chunk per piece, ended properly.
fn respond_events(stream: &mut TcpStream, pieces: &[String]) {
    let _ = stream.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
    );
    for piece in pieces {
        let _ = stream.write_all(format!("{:x}\r\n{piece}\r\n", piece.len()).as_bytes());
        let _ = stream.flush();
        thread::sleep(Duration::from_millis(5));
    }
    let _ = stream.write_all(b"0\r\n\r\n");
}

fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let raw_head = String::from_utf8_lossy(&buffer[..end]).into_owned();
    let mut lines = raw_head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(": "))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        raw_head,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}
