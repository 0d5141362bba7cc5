//! One demo turn: the script run command by command, as a sequence of [`Step`]s.
//!
//! The turn keeps a small queue of ready steps (the updates a command produces at once) and at
//! most one thing it waits for: a reply, a deadline, or the rest of a `/flood`. Each call to
//! [`DemoTurn::step`] either hands out a ready step or moves the script on, so every call does
//! bounded work and a `/flood` of a million chunks is produced one chunk per call, only as fast
//! as the driver can send them.

use std::collections::{HashMap, VecDeque};

use acp_core::Instant;
use acp_core::conn::agent::tool_key;
use acp_core::machine::permission::{PermissionDecision, PermissionMemory, Remembered};
use acp_core::machine::turn::StopReason;
use acp_core::schema::{
    ContentBlock, ContentChunk, Cost, Diff, IdleState, IdleStopReason, NoticeSeverity, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, PlanItems, PlanRemoved, PlanUpdate,
    PlanUpdateContent, SessionMessage, SessionUpdate, StateUpdate, SubagentUpdate, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolContent, ToolKind,
};

use super::script::{Command, unknown_command_message};
use crate::agent::backend::{ClientFs, FsVia, Reply, Step, TurnStart};
use crate::agent::modes::Posture;
use crate::agent::paths::{Roots, resolve_inside};
use crate::agent::reports;
use crate::agent::tools::{self, Gate, rejection_text};

/// What the turns of one connection share: the `*_always` memory, the counters of the ids
/// handed out, and each session's last `/plan2` plan.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Remembered `*_always` answers, per session per tool (kind and title).
    pub memory: PermissionMemory<Vec<Remembered>>,
    /// The number of the last tool call id handed out (`tool-1`, `tool-2`, …).
    pub last_tool: u64,
    /// The number of the last id handed out for plans (`plan-N`), subagent sessions
    /// (`subagent-N`) and messages (`message-N`): one counter, so no two ids look alike.
    pub last_id: u64,
    /// Each session's last `/plan2` plan id, for `/unplan`.
    pub plans: HashMap<String, String>,
}

pub(crate) use crate::agent::tools::{MEMORY_LIMIT, last_tool_number};

impl Default for Shared {
    fn default() -> Self {
        Self {
            memory: PermissionMemory::new(Vec::new(), MEMORY_LIMIT),
            last_tool: 0,
            last_id: 0,
            plans: HashMap::new(),
        }
    }
}

/// A tool call that has been announced and not yet finished.
#[derive(Clone, Debug, PartialEq)]
struct OpenTool {
    id: String,
    kind: ToolKind,
    title: String,
    /// The content the call shows (a `/write`'s diff), kept on its final update.
    content: Vec<ToolCallContent>,
    /// What runs once the tool is allowed.
    action: Action,
}

impl OpenTool {
    /// The `toolCall` of its permission request; also what its `*_always` answer is
    /// remembered under (the connection's [`tool_key`]: kind and title).
    fn permission_request(&self) -> ToolCallUpdate {
        let mut request = ToolCallUpdate::new(self.id.clone());
        request.kind = Some(self.kind.clone());
        request.title = Some(self.title.clone());
        request.status = Some(ToolCallStatus::Pending);
        if !self.content.is_empty() {
            request.content = Some(self.content.clone());
        }
        request
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Action {
    /// `/tool`: nothing real; completes with a text.
    Pretend,
    /// `/read`.
    Read { path: String },
    /// `/write`.
    Write { path: String, text: String },
    /// `/mcp`: a tool of the session's MCP server.
    Mcp {
        server: String,
        tool: String,
        arguments: serde_json::Value,
    },
}

/// What the turn is waiting for before it can go on.
#[derive(Clone, Debug, PartialEq)]
enum Wait {
    /// Nothing: run the next command.
    Nothing,
    /// The permission answer for this tool.
    Permission(OpenTool),
    /// The answer to `/ask`.
    Answer,
    /// The file result of this tool.
    File(OpenTool),
    /// The MCP server's answer for this tool.
    Mcp(OpenTool),
    /// `/sleep` until this instant.
    Until(Instant),
    /// `/flood`: chunks still to send, and the text of each.
    Flood { remaining: u64, chunk: String },
}

/// One turn of the demo backend.
#[derive(Debug)]
pub(crate) struct DemoTurn {
    session: String,
    cwd: String,
    additional_directories: Vec<String>,
    posture: Posture,
    client_fs: ClientFs,
    /// The tools of the session's MCP servers (what `/mcp` may call).
    mcp_tools: Vec<crate::mcp::McpTool>,
    script: VecDeque<Command>,
    /// Turns the session finished before this one (what `/history` reports).
    finished_turns: usize,
    /// Whether the client gave the session a system prompt (`/history` says so).
    system_prompt: bool,
    ready: VecDeque<Step>,
    wait: Wait,
    /// Bytes of text the session has exchanged, this turn's updates so far included (what
    /// the closing `usage_update` reports).
    exchanged: u64,
    /// The closing `usage_update` and the end are queued: nothing else runs.
    concluded: bool,
    cancelled: bool,
    finished: bool,
}

impl DemoTurn {
    /// A turn running `script` in the session described by `start`. The first turn of a
    /// session opens with a `session_info_update` titled from its prompt (R-TURN-5).
    pub(crate) fn new(start: &TurnStart<'_>, script: Vec<Command>) -> Self {
        let finished_turns = start.history.turn_count();
        let mut turn = Self {
            session: start.session.to_owned(),
            cwd: start.cwd.to_owned(),
            additional_directories: start.additional_directories.to_vec(),
            posture: start.posture,
            client_fs: start.client_fs,
            mcp_tools: start.mcp_tools.to_vec(),
            script: script.into(),
            finished_turns,
            system_prompt: start.system_prompt.is_some(),
            ready: VecDeque::new(),
            wait: Wait::Nothing,
            exchanged: reports::exchanged_bytes(start.history),
            concluded: false,
            cancelled: false,
            finished: false,
        };
        if finished_turns == 0
            && let Some(title) = reports::title_from_prompt(start.prompt)
        {
            turn.update(reports::title_update(title));
        }
        turn
    }

    /// Whether the turn has handed out its `End` or `Fail`.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }

    /// The client cancelled: the turn ends at its next step, after the updates it has ready
    /// and a `failed` update for a tool call it leaves open.
    pub(crate) fn cancel(&mut self) {
        self.cancelled = true;
    }

    /// The next step. Bounded: each pass of the loop hands out a step or consumes a command
    /// or a wait.
    pub(crate) fn step(&mut self, shared: &mut Shared, now: Instant) -> Step {
        if self.finished {
            return Step::Waiting;
        }
        loop {
            if let Some(step) = self.ready.pop_front() {
                if matches!(step, Step::End(_) | Step::Fail(_)) {
                    self.finished = true;
                }
                return step;
            }
            if self.cancelled {
                match core::mem::replace(&mut self.wait, Wait::Nothing) {
                    Wait::Permission(tool) | Wait::File(tool) | Wait::Mcp(tool) => {
                        self.fail_tool(&tool, "Error: cancelled by user");
                    }
                    _ => self.conclude(Step::End(StopReason::Cancelled)),
                }
                continue;
            }
            match &mut self.wait {
                Wait::Nothing => match self.script.pop_front() {
                    Some(command) => self.run(command, shared, now),
                    None => self.conclude(Step::End(StopReason::EndTurn)),
                },
                Wait::Until(until) if now < *until => return Step::SleepUntil(*until),
                Wait::Until(_) => self.wait = Wait::Nothing,
                Wait::Flood { remaining: 0, .. } => self.wait = Wait::Nothing,
                Wait::Flood { remaining, chunk } => {
                    *remaining -= 1;
                    self.exchanged += chunk.len() as u64;
                    return Step::Update(message(chunk.clone()));
                }
                Wait::Permission(_) | Wait::Answer | Wait::File(_) | Wait::Mcp(_) => {
                    return Step::Waiting;
                }
            }
        }
    }

    /// The outcome of the request the turn waits for. A reply that does not match what the
    /// turn waits for (late, after a cancel) is dropped.
    pub(crate) fn resume(&mut self, shared: &mut Shared, reply: Reply) {
        match (core::mem::replace(&mut self.wait, Wait::Nothing), reply) {
            (Wait::Permission(tool), Reply::Permission(decision)) => {
                let key = tool_key(&tool.permission_request());
                shared.memory.record(&self.session, &key, decision);
                match decision {
                    PermissionDecision::Allowed(_) => self.run_tool(tool),
                    PermissionDecision::Rejected(reason) => {
                        self.fail_tool(&tool, &rejection_text(reason))
                    }
                    PermissionDecision::Cancelled => {
                        self.fail_tool(&tool, "Error: cancelled by user")
                    }
                }
            }
            (Wait::Answer, Reply::Answer(text)) => self.update(message(text)),
            (Wait::File(tool), Reply::FileRead(result)) => match result {
                Ok(text) => {
                    let Action::Read { path } = &tool.action else {
                        return self.fail_tool(&tool, "Error: unexpected file result");
                    };
                    let note = format!("Read {} bytes from {path}", text.len());
                    self.finish_tool(&tool, note);
                }
                Err(why) => self.fail_tool(&tool, &format!("Error: {why}")),
            },
            (Wait::File(tool), Reply::FileWritten(result)) => match result {
                Ok(()) => {
                    let Action::Write { path, text } = &tool.action else {
                        return self.fail_tool(&tool, "Error: unexpected file result");
                    };
                    let note = format!("Wrote {} bytes to {path}", text.len());
                    self.finish_tool(&tool, note);
                }
                Err(why) => self.fail_tool(&tool, &format!("Error: {why}")),
            },
            (Wait::Mcp(tool), Reply::McpDone(done)) => match done {
                Ok(result) => {
                    let status = if result.is_error {
                        ToolCallStatus::Failed
                    } else {
                        ToolCallStatus::Completed
                    };
                    let mut update = ToolCallUpdate::new(tool.id.clone());
                    update.status = Some(status);
                    update.content = Some(result.tool_content());
                    self.update(SessionUpdate::ToolCallUpdate(update));
                }
                Err(why) => self.fail_tool(&tool, &format!("Error: {why}")),
            },
            (wait, _) => self.wait = wait,
        }
    }

    /// Runs one command: queues its updates and sets what it waits for.
    fn run(&mut self, command: Command, shared: &mut Shared, now: Instant) {
        match command {
            Command::Text(text) | Command::Echo(text) => self.update(message(text)),
            Command::Think(text) => self.update(SessionUpdate::AgentThoughtChunk(
                ContentChunk::new(ContentBlock::text(text)),
            )),
            Command::Plan(entries) => {
                let mut plan = Plan::default();
                plan.entries = entries
                    .into_iter()
                    .map(|e| PlanEntry::new(e, PlanEntryPriority::Medium, PlanEntryStatus::Pending))
                    .collect();
                self.update(SessionUpdate::Plan(plan));
            }
            Command::Tool { kind, title } => {
                let tool = self.open_tool(shared, kind, title, Vec::new(), None, Action::Pretend);
                self.gate_and_run(shared, tool);
            }
            Command::Read(path) => self.read(shared, path),
            Command::Write { path, text } => self.write(shared, path, text),
            Command::Ask(question) => {
                self.ready.push_back(Step::AskUser(question));
                self.wait = Wait::Answer;
            }
            Command::Sleep(ms) => self.wait = Wait::Until(now.plus_ms(ms)),
            Command::Flood { count, bytes } => {
                self.wait = Wait::Flood {
                    remaining: count,
                    chunk: flood_chunk(bytes),
                }
            }
            Command::Stop(reason) => self.conclude(Step::End(reason)),
            Command::Error(text) => self.conclude(Step::Fail(text)),
            Command::History => self.update(message(history_text(
                self.finished_turns,
                self.system_prompt,
            ))),
            Command::Notice { severity, title } => self.update(notice(severity, title)),
            Command::Usage { used, size, cost } => {
                let mut update = reports::usage_update(used, size);
                if let (SessionUpdate::UsageUpdate(usage), Some((amount, currency))) =
                    (&mut update, cost)
                {
                    let mut cost = Cost::default();
                    cost.amount = amount;
                    cost.currency = currency;
                    usage.cost = Some(cost);
                }
                self.update(update);
            }
            Command::Title(title) => self.update(reports::title_update(title)),
            Command::Plan2(entries) => {
                shared.last_id += 1;
                let plan_id = format!("plan-{}", shared.last_id);
                let entries = entries
                    .into_iter()
                    .map(|e| PlanEntry::new(e, PlanEntryPriority::Medium, PlanEntryStatus::Pending))
                    .collect();
                shared.plans.insert(self.session.clone(), plan_id.clone());
                self.update(SessionUpdate::PlanUpdate(PlanUpdate::new(
                    PlanUpdateContent::Items(PlanItems::new(plan_id, entries)),
                )));
            }
            Command::Unplan => match shared.plans.remove(&self.session) {
                Some(plan_id) => self.update(SessionUpdate::PlanRemoved(PlanRemoved::new(plan_id))),
                None => self.update(message(
                    "/unplan: this session has no /plan2 plan to remove".to_owned(),
                )),
            },
            Command::Subagent { name, text } => self.subagent(shared, name, text),
            Command::Mcp {
                server,
                tool,
                arguments,
            } => self.mcp(shared, server, tool, arguments),
            Command::BadArguments(text) => self.update(message(text)),
            Command::Unknown(name) => self.update(message(unknown_command_message(&name))),
        }
    }

    /// `/subagent NAME TEXT`: a subagent session titled NAME, idle after its work, then its
    /// message TEXT relayed into this session.
    fn subagent(&mut self, shared: &mut Shared, name: String, text: String) {
        shared.last_id += 1;
        let subagent = format!("subagent-{}", shared.last_id);
        let mut announce = SubagentUpdate::new(subagent.clone());
        announce.title = Some(Some(name));
        let mut idle = IdleState::default();
        idle.stop_reason = Some(IdleStopReason::EndTurn);
        announce.state = Some(Some(StateUpdate::Idle(idle)));
        self.update(SessionUpdate::SubagentUpdate(announce));
        shared.last_id += 1;
        let mut relayed = SessionMessage::new(format!("message-{}", shared.last_id));
        relayed.sender_session_id = Some(Some(subagent));
        relayed.recipient_session_id = Some(Some(self.session.clone()));
        relayed.content = Some(Some(vec![ContentBlock::text(text)]));
        self.update(SessionUpdate::SessionMessage(relayed));
    }

    /// `/mcp SERVER TOOL JSON`: a tool call of kind `read` for a tool annotated read-only
    /// (it never asks), else `other` asking by the mode like `/tool` (R-MCP-6).
    fn mcp(
        &mut self,
        shared: &mut Shared,
        server: String,
        tool: String,
        arguments: serde_json::Value,
    ) {
        let Some(found) = crate::mcp::tool::find(&self.mcp_tools, &server, &tool) else {
            let known: Vec<String> = self
                .mcp_tools
                .iter()
                .map(|t| format!("{} {}", t.server, t.tool.name))
                .collect();
            let known = if known.is_empty() {
                "this session has no MCP tools".to_owned()
            } else {
                format!("its tools: {}", known.join(", "))
            };
            return self.update(message(format!(
                "/mcp: no tool '{tool}' on an MCP server '{server}' of this session; {known}"
            )));
        };
        let read_only = found.tool.is_read_only();
        let kind = if read_only {
            ToolKind::Read
        } else {
            ToolKind::Other
        };
        let title = found.title();
        let action = Action::Mcp {
            server,
            tool,
            arguments,
        };
        let tool = self.open_tool(shared, kind, title, Vec::new(), None, action);
        if read_only {
            if let Gate::Refuse(why) = self.mode_gate(&tool.kind) {
                return self.fail_tool(&tool, &why);
            }
            return self.run_tool(tool);
        }
        self.gate_and_run(shared, tool);
    }

    /// `/read PATH`: a tool call of kind `read` that never asks (R-DEMO-3).
    fn read(&mut self, shared: &mut Shared, path: String) {
        let title = format!("Read {path}");
        let resolved = resolve_inside(self.roots(), &path);
        let location = resolved.as_ref().ok().cloned();
        let action = Action::Read {
            path: location.clone().unwrap_or_default(),
        };
        let tool = self.open_tool(shared, ToolKind::Read, title, Vec::new(), location, action);
        if let Err(why) = resolved {
            return self.fail_tool(&tool, &format!("Error: {why}"));
        }
        if let Gate::Refuse(why) = self.mode_gate(&tool.kind) {
            return self.fail_tool(&tool, &why);
        }
        self.run_tool(tool);
    }

    /// `/write PATH TEXT`: a tool call of kind `edit` with the diff, after permission.
    fn write(&mut self, shared: &mut Shared, path: String, text: String) {
        let title = format!("Write {path}");
        let resolved = resolve_inside(self.roots(), &path);
        let Ok(absolute) = resolved else {
            let tool = self.open_tool(
                shared,
                ToolKind::Edit,
                title,
                Vec::new(),
                None,
                Action::Pretend,
            );
            let why = resolved.err().unwrap_or_default();
            return self.fail_tool(&tool, &format!("Error: {why}"));
        };
        let mut diff = Diff::default();
        diff.path = absolute.clone();
        diff.new_text = text.clone();
        let content = vec![ToolCallContent::Diff(diff)];
        let action = Action::Write {
            path: absolute.clone(),
            text,
        };
        let tool = self.open_tool(
            shared,
            ToolKind::Edit,
            title,
            content,
            Some(absolute),
            action,
        );
        self.gate_and_run(shared, tool);
    }

    /// Announces a tool call (`tool_call`, status pending).
    fn open_tool(
        &mut self,
        shared: &mut Shared,
        kind: ToolKind,
        title: String,
        content: Vec<ToolCallContent>,
        location: Option<String>,
        action: Action,
    ) -> OpenTool {
        shared.last_tool += 1;
        let id = format!("tool-{}", shared.last_tool);
        let mut call = ToolCall::new(id.clone(), title.clone());
        call.kind = Some(kind.clone());
        call.status = Some(ToolCallStatus::Pending);
        call.content = content.clone();
        if let Some(path) = location {
            let mut loc = ToolCallLocation::default();
            loc.path = path;
            call.locations = vec![loc];
        }
        self.update(SessionUpdate::ToolCall(call));
        OpenTool {
            id,
            kind,
            title,
            content,
            action,
        }
    }

    /// Asks, runs or refuses a tool by mode and memory.
    fn gate_and_run(&mut self, shared: &Shared, tool: OpenTool) {
        let request = tool.permission_request();
        let key = tool_key(&request);
        match tools::gate(
            self.posture,
            &tool.kind,
            &shared.memory,
            &self.session,
            &key,
        ) {
            Gate::Run => self.run_tool(tool),
            Gate::Refuse(why) => self.fail_tool(&tool, &why),
            Gate::Ask => {
                self.ready.push_back(Step::RequestPermission(request));
                self.wait = Wait::Permission(tool);
            }
        }
    }

    /// What the session's mode says about a tool of `kind` (R-MODE-2).
    fn mode_gate(&self, kind: &ToolKind) -> Gate {
        tools::mode_gate(self.posture, kind)
    }

    /// The tool may run: `in_progress`, then its work.
    fn run_tool(&mut self, tool: OpenTool) {
        let mut update = ToolCallUpdate::new(tool.id.clone());
        update.status = Some(ToolCallStatus::InProgress);
        self.update(SessionUpdate::ToolCallUpdate(update));
        match &tool.action {
            Action::Pretend => {
                let note = format!("Done: {}", tool.title);
                self.finish_tool(&tool, note);
            }
            Action::Read { path } => {
                let via = if self.client_fs.read {
                    FsVia::Client
                } else {
                    FsVia::Local
                };
                self.ready.push_back(Step::ReadFile {
                    path: path.clone(),
                    via,
                });
                self.wait = Wait::File(tool);
            }
            Action::Write { path, text } => {
                let via = if self.client_fs.write {
                    FsVia::Client
                } else {
                    FsVia::Local
                };
                self.ready.push_back(Step::WriteFile {
                    path: path.clone(),
                    content: text.clone(),
                    via,
                });
                self.wait = Wait::File(tool);
            }
            Action::Mcp {
                server,
                tool: name,
                arguments,
            } => {
                self.ready.push_back(Step::McpCall {
                    server: server.clone(),
                    tool: name.clone(),
                    arguments: arguments.clone(),
                });
                self.wait = Wait::Mcp(tool);
            }
        }
    }

    /// `completed` with the tool's content and a text.
    fn finish_tool(&mut self, tool: &OpenTool, note: String) {
        self.close_tool(tool, ToolCallStatus::Completed, note);
    }

    /// `failed` with the tool's content and the reason.
    fn fail_tool(&mut self, tool: &OpenTool, why: &str) {
        self.close_tool(tool, ToolCallStatus::Failed, why.to_owned());
    }

    fn close_tool(&mut self, tool: &OpenTool, status: ToolCallStatus, note: String) {
        let mut update = ToolCallUpdate::new(tool.id.clone());
        update.status = Some(status);
        let mut content = tool.content.clone();
        content.push(ToolCallContent::Content(ToolContent::new(
            ContentBlock::text(note),
        )));
        update.content = Some(content);
        self.update(SessionUpdate::ToolCallUpdate(update));
    }

    /// The cwd and the additional directories.
    fn roots(&self) -> Roots<'_> {
        Roots {
            cwd: &self.cwd,
            additional: &self.additional_directories,
        }
    }

    fn update(&mut self, update: SessionUpdate) {
        self.exchanged += reports::update_text_len(&update);
        self.ready.push_back(Step::Update(update));
    }

    /// Ends the turn with `last` (an `End` or a `Fail`), after a `usage_update` with the
    /// bytes exchanged so far (R-TURN-3: nothing of a turn follows its answer). The
    /// rest of the script is dropped.
    fn conclude(&mut self, last: Step) {
        if self.concluded {
            return;
        }
        self.concluded = true;
        self.script.clear();
        self.update(reports::usage_update(self.exchanged, reports::CONTEXT_SIZE));
        self.ready.push_back(last);
    }
}

/// A `notice` update. The schema type has no public constructor outside acp-core, so it
/// is read from its JSON form, which cannot fail for these two strings.
pub(crate) fn notice(severity: NoticeSeverity, title: String) -> SessionUpdate {
    let value = serde_json::json!({
        "sessionUpdate": "notice",
        "severity": severity.as_str(),
        "title": title,
    });
    serde_json::from_value(value).unwrap_or_else(|_| message(format!("notice: {}", severity)))
}

/// An `agent_message_chunk` with this text.
fn message(text: String) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(text)))
}

/// The answer to `/history`: the finished turns, and whether a system prompt is set.
pub fn history_text(finished_turns: usize, system_prompt: bool) -> String {
    let turns = match finished_turns {
        1 => "this session has 1 completed turn".to_owned(),
        n => format!("this session has {n} completed turns"),
    };
    if system_prompt {
        format!("{turns}; a system prompt is set")
    } else {
        turns
    }
}

/// `bytes` bytes of printable text: the alphabet, repeated.
fn flood_chunk(bytes: usize) -> String {
    b"abcdefghijklmnopqrstuvwxyz"
        .iter()
        .cycle()
        .take(bytes)
        .map(|&b| char::from(b))
        .collect()
}

impl crate::agent::turns::SessionTurn for DemoTurn {
    type Shared = Shared;

    fn step(&mut self, shared: &mut Shared, now: Instant) -> Step {
        DemoTurn::step(self, shared, now)
    }

    fn resume(&mut self, shared: &mut Shared, reply: Reply) {
        DemoTurn::resume(self, shared, reply);
    }

    fn cancel(&mut self) {
        DemoTurn::cancel(self);
    }

    fn is_finished(&self) -> bool {
        DemoTurn::is_finished(self)
    }

    fn mcp_tools_changed(&mut self, tools: &[crate::mcp::McpTool]) {
        self.mcp_tools = tools.to_vec();
    }
}
