//! One agent child process over pipes, and the client side that drives it.
//!
//! The client is the same for every agent: it writes requests as NDJSON lines, reads stdout in
//! 64 KiB blocks, frames them with acp-core's `Framer` and classifies every line with
//! `envelope::scan` (which validates the whole line as JSON). A line that is not the expected
//! notification or response is an error, so a run that completes has seen exactly what it
//! counts.

use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use acp_core::wire::envelope::{self, Message, Outcome};
use acp_core::wire::frame::Framer;

use crate::memory::Memory;

/// How many bytes one `read(2)` asks for.
const READ_BLOCK: usize = 64 * 1024;

/// The longest line accepted from an agent (the biggest `/flood` chunk is 1 MiB).
const MAX_LINE: usize = 4 * 1024 * 1024;

/// How to start one agent.
#[derive(Clone, Debug)]
pub struct AgentSpec {
    /// The name in the tables.
    pub name: &'static str,
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
}

/// Why a run failed.
#[derive(Debug)]
pub enum PeerError {
    /// Spawning, reading or writing failed.
    Io(&'static str, io::Error),
    /// The agent closed stdout before the awaited response.
    Eof { awaiting: i64 },
    /// A line was not what the protocol allows at that point.
    Unexpected(String),
}

impl fmt::Display for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerError::Io(what, error) => write!(f, "{what}: {error}"),
            PeerError::Eof { awaiting } => {
                write!(
                    f,
                    "the agent closed stdout before answering request {awaiting}"
                )
            }
            PeerError::Unexpected(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for PeerError {}

/// What one prompt turn delivered to the client.
#[derive(Clone, Copy, Debug)]
pub struct Turn {
    /// `agent_message_chunk` notifications received before the answer.
    pub chunks: u64,
    /// Bytes read from the agent's stdout from the prompt to its answer, newlines included.
    pub wire_bytes: u64,
    /// From writing the prompt until its answer (and every chunk before it) was read.
    pub elapsed: Duration,
}

/// A running agent with an open session. Dropping it kills the child.
pub struct Peer {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    framer: Framer<Vec<u8>>,
    block: Box<[u8]>,
    /// `block[pending.0..pending.1]` was read but not yet taken by the framer.
    pending: (usize, usize),
    /// Bytes read since the last [`Peer::take_wire_bytes`].
    wire_bytes: u64,
    next_id: i64,
    session_id: String,
}

impl Peer {
    /// Spawns the agent with `cwd` as its working directory (and the session's), then runs
    /// `initialize` and `session/new`.
    pub fn start(spec: &AgentSpec, cwd: &Path) -> Result<Peer, PeerError> {
        let mut child = Command::new(&spec.program)
            .args(&spec.args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| PeerError::Io("spawning the agent", e))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(PeerError::Unexpected("the child has no pipes".into()));
        };
        let mut peer = Peer {
            child,
            stdin: Some(stdin),
            stdout,
            framer: Framer::with_limit(MAX_LINE),
            block: vec![0; READ_BLOCK].into_boxed_slice(),
            pending: (0, 0),
            wire_bytes: 0,
            next_id: 0,
            session_id: String::new(),
        };
        let id = peer.send(
            "initialize",
            r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}"#,
        )?;
        peer.read_until_answer(id, None)?;
        let cwd = serde_json::to_string(&cwd.to_string_lossy())
            .map_err(|e| PeerError::Unexpected(e.to_string()))?;
        let id = peer.send(
            "session/new",
            &format!(r#"{{"cwd":{cwd},"mcpServers":[]}}"#),
        )?;
        let answer = peer.read_until_answer(id, None)?;
        let answer: serde_json::Value =
            serde_json::from_str(&answer).map_err(|e| PeerError::Unexpected(e.to_string()))?;
        let Some(session_id) = answer.get("sessionId").and_then(|s| s.as_str()) else {
            return Err(PeerError::Unexpected(format!(
                "session/new answered without a sessionId: {answer}"
            )));
        };
        peer.session_id = session_id.to_owned();
        Ok(peer)
    }

    /// The child's process id, for `/proc/<pid>/status`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The id `session/new` answered with.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Closes the agent's stdin (it saves its sessions and exits) and waits up to `limit`
    /// for it to exit, reading `/proc/<pid>/status` every millisecond meanwhile: the exit
    /// status (`None` if it did not exit in time) and the last reading before it was gone,
    /// whose `VmHWM` is the peak of its whole life but for its last millisecond at most.
    pub fn close_and_wait(&mut self, limit: Duration) -> (Option<ExitStatus>, Memory) {
        drop(self.stdin.take());
        let pid = self.pid();
        let start = Instant::now();
        let mut last = Memory::default();
        loop {
            if let Some(now) = Memory::of(pid) {
                last = now;
            }
            match self.child.try_wait() {
                Ok(Some(status)) => return (Some(status), last),
                Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(1)),
                _ => return (None, last),
            }
        }
    }

    /// Sends `session/prompt` with one text block and returns its request id, without reading.
    pub fn send_prompt(&mut self, text: &str) -> Result<i64, PeerError> {
        let session = serde_json::to_string(&self.session_id)
            .map_err(|e| PeerError::Unexpected(e.to_string()))?;
        let text = serde_json::to_string(text).map_err(|e| PeerError::Unexpected(e.to_string()))?;
        self.send(
            "session/prompt",
            &format!(r#"{{"sessionId":{session},"prompt":[{{"type":"text","text":{text}}}]}}"#),
        )
    }

    /// Sends a prompt and reads until its answer, which must be `end_turn`, counting the
    /// `agent_message_chunk`s on the way.
    pub fn prompt(&mut self, text: &str) -> Result<Turn, PeerError> {
        self.wire_bytes = 0;
        let start = Instant::now();
        let id = self.send_prompt(text)?;
        self.finish_prompt(id, start)
    }

    /// Reads the rest of a prompt sent with [`Peer::send_prompt`]; `start` is when it was sent.
    pub fn finish_prompt(&mut self, id: i64, start: Instant) -> Result<Turn, PeerError> {
        let mut chunks = 0;
        let answer = self.read_until_answer(id, Some(&mut chunks))?;
        let elapsed = start.elapsed();
        if !answer.contains(r#""stopReason":"end_turn""#) {
            return Err(PeerError::Unexpected(format!(
                "the prompt ended with {answer}, not end_turn"
            )));
        }
        Ok(Turn {
            chunks,
            wire_bytes: self.wire_bytes,
            elapsed,
        })
    }

    /// Sends `initialize` again (ACP allows it) and reads its answer: a reading taken once
    /// this returns follows the turn's save (R-STORE-5 saves it before its answer) and the
    /// agent's next request.
    pub fn ping(&mut self) -> Result<(), PeerError> {
        let id = self.send("initialize", r#"{"protocolVersion":1}"#)?;
        self.read_until_answer(id, None).map(drop)
    }

    fn send(&mut self, method: &str, params: &str) -> Result<i64, PeerError> {
        self.next_id += 1;
        let id = self.next_id;
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        let stdin = self.stdin.as_mut().ok_or(PeerError::Io(
            "writing to the agent",
            io::Error::new(io::ErrorKind::BrokenPipe, "stdin was closed"),
        ))?;
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .map_err(|e| PeerError::Io("writing to the agent", e))?;
        Ok(id)
    }

    /// Reads lines until the response to `id` and returns its `result` text. Notifications
    /// are allowed only when `chunks` counts them, and each must be an `agent_message_chunk`
    /// `session/update` (other `session/update`s are passed over, not counted); anything
    /// else (a request, an error answer, another id) is an error.
    fn read_until_answer(
        &mut self,
        id: i64,
        mut chunks: Option<&mut u64>,
    ) -> Result<String, PeerError> {
        // Every pass takes a line, feeds bytes, or reads; reads end at EOF.
        loop {
            while let Some(line) = self.framer.next_line() {
                let line = line.map_err(|e| PeerError::Unexpected(format!("framing: {e}")))?;
                let message = envelope::scan(line).map_err(|e| {
                    PeerError::Unexpected(format!("the agent sent an invalid line ({e}): {line}"))
                })?;
                match message {
                    Message::Notification(notification) => {
                        let is_chunk = notification.method.as_plain() == Some("session/update")
                            && notification.params.is_some_and(|p| {
                                p.get().contains(r#""sessionUpdate":"agent_message_chunk""#)
                            });
                        // Our agent also announces its commands right behind the
                        // `session/new` answer, titles the session at its first prompt and
                        // reports context usage at the turn's end: other `session/update`s
                        // may come anywhere and are not counted.
                        let is_other_update =
                            notification.method.as_plain() == Some("session/update") && !is_chunk;
                        match chunks.as_deref_mut() {
                            Some(count) if is_chunk => *count += 1,
                            _ if is_other_update => {}
                            _ => {
                                return Err(PeerError::Unexpected(format!(
                                    "unexpected notification: {line}"
                                )));
                            }
                        }
                    }
                    Message::Response(response) if response.id.as_i64() == Some(id) => {
                        return match response.outcome {
                            Outcome::Result(result) => Ok(result.get().to_owned()),
                            _ => Err(PeerError::Unexpected(format!(
                                "request {id} failed: {line}"
                            ))),
                        };
                    }
                    _ => {
                        return Err(PeerError::Unexpected(format!(
                            "unexpected message while awaiting {id}: {line}"
                        )));
                    }
                }
            }
            let (from, to) = self.pending;
            if from < to {
                let taken = self.framer.feed(&self.block[from..to]);
                self.pending.0 += taken;
                continue;
            }
            let read = self
                .stdout
                .read(&mut self.block)
                .map_err(|e| PeerError::Io("reading from the agent", e))?;
            if read == 0 {
                return Err(PeerError::Eof { awaiting: id });
            }
            self.wire_bytes += read as u64;
            self.pending = (0, read);
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // Killed rather than closed: an agent that is not reading stdout might never exit.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
