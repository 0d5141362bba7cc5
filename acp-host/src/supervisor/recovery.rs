//! Why a server died, and whether to bring it back.
//!
//! When a running server's process dies or its pipes break, [`classify`] decides. A
//! *recoverable* death sends the server back to `configured`: the next prompt starts it again.
//! A *fatal* one leaves it `failed`, and it stays failed (lazy starts are refused) until the user
//! starts or restarts it explicitly: restarting a server that crashes on every start would only
//! hide the problem.

use core::fmt;

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExitStatus {
    /// It exited with this code.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitStatus::Code(code) => write!(f, "exit code {code}"),
            ExitStatus::Signal(signal) => write!(f, "signal {signal}"),
        }
    }
}

impl ExitStatus {
    /// Whether a signal ended the process: a signal status, a negative code (how some
    /// runtimes report one) or 137, 139 or 143 (128 + KILL, SEGV, TERM, as a shell reports).
    pub const fn is_signal_death(self) -> bool {
        match self {
            ExitStatus::Signal(_) => true,
            ExitStatus::Code(code) => code < 0 || matches!(code, 137 | 139 | 143),
        }
    }
}

/// A server is fatal after this many handshake failures in a row.
pub const HANDSHAKE_FAILURE_LIMIT: u32 = 2;

/// What is known when a server dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Death {
    /// How the process ended; `None` when only the pipes broke (stdout EOF) and the process
    /// may still be alive.
    pub status: Option<ExitStatus>,
    /// Handshake failures in a row before this death.
    pub handshake_streak: u32,
    /// Whether a prompt turn was running.
    pub during_turn: bool,
    /// Recoverable restarts so far (reset by a successful turn).
    pub restart_count: u32,
    /// The server's `maxRecoverableRestarts`.
    pub max_restarts: u32,
}

/// The decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Start it again when next needed.
    Recoverable,
    /// Leave it failed until an explicit start or restart.
    Fatal(FatalCause),
}

/// Why a death is fatal.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FatalCause {
    /// A signal killed it, or it exited 137, 139 or 143 (128 + KILL, SEGV, TERM: what a shell
    /// reports for a signal), or a negative code (how some runtimes report a signal).
    Signalled,
    /// [`HANDSHAKE_FAILURE_LIMIT`] handshake failures in a row.
    HandshakeFailures,
    /// An idle crash with the restart budget used up.
    RestartLimit,
}

/// Classifies a death; the first rule that applies wins:
///
/// 1. killed by a signal (see [`FatalCause::Signalled`]) → fatal;
/// 2. handshake failure streak ≥ [`HANDSHAKE_FAILURE_LIMIT`] → fatal;
/// 3. no exit status (the pipes broke) → recoverable;
/// 4. exit code 0 → recoverable;
/// 5. died during a turn → recoverable, whatever the restart count;
/// 6. restart count ≥ `max_restarts` → fatal;
/// 7. otherwise → recoverable.
pub fn classify(death: Death) -> Verdict {
    if death.status.is_some_and(ExitStatus::is_signal_death) {
        return Verdict::Fatal(FatalCause::Signalled);
    }
    if death.handshake_streak >= HANDSHAKE_FAILURE_LIMIT {
        return Verdict::Fatal(FatalCause::HandshakeFailures);
    }
    match death.status {
        None | Some(ExitStatus::Code(0)) => Verdict::Recoverable,
        _ if death.during_turn => Verdict::Recoverable,
        _ if death.restart_count >= death.max_restarts => Verdict::Fatal(FatalCause::RestartLimit),
        _ => Verdict::Recoverable,
    }
}
