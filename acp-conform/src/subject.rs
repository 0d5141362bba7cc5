//! The agent under test, as bytes: one process (started with [`crate::process`], so in
//! its own process group), raw writes to its stdin, and its stdout cut into lines and parsed
//! with `serde_json`. Nothing here knows JSON-RPC beyond "is this line a JSON object with
//! `jsonrpc: "2.0"`": the harness must be able to send anything, and to see everything the
//! agent sends, lines that are not JSON-RPC included.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use acp_host::supervisor::recovery::ExitStatus;
use serde_json::Value;
use smol::channel::Receiver;

use super::chaos::Chaos;
use crate::process::{AgentCommand, AgentProcess, LineSplitter, ProcessEvent, ProcessKey};

/// One line the agent wrote on stdout.
#[derive(Clone, Debug)]
pub struct Line {
    /// The line as written, without its `\n` (invalid UTF-8 replaced).
    pub raw: String,
    /// The line's bytes as written, without its `\n` (what the exchange monitor reads).
    pub bytes: Vec<u8>,
    /// The line parsed, when it is a JSON-RPC 2.0 message (an object with `jsonrpc: "2.0"`).
    pub message: Option<Value>,
    /// When it was read.
    pub at: Instant,
}

/// The running agent of one case; see the module docs.
pub struct Subject {
    process: AgentProcess,
    events: Receiver<(ProcessKey, ProcessEvent)>,
    splitter: LineSplitter,
    /// Every stdout line so far, in order.
    pub lines: Vec<Line>,
    /// How many of `lines` [`Subject::next_line`] has handed out.
    delivered: usize,
    /// Everything the agent wrote on stderr.
    pub stderr: Vec<String>,
    /// Whether stdout reached EOF.
    pub stdout_closed: bool,
    /// The exit status, once the process was reaped.
    pub exit: Option<ExitStatus>,
    chaos: Option<Chaos>,
    /// The working directory the agent runs in (a fresh temporary directory).
    pub cwd: PathBuf,
    /// When the process was started.
    pub started: Instant,
}

impl Subject {
    /// Starts `argv` in `cwd` with the environment of this process.
    pub fn spawn(argv: &[String], cwd: &Path, chaos: Option<Chaos>) -> io::Result<Subject> {
        let Some((program, args)) = argv.split_first() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no agent command",
            ));
        };
        let command = AgentCommand {
            program: program.clone(),
            args: args.to_vec(),
            env: std::env::vars().collect(),
            cwd: cwd.to_path_buf(),
        };
        let (sender, events) = smol::channel::unbounded();
        let process = AgentProcess::spawn(&command, ProcessKey(0), sender)?;
        Ok(Subject {
            process,
            events,
            splitter: LineSplitter::unlimited(),
            lines: Vec::new(),
            delivered: 0,
            stderr: Vec::new(),
            stdout_closed: false,
            exit: None,
            chaos,
            cwd: cwd.to_path_buf(),
            started: Instant::now(),
        })
    }

    /// The agent's pid (also its process group id).
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Writes `bytes` to the agent's stdin. Under `--chaos` the bytes go in pieces cut at
    /// random boundaries, with short random pauses between them.
    pub async fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        let Some(chaos) = self.chaos.as_mut() else {
            return self.process.write_stdin(bytes).await;
        };
        let pieces = chaos.cuts(bytes.len());
        let mut start = 0;
        for end in pieces {
            self.process.write_stdin(&bytes[start..end]).await?;
            start = end;
            let pause = self.chaos.as_mut().map(Chaos::pause).unwrap_or_default();
            smol::Timer::after(pause).await;
        }
        Ok(())
    }

    /// Closes the agent's stdin (it reads EOF).
    pub fn close_stdin(&mut self) {
        self.process.close_stdin();
    }

    /// Closes our end of the agent's stdout (its next write fails): a client that vanished.
    pub fn close_stdout(&mut self) {
        self.process.close_stdout();
    }

    /// Sends SIGTERM to the agent process.
    pub fn terminate(&self) -> io::Result<()> {
        self.process.terminate()
    }

    /// Kills the agent's whole process group (the end of every case).
    pub fn kill(&self) {
        let _ = self.process.kill_group();
    }

    /// The next stdout line not yet handed out, waiting until `deadline`; `None` when the
    /// deadline passed or stdout ended with nothing more.
    pub async fn next_line(&mut self, deadline: Instant) -> Option<usize> {
        loop {
            if self.delivered < self.lines.len() {
                self.delivered += 1;
                return Some(self.delivered - 1);
            }
            if self.stdout_closed {
                return None;
            }
            if !self.pump(deadline).await {
                return None;
            }
        }
    }

    /// Waits until the process exited, at most until `deadline`.
    pub async fn wait_exit(&mut self, deadline: Instant) -> Option<ExitStatus> {
        while self.exit.is_none() {
            if !self.pump(deadline).await {
                break;
            }
        }
        self.exit
    }

    /// Waits until stdout ended, at most until `deadline`: after the exit, what the agent wrote
    /// just before it may still be in the pipe.
    pub async fn wait_stdout_closed(&mut self, deadline: Instant) {
        while !self.stdout_closed && self.pump(deadline).await {}
    }

    /// Handles one process event; false when `deadline` passed first (or nothing can come).
    async fn pump(&mut self, deadline: Instant) -> bool {
        let next = async { self.events.recv().await.ok() };
        let timeout = async {
            smol::Timer::at(deadline).await;
            None
        };
        let Some((_, event)) = smol::future::or(next, timeout).await else {
            return false;
        };
        match event {
            ProcessEvent::Stdout(bytes) => {
                if let Some(chaos) = self.chaos.as_mut() {
                    // A slow reader: the agent's writes pile up in the pipe meanwhile.
                    let stall = chaos.pause();
                    smol::Timer::after(stall).await;
                }
                self.take_stdout(&bytes);
            }
            ProcessEvent::StdoutEof => {
                if let Some(rest) = self.splitter.finish_raw() {
                    self.push_line(&rest);
                }
                self.stdout_closed = true;
            }
            ProcessEvent::StderrLine(line) => self.stderr.push(line),
            ProcessEvent::StderrEof => {}
            ProcessEvent::Exited(status) => {
                self.process.mark_exited();
                self.exit = Some(status);
            }
        }
        true
    }

    fn take_stdout(&mut self, bytes: &[u8]) {
        for line in self.splitter.push(bytes) {
            self.push_line(&line);
        }
    }

    /// Takes every process event already waiting, without waiting for more, so that what the
    /// agent wrote before the harness's next write is in [`Subject::lines`] first.
    pub async fn take_ready(&mut self) {
        while !self.events.is_empty() && self.pump(Instant::now()).await {}
    }

    fn push_line(&mut self, bytes: &[u8]) {
        let raw = String::from_utf8_lossy(bytes).into_owned();
        let message = std::str::from_utf8(bytes)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .filter(|value| value.get("jsonrpc") == Some(&Value::from("2.0")));
        self.lines.push(Line {
            raw,
            bytes: bytes.to_vec(),
            message,
            at: Instant::now(),
        });
    }

    /// The peak resident memory of the agent process so far, in KiB (Linux only).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// Whether any process is still in the agent's process group.
    pub fn group_alive(&self) -> bool {
        match rustix::process::Pid::from_raw(self.pid() as i32) {
            Some(pid) => rustix::process::test_kill_process_group(pid).is_ok(),
            None => false,
        }
    }
}

impl Drop for Subject {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `base` scaled by `--timeout-scale`.
pub(crate) fn scaled(base: Duration, scale: f64) -> Duration {
    base.mul_f64(scale.max(0.01))
}
