//! One server's life: spawn, handshake, turns, questions for the user, crashes and the stop
//! sequence, as a sans-IO state machine.
//!
//! ```text
//! configured → starting → initializing → ready ↔ busy ↔ waiting_for_user → stopping → stopped
//!                  └───────────┴──────────────┴───────┴──────────┴────────→ failed
//! ```
//!
//! # Driving it
//!
//! 1. Feed what happened with [`Lifecycle::handle`] (commands, process and connection
//!    events) or [`Lifecycle::handle_timeout`]. Commands may be refused ([`Refusal`]); events
//!    never are: an event that makes no sense in the current state (a stale exit of an old
//!    process, a late turn end) is ignored.
//! 2. Drain [`Lifecycle::poll_action`] until `None`, carrying out each [`Action`].
//! 3. Call [`Lifecycle::handle_timeout`] at [`Lifecycle::poll_timeout`] (earlier or repeated
//!    calls do nothing).
//!
//! # Where Agentao differs (its bugs, fixed here)
//!
//! - A process that dies while `starting` or `initializing` is noticed at once and fails the
//!   start (Agentao leaves it `starting` forever).
//! - `startupTimeoutMs` is enforced from the start command to a usable session (Agentao
//!   parses and ignores it), and every start handshakes, so `ready` means usable.
//! - A prompt timeout sends `session/cancel` ([`Action::CancelTurn`]).
//! - A cancel with no turn running is refused ([`Refusal::NoActiveTurn`]); Agentao reports
//!   success.
//! - Pipes breaking or the process dying tell the driver to close the connection at once
//!   ([`Action::DropConnection`]), failing every pending request instead of letting each wait
//!   for its own timeout.

use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;
use core::fmt;

use super::Instant;
use super::config::ServerConfig;
use super::recovery::{self, Death, ExitStatus, Verdict};
use super::stderr::StderrRing;

/// After closing stdin, how long the child gets to exit by itself.
pub const STDIN_CLOSE_GRACE_MS: u64 = 5_000;
/// After SIGTERM, how long the child gets before the process group is killed.
pub const TERMINATE_GRACE_MS: u64 = 5_000;
/// After SIGKILL, how long to wait for the exit before giving up on it.
pub const KILL_GRACE_MS: u64 = 2_000;

/// The states a server is reported in (Agentao's `ServerState` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServerState {
    /// Known from the config; no process.
    Configured,
    /// Spawn asked for or done; the handshake has not begun.
    Starting,
    /// `initialize` / `session/new` in flight.
    Initializing,
    /// A session is open and idle.
    Ready,
    /// A prompt turn is running.
    Busy,
    /// The server waits for the user to answer a permission or input request.
    WaitingForUser,
    /// The stop sequence is running.
    Stopping,
    /// Stopped on purpose; no process.
    Stopped,
    /// Start failed, or a fatal crash; no process. See [`Lifecycle::last_error`].
    Failed,
}

impl ServerState {
    /// The name Agentao reports (`waiting_for_user`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            ServerState::Configured => "configured",
            ServerState::Starting => "starting",
            ServerState::Initializing => "initializing",
            ServerState::Ready => "ready",
            ServerState::Busy => "busy",
            ServerState::WaitingForUser => "waiting_for_user",
            ServerState::Stopping => "stopping",
            ServerState::Stopped => "stopped",
            ServerState::Failed => "failed",
        }
    }
}

impl fmt::Display for ServerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something that happened, or that the host wants. Borrowed text is copied if kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input<'a> {
    /// Command: the user starts the server (`/acp start`). Clears a fatal mark, the restart
    /// count and the handshake streak. Starting a live server does nothing.
    Start,
    /// Command: a prompt needs the server, so start it if it is not running. Refused while the
    /// server is fatal.
    Connect,
    /// Command: stop the server (the stop sequence if a process runs).
    Stop,
    /// Command: stop, then start again; clears a fatal mark like [`Input::Start`].
    Restart,
    /// Command: a prompt is about to be sent. Only from `ready`.
    PromptStarted,
    /// Command: the user cancels the running turn.
    CancelTurn,
    /// Event: the process asked for by [`Action::Spawn`] is running.
    Spawned {
        /// Its process id (and process group id).
        pid: u32,
    },
    /// Event: [`Action::Spawn`] failed (bad command, bad cwd…).
    SpawnFailed {
        /// The OS error text.
        error: &'a str,
    },
    /// Event: the process ended.
    Exited {
        /// Which process.
        pid: u32,
        /// How.
        status: ExitStatus,
    },
    /// Event: the process's stdout reached EOF: the connection is gone.
    StdoutEof {
        /// Which process.
        pid: u32,
    },
    /// Event: one line from the process's stderr.
    StderrLine(&'a str),
    /// Event: `initialize` (or a new `session/new`) was sent.
    HandshakeStarted,
    /// Event: `initialize` and `session/new` both succeeded.
    HandshakeOk,
    /// Event: `initialize` or `session/new` failed (error reply, timeout).
    HandshakeFailed {
        /// What went wrong.
        error: &'a str,
    },
    /// Event: the prompt turn ended (response, error reply, or cancelled).
    PromptEnded {
        /// `true` if the turn produced a result: resets the restart count.
        ok: bool,
    },
    /// Event: the server asked the user something in an interactive turn (or outside a turn).
    InteractionOpened,
    /// Event: one such question was answered (or dropped).
    InteractionResolved,
}

/// What the driver must do, or should know.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Spawn the server: argv `[command, *args]`, the resolved cwd, [`super::env::child_env`],
    /// piped stdio, in a new process group. Then feed [`Input::Spawned`] or
    /// [`Input::SpawnFailed`].
    Spawn,
    /// Open a connection on the new pipes and send `initialize`, then `session/new`; feed
    /// [`Input::HandshakeStarted`] and its outcome.
    BeginHandshake,
    /// Close the child's stdin so it sees EOF and can save and exit.
    CloseStdin {
        /// The process.
        pid: u32,
    },
    /// Send SIGTERM to the child only.
    Terminate {
        /// The process.
        pid: u32,
    },
    /// Send SIGKILL to the whole process group, grandchildren included.
    KillProcessGroup {
        /// The group leader (the child).
        pid: u32,
    },
    /// The connection is unusable: close it, failing every pending request now.
    DropConnection,
    /// Send `session/cancel` for the running turn.
    CancelTurn,
    /// For the host's display and logs.
    Notify(Notice),
}

/// Things worth telling the user or the log.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// The reported state changed.
    StateChanged {
        /// Before.
        from: ServerState,
        /// After.
        to: ServerState,
    },
    /// The running process died or its pipes broke.
    Died {
        /// How it ended (`None`: the pipes broke first).
        status: Option<ExitStatus>,
        /// What happens next.
        verdict: Verdict,
    },
    /// No usable session within `startupTimeoutMs`.
    StartupTimedOut,
    /// A turn ran past `requestTimeoutMs`; it was cancelled.
    TurnTimedOut,
    /// The process did not exit even after SIGKILL; it is no longer tracked.
    ProcessLingering {
        /// The process.
        pid: u32,
    },
}

/// A command that cannot be carried out now.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The server is fatal; only an explicit start or restart clears it.
    Fatal {
        /// The server.
        server: String,
    },
    /// A turn is already running; turns are not queued.
    Busy {
        /// The server.
        server: String,
    },
    /// A prompt needs a `ready` server.
    NotReady {
        /// The server.
        server: String,
        /// Its state.
        state: ServerState,
    },
    /// There is no turn to cancel.
    NoActiveTurn {
        /// The server.
        server: String,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Fatal { server } => write!(
                f,
                "server '{server}' is in the fatal recovery state; call restart_server('{server}') to clear it"
            ),
            Refusal::Busy { server } => write!(
                f,
                "server '{server}' has an active turn; send_prompt is fail-fast"
            ),
            Refusal::NotReady { server, state } => {
                write!(f, "server '{server}' is not ready (state: {state})")
            }
            Refusal::NoActiveTurn { server } => write!(f, "server '{server}' has no active turn"),
        }
    }
}

impl core::error::Error for Refusal {}

/// The timing and restart budget of one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `startupTimeoutMs`.
    pub startup_timeout_ms: u64,
    /// `requestTimeoutMs`.
    pub request_timeout_ms: u64,
    /// `maxRecoverableRestarts`.
    pub max_recoverable_restarts: u32,
}

impl Limits {
    /// The limits a config entry sets.
    pub fn of(config: &ServerConfig) -> Limits {
        Limits {
            startup_timeout_ms: config.startup_timeout_ms,
            request_timeout_ms: config.request_timeout_ms,
            max_recoverable_restarts: config.max_recoverable_restarts,
        }
    }
}

/// What drives a step of the machine: an input, or the current state's deadline passing.
#[derive(Clone, Copy, Debug)]
enum Trigger<'a> {
    In(Input<'a>),
    Deadline,
}

/// The step of the stop sequence being waited on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StopStep {
    /// stdin closed; waiting for a voluntary exit.
    StdinClosed,
    /// SIGTERM sent; waiting.
    Terminated,
    /// Process group killed; waiting for the exit to be reported.
    Killed,
}

/// Where the stop sequence lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterStop {
    Stopped,
    Restart,
    /// A recoverable loss: start lazily when next needed.
    Configured,
    Failed,
}

/// The state with the data (deadlines) that belongs to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Configured,
    /// `spawned` is false until [`Input::Spawned`].
    Starting {
        spawned: bool,
        deadline: Instant,
    },
    Initializing {
        deadline: Instant,
    },
    Ready,
    Busy {
        deadline: Instant,
    },
    /// The turn deadline is suspended while the user thinks; it restarts when the last
    /// question is answered.
    WaitingForUser {
        open: u32,
        turn: bool,
    },
    Stopping {
        step: StopStep,
        deadline: Instant,
        then: AfterStop,
    },
    Stopped,
    Failed,
}

impl Phase {
    const fn state(self) -> ServerState {
        match self {
            Phase::Configured => ServerState::Configured,
            Phase::Starting { .. } => ServerState::Starting,
            Phase::Initializing { .. } => ServerState::Initializing,
            Phase::Ready => ServerState::Ready,
            Phase::Busy { .. } => ServerState::Busy,
            Phase::WaitingForUser { .. } => ServerState::WaitingForUser,
            Phase::Stopping { .. } => ServerState::Stopping,
            Phase::Stopped => ServerState::Stopped,
            Phase::Failed => ServerState::Failed,
        }
    }

    const fn deadline(self) -> Option<Instant> {
        match self {
            Phase::Starting { deadline, .. }
            | Phase::Initializing { deadline }
            | Phase::Busy { deadline }
            | Phase::Stopping { deadline, .. } => Some(deadline),
            _ => None,
        }
    }
}

/// One server's state machine; see the module docs for the call order.
#[derive(Clone, Debug)]
pub struct Lifecycle {
    name: String,
    limits: Limits,
    phase: Phase,
    pid: Option<u32>,
    fatal: bool,
    restart_count: u32,
    handshake_streak: u32,
    last_error: Option<String>,
    stderr: StderrRing,
    actions: VecDeque<Action>,
}

impl Lifecycle {
    /// A `configured` server called `name`.
    pub fn new(name: &str, limits: Limits) -> Self {
        Lifecycle {
            name: String::from(name),
            limits,
            phase: Phase::Configured,
            pid: None,
            fatal: false,
            restart_count: 0,
            handshake_streak: 0,
            last_error: None,
            stderr: StderrRing::new(),
            actions: VecDeque::new(),
        }
    }

    /// A `configured` server for a config entry.
    pub fn from_config(config: &ServerConfig) -> Self {
        Self::new(&config.name, Limits::of(config))
    }

    /// Feeds one input at `now`. Only commands can be refused.
    pub fn handle(&mut self, now: Instant, input: Input<'_>) -> Result<(), Refusal> {
        self.step(now, Trigger::In(input))
    }

    /// Acts on every deadline that has passed at `now`. Spurious calls do nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self
            .phase
            .deadline()
            .is_some_and(|deadline| deadline <= now)
        {
            // Deadlines only fire in states with no refusable command.
            let _ = self.step(now, Trigger::Deadline);
        }
    }

    /// The machine: one arm per (state, trigger) rule. Deadlines are only passed in when due.
    fn step(&mut self, now: Instant, trigger: Trigger<'_>) -> Result<(), Refusal> {
        use Input as I;
        use Phase as P;
        use Trigger::{Deadline, In};
        let live = |p: Phase| matches!(p, P::Ready | P::Busy { .. } | P::WaitingForUser { .. });
        match (self.phase, trigger) {
            // Stderr is kept whatever the state: it explains failures (R-HOST-5).
            (_, In(I::StderrLine(line))) => self.stderr.push(line),

            // R-HOST-3 and R-HOST-7: a start from rest spawns; a lazy start is refused while
            // fatal (sticky), an explicit one clears the mark and the budget.
            (P::Configured | P::Stopped | P::Failed, In(I::Start) | In(I::Restart)) => {
                self.clear_recovery();
                self.spawn(now);
            }
            (P::Configured | P::Stopped | P::Failed, In(I::Connect)) => {
                self.refuse_if_fatal()?;
                self.spawn(now);
            }
            // A stop already under way will start again afterwards.
            (P::Stopping { step, deadline, .. }, In(I::Start) | In(I::Restart)) => {
                self.clear_recovery();
                self.phase = P::Stopping {
                    step,
                    deadline,
                    then: AfterStop::Restart,
                };
            }
            (P::Stopping { step, deadline, .. }, In(I::Connect)) => {
                self.refuse_if_fatal()?;
                self.phase = P::Stopping {
                    step,
                    deadline,
                    then: AfterStop::Restart,
                };
            }
            // A spawn is already on its way: restarting it would only spawn twice.
            (P::Starting { spawned: false, .. }, In(I::Restart)) => self.clear_recovery(),
            // Duplicate start of a live server is a no-op (Agentao test_duplicate_start_is_noop).
            (_, In(I::Start) | In(I::Connect)) => {}
            // R-HOST-3: restart of a live server = the stop sequence, then a start.
            (_, In(I::Restart)) => {
                self.clear_recovery();
                self.drop_connection_if_any();
                self.begin_stop(now, AfterStop::Restart);
            }

            // R-HOST-3: nothing to stop: straight to stopped. A spawn still unconfirmed is
            // stopped when its Spawned arrives (see the stray-process arm below).
            (
                P::Configured | P::Stopped | P::Failed | P::Starting { spawned: false, .. },
                In(I::Stop),
            ) => {
                self.transition(P::Stopped);
            }
            (P::Stopping { step, deadline, .. }, In(I::Stop)) => {
                self.phase = P::Stopping {
                    step,
                    deadline,
                    then: AfterStop::Stopped,
                };
            }
            // R-HOST-3: a live process: the stop sequence (R-HOST-4).
            (_, In(I::Stop)) => {
                self.drop_connection_if_any();
                self.begin_stop(now, AfterStop::Stopped);
            }

            // R-HOST-8: one turn per server, fail-fast, no queueing.
            (P::Ready, In(I::PromptStarted)) => {
                let deadline = now.plus_ms(self.limits.request_timeout_ms);
                self.transition(P::Busy { deadline });
            }
            (P::Busy { .. } | P::WaitingForUser { .. }, In(I::PromptStarted)) => {
                return Err(Refusal::Busy {
                    server: self.name.clone(),
                });
            }
            (_, In(I::PromptStarted)) => {
                self.refuse_if_fatal()?;
                return Err(Refusal::NotReady {
                    server: self.name.clone(),
                    state: self.state(),
                });
            }

            // R-HOST-8 cancel_turn: sends session/cancel; the turn ends when the server answers.
            (P::Busy { .. } | P::WaitingForUser { turn: true, .. }, In(I::CancelTurn)) => {
                self.actions.push_back(Action::CancelTurn);
            }
            // Nothing to cancel: refused (Agentao reports success here, R-HOST-8).
            (_, In(I::CancelTurn)) => {
                return Err(Refusal::NoActiveTurn {
                    server: self.name.clone(),
                });
            }

            // The spawn worked: handshake at once, so `ready` means usable.
            (
                P::Starting {
                    spawned: false,
                    deadline,
                },
                In(I::Spawned { pid }),
            ) => {
                self.pid = Some(pid);
                self.phase = P::Starting {
                    spawned: true,
                    deadline,
                };
                self.actions.push_back(Action::BeginHandshake);
            }
            // A process nobody wants any more (stopped before its spawn was confirmed, or a
            // duplicate): stop it, keeping the current resting state.
            (P::Configured | P::Stopped | P::Failed, In(I::Spawned { pid })) => {
                let then = match self.phase {
                    P::Configured => AfterStop::Configured,
                    P::Failed => AfterStop::Failed,
                    _ => AfterStop::Stopped,
                };
                self.pid = Some(pid);
                self.begin_stop(now, then);
            }
            (_, In(I::Spawned { pid })) if self.pid != Some(pid) => {
                self.actions.push_back(Action::KillProcessGroup { pid });
            }
            // R-HOST-3: spawn error → failed with the OS text.
            (P::Starting { spawned: false, .. }, In(I::SpawnFailed { error })) => {
                self.last_error = Some(format!(
                    "acp server '{}': failed to start: {error}",
                    self.name
                ));
                self.transition(P::Failed);
            }

            // Events of an old process (before a restart) change nothing.
            (_, In(I::Exited { pid, .. }) | In(I::StdoutEof { pid })) if self.pid != Some(pid) => {}

            // R-HOST-7 (fixes Agentao): a death while starting or initializing fails
            // the start at once, whenever it happens; it counts as a handshake failure.
            (P::Starting { .. } | P::Initializing { .. }, In(I::Exited { status, .. })) => {
                self.pid = None;
                self.actions.push_back(Action::DropConnection);
                self.handshake_failed(
                    now,
                    format!("process exited during startup ({status})"),
                    Some(status),
                );
            }
            (P::Starting { .. } | P::Initializing { .. }, In(I::StdoutEof { .. })) => {
                self.actions.push_back(Action::DropConnection);
                self.handshake_failed(now, String::from("stdout closed during startup"), None);
            }
            // R-HOST-7: a running server died: recoverable → configured, fatal → failed.
            (phase, In(I::Exited { status, .. })) if live(phase) => {
                self.pid = None;
                self.actions.push_back(Action::DropConnection);
                match self.classify_death(Some(status)) {
                    Verdict::Recoverable => self.transition(P::Configured),
                    Verdict::Fatal(_) => self.transition(P::Failed),
                }
            }
            // R-HOST-7: the pipes broke but the process may live: stop it, then rest in
            // the state the classifier chose.
            (phase, In(I::StdoutEof { .. })) if live(phase) => {
                self.actions.push_back(Action::DropConnection);
                let then = match self.classify_death(None) {
                    Verdict::Recoverable => AfterStop::Configured,
                    Verdict::Fatal(_) => AfterStop::Failed,
                };
                self.begin_stop(now, then);
            }
            // R-HOST-4: the child exited. If it took SIGTERM, kill the group anyway
            // so grandchildren go too (Agentao AC3); then land.
            (P::Stopping { step, then, .. }, In(I::Exited { .. })) => {
                let pid = self.pid.take();
                if let (StopStep::Terminated, Some(pid)) = (step, pid) {
                    self.actions.push_back(Action::KillProcessGroup { pid });
                }
                self.land(now, then);
            }
            // The EOF that closing stdin causes, or a death report with no process.
            (_, In(I::Exited { .. }) | In(I::StdoutEof { .. })) => {}

            // R-HOST-3: initialize sent (also a re-session from ready).
            (
                P::Starting {
                    spawned: true,
                    deadline,
                },
                In(I::HandshakeStarted),
            ) => {
                self.transition(P::Initializing { deadline });
            }
            (P::Ready, In(I::HandshakeStarted)) => {
                let deadline = now.plus_ms(self.limits.startup_timeout_ms);
                self.transition(P::Initializing { deadline });
            }
            // R-HOST-3 and R-HOST-7: session open → ready; a success clears the streak.
            (P::Starting { spawned: true, .. } | P::Initializing { .. }, In(I::HandshakeOk)) => {
                self.handshake_streak = 0;
                self.transition(P::Ready);
            }
            // R-HOST-7: failed, the process stopped, fatal on the 2nd in a row.
            (
                P::Starting { spawned: true, .. } | P::Initializing { .. },
                In(I::HandshakeFailed { error }),
            ) => {
                self.actions.push_back(Action::DropConnection);
                self.handshake_failed(now, String::from(error), None);
            }

            // R-HOST-3 and R-HOST-7: the turn ended; a result resets the restart budget.
            (P::Busy { .. } | P::WaitingForUser { turn: true, .. }, In(I::PromptEnded { ok })) => {
                if ok {
                    self.restart_count = 0;
                    self.handshake_streak = 0;
                }
                self.transition(P::Ready);
            }

            // R-HOST-8: a question for the user suspends the turn deadline.
            (P::Ready, In(I::InteractionOpened)) => self.transition(P::WaitingForUser {
                open: 1,
                turn: false,
            }),
            (P::Busy { .. }, In(I::InteractionOpened)) => self.transition(P::WaitingForUser {
                open: 1,
                turn: true,
            }),
            (P::WaitingForUser { open, turn }, In(I::InteractionOpened)) => {
                self.phase = P::WaitingForUser {
                    open: open.saturating_add(1),
                    turn,
                };
            }
            // R-HOST-8: the last answer resumes the turn (with a fresh deadline, as
            // `/acp send` restarts it after each inline interaction) or returns to ready.
            (P::WaitingForUser { open, turn }, In(I::InteractionResolved)) => match (open, turn) {
                (0 | 1, true) => {
                    let deadline = now.plus_ms(self.limits.request_timeout_ms);
                    self.transition(P::Busy { deadline });
                }
                (0 | 1, false) => self.transition(P::Ready),
                (open, turn) => {
                    self.phase = P::WaitingForUser {
                        open: open - 1,
                        turn,
                    }
                }
            },

            // ---- deadlines ----
            // R-HOST-2 (Agentao's bug): startupTimeoutMs enforced; counts as a
            // handshake failure.
            (P::Starting { spawned, .. }, Deadline) => {
                self.actions
                    .push_back(Action::Notify(Notice::StartupTimedOut));
                let error = self.startup_timeout_error();
                if spawned {
                    self.actions.push_back(Action::DropConnection);
                    self.handshake_failed(now, error, None);
                } else {
                    // The driver never confirmed the spawn; nothing to stop.
                    self.handshake_streak = self.handshake_streak.saturating_add(1);
                    self.record_handshake_verdict(error);
                    self.transition(P::Failed);
                }
            }
            (P::Initializing { .. }, Deadline) => {
                self.actions
                    .push_back(Action::Notify(Notice::StartupTimedOut));
                self.actions.push_back(Action::DropConnection);
                let error = self.startup_timeout_error();
                self.handshake_failed(now, error, None);
            }
            // R-HOST-2 (fixes Agentao's bug): timeout → ready, the abandoned turn is
            // cancelled.
            (P::Busy { .. }, Deadline) => {
                self.last_error = Some(format!(
                    "timeout waiting for response from '{}' after {} ms",
                    self.name, self.limits.request_timeout_ms
                ));
                self.actions.push_back(Action::CancelTurn);
                self.actions.push_back(Action::Notify(Notice::TurnTimedOut));
                self.transition(P::Ready);
            }
            // R-HOST-4: stdin close ignored for 5 s → SIGTERM the child.
            (
                P::Stopping {
                    step: StopStep::StdinClosed,
                    then,
                    ..
                },
                Deadline,
            ) => {
                if let Some(pid) = self.pid {
                    self.actions.push_back(Action::Terminate { pid });
                }
                let deadline = now.plus_ms(TERMINATE_GRACE_MS);
                self.phase = P::Stopping {
                    step: StopStep::Terminated,
                    deadline,
                    then,
                };
            }
            // SIGTERM ignored for 5 s → SIGKILL the process group, wait 2 s.
            (
                P::Stopping {
                    step: StopStep::Terminated,
                    then,
                    ..
                },
                Deadline,
            ) => {
                if let Some(pid) = self.pid {
                    self.actions.push_back(Action::KillProcessGroup { pid });
                }
                let deadline = now.plus_ms(KILL_GRACE_MS);
                self.phase = P::Stopping {
                    step: StopStep::Killed,
                    deadline,
                    then,
                };
            }
            // Still no exit 2 s after SIGKILL: stop tracking it.
            (
                P::Stopping {
                    step: StopStep::Killed,
                    then,
                    ..
                },
                Deadline,
            ) => {
                if let Some(pid) = self.pid.take() {
                    self.actions
                        .push_back(Action::Notify(Notice::ProcessLingering { pid }));
                }
                self.land(now, then);
            }

            // Anything else is stale or out of place (a turn end after its timeout, a
            // handshake event with no handshake): ignored.
            (_, _) => {}
        }
        Ok(())
    }

    /// The next action for the driver, oldest first.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`Lifecycle::handle_timeout`] must next be called, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.phase.deadline()
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The reported state.
    pub fn state(&self) -> ServerState {
        self.phase.state()
    }

    /// The running process, if any.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether the server is fatal (lazy starts refused).
    pub fn is_fatal(&self) -> bool {
        self.fatal
    }

    /// Recoverable restarts since the last successful turn or explicit start.
    pub fn restart_count(&self) -> u32 {
        self.restart_count
    }

    /// Handshake failures in a row.
    pub fn handshake_streak(&self) -> u32 {
        self.handshake_streak
    }

    /// Whether a prompt turn is running (also while it waits for the user).
    pub fn has_active_turn(&self) -> bool {
        matches!(
            self.phase,
            Phase::Busy { .. } | Phase::WaitingForUser { turn: true, .. }
        )
    }

    /// Questions waiting for the user.
    pub fn open_interactions(&self) -> u32 {
        match self.phase {
            Phase::WaitingForUser { open, .. } => open,
            _ => 0,
        }
    }

    /// The last failure, kept until overwritten or reset.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// Forgets the last failure.
    pub fn reset_last_error(&mut self) {
        self.last_error = None;
    }

    /// The server's recent stderr.
    pub fn stderr(&self) -> &StderrRing {
        &self.stderr
    }

    /// The single point where the reported state changes; traces `A => B` as a notice.
    fn transition(&mut self, to: Phase) {
        let from = self.phase.state();
        self.phase = to;
        if from != to.state() {
            self.actions.push_back(Action::Notify(Notice::StateChanged {
                from,
                to: to.state(),
            }));
        }
    }

    fn refuse_if_fatal(&self) -> Result<(), Refusal> {
        if self.fatal {
            Err(Refusal::Fatal {
                server: self.name.clone(),
            })
        } else {
            Ok(())
        }
    }

    fn clear_recovery(&mut self) {
        self.fatal = false;
        self.restart_count = 0;
        self.handshake_streak = 0;
    }

    fn spawn(&mut self, now: Instant) {
        self.actions.push_back(Action::Spawn);
        let deadline = now.plus_ms(self.limits.startup_timeout_ms);
        self.transition(Phase::Starting {
            spawned: false,
            deadline,
        });
    }

    /// Starts the stop sequence (close stdin, 5 s, SIGTERM, 5 s, SIGKILL group, 2 s), or lands
    /// at once when there is no process.
    fn begin_stop(&mut self, now: Instant, then: AfterStop) {
        let Some(pid) = self.pid else {
            self.land(now, then);
            return;
        };
        self.actions.push_back(Action::CloseStdin { pid });
        let deadline = now.plus_ms(STDIN_CLOSE_GRACE_MS);
        self.transition(Phase::Stopping {
            step: StopStep::StdinClosed,
            deadline,
            then,
        });
    }

    fn drop_connection_if_any(&mut self) {
        if self.pid.is_some() {
            self.actions.push_back(Action::DropConnection);
        }
    }

    fn land(&mut self, now: Instant, then: AfterStop) {
        match then {
            AfterStop::Stopped => self.transition(Phase::Stopped),
            AfterStop::Configured => self.transition(Phase::Configured),
            AfterStop::Failed => self.transition(Phase::Failed),
            AfterStop::Restart => self.spawn(now),
        }
    }

    /// R-HOST-7 handshake failures: count, record, decide fatal, stop any process, rest in failed.
    fn handshake_failed(&mut self, now: Instant, error: String, status: Option<ExitStatus>) {
        self.handshake_streak = self.handshake_streak.saturating_add(1);
        let signalled = status.is_some_and(ExitStatus::is_signal_death);
        self.record_handshake_verdict(error);
        if signalled && !self.fatal {
            self.fatal = true;
            self.last_error = Some(self.fatal_message());
        }
        self.begin_stop(now, AfterStop::Failed);
    }

    fn record_handshake_verdict(&mut self, error: String) {
        if self.handshake_streak >= recovery::HANDSHAKE_FAILURE_LIMIT {
            self.fatal = true;
            self.last_error = Some(self.fatal_message());
        } else {
            self.last_error = Some(error);
        }
    }

    /// R-HOST-7 classification of a running server's death; updates the counters and the error.
    fn classify_death(&mut self, status: Option<ExitStatus>) -> Verdict {
        let verdict = recovery::classify(Death {
            status,
            handshake_streak: self.handshake_streak,
            during_turn: self.has_active_turn(),
            restart_count: self.restart_count,
            max_restarts: self.limits.max_recoverable_restarts,
        });
        match verdict {
            Verdict::Recoverable => {
                self.restart_count = self.restart_count.saturating_add(1);
                self.handshake_streak = 0;
                self.last_error = Some(match status {
                    Some(status) => format!("server '{}' exited ({status})", self.name),
                    None => format!("server '{}' closed its stdout", self.name),
                });
            }
            Verdict::Fatal(_) => {
                self.fatal = true;
                self.last_error = Some(self.fatal_message());
            }
        }
        self.actions
            .push_back(Action::Notify(Notice::Died { status, verdict }));
        verdict
    }

    fn fatal_message(&self) -> String {
        format!("server '{}' marked fatal by recovery classifier", self.name)
    }

    fn startup_timeout_error(&self) -> String {
        format!(
            "server '{}' did not become ready within {} ms",
            self.name, self.limits.startup_timeout_ms
        )
    }
}
