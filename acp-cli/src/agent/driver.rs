//! The driver of `acp-cli --acp --stdio`: the only part of the agent that does I/O.
//!
//! One loop on smol: write out what the connection has ready (one `write` for everything
//! pending where the pipe takes it, then a flush), take the next deadline, race stdin, the
//! deadline and SIGTERM/SIGINT, feed exactly one input, let the turns run, repeat.
//!
//! Backpressure: output moves from the connection's outbox to the write buffer only when the
//! buffer is empty, turns step only while the outbox is under its high-water mark, and stdin
//! is read only while the connection takes input. A client that stops reading therefore
//! stops the agent with bounded memory: the outbox, one write buffer and one read buffer.
//!
//! Shutdown: stdin EOF, SIGTERM and SIGINT all end the same way: running turns are answered
//! `cancelled`, pending requests settled, the last bytes written and the process exits 0.
//!
//! Jobs: the work a turn hands out ([`Job`]: a model's stream, a shell command, a look at the
//! tree) runs as a task on the loop's executor and answers through one channel the loop
//! races with the rest. When the turn ends first (a cancel), the app says so and the task is
//! dropped: the model's connection closes unread, the shell's process group is killed.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use acp_core::schema::{ListSessionsRequest, McpServer};

use smol::future::FutureExt;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::stream::StreamExt;

use super::app::{AgentApp, Job, JobId, Notice, Workspace, agent_config};
use super::backend::{Backend, Reply};
use super::logging::LogSink;
use super::sessions::{CwdKind, SessionTable};
use super::{explore, local_fs, shell};
use crate::agent::paths::Roots;
use crate::host::clock::HostClock;
use crate::mcp::{self, McpClient};
use crate::model::ModelClient;
use crate::store::{
    DEFAULT_PAGE_SIZE, Deleted, Loaded, Saved, SessionHistory, SessionPage, SessionStore,
    StoreConfig, StoreError, Timestamp, list_sessions,
};

/// Bytes read from stdin at once.
const READ_CHUNK: usize = 64 * 1024;

/// How long the last bytes may take to write after the connection closed: a client that
/// stopped reading must not keep the agent alive after EOF or a signal.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// How `acp-cli --acp --stdio` was asked to run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentOptions {
    /// `--resume [ID]`: `Some("")` for the latest session, `Some(id)` for one.
    pub resume: Option<String>,
}

/// The real file system.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RealWorkspace;

impl Workspace for RealWorkspace {
    fn cwd_kind(&self, path: &str) -> CwdKind {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => CwdKind::Directory,
            Ok(_) => CwdKind::NotADirectory,
            Err(_) => CwdKind::Missing,
        }
    }

    fn read(&self, roots: Roots<'_>, path: &str) -> Result<String, String> {
        local_fs::read_inside(roots, path)
    }

    fn write(&self, roots: Roots<'_>, path: &str, content: &str) -> Result<(), String> {
        local_fs::write_inside(roots, path, content)
    }

    fn save_session(&self, cwd: &str, history: &mut SessionHistory) -> Result<Saved, StoreError> {
        SessionStore::new(cwd, StoreConfig::default()).save(history, Timestamp::now())
    }

    fn load_session(&self, cwd: &str, id: Option<&str>) -> Result<Loaded, StoreError> {
        let store = SessionStore::new(cwd, StoreConfig::default());
        match id {
            Some(id) => store.load(id),
            None => store.load_latest(),
        }
    }

    fn list_sessions(
        &self,
        request: &ListSessionsRequest,
        known_cwds: &[PathBuf],
    ) -> Result<SessionPage, StoreError> {
        list_sessions(request, known_cwds, DEFAULT_PAGE_SIZE)
    }

    fn delete_session(&self, cwd: &str, id: &str) -> Result<Deleted, StoreError> {
        SessionStore::new(cwd, StoreConfig::default()).delete(id)
    }
}

/// Runs the agent with `backend` on stdin/stdout until the client goes away or a signal
/// ends it. `sessions` opens sessions with the backend's model; `model` serves the backend's
/// model calls.
pub fn run<B: Backend>(
    backend: B,
    sessions: SessionTable,
    model: Rc<dyn ModelClient>,
    options: &AgentOptions,
    log: &LogSink,
) -> io::Result<()> {
    let config = agent_config(backend.title());
    let mut app = AgentApp::new(config, backend, RealWorkspace, sessions);
    if let Some(selector) = &options.resume {
        app.resume_first_session(selector.clone());
    }
    let executor = smol::LocalExecutor::new();
    let jobs = Jobs::new(&executor, model);
    smol::block_on(executor.run(serve(app, jobs, log)))
}

/// The jobs running for turns, and the channel their replies come through; and the MCP
/// servers of each session, which the jobs call.
struct Jobs<'ex> {
    executor: &'ex smol::LocalExecutor<'static>,
    model: Rc<dyn ModelClient>,
    running: HashMap<JobId, smol::Task<()>>,
    sender: smol::channel::Sender<(JobId, Reply)>,
    replies: smol::channel::Receiver<(JobId, Reply)>,
    /// Running MCP servers by session; dropping one kills its process group.
    mcp: HashMap<String, Vec<Arc<McpClient>>>,
    /// Sessions whose servers are starting: dropping the task stops them.
    mcp_starting: HashMap<String, smol::Task<()>>,
    mcp_sender: smol::channel::Sender<(String, mcp::session::Started)>,
    mcp_started: smol::channel::Receiver<(String, mcp::session::Started)>,
    /// Per session, the tasks that list a server's tools again when it says they changed.
    mcp_watchers: HashMap<String, Vec<smol::Task<()>>>,
    /// Tool lists read again: (session, server, tools), sent before the call's answer.
    relisted_sender: smol::channel::Sender<Relisted>,
    relisted: smol::channel::Receiver<Relisted>,
    /// How long one MCP tool call may take (R-MCP-11).
    mcp_call_timeout: Duration,
}

/// A server's tools, listed again: session, server, tools (R-MCP-5).
type Relisted = (String, String, Vec<mcp::Tool>);

impl<'ex> Jobs<'ex> {
    fn new(executor: &'ex smol::LocalExecutor<'static>, model: Rc<dyn ModelClient>) -> Self {
        // Unbounded: a model's events are handed over from a callback that cannot wait. The
        // loop reads them only while the outbox has room, and a turn's stream is finite.
        let (sender, replies) = smol::channel::unbounded();
        let (mcp_sender, mcp_started) = smol::channel::unbounded();
        let (relisted_sender, relisted) = smol::channel::unbounded();
        Self {
            executor,
            model,
            running: HashMap::new(),
            sender,
            replies,
            mcp: HashMap::new(),
            mcp_starting: HashMap::new(),
            mcp_sender,
            mcp_started,
            mcp_watchers: HashMap::new(),
            relisted_sender,
            relisted,
            mcp_call_timeout: mcp::session::call_timeout(|name| std::env::var(name).ok()),
        }
    }

    /// The session's servers run: each gets a task that lists its tools again when it says
    /// they changed between calls (during a call, the call's job does it, R-MCP-5).
    fn watch_mcp(&mut self, session: &str, clients: &[Arc<McpClient>]) {
        let watchers = clients
            .iter()
            .map(|client| {
                // Weak: a watcher must not keep its server running once the session lets
                // it go (R-MCP-8).
                let changes = client.tools_changed();
                let client = Arc::downgrade(client);
                let sender = self.relisted_sender.clone();
                let session = session.to_owned();
                self.executor.spawn(async move {
                    while changes.recv().await.is_ok() {
                        let Some(client) = client.upgrade() else {
                            return;
                        };
                        let relisted = async |tools| {
                            let relisted = (session.clone(), client.name().to_owned(), tools);
                            let _ = sender.send(relisted).await;
                        };
                        mcp::session::relist_if_changed(&client, relisted).await;
                    }
                })
            })
            .collect();
        self.mcp_watchers.insert(session.to_owned(), watchers);
    }

    /// Starts a session's MCP servers (replacing any it had).
    fn start_mcp(&mut self, session: String, cwd: String, servers: Vec<McpServer>) {
        self.stop_mcp(&session);
        let sender = self.mcp_sender.clone();
        let owner = session.clone();
        let task = self.executor.spawn(async move {
            let started = mcp::session::start_all(servers, cwd, mcp::session::START_TIMEOUT).await;
            let _ = sender.send((owner, started)).await;
        });
        self.mcp_starting.insert(session, task);
    }

    /// Stops a session's MCP servers, started or starting (R-MCP-8).
    fn stop_mcp(&mut self, session: &str) {
        self.mcp_starting.remove(session);
        self.mcp_watchers.remove(session);
        if let Some(clients) = self.mcp.remove(session) {
            tracing::info!(session, servers = clients.len(), "MCP servers stopped");
        }
    }

    /// Starts a job, or drops one whose turn is over.
    fn take(&mut self, job: Job) {
        let sender = self.sender.clone();
        let (id, task) = match job {
            Job::Abort(id) => {
                if self.running.remove(&id).is_some() {
                    tracing::debug!(?id, "job aborted");
                }
                return;
            }
            Job::Model { id, request } => {
                let model = Rc::clone(&self.model);
                let task = self.executor.spawn(async move {
                    let events = sender.clone();
                    let mut on_event = move |event| {
                        // Unbounded: fails only when the loop is gone.
                        let _ = events.try_send((id, Reply::ModelEvent(event)));
                    };
                    let done = model.stream(&request, &mut on_event).await;
                    if let Err(error) = &done {
                        tracing::info!(%error, "model request failed");
                    }
                    let _ = sender.send((id, Reply::ModelDone(done))).await;
                });
                (id, task)
            }
            Job::Shell {
                id,
                command,
                cwd,
                timeout_ms,
            } => {
                let task = self.executor.spawn(async move {
                    let timeout = Duration::from_millis(timeout_ms);
                    let outcome = shell::run(&command, &cwd, timeout).await;
                    let _ = sender.send((id, Reply::ShellDone(outcome))).await;
                });
                (id, task)
            }
            Job::Explore { id, explore } => {
                let task = self.executor.spawn(async move {
                    let found = smol::unblock(move || explore::explore(&explore)).await;
                    let _ = sender.send((id, Reply::Explored(found))).await;
                });
                (id, task)
            }
            Job::Mcp {
                id,
                session,
                server,
                tool,
                arguments,
            } => {
                let client = self
                    .mcp
                    .get(&session)
                    .and_then(|clients| clients.iter().find(|c| c.name() == server))
                    .cloned();
                let timeout = self.mcp_call_timeout;
                let relisted = self.relisted_sender.clone();
                // Dropping this task (the turn was cancelled) drops the call, which sends
                // `notifications/cancelled` (R-MCP-7).
                let task = self.executor.spawn(async move {
                    let done = match client {
                        Some(client) => {
                            // A changed list goes before the answer: the turn's next
                            // model request has it.
                            let on_relist = async |tools| {
                                let _ = relisted.send((session, server.clone(), tools)).await;
                            };
                            mcp::session::call_with_timeout(
                                &client, &tool, arguments, timeout, on_relist,
                            )
                            .await
                            .map_err(|e| format!("MCP server '{server}': {e}"))
                        }
                        None => Err(format!("no MCP server '{server}' runs in this session")),
                    };
                    let _ = sender.send((id, Reply::McpDone(done))).await;
                });
                (id, task)
            }
        };
        self.running.insert(id, task);
    }

    /// A job answered for the last time: its task is done.
    fn answered(&mut self, id: JobId, reply: &Reply) {
        if !matches!(reply, Reply::ModelEvent(_)) {
            self.running.remove(&id);
        }
    }
}

/// What woke the loop.
enum Wake {
    Read(io::Result<usize>),
    Wrote(io::Result<usize>),
    Flushed(io::Result<()>),
    Deadline,
    Signal,
    Job(JobId, Reply),
    McpStarted(String, mcp::session::Started),
    McpRelisted(Relisted),
}

async fn serve<B: Backend, W: Workspace>(
    mut app: AgentApp<B, W>,
    mut jobs: Jobs<'_>,
    log: &LogSink,
) -> io::Result<()> {
    let clock = HostClock::new();
    let mut stdin = smol::Unblock::with_capacity(READ_CHUNK, io::stdin());
    let mut stdout = smol::Unblock::with_capacity(READ_CHUNK, io::stdout());
    let mut signals =
        async_signal::Signals::new([async_signal::Signal::Term, async_signal::Signal::Int])?;
    let mut read_buf = vec![0u8; READ_CHUNK];
    // Input the connection has not taken yet (backpressure).
    let mut carry: Vec<u8> = Vec::new();
    // Output taken from the outbox, being written.
    let mut out: Vec<u8> = Vec::new();
    let mut written = 0;
    let mut unflushed = false;
    let mut input_open = true;
    // When the connection closed: the last bytes get CLOSE_GRACE to go out.
    let mut closed_at: Option<std::time::Instant> = None;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "agent started");
    loop {
        let now = clock.now();
        if !carry.is_empty() {
            let taken = app.handle_bytes(now, &carry);
            carry.drain(..taken);
        } else if app.is_input_held() {
            app.handle_bytes(now, &[]);
        }
        if app.poll_timeout().is_some_and(|at| at <= now) {
            app.handle_timeout(now);
        }
        app.pump(now);
        while let Some(notice) = app.poll_notice() {
            match notice {
                Notice::FirstSession { cwd } => log.open_in(&cwd),
                Notice::McpStart {
                    session,
                    cwd,
                    servers,
                } => jobs.start_mcp(session, cwd, servers),
                Notice::McpStop { session } => jobs.stop_mcp(&session),
            }
        }
        while let Some(job) = app.poll_job() {
            jobs.take(job);
        }
        if written == out.len() {
            out.clear();
            written = 0;
            let pending = app.poll_transmit();
            if !pending.is_empty() {
                out.extend_from_slice(pending);
                let n = pending.len();
                app.transmitted(n);
                // Room again: let paused turns fill the outbox while this buffer is written.
                app.pump(now);
            }
        }
        if app.is_closed() {
            if written == out.len() && app.poll_transmit().is_empty() && !unflushed {
                break;
            }
            closed_at.get_or_insert_with(std::time::Instant::now);
        }

        let want_read = input_open && carry.is_empty() && !app.is_input_held();
        let deadline = app.poll_timeout();
        let read = async {
            if want_read {
                Wake::Read(stdin.read(&mut read_buf).await)
            } else {
                std::future::pending().await
            }
        };
        let write = async {
            if written < out.len() {
                Wake::Wrote(stdout.write(&out[written..]).await)
            } else if unflushed {
                Wake::Flushed(stdout.flush().await)
            } else {
                std::future::pending().await
            }
        };
        let wake_at = match (deadline.map(|at| clock.wall_time_of(at)), closed_at) {
            (Some(at), Some(closed)) => Some(at.min(closed + CLOSE_GRACE)),
            (at, closed) => at.or(closed.map(|c| c + CLOSE_GRACE)),
        };
        let timer = async {
            match wake_at {
                Some(at) => {
                    smol::Timer::at(at).await;
                    Wake::Deadline
                }
                None => std::future::pending().await,
            }
        };
        let signal = async {
            match signals.next().await {
                Some(_) => Wake::Signal,
                None => std::future::pending().await,
            }
        };
        // A job's reply becomes updates: taken only while the outbox has room for them.
        let want_job = !jobs.running.is_empty() && app.has_room_for_updates();
        let job = async {
            if want_job && let Ok((id, reply)) = jobs.replies.recv().await {
                Wake::Job(id, reply)
            } else {
                std::future::pending().await
            }
        };
        let want_mcp = !jobs.mcp_starting.is_empty() && app.has_room_for_updates();
        let mcp_started = async {
            if want_mcp && let Ok((session, started)) = jobs.mcp_started.recv().await {
                Wake::McpStarted(session, started)
            } else {
                std::future::pending().await
            }
        };
        // Polled before the jobs: a list read again during a call is sent before the call's
        // answer, so the turn has it before it builds its next model request.
        let relisted = async {
            match jobs.relisted.recv().await {
                Ok(relisted) => Wake::McpRelisted(relisted),
                Err(_) => std::future::pending().await,
            }
        };
        let wake = write
            .or(read)
            .or(timer)
            .or(signal)
            .or(relisted)
            .or(job)
            .or(mcp_started)
            .await;

        let now = clock.now();
        match wake {
            Wake::Read(Ok(0)) | Wake::Read(Err(_)) => {
                tracing::info!("stdin closed");
                input_open = false;
                app.handle_eof(now);
            }
            Wake::Read(Ok(n)) => {
                let taken = app.handle_bytes(now, &read_buf[..n]);
                carry.extend_from_slice(&read_buf[taken..n]);
            }
            Wake::Wrote(Ok(n)) => {
                written += n;
                unflushed = true;
            }
            Wake::Flushed(Ok(())) => unflushed = false,
            Wake::Wrote(Err(error)) | Wake::Flushed(Err(error)) => {
                // The client is gone: nothing more can reach it.
                tracing::info!(%error, "stdout closed");
                crate::stdout::note_error(&error);
                app.handle_eof(now);
                return Ok(());
            }
            Wake::Deadline if closed_at.is_some_and(|c| c.elapsed() >= CLOSE_GRACE) => {
                tracing::warn!(
                    unwritten = out.len() - written,
                    "the client stopped reading; exiting without the last bytes"
                );
                break;
            }
            Wake::Deadline => app.handle_timeout(now),
            Wake::Job(id, reply) => {
                jobs.answered(id, &reply);
                app.job_reply(now, id, reply);
            }
            Wake::McpStarted(session, started) => {
                jobs.mcp_starting.remove(&session);
                let mcp::session::Started {
                    clients,
                    tools,
                    failures,
                } = started;
                if app.mcp_started(now, &session, tools, failures) {
                    jobs.watch_mcp(&session, &clients);
                    jobs.mcp.insert(session, clients);
                }
            }
            Wake::McpRelisted((session, server, tools)) => {
                app.mcp_tools_relisted(&session, &server, tools);
            }
            Wake::Signal if app.is_closed() => {
                tracing::info!("second signal: exiting now");
                break;
            }
            Wake::Signal => {
                tracing::info!("signal: shutting down as at EOF");
                input_open = false;
                carry.clear();
                app.handle_eof(now);
            }
        }
    }
    tracing::info!("agent stopped");
    Ok(())
}
