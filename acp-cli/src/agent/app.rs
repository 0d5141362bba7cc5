//! The application on top of the protocol: [`AgentApp`] takes the connection's events,
//! answers the requests only the application can (`session/new`, modes, models), runs the
//! backend's turns and carries out what their steps ask.
//!
//! It is sans-IO like the connection below it: bytes, EOF and the time come in as calls, bytes
//! go out through [`AgentApp::poll_transmit`], and the file system is reached only through
//! the [`Workspace`] the driver provides. So whole exchanges run in unit tests on a virtual
//! clock.
//!
//! Backpressure: a turn is stepped only while the connection's outbox is under its high-water
//! mark. When the client stops reading, the outbox fills, the turns pause where they are (a
//! `/flood` keeps only its counter), and the connection stops taking input: memory stays
//! bounded by the outbox limit.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

use acp_core::Instant;
use acp_core::conn::agent::{
    AgentConfig, AgentConnection, AgentEvent, AgentInfo, Growable, TurnEnd,
};
use acp_core::machine::handshake::Capabilities;
use acp_core::machine::permission::PermissionDecision;
use acp_core::machine::turn::StopReason;
use acp_core::machine::{RequestId, Ticket, UsageError};
use acp_core::schema::agentao::USER_UNAVAILABLE;
use acp_core::schema::{
    AskUserRequest, ClientRequest, ClientResponse, ContentBlock, CreateTerminalRequest,
    ListSessionsRequest, McpServer, NewSessionRequest, ReadTextFileRequest, SessionUpdate,
    SetModelResponse, SetSessionConfigOptionResponse, TerminalRequest, WriteTextFileRequest,
};
use acp_core::wire::ErrorCode;
use acp_core::wire::encode::TextChunkKind;

use super::backend::{Backend, ClientFs, Explore, FsVia, Reply, Step, TerminalCall, TurnStart};
use super::session_map::SessionMap;
use super::sessions::{
    CwdKind, SessionTable, check_additional_directories, check_cwd, check_system_prompt,
};
use crate::agent::paths::Roots;
use crate::mcp::McpTool;
use crate::model::chat::ChatRequest;
use crate::store::{Deleted, Loaded, Saved, SessionHistory, SessionPage, StoreError};

/// The file system as the application needs it; the driver implements it on the real one.
pub trait Workspace {
    /// What is at `path`.
    fn cwd_kind(&self, path: &str) -> CwdKind;
    /// Reads a text file that must resolve inside one of the session's `roots`.
    fn read(&self, roots: Roots<'_>, path: &str) -> Result<String, String>;
    /// Writes a text file that must resolve inside one of the session's `roots`.
    fn write(&self, roots: Roots<'_>, path: &str, content: &str) -> Result<(), String>;
    /// Saves a session's finished turns under `<cwd>/.agentao/sessions/` (atomically).
    fn save_session(&self, cwd: &str, history: &mut SessionHistory) -> Result<Saved, StoreError>;
    /// The session stored under `cwd` with exactly this id, or the latest one (`None`).
    fn load_session(&self, cwd: &str, id: Option<&str>) -> Result<Loaded, StoreError>;
    /// One page of `session/list` over `request.cwd`, else over `known_cwds`.
    fn list_sessions(
        &self,
        request: &ListSessionsRequest,
        known_cwds: &[PathBuf],
    ) -> Result<SessionPage, StoreError>;
    /// Removes every file of the session stored under `cwd`.
    fn delete_session(&self, cwd: &str, id: &str) -> Result<Deleted, StoreError>;
}

/// The most steps one session takes per [`AgentApp::pump`] pass before the others get a
/// turn: keeps sessions fair and each pass bounded.
const STEPS_PER_PASS: usize = 256;

/// The `agentInfo.title` of the demo backend.
pub const DEMO_TITLE: &str = "acp-cli (demo agent)";

/// The identity `initialize` answers with; `title` is the backend's ([`Backend::title`]).
pub(crate) fn agent_info(title: &str) -> AgentInfo {
    AgentInfo::new("acp-cli", title, env!("CARGO_PKG_VERSION"))
}

/// The connection configuration of `acp-cli --acp --stdio`: sessions survive the process,
/// so `session/load` and every session method are served; `additionalDirectories` are
/// honoured and a `systemPrompt` (append mode) is kept with the session. MCP servers come
/// over stdio or streamable HTTP (`mcpCapabilities.http`, R-SESSION-2, R-MCP-10); the old
/// SSE transport is not spoken. It speaks Agentao's dialect (`-32002` before `initialize`,
/// `{modeId}` from `session/set_mode`: R-INIT-1, R-MODE-1), the answers Agentao's hosts read.
pub fn agent_config(title: &str) -> AgentConfig {
    let mut config = AgentConfig::agentao(agent_info(title));
    config.features.mcp_http = true;
    config.features.load_session = true;
    config.features.session_list = true;
    config.features.session_resume = true;
    config.features.session_close = true;
    config.features.session_delete = true;
    config.features.additional_directories = true;
    config.features.system_prompt = true;
    config
}

/// What a running turn is waiting for, as far as the pump cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TurnWait {
    /// Ready to step.
    Ready,
    /// Asleep until then.
    Until(Instant),
    /// Waiting for a reply.
    Reply,
}

/// A request of ours whose answer a turn waits for. Only tracked requests are answered to
/// the backend: when a turn ends its requests are forgotten, so a late answer (a file the
/// client reads after a cancel) can never reach the session's next turn.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Asked {
    session: String,
    what: AskedFor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AskedFor {
    Permission,
    Answer,
    Read,
    Write,
    TerminalCreate,
    TerminalExit,
    TerminalOutput,
}

/// Names one piece of work the driver runs for a turn, for as long as its replies may come.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub u64);

/// Work only the driver can do (it needs the network, a process or a walk of the disk),
/// drained with [`AgentApp::poll_job`]; its outcome comes back through
/// [`AgentApp::job_reply`].
#[derive(Clone, Debug, PartialEq)]
pub enum Job {
    /// Stream a completion: [`Reply::ModelEvent`]s, then one [`Reply::ModelDone`].
    Model {
        /// The job.
        id: JobId,
        /// What to send.
        request: ChatRequest,
    },
    /// Run a shell command: one [`Reply::ShellDone`].
    Shell {
        /// The job.
        id: JobId,
        /// The command line.
        command: String,
        /// Its working directory.
        cwd: String,
        /// How long it may run.
        timeout_ms: u64,
    },
    /// Look at the file tree: one [`Reply::Explored`].
    Explore {
        /// The job.
        id: JobId,
        /// What to look at.
        explore: Explore,
    },
    /// Call a tool of the session's MCP server: one [`Reply::McpDone`]. Aborting it sends
    /// `notifications/cancelled` to the server (R-MCP-7).
    Mcp {
        /// The job.
        id: JobId,
        /// The session whose server it is.
        session: String,
        /// The server's name.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// Its arguments.
        arguments: serde_json::Value,
    },
    /// The turn that wanted this job is over (cancelled, most often): drop it at once,
    /// closing its connection or killing its process group.
    Abort(JobId),
}

impl Job {
    /// The id of the job this starts (`None` for an abort).
    fn started_id(&self) -> Option<JobId> {
        match self {
            Self::Model { id, .. }
            | Self::Shell { id, .. }
            | Self::Explore { id, .. }
            | Self::Mcp { id, .. } => Some(*id),
            Self::Abort(_) => None,
        }
    }
}

/// Things the driver should know about, drained with [`AgentApp::poll_notice`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Notice {
    /// The first session was opened in this cwd: start logging to `<cwd>/acp-cli.log`.
    FirstSession {
        /// The cwd, as the client sent it.
        cwd: String,
    },
    /// A session opened with MCP servers: start them (in parallel, each bounded by a start
    /// timeout) and report with [`AgentApp::mcp_started`] (R-MCP-3).
    McpStart {
        /// The session.
        session: String,
        /// Its cwd: stdio servers run there.
        cwd: String,
        /// The servers, as the client sent them (their `env` and `headers` are never logged).
        servers: Vec<McpServer>,
    },
    /// The session is gone: stop its MCP servers (R-MCP-8).
    McpStop {
        /// The session.
        session: String,
    },
}

/// The agent application: connection, sessions and backend.
pub struct AgentApp<B, W> {
    conn: AgentConnection<Growable>,
    backend: B,
    workspace: W,
    sessions: SessionTable,
    client_fs: ClientFs,
    /// The client serves `terminal/*` (R-FS-1).
    client_terminal: bool,
    /// The client shows `notice` updates (`clientCapabilities.session.notices`).
    client_notices: bool,
    /// The client renders `plan_update` and `plan_removed` (`clientCapabilities.plan`).
    client_plan: bool,
    /// The client shows compaction updates (`clientCapabilities.session.compaction`).
    client_compaction: bool,
    /// The running turns' token usage, for their prompt's answer (R-LLM-USAGE-3).
    turn_usage: HashMap<String, acp_core::schema::Usage>,
    /// The tools of each session's MCP servers that started.
    mcp_tools: HashMap<String, Vec<McpTool>>,
    /// Sessions whose MCP servers are starting.
    mcp_starting: std::collections::HashSet<String>,
    /// A prompt that came while its session's servers were starting.
    mcp_deferred: HashMap<String, Vec<ContentBlock>>,
    turns: SessionMap<TurnWait>,
    asked: HashMap<RequestId, Asked>,
    /// `terminal/create` requests whose turn ended before the answer, by session: the
    /// terminal they make is killed and released as soon as its id is known.
    orphan_terminals: HashMap<RequestId, String>,
    notices: Vec<Notice>,
    /// Jobs handed to the driver whose turn still waits for them, by session.
    jobs: HashMap<JobId, String>,
    /// Jobs (and aborts) the driver has not taken yet.
    job_queue: std::collections::VecDeque<Job>,
    last_job: u64,
    /// Updates about newly opened sessions (the backend's `session_opened`), sent after the
    /// answer that opened them, as soon as the outbox has room.
    announcements: VecDeque<(String, SessionUpdate)>,
    first_session_seen: bool,
    closed: bool,
    /// What survives the process: histories, the `--resume` directive, loads in progress.
    persist: persist::Persistence,
}

impl<B: Backend, W: Workspace> AgentApp<B, W> {
    /// An application over a fresh connection built from `config`; `promptCapabilities.image`
    /// is the backend's to say (R-LLM-9). A backend with a login adds its auth methods to
    /// `config` and requires them; the connection starts authenticated when its credentials
    /// are already there (R-AUTH-8).
    pub fn new(
        mut config: AgentConfig,
        mut backend: B,
        workspace: W,
        sessions: SessionTable,
    ) -> Self {
        config.features.prompt_image |= backend.prompt_image();
        let (config, logged_in) = match backend.login() {
            Some(login) => (super::auth::configure(config), login.check().is_ok()),
            None => (config, true),
        };
        let mut conn = AgentConnection::new(config);
        conn.set_authenticated(logged_in);
        tracing::debug!(logged_in, "credentials checked at start");
        Self {
            conn,
            backend,
            workspace,
            sessions,
            client_fs: ClientFs::default(),
            client_terminal: false,
            client_notices: false,
            client_plan: false,
            client_compaction: false,
            turn_usage: HashMap::new(),
            mcp_tools: HashMap::new(),
            mcp_starting: Default::default(),
            mcp_deferred: HashMap::new(),
            turns: SessionMap::default(),
            asked: HashMap::new(),
            orphan_terminals: HashMap::new(),
            notices: Vec::new(),
            jobs: HashMap::new(),
            job_queue: std::collections::VecDeque::new(),
            last_job: 0,
            announcements: VecDeque::new(),
            first_session_seen: false,
            closed: false,
            persist: persist::Persistence::default(),
        }
    }

    /// `--resume [ID]`: the first `session/new` resumes the latest session of its cwd
    /// (`""`) or the one with this id, and falls back to a fresh session.
    pub(crate) fn resume_first_session(&mut self, selector: impl Into<String>) {
        self.persist.resume = Some(selector.into());
    }

    /// Peer bytes. Returns how many were taken (fewer under backpressure: write out, then
    /// offer the rest again).
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> usize {
        let taken = self.conn.handle_bytes(now, bytes);
        self.drain_events(now);
        self.pump(now);
        taken
    }

    /// Whether complete peer lines wait in the connection because of backpressure: after
    /// writing out, call [`AgentApp::handle_bytes`] with nothing.
    pub fn is_input_held(&self) -> bool {
        self.conn.is_input_held()
    }

    /// The input ended (EOF, SIGTERM, SIGINT): running turns are answered `cancelled`,
    /// pending requests settled, and the connection closes.
    pub fn handle_eof(&mut self, now: Instant) {
        if self.conn.is_closed() {
            return;
        }
        for session in self.turns.keys() {
            self.backend.cancel(session);
        }
        self.conn.handle_eof(now);
        self.drain_events(now);
        self.turns.clear();
        self.asked.clear();
        self.orphan_terminals.clear();
        let running: Vec<JobId> = self.jobs.drain().map(|(id, _)| id).collect();
        self.job_queue.retain(|job| matches!(job, Job::Abort(_)));
        self.job_queue.extend(running.into_iter().map(Job::Abort));
        self.persist.loads.clear();
        self.persist.replays.clear();
    }

    /// The clock reached `now`: deadlines of requests and sleeps.
    pub fn handle_timeout(&mut self, now: Instant) {
        if !self.conn.is_closed() {
            self.conn.handle_timeout(now);
            self.drain_events(now);
        }
        self.pump(now);
    }

    /// When [`AgentApp::handle_timeout`] is due next.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        let sleeps = self.turns.values().filter_map(|wait| match wait {
            TurnWait::Until(at) => Some(*at),
            _ => None,
        });
        sleeps.chain(self.conn.poll_timeout()).min()
    }

    /// Bytes to write, whole lines.
    pub fn poll_transmit(&self) -> &[u8] {
        self.conn.poll_transmit()
    }

    /// The first `n` bytes of [`AgentApp::poll_transmit`] were written. Room in the outbox
    /// may let paused turns go on: call [`AgentApp::pump`].
    pub fn transmitted(&mut self, n: usize) {
        self.conn.transmitted(n);
    }

    /// The next notice for the driver.
    pub(crate) fn poll_notice(&mut self) -> Option<Notice> {
        if self.notices.is_empty() {
            None
        } else {
            Some(self.notices.remove(0))
        }
    }

    /// The next job for the driver to start (or abort).
    pub fn poll_job(&mut self) -> Option<Job> {
        self.job_queue.pop_front()
    }

    /// Whether the outbox can take a turn's updates now: while it cannot, the driver leaves
    /// job replies (a model's stream) waiting, so a client that stops reading stops the
    /// model's stream too.
    pub(crate) fn has_room_for_updates(&self) -> bool {
        self.conn.has_room_for_updates()
    }

    /// What a job produced. A reply for a job whose turn is over (aborted, or answered
    /// already) is dropped, so it can never reach the session's next turn.
    pub fn job_reply(&mut self, now: Instant, id: JobId, reply: Reply) {
        let last = !matches!(reply, Reply::ModelEvent(_));
        let session = match last {
            true => self.jobs.remove(&id),
            false => self.jobs.get(&id).cloned(),
        };
        match session {
            Some(session) => self.resume(&session, reply),
            None => tracing::debug!(?id, "reply for a finished job dropped"),
        }
        self.pump(now);
    }

    /// Hands a job to the driver; the session's turn waits for its replies.
    fn start_job(&mut self, session: &str, job: impl FnOnce(JobId) -> Job) {
        self.last_job += 1;
        let id = JobId(self.last_job);
        self.jobs.insert(id, session.to_owned());
        self.job_queue.push_back(job(id));
        self.wait_reply(session);
    }

    /// Whether the connection has closed (after EOF): write out what is left and exit.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether a turn could step now if the outbox had room.
    #[cfg(test)]
    pub(crate) fn has_ready_turns(&self) -> bool {
        self.turns.values().any(|w| *w == TurnWait::Ready)
    }

    /// Runs the turns that can make progress, as far as the outbox allows. Bounded: each
    /// pass steps every ready session a bounded number of times, and passes repeat
    /// only while some step made progress and the outbox has room.
    pub fn pump(&mut self, now: Instant) {
        if self.conn.is_closed() {
            return;
        }
        // Replays first: a turn steps only while the outbox has room, so a resumed session's
        // new turn follows the whole of its history.
        self.progress_loads();
        self.progress_replays();
        self.send_announcements();
        // Sleepers whose time has come.
        for wait in self.turns.values_mut() {
            if matches!(wait, TurnWait::Until(at) if *at <= now) {
                *wait = TurnWait::Ready;
            }
        }
        loop {
            let mut ready: Vec<String> = self
                .turns
                .iter()
                .filter(|(_, wait)| **wait == TurnWait::Ready)
                .map(|(session, _)| session.clone())
                .collect();
            if ready.is_empty() || !self.conn.has_room_for_updates() {
                return;
            }
            ready.sort();
            for session in ready {
                self.step_session(&session, now);
                // A step may have queued events (a remembered permission): act on them.
                self.drain_events(now);
            }
        }
    }

    /// Sends a turn's update and records it in the session's history. A plain text chunk (the
    /// bulk of a streamed answer) is written by acp-core's text-chunk writer and recorded as
    /// it escaped it (R-STORE-7); anything else goes through `send_update` and is recorded
    /// as sent.
    fn send_and_record(&mut self, session: &str, update: &SessionUpdate) {
        if let Some((kind, text)) = plain_text_chunk(update) {
            match self.conn.send_text_chunk(session, kind, text) {
                Ok(escaped) => self.persist.record_text(session, kind, escaped),
                Err(error) => tracing::warn!(session, %error, "update not sent"),
            }
            return;
        }
        match self.conn.send_update(session, update) {
            Ok(()) => self.persist.record(session, update),
            Err(error) => tracing::warn!(session, %error, "update not sent"),
        }
    }

    /// Steps `session`'s turn up to [`STEPS_PER_PASS`] times, while the outbox has room.
    ///
    /// A run of plain text chunks (most steps of a streamed answer) is sent and recorded
    /// here, the session's history looked up once for the run instead of once per chunk;
    /// every other step goes to [`AgentApp::take_step`].
    fn step_session(&mut self, session: &str, now: Instant) {
        let mut steps = 0;
        while steps < STEPS_PER_PASS {
            // Looked up at the run's first text chunk, kept until a step of another kind.
            let mut history = None;
            let step = loop {
                if steps == STEPS_PER_PASS || !self.conn.has_room_for_updates() {
                    return;
                }
                steps += 1;
                let step = self.backend.step(session, now);
                let Step::Update(update) = &step else {
                    break step;
                };
                let Some((kind, text)) = plain_text_chunk(update) else {
                    break step;
                };
                match self.conn.send_text_chunk(session, kind, text) {
                    Ok(escaped) => {
                        if history.is_none() {
                            history = Some(self.persist.history(session));
                        }
                        if let Some(Some(history)) = &mut history {
                            history.record_text_chunk(kind, escaped);
                        }
                    }
                    Err(error) => tracing::warn!(session, %error, "update not sent"),
                }
            };
            if !self.take_step(session, step, now) {
                return;
            }
        }
    }

    /// One step of a session's turn. Returns whether to keep stepping it.
    fn take_step(&mut self, session: &str, step: Step, now: Instant) -> bool {
        match step {
            // R-LLM-CONTEXT-2: compaction updates go only to a client that shows them
            // (`session.compaction`); the history keeps the compaction point either way.
            Step::Update(update) if is_compaction(&update) && !self.client_compaction => {
                self.persist.record(session, &update);
                true
            }
            Step::Update(update) => {
                self.send_and_record(session, &update);
                true
            }
            Step::RequestPermission(tool_call) => {
                match self.conn.request_permission(now, session, &tool_call, None) {
                    Ok(id) => self.track(session, id, AskedFor::Permission),
                    Err(error) => {
                        tracing::warn!(session, %error, "permission not requested");
                        self.backend
                            .resume(session, Reply::Permission(PermissionDecision::Cancelled));
                    }
                }
                !self.waits(session)
            }
            Step::AskUser(question) => {
                let request = AskUserRequest::new(session, question);
                match self.conn.ask_user(now, &request, None) {
                    Ok(id) => self.track(session, id, AskedFor::Answer),
                    Err(error) => {
                        tracing::warn!(session, %error, "ask_user not sent");
                        self.backend
                            .resume(session, Reply::Answer(USER_UNAVAILABLE.to_owned()));
                    }
                }
                !self.waits(session)
            }
            Step::ReadFile { path, via } => {
                self.read_file(session, path, via, now);
                !self.waits(session)
            }
            Step::WriteFile { path, content, via } => {
                self.write_file(session, path, content, via, now);
                !self.waits(session)
            }
            Step::SleepUntil(at) => {
                self.turns.insert(session.to_owned(), TurnWait::Until(at));
                false
            }
            Step::Waiting => {
                self.wait_reply(session);
                false
            }
            Step::TurnUsage(usage) => {
                self.turn_usage.insert(session.to_owned(), usage);
                true
            }
            Step::End(stop) => {
                let usage = self.turn_usage.remove(session);
                self.end_turn(session);
                let ended = match self.conn.end_turn_with_usage(session, stop, usage.as_ref()) {
                    Ok(sent) => {
                        tracing::info!(session, stop = %sent, "turn ended");
                        sent
                    }
                    Err(error) => {
                        tracing::warn!(session, %error, "turn end not sent");
                        StopReason::Cancelled
                    }
                };
                self.finish_and_save(session, ended);
                false
            }
            Step::CallModel(request) => {
                self.start_job(session, |id| Job::Model { id, request });
                false
            }
            Step::RunShell {
                command,
                cwd,
                timeout_ms,
            } => {
                self.start_job(session, |id| Job::Shell {
                    id,
                    command,
                    cwd,
                    timeout_ms,
                });
                false
            }
            Step::Explore(explore) => {
                self.start_job(session, |id| Job::Explore { id, explore });
                false
            }
            Step::McpCall {
                server,
                tool,
                arguments,
            } => {
                let owner = session.to_owned();
                self.start_job(session, |id| Job::Mcp {
                    id,
                    session: owner,
                    server,
                    tool,
                    arguments,
                });
                false
            }
            Step::Terminal(call) => {
                self.terminal_request(session, call, now);
                // The turn says itself whether it now waits (or sleeps until a deadline).
                true
            }
            Step::FailWith { code, message } => {
                self.end_turn(session);
                let code = ErrorCode(code);
                let sent = self.conn.fail_turn_with(session, code, &message);
                log_failed_turn(session, Some(code), sent);
                self.finish_and_save(session, StopReason::EndTurn);
                false
            }
            Step::Fail(text) => {
                self.end_turn(session);
                let sent = self.conn.fail_turn(session, &text);
                log_failed_turn(session, None, sent);
                // What the client saw of a failed turn is kept like any other turn's.
                self.finish_and_save(session, StopReason::EndTurn);
                false
            }
        }
    }

    fn read_file(&mut self, session: &str, path: String, via: FsVia, now: Instant) {
        match via {
            FsVia::Client => {
                let mut request = ReadTextFileRequest::default();
                request.session_id = session.to_owned();
                request.path = path;
                let sent = self.conn.read_text_file(now, &request, None);
                self.track_file(session, sent, AskedFor::Read);
            }
            FsVia::Local => {
                let result = match self.sessions.get(session) {
                    Some(state) => self.workspace.read(state.roots(), &path),
                    None => Err("the session is gone".to_owned()),
                };
                self.backend.resume(session, Reply::FileRead(result));
            }
        }
    }

    fn write_file(
        &mut self,
        session: &str,
        path: String,
        content: String,
        via: FsVia,
        now: Instant,
    ) {
        match via {
            FsVia::Client => {
                let mut request = WriteTextFileRequest::default();
                request.session_id = session.to_owned();
                request.path = path;
                request.content = content;
                let sent = self.conn.write_text_file(now, &request, None);
                self.track_file(session, sent, AskedFor::Write);
            }
            FsVia::Local => {
                let result = match self.sessions.get(session) {
                    Some(state) => self.workspace.write(state.roots(), &path, &content),
                    None => Err("the session is gone".to_owned()),
                };
                self.backend.resume(session, Reply::FileWritten(result));
            }
        }
    }

    /// Sends a `terminal/*` request of the session's turn. Create, wait and output are
    /// tracked and answered to the turn; kill and release are sent and forgotten.
    fn terminal_request(&mut self, session: &str, call: TerminalCall, now: Instant) {
        let named = |terminal_id: String| TerminalRequest::new(session, terminal_id);
        let (sent, what) = match call {
            TerminalCall::Create {
                command,
                args,
                cwd,
                output_byte_limit,
            } => {
                let mut request = CreateTerminalRequest::default();
                request.session_id = session.to_owned();
                request.command = command;
                request.args = args;
                request.cwd = Some(cwd);
                request.output_byte_limit = Some(output_byte_limit);
                let sent = self.conn.terminal_create(now, &request, None);
                (sent, Some(AskedFor::TerminalCreate))
            }
            TerminalCall::WaitForExit { terminal_id } => {
                let request = named(terminal_id);
                let sent = self
                    .conn
                    .terminal(now, "terminal/wait_for_exit", &request, None);
                (sent, Some(AskedFor::TerminalExit))
            }
            TerminalCall::Output { terminal_id } => {
                let request = named(terminal_id);
                let sent = self.conn.terminal(now, "terminal/output", &request, None);
                (sent, Some(AskedFor::TerminalOutput))
            }
            TerminalCall::Kill { terminal_id } => {
                let request = named(terminal_id);
                (
                    self.conn.terminal(now, "terminal/kill", &request, None),
                    None,
                )
            }
            TerminalCall::Release { terminal_id } => {
                let request = named(terminal_id);
                (
                    self.conn.terminal(now, "terminal/release", &request, None),
                    None,
                )
            }
        };
        match (sent, what) {
            (Ok(id), Some(what)) => {
                self.asked.insert(
                    id,
                    Asked {
                        session: session.to_owned(),
                        what,
                    },
                );
            }
            (Ok(_), None) => {}
            (Err(error), Some(what)) => {
                let why = format!("the request could not be sent: {error}");
                self.backend.resume(session, failed(what, why));
            }
            (Err(error), None) => tracing::warn!(session, %error, "terminal request not sent"),
        }
    }

    /// A `terminal/create` answered after its turn ended: the command must not outlive the
    /// turn, so its terminal is killed and released at once.
    fn orphan_terminal(&mut self, now: Instant, session: &str, terminal_id: String) {
        tracing::info!(session, "terminal of an ended turn killed and released");
        let request = TerminalRequest::new(session, terminal_id);
        for method in ["terminal/kill", "terminal/release"] {
            if let Err(error) = self.conn.terminal(now, method, &request, None) {
                tracing::warn!(session, %error, method, "terminal request not sent");
            }
        }
    }

    /// Remembers a request the session's turn now waits for.
    fn track(&mut self, session: &str, id: RequestId, what: AskedFor) {
        self.asked.insert(
            id,
            Asked {
                session: session.to_owned(),
                what,
            },
        );
        self.wait_reply(session);
    }

    /// Remembers a sent `fs/*` request, or hands the turn the failure to send it.
    fn track_file(&mut self, session: &str, sent: Result<RequestId, UsageError>, what: AskedFor) {
        match sent {
            Ok(id) => self.track(session, id, what),
            Err(error) => {
                let why = format!("the request could not be sent: {error}");
                self.backend.resume(session, failed(what, why));
            }
        }
    }

    /// The session's turn is over: forget it and the requests it was waiting for, and abort
    /// its jobs.
    fn end_turn(&mut self, session: &str) {
        self.turns.remove(session);
        self.turn_usage.remove(session);
        let orphans = &mut self.orphan_terminals;
        self.asked.retain(|id, asked| {
            if asked.session != session {
                return true;
            }
            if asked.what == AskedFor::TerminalCreate {
                orphans.insert(*id, asked.session.clone());
            }
            false
        });
        let done: Vec<JobId> = self
            .jobs
            .iter()
            .filter(|(_, owner)| owner.as_str() == session)
            .map(|(id, _)| *id)
            .collect();
        for id in done {
            self.jobs.remove(&id);
            let before = self.job_queue.len();
            self.job_queue.retain(|job| job.started_id() != Some(id));
            if self.job_queue.len() == before {
                self.job_queue.push_back(Job::Abort(id));
            }
        }
    }

    /// The answer to a tracked request: resume its turn with it.
    fn answered(&mut self, request: RequestId, what: AskedFor, reply: Reply) {
        match self.asked.get(&request) {
            Some(asked) if asked.what == what => {
                let session = asked.session.clone();
                self.asked.remove(&request);
                self.resume(&session, reply);
            }
            _ => tracing::debug!(?request, "answer for no running turn dropped"),
        }
    }

    fn wait_reply(&mut self, session: &str) {
        if let Some(wait) = self.turns.get_mut(session) {
            *wait = TurnWait::Reply;
        }
    }

    fn waits(&self, session: &str) -> bool {
        self.turns.get(session) != Some(&TurnWait::Ready)
    }

    /// A reply arrived for a turn: it may step again.
    fn resume(&mut self, session: &str, reply: Reply) {
        self.backend.resume(session, reply);
        if let Some(wait) = self.turns.get_mut(session) {
            *wait = TurnWait::Ready;
        }
    }

    fn drain_events(&mut self, now: Instant) {
        // Bounded: the connection queues a bounded number of events per input.
        while let Some(event) = self.conn.poll_event() {
            self.on_event(event, now);
        }
    }

    fn on_event(&mut self, event: AgentEvent, now: Instant) {
        match event {
            AgentEvent::Initialized { client, params } => {
                let request = self.conn.initialize_request(params);
                self.client_fs = ClientFs {
                    read: client.contains(Capabilities::FS_READ),
                    write: client.contains(Capabilities::FS_WRITE),
                };
                self.client_terminal = client.contains(Capabilities::TERMINAL);
                let session_caps = request
                    .as_ref()
                    .and_then(|request| request.client_capabilities.session.as_ref());
                self.client_notices = session_caps.is_some_and(|session| session.notices.is_some());
                self.client_compaction =
                    session_caps.is_some_and(|session| session.compaction.is_some());
                self.client_plan = request
                    .as_ref()
                    .is_some_and(|request| request.client_capabilities.plan.is_some());
                tracing::info!(
                    fs_read = self.client_fs.read,
                    fs_write = self.client_fs.write,
                    terminal = self.client_terminal,
                    "initialized"
                );
            }
            AgentEvent::NewSession { ticket, params } => {
                // Validated by the connection: the owned request decodes while the events of
                // its input are drained (they are, here).
                match self.conn.new_session_request(params) {
                    Some(request) => self.new_session(ticket, &request),
                    None => self.params_gone(ticket),
                }
            }
            AgentEvent::Prompt {
                session, params, ..
            } => {
                let session = session.as_str();
                let Some(prompt) = self.conn.prompt(params) else {
                    tracing::error!(session, "prompt params read after their input");
                    let _ = self
                        .conn
                        .fail_turn(session, &"the prompt was not read in time");
                    return;
                };
                if self.mcp_starting.contains(session) {
                    // Its tools are not known yet: the turn starts once they are (R-MCP-3).
                    tracing::info!(session, "prompt waits for the session's MCP servers");
                    self.mcp_deferred.insert(session.to_owned(), prompt);
                    return;
                }
                self.start_prompt(session, &prompt, now);
            }
            AgentEvent::Cancelled { session } => {
                tracing::info!(session = session.as_str(), "cancelled");
                if self.mcp_deferred.remove(session.as_str()).is_some() {
                    let _ = self.conn.end_turn(session.as_str(), StopReason::Cancelled);
                    return;
                }
                self.backend.cancel(session.as_str());
                if let Some(wait) = self.turns.get_mut(session.as_str()) {
                    *wait = TurnWait::Ready;
                }
            }
            AgentEvent::PermissionResolved {
                request,
                session,
                decision,
                remembered,
            } => {
                tracing::info!(
                    session = session.as_str(),
                    ?decision,
                    remembered,
                    "permission"
                );
                self.answered(request, AskedFor::Permission, Reply::Permission(decision));
            }
            AgentEvent::AskUserAnswered { request, text, .. } => {
                let text = String::from(text.as_str());
                self.answered(request, AskedFor::Answer, Reply::Answer(text));
            }
            AgentEvent::Response { request, result } => {
                if let Some(session) = self.orphan_terminals.remove(&request) {
                    if let Ok(ClientResponse::CreateTerminal(created)) = result {
                        self.orphan_terminal(now, &session, created.terminal_id);
                    }
                    return;
                }
                let Some(what) = self.asked.get(&request).map(|a| a.what) else {
                    tracing::debug!(?request, "answer for no running turn dropped");
                    return;
                };
                let reply = match (what, result) {
                    (AskedFor::Read, Ok(ClientResponse::ReadTextFile(read))) => {
                        Reply::FileRead(Ok(read.content))
                    }
                    (AskedFor::Write, Ok(ClientResponse::WriteTextFile(_))) => {
                        Reply::FileWritten(Ok(()))
                    }
                    (AskedFor::TerminalCreate, Ok(ClientResponse::CreateTerminal(created))) => {
                        Reply::TerminalCreated(Ok(created.terminal_id))
                    }
                    (AskedFor::TerminalExit, Ok(ClientResponse::WaitForTerminalExit(exit))) => {
                        Reply::TerminalExited(Ok(exit))
                    }
                    (AskedFor::TerminalOutput, Ok(ClientResponse::TerminalOutput(output))) => {
                        Reply::TerminalOutput(Ok(output))
                    }
                    (what @ (AskedFor::Read | AskedFor::Write), Ok(_)) => {
                        failed(what, "the client's answer is not a file result".to_owned())
                    }
                    (what, Ok(_)) => failed(
                        what,
                        "the client's answer is not a terminal result".to_owned(),
                    ),
                    (what, Err(error)) => failed(
                        what,
                        format!("the client answered {} {}", error.code.0, error.message),
                    ),
                };
                self.answered(request, what, reply);
            }
            AgentEvent::Request {
                ticket,
                method,
                session,
                params,
            } => match self.conn.request(&method, params) {
                Some(ClientRequest::ListSessions(request)) => self.list_sessions(ticket, &request),
                Some(ClientRequest::CloseSession(request)) => {
                    self.close_session(ticket, &request.session_id)
                }
                Some(ClientRequest::DeleteSession(request)) => {
                    self.delete_session(ticket, &request.session_id)
                }
                request => self.request(
                    ticket,
                    &method,
                    session.as_ref().map(|s| s.as_str()),
                    request,
                ),
            },
            AgentEvent::Authenticate {
                ticket, method_id, ..
            } => self.authenticate(ticket, method_id.as_str()),
            AgentEvent::Logout { ticket, .. } => self.logout(ticket),
            AgentEvent::RequestCancelled { ticket } => {
                tracing::debug!(?ticket, "request cancelled by the client");
                self.persist.loads.retain(|load| load.ticket != ticket);
            }
            AgentEvent::PeerViolation(violation) => {
                tracing::debug!(?violation, "peer violation");
            }
            AgentEvent::SaveSession { session } => {
                // EOF: a running turn was answered `cancelled`; it is kept as such.
                self.finish_and_save(session.as_str(), StopReason::Cancelled);
                self.backend.forget_session(session.as_str());
            }
            AgentEvent::Closed => {
                tracing::info!("connection closed");
                self.closed = true;
            }
            AgentEvent::LoadSession {
                ticket,
                session,
                resume,
                params,
            } => {
                let Some(params) = self.conn.params(params).map(String::from) else {
                    return self.params_gone(ticket);
                };
                self.load_session(ticket, session.as_str(), resume, &params)
            }
            // Events of later versions: only noted, never printed (they may carry params).
            _ => tracing::debug!("event ignored"),
        }
    }

    /// `authenticate` with the `agent` method (the core refused any other, R-AUTH-4): the
    /// credentials are checked now, so a login stored by the `terminal` method while the
    /// agent runs counts (R-AUTH-8). New sessions use the provider and model they name.
    fn authenticate(&mut self, ticket: Ticket, method_id: &str) {
        let checked = match self.backend.login() {
            Some(login) => login.check(),
            None => Err("Internal error: no login to check".to_owned()),
        };
        match checked {
            Ok((provider, model)) => {
                tracing::info!(method_id, provider, model, "authenticated");
                self.sessions.set_default_model(&provider, &model);
                let _ = self.conn.accept_authenticate(ticket);
            }
            Err(text) => {
                tracing::info!(method_id, "authentication refused: no credentials");
                let _ = self
                    .conn
                    .respond_error(ticket, ErrorCode::AUTH_REQUIRED, &text);
            }
        }
    }

    /// `logout`: the stored credentials are removed; new sessions need `authenticate` again
    /// (R-AUTH-5, R-AUTH-8).
    fn logout(&mut self, ticket: Ticket) {
        let forgotten = match self.backend.login() {
            Some(login) => login.forget(),
            None => Err("no login to forget".to_owned()),
        };
        match forgotten {
            Ok(()) => {
                tracing::info!("logged out");
                let _ = self.conn.accept_logout(ticket);
            }
            Err(text) => {
                tracing::warn!(error = text.as_str(), "logout failed");
                let _ = self.conn.respond_error(
                    ticket,
                    ErrorCode::INTERNAL_ERROR,
                    &format!("Internal error: {text}"),
                );
            }
        }
    }

    /// A request whose params were read after their input (a bug of this loop, never of the
    /// peer): it is refused rather than served with no params.
    fn params_gone(&mut self, ticket: Ticket) {
        tracing::error!(?ticket, "request params read after their input");
        let _ = self.conn.respond_error(
            ticket,
            ErrorCode::INTERNAL_ERROR,
            &"Internal error: the request was not read in time",
        );
    }

    /// Starts the backend's turn for a prompt.
    fn start_prompt(&mut self, session: &str, prompt: &[ContentBlock], now: Instant) {
        let Some(state) = self.sessions.get(session) else {
            // Only sessions we opened reach here; a stranger ends at once.
            let _ = self.conn.fail_turn(session, &"unknown session");
            return;
        };
        tracing::info!(session, blocks = prompt.len(), "prompt");
        let history = self.persist.start_turn(session, &state.model, prompt);
        self.backend.start_turn(
            TurnStart {
                session,
                cwd: &state.cwd,
                additional_directories: &state.additional_directories,
                system_prompt: state.system_prompt.as_deref(),
                posture: state.posture,
                client_fs: self.client_fs,
                client_terminal: self.client_terminal,
                client_plan: self.client_plan,
                prompt,
                history,
                mcp_tools: self.mcp_tools.get(session).map_or(&[], Vec::as_slice),
            },
            now,
        );
        self.turns.insert(session.to_owned(), TurnWait::Ready);
    }

    fn new_session(&mut self, ticket: Ticket, request: &NewSessionRequest) {
        let cwd = request.cwd.as_str();
        let directories = &request.additional_directories;
        let checked = check_cwd("session/new", cwd, self.workspace.cwd_kind(cwd))
            .and_then(|()| {
                check_additional_directories("session/new", directories, |path| {
                    self.workspace.cwd_kind(path)
                })
            })
            .and_then(|()| {
                request
                    .system_prompt
                    .as_ref()
                    .map(|prompt| check_system_prompt("session/new", prompt))
                    .transpose()
            });
        let system_prompt = match checked {
            Ok(system_prompt) => system_prompt,
            Err(refusal) => {
                tracing::info!(code = refusal.code.0, "session/new refused");
                let _ = self
                    .conn
                    .respond_error(ticket, refusal.code, &refusal.message);
                return;
            }
        };
        let requested = persist::Requested {
            directories,
            system_prompt: system_prompt.as_deref(),
            mcp_servers: &request.mcp_servers,
        };
        if let Some(selector) = self.persist.resume.take()
            && self.resume_session(ticket, cwd, requested, &selector)
        {
            return;
        }
        let (id, answer) = self.sessions.open(cwd);
        if let Some(session) = self.sessions.get_mut(&id) {
            session.additional_directories.clone_from(directories);
            session.system_prompt.clone_from(&system_prompt);
        }
        match self.conn.accept_new_session(ticket, &answer) {
            Ok(()) => {
                tracing::info!(session = id.as_str(), cwd, "session opened");
                let model = self.sessions.get(&id).map(|s| s.model.clone());
                let mut history = SessionHistory::new(id.clone(), model.unwrap_or_default());
                history.additional_directories.clone_from(directories);
                history.system_prompt = system_prompt;
                self.persist.opened(history, cwd);
                self.first_session(cwd);
                // R-SESSION-11: listed, loadable and deletable before its first turn.
                self.save(&id);
                self.session_opened(&id, &request.mcp_servers);
            }
            Err(error) => {
                tracing::warn!(%error, "session/new answer not sent");
                self.sessions.remove(&id);
            }
        }
    }

    /// A session is open and its answer sent: queue what the backend tells about it, and
    /// send it now if the outbox has room.
    fn session_opened(&mut self, session: &str, mcp_servers: &[McpServer]) {
        for update in self.backend.session_opened() {
            self.announcements.push_back((session.to_owned(), update));
        }
        self.mcp_tools.remove(session);
        if let Some(state) = self.sessions.get(session)
            && !mcp_servers.is_empty()
        {
            self.mcp_starting.insert(session.to_owned());
            self.notices.push(Notice::McpStart {
                session: session.to_owned(),
                cwd: state.cwd.clone(),
                servers: mcp_servers.to_vec(),
            });
        }
        self.send_announcements();
    }

    /// The session's MCP servers were started: the tools of those that did are offered from
    /// the next turn on; each that did not is reported to the user as a `notice`, or as an
    /// agent message to a client that does not show notices (R-MCP-3). Returns whether the
    /// session is still open (if not, the driver stops the servers).
    pub(crate) fn mcp_started(
        &mut self,
        now: Instant,
        session: &str,
        tools: Vec<McpTool>,
        failures: Vec<(String, String)>,
    ) -> bool {
        self.mcp_starting.remove(session);
        if self.sessions.get(session).is_none() {
            self.mcp_deferred.remove(session);
            return false;
        }
        for (server, why) in failures {
            let title = format!("MCP server '{server}' did not start: {why}");
            let update = if self.client_notices {
                crate::demo::turn::notice(acp_core::schema::NoticeSeverity::Warning, title)
            } else {
                SessionUpdate::AgentMessageChunk(acp_core::schema::ContentChunk::new(
                    ContentBlock::text(title),
                ))
            };
            self.announcements.push_back((session.to_owned(), update));
        }
        self.mcp_tools.insert(session.to_owned(), tools);
        self.send_announcements();
        if let Some(prompt) = self.mcp_deferred.remove(session) {
            self.start_prompt(session, &prompt, now);
            self.pump(now);
        }
        true
    }

    /// A server of the session listed its tools again after saying they changed: they replace
    /// its old ones for the running turn's next model request and every later turn (R-MCP-5).
    pub(crate) fn mcp_tools_relisted(
        &mut self,
        session: &str,
        server: &str,
        tools: Vec<crate::mcp::Tool>,
    ) {
        let Some(list) = self.mcp_tools.get_mut(session) else {
            return;
        };
        let at = list
            .iter()
            .position(|t| t.server == server)
            .unwrap_or(list.len());
        list.retain(|t| t.server != server);
        let at = at.min(list.len());
        list.splice(
            at..at,
            tools.into_iter().map(|tool| McpTool {
                server: server.to_owned(),
                tool,
            }),
        );
        self.backend.mcp_tools_changed(session, list);
    }

    /// Sends queued announcements while the outbox has room. Bounded by the queue. A session
    /// whose stored history is still being replayed (`--resume`) hears them after it, as a
    /// loaded session does.
    fn send_announcements(&mut self) {
        while let Some((session, update)) = self.announcements.front() {
            if !self.conn.has_room_for_updates() || self.persist.is_replaying(session) {
                return;
            }
            match self.conn.send_update(session, update) {
                Ok(()) => {}
                Err(acp_core::machine::UsageError::WouldBlock) => return,
                // The session was closed meanwhile: nothing to tell.
                Err(error) => tracing::debug!(session, %error, "announcement dropped"),
            }
            self.announcements.pop_front();
        }
    }

    /// Logging follows the first session's cwd.
    fn first_session(&mut self, cwd: &str) {
        if !self.first_session_seen {
            self.first_session_seen = true;
            self.notices.push(Notice::FirstSession {
                cwd: cwd.to_owned(),
            });
        }
    }

    fn request(
        &mut self,
        ticket: Ticket,
        method: &str,
        session: Option<&str>,
        request: Option<ClientRequest>,
    ) {
        let Some(state) = session.and_then(|id| self.sessions.get_mut(id)) else {
            let _ =
                self.conn
                    .respond_error(ticket, ErrorCode::METHOD_NOT_FOUND, "Method not found");
            return;
        };
        let answered = match request {
            Some(ClientRequest::SetSessionMode(r)) => {
                state.set_mode(&r.mode_id);
                tracing::info!(session, mode = r.mode_id.as_str(), "mode set");
                self.conn.accept_mode(ticket, &r.mode_id)
            }
            Some(ClientRequest::SetSessionConfigOption(r)) => {
                match state.set_config_option(&r.config_id, &r.value) {
                    Ok(options) => {
                        let mut answer = SetSessionConfigOptionResponse::default();
                        answer.config_options = options;
                        self.conn.respond(ticket, &answer)
                    }
                    Err(refusal) => self
                        .conn
                        .respond_error(ticket, refusal.code, &refusal.message),
                }
            }
            Some(ClientRequest::SetModel(r)) => match state.set_model(&r.model) {
                Ok(model) => {
                    let mut answer = SetModelResponse::default();
                    answer.model = model;
                    self.conn.respond(ticket, &answer)
                }
                Err(refusal) => self
                    .conn
                    .respond_error(ticket, refusal.code, &refusal.message),
            },
            _ => self
                .conn
                .respond_error(ticket, ErrorCode::METHOD_NOT_FOUND, "Method not found"),
        };
        if let Err(error) = answered {
            tracing::warn!(method, %error, "answer not sent");
            let _ = self.conn.respond_error(
                ticket,
                ErrorCode::INTERNAL_ERROR,
                &format_args!("Internal error: {error}"),
            );
        }
    }
}

mod persist;

/// The kind and text of a message or thought chunk that is plain text: a text block without
/// annotations or `_meta`, in a chunk without `messageId` or `_meta`. Its line is the one
/// acp-core's `send_text_chunk` writes.
fn plain_text_chunk(update: &SessionUpdate) -> Option<(TextChunkKind, &str)> {
    let (kind, chunk) = match update {
        SessionUpdate::AgentMessageChunk(chunk) => (TextChunkKind::AgentMessage, chunk),
        SessionUpdate::AgentThoughtChunk(chunk) => (TextChunkKind::AgentThought, chunk),
        _ => return None,
    };
    if chunk.message_id.is_some() || chunk.meta.is_some() {
        return None;
    }
    match &chunk.content {
        ContentBlock::Text(text) if text.annotations.is_none() && text.meta.is_none() => {
            Some((kind, &text.text))
        }
        _ => None,
    }
}

/// Whether an update is one of the compaction kinds (R-LLM-CONTEXT-2).
pub(crate) fn is_compaction(update: &SessionUpdate) -> bool {
    matches!(
        update,
        SessionUpdate::CompactionUpdate(_) | SessionUpdate::CompactionSummaryChunk(_)
    )
}

#[cfg(test)]
mod tests;

/// The reply that tells a turn its request to the client failed, and why.
fn failed(what: AskedFor, why: String) -> Reply {
    match what {
        AskedFor::Permission => Reply::Permission(PermissionDecision::Cancelled),
        AskedFor::Answer => Reply::Answer(USER_UNAVAILABLE.to_owned()),
        AskedFor::Read => Reply::FileRead(Err(why)),
        AskedFor::Write => Reply::FileWritten(Err(why)),
        AskedFor::TerminalCreate => Reply::TerminalCreated(Err(why)),
        AskedFor::TerminalExit => Reply::TerminalExited(Err(why)),
        AskedFor::TerminalOutput => Reply::TerminalOutput(Err(why)),
    }
}

/// Logs how a turn the backend failed was answered: with its error, or `cancelled` because the
/// client cancelled it first (R-CANCEL-3).
fn log_failed_turn(session: &str, code: Option<ErrorCode>, sent: Result<TurnEnd, UsageError>) {
    let code = code.unwrap_or(ErrorCode::INTERNAL_ERROR).0;
    match sent {
        Ok(TurnEnd::Failed) => tracing::info!(session, code, "turn failed"),
        Ok(TurnEnd::Cancelled) => tracing::info!(session, "turn cancelled before its failure"),
        Ok(TurnEnd::Ended(stop)) => tracing::info!(session, stop = %stop, "turn ended"),
        Err(error) => tracing::warn!(session, %error, "turn failure not sent"),
    }
}
