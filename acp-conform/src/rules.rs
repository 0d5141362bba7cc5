//! The exchange monitor: the protocol rules a recorded (or live) conversation between a client
//! and an agent must keep, checked message by message in order.
//!
//! `acp-cli lint` feeds it a trace; `acp-cli conform` can feed it a live exchange. Each rule is
//! named by its id in docs/protocol.md, the only place the rules are described; a finding
//! blames the side that broke it.
//!
//! ```
//! use acp_conform::rules::{Monitor, MonitorOptions};
//! use acp_conform::trace::Side;
//!
//! let mut monitor = Monitor::new(MonitorOptions::default());
//! let findings = monitor.observe(Side::Client, 1, None, br#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#);
//! assert_eq!(findings[0].rule, "R-INIT-1");
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt;

use acp_core::schema::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest,
    ClientResponse, Direction, Method,
};
use acp_core::wire::envelope::{self, MalformedResponse, Message, Outcome, Reason};
use serde_json::Value;

use crate::trace::Side;

/// How much a finding matters: errors make `acp-cli lint` exit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The protocol was broken.
    Error,
    /// Suspicious but allowed (a slow answer).
    Warning,
}

/// One broken rule: where, which, who, and what exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The 1-based line (of the trace) of the message that shows it.
    pub line: usize,
    /// The rule id from docs/protocol.md.
    pub rule: &'static str,
    /// Who broke it.
    pub blame: Side,
    /// Error or warning.
    pub severity: Severity,
    /// What happened, with the method, id, session or field path involved.
    pub detail: String,
}

impl fmt::Display for Finding {
    /// `LINE: RULE — SIDE: detail`, with ` (warning)` for warnings.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} — {}: {}",
            self.line,
            self.rule,
            self.blame.name(),
            self.detail
        )?;
        if self.severity == Severity::Warning {
            f.write_str(" (warning)")?;
        }
        Ok(())
    }
}

/// What the monitor is told beyond the messages.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MonitorOptions {
    /// Flag a request answered (or still unanswered at the end) after more than this many
    /// seconds (R-LINT-3). Needs times in the trace.
    pub slow: Option<f64>,
}

/// A request waiting for its answer.
#[derive(Clone, Debug)]
struct Pending {
    method: String,
    line: usize,
    ts: Option<f64>,
    session: Option<String>,
}

/// A running prompt turn of one session.
#[derive(Clone, Debug)]
struct Turn {
    /// The line of `session/cancel`, once the client cancelled.
    cancelled_at: Option<usize>,
    /// The id of the prompt that opened the turn (what `session/cancel` must end).
    opened_by: String,
    /// Prompts of the session not answered yet, the opener included: a prompt sent during
    /// the turn (R-TURN-2) may be queued by the agent, so the turn lasts until all are answered.
    open: usize,
}

/// Update kinds that belong to a turn (or a `session/load` replay), never after it.
const TURN_UPDATES: &[&str] = &[
    "agent_message_chunk",
    "agent_thought_chunk",
    "user_message_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
];

/// Watches one exchange; see the module docs.
#[derive(Debug, Default)]
pub struct Monitor {
    options: MonitorOptions,
    /// The client sent `initialize` (what it sends after is in order, R-INIT-1).
    initialize_sent: bool,
    /// The agent answered `initialize` (what it sends after is in order).
    initialized: bool,
    client_capabilities: Value,
    agent_capabilities: Value,
    /// Requests not answered yet, by (sender, id as JSON text).
    pending: HashMap<(Side, String), Pending>,
    /// Requests that reused the id of a request still pending (R-ID-7), queued behind it: the
    /// next answer to that id settles the first of them.
    reused: HashMap<(Side, String), Vec<Pending>>,
    /// Requests answered, by (sender, id): the line of the answer.
    answered: HashMap<(Side, String), usize>,
    /// Lines of each side whose id could not be read, not yet answered, oldest first: what an
    /// answer with `id: null` may answer (R-ID-4, R-ID-8). A number id that is not an integer
    /// is also awaited in `pending` (its echo answers it too): its key is kept here.
    unreadable: HashMap<Side, Vec<Option<String>>>,
    /// Sides with a line begun and not complete yet ([`Monitor::line_started`]).
    in_progress: HashSet<Side>,
    /// Answers with `id: null` (their lines) that came while the other side's line was still
    /// in progress, by that side: an agent answers an oversized line as soon as it sees it
    /// (R-FRAME-5), before the line ends. That line, once complete, must be one whose id could
    /// not be read (R-ID-8).
    early_null: HashMap<Side, Vec<usize>>,
    sessions: HashSet<String>,
    loading: HashSet<String>,
    turns: HashMap<String, Turn>,
    /// Sessions with a finished turn: the line of its answer.
    turn_ended: HashMap<String, usize>,
    tool_calls: HashSet<(String, String)>,
    last_ts: Option<f64>,
}

impl Monitor {
    /// A monitor at the start of a connection.
    pub fn new(options: MonitorOptions) -> Self {
        Monitor {
            options,
            ..Monitor::default()
        }
    }

    /// `from` has sent part of a line that is not complete yet. A live monitor (conform's)
    /// says so before it shows the other side's lines, since an answer to that line may come
    /// before its end (an oversized line is refused as soon as it is seen, R-FRAME-5).
    pub fn line_started(&mut self, from: Side) {
        self.in_progress.insert(from);
    }

    /// Looks at the next message, `from` one side, at `line` (and `ts` seconds, if known).
    /// `text` is the line as sent. Returns what it breaks.
    pub fn observe(
        &mut self,
        from: Side,
        line: usize,
        ts: Option<f64>,
        text: &[u8],
    ) -> Vec<Finding> {
        let mut check = Check {
            from,
            line,
            findings: Vec::new(),
        };
        if ts.is_some() {
            self.last_ts = ts;
        }
        self.in_progress.remove(&from);
        match envelope::scan_bytes(text) {
            Err(rejection) if self.echoed_number_id(from, rejection.reason, text) => {
                // JSON-RPC 2.0 allows fractional ids (it only discourages them): echoing the
                // one the other side sent is not a fault of the echo (R-ID-2 is ours).
            }
            Err(rejection) => {
                check.error(
                    envelope_rule(rejection.reason),
                    format!("not JSON-RPC: {rejection}"),
                );
                self.rejected(from, line, ts, text);
            }
            Ok(Message::Response(response)) => {
                if let Outcome::Malformed(why) = response.outcome {
                    let rule = match why {
                        MalformedResponse::ResultAndError => "R-ENV-5",
                        _ => "R-RPC-4",
                    };
                    check.error(rule, why.to_string());
                }
                let value: Value = serde_json::from_slice(text).unwrap_or(Value::Null);
                self.response(&mut check, ts, &value);
            }
            Ok(message) => {
                let value: Value = serde_json::from_slice(text).unwrap_or(Value::Null);
                let is_request = matches!(message, Message::Request(_));
                self.call(&mut check, ts, &value, is_request);
            }
        }
        // Null answers given before this line ended that it did not take: its id was readable.
        for answer in self.early_null.remove(&from).unwrap_or_default() {
            check.findings.push(Finding {
                line: answer,
                rule: "R-ID-8",
                blame: from.other(),
                severity: Severity::Error,
                detail: format!(
                    "answer with id null, but the {} line it answered (line {line}) had a \
                     readable id: the answer must echo it",
                    from.name()
                ),
            });
        }
        check.findings
    }

    /// Takes one answer with `id: null` given before `from`'s line ended, if any: that
    /// line is answered already.
    fn answered_early(&mut self, from: Side) -> bool {
        match self.early_null.get_mut(&from) {
            Some(early) if !early.is_empty() => {
                early.remove(0);
                true
            }
            _ => false,
        }
    }

    /// The exchange ended: every request still waiting is a finding (R-RPC-1).
    pub fn finish(&mut self) -> Vec<Finding> {
        let mut waiting: Vec<_> = self.pending.drain().collect();
        for (key, queue) in self.reused.drain() {
            waiting.extend(queue.into_iter().map(|pending| (key.clone(), pending)));
        }
        waiting.sort_by_key(|(_, p)| p.line);
        let mut findings = Vec::new();
        for ((sender, id), pending) in waiting {
            findings.push(Finding {
                line: pending.line,
                rule: "R-RPC-1",
                blame: sender.other(),
                severity: Severity::Error,
                detail: format!("{} (id {id}) was never answered", pending.method),
            });
            if let (Some(slow), Some(start), Some(end)) =
                (self.options.slow, pending.ts, self.last_ts)
                && end - start > slow
            {
                findings.push(Finding {
                    line: pending.line,
                    rule: "R-LINT-3",
                    blame: sender.other(),
                    severity: Severity::Warning,
                    detail: format!(
                        "{} (id {id}) still unanswered {:.1} s later, when the trace ends",
                        pending.method,
                        end - start
                    ),
                });
            }
        }
        findings
    }

    /// A rejected line whose id could be read gets an error reply echoing that id (R-ID-4
    /// gives null only when it could not): that reply is awaited like any answer.
    fn rejected(&mut self, from: Side, line: usize, ts: Option<f64>, text: &[u8]) {
        let Ok(value) = serde_json::from_slice::<Value>(text) else {
            // Not JSON: no id to read.
            if !self.answered_early(from) {
                self.unreadable.entry(from).or_default().push(None);
            }
            return;
        };
        let id = &value["id"];
        let is_response = value.get("result").is_some() || value.get("error").is_some();
        if is_response {
            return;
        }
        let integer = id.is_i64() || id.is_u64();
        if !(id.is_string() || integer) {
            let key = id.is_number().then(|| id_key(id));
            if self.answered_early(from) {
                return;
            }
            self.unreadable.entry(from).or_default().push(key);
        }
        if id.is_string() || id.is_number() {
            self.pending.insert(
                (from, id_key(id)),
                Pending {
                    method: String::from("(a rejected line)"),
                    line,
                    ts,
                    session: None,
                },
            );
        }
    }

    /// Whether `text` is a response echoing a number id (rejected as not an integer) that a
    /// pending line of the other side carried; if so, that line is answered.
    fn echoed_number_id(&mut self, from: Side, reason: Reason, text: &[u8]) -> bool {
        if reason != Reason::InvalidId {
            return false;
        }
        let Ok(value) = serde_json::from_slice::<Value>(text) else {
            return false;
        };
        let is_response = value.get("result").is_some() || value.get("error").is_some();
        if !is_response || !value["id"].is_number() {
            return false;
        }
        let key = id_key(&value["id"]);
        if let Some(waiting) = self.unreadable.get_mut(&from.other()) {
            waiting.retain(|k| k.as_deref() != Some(key.as_str()));
        }
        self.pending.remove(&(from.other(), key)).is_some()
    }

    /// A request (`is_request`) or notification.
    fn call(&mut self, check: &mut Check, ts: Option<f64>, message: &Value, is_request: bool) {
        let from = check.from;
        let method = message["method"].as_str().unwrap_or_default();
        let params = message.get("params").filter(|p| !p.is_null());
        let session = params
            .and_then(|p| p["sessionId"].as_str())
            .map(str::to_owned);

        match from {
            Side::Client if method == "initialize" => self.initialize_sent = true,
            Side::Client if !self.initialize_sent => {
                check.error("R-INIT-1", format!("{method} before initialize"));
            }
            Side::Agent if !self.initialized => {
                check.error(
                    "R-INIT-1",
                    format!("{method} before initialize was answered"),
                );
            }
            _ => {}
        }
        self.decode(check, method, params, is_request);
        self.advertised(check, method);

        match (from, method) {
            (Side::Client, "initialize") => {
                self.client_capabilities = params
                    .and_then(|p| p.get("clientCapabilities"))
                    .cloned()
                    .unwrap_or(Value::Null);
            }
            (Side::Client, "session/prompt") => {
                if let Some(session) = &session {
                    if !self.sessions.contains(session) {
                        check.error(
                            "R-SESSION-3",
                            format!("session/prompt for unknown session {session}"),
                        );
                    }
                    if let Some(turn) = self.turns.get_mut(session) {
                        turn.open += 1;
                        check.error(
                            "R-TURN-2",
                            format!("session/prompt while session {session} has a turn running"),
                        );
                    } else {
                        self.turns.insert(
                            session.clone(),
                            Turn {
                                cancelled_at: None,
                                opened_by: id_key(&message["id"]),
                                open: 1,
                            },
                        );
                    }
                }
            }
            (Side::Client, "session/cancel") => {
                if let Some(turn) = session.as_ref().and_then(|s| self.turns.get_mut(s)) {
                    turn.cancelled_at.get_or_insert(check.line);
                }
            }
            (Side::Client, "session/load") => {
                if let Some(session) = &session {
                    self.sessions.insert(session.clone());
                    self.loading.insert(session.clone());
                }
            }
            (Side::Agent, "session/update") => self.update(check, session.as_deref(), params),
            (Side::Agent, "session/request_permission") => {
                let tool_call = params
                    .and_then(|p| p.pointer("/toolCall/toolCallId"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let known = session
                    .as_ref()
                    .is_some_and(|s| self.tool_calls.contains(&(s.clone(), tool_call.to_owned())));
                if !known {
                    check.error(
                        "R-PERM-2",
                        format!("session/request_permission for tool call '{tool_call}', which no tool_call update announced"),
                    );
                }
            }
            _ => {}
        }

        if is_request {
            let key = (from, id_key(&message["id"]));
            let pending = Pending {
                method: method.to_owned(),
                line: check.line,
                ts,
                session,
            };
            // R-ID-7: the answer could not say which of the two it answers.
            if let Some(first) = self.pending.get(&key) {
                check.error(
                    "R-ID-7",
                    format!(
                        "id {} reused while {} (line {}) is still unanswered",
                        key.1, first.method, first.line
                    ),
                );
                self.reused.entry(key).or_default().push(pending);
            } else {
                self.pending.insert(key, pending);
            }
        }
    }

    /// R-LINT-1 and R-LINT-2: the method exists for that side, and its params decode.
    fn decode(&self, check: &mut Check, name: &str, params: Option<&Value>, is_request: bool) {
        let Some(method) = Method::from_name(name) else {
            if !name.starts_with('_') {
                check.error(
                    "R-LINT-2",
                    format!("unknown method {name} (extension methods start with `_`)"),
                );
            }
            return;
        };
        let side = direction(check.from);
        if !method.sent_by(side) {
            check.error(
                "R-LINT-1",
                format!(
                    "{name} is sent by the {}, not the {}",
                    check.from.other().name(),
                    check.from.name()
                ),
            );
            return;
        }
        // R-CANCEL-1: session/cancel is accepted as a request too.
        if method.is_notification() && is_request && method != Method::SessionCancel {
            check.error(
                "R-LINT-1",
                format!("{name} is a notification but was sent with an id"),
            );
        } else if !method.is_notification() && !is_request {
            check.error(
                "R-LINT-1",
                format!("{name} is a request but was sent without an id"),
            );
        }
        let text = params.map(Value::to_string);
        let text = text.as_deref();
        let decoded = match (check.from, method.is_notification()) {
            (Side::Client, false) => ClientRequest::decode(name, text).err(),
            (Side::Client, true) => ClientNotification::decode(name, text).err(),
            (Side::Agent, false) => AgentRequest::decode(name, text).err(),
            (Side::Agent, true) => AgentNotification::decode(name, text).err(),
        };
        if let Some(error) = decoded {
            check.error(
                "R-LINT-1",
                format!("{name} params do not decode as ACP v1: {error}"),
            );
        }
    }

    /// R-RPC-7 and R-FS-1: a method the other side did not advertise.
    fn advertised(&self, check: &mut Check, method: &str) {
        let agent = &self.agent_capabilities;
        let client = &self.client_capabilities;
        let missing = match (check.from, method) {
            (Side::Client, "session/load") => {
                (agent["loadSession"] != true).then_some("agentCapabilities.loadSession")
            }
            (
                Side::Client,
                "session/list" | "session/resume" | "session/close" | "session/delete",
            ) => {
                let key = &method["session/".len()..];
                let marker = &agent["sessionCapabilities"][key];
                (marker.is_null()).then_some(match key {
                    "list" => "agentCapabilities.sessionCapabilities.list",
                    "resume" => "agentCapabilities.sessionCapabilities.resume",
                    "close" => "agentCapabilities.sessionCapabilities.close",
                    _ => "agentCapabilities.sessionCapabilities.delete",
                })
            }
            (Side::Agent, "fs/read_text_file") => (client["fs"]["readTextFile"] != true)
                .then_some("clientCapabilities.fs.readTextFile"),
            (Side::Agent, "fs/write_text_file") => (client["fs"]["writeTextFile"] != true)
                .then_some("clientCapabilities.fs.writeTextFile"),
            (Side::Agent, m) if m.starts_with("terminal/") => {
                (client["terminal"] != true).then_some("clientCapabilities.terminal")
            }
            _ => None,
        };
        if let Some(capability) = missing {
            let rule = if check.from == Side::Agent {
                "R-FS-1"
            } else {
                "R-RPC-7"
            };
            check.error(rule, format!("{method} without {capability} advertised"));
        }
    }

    /// R-TURN-3 and R-TURN-4: updates name a known session, and turn content stays in its turn.
    fn update(&mut self, check: &mut Check, session: Option<&str>, params: Option<&Value>) {
        let Some(session) = session else { return };
        let kind = params
            .and_then(|p| p.pointer("/update/sessionUpdate"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !self.sessions.contains(session) {
            check.error("R-TURN-4", format!("{kind} for unknown session {session}"));
            return;
        }
        if kind == "tool_call"
            && let Some(id) = params
                .and_then(|p| p.pointer("/update/toolCallId"))
                .and_then(Value::as_str)
        {
            self.tool_calls.insert((session.to_owned(), id.to_owned()));
        }
        let in_turn = self.turns.contains_key(session) || self.loading.contains(session);
        if !in_turn
            && TURN_UPDATES.contains(&kind)
            && let Some(ended) = self.turn_ended.get(session)
        {
            check.error(
                "R-TURN-3",
                format!("{kind} for session {session} after its turn was answered (line {ended})"),
            );
        }
    }

    fn response(&mut self, check: &mut Check, ts: Option<f64>, message: &Value) {
        let id = &message["id"];
        let error = message.get("error");
        if id.is_null() {
            // The reply to a line whose id could not be read (R-ID-4); a line of the other
            // side with such an id must be waiting for it (R-ID-8).
            let waiting = self.unreadable.entry(check.from.other()).or_default();
            match (!waiting.is_empty()).then(|| waiting.remove(0)) {
                Some(key) => {
                    if let Some(key) = key {
                        self.pending.remove(&(check.from.other(), key));
                    }
                }
                // The line it answers may not have ended yet (R-FRAME-5): judged when it does.
                None if self.in_progress.contains(&check.from.other()) => {
                    self.early_null
                        .entry(check.from.other())
                        .or_default()
                        .push(check.line);
                }
                None => check.error(
                    "R-ID-8",
                    format!(
                        "answer with id null, but every line of the {} had a readable id: \
                         the answer must echo it",
                        check.from.other().name()
                    ),
                ),
            }
            return;
        }
        let key = (check.from.other(), id_key(id));
        let Some(pending) = self.pending.remove(&key) else {
            match self.answered.get(&key) {
                Some(first) => check.error(
                    "R-RPC-1",
                    format!("id {} answered again (first at line {first})", key.1),
                ),
                None => check.error(
                    "R-ID-6",
                    format!(
                        "response to id {}, which no pending request of the {} carries",
                        key.1,
                        check.from.other().name()
                    ),
                ),
            }
            return;
        };
        if let Some(queue) = self.reused.get_mut(&key)
            && !queue.is_empty()
        {
            self.pending.insert(key.clone(), queue.remove(0));
        }
        self.answered.insert(key.clone(), check.line);
        if let (Some(slow), Some(start), Some(end)) = (self.options.slow, pending.ts, ts)
            && end - start > slow
        {
            check.findings.push(Finding {
                line: check.line,
                rule: "R-LINT-3",
                blame: check.from,
                severity: Severity::Warning,
                detail: format!(
                    "{} (id {}, line {}) answered after {:.1} s",
                    pending.method,
                    key.1,
                    pending.line,
                    end - start
                ),
            });
        }
        let result = message.get("result").filter(|_| error.is_none());
        if let (Some(result), Some(method)) = (result, Method::from_name(&pending.method)) {
            let text = result.to_string();
            let decoded = match check.from {
                Side::Agent => AgentResponse::decode(method.name(), &text).err(),
                Side::Client => ClientResponse::decode(method.name(), &text).err(),
            };
            if let Some(error) = decoded {
                check.error(
                    "R-LINT-1",
                    format!(
                        "{} result does not decode as ACP v1: {error}",
                        pending.method
                    ),
                );
            }
        }
        self.settled(check, &key.1, &pending, result, error.is_some());
    }

    /// What an answered request changes.
    fn settled(
        &mut self,
        check: &mut Check,
        id: &str,
        pending: &Pending,
        result: Option<&Value>,
        failed: bool,
    ) {
        match (check.from, pending.method.as_str()) {
            (Side::Agent, "initialize") if !failed => {
                self.initialized = true;
                self.agent_capabilities = result
                    .and_then(|r| r.get("agentCapabilities"))
                    .cloned()
                    .unwrap_or(Value::Null);
            }
            (Side::Agent, "session/new" | "session/resume") if !failed => {
                let created = result.and_then(|r| r["sessionId"].as_str());
                if let Some(session) = created.or(pending.session.as_deref()) {
                    self.sessions.insert(session.to_owned());
                }
            }
            (Side::Agent, "session/load") => {
                if let Some(session) = &pending.session {
                    self.loading.remove(session);
                }
            }
            (Side::Agent, "session/prompt") => {
                let Some(session) = &pending.session else {
                    return;
                };
                let Some(turn) = self.turns.get_mut(session) else {
                    return;
                };
                turn.open = turn.open.saturating_sub(1);
                let opener = turn.opened_by == id;
                let cancelled_at = turn.cancelled_at;
                if turn.open == 0 {
                    self.turns.remove(session);
                    self.turn_ended.insert(session.clone(), check.line);
                }
                let (true, Some(cancel)) = (opener, cancelled_at) else {
                    return;
                };
                let stop = result.and_then(|r| r["stopReason"].as_str());
                if failed {
                    check.error("R-CANCEL-3", format!("turn of session {session} answered with an error after session/cancel (line {cancel}), not stopReason cancelled"));
                } else if stop != Some("cancelled") {
                    check.error("R-CANCEL-3", format!("turn of session {session} ended {} after session/cancel (line {cancel})", stop.unwrap_or("without a stopReason")));
                }
            }
            _ => {}
        }
    }
}

/// The findings of one message under construction.
struct Check {
    from: Side,
    line: usize,
    findings: Vec<Finding>,
}

impl Check {
    fn error(&mut self, rule: &'static str, detail: String) {
        self.findings.push(Finding {
            line: self.line,
            rule,
            blame: self.from,
            severity: Severity::Error,
            detail,
        });
    }
}

/// Ids compare as their JSON text: `1` and `"1"` are different ids.
fn id_key(id: &Value) -> String {
    id.to_string()
}

fn direction(side: Side) -> Direction {
    match side {
        Side::Client => Direction::ClientToAgent,
        Side::Agent => Direction::AgentToClient,
    }
}

/// The docs/protocol.md rule a rejected line breaks.
fn envelope_rule(reason: Reason) -> &'static str {
    match reason {
        Reason::Frame(_) => "R-FRAME-6",
        Reason::Json(_) => "R-ENV-1",
        Reason::NotAnObject => "R-ENV-2",
        Reason::InvalidId => "R-ID-2",
        Reason::DuplicateMember(_) => "R-ENV-4",
        Reason::Version => "R-ENV-3",
        Reason::MissingMethod => "R-ENV-6",
        _ => "R-ENV-1",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#;
    const NULL_ANSWER: &[u8] =
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"line too long"}}"#;

    fn rules(findings: &[Finding]) -> Vec<(usize, &'static str)> {
        findings.iter().map(|f| (f.line, f.rule)).collect()
    }

    /// R-ID-8, R-FRAME-5: an agent refuses an oversized line as soon as it sees it, so its
    /// null answer comes before the line ends; once the line ends unreadable, that is no
    /// finding.
    #[test]
    fn a_null_answer_before_an_unreadable_line_ends_answers_it() {
        let mut monitor = Monitor::default();
        assert!(monitor.observe(Side::Client, 1, None, INIT).is_empty());
        monitor.line_started(Side::Client);
        assert!(
            monitor
                .observe(Side::Agent, 2, None, NULL_ANSWER)
                .is_empty()
        );
        let line = vec![b'x'; 4096];
        assert_eq!(
            rules(&monitor.observe(Side::Client, 3, None, &line)),
            [(3, "R-ENV-1")]
        );
        assert!(monitor.finish().into_iter().all(|f| f.rule != "R-ID-8"));
    }

    /// R-ID-8: a null answer given before a line ended that turns out readable is reported,
    /// at the answer's line and on the answering side.
    #[test]
    fn a_null_answer_before_a_readable_line_ends_is_reported_at_the_answer() {
        let mut monitor = Monitor::default();
        monitor.line_started(Side::Client);
        assert!(
            monitor
                .observe(Side::Agent, 1, None, NULL_ANSWER)
                .is_empty()
        );
        let findings = monitor.observe(Side::Client, 2, None, INIT);
        assert_eq!(rules(&findings), [(1, "R-ID-8")]);
        assert_eq!(findings[0].blame, Side::Agent);
        assert_eq!(
            findings[0].detail,
            "answer with id null, but the client line it answered (line 2) had a readable id: \
             the answer must echo it"
        );
    }

    /// R-ID-8: without a line in progress, a null answer to readable lines is reported at once.
    #[test]
    fn a_null_answer_with_no_line_in_progress_is_reported_at_once() {
        let mut monitor = Monitor::default();
        assert!(monitor.observe(Side::Client, 1, None, INIT).is_empty());
        assert_eq!(
            rules(&monitor.observe(Side::Agent, 2, None, NULL_ANSWER)),
            [(2, "R-ID-8")]
        );
    }
}
