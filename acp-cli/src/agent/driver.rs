//! The driver of `acp-cli --acp --stdio`: what the agent does besides the protocol, on
//! acp-async's pump.
//!
//! The byte, time and event loop is [`acp_async::pump::Pump`], the one drive loop of the
//! workspace: it writes out what the connection has ready and flushes, reads stdin only while
//! the connection takes input and feeds one request line per `handle_bytes`, fires the
//! deadlines, feeds EOF and closes. The connection it drives is the sans-IO [`AgentApp`]
//! ([`AppConnection`]); its notices and jobs are the events this driver ([`Agent`]) handles.
//!
//! Backpressure: turns step only while the outbox is under its high-water mark, job replies
//! are taken only then, and the pump reads stdin only while the connection takes input. A
//! client that stops reading therefore stops the agent with bounded memory: the outbox and
//! the pipes' buffers.
//!
//! Shutdown: stdin EOF, SIGTERM and SIGINT all end the same way ([`Shared::end_input`] for a
//! signal): running turns are answered `cancelled`, pending requests settled, the last bytes
//! written and the process exits 0. The last bytes get [`CLOSE_GRACE`]; a second signal
//! gives up on them at once ([`Shared::stop`]).
//!
//! Jobs: the work a turn hands out ([`Job`]: a model's stream, a shell command, a look at the
//! tree) runs as a task on the loop's executor and answers through a channel the driver polls
//! in the pump. When the turn ends first (a cancel), the app says so and the task is
//! dropped: the model's connection closes unread, the shell's process group is killed.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use acp_async::Runtime;
use acp_async::pump::{Driver, Pump, Shared};
use acp_async::smol::Smol;
use acp_core::schema::McpServer;
use smol::io::AsyncRead;
use smol::stream::{Stream, StreamExt};

use super::app::{AgentApp, Job, JobId, Notice, Workspace, agent_config};
use super::backend::{Backend, Reply};
use super::connection::{AppConnection, AppEvent};
use super::logging::LogSink;
use super::sessions::SessionTable;
use super::workspace::RealWorkspace;
use super::{explore, shell};
use crate::mcp::{self, McpClient};
use crate::model::ModelClient;

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

/// Runs the agent with `backend` on stdin/stdout until the client goes away or a signal
/// ends it. `sessions` opens sessions with the backend's model; `model` serves the backend's
/// model calls.
pub fn run<B: Backend + 'static>(
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
    replies: Channel<(JobId, Reply)>,
    /// Running MCP servers by session; dropping one kills its process group.
    mcp: HashMap<String, Vec<Arc<McpClient>>>,
    /// Sessions whose servers are starting: dropping the task stops them.
    mcp_starting: HashMap<String, smol::Task<()>>,
    mcp_sender: smol::channel::Sender<(String, mcp::session::Started)>,
    mcp_started: Channel<(String, mcp::session::Started)>,
    /// Per session, the tasks that list a server's tools again when it says they changed.
    mcp_watchers: HashMap<String, Vec<smol::Task<()>>>,
    /// Tool lists read again: (session, server, tools), sent before the call's answer.
    relisted_sender: smol::channel::Sender<Relisted>,
    relisted: Channel<Relisted>,
    /// How long one MCP tool call may take (R-MCP-11).
    mcp_call_timeout: Duration,
}

/// A server's tools, listed again: session, server, tools (R-MCP-5).
type Relisted = (String, String, Vec<mcp::Tool>);

/// A channel's receiving end, polled by the driver as a stream.
type Channel<T> = Pin<Box<smol::channel::Receiver<T>>>;

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
            replies: Box::pin(replies),
            mcp: HashMap::new(),
            mcp_starting: HashMap::new(),
            mcp_sender,
            mcp_started: Box::pin(mcp_started),
            mcp_watchers: HashMap::new(),
            relisted_sender,
            relisted: Box::pin(relisted),
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

type SharedApp<B, W> = Rc<Shared<AppConnection<B, W>>>;

/// acp-cli's side of the pump: notices and jobs from the application, job replies and MCP
/// news back into it, and the grace the last bytes get once the connection has closed.
struct Agent<'a, B, W> {
    shared: SharedApp<B, W>,
    jobs: Jobs<'a>,
    log: &'a LogSink,
    /// Started once the connection has closed: stops the pump after [`CLOSE_GRACE`].
    grace: Option<smol::Task<()>>,
}

impl<B: Backend + 'static, W: Workspace + 'static> Driver<AppConnection<B, W>> for Agent<'_, B, W> {
    fn on_event(&mut self, _: &SharedApp<B, W>, event: AppEvent) {
        match event {
            AppEvent::Notice(Notice::FirstSession { cwd }) => self.log.open_in(&cwd),
            AppEvent::Notice(Notice::McpStart {
                session,
                cwd,
                servers,
            }) => self.jobs.start_mcp(session, cwd, servers),
            AppEvent::Notice(Notice::McpStop { session }) => self.jobs.stop_mcp(&session),
            AppEvent::Job(job) => self.jobs.take(job),
        }
    }

    /// Takes what the jobs and the MCP servers sent, until none has more (each channel then
    /// wakes the pump when it does).
    fn poll_work(&mut self, cx: &mut Context<'_>) {
        let shared = &self.shared;
        let jobs = &mut self.jobs;
        loop {
            // A list read again during a call goes in before the call's answer, so the turn
            // has it before it builds its next model request.
            while let Poll::Ready(Some((session, server, tools))) =
                jobs.relisted.as_mut().poll_next(cx)
            {
                shared.with(|c| c.app.mcp_tools_relisted(&session, &server, tools));
            }
            // A job's reply becomes updates: taken only while the outbox has room for them
            // (the pump wakes this again once it has written).
            let room = shared.borrow().app.has_room_for_updates();
            let mut moved = false;
            if room
                && !jobs.running.is_empty()
                && let Poll::Ready(Some((id, reply))) = jobs.replies.as_mut().poll_next(cx)
            {
                jobs.answered(id, &reply);
                shared.with(|c| c.app.job_reply(shared.now(), id, reply));
                moved = true;
            }
            if room
                && !jobs.mcp_starting.is_empty()
                && let Poll::Ready(Some((session, started))) =
                    jobs.mcp_started.as_mut().poll_next(cx)
            {
                jobs.mcp_starting.remove(&session);
                let mcp::session::Started {
                    clients,
                    tools,
                    failures,
                } = started;
                let now = shared.now();
                if shared.with(|c| c.app.mcp_started(now, &session, tools, failures)) {
                    jobs.watch_mcp(&session, &clients);
                    jobs.mcp.insert(session, clients);
                }
                shared.with(|c| c.app.pump(now));
                moved = true;
            }
            if !moved {
                break;
            }
        }
        if self.grace.is_none() && shared.borrow().app.is_closed() {
            let shared = Rc::clone(shared);
            self.grace = Some(self.jobs.executor.spawn(async move {
                smol::Timer::after(CLOSE_GRACE).await;
                tracing::warn!(
                    unwritten = shared.borrow().app.poll_transmit().len(),
                    "the client stopped reading; exiting without the last bytes"
                );
                shared.stop();
            }));
        }
    }
}

/// stdin, saying when it ends; a read error ends it too (so every error the pump returns is
/// stdout's).
struct Stdin(smol::Unblock<io::Stdin>);

impl AsyncRead for Stdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.0).poll_read(cx, buf) {
            Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => {
                tracing::info!("stdin closed");
                Poll::Ready(Ok(0))
            }
            other => other,
        }
    }
}

async fn serve<B: Backend + 'static, W: Workspace + 'static>(
    app: AgentApp<B, W>,
    jobs: Jobs<'_>,
    log: &LogSink,
) -> io::Result<()> {
    let clock = Smol::new();
    let shared = Shared::new(AppConnection { app, clock }, &clock);
    let mut signals =
        async_signal::Signals::new([async_signal::Signal::Term, async_signal::Signal::Int])?;
    // SIGTERM and SIGINT end the input as EOF does; a second one, or one once the connection
    // has closed, gives up on the last bytes.
    let _signals = jobs.executor.spawn({
        let shared = Rc::clone(&shared);
        async move {
            while signals.next().await.is_some() {
                if shared.is_input_ended() || shared.borrow().app.is_closed() {
                    tracing::info!("second signal: exiting now");
                    shared.stop();
                    return;
                }
                tracing::info!("signal: shutting down as at EOF");
                shared.end_input();
            }
        }
    });
    let stdin = Stdin(smol::Unblock::with_capacity(READ_CHUNK, io::stdin()));
    let stdout = smol::Unblock::with_capacity(READ_CHUNK, io::stdout());
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "agent started");
    if let Err(error) = pump(&shared, jobs, log, stdin, stdout).await {
        // The client is gone: nothing more can reach it (R-PROC-3).
        tracing::info!(%error, "stdout closed");
        crate::stdout::note_error(&error);
        shared.with(|c| c.app.handle_eof(clock.now()));
        return Ok(());
    }
    tracing::info!("agent stopped");
    Ok(())
}

/// The agent's pump on any byte pipe: requests in as lines, answers out as lines.
async fn pump<B, W, Rd, Wr>(
    shared: &SharedApp<B, W>,
    jobs: Jobs<'_>,
    log: &LogSink,
    reader: Rd,
    writer: Wr,
) -> io::Result<()>
where
    B: Backend + 'static,
    W: Workspace + 'static,
    Rd: AsyncRead + Unpin,
    Wr: smol::io::AsyncWrite + Unpin,
{
    let clock = Smol::new();
    let agent = Agent {
        shared: Rc::clone(shared),
        jobs,
        log,
        grace: None,
    };
    let mut pump = Pump::new(Rc::clone(shared), agent, clock, reader, writer);
    (&mut pump).await
}

/// One agent connection of `acp-cli --acp --listen` on an in-memory pipe: a fresh
/// application with `backend` and `sessions`, its jobs on `executor` (shared by every
/// connection of the server). Ends when the input ends and the last lines are written, or
/// when the writer fails (the network connection is gone: the application then sees EOF, so
/// its sessions are saved as at a stdio agent's EOF).
pub async fn serve_pipe<B, Rd, Wr>(
    executor: &'static smol::LocalExecutor<'static>,
    backend: B,
    sessions: SessionTable,
    model: Rc<dyn ModelClient>,
    log: &LogSink,
    reader: Rd,
    writer: Wr,
) where
    B: Backend + 'static,
    Rd: AsyncRead + Unpin,
    Wr: smol::io::AsyncWrite + Unpin,
{
    let config = agent_config(backend.title());
    let app = AgentApp::new(config, backend, RealWorkspace, sessions);
    let jobs = Jobs::new(executor, model);
    let clock = Smol::new();
    let shared = Shared::new(AppConnection { app, clock }, &clock);
    if let Err(error) = pump(&shared, jobs, log, reader, writer).await {
        tracing::info!(%error, "network connection gone");
        shared.with(|c| c.app.handle_eof(clock.now()));
    }
}
