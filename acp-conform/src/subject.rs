//! The agent under test, as bytes: one process (started with [`crate::process`], so in
//! its own process group), raw writes to its stdin, and its stdout cut into lines and parsed
//! with `serde_json`. Nothing here knows JSON-RPC beyond "is this line a JSON object with
//! `jsonrpc: "2.0"`": the harness must be able to send anything, and to see everything the
//! agent sends, lines that are not JSON-RPC included.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use acp_core::wire::frame::{FrameError, Framer};
use acp_host::supervisor::recovery::ExitStatus;
use serde_json::Value;
use smol::channel::Receiver;

use super::chaos::Chaos;
use crate::process::{AgentCommand, AgentProcess, ProcessEvent, ProcessKey};

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
            splitter: LineSplitter::default(),
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
                if let Some(rest) = self.splitter.finish() {
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

/// Cuts a byte stream into lines wherever it was split: each `\n` ends a line, a `\r` before
/// it is dropped (R-FRAME-1), and bytes after the last `\n` wait for the next piece. Used for
/// the agent's stdout and for the harness's own writes (which the exchange monitor reads).
///
/// acp-core's framer, raw (blank lines are lines here) and without a length limit: the
/// harness writes oversized lines on purpose, and the monitor must see them whole.
#[derive(Debug)]
pub(crate) struct LineSplitter {
    framer: Framer<Vec<u8>>,
}

impl Default for LineSplitter {
    fn default() -> Self {
        LineSplitter {
            framer: Framer::with_limit(usize::MAX).raw(),
        }
    }
}

impl LineSplitter {
    /// The lines `bytes` completes, without their `\n` (or `\r\n`).
    pub(crate) fn push(&mut self, mut bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut lines = Vec::new();
        while let Some(line) = self.framer.next_line_bytes_from(&mut bytes) {
            lines.push(without_cr(line));
        }
        lines
    }

    /// Whether a line has begun and not ended.
    pub(crate) fn has_partial(&self) -> bool {
        self.framer.buffered() > 0
    }

    /// The unterminated last line at the end of the stream, if any bytes are left.
    pub(crate) fn finish(&mut self) -> Option<Vec<u8>> {
        self.framer.finish();
        self.framer
            .next_line_bytes_from(&mut &[][..])
            .map(without_cr)
    }
}

/// A raw line without the `\r` before its `\n`; the framer has no limit, so no line is ever
/// reported too long.
fn without_cr(line: Result<&[u8], FrameError>) -> Vec<u8> {
    let line = line.unwrap_or_default();
    line.strip_suffix(b"\r").unwrap_or(line).to_vec()
}

/// `base` scaled by `--timeout-scale`.
pub(crate) fn scaled(base: Duration, scale: f64) -> Duration {
    base.mul_f64(scale.max(0.01))
}

#[cfg(test)]
mod tests {
    //! The splitter reads peer bytes, so it gets properties over arbitrary input.
    use super::LineSplitter;
    use quickcheck::quickcheck;

    /// Arbitrary bytes with plenty of line ends in them.
    fn stream(seed: Vec<u8>) -> Vec<u8> {
        seed.into_iter()
            .map(|b| match b % 7 {
                0 => b'\n',
                1 => b'\r',
                _ => b,
            })
            .collect()
    }

    /// Every line of `bytes` fed in the pieces `cuts` marks, the unterminated rest included.
    fn lines_of(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
        let mut splitter = LineSplitter::default();
        let mut lines = Vec::new();
        let mut at = 0;
        let mut ends: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        ends.sort_unstable();
        ends.push(bytes.len());
        for end in ends {
            lines.extend(splitter.push(&bytes[at..end]));
            at = end;
        }
        lines.extend(splitter.finish());
        lines
    }

    quickcheck! {
        fn any_split_gives_the_same_lines(seed: Vec<u8>, cuts: Vec<usize>) -> bool {
            let bytes = stream(seed);
            lines_of(&bytes, &cuts) == lines_of(&bytes, &[])
        }

        fn lines_are_the_stream_cut_at_each_newline(seed: Vec<u8>) -> bool {
            let bytes = stream(seed);
            let lines = lines_of(&bytes, &[]);
            let expected: Vec<Vec<u8>> = bytes
                .split(|&b| b == b'\n')
                .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
                .collect();
            // `split` gives an empty last piece after a final `\n` (or for no input at all):
            // the splitter gives no line for it.
            let ended = bytes.is_empty() || bytes.ends_with(b"\n");
            let expected = match expected.split_last() {
                Some((_, rest)) if ended => rest.to_vec(),
                _ => expected,
            };
            lines == expected
        }

        fn byte_by_byte_is_the_same(seed: Vec<u8>) -> bool {
            let bytes = stream(seed);
            let every: Vec<usize> = (0..bytes.len()).collect();
            lines_of(&bytes, &every) == lines_of(&bytes, &[])
        }
    }

    #[test]
    fn crlf_and_lone_cr() {
        let mut splitter = LineSplitter::default();
        assert_eq!(
            splitter.push(b"a\r\nb\rc\n\nd"),
            vec![b"a".to_vec(), b"b\rc".to_vec(), vec![]]
        );
        assert_eq!(splitter.finish(), Some(b"d".to_vec()));
        assert_eq!(splitter.finish(), None);
    }

    #[test]
    fn a_crlf_split_between_its_bytes() {
        let mut splitter = LineSplitter::default();
        assert!(splitter.push(b"x\r").is_empty());
        assert_eq!(splitter.push(b"\ny"), vec![b"x".to_vec()]);
    }
}
