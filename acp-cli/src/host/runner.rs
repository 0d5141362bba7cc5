//! Carrying out a [`Supervisor`]'s decisions on real processes.
//!
//! The [`AgentRunner`] owns the supervisor, the agent processes and the clock. It is the only
//! place in the host that spawns, signals and waits:
//!
//! - after every input it drains [`Supervisor::poll_action`]: `Spawn`, `CloseStdin`,
//!   `Terminate` and `KillProcessGroup` are done at once (a spawn's outcome is fed straight
//!   back as `Spawned` / `SpawnFailed`); what concerns the connection (`BeginHandshake`,
//!   `DropConnection`, `CancelTurn`), notices and abandoned questions become [`RunnerEvent`]s
//!   for the connection glue;
//! - [`AgentRunner::next_event`] waits for whichever comes first, a process event or the next
//!   deadline (a smol timer), feeds it in and returns what came out;
//! - the glue reports the handshake and turns through [`AgentRunner::handle`]
//!   (`HandshakeStarted`, `HandshakeOk`, `HandshakeFailed`, `PromptStarted`, `PromptEnded`)
//!   and writes requests with [`AgentRunner::write_stdin`].
//!
//! # Driver decisions
//!
//! - **stdout EOF waits for the exit.** Pipes closing and the process exiting arrive on
//!   separate tasks in either order. An EOF is held for up to [`EOF_EXIT_GRACE`]; if the exit
//!   comes meanwhile only the exit is fed, so a crash is classified by its real status (a
//!   signal death is fatal) instead of as "pipes broke, process alive".
//! - **stdout of a stale process is dropped**: bytes are delivered only while their process is
//!   the server's current one and the server is not stopping (its connection is gone).
//! - **A process group does not outlive its leader.** When an agent's exit arrives, its group
//!   is sent SIGKILL at once, whatever the exit was: an agent that leaves at stdin EOF, as it
//!   should, would otherwise leave behind the grandchildren it started (the lifecycle only
//!   kills the group when the agent needed SIGTERM or SIGKILL). Signalling a group right after
//!   reaping its leader is safe: while members remain, the group id cannot be reused, and
//!   with none left the kill finds nothing.
//! - **Shorter stop waits** ([`StopTimings`]): the runner waits its own time, then jumps the
//!   clock to the lifecycle's deadline ([`HostClock`]). The jump moves every server's clock,
//!   so shortened timings also bring other servers' deadlines closer; the defaults (the spec
//!   values) never jump.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use acp_host::supervisor::config::AcpConfig;
use acp_host::supervisor::interaction::Interaction;
use acp_host::supervisor::lifecycle::{
    Action, Input, KILL_GRACE_MS, Notice, STDIN_CLOSE_GRACE_MS, ServerState, TERMINATE_GRACE_MS,
};
use acp_host::supervisor::recovery::ExitStatus;
use acp_host::supervisor::{Instant, Supervisor, SupervisorError};
use smol::channel::{Receiver, Sender};
use smol::future::FutureExt as _;

use super::clock::HostClock;
use acp_conform::process::{AgentCommand, AgentProcess, ProcessEvent, ProcessKey};

/// How long a stdout EOF is held back waiting for the process's exit (see the module docs).
pub(crate) const EOF_EXIT_GRACE: Duration = Duration::from_millis(100);

/// Room in the process-event channel; a full channel makes the pipe readers wait.
const EVENT_CHANNEL_CAPACITY: usize = 256;

/// The waits of the stop sequence. The defaults are the spec's (5 s, 5 s, 2 s); a value above
/// the spec's is treated as the spec's (the lifecycle's own deadline comes first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopTimings {
    /// After closing stdin, before SIGTERM.
    pub stdin_close_grace: Duration,
    /// After SIGTERM, before SIGKILL of the process group.
    pub terminate_grace: Duration,
    /// After SIGKILL, before giving up on the exit.
    pub kill_grace: Duration,
}

impl Default for StopTimings {
    fn default() -> Self {
        StopTimings {
            stdin_close_grace: Duration::from_millis(STDIN_CLOSE_GRACE_MS),
            terminate_grace: Duration::from_millis(TERMINATE_GRACE_MS),
            kill_grace: Duration::from_millis(KILL_GRACE_MS),
        }
    }
}

impl StopTimings {
    /// The same wait for every step (for tests).
    pub fn uniform(wait: Duration) -> Self {
        StopTimings {
            stdin_close_grace: wait,
            terminate_grace: wait,
            kill_grace: wait,
        }
    }
}

/// What the connection glue (or the REPL) must act on.
#[derive(Debug)]
pub enum RunnerEvent<T> {
    /// Bytes from the server's stdout, for its connection.
    Stdout {
        /// The server.
        server: String,
        /// The bytes, as read.
        bytes: Vec<u8>,
    },
    /// The server's process is running: open a connection on its pipes, send `initialize`
    /// and `session/new`, and report `HandshakeStarted`, then `HandshakeOk` or
    /// `HandshakeFailed`, through [`AgentRunner::handle`].
    BeginHandshake {
        /// The server.
        server: String,
    },
    /// The server's connection is unusable: close it, failing its pending requests now.
    DropConnection {
        /// The server.
        server: String,
    },
    /// Send `session/cancel` for the server's running turn.
    CancelTurn {
        /// The server.
        server: String,
    },
    /// Something to show or log.
    Notice {
        /// The server.
        server: String,
        /// What happened.
        notice: Notice,
    },
    /// A process of the server ended (for logs; the supervisor already knows).
    ProcessExited {
        /// The server.
        server: String,
        /// The process.
        pid: u32,
        /// How it ended.
        status: ExitStatus,
    },
    /// A question whose turn or server went away: answer it as cancelled.
    Abandoned(Interaction<T>),
}

/// A process the runner spawned, until all its streams and its exit are reported.
#[derive(Debug)]
struct Tracked {
    server: String,
    process: AgentProcess,
    /// stdout, stderr and the exit, each until reported.
    open: u8,
}

/// The supervisor on real processes; see the module docs. `T` is the glue's ticket for
/// answering a question (see [`Supervisor`]).
#[derive(Debug)]
pub struct AgentRunner<T> {
    supervisor: Supervisor<T>,
    project_root: PathBuf,
    host_env: Vec<(String, String)>,
    timings: StopTimings,
    clock: HostClock,
    processes: BTreeMap<ProcessKey, Tracked>,
    next_key: u64,
    events_tx: Sender<(ProcessKey, ProcessEvent)>,
    events_rx: Receiver<(ProcessKey, ProcessEvent)>,
    out: VecDeque<RunnerEvent<T>>,
    /// Per server: when to end the current (shortened) stop-sequence wait.
    stop_waits: BTreeMap<String, std::time::Instant>,
    /// stdout EOFs held back until this time (see [`EOF_EXIT_GRACE`]).
    held_eofs: BTreeMap<ProcessKey, std::time::Instant>,
    last_activity: BTreeMap<String, Instant>,
}

impl<T> AgentRunner<T> {
    /// A runner for the servers of `config`, all `configured`. Relative `cwd`s resolve against
    /// `project_root`; children get [`child_env`](acp_host::supervisor::env::child_env) of
    /// `host_env`. `seed` varies the interaction ids.
    pub fn new(
        config: &AcpConfig,
        project_root: &Path,
        host_env: Vec<(String, String)>,
        timings: StopTimings,
        seed: u32,
    ) -> Self {
        let (events_tx, events_rx) = smol::channel::bounded(EVENT_CHANNEL_CAPACITY);
        AgentRunner {
            supervisor: Supervisor::new(config, seed),
            project_root: project_root.to_path_buf(),
            host_env,
            timings,
            clock: HostClock::new(),
            processes: BTreeMap::new(),
            next_key: 0,
            events_tx,
            events_rx,
            out: VecDeque::new(),
            stop_waits: BTreeMap::new(),
            held_eofs: BTreeMap::new(),
            last_activity: BTreeMap::new(),
        }
    }

    /// The supervisor's current time.
    pub(crate) fn now(&self) -> Instant {
        self.clock.now()
    }

    /// The supervisor, to read states, configs, the stderr rings and the questions.
    pub fn supervisor(&self) -> &Supervisor<T> {
        &self.supervisor
    }

    /// The project root relative `cwd`s resolve against.
    pub(crate) fn project_root(&self) -> &Path {
        &self.project_root
    }

    /// When server `name`'s process last wrote anything.
    pub(crate) fn last_activity(&self, name: &str) -> Option<Instant> {
        self.last_activity.get(name).copied()
    }

    /// The pid of every process spawned and not yet fully reported (exit and both pipes),
    /// with its server.
    pub fn tracked_processes(&self) -> impl Iterator<Item = (&str, u32)> {
        self.processes
            .values()
            .map(|t| (t.server.as_str(), t.process.pid()))
    }

    /// Feeds `input` to server `name` and carries out what follows (a `Start` spawns before
    /// this returns).
    pub fn handle(&mut self, name: &str, input: Input<'_>) -> Result<(), SupervisorError> {
        let now = self.clock.now();
        let result = self.supervisor.handle(now, name, input);
        self.drain();
        result
    }

    /// Runs `f` on the supervisor at the current time, then carries out what follows: for
    /// `open_interaction`, `resolve_interaction`, `start_auto`, the inbox.
    pub(crate) fn update<R>(&mut self, f: impl FnOnce(&mut Supervisor<T>, Instant) -> R) -> R {
        let now = self.clock.now();
        let result = f(&mut self.supervisor, now);
        self.drain();
        result
    }

    /// The next event already waiting, without waiting.
    pub fn poll_event(&mut self) -> Option<RunnerEvent<T>> {
        self.out.pop_front()
    }

    /// The next event, waiting for processes and deadlines as needed; `None` when nothing can
    /// happen any more (no process, no deadline).
    pub async fn next_event(&mut self) -> Option<RunnerEvent<T>> {
        // Each pass handles one process event or deadline; it ends when one produces an event
        // or when nothing is left to wait for.
        loop {
            if let Some(event) = self.out.pop_front() {
                return Some(event);
            }
            if !self.step().await {
                return None;
            }
        }
    }

    /// Runs until `done` holds (checked before each wait) or nothing can happen any more;
    /// events meanwhile are kept for [`AgentRunner::next_event`]. Returns whether `done`
    /// held.
    pub async fn run_until(&mut self, mut done: impl FnMut(&Supervisor<T>) -> bool) -> bool {
        // Bounded by the processes and deadlines: every pass consumes one of them.
        loop {
            if done(&self.supervisor) {
                return true;
            }
            if !self.step().await {
                return done(&self.supervisor);
            }
        }
    }

    /// Writes `bytes` to server `name`'s current process (the connection's outgoing
    /// messages).
    pub async fn write_stdin(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let pid = self.supervisor.server(name).and_then(|l| l.pid());
        let tracked = pid.and_then(|pid| {
            self.processes
                .values_mut()
                .find(|t| t.server == name && t.process.pid() == pid && !t.process.has_exited())
        });
        match tracked {
            Some(tracked) => tracked.process.write_stdin(bytes).await,
            None => Err(io::Error::new(
                io::ErrorKind::NotConnected,
                format!("server '{name}' has no running process"),
            )),
        }
    }

    /// Stops every server with the full stop sequence and waits until none is left running
    /// (each exit kills its group, see the module docs). Then the group of any process still
    /// tracked (its exit not seen yet, or a pipe still open) is killed, and the rest waited for
    /// up to the kill grace. Returns the events that came up meanwhile, stdout excepted.
    pub(crate) async fn stop_all(&mut self) -> Vec<RunnerEvent<T>> {
        self.update(|s, now| s.stop_all(now));
        self.run_until(|s| s.servers().all(|(_, l)| at_rest(l.state(), l.pid())))
            .await;
        for tracked in self.processes.values() {
            if let Err(e) = tracked.process.kill_group() {
                tracing::warn!(server = %tracked.server, "kill of process group failed: {e}");
            }
        }
        let give_up = std::time::Instant::now() + self.timings.kill_grace;
        while !self.processes.is_empty() {
            let event = self.events_rx.recv().or(async {
                smol::Timer::at(give_up).await;
                Err(smol::channel::RecvError)
            });
            match event.await {
                Ok((key, event)) => self.on_process_event(key, event),
                Err(_) => break,
            }
        }
        self.out
            .drain(..)
            .filter(|e| !matches!(e, RunnerEvent::Stdout { .. }))
            .collect()
    }

    /// Waits for one process event or deadline and handles it; `false` if there is nothing to
    /// wait for.
    async fn step(&mut self) -> bool {
        let wake = self.next_wake();
        if wake.is_none() && self.processes.is_empty() {
            return false;
        }
        let events = self.events_rx.clone();
        let event = async { Some(events.recv().await) }
            .or(async {
                match wake {
                    Some(at) => {
                        smol::Timer::at(at).await;
                        None
                    }
                    None => std::future::pending().await,
                }
            })
            .await;
        match event {
            Some(Ok((key, event))) => self.on_process_event(key, event),
            // The runner holds a sender, so the channel never closes.
            Some(Err(_)) => return false,
            None => self.on_wake(),
        }
        true
    }

    /// The earliest of the supervisor's deadline, the shortened stop waits and the held EOFs.
    fn next_wake(&self) -> Option<std::time::Instant> {
        let deadline = self
            .supervisor
            .poll_timeout()
            .map(|at| self.clock.wall_time_of(at));
        deadline
            .into_iter()
            .chain(self.stop_waits.values().copied())
            .chain(self.held_eofs.values().copied())
            .min()
    }

    fn on_wake(&mut self) {
        let wall = std::time::Instant::now();
        let due_eofs: Vec<ProcessKey> = self
            .held_eofs
            .iter()
            .filter(|(_, at)| **at <= wall)
            .map(|(key, _)| *key)
            .collect();
        for key in due_eofs {
            self.held_eofs.remove(&key);
            if let Some(tracked) = self.processes.get(&key) {
                let (server, pid) = (tracked.server.clone(), tracked.process.pid());
                self.feed(&server, Input::StdoutEof { pid });
            }
        }
        let due_stops: Vec<String> = self
            .stop_waits
            .iter()
            .filter(|(_, at)| **at <= wall)
            .map(|(name, _)| name.clone())
            .collect();
        for name in due_stops {
            self.stop_waits.remove(&name);
            if let Some(deadline) = self.supervisor.server(&name).and_then(|l| l.poll_timeout()) {
                self.clock.skip_to(deadline);
            }
        }
        self.supervisor.handle_timeout(self.clock.now());
        self.drain();
    }

    fn on_process_event(&mut self, key: ProcessKey, event: ProcessEvent) {
        let now = self.clock.now();
        let Some(tracked) = self.processes.get_mut(&key) else {
            return;
        };
        let server = tracked.server.clone();
        let pid = tracked.process.pid();
        match event {
            ProcessEvent::Stdout(bytes) => {
                self.last_activity.insert(server.clone(), now);
                let lifecycle = self.supervisor.server(&server);
                let current = lifecycle
                    .is_some_and(|l| l.pid() == Some(pid) && l.state() != ServerState::Stopping);
                if current {
                    self.out.push_back(RunnerEvent::Stdout { server, bytes });
                }
            }
            ProcessEvent::StdoutEof => {
                tracked.open = tracked.open.saturating_sub(1);
                if !tracked.process.has_exited() {
                    self.held_eofs
                        .insert(key, std::time::Instant::now() + EOF_EXIT_GRACE);
                }
            }
            ProcessEvent::StderrLine(line) => {
                self.last_activity.insert(server.clone(), now);
                tracing::debug!("acp[{server}] stderr: {line}");
                self.feed(&server, Input::StderrLine(&line));
            }
            ProcessEvent::StderrEof => tracked.open = tracked.open.saturating_sub(1),
            ProcessEvent::Exited(status) => {
                tracked.open = tracked.open.saturating_sub(1);
                tracked.process.mark_exited();
                if let Err(e) = tracked.process.kill_group() {
                    tracing::warn!(server = %server, pid, "kill of the exited agent's group failed: {e}");
                }
                // The exit explains the EOF; feeding the EOF as well would change nothing.
                self.held_eofs.remove(&key);
                self.out.push_back(RunnerEvent::ProcessExited {
                    server: server.clone(),
                    pid,
                    status,
                });
                self.feed(&server, Input::Exited { pid, status });
            }
        }
        if self.processes.get(&key).is_some_and(|t| t.open == 0) {
            self.processes.remove(&key);
        }
    }

    /// Feeds an event (never refused) and carries out what follows.
    fn feed(&mut self, server: &str, input: Input<'_>) {
        let now = self.clock.now();
        // Events are never refused, and the server exists: its process is ours.
        let _ = self.supervisor.handle(now, server, input);
        self.drain();
    }

    /// Carries out every pending action, including those that carrying out causes.
    fn drain(&mut self) {
        // Finite: each action is done once, and only a spawn feeds an input back, which
        // yields a bounded number of new actions.
        while let Some((name, action)) = self.supervisor.poll_action() {
            let name = name.to_owned();
            self.execute(&name, action);
        }
        while let Some(interaction) = self.supervisor.poll_abandoned() {
            self.out.push_back(RunnerEvent::Abandoned(interaction));
        }
        let supervisor = &self.supervisor;
        self.stop_waits.retain(|name, _| {
            supervisor
                .server(name)
                .is_some_and(|l| l.state() == ServerState::Stopping)
        });
    }

    fn execute(&mut self, name: &str, action: Action) {
        match action {
            Action::Spawn => self.spawn(name),
            Action::BeginHandshake => self.out.push_back(RunnerEvent::BeginHandshake {
                server: name.to_owned(),
            }),
            Action::CloseStdin { pid } => {
                if let Some(tracked) = self.find_mut(name, pid) {
                    tracked.process.close_stdin();
                }
                self.begin_stop_wait(name, self.timings.stdin_close_grace);
            }
            Action::Terminate { pid } => {
                if let Some(tracked) = self.find_mut(name, pid)
                    && let Err(e) = tracked.process.terminate()
                {
                    tracing::warn!(server = name, pid, "SIGTERM failed: {e}");
                }
                self.begin_stop_wait(name, self.timings.terminate_grace);
            }
            Action::KillProcessGroup { pid } => {
                if let Some(tracked) = self.find_mut(name, pid)
                    && let Err(e) = tracked.process.kill_group()
                {
                    tracing::warn!(server = name, pid, "SIGKILL of the group failed: {e}");
                }
                self.begin_stop_wait(name, self.timings.kill_grace);
            }
            Action::DropConnection => self.out.push_back(RunnerEvent::DropConnection {
                server: name.to_owned(),
            }),
            Action::CancelTurn => self.out.push_back(RunnerEvent::CancelTurn {
                server: name.to_owned(),
            }),
            Action::Notify(notice) => {
                tracing::debug!(server = name, ?notice, "acp server notice");
                self.out.push_back(RunnerEvent::Notice {
                    server: name.to_owned(),
                    notice,
                });
            }
            other => tracing::warn!(server = name, ?other, "unknown supervisor action ignored"),
        }
    }

    /// A shortened wait for the stop step just taken, if the server is stopping.
    fn begin_stop_wait(&mut self, name: &str, wait: Duration) {
        let stopping = self
            .supervisor
            .server(name)
            .is_some_and(|l| l.state() == ServerState::Stopping);
        if stopping {
            self.stop_waits
                .insert(name.to_owned(), std::time::Instant::now() + wait);
        }
    }

    /// The spawned process `pid` of server `name` (the latest, if the pid was reused).
    fn find_mut(&mut self, name: &str, pid: u32) -> Option<&mut Tracked> {
        self.processes
            .values_mut()
            .rev()
            .find(|t| t.server == name && t.process.pid() == pid)
    }

    fn spawn(&mut self, name: &str) {
        let Some(config) = self.supervisor.config(name) else {
            return;
        };
        let command = AgentCommand::for_server(
            config,
            &self.project_root,
            self.host_env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        );
        let key = ProcessKey(self.next_key);
        self.next_key += 1;
        match AgentProcess::spawn(&command, key, self.events_tx.clone()) {
            Ok(process) => {
                let pid = process.pid();
                tracing::debug!(server = name, pid, "acp server spawned");
                self.processes.insert(
                    key,
                    Tracked {
                        server: name.to_owned(),
                        process,
                        open: 3,
                    },
                );
                self.feed(name, Input::Spawned { pid });
            }
            Err(e) => {
                let error = e.to_string();
                self.feed(name, Input::SpawnFailed { error: &error });
            }
        }
    }
}

/// A runner dropped without [`AgentRunner::stop_all`] (an early return, a panic) must not leave
/// agents running with nobody reading their pipes: their groups are killed.
impl<T> Drop for AgentRunner<T> {
    fn drop(&mut self) {
        for tracked in self.processes.values() {
            if let Err(e) = tracked.process.kill_group() {
                tracing::warn!(server = %tracked.server, "kill of process group failed: {e}");
            }
        }
    }
}

/// No process and no stop under way.
fn at_rest(state: ServerState, pid: Option<u32>) -> bool {
    pid.is_none() && state != ServerState::Stopping
}
