//! What a case works with: the agent under test ([`Subject`]) plus the client half of
//! JSON-RPC — requests with counting ids, waiting for their answers, and serving the requests
//! the agent sends (permission, `fs/*`, `ask_user`, `terminal/*` through `terminal_host`) the way
//! the case asked for. Everything
//! received is kept in order, so a case can check what came before or after what.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::process::LineSplitter;
use super::profile::Profile;
use super::subject::{Subject, scaled};
use super::verdict::{Outcome, fail, skip};
use crate::rules::{Finding, Monitor, MonitorOptions, Severity};
use crate::trace::Side;

/// How long an answer may take before a case fails (times `--timeout-scale`).
pub(crate) const ANSWER: Duration = Duration::from_secs(5);
/// How long a prompt turn may take before a case fails (times `--timeout-scale`).
pub(crate) const TURN: Duration = Duration::from_secs(15);

/// How the harness answers `session/request_permission`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionReply {
    /// `{"outcome": {"outcome": "selected", "optionId": <the option of this kind>}}`.
    Select(&'static str),
    /// `{"outcome": {"outcome": "cancelled"}}`.
    Cancelled,
    /// A JSON-RPC error (`-32603`).
    Error,
    /// Selected with an option id the agent never offered.
    UnknownOption,
    /// Not answered (yet): kept in [`Cx::held`].
    Hold,
}

/// One message the agent sent, classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Response,
    Request,
    Notification,
}

/// Which kind of JSON-RPC message `message` is.
pub(crate) fn kind(message: &Value) -> Kind {
    match (message.get("method").is_some(), message.get("id").is_some()) {
        (true, true) => Kind::Request,
        (true, false) => Kind::Notification,
        _ => Kind::Response,
    }
}

/// The case's connection; see the module docs.
pub struct Cx {
    /// The agent process and everything it wrote.
    pub subject: Subject,
    /// What the agent advertised in the run's first handshake.
    pub profile: Arc<Profile>,
    /// `--timeout-scale`.
    pub scale: f64,
    next_id: i64,
    /// Lines of `subject.lines` looked at so far by [`Cx::next_message`].
    seen: usize,
    /// Responses received per id (the id's JSON text): more than one is a protocol error.
    pub responses: HashMap<String, usize>,
    /// Whether the harness advertises `fs.readTextFile` in [`Cx::initialize`].
    pub offer_read: bool,
    /// Whether the harness advertises `fs.writeTextFile` in [`Cx::initialize`].
    pub offer_write: bool,
    /// How permission requests are answered.
    pub permission: PermissionReply,
    /// The harness's terminals, when the case offers `terminal: true` ([`Cx::offer_terminal`]).
    pub(crate) terminals: Option<crate::terminal_host::TerminalHost>,
    /// The text `_agentao.cn/ask_user` is answered with (empty: an error answer).
    pub ask_answer: String,
    /// Indexes (into `subject.lines`) of every request the agent sent.
    pub calls: Vec<usize>,
    /// Permission requests held unanswered ([`PermissionReply::Hold`]): their ids.
    pub held: Vec<Value>,
    /// The exchange monitor of `acp-cli lint` (one place for each rule): it reads every line
    /// both ways, in order.
    monitor: Monitor,
    /// The harness's writes cut into lines for the monitor.
    written: LineSplitter,
    /// Lines of `subject.lines` the monitor has read.
    monitored: usize,
    /// Lines the monitor has read, both ways (its line numbers).
    exchange_lines: usize,
    /// Protocol errors the monitor blamed on the agent, in order. The harness's own
    /// deliberately bad lines are blamed on the client and not kept.
    pub violations: Vec<Finding>,
    /// The exchange as the monitor read it, one line per message with its direction
    /// (`> ` harness → agent, `< ` agent → harness, the prefixes `acp-cli lint` reads), long
    /// lines cut, only the last [`EXCHANGE_LINES`] kept: what a failure's report shows.
    pub exchange: std::collections::VecDeque<String>,
    /// The case's seeded generator (`--chaos SEED`, else seed 0): what the `chaos` cases
    /// draw their delays, moments and counts from, so a run is reproducible.
    pub rng: crate::chaos::Chaos,
}

/// How many exchange lines a case keeps for its report.
pub(crate) const EXCHANGE_LINES: usize = 200;
/// How many bytes of one exchange line a report shows.
const EXCHANGE_LINE_BYTES: usize = 2000;

/// `line` for the report's exchange: its first [`EXCHANGE_LINE_BYTES`] bytes (on a character
/// boundary, invalid UTF-8 replaced) and how long it was.
fn exchange_line(from: Side, bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(EXCHANGE_LINE_BYTES)]);
    let mut text = text.trim_end_matches(['\r', '\n']).to_string();
    if bytes.len() > EXCHANGE_LINE_BYTES {
        // A cut may have split a character: drop the replacement it became.
        text = text.trim_end_matches('\u{fffd}').to_string();
        text.push_str(&format!(" … ({} bytes in all)", bytes.len()));
    }
    format!("{} {text}", from.arrow())
}

impl Cx {
    /// A connection to `subject`.
    pub fn new(subject: Subject, profile: Arc<Profile>, scale: f64) -> Cx {
        Cx {
            subject,
            profile,
            scale,
            next_id: 0,
            seen: 0,
            responses: HashMap::new(),
            offer_read: false,
            offer_write: false,
            permission: PermissionReply::Select("allow_once"),
            terminals: None,
            ask_answer: String::from("conform-answer"),
            calls: Vec::new(),
            held: Vec::new(),
            exchange: std::collections::VecDeque::new(),
            rng: crate::chaos::Chaos::for_case(0, ""),
            monitor: Monitor::new(MonitorOptions::default()),
            written: LineSplitter::unlimited(),
            monitored: 0,
            exchange_lines: 0,
            violations: Vec::new(),
        }
    }

    /// Shows the monitor one line `from` a side; keeps what it blames on the agent. Blank
    /// lines are skipped, as every reader does (R-FRAME-2).
    fn observe(&mut self, from: Side, bytes: &[u8]) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.exchange_lines += 1;
        if self.exchange.len() == EXCHANGE_LINES {
            self.exchange.pop_front();
        }
        self.exchange.push_back(exchange_line(from, bytes));
        let findings = self.monitor.observe(from, self.exchange_lines, None, bytes);
        self.violations.extend(
            findings
                .into_iter()
                .filter(|f| f.blame == Side::Agent && f.severity == Severity::Error),
        );
    }

    /// Shows the monitor every agent line read so far and not shown yet.
    pub fn observe_agent(&mut self) {
        if self.written.has_partial() {
            self.monitor.line_started(Side::Client);
        }
        while self.monitored < self.subject.lines.len() {
            let bytes = std::mem::take(&mut self.subject.lines[self.monitored].bytes);
            self.monitored += 1;
            self.observe(Side::Agent, &bytes);
            self.subject.lines[self.monitored - 1].bytes = bytes;
        }
    }

    /// Offers `terminal: true` in [`Cx::initialize`] and serves `terminal/*` for real.
    pub(crate) fn offer_terminal(&mut self) {
        self.terminals = Some(crate::terminal_host::TerminalHost::new(&self.subject.cwd));
    }

    /// `base` times `--timeout-scale`.
    pub fn time(&self, base: Duration) -> Duration {
        scaled(base, self.scale)
    }

    /// The agent's working directory.
    pub fn cwd(&self) -> &Path {
        &self.subject.cwd
    }

    /// The parsed message of line `index` (a line that is not JSON-RPC gives `Null`).
    pub fn message(&self, index: usize) -> &Value {
        static NULL: Value = Value::Null;
        self.subject.lines[index].message.as_ref().unwrap_or(&NULL)
    }

    /// Indexes of every JSON-RPC message received so far.
    pub fn messages(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.subject.lines.len()).filter(|&i| self.subject.lines[i].message.is_some())
    }

    // ---- writing ----

    /// Writes raw bytes; a failed write (the agent closed stdin or died) fails the case.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), Outcome> {
        // What the agent wrote before this write comes first in the exchange.
        self.subject.take_ready().await;
        self.observe_agent();
        for line in self.written.push(bytes) {
            self.observe(Side::Client, &line);
        }
        self.subject
            .write(bytes)
            .await
            .map_err(|e| fail(format!("cannot write to the agent: {e}")))
    }

    /// Closes the agent's stdin; an unterminated last line the harness wrote is a line for
    /// the monitor now (R-FRAME-3).
    pub fn close_stdin(&mut self) {
        self.observe_agent();
        if let Some(rest) = self.written.finish_raw() {
            self.observe(Side::Client, &rest);
        }
        self.subject.close_stdin();
    }

    /// Writes one message and its newline.
    pub async fn send(&mut self, message: &Value) -> Result<(), Outcome> {
        let mut line = serde_json::to_vec(message).expect("a Value serializes");
        line.push(b'\n');
        self.send_raw(&line).await
    }

    /// A fresh integer id.
    pub fn fresh_id(&mut self) -> Value {
        self.next_id += 1;
        Value::from(self.next_id)
    }

    /// Sends a request with a fresh id; returns the id.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Outcome> {
        let id = self.fresh_id();
        self.request_with_id(id.clone(), method, params).await?;
        Ok(id)
    }

    /// Sends a request with the given id.
    pub async fn request_with_id(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
    ) -> Result<(), Outcome> {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&message).await
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), Outcome> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    // ---- reading ----

    /// The next JSON-RPC message (index into `subject.lines`), serving the agent's requests
    /// on the way; `None` at `deadline` or when stdout ended.
    pub async fn next_message(&mut self, deadline: Instant) -> Option<usize> {
        loop {
            let index = self.next_line_answering_waits(deadline).await?;
            self.seen = index + 1;
            self.observe_agent();
            let Some(message) = self.subject.lines[index].message.clone() else {
                continue;
            };
            match kind(&message) {
                Kind::Response => {
                    let key = message.get("id").map(Value::to_string).unwrap_or_default();
                    *self.responses.entry(key).or_default() += 1;
                }
                Kind::Request => {
                    self.calls.push(index);
                    self.serve(&message).await;
                }
                Kind::Notification => {}
            }
            return Some(index);
        }
    }

    /// The next line, as [`Subject::next_line`]; while a `terminal/wait_for_exit` is pending it
    /// looks every few milliseconds whether its command has exited, and answers it.
    async fn next_line_answering_waits(&mut self, deadline: Instant) -> Option<usize> {
        loop {
            let finished = match self.terminals.as_mut() {
                Some(host) => host.finished_waits(),
                None => Vec::new(),
            };
            for (id, reply) in finished {
                let _ = self.send(&reply_message(id, reply)).await;
            }
            let waiting = self.terminals.as_ref().is_some_and(|h| h.has_waits());
            let slice = match waiting {
                true => deadline.min(Instant::now() + Duration::from_millis(10)),
                false => deadline,
            };
            if let Some(index) = self.subject.next_line(slice).await {
                return Some(index);
            }
            if !waiting || self.subject.stdout_closed || Instant::now() >= deadline {
                return None;
            }
        }
    }

    /// Waits for the message `matches` accepts; fails with `what` at `timeout`.
    pub async fn wait_for(
        &mut self,
        what: &str,
        timeout: Duration,
        matches: impl Fn(&Value) -> bool,
    ) -> Result<usize, Outcome> {
        let deadline = Instant::now() + self.time(timeout);
        while let Some(index) = self.next_message(deadline).await {
            if matches(self.message(index)) {
                return Ok(index);
            }
        }
        Err(self.silence(what, self.time(timeout)))
    }

    /// The failure for "nothing came" after waiting `waited`: says whether the agent died.
    pub fn silence(&self, what: &str, waited: Duration) -> Outcome {
        match self.subject.exit {
            Some(status) => fail(format!("{what}: the agent exited ({status:?}) first")),
            None if self.subject.stdout_closed => fail(format!("{what}: the agent closed stdout")),
            None => fail(format!("no {what} within {waited:?}")),
        }
    }

    /// Waits for the response to `id` (the whole message).
    pub async fn response(&mut self, id: &Value) -> Result<usize, Outcome> {
        self.response_within(id, ANSWER).await
    }

    /// Waits for the response to `id`, at most `timeout` (scaled).
    pub async fn response_within(
        &mut self,
        id: &Value,
        timeout: Duration,
    ) -> Result<usize, Outcome> {
        let what = format!("answer to request id {id}");
        // It may have come while the case waited for something else.
        let earlier = (0..self.seen).find(|&i| {
            let m = self.message(i);
            kind(m) == Kind::Response && m.get("id") == Some(id)
        });
        if let Some(index) = earlier {
            return Ok(index);
        }
        let id = id.clone();
        self.wait_for(&what, timeout, move |m| {
            kind(m) == Kind::Response && m.get("id") == Some(&id)
        })
        .await
    }

    /// The `result` of the response to `id`; an error response fails the case.
    pub async fn result(&mut self, id: &Value) -> Result<Value, Outcome> {
        let index = self.response(id).await?;
        result_of(self.message(index))
    }

    /// The error `(code, message)` of the response to `id`; a result fails the case.
    pub async fn error(&mut self, id: &Value) -> Result<(i64, String), Outcome> {
        let index = self.response(id).await?;
        error_of(self.message(index))
    }

    /// Sends a request and returns its result.
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value, Outcome> {
        let id = self.request(method, params).await?;
        self.result(&id).await
    }

    /// Sends a request and expects an error with `code`; returns the error's message.
    pub async fn expect_error(
        &mut self,
        method: &str,
        params: Value,
        code: i64,
    ) -> Result<String, Outcome> {
        let id = self.request(method, params).await?;
        let (got, message) = self.error(&id).await?;
        if got != code {
            return Err(fail(format!(
                "{method} answered error {got} ({message}), expected {code}"
            )));
        }
        Ok(message)
    }

    /// A barrier: sends a request for a method nobody has and waits for its answer, so
    /// everything the agent wrote before that answer has been read. Then a short grace
    /// period catches writes racing it.
    pub async fn settle(&mut self) -> Result<(), Outcome> {
        let id = self.request("conform/ping", json!({})).await?;
        self.response(&id).await?;
        let grace = Instant::now() + self.time(Duration::from_millis(30));
        while self.next_message(grace).await.is_some() {}
        Ok(())
    }

    /// Reads whatever arrives until `duration` (scaled) passes.
    pub async fn drain_for(&mut self, duration: Duration) {
        let deadline = Instant::now() + self.time(duration);
        while self.next_message(deadline).await.is_some() {}
    }

    // ---- the usual steps ----

    /// `initialize` with protocol version 1 and the `fs` capabilities the case chose.
    pub async fn initialize(&mut self) -> Result<Value, Outcome> {
        let params = json!({
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": self.offer_read, "writeTextFile": self.offer_write},
                "terminal": self.terminals.is_some()
            },
            "clientInfo": {"name": "acp-cli-conform", "version": env!("CARGO_PKG_VERSION")}
        });
        self.call("initialize", params)
            .await
            .map_err(|o| o.context("initialize"))
    }

    /// `session/new` in the agent's cwd; returns the session id.
    pub async fn new_session(&mut self) -> Result<String, Outcome> {
        let cwd = self.cwd().to_string_lossy().into_owned();
        let result = self
            .call("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await
            .map_err(|o| o.context("session/new"))?;
        match result.get("sessionId").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => Ok(id.to_string()),
            _ => Err(fail(format!(
                "session/new answered without a sessionId: {result}"
            ))),
        }
    }

    /// `initialize` then `session/new`.
    pub async fn open(&mut self) -> Result<String, Outcome> {
        self.initialize().await?;
        self.new_session().await
    }

    /// Sends `session/prompt` with one text block; returns the request id.
    pub async fn prompt(&mut self, session: &str, text: &str) -> Result<Value, Outcome> {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
        .await
    }

    /// Waits for the answer of a prompt turn (up to [`TURN`]).
    pub async fn turn_end(&mut self, id: &Value) -> Result<usize, Outcome> {
        self.response_within(id, TURN).await
    }

    /// The `stopReason` of a prompt's answer; an error or a malformed result fails.
    pub fn stop_reason(&self, index: usize) -> Result<String, Outcome> {
        let result = result_of(self.message(index))?;
        match result.get("stopReason").and_then(Value::as_str) {
            Some(reason) => Ok(reason.to_string()),
            None => Err(fail(format!(
                "prompt answered without a stopReason: {result}"
            ))),
        }
    }

    /// The line of the demo command `name` as this agent spells it, or a skip naming what is
    /// missing. Cases that need a behaviour use it (issue 15, item 3).
    pub fn command(&self, name: &str, args: &str) -> Result<String, Outcome> {
        if self.profile.has_command(name) {
            Ok(format!("/{name} {args}").trim_end().to_string())
        } else {
            Err(skip(format!(
                "the agent advertises no /{name} command ({})",
                self.profile.commands_text()
            )))
        }
    }

    /// `session/update` notifications for `session` received so far, with their indexes.
    pub fn updates(&self, session: &str) -> Vec<(usize, Value)> {
        self.messages()
            .filter_map(|i| {
                let m = self.message(i);
                let params = m.get("params")?;
                (m.get("method")? == "session/update"
                    && params.get("sessionId")? == session
                    && m.get("id").is_none())
                .then(|| (i, params.get("update").cloned().unwrap_or(Value::Null)))
            })
            .collect()
    }

    /// Requests the agent sent with `method`, with their indexes.
    pub fn calls_of(&self, method: &str) -> Vec<(usize, Value)> {
        self.calls
            .iter()
            .filter(|&&i| self.message(i).get("method").and_then(Value::as_str) == Some(method))
            .map(|&i| (i, self.message(i).clone()))
            .collect()
    }

    /// How many responses carried `id`.
    pub fn responses_to(&self, id: &Value) -> usize {
        self.responses.get(&id.to_string()).copied().unwrap_or(0)
    }

    // ---- serving the agent's requests ----

    async fn serve(&mut self, request: &Value) {
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let reply = match method {
            "session/request_permission" => match self.permission {
                PermissionReply::Hold => {
                    self.held.push(id);
                    return;
                }
                PermissionReply::Error => Err((-32603, "Internal error: conform refused")),
                PermissionReply::Cancelled => Ok(json!({"outcome": {"outcome": "cancelled"}})),
                PermissionReply::UnknownOption => Ok(
                    json!({"outcome": {"outcome": "selected", "optionId": "conform-no-such-option"}}),
                ),
                PermissionReply::Select(kind) => Ok(select_option(&params, kind)),
            },
            "fs/read_text_file" if self.offer_read => self.read_file(&params),
            "fs/write_text_file" if self.offer_write => self.write_file(&params),
            m if m.starts_with("terminal/") && self.terminals.is_some() => {
                let host = self.terminals.as_mut().expect("offered");
                match host.handle(&id, m, &params) {
                    crate::terminal_host::Handled::Now(reply) => reply,
                    crate::terminal_host::Handled::Later => return,
                }
            }
            "_agentao.cn/ask_user" if self.ask_answer.is_empty() => {
                Err((-32603, "Internal error: conform refused"))
            }
            "_agentao.cn/ask_user" => Ok(json!({"outcome": "answered", "text": self.ask_answer})),
            // An unadvertised fs/* or terminal/* call is R-FS-1 for the monitor.
            _ => Err((-32601, "Method not found")),
        };
        let message = reply_message(id, reply);
        // A failed write shows up as the agent's silence in the case itself.
        let _ = self.send(&message).await;
    }

    /// Answers a held permission request.
    pub async fn answer_held(&mut self, id: &Value, result: Value) -> Result<(), Outcome> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await
    }

    fn read_file(&self, params: &Value) -> Result<Value, (i64, &'static str)> {
        let path = params.get("path").and_then(Value::as_str).unwrap_or("");
        if !Path::new(path).is_absolute() {
            return Err((-32602, "Invalid params: path must be absolute"));
        }
        match std::fs::read_to_string(path) {
            Ok(content) => Ok(json!({"content": content})),
            Err(_) => Err((-32002, "Resource not found")),
        }
    }

    fn write_file(&self, params: &Value) -> Result<Value, (i64, &'static str)> {
        let path = params.get("path").and_then(Value::as_str).unwrap_or("");
        let content = params.get("content").and_then(Value::as_str);
        if !Path::new(path).is_absolute() || content.is_none() {
            return Err((-32602, "Invalid params: absolute path and content required"));
        }
        if !Path::new(path).starts_with(self.cwd()) {
            return Err((-32602, "Invalid params: path outside the session"));
        }
        match std::fs::write(path, content.unwrap_or_default()) {
            Ok(()) => Ok(json!({})),
            Err(_) => Err((-32603, "Internal error: cannot write")),
        }
    }
}

/// The answer to request `id`: its result or its error.
fn reply_message(id: Value, reply: crate::terminal_host::Reply) -> Value {
    match reply {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, text)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}})
        }
    }
}

/// The answer selecting the option of `kind` (by `kind`, else by `optionId`), or cancelled
/// when the agent offered none.
fn select_option(params: &Value, kind: &str) -> Value {
    let options = params.get("options").and_then(Value::as_array);
    let chosen = options.into_iter().flatten().find(|o| {
        o.get("kind").and_then(Value::as_str) == Some(kind)
            || o.get("optionId").and_then(Value::as_str) == Some(kind)
    });
    match chosen.and_then(|o| o.get("optionId")) {
        Some(option) => json!({"outcome": {"outcome": "selected", "optionId": option}}),
        None => json!({"outcome": {"outcome": "cancelled"}}),
    }
}

/// The `result` of a response; an error response (or neither) fails.
pub(crate) fn result_of(response: &Value) -> Result<Value, Outcome> {
    if let Some(error) = response.get("error") {
        return Err(fail(format!("answered with an error: {error}")));
    }
    response.get("result").cloned().ok_or_else(|| {
        fail(format!(
            "a response with neither result nor error: {response}"
        ))
    })
}

/// The `(code, message)` of an error response; a result (or a malformed error) fails.
pub(crate) fn error_of(response: &Value) -> Result<(i64, String), Outcome> {
    let Some(error) = response.get("error") else {
        let result = response.get("result").unwrap_or(&Value::Null);
        return Err(fail(format!("expected an error, got the result {result}")));
    };
    let code = error.get("code").and_then(Value::as_i64);
    let message = error.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(code), Some(message)) => Ok((code, message.to_string())),
        _ => Err(fail(format!(
            "a malformed error object (needs integer code and string message): {error}"
        ))),
    }
}
