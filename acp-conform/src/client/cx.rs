//! What a client case works with: the client process (its exit, stdout, stderr, signals)
//! and the connection its agent — the relay of [`super::relay`] — opened back to the suite.
//! Every line both ways is recorded and shown to the exchange monitor ([`crate::rules`]);
//! what it blames on the client fails the case.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_host::supervisor::recovery::ExitStatus;
use serde_json::{Value, json};
use smol::channel::Receiver;
use smol::io::AsyncWriteExt;
use smol::net::TcpStream;

use super::runner::Baseline;
use crate::process::{AgentProcess, ProcessEvent, ProcessKey};
use crate::rules::{Finding, Monitor, MonitorOptions};
use crate::subject::scaled;
use crate::trace::Side;
use crate::verdict::{Outcome, fail};

/// How long an expected message may take.
pub(crate) const ANSWER: Duration = Duration::from_secs(5);

/// What the socket reader hands over.
pub(crate) enum Incoming {
    /// One line from the client, without its `\n` (and one `\r`).
    Line(Vec<u8>),
    /// The client closed its end (the relay's stdin reached EOF).
    Eof,
}

/// The client process under test.
pub(crate) struct Client {
    pub(crate) process: AgentProcess,
    pub(crate) events: Receiver<(ProcessKey, ProcessEvent)>,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<String>,
    pub(crate) exit: Option<ExitStatus>,
}

impl Client {
    /// Takes one process event.
    pub(crate) fn take(&mut self, event: ProcessEvent) {
        match event {
            ProcessEvent::Stdout(bytes) => self.stdout.extend_from_slice(&bytes),
            ProcessEvent::StderrLine(line) => self.stderr.push(line),
            ProcessEvent::Exited(status) => {
                self.exit = Some(status);
                self.process.mark_exited();
            }
            ProcessEvent::StdoutEof | ProcessEvent::StderrEof => {}
        }
    }

    /// The last stderr lines, for failure details.
    pub(crate) fn stderr_tail(&self) -> String {
        let tail: Vec<&str> = self
            .stderr
            .iter()
            .rev()
            .take(3)
            .rev()
            .map(String::as_str)
            .collect();
        if tail.is_empty() {
            String::new()
        } else {
            format!("; its stderr ends: {}", tail.join(" | "))
        }
    }
}

/// The session a case opened and the prompt it holds.
#[derive(Clone, Debug)]
pub(crate) struct Opened {
    /// The `initialize` params the client sent.
    pub(crate) init: Value,
    /// The session id the suite answered `session/new` with.
    pub(crate) session: String,
    /// The `session/new` params.
    pub(crate) new: Value,
    /// The id of the `session/prompt` that opened the turn.
    pub(crate) prompt_id: Value,
    /// The `session/prompt` params.
    pub(crate) prompt: Value,
}

impl Opened {
    /// The session's cwd as the client sent it.
    pub(crate) fn cwd(&self) -> PathBuf {
        PathBuf::from(self.new["cwd"].as_str().unwrap_or("/"))
    }

    /// Whether the client advertised `clientCapabilities` at `path` as `true`.
    pub(crate) fn offers(&self, path: &[&str]) -> bool {
        offers(&self.init, path)
    }
}

/// Whether `initialize` params advertise `clientCapabilities` at `path` as `true`.
pub(crate) fn offers(init: &Value, path: &[&str]) -> bool {
    let mut at = init.get("clientCapabilities");
    for key in path {
        at = at.and_then(|v| v.get(key));
    }
    at == Some(&Value::Bool(true))
}

/// The context of one case; see the module docs.
pub(crate) struct Cx {
    pub(crate) client: Client,
    socket: TcpStream,
    incoming: Receiver<Incoming>,
    /// Client messages not taken by a case yet, with their line numbers.
    queue: VecDeque<(usize, Value)>,
    /// Lines seen so far, both ways (the monitor's line numbers).
    lines: usize,
    monitor: Monitor,
    /// What the monitor blamed on the client.
    pub(crate) findings: Vec<Finding>,
    /// The client closed the connection.
    pub(crate) eof: bool,
    /// The socket cannot be written any more (the client went away).
    broken: bool,
    next_id: i64,
    /// Whether requests of the suite still unanswered at the end fail the case (R-RPC-1);
    /// cases that end the connection themselves turn it off.
    pub(crate) all_answered: bool,
    /// The line of the client's first `session/cancel`.
    pub(crate) cancel_line: Option<usize>,
    pub(crate) scale: f64,
    /// What the run's first exchange showed about the client.
    pub(crate) baseline: Arc<Baseline>,
}

/// What [`Cx::pull`] saw.
enum Pulled {
    Line(Vec<u8>),
    Eof,
    Process(ProcessEvent),
    Timeout,
}

impl Cx {
    pub(crate) fn new(
        client: Client,
        socket: TcpStream,
        incoming: Receiver<Incoming>,
        scale: f64,
        baseline: Arc<Baseline>,
    ) -> Cx {
        Cx {
            client,
            socket,
            incoming,
            queue: VecDeque::new(),
            lines: 0,
            monitor: Monitor::new(MonitorOptions::default()),
            findings: Vec::new(),
            eof: false,
            broken: false,
            next_id: 0,
            all_answered: true,
            cancel_line: None,
            scale,
            baseline,
        }
    }

    /// `d` under `--timeout-scale`.
    pub(crate) fn scaled(&self, d: Duration) -> Duration {
        scaled(d, self.scale)
    }

    /// The time an answer may take from now.
    pub(crate) fn answer_deadline(&self) -> Instant {
        Instant::now() + self.scaled(ANSWER)
    }

    fn record(&mut self, from: Side, bytes: &[u8]) -> usize {
        self.lines += 1;
        let line = self.lines;
        let findings = self.monitor.observe(from, line, None, bytes);
        self.findings
            .extend(findings.into_iter().filter(|f| f.blame == Side::Client));
        line
    }

    /// The monitor's last word: requests never answered, when they count.
    pub(crate) fn finish_monitor(&mut self) {
        let findings = self.monitor.finish();
        if self.all_answered {
            self.findings
                .extend(findings.into_iter().filter(|f| f.blame == Side::Client));
        }
    }

    /// Waits for the next thing to happen until `deadline`.
    async fn pull_raw(&mut self, deadline: Instant) -> Pulled {
        let socket = async {
            if self.eof {
                std::future::pending::<()>().await;
            }
            match self.incoming.recv().await {
                Ok(Incoming::Line(bytes)) => Pulled::Line(bytes),
                Ok(Incoming::Eof) | Err(_) => Pulled::Eof,
            }
        };
        let events = self.client.events.clone();
        let process = async move {
            match events.recv().await {
                Ok((_, event)) => Pulled::Process(event),
                // Every event was delivered: nothing more will come from the process.
                Err(_) => std::future::pending().await,
            }
        };
        let timer = async {
            smol::Timer::at(deadline).await;
            Pulled::Timeout
        };
        smol::future::or(socket, smol::future::or(process, timer)).await
    }

    /// Takes in one thing; false on timeout.
    pub(crate) async fn pull(&mut self, deadline: Instant) -> bool {
        match self.pull_raw(deadline).await {
            Pulled::Line(bytes) => {
                let line = self.record(Side::Client, &bytes);
                if let Ok(value) = serde_json::from_slice::<Value>(&bytes)
                    && value.is_object()
                {
                    if value["method"] == "session/cancel" && self.cancel_line.is_none() {
                        self.cancel_line = Some(line);
                    }
                    self.queue.push_back((line, value));
                }
                true
            }
            Pulled::Eof => {
                self.eof = true;
                true
            }
            Pulled::Process(event) => {
                self.client.take(event);
                true
            }
            Pulled::Timeout => false,
        }
    }

    /// Takes in everything that comes until `deadline`.
    pub(crate) async fn drain_until(&mut self, deadline: Instant) {
        while self.pull(deadline).await {}
    }

    /// Takes in everything that comes for `d`.
    pub(crate) async fn drain_for(&mut self, d: Duration) {
        self.drain_until(Instant::now() + d).await;
    }

    /// The first queued client message that `pred` accepts, waiting up to `deadline`; it is
    /// taken off the queue with its line number.
    pub(crate) async fn wait_until(
        &mut self,
        what: &str,
        deadline: Instant,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<(usize, Value), Outcome> {
        loop {
            if let Some(at) = self.queue.iter().position(|(_, m)| pred(m)) {
                return Ok(self.queue.remove(at).expect("found"));
            }
            if self.eof {
                return Err(fail(format!(
                    "the client closed the connection before {what}{}",
                    self.exit_text()
                )));
            }
            if let Some(status) = self.client.exit
                && self.incoming.is_empty()
            {
                // Its last lines may still be in flight: one short look.
                if !self.pull(Instant::now() + Duration::from_millis(200)).await {
                    return Err(fail(format!(
                        "the client exited ({status}) before {what}{}",
                        self.client.stderr_tail()
                    )));
                }
                continue;
            }
            if !self.pull(deadline).await {
                return Err(fail(format!(
                    "no {what} within {:?}{}",
                    self.scaled(ANSWER),
                    self.client.stderr_tail()
                )));
            }
        }
    }

    /// [`Cx::wait_until`] with the usual answer time.
    pub(crate) async fn wait_for(
        &mut self,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<(usize, Value), Outcome> {
        let deadline = self.answer_deadline();
        self.wait_until(what, deadline, pred).await
    }

    fn exit_text(&self) -> String {
        match self.client.exit {
            Some(status) => format!(" (it exited: {status}){}", self.client.stderr_tail()),
            None => self.client.stderr_tail(),
        }
    }

    /// The next request of the client for `method`.
    pub(crate) async fn request_of(&mut self, method: &str) -> Result<(usize, Value), Outcome> {
        self.wait_for(&format!("{method} request"), |m| {
            m["method"] == method && m.get("id").is_some()
        })
        .await
    }

    /// The client's answer to our request `id`.
    pub(crate) async fn response(&mut self, id: &Value, what: &str) -> Result<Value, Outcome> {
        let id = id.clone();
        self.wait_for(&format!("answer to {what} (id {id})"), move |m| {
            m.get("method").is_none() && m.get("id") == Some(&id)
        })
        .await
        .map(|(_, m)| m)
    }

    /// Client messages still queued (not taken by the case).
    pub(crate) fn queued(&self) -> impl Iterator<Item = &Value> {
        self.queue.iter().map(|(_, m)| m)
    }

    /// Writes `bytes` to the client as they are. Once the client has gone, writes are
    /// dropped: a client may end while the suite still talks.
    pub(crate) async fn send_raw(&mut self, bytes: &[u8]) {
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if !text.iter().all(u8::is_ascii_whitespace) {
                self.record(Side::Agent, text);
            }
        }
        self.write(bytes).await;
    }

    async fn write(&mut self, bytes: &[u8]) {
        if self.broken {
            return;
        }
        let written = async {
            self.socket.write_all(bytes).await?;
            self.socket.flush().await
        };
        if written.await.is_err() {
            self.broken = true;
        }
    }

    /// Writes `bytes` in pieces of `piece` bytes with a short pause after each.
    pub(crate) async fn send_split(&mut self, bytes: &[u8], piece: usize) {
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            self.record(Side::Agent, text.strip_suffix(b"\r").unwrap_or(text));
        }
        for chunk in bytes.chunks(piece.max(1)) {
            self.write(chunk).await;
            smol::Timer::after(Duration::from_millis(2)).await;
        }
    }

    /// Sends one message.
    pub(crate) async fn send(&mut self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// Sends a request with the next integer id; returns the id.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.request_with(id.clone(), method, params).await;
        id
    }

    /// Sends a request with `id`.
    pub(crate) async fn request_with(&mut self, id: Value, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }

    /// Sends a notification.
    pub(crate) async fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Answers the client's request `id` with `result`.
    pub(crate) async fn respond(&mut self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    /// Answers the client's request `id` with an error.
    pub(crate) async fn respond_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        )
        .await;
    }

    /// A `session/update` for `session`.
    pub(crate) async fn update(&mut self, session: &str, update: Value) {
        self.notify(
            "session/update",
            json!({"sessionId": session, "update": update}),
        )
        .await;
    }

    /// An `agent_message_chunk` with `text`.
    pub(crate) async fn say(&mut self, session: &str, text: &str) {
        self.update(
            session,
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}),
        )
        .await;
    }

    /// Answers `initialize` with `result`; returns the client's params.
    pub(crate) async fn initialize_with(&mut self, result: Value) -> Result<Value, Outcome> {
        let (_, init) = self.request_of("initialize").await?;
        self.respond(&init["id"], result).await;
        Ok(init.get("params").cloned().unwrap_or(Value::Null))
    }

    /// The handshake with the usual answers, up to the first `session/prompt` (held: the
    /// case answers it).
    pub(crate) async fn open(&mut self) -> Result<Opened, Outcome> {
        self.open_with(init_result(), SESSION).await
    }

    /// The handshake with `init` as the `initialize` result and `session` as the session id.
    pub(crate) async fn open_with(
        &mut self,
        init: Value,
        session: &str,
    ) -> Result<Opened, Outcome> {
        let params = self.initialize_with(init).await?;
        let (_, new) = self.request_of("session/new").await?;
        self.respond(&new["id"], json!({"sessionId": session}))
            .await;
        let (_, prompt) = self.request_of("session/prompt").await?;
        Ok(Opened {
            init: params,
            session: session.to_owned(),
            new: new.get("params").cloned().unwrap_or(Value::Null),
            prompt_id: prompt["id"].clone(),
            prompt: prompt.get("params").cloned().unwrap_or(Value::Null),
        })
    }

    /// Answers the held prompt with `stop`.
    pub(crate) async fn end_turn(&mut self, opened: &Opened, stop: &str) {
        self.respond(&opened.prompt_id, json!({"stopReason": stop}))
            .await;
    }

    /// A request nobody knows, answered: everything the client sent before its answer has
    /// arrived (clients answer in order).
    pub(crate) async fn barrier(&mut self) -> Result<Value, Outcome> {
        let id = self.request("_conform/barrier", json!({})).await;
        self.response(&id, "the barrier request _conform/barrier")
            .await
    }

    /// Answers that came for nothing the suite asked (what a client must not send).
    pub(crate) fn stray_answers(&self) -> Vec<Value> {
        self.queued()
            .filter(|m| m.get("method").is_none())
            .cloned()
            .collect()
    }

    /// Waits for the client to exit, up to the usual answer time.
    pub(crate) async fn wait_exit(&mut self) -> Option<ExitStatus> {
        let deadline = self.answer_deadline();
        while self.client.exit.is_none() && self.pull(deadline).await {}
        self.client.exit
    }

    /// Passes when the client ends as it did after the run's first, clean turn: the same
    /// exit status, or still running if it kept running then.
    pub(crate) async fn ends_like_baseline(&mut self, what: &str) -> Result<String, Outcome> {
        match self.baseline.exit {
            Some(expected) => match self.wait_exit().await {
                Some(status) if status == expected => Ok(format!(
                    "{what}; the client ended with {status}, as after a clean turn"
                )),
                Some(status) => Err(fail(format!(
                    "{what}; the client ended with {status}, after a clean turn with {expected}{}",
                    self.client.stderr_tail()
                ))),
                None => Err(fail(format!(
                    "{what}; the client did not end within {:?} (it does after a clean turn)",
                    self.scaled(ANSWER)
                ))),
            },
            None => {
                self.drain_for(Duration::from_millis(300)).await;
                match self.client.exit {
                    None => Ok(format!(
                        "{what}; the client is still running, as after a clean turn"
                    )),
                    Some(status) => Err(fail(format!(
                        "{what}; the client ended with {status}, but keeps running after a clean turn{}",
                        self.client.stderr_tail()
                    ))),
                }
            }
        }
    }

    /// Sends SIGINT to the client process (not its group: its agent is ours).
    pub(crate) fn interrupt(&self) {
        if self.client.exit.is_some() {
            return;
        }
        if let Some(pid) = rustix::process::Pid::from_raw(self.client.process.pid() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
        }
    }

    /// The client's stdout so far, as text.
    pub(crate) fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.client.stdout).into_owned()
    }

    /// Ends the connection from the agent's side (the agent "exits").
    pub(crate) async fn hang_up(&mut self) {
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
        self.broken = true;
    }
}

/// The session id of the usual handshake.
pub(crate) const SESSION: &str = "conform-session-1";

/// The usual `initialize` result: version 1, nothing optional advertised.
pub(crate) fn init_result() -> Value {
    json!({
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": false,
            "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false}
        },
        "authMethods": [],
        "agentInfo": {"name": "acp-conform", "title": "acp-cli conform (scripted agent)", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// Whether `m` is an error response.
pub(crate) fn error_code(m: &Value) -> Option<i64> {
    m.get("error").and_then(|e| e["code"].as_i64())
}
