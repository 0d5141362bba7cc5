//! One agent process on real pipes: spawned in its own process group, its output turned into
//! events, and the four things the stop sequence does to it.
//!
//! Two background tasks per process (on smol's global executor) read its output (stdout and
//! stderr, in one task so their order is kept) and wait for the exit; each sends
//! [`ProcessEvent`]s, tagged with the process's [`ProcessKey`], into one channel the owner reads.
//! Reaping happens in the exit task, so a process never stays a zombie of ours.
//!
//! Signals go by pid through `rustix` (no unsafe code here). The process is the leader of its
//! own group (`setpgid(0, 0)` in the child, via std's safe `process_group(0)`), so killing the
//! group reaches the grandchildren an agent leaves behind and nothing of the host.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};

use acp_core::wire::frame::Framer;
use acp_host::supervisor::config::ServerConfig;
use acp_host::supervisor::env::child_env;
use acp_host::supervisor::recovery::ExitStatus;
use acp_host::supervisor::stderr::MAX_LINE_BYTES;
use rustix::process::{Pid, Signal};
use smol::channel::Sender;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};

/// How much one stdout read takes at most.
pub const STDOUT_CHUNK_BYTES: usize = 64 * 1024;

/// What to run: argv, environment (complete: the child inherits nothing else) and cwd.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentCommand {
    /// argv\[0\], looked up on the child's `PATH` if it has no slash.
    pub program: String,
    /// The rest of argv.
    pub args: Vec<String>,
    /// The whole environment of the child.
    pub env: Vec<(String, String)>,
    /// The working directory.
    pub cwd: PathBuf,
}

impl AgentCommand {
    /// The command for a configured server: its argv, its cwd resolved against
    /// `project_root`, and [`child_env`] of `host_env` and the server's `env`.
    pub fn for_server<'a>(
        config: &ServerConfig,
        project_root: &Path,
        host_env: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> AgentCommand {
        let root = project_root.to_string_lossy();
        AgentCommand {
            program: config.command.clone(),
            args: config.args.clone(),
            env: child_env(host_env, &config.env),
            cwd: PathBuf::from(config.resolve_cwd(&root)),
        }
    }
}

/// Names one spawned process for as long as its events may arrive (pids get reused; keys
/// do not).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProcessKey(pub u64);

/// Something a process did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProcessEvent {
    /// Bytes from stdout, as read (no framing: the connection frames).
    Stdout(Vec<u8>),
    /// stdout reached EOF (or failed).
    StdoutEof,
    /// One stderr line: invalid UTF-8 replaced, the newline (and a `\r`) removed, cut to
    /// [`MAX_LINE_BYTES`] bytes (the rest of an overlong line is dropped).
    StderrLine(String),
    /// stderr reached EOF (or failed).
    StderrEof,
    /// The process ended and was reaped.
    Exited(ExitStatus),
}

/// A running (or finished) agent process; see the module docs.
#[derive(Debug)]
pub struct AgentProcess {
    key: ProcessKey,
    pid: u32,
    stdin: Option<ChildStdin>,
    /// Dropped to make the output task close stdout's read end ([`AgentProcess::close_stdout`]).
    stdout_open: Option<Sender<()>>,
    exited: bool,
    _tasks: [smol::Task<()>; 2],
}

impl AgentProcess {
    /// Spawns `command` in a new process group with piped stdio; its events go to `events`
    /// tagged with `key`. The error is the OS's (bad program, bad cwd…).
    pub fn spawn(
        command: &AgentCommand,
        key: ProcessKey,
        events: Sender<(ProcessKey, ProcessEvent)>,
    ) -> io::Result<AgentProcess> {
        let mut std_command = std::process::Command::new(&command.program);
        std_command
            .args(&command.args)
            .env_clear()
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&command.cwd)
            .process_group(0);
        let mut child = Command::from(std_command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();

        let (stdout_open, close_stdout) = smol::channel::bounded(1);
        let output_task = smol::spawn(pump_output(
            key,
            stdout,
            stderr,
            close_stdout,
            events.clone(),
        ));

        let exit_task = smol::spawn(async move {
            let status = match child.status().await {
                Ok(status) => exit_status(status),
                // Waiting itself failed (should not happen): report it as a failed exit so
                // the lifecycle does not wait for ever.
                Err(_) => ExitStatus::Code(-1),
            };
            let _ = events.send((key, ProcessEvent::Exited(status))).await;
        });

        Ok(AgentProcess {
            key,
            pid,
            stdin,
            stdout_open: Some(stdout_open),
            exited: false,
            _tasks: [output_task, exit_task],
        })
    }

    /// The key its events carry.
    pub fn key(&self) -> ProcessKey {
        self.key
    }

    /// Its pid, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether its exit was seen ([`AgentProcess::mark_exited`]).
    pub fn has_exited(&self) -> bool {
        self.exited
    }

    /// Records that its exit event arrived: from now on no signal is sent to its pid (which
    /// the system may give to another process).
    pub fn mark_exited(&mut self) {
        self.exited = true;
    }

    /// Writes all of `bytes` to its stdin and flushes. Fails once stdin is closed
    /// (`BrokenPipe`) or when the child closed its end.
    pub async fn write_stdin(&mut self, bytes: &[u8]) -> io::Result<()> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "server stdin is not available",
            ));
        };
        stdin.write_all(bytes).await?;
        stdin.flush().await
    }

    /// Closes its stdin so it reads EOF. Closing twice does nothing.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Closes the read end of the agent's stdout, as a client that vanished would: the
    /// agent's next write fails (`EPIPE`). What was read before still arrives, then
    /// [`ProcessEvent::StdoutEof`].
    pub fn close_stdout(&mut self) {
        self.stdout_open = None;
    }

    /// Sends SIGTERM to the process only. Nothing once it has exited.
    pub fn terminate(&self) -> io::Result<()> {
        if self.exited {
            return Ok(());
        }
        let Some(pid) = pid_of(self.pid) else {
            return Ok(());
        };
        ignore_gone(rustix::process::kill_process(pid, Signal::TERM))
    }

    /// Sends SIGKILL to its whole process group. Still useful after the leader exited: the
    /// group lives on while grandchildren are in it (and its id is not reused until then).
    pub fn kill_group(&self) -> io::Result<()> {
        let Some(pid) = pid_of(self.pid) else {
            return Ok(());
        };
        ignore_gone(rustix::process::kill_process_group(pid, Signal::KILL))
    }
}

/// The most stderr read ahead of one stdout chunk: Linux's largest pipe buffer by default
/// (`/proc/sys/fs/pipe-max-size`), so all a pipe can hold.
const STDERR_DRAIN_BYTES: usize = 1024 * 1024;

/// What one read of the agent's output gave: a count of bytes (0 at EOF or on an error).
enum OutputRead {
    Stdout(usize),
    Stderr(usize),
    /// The owner closed stdout ([`AgentProcess::close_stdout`]).
    Closed,
}

/// Reads stdout and stderr in one task so their events keep the order the agent wrote them in:
/// stderr is tried first, and before a stdout chunk is passed on, whatever stderr already holds
/// is read and sent. An agent that logs a line and then answers has its line seen first (so
/// `/acp logs` after a turn shows what the turn logged). Ends when both reach EOF or the owner
/// stops listening.
async fn pump_output(
    key: ProcessKey,
    mut stdout: Option<ChildStdout>,
    mut stderr: Option<ChildStderr>,
    close_stdout: smol::channel::Receiver<()>,
    events: Sender<(ProcessKey, ProcessEvent)>,
) {
    let mut lines = LineSplitter::new(MAX_LINE_BYTES);
    let mut stdout_buf = vec![0u8; STDOUT_CHUNK_BYTES];
    let mut stderr_buf = vec![0u8; 8 * 1024];
    let mut out = Vec::new();
    while stdout.is_some() || stderr.is_some() {
        let reading_stdout = stdout.is_some();
        let read_stderr = async {
            match stderr.as_mut() {
                Some(err) => OutputRead::Stderr(err.read(&mut stderr_buf).await.unwrap_or(0)),
                None => smol::future::pending().await,
            }
        };
        let read_stdout = async {
            match stdout.as_mut() {
                Some(o) => OutputRead::Stdout(o.read(&mut stdout_buf).await.unwrap_or(0)),
                None => smol::future::pending().await,
            }
        };
        let closed = async {
            if reading_stdout {
                // Nothing is ever sent: the owner dropping its sender is the signal.
                let _ = close_stdout.recv().await;
                OutputRead::Closed
            } else {
                smol::future::pending().await
            }
        };
        let mut sends = Vec::new();
        match smol::future::or(closed, smol::future::or(read_stderr, read_stdout)).await {
            OutputRead::Closed => {
                stdout = None;
                sends.push(ProcessEvent::StdoutEof);
            }
            OutputRead::Stderr(n) => {
                if take_stderr(&mut lines, &stderr_buf[..n], &mut out) {
                    stderr = None;
                }
                sends.extend(out.drain(..).map(ProcessEvent::StderrLine));
                if stderr.is_none() {
                    sends.push(ProcessEvent::StderrEof);
                }
            }
            OutputRead::Stdout(0) => {
                stdout = None;
                sends.push(ProcessEvent::StdoutEof);
            }
            OutputRead::Stdout(n) => {
                // The agent wrote any earlier stderr before this chunk: it is in the pipe now,
                // and a pipe holds at most STDERR_DRAIN_BYTES. Reading no further keeps an
                // agent that floods stderr from holding its stdout back.
                let had_stderr = stderr.is_some();
                let mut drained = 0;
                while let Some(err) = stderr.as_mut()
                    && drained < STDERR_DRAIN_BYTES
                {
                    let Some(result) = smol::future::poll_once(err.read(&mut stderr_buf)).await
                    else {
                        break;
                    };
                    let n = result.unwrap_or(0);
                    drained += n;
                    if take_stderr(&mut lines, &stderr_buf[..n], &mut out) {
                        stderr = None;
                    }
                }
                sends.extend(out.drain(..).map(ProcessEvent::StderrLine));
                if had_stderr && stderr.is_none() {
                    sends.push(ProcessEvent::StderrEof);
                }
                sends.push(ProcessEvent::Stdout(stdout_buf[..n].to_vec()));
            }
        }
        for event in sends {
            if events.send((key, event)).await.is_err() {
                return;
            }
        }
    }
}

/// Feeds one stderr read (`bytes` empty at EOF) to `lines`; true at EOF.
fn take_stderr(lines: &mut LineSplitter, bytes: &[u8], out: &mut Vec<String>) -> bool {
    if bytes.is_empty() {
        lines.finish(out);
        true
    } else {
        lines.feed(bytes, out);
        false
    }
}

/// `Pid` for a pid from the OS; `None` for 0 or out-of-range values, which are never ours.
fn pid_of(pid: u32) -> Option<Pid> {
    Pid::from_raw(i32::try_from(pid).ok()?)
}

/// A process or group that is already gone is what we wanted.
fn ignore_gone(result: rustix::io::Result<()>) -> io::Result<()> {
    match result {
        Err(rustix::io::Errno::SRCH) | Ok(()) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

fn exit_status(status: std::process::ExitStatus) -> ExitStatus {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitStatus::Code(code),
        (None, Some(signal)) => ExitStatus::Signal(signal),
        (None, None) => ExitStatus::Code(-1),
    }
}

/// Cuts a byte stream into lines wherever it was split: each `\n` ends a line, one `\r`
/// before it goes (R-FRAME-1), bytes after the last `\n` wait for the next piece, and at the
/// end of the stream a last line without a newline is still a line (R-FRAME-3). Blank lines
/// are lines (the stderr ring skips them itself).
///
/// acp-core's framer, raw, so this is the workspace's one line splitter for byte streams
/// that are not ACP connections: agents' stderr (the host's rings, the MCP servers'), and
/// the conformance harness's view of both directions of its exchange.
///
/// - [`LineSplitter::new`] keeps at most `max` bytes of each line and drops the rest
///   (truncating: memory stays within `max(max, 8 KiB)` however long a line is);
///   [`LineSplitter::unlimited`] keeps every line whole (the harness writes oversized lines
///   on purpose, and its monitor must see them whole).
/// - [`feed`](LineSplitter::feed) / [`finish`](LineSplitter::finish) give text (invalid
///   UTF-8 replaced); [`push`](LineSplitter::push) / [`finish_raw`](LineSplitter::finish_raw)
///   give the bytes.
#[derive(Debug)]
pub struct LineSplitter {
    framer: Framer<Vec<u8>>,
}

impl LineSplitter {
    /// A splitter keeping at most `max` bytes of each line.
    pub fn new(max: usize) -> Self {
        LineSplitter {
            framer: Framer::with_limit(max).raw().truncating(),
        }
    }

    /// A splitter that keeps every line whole, however long.
    pub fn unlimited() -> Self {
        LineSplitter {
            framer: Framer::with_limit(usize::MAX).raw(),
        }
    }

    /// Feeds bytes; every completed line goes to `out` as text.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<String>) {
        self.each_line(bytes, |line| {
            out.push(String::from_utf8_lossy(line).into_owned())
        });
    }

    /// The stream ended: a last unterminated line goes to `out` as text.
    pub fn finish(&mut self, out: &mut Vec<String>) {
        if let Some(line) = self.finish_raw() {
            out.push(String::from_utf8_lossy(&line).into_owned());
        }
    }

    /// The lines `bytes` completes, as bytes.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut lines = Vec::new();
        self.each_line(bytes, |line| lines.push(line.to_vec()));
        lines
    }

    /// Whether a line has begun and not ended.
    pub fn has_partial(&self) -> bool {
        self.framer.buffered() > 0
    }

    /// The stream ended: the unterminated last line, as bytes, if any bytes are left.
    pub fn finish_raw(&mut self) -> Option<Vec<u8>> {
        self.framer.finish();
        let mut last = None;
        self.each_line(&[], |line| last = Some(line.to_vec()));
        last
    }

    /// Hands each line `bytes` completes to `emit`, without its `\n` and one `\r` before it.
    fn each_line(&mut self, mut bytes: &[u8], mut emit: impl FnMut(&[u8])) {
        while let Some(line) = self.framer.next_line_bytes_from(&mut bytes) {
            // Raw and either truncating or unlimited: no line is ever reported too long.
            let line = line.unwrap_or_default();
            emit(line.strip_suffix(b"\r").unwrap_or(line));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    fn split(chunks: &[&[u8]], max: usize) -> Vec<String> {
        let mut splitter = LineSplitter::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            splitter.feed(chunk, &mut out);
        }
        splitter.finish(&mut out);
        out
    }

    #[test]
    fn lines_split_across_chunks_and_crlf() {
        assert_eq!(
            split(&[b"ab", b"c\r\nde", b"f\n", b"tail"], 100),
            ["abc", "def", "tail"]
        );
    }

    #[test]
    fn overlong_line_is_cut_and_the_rest_dropped() {
        assert_eq!(split(&[b"abcdef", b"gh\nxy\n"], 4), ["abcd", "xy"]);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(split(&[b"a\xffb\n"], 100), ["a\u{fffd}b"]);
    }

    #[test]
    fn empty_lines_are_delivered_for_the_ring_to_skip() {
        assert_eq!(split(&[b"\n\nx"], 100), ["", "", "x"]);
    }

    // The splitter reads peer bytes, so it gets properties over arbitrary input.

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
        let mut splitter = LineSplitter::unlimited();
        let mut lines = Vec::new();
        let mut at = 0;
        let mut ends: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        ends.sort_unstable();
        ends.push(bytes.len());
        for end in ends {
            lines.extend(splitter.push(&bytes[at..end]));
            at = end;
        }
        lines.extend(splitter.finish_raw());
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
        let mut splitter = LineSplitter::unlimited();
        assert_eq!(
            splitter.push(b"a\r\nb\rc\n\nd"),
            vec![b"a".to_vec(), b"b\rc".to_vec(), vec![]]
        );
        assert_eq!(splitter.finish_raw(), Some(b"d".to_vec()));
        assert_eq!(splitter.finish_raw(), None);
    }

    #[test]
    fn a_crlf_split_between_its_bytes() {
        let mut splitter = LineSplitter::unlimited();
        assert!(splitter.push(b"x\r").is_empty());
        assert_eq!(splitter.push(b"\ny"), vec![b"x".to_vec()]);
    }
}
