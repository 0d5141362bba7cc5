//! tokio: its clock and timers (so paused time works), stdio and `tokio::process` children,
//! seen as futures-io streams through tokio-util's compat layer (feature `tokio`).
//!
//! The connection future does not need `spawn` nor `Send`: it runs under
//! `#[tokio::main(flavor = "current_thread")]`, inside a `LocalSet`, or with
//! `Runtime::block_on`. tokio's time driver must be enabled (`#[tokio::main]` enables it).

use std::io;
use std::process::Stdio;

use tokio_util::compat::{Compat, TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::runtime::{Instant, Runtime, millis};

/// tokio's clock and timers; times count from when it was made.
#[derive(Clone, Copy, Debug)]
pub struct Tokio {
    origin: tokio::time::Instant,
}

impl Tokio {
    /// A clock starting now (tokio's `Instant`, so `tokio::time::pause` applies).
    pub fn new() -> Self {
        Self {
            origin: tokio::time::Instant::now(),
        }
    }
}

impl Default for Tokio {
    fn default() -> Self {
        Self::new()
    }
}

impl Runtime for Tokio {
    type Sleep = tokio::time::Sleep;

    fn now(&self) -> Instant {
        millis(self.origin.elapsed())
    }

    fn sleep_until(&self, deadline: Instant) -> tokio::time::Sleep {
        tokio::time::sleep_until(self.origin + std::time::Duration::from_millis(deadline.0))
    }
}

/// This process's stdin and stdout as futures-io streams.
///
/// tokio reads stdin with a blocking read on its blocking pool, which cannot be cancelled:
/// a connection that ends before its stdin does (a write error) leaves the runtime's shutdown
/// waiting for that read. An agent normally ends at stdin's EOF, where this does not arise.
pub fn stdio() -> (Compat<tokio::io::Stdin>, Compat<tokio::io::Stdout>) {
    (
        tokio::io::stdin().compat(),
        tokio::io::stdout().compat_write(),
    )
}

/// An agent process with its stdio piped: write to `stdin`, read `stdout`.
#[derive(Debug)]
pub struct Child {
    /// The process (stderr is inherited).
    pub process: tokio::process::Child,
    /// The agent's stdin.
    pub stdin: Compat<tokio::process::ChildStdin>,
    /// The agent's stdout.
    pub stdout: Compat<tokio::process::ChildStdout>,
}

/// Starts `command` with piped stdin and stdout (stderr inherited); the process is killed
/// when [`Child::process`] is dropped.
pub fn spawn(mut command: tokio::process::Command) -> io::Result<Child> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    let mut process = command.spawn()?;
    let stdin = process
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("no stdin pipe"))?;
    let stdout = process
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no stdout pipe"))?;
    Ok(Child {
        process,
        stdin: stdin.compat_write(),
        stdout: stdout.compat(),
    })
}

/// Serves `agent` on this process's stdin and stdout until stdin ends: an ACP agent an
/// editor launches. See [`agent::serve`](crate::agent::serve).
pub async fn serve_stdio<A: crate::Agent>(
    config: acp_core::prelude::AgentConfig,
    agent: A,
) -> io::Result<()> {
    let (stdin, stdout) = stdio();
    crate::agent::serve(config, agent, Tokio::new(), stdin, stdout).await
}
