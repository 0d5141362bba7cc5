//! smol: its clock and timers, stdio through `Unblock`, agent processes through
//! `smol::process` (feature `smol`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::Stdio;
use std::task::{Context, Poll};

use crate::runtime::{Instant, Runtime, millis};

/// smol's clock and timers; times count from when it was made.
#[derive(Clone, Copy, Debug)]
pub struct Smol {
    origin: std::time::Instant,
}

impl Smol {
    /// A clock starting now.
    pub fn new() -> Self {
        Self {
            origin: std::time::Instant::now(),
        }
    }
}

impl Default for Smol {
    fn default() -> Self {
        Self::new()
    }
}

/// The timer of [`Smol`].
#[derive(Debug)]
pub struct Sleep(smol::Timer);

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}

impl Runtime for Smol {
    type Sleep = Sleep;

    fn now(&self) -> Instant {
        millis(self.origin.elapsed())
    }

    fn sleep_until(&self, deadline: Instant) -> Sleep {
        let at = self.origin + std::time::Duration::from_millis(deadline.0);
        Sleep(smol::Timer::at(at))
    }
}

/// This process's stdin and stdout as futures-io streams (blocking reads and writes on
/// smol's thread pool).
pub fn stdio() -> (smol::Unblock<io::Stdin>, smol::Unblock<io::Stdout>) {
    (
        smol::Unblock::new(io::stdin()),
        smol::Unblock::new(io::stdout()),
    )
}

/// An agent process with its stdio piped: write to `stdin`, read `stdout`.
#[derive(Debug)]
pub struct Child {
    /// The process (stderr is inherited).
    pub process: smol::process::Child,
    /// The agent's stdin.
    pub stdin: smol::process::ChildStdin,
    /// The agent's stdout.
    pub stdout: smol::process::ChildStdout,
}

/// Starts `command` with piped stdin and stdout (stderr inherited); the process is killed
/// when [`Child::process`] is dropped.
pub fn spawn(mut command: smol::process::Command) -> io::Result<Child> {
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
        stdin,
        stdout,
    })
}

/// Serves `agent` on this process's stdin and stdout until stdin ends: an ACP agent an
/// editor launches. See [`agent::serve`](crate::agent::serve).
pub async fn serve_stdio<A: crate::Agent>(
    config: acp_core::prelude::AgentConfig,
    agent: A,
) -> io::Result<()> {
    let (stdin, stdout) = stdio();
    crate::agent::serve(config, agent, Smol::new(), stdin, stdout).await
}
