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

use std::io;
use std::path::PathBuf;

use acp_core::schema::ListSessionsRequest;

use smol::future::FutureExt;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::stream::StreamExt;

use super::app::{AgentApp, Notice, Workspace, agent_config};
use super::local_fs;
use super::logging::LogSink;
use super::sessions::{CwdKind, SessionTable};
use crate::demo::DemoBackend;
use crate::demo::paths::Roots;
use crate::host::clock::HostClock;
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
pub struct RealWorkspace;

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

/// Runs the agent on stdin/stdout until the client goes away or a signal ends it.
pub fn run(options: &AgentOptions, log: &LogSink) -> io::Result<()> {
    let mut app = AgentApp::new(
        agent_config(),
        DemoBackend::new(),
        RealWorkspace,
        SessionTable::default(),
    );
    if let Some(selector) = &options.resume {
        app.resume_first_session(selector.clone());
    }
    smol::block_on(serve(app, log))
}

/// What woke the loop.
enum Wake {
    Read(io::Result<usize>),
    Wrote(io::Result<usize>),
    Flushed(io::Result<()>),
    Deadline,
    Signal,
}

async fn serve<W: Workspace>(mut app: AgentApp<DemoBackend, W>, log: &LogSink) -> io::Result<()> {
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
            }
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
        let wake = write.or(read).or(timer).or(signal).await;

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
