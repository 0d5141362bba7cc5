//! One turn of the llm backend as a sequence of [`Step`]s: ask the model, stream its answer
//! as chunks, run the tools it called (each an ACP tool call, gated by the session's mode and
//! `*_always` memory), hand their results back, ask again, until it answers without tools,
//! the round limit is reached, or the client cancels.
//!
//! Like the demo turn it keeps a queue of ready steps and at most one thing it waits for, so
//! every [`LlmTurn::step`] does bounded work and the whole loop runs in unit tests with a
//! scripted model.

use std::collections::VecDeque;

use acp_core::Instant;
use acp_core::machine::permission::PermissionDecision;
use acp_core::machine::turn::StopReason;
use acp_core::schema::{
    CompactionStatus, CompactionSummaryChunk, CompactionUpdate, ContentBlock, ContentChunk, Diff,
    Plan, PlanEntry, PlanItems, PlanUpdate, PlanUpdateContent, SessionUpdate, TerminalContent,
    TerminalExitStatus, TerminalOutputResponse, ToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolContent, ToolKind,
};
use serde_json::{Map, Value};

use super::compact::{self, TurnTokens};
use super::context::{self, TOOL_NAME_META};
use super::instructions::Instruction;
use super::tools::{TODO_DONE, ToolRequest, specs};
use crate::agent::backend::{
    ClientFs, Explore, ExploreKind, FsVia, Reply, ShellOutcome, Step, TerminalCall, TurnStart,
};
use crate::agent::modes::Posture;
use crate::agent::reports;
use crate::agent::tools::{self, AlwaysMemory, CANCELLED_TEXT, Gate, rejection_text};
use crate::mcp::McpTool;
use crate::model::chat::{
    ChatMessage, ChatRequest, FinishReason, ModelToolCall, StreamEvent, TokenUsage, ToolSpec,
};
use crate::store::TurnItem;

/// Most bytes of one tool result, for the model and on screen; the rest is cut with a note
/// (R-LLM-CONTEXT-3). A small context window lowers it (see [`tool_budget`]).
pub(crate) const TOOL_RESULT_MAX: usize = 64 * 1024;

/// Lines `read_file` returns when the model gives no `limit`.
pub(crate) const DEFAULT_READ_LINES: usize = 2000;

/// A shell command's timeout when the model gives none, and the most it may ask for.
pub(crate) const DEFAULT_SHELL_TIMEOUT_MS: u64 = 120_000;
/// See [`DEFAULT_SHELL_TIMEOUT_MS`].
pub(crate) const MAX_SHELL_TIMEOUT_MS: u64 = 600_000;

/// The output a client's terminal keeps for a command (`outputByteLimit`), as a local
/// command's is capped.
pub(crate) const TERMINAL_OUTPUT_LIMIT: u64 = 64 * 1024;

/// The `planId` of the plan `todo_write` keeps, the same for the whole session so each
/// `plan_update` replaces the last (R-LLM-8).
pub(crate) const PLAN_ID: &str = "todos";

/// What the turns of one connection share.
#[derive(Debug)]
pub(crate) struct Shared {
    /// `*_always` answers, per session per tool name (`write_file`, `run_shell_command`, …).
    pub memory: AlwaysMemory,
    /// The number of the last tool call id handed out (`tool-1`, `tool-2`, …).
    pub last_tool: u64,
    /// Per session, the tokens in the model's context after its last turn (the server's
    /// count, or the estimate): where the next turn's size estimate starts.
    pub context: std::collections::HashMap<String, u64>,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            memory: tools::always_memory(),
            last_tool: 0,
            context: Default::default(),
        }
    }
}

/// What the turn does when nothing is waiting and no tool call is left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// Ask the model (again).
    CallModel,
    /// End with this reason.
    End(StopReason),
}

/// A tool call that has been announced and not yet finished.
#[derive(Clone, Debug, PartialEq)]
struct OpenTool {
    /// The ACP id (`tool-N`).
    id: String,
    /// The model's id, echoed in the `tool` message.
    model_id: String,
    request: ToolRequest,
    kind: ToolKind,
    title: String,
    /// The absolute path the call works on, if any.
    path: Option<String>,
    /// The content it shows (an edit's diff), kept on its final update.
    content: Vec<ToolCallContent>,
    /// For `write_file` and `replace`: the file's new content, once known.
    new_content: Option<String>,
    /// For `write_file` and `replace`: the file has been read and the diff shown, so the
    /// next file reply is the write's.
    diff_shown: bool,
    /// For `run_shell_command` in the client's terminal: how far it has got.
    terminal: Option<Terminal>,
}

/// A command in the client's terminal: create, wait for its exit (killed at its deadline),
/// read its output, release.
#[derive(Clone, Debug, PartialEq)]
enum Terminal {
    /// `terminal/create` is sent.
    Creating,
    /// `terminal/wait_for_exit` is sent; its deadline is set on the turn's clock (the `now`
    /// of its steps) when the wait goes out.
    Running {
        id: String,
        deadline: Option<Instant>,
    },
    /// `terminal/output` is sent, after the exit or a kill at the deadline.
    Reading {
        id: String,
        exit: Option<TerminalExitStatus>,
        timed_out: bool,
    },
}

impl Terminal {
    /// The terminal's id, once the client gave one.
    fn id(&self) -> Option<&str> {
        match self {
            Self::Creating => None,
            Self::Running { id, .. } | Self::Reading { id, .. } => Some(id),
        }
    }
}

/// What the turn waits for.
#[derive(Clone, Debug, PartialEq)]
enum Wait {
    Nothing,
    /// The model's stream.
    Model,
    /// The user's permission for this tool.
    Permission(OpenTool),
    /// The outcome of this tool's work (a file, the shell, a look at the tree, an answer).
    Tool(OpenTool),
    /// The model's summary of the conversation (R-LLM-CONTEXT-1).
    Compaction(Compacting),
}

/// A compaction under way.
#[derive(Clone, Debug, PartialEq)]
struct Compacting {
    /// Its `compactionId`.
    id: String,
    /// The summary streamed so far.
    summary: String,
    /// Asked for by `/compact`: a failure fails the turn.
    forced: bool,
}

/// One turn of the llm backend.
#[derive(Debug)]
pub(crate) struct LlmTurn {
    session: String,
    cwd: String,
    additional_directories: Vec<String>,
    posture: Posture,
    client_fs: ClientFs,
    client_terminal: bool,
    /// The client renders `plan_update` (`clientCapabilities.plan`).
    client_plan: bool,
    /// The tools of the session's MCP servers, offered to the model with ours.
    mcp_tools: Vec<McpTool>,
    model: String,
    messages: Vec<ChatMessage>,
    ready: VecDeque<Step>,
    wait: Wait,
    next: Next,
    /// The tool calls of the model's last answer still to run.
    calls: VecDeque<ModelToolCall>,
    /// The text of the answer being streamed.
    answer: String,
    /// Answers with tool calls run so far, and the most allowed.
    rounds: u32,
    max_rounds: u32,
    /// The model's context window, in tokens (R-LLM-USAGE-2).
    window: u64,
    /// The most bytes of one tool result (R-LLM-CONTEXT-3).
    tool_budget: usize,
    /// The server's token count for the first `.1` messages, from its last answer.
    known: Option<(u64, usize)>,
    /// The token counts of this turn's requests.
    tokens: TurnTokens,
    /// The prompt's message, which follows a compaction's summary.
    prompt_message: Option<ChatMessage>,
    /// The turn is `/compact`: compact, then end.
    force_compact: bool,
    /// A compaction ran since the last answer: no second one before the next request.
    compacted: bool,
    /// Compactions in the session so far (for their ids).
    compactions: usize,
    /// The tokens in context the closing `usage_update` reported.
    used: u64,
    /// The closing `usage_update` and the end are queued.
    concluded: bool,
    cancelled: bool,
    finished: bool,
}

impl LlmTurn {
    /// A turn in the session described by `start`, asking `model` (the session's model when
    /// empty), told the project's `instructions`, with the conversation (system prompt and
    /// history, this prompt last; image blocks as images when `images`) in a `window` of tokens.
    pub(crate) fn new(
        start: &TurnStart<'_>,
        model: String,
        max_rounds: u32,
        instructions: &[Instruction],
        images: bool,
        window: u64,
        context_before: Option<u64>,
    ) -> Self {
        let prompt_message = context::prompt_message(start.prompt, images);
        let force_compact = context::is_compact_command(&context::prompt_text(start.prompt));
        let messages = context::messages(
            context::system_prompt(start.cwd, instructions, start.system_prompt),
            start.history,
            images,
        );
        // The last turn's count covers everything but this prompt.
        let known = context_before.map(|tokens| {
            let before = messages.len() - usize::from(prompt_message.is_some());
            (tokens, before)
        });
        let compactions = start
            .history
            .turns()
            .iter()
            .flat_map(|turn| &turn.items)
            .filter(|item| matches!(item, TurnItem::Compaction(_)))
            .count();
        let mut turn = Self {
            session: start.session.to_owned(),
            cwd: start.cwd.to_owned(),
            additional_directories: start.additional_directories.to_vec(),
            posture: start.posture,
            client_fs: start.client_fs,
            client_terminal: start.client_terminal,
            client_plan: start.client_plan,
            mcp_tools: start.mcp_tools.to_vec(),
            model,
            messages,
            ready: VecDeque::new(),
            wait: Wait::Nothing,
            next: if force_compact {
                Next::End(StopReason::EndTurn)
            } else {
                Next::CallModel
            },
            calls: VecDeque::new(),
            answer: String::new(),
            rounds: 0,
            max_rounds,
            window,
            tool_budget: tool_budget(window),
            known,
            tokens: TurnTokens::default(),
            prompt_message,
            force_compact,
            compacted: false,
            compactions,
            used: 0,
            concluded: false,
            cancelled: false,
            finished: false,
        };
        // The session's first turn titles it (R-TURN-5).
        if start.history.turn_count() == 0
            && let Some(title) = reports::title_from_prompt(start.prompt)
        {
            turn.update(reports::title_update(title));
        }
        turn
    }

    /// Ends the turn with `last` (an `End` or a failure) after a `usage_update` with the
    /// tokens in context and the window (R-TURN-5, R-LLM-USAGE-2; R-TURN-3: nothing of a
    /// turn follows its answer). An `End` is preceded by the turn's token usage, when the
    /// server reported any (R-LLM-USAGE-3).
    fn conclude(&mut self, last: Step) {
        if self.concluded {
            return;
        }
        self.concluded = true;
        self.used = self.context_tokens(&self.tool_specs());
        self.update(reports::usage_update(self.used, self.window));
        if let (Step::End(_), Some(usage)) = (&last, self.tokens.usage()) {
            self.ready.push_back(Step::TurnUsage(usage));
        }
        self.ready.push_back(last);
    }

    /// The tokens of the conversation and its `tools` as the next request would send it:
    /// the server's count for what it has seen (tools included), an estimate for the rest
    /// (R-LLM-CONTEXT-1).
    fn context_tokens(&self, tools: &[ToolSpec]) -> u64 {
        let (counted, from) = match self.known {
            Some((tokens, count)) if count <= self.messages.len() => (tokens, count),
            _ => (compact::tokens_of(compact::tools_bytes(tools)), 0),
        };
        let rest: usize = self.messages[from..]
            .iter()
            .map(compact::message_bytes)
            .sum();
        counted.saturating_add(compact::tokens_of(rest))
    }

    /// Starts a compaction when one is due: forced by `/compact`, or the next request would
    /// be over the trigger (R-LLM-CONTEXT-1). Queues its start and the summary request.
    fn maybe_compact(&mut self) -> bool {
        let forced = core::mem::take(&mut self.force_compact);
        let due = forced
            || (self.next == Next::CallModel
                && !self.compacted
                && compact::over_trigger(self.context_tokens(&self.tool_specs()), self.window));
        if !due {
            return false;
        }
        self.compacted = true;
        // Something besides the system prompt and this turn's prompt.
        let kept = 1 + usize::from(self.prompt_message.is_some() && !forced);
        if self.messages.len() <= kept {
            if forced {
                self.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                    ContentBlock::text("Nothing to compact yet."),
                )));
            }
            return false;
        }
        self.compactions += 1;
        let id = format!("compaction-{}", self.compactions);
        self.update(SessionUpdate::CompactionUpdate(CompactionUpdate::new(
            id.clone(),
            CompactionStatus::InProgress,
        )));
        self.ready
            .push_back(Step::CallModel(compact::summary_request(
                &self.model,
                &self.messages,
            )));
        self.wait = Wait::Compaction(Compacting {
            id,
            summary: String::new(),
            forced,
        });
        true
    }

    /// The model's summary is complete: the context becomes the summary and this turn's
    /// prompt; the client is told (R-LLM-CONTEXT-2).
    fn compaction_done(&mut self, compacting: Compacting) {
        let summary = compacting.summary.trim();
        if summary.is_empty() {
            return self.compaction_failed(compacting, "the model's summary was empty".into());
        }
        let mut update = CompactionUpdate::new(compacting.id, CompactionStatus::Completed);
        update.summary = Some(Some(vec![ContentBlock::text(summary)]));
        let system = self.messages.first().cloned();
        self.messages = system.into_iter().collect();
        self.messages.push(context::summary_message(summary));
        self.messages.extend(self.prompt_message.clone());
        self.known = None;
        self.update(SessionUpdate::CompactionUpdate(update));
        let used = self.context_tokens(&self.tool_specs());
        self.update(reports::usage_update(used, self.window));
    }

    /// The summary could not be had: the context stays as it was, except after `/compact`,
    /// which fails with the model's error.
    fn compaction_failed(&mut self, compacting: Compacting, why: String) {
        let mut update = CompactionUpdate::new(compacting.id, CompactionStatus::Failed);
        update.error = Some(Some(why));
        self.update(SessionUpdate::CompactionUpdate(update));
    }

    /// Records a request's token counts.
    fn count(&mut self, usage: Option<TokenUsage>) {
        if let Some(usage) = usage {
            self.tokens.add(&usage);
        }
    }

    /// Whether the turn has handed out its end.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }

    /// The client cancelled: the turn ends `cancelled` at its next step, after a `failed`
    /// update for a tool call it leaves open.
    pub(crate) fn cancel(&mut self) {
        self.cancelled = true;
    }

    /// The next step at `now`. Bounded: each pass hands out a step or moves the turn on by
    /// one call.
    pub(crate) fn step(&mut self, shared: &mut Shared, now: Instant) -> Step {
        if self.finished {
            return Step::Waiting;
        }
        loop {
            if let Some(step) = self.ready.pop_front() {
                if matches!(step, Step::End(_) | Step::Fail(_) | Step::FailWith { .. }) {
                    self.finished = true;
                    shared.context.insert(self.session.clone(), self.used);
                }
                return step;
            }
            if self.cancelled {
                match core::mem::replace(&mut self.wait, Wait::Nothing) {
                    Wait::Permission(tool) | Wait::Tool(tool) => {
                        // A command in the client's terminal is stopped and let go before
                        // the turn ends (a terminal still being created is the app's).
                        if let Some(id) = tool.terminal.as_ref().and_then(Terminal::id) {
                            self.terminal(TerminalCall::Kill {
                                terminal_id: id.to_owned(),
                            });
                            self.terminal(TerminalCall::Release {
                                terminal_id: id.to_owned(),
                            });
                        }
                        self.fail_tool(&tool, CANCELLED_TEXT.to_owned());
                        continue;
                    }
                    Wait::Compaction(compacting) => {
                        self.update(SessionUpdate::CompactionUpdate(CompactionUpdate::new(
                            compacting.id,
                            CompactionStatus::Cancelled,
                        )));
                        self.conclude(Step::End(StopReason::Cancelled));
                        continue;
                    }
                    Wait::Nothing | Wait::Model => {
                        self.conclude(Step::End(StopReason::Cancelled));
                        continue;
                    }
                }
            }
            if let Wait::Tool(tool) = &mut self.wait
                && let Some(Terminal::Running { id, deadline }) = &mut tool.terminal
            {
                let timeout = match &tool.request {
                    ToolRequest::RunShellCommand { timeout_ms, .. } => shell_timeout(*timeout_ms),
                    _ => DEFAULT_SHELL_TIMEOUT_MS,
                };
                let at = *deadline.get_or_insert(now.plus_ms(timeout));
                if now < at {
                    return Step::SleepUntil(at);
                }
                // Past its time: kill it, then read what it wrote.
                let id = id.clone();
                tool.terminal = Some(Terminal::Reading {
                    id: id.clone(),
                    exit: None,
                    timed_out: true,
                });
                self.terminal(TerminalCall::Kill {
                    terminal_id: id.clone(),
                });
                self.terminal(TerminalCall::Output { terminal_id: id });
                continue;
            }
            if self.wait != Wait::Nothing {
                return Step::Waiting;
            }
            if let Some(call) = self.calls.pop_front() {
                self.start_tool(shared, call);
                continue;
            }
            if self.maybe_compact() {
                continue;
            }
            match self.next {
                Next::CallModel => {
                    self.wait = Wait::Model;
                    return Step::CallModel(ChatRequest {
                        model: self.model.clone(),
                        messages: self.messages.clone(),
                        tools: self.tool_specs(),
                    });
                }
                Next::End(reason) => {
                    self.conclude(Step::End(reason));
                    continue;
                }
            }
        }
    }

    /// The outcome of what the turn waits for. A reply it does not wait for (late, after a
    /// cancel) is dropped.
    pub(crate) fn resume(&mut self, shared: &mut Shared, reply: Reply) {
        match (core::mem::replace(&mut self.wait, Wait::Nothing), reply) {
            (Wait::Model, Reply::ModelEvent(event)) => {
                self.wait = Wait::Model;
                match event {
                    StreamEvent::Text(text) if !text.is_empty() => {
                        self.answer.push_str(&text);
                        self.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                            ContentBlock::text(text),
                        )));
                    }
                    StreamEvent::Reasoning(text) if !text.is_empty() => {
                        self.update(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                            ContentBlock::text(text),
                        )))
                    }
                    _ => {}
                }
            }
            (Wait::Compaction(mut compacting), Reply::ModelEvent(event)) => {
                if let StreamEvent::Text(text) = event
                    && !text.is_empty()
                {
                    compacting.summary.push_str(&text);
                    self.update(SessionUpdate::CompactionSummaryChunk(
                        CompactionSummaryChunk::new(
                            compacting.id.clone(),
                            ContentBlock::text(text),
                        ),
                    ));
                }
                self.wait = Wait::Compaction(compacting);
            }
            (Wait::Compaction(compacting), Reply::ModelDone(Ok(finished))) => {
                self.count(finished.usage);
                self.compaction_done(compacting);
            }
            (Wait::Compaction(compacting), Reply::ModelDone(Err(error))) => {
                let forced = compacting.forced;
                self.compaction_failed(compacting, error.to_string());
                if forced {
                    self.model_failed(error);
                }
            }
            (Wait::Model, Reply::ModelDone(Ok(finished))) => {
                self.count(finished.usage);
                self.compacted = false;
                let mut calls = finished.tool_calls;
                for (index, call) in calls.iter_mut().enumerate() {
                    if call.id.is_empty() {
                        call.id = format!("call_{}_{index}", self.rounds);
                    }
                }
                let content = std::mem::take(&mut self.answer);
                if !content.is_empty() || !calls.is_empty() {
                    self.messages.push(ChatMessage::Assistant {
                        content: (!content.is_empty()).then_some(content),
                        tool_calls: calls.clone(),
                    });
                }
                // The server's count covers the conversation up to this answer.
                if let Some(usage) = finished.usage {
                    self.known = Some((usage.context_tokens(), self.messages.len()));
                }
                if calls.is_empty() {
                    self.next = Next::End(stop_reason(finished.reason));
                } else if self.rounds >= self.max_rounds {
                    self.next = Next::End(StopReason::MaxTurnRequests);
                } else {
                    self.rounds += 1;
                    self.calls = calls.into();
                    self.next = Next::CallModel;
                }
            }
            (Wait::Model, Reply::ModelDone(Err(error))) => self.model_failed(error),
            (Wait::Permission(tool), Reply::Permission(decision)) => {
                shared
                    .memory
                    .record(&self.session, tool.request.name(), decision);
                match decision {
                    PermissionDecision::Allowed(_) => self.act(tool),
                    PermissionDecision::Rejected(reason) => {
                        self.fail_tool(&tool, rejection_text(reason))
                    }
                    PermissionDecision::Cancelled => {
                        self.fail_tool(&tool, CANCELLED_TEXT.to_owned())
                    }
                }
            }
            (Wait::Tool(tool), reply) => self.tool_reply(shared, tool, reply),
            (wait, _) => self.wait = wait,
        }
    }

    /// The model's request failed: so does the turn.
    fn model_failed(&mut self, error: crate::model::chat::ModelError) {
        // R-LLM-2: credentials are `-32000` with the error's own text; everything else
        // is an application failure, `-32603 Internal error: <text>` (R-RPC-10).
        let message = error.to_string();
        self.conclude(if error.code() == -32603 {
            Step::Fail(message)
        } else {
            Step::FailWith {
                code: error.code(),
                message,
            }
        });
    }

    /// Announces a tool call, then refuses, runs or asks about it.
    fn start_tool(&mut self, shared: &mut Shared, call: ModelToolCall) {
        shared.last_tool += 1;
        let id = format!("tool-{}", shared.last_tool);
        let raw_input = raw_input(&call.arguments);
        let parsed = match self.mcp_tools.iter().find(|t| t.model_name() == call.name) {
            Some(mcp) => ToolRequest::mcp(mcp, &call.arguments),
            None => ToolRequest::parse(&call.name, &call.arguments),
        };
        let request = match parsed {
            // A plan is shown as one, not as a tool call (R-LLM-8).
            Ok(ToolRequest::TodoWrite { entries }) => return self.show_plan(call.id, entries),
            Ok(request) => request,
            Err(why) => {
                let mut announced = ToolCall::new(id.clone(), call.name.clone());
                announced.status = Some(ToolCallStatus::Pending);
                announced.raw_input = Some(raw_input);
                announced.meta = Some(tool_meta(&call.name));
                self.update(SessionUpdate::ToolCall(announced));
                let mut update = ToolCallUpdate::new(id);
                update.status = Some(ToolCallStatus::Failed);
                update.content = Some(vec![text_content(why.clone())]);
                self.update(SessionUpdate::ToolCallUpdate(update));
                self.tool_message(call.id, why);
                return;
            }
        };
        let resolved = self.resolve_paths(&request);
        let mut tool = OpenTool {
            id,
            model_id: call.id,
            kind: request.kind(),
            title: request.title(),
            path: resolved.as_ref().ok().cloned().flatten(),
            content: Vec::new(),
            new_content: None,
            diff_shown: false,
            terminal: None,
            request,
        };
        if let ToolRequest::WriteFile { content, .. } = &tool.request {
            tool.new_content = Some(content.clone());
            if let Some(path) = &tool.path {
                tool.content = vec![diff(path, None, content)];
            }
        }
        let mut announced = ToolCall::new(tool.id.clone(), tool.title.clone());
        announced.kind = Some(tool.kind.clone());
        announced.status = Some(ToolCallStatus::Pending);
        announced.content = tool.content.clone();
        if let Some(path) = &tool.path {
            let mut location = ToolCallLocation::default();
            location.path = path.clone();
            announced.locations = vec![location];
        }
        announced.raw_input = Some(raw_input);
        announced.meta = Some(tool_meta(tool.request.name()));
        self.update(SessionUpdate::ToolCall(announced));
        if let Err(why) = resolved {
            return self.fail_tool(&tool, format!("Error: {why}"));
        }
        if matches!(tool.request, ToolRequest::AskUser { .. }) {
            // A question is no action: no mode stops it.
            return self.act(tool);
        }
        if let Gate::Refuse(why) = tools::mode_gate(self.posture, &tool.kind) {
            return self.fail_tool(&tool, why);
        }
        match tool.request {
            // An edit shows its diff before asking: read the file first.
            ToolRequest::WriteFile { .. } | ToolRequest::Replace { .. } => self.read_for_edit(tool),
            ToolRequest::RunShellCommand { .. } => self.gate_and_act(shared, tool),
            // An MCP tool not annotated read-only may change things: ask (R-MCP-6).
            ToolRequest::Mcp {
                read_only: false, ..
            } => self.gate_and_act(shared, tool),
            // Looking needs no permission (only the mode decides).
            _ => self.act(tool),
        }
    }

    /// `todo_write`: the whole plan as a `plan_update` (items form, one `planId` for the
    /// session) to a client that renders those, else as the `plan` update every client
    /// renders (R-LLM-8, R-TURN-6). No mode stops it: it changes nothing outside the turn.
    fn show_plan(&mut self, model_id: String, entries: Vec<PlanEntry>) {
        let update = if self.client_plan {
            SessionUpdate::PlanUpdate(PlanUpdate::new(PlanUpdateContent::Items(PlanItems::new(
                PLAN_ID, entries,
            ))))
        } else {
            let mut plan = Plan::default();
            plan.entries = entries;
            SessionUpdate::Plan(plan)
        };
        self.update(update);
        self.tool_message(model_id, TODO_DONE.to_owned());
    }

    /// Our tools, then the session's MCP tools as `mcp__<server>__<tool>` with their
    /// input schemas (R-MCP-6).
    fn tool_specs(&self) -> Vec<ToolSpec> {
        let mut tools = specs();
        tools.extend(self.mcp_tools.iter().map(|mcp| {
            ToolSpec {
                name: mcp.model_name().into(),
                description: mcp
                    .tool
                    .description
                    .clone()
                    .unwrap_or_else(|| mcp.title())
                    .into(),
                parameters: mcp.tool.input_schema.clone(),
            }
        }));
        tools
    }

    /// The absolute path a tool works on (`None` for tools without one), or why it is
    /// refused.
    fn resolve_paths(&self, request: &ToolRequest) -> Result<Option<String>, String> {
        let path = match request {
            ToolRequest::ReadFile { path, .. }
            | ToolRequest::ListDirectory { path }
            | ToolRequest::WriteFile { path, .. }
            | ToolRequest::Replace { path, .. } => Some(path.as_str()),
            ToolRequest::Glob { path, .. } | ToolRequest::SearchFileContent { path, .. } => {
                Some(path.as_deref().unwrap_or("."))
            }
            ToolRequest::RunShellCommand { .. }
            | ToolRequest::AskUser { .. }
            | ToolRequest::TodoWrite { .. }
            | ToolRequest::Mcp { .. } => None,
        };
        path.map(|path| self.resolve(path)).transpose()
    }

    /// A path the model gave, against the session's cwd; outside it and the additional
    /// directories it is refused with the demo backend's message.
    fn resolve(&self, path: &str) -> Result<String, String> {
        let roots = crate::agent::paths::Roots {
            cwd: &self.cwd,
            additional: &self.additional_directories,
        };
        crate::agent::paths::resolve_inside(roots, path)
    }

    /// `write_file` and `replace`: read the file, then show the diff and ask.
    fn read_for_edit(&mut self, tool: OpenTool) {
        let path = tool.path.clone().unwrap_or_default();
        self.ready.push_back(Step::ReadFile {
            path,
            via: self.read_via(),
        });
        self.wait = Wait::Tool(tool);
    }

    /// Runs, refuses or asks about a tool that changes things, by mode and memory.
    fn gate_and_act(&mut self, shared: &Shared, tool: OpenTool) {
        let name = tool.request.name();
        match tools::gate(
            self.posture,
            &tool.kind,
            &shared.memory,
            &self.session,
            name,
        ) {
            Gate::Run => self.act(tool),
            Gate::Refuse(why) => self.fail_tool(&tool, why),
            Gate::Ask => {
                let mut request = ToolCallUpdate::new(tool.id.clone());
                request.kind = Some(tool.kind.clone());
                request.title = Some(tool.title.clone());
                request.status = Some(ToolCallStatus::Pending);
                if !tool.content.is_empty() {
                    request.content = Some(tool.content.clone());
                }
                self.ready.push_back(Step::RequestPermission(request));
                self.wait = Wait::Permission(tool);
            }
        }
    }

    /// The tool may run: `in_progress`, then the step that does its work.
    fn act(&mut self, mut tool: OpenTool) {
        let mut update = ToolCallUpdate::new(tool.id.clone());
        update.status = Some(ToolCallStatus::InProgress);
        self.update(SessionUpdate::ToolCallUpdate(update));
        let path = tool.path.clone().unwrap_or_default();
        let step = match &tool.request {
            ToolRequest::ReadFile { .. } => Step::ReadFile {
                path,
                via: self.read_via(),
            },
            ToolRequest::WriteFile { .. } | ToolRequest::Replace { .. } => Step::WriteFile {
                path,
                content: tool.new_content.clone().unwrap_or_default(),
                via: if self.client_fs.write {
                    FsVia::Client
                } else {
                    FsVia::Local
                },
            },
            ToolRequest::ListDirectory { .. } => self.explore(ExploreKind::List { path }),
            ToolRequest::Glob { pattern, .. } => self.explore(ExploreKind::Glob {
                pattern: pattern.clone(),
                base: path,
            }),
            ToolRequest::SearchFileContent {
                pattern, include, ..
            } => self.explore(ExploreKind::Search {
                pattern: pattern.clone(),
                base: path,
                include: include.clone(),
            }),
            // The client's terminal when it has one (R-FS-1), so the editor shows it live.
            ToolRequest::RunShellCommand { command, .. } if self.client_terminal => {
                tool.terminal = Some(Terminal::Creating);
                Step::Terminal(TerminalCall::Create {
                    command: "/bin/sh".to_owned(),
                    args: vec!["-c".to_owned(), command.clone()],
                    cwd: self.cwd.clone(),
                    output_byte_limit: TERMINAL_OUTPUT_LIMIT,
                })
            }
            ToolRequest::RunShellCommand {
                command,
                timeout_ms,
            } => Step::RunShell {
                command: command.clone(),
                cwd: self.cwd.clone(),
                timeout_ms: shell_timeout(*timeout_ms),
            },
            ToolRequest::AskUser { question } => Step::AskUser(question.clone()),
            // Shown before it gets here (`show_plan`): nothing is left to do.
            ToolRequest::TodoWrite { .. } => {
                return self.finish_tool(&tool, TODO_DONE.to_owned());
            }
            ToolRequest::Mcp {
                server,
                tool: name,
                arguments,
                ..
            } => Step::McpCall {
                server: server.clone(),
                tool: name.clone(),
                arguments: arguments.clone(),
            },
        };
        self.ready.push_back(step);
        self.wait = Wait::Tool(tool);
    }

    fn explore(&self, what: ExploreKind) -> Step {
        Step::Explore(Explore {
            roots: std::iter::once(&self.cwd)
                .chain(&self.additional_directories)
                .cloned()
                .collect(),
            what,
        })
    }

    fn read_via(&self) -> FsVia {
        if self.client_fs.read {
            FsVia::Client
        } else {
            FsVia::Local
        }
    }

    /// The outcome of a tool's work.
    fn tool_reply(&mut self, shared: &mut Shared, mut tool: OpenTool, reply: Reply) {
        if let Some(terminal) = tool.terminal.take() {
            return self.terminal_reply(tool, terminal, reply);
        }
        let path = tool.path.clone().unwrap_or_default();
        let editing = matches!(
            tool.request,
            ToolRequest::WriteFile { .. } | ToolRequest::Replace { .. }
        );
        match reply {
            // The read before an edit: the diff, then permission.
            Reply::FileRead(old) if editing && !tool.diff_shown => {
                let new = match &tool.request {
                    ToolRequest::Replace {
                        old_string,
                        new_string,
                        ..
                    } => {
                        let old = match old {
                            Ok(old) => old,
                            Err(why) => return self.fail_tool(&tool, format!("Error: {why}")),
                        };
                        match replace_once(&old, old_string, new_string, &path) {
                            Ok(new) => {
                                tool.content = vec![diff(&path, Some(&old), &new)];
                                new
                            }
                            Err(why) => return self.fail_tool(&tool, why),
                        }
                    }
                    _ => {
                        let new = tool.new_content.clone().unwrap_or_default();
                        // A file that cannot be read is new (or the write will say why).
                        tool.content = vec![diff(&path, old.as_deref().ok(), &new)];
                        new
                    }
                };
                tool.new_content = Some(new);
                let mut update = ToolCallUpdate::new(tool.id.clone());
                update.content = Some(tool.content.clone());
                self.update(SessionUpdate::ToolCallUpdate(update));
                tool.diff_shown = true;
                self.gate_and_act(shared, tool);
            }
            Reply::FileRead(Ok(text)) => {
                let ToolRequest::ReadFile { offset, limit, .. } = tool.request else {
                    return self.fail_tool(&tool, "Error: unexpected file result".into());
                };
                match slice_lines(&text, offset, limit, &path) {
                    Ok(result) => self.finish_tool(&tool, result),
                    Err(why) => self.fail_tool(&tool, why),
                }
            }
            Reply::FileWritten(Ok(())) => {
                let bytes = tool.new_content.as_deref().map_or(0, str::len);
                let note = match tool.request {
                    ToolRequest::Replace { .. } => format!("Replaced 1 occurrence in {path}"),
                    _ => format!("Wrote {bytes} bytes to {path}"),
                };
                self.finish_tool(&tool, note);
            }
            Reply::FileRead(Err(why)) | Reply::FileWritten(Err(why)) => {
                self.fail_tool(&tool, format!("Error: {why}"))
            }
            Reply::ShellDone(Ok(outcome)) => {
                let timeout = match &tool.request {
                    ToolRequest::RunShellCommand { timeout_ms, .. } => {
                        timeout_ms.unwrap_or(DEFAULT_SHELL_TIMEOUT_MS)
                    }
                    _ => 0,
                };
                let text = shell_text(&outcome, timeout);
                if outcome.timed_out {
                    self.fail_tool(&tool, text)
                } else {
                    self.finish_tool(&tool, text)
                }
            }
            Reply::ShellDone(Err(why)) | Reply::Explored(Err(why)) => {
                self.fail_tool(&tool, format!("Error: {why}"))
            }
            Reply::Explored(Ok(text)) | Reply::Answer(text) => self.finish_tool(&tool, text),
            // The result's blocks are shown as they came; the model gets them as text, an
            // error result marked as such (R-MCP-6).
            Reply::McpDone(Ok(result)) => {
                let text = cap(result.model_text(), self.tool_budget);
                let mut update = ToolCallUpdate::new(tool.id.clone());
                update.status = Some(if result.is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                });
                update.content = Some(result.tool_content());
                self.update(SessionUpdate::ToolCallUpdate(update));
                let text = if result.is_error {
                    format!("Error: {text}")
                } else {
                    text
                };
                self.tool_message(tool.model_id.clone(), text);
            }
            Reply::McpDone(Err(why)) => self.fail_tool(&tool, format!("Error: {why}")),
            _ => self.wait = Wait::Tool(tool),
        }
    }

    /// The client's answer about the command in its terminal: on to the next request, or
    /// the tool's end. An answer the terminal does not wait for (late, or another request's)
    /// is dropped.
    fn terminal_reply(&mut self, mut tool: OpenTool, terminal: Terminal, reply: Reply) {
        match (terminal, reply) {
            (Terminal::Creating, Reply::TerminalCreated(Ok(id))) => {
                // Editors embed the live terminal in the tool call.
                let mut shown = TerminalContent::default();
                shown.terminal_id = id.clone();
                tool.content.push(ToolCallContent::Terminal(shown));
                let mut update = ToolCallUpdate::new(tool.id.clone());
                update.content = Some(tool.content.clone());
                self.update(SessionUpdate::ToolCallUpdate(update));
                self.terminal(TerminalCall::WaitForExit {
                    terminal_id: id.clone(),
                });
                tool.terminal = Some(Terminal::Running { id, deadline: None });
                self.wait = Wait::Tool(tool);
            }
            (Terminal::Creating, Reply::TerminalCreated(Err(why))) => {
                self.fail_tool(&tool, format!("Error: the client's terminal: {why}"))
            }
            (Terminal::Running { id, .. }, Reply::TerminalExited(exit)) => {
                // Even when the wait failed, the output says what happened.
                self.terminal(TerminalCall::Output {
                    terminal_id: id.clone(),
                });
                tool.terminal = Some(Terminal::Reading {
                    id,
                    exit: exit.ok(),
                    timed_out: false,
                });
                self.wait = Wait::Tool(tool);
            }
            (
                Terminal::Reading {
                    id,
                    exit,
                    timed_out,
                },
                Reply::TerminalOutput(output),
            ) => {
                self.terminal(TerminalCall::Release { terminal_id: id });
                let output = match output {
                    Ok(output) => output,
                    Err(why) => {
                        return self
                            .fail_tool(&tool, format!("Error: the client's terminal: {why}"));
                    }
                };
                let outcome = terminal_outcome(output, exit, timed_out);
                let timeout = match &tool.request {
                    ToolRequest::RunShellCommand { timeout_ms, .. } => shell_timeout(*timeout_ms),
                    _ => 0,
                };
                let text = shell_text(&outcome, timeout);
                if outcome.timed_out {
                    self.fail_tool(&tool, text)
                } else {
                    self.finish_tool(&tool, text)
                }
            }
            (terminal, _) => {
                tool.terminal = Some(terminal);
                self.wait = Wait::Tool(tool);
            }
        }
    }

    /// Queues a request to the client's terminal.
    fn terminal(&mut self, call: TerminalCall) {
        self.ready.push_back(Step::Terminal(call));
    }

    /// `completed`, with the tool's content and its result; the model gets the result.
    fn finish_tool(&mut self, tool: &OpenTool, result: String) {
        let result = cap(result, self.tool_budget);
        self.close_tool(tool, ToolCallStatus::Completed, result.clone());
        self.tool_message(tool.model_id.clone(), result);
    }

    /// `failed`, with the tool's content and why; the model gets why.
    fn fail_tool(&mut self, tool: &OpenTool, why: String) {
        self.close_tool(tool, ToolCallStatus::Failed, why.clone());
        self.tool_message(tool.model_id.clone(), why);
    }

    fn close_tool(&mut self, tool: &OpenTool, status: ToolCallStatus, text: String) {
        let mut update = ToolCallUpdate::new(tool.id.clone());
        update.status = Some(status);
        let mut content = tool.content.clone();
        content.push(text_content(text));
        update.content = Some(content);
        self.update(SessionUpdate::ToolCallUpdate(update));
    }

    fn tool_message(&mut self, tool_call_id: String, content: String) {
        self.messages.push(ChatMessage::Tool {
            tool_call_id,
            content,
        });
    }

    fn update(&mut self, update: SessionUpdate) {
        self.ready.push_back(Step::Update(update));
    }
}

/// The stop reason for why the model stopped.
fn stop_reason(reason: FinishReason) -> StopReason {
    match reason {
        FinishReason::Length => StopReason::MaxTokens,
        FinishReason::ContentFilter => StopReason::Refusal,
        FinishReason::Stop | FinishReason::ToolCalls | FinishReason::Other => StopReason::EndTurn,
    }
}

/// The arguments as `rawInput`: the JSON object, or `{"_raw": text}` when it is not one.
fn raw_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(object)) => Value::Object(object),
        _ => {
            let mut object = Map::new();
            object.insert("_raw".into(), Value::String(arguments.to_owned()));
            Value::Object(object)
        }
    }
}

fn tool_meta(name: &str) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(TOOL_NAME_META.into(), Value::String(name.to_owned()));
    meta
}

fn text_content(text: String) -> ToolCallContent {
    ToolCallContent::Content(ToolContent::new(ContentBlock::text(text)))
}

fn diff(path: &str, old: Option<&str>, new: &str) -> ToolCallContent {
    let mut diff = Diff::default();
    diff.path = path.to_owned();
    diff.old_text = old.map(str::to_owned);
    diff.new_text = new.to_owned();
    ToolCallContent::Diff(diff)
}

/// `old` with the one occurrence of `find` replaced, or why not.
fn replace_once(old: &str, find: &str, with: &str, path: &str) -> Result<String, String> {
    if find.is_empty() {
        return Err("Error: old_string must not be empty (use write_file to create a file)".into());
    }
    match old.matches(find).count() {
        0 => Err(format!("Error: old_string was not found in {path}")),
        1 => Ok(old.replacen(find, with, 1)),
        n => Err(format!(
            "Error: old_string occurs {n} times in {path}; include more context so it occurs once"
        )),
    }
}

/// The lines `read_file` returns: from `offset` (0-based), at most `limit` (default
/// [`DEFAULT_READ_LINES`]), with a header when that is not the whole file.
fn slice_lines(
    text: &str,
    offset: Option<usize>,
    limit: Option<usize>,
    path: &str,
) -> Result<String, String> {
    let total = text.lines().count();
    let start = offset.unwrap_or(0);
    if start > 0 && start >= total {
        return Err(format!(
            "Error: offset {start} is past the end of {path} ({total} lines)"
        ));
    }
    let count = limit.unwrap_or(DEFAULT_READ_LINES);
    if start == 0 && count >= total {
        return Ok(text.to_owned());
    }
    let end = (start + count).min(total);
    let lines: Vec<&str> = text.lines().skip(start).take(end - start).collect();
    Ok(format!(
        "[lines {}-{} of {total}; use offset and limit for more]\n{}",
        start + 1,
        end,
        lines.join("\n")
    ))
}

/// The timeout a shell command runs under: the model's, within bounds, else the default.
fn shell_timeout(timeout_ms: Option<u64>) -> u64 {
    timeout_ms
        .unwrap_or(DEFAULT_SHELL_TIMEOUT_MS)
        .clamp(1, MAX_SHELL_TIMEOUT_MS)
}

/// A command in the client's terminal as a [`ShellOutcome`]: the exit from
/// `terminal/wait_for_exit`, else the one `terminal/output` reports.
fn terminal_outcome(
    output: TerminalOutputResponse,
    exit: Option<TerminalExitStatus>,
    timed_out: bool,
) -> ShellOutcome {
    let exit = exit.or(output.exit_status);
    ShellOutcome {
        exit_code: exit
            .and_then(|exit| exit.exit_code)
            .and_then(|code| i32::try_from(code).ok()),
        output: output.output,
        truncated: output.truncated,
        timed_out,
    }
}

/// What the model is told about a shell command.
fn shell_text(outcome: &ShellOutcome, timeout_ms: u64) -> String {
    let mut text = match (outcome.timed_out, outcome.exit_code) {
        (true, _) => format!("Error: timed out after {timeout_ms} ms and was killed"),
        (false, Some(code)) => format!("Exit code: {code}"),
        (false, None) => "Exit: killed by a signal".to_owned(),
    };
    if outcome.output.is_empty() {
        text.push_str("\n(no output)");
    } else {
        text.push('\n');
        text.push_str(&outcome.output);
    }
    if outcome.truncated {
        text.push_str("\n[output cut at 64 KiB]");
    }
    text
}

/// The most bytes of one tool result under a `window` of tokens: [`TOOL_RESULT_MAX`], or a
/// quarter of the window (at [`compact::BYTES_PER_TOKEN`] bytes a token) when that is less
/// (R-LLM-CONTEXT-3).
pub(crate) fn tool_budget(window: u64) -> usize {
    usize::try_from(window).map_or(TOOL_RESULT_MAX, |window| window.min(TOOL_RESULT_MAX))
}

/// A tool result cut to `budget` bytes (on a character boundary) with a note saying how
/// much was cut (R-LLM-CONTEXT-3).
fn cap(mut text: String, budget: usize) -> String {
    if text.len() <= budget {
        return text;
    }
    let total = text.len();
    let mut cut = budget;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(&format!(
        "\n[{} of {total} bytes cut: a tool result is kept to {budget} bytes]",
        total - cut
    ));
    text
}

impl crate::agent::turns::SessionTurn for LlmTurn {
    type Shared = Shared;

    fn step(&mut self, shared: &mut Shared, now: Instant) -> Step {
        LlmTurn::step(self, shared, now)
    }

    fn resume(&mut self, shared: &mut Shared, reply: Reply) {
        LlmTurn::resume(self, shared, reply);
    }

    fn cancel(&mut self) {
        LlmTurn::cancel(self);
    }

    fn is_finished(&self) -> bool {
        LlmTurn::is_finished(self)
    }

    fn mcp_tools_changed(&mut self, tools: &[crate::mcp::McpTool]) {
        self.mcp_tools = tools.to_vec();
    }
}
