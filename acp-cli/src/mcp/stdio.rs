//! The stdio transport: the server is a child process in a process group of its own; we
//! write lines to its stdin and read lines from its stdout. Its stderr is kept in a small
//! ring for the log (R-MCP-3); its `env` is passed as given and never logged.
//!
//! Dropping a [`StdioServer`] kills the whole group with SIGKILL, so neither the server nor
//! what it started outlives its session (R-MCP-8).

use std::collections::VecDeque;
use std::os::unix::process::CommandExt;
use std::sync::{Arc, Mutex};

use acp_conform::process::LineSplitter;
use smol::channel::Receiver;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::process::{Child, Command, Stdio};

use super::inbound::Inbound;

/// Lines of stderr kept per server.
pub(crate) const STDERR_LINES: usize = 50;
/// Longest stderr line kept (longer ones are cut).
pub(crate) const STDERR_LINE_BYTES: usize = 1024;

/// A running stdio server.
pub(crate) struct StdioServer {
    group: Option<rustix::process::Pid>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    _child: Child,
    _tasks: Vec<smol::Task<()>>,
}

impl StdioServer {
    /// Starts `server` in `cwd`: its output goes to `inbound`, `lines` to its input.
    pub(super) fn spawn(
        server: &acp_core::schema::McpServerStdio,
        cwd: &str,
        inbound: Inbound,
        lines: Receiver<Vec<u8>>,
    ) -> Result<Self, String> {
        let mut command = std::process::Command::new(&server.command);
        command.args(&server.args).current_dir(cwd).process_group(0);
        for variable in &server.env {
            command.env(&variable.name, &variable.value);
        }
        let mut child = Command::from(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start '{}': {e}", server.command))?;
        let group = i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let mut tasks = Vec::new();
        if let Some(mut stdin) = child.stdin.take() {
            tasks.push(smol::spawn(async move {
                while let Ok(line) = lines.recv().await {
                    if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                        return;
                    }
                }
            }));
        }
        if let Some(mut stdout) = child.stdout.take() {
            tasks.push(smol::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match stdout.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => inbound.bytes(&buf[..n]),
                    }
                }
                inbound.closed("the server exited (its output closed)".into());
            }));
        }
        if let Some(mut err) = child.stderr.take() {
            let ring = Arc::clone(&stderr);
            tasks.push(smol::spawn(async move {
                let mut lines = LineSplitter::new(STDERR_LINE_BYTES);
                let mut buf = vec![0u8; 8 * 1024];
                let mut out = Vec::new();
                loop {
                    match err.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => lines.feed(&buf[..n], &mut out),
                    }
                    keep_stderr(&ring, &mut out);
                }
                lines.finish(&mut out);
                keep_stderr(&ring, &mut out);
            }));
        }
        Ok(Self {
            group,
            stderr,
            _child: child,
            _tasks: tasks,
        })
    }

    /// The last stderr lines, one per line.
    pub(crate) fn stderr_tail(&self) -> String {
        let ring = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        ring.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// Moves the stderr lines in `lines` (each already cut to [`STDERR_LINE_BYTES`] bytes by the
/// splitter, invalid UTF-8 replaced) into the ring, without their trailing whitespace and cut
/// on a character boundary.
fn keep_stderr(ring: &Mutex<VecDeque<String>>, lines: &mut Vec<String>) {
    if lines.is_empty() {
        return;
    }
    let mut ring = ring.lock().unwrap_or_else(|p| p.into_inner());
    for line in lines.drain(..) {
        let mut text = line.trim_end().to_owned();
        if text.len() > STDERR_LINE_BYTES {
            let mut end = STDERR_LINE_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        if ring.len() == STDERR_LINES {
            ring.pop_front();
        }
        ring.push_back(text);
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            // Gone already is what we wanted.
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring_after(reads: &[&[u8]]) -> Vec<String> {
        let ring = Mutex::new(VecDeque::new());
        let mut lines = LineSplitter::new(STDERR_LINE_BYTES);
        let mut out = Vec::new();
        for read in reads {
            lines.feed(read, &mut out);
            keep_stderr(&ring, &mut out);
        }
        lines.finish(&mut out);
        keep_stderr(&ring, &mut out);
        ring.into_inner().unwrap().into()
    }

    /// R-MCP-3: stderr lines are kept trimmed, a last line without a newline too.
    #[test]
    fn stderr_lines_are_kept_trimmed() {
        assert_eq!(
            ring_after(&[b"start", b"ing \r\n\nready\t\n", b"bye"]),
            ["starting", "", "ready", "bye"]
        );
    }

    /// R-MCP-3: a long line is cut to `STDERR_LINE_BYTES` on a character boundary, and one
    /// that never ends is cut as it streams in rather than held whole.
    #[test]
    fn a_long_stderr_line_is_cut_on_a_character_boundary() {
        let long = format!(
            "{}é{}\nnext\n",
            "a".repeat(STDERR_LINE_BYTES - 1),
            "b".repeat(10)
        );
        let ring = ring_after(&[long.as_bytes()]);
        assert_eq!(ring, ["a".repeat(STDERR_LINE_BYTES - 1), "next".to_owned()]);
        let endless = vec![b'x'; 1024 * 1024];
        let mut lines = LineSplitter::new(STDERR_LINE_BYTES);
        let mut out = Vec::new();
        for _ in 0..4 {
            lines.feed(&endless, &mut out);
        }
        assert_eq!(out, ["x".repeat(STDERR_LINE_BYTES)]);
    }
}
