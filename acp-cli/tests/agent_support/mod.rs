//! Runs the built `acp-cli --acp --stdio` over pipes for the `agent_*` tests: lines in,
//! lines out, stderr collected, exit status at the end.
//!
//! Waiting for a line has a generous guard so a broken agent fails the test instead of
//! hanging it; no test depends on how fast anything happens.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long to wait for a line before declaring the agent stuck.
const GUARD: Duration = Duration::from_secs(30);

/// A fresh, empty directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("agent-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The path as a `&str` (scratch paths are UTF-8 without characters JSON must escape).
pub fn s(path: &Path) -> &str {
    let text = path.to_str().expect("utf-8 path");
    assert!(
        !text.contains(['"', '\\']),
        "paths in tests need no escaping"
    );
    text
}

/// The built binary.
pub fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_acp-cli"))
}

/// A running agent.
pub struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
    /// The scratch directory sessions are opened in.
    pub cwd: PathBuf,
}

impl Agent {
    /// `acp-cli --acp --stdio` plus `extra` arguments, with a scratch cwd named `name`.
    pub fn start(name: &str, extra: &[&str]) -> Self {
        Self::start_with_log_env(name, extra, None)
    }

    /// Like [`Agent::start`], with `RUST_LOG` set to `rust_log` (or unset).
    pub fn start_with_log_env(name: &str, extra: &[&str], rust_log: Option<&str>) -> Self {
        Self::start_with_env(name, extra, rust_log, &[])
    }

    /// Like [`Agent::start_with_log_env`], with these environment variables set too.
    pub fn start_with_env(
        name: &str,
        extra: &[&str],
        rust_log: Option<&str>,
        env: &[(&str, &str)],
    ) -> Self {
        let cwd = scratch(name);
        let mut command = binary();
        command.args(["--acp", "--stdio"]).args(extra);
        command.envs(env.iter().copied());
        match rust_log {
            Some(filter) => command.env("RUST_LOG", filter),
            None => command.env_remove("RUST_LOG"),
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start acp-cli");
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
            cwd,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one line (the newline is added).
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// The next stdout line.
    pub fn recv(&mut self) -> String {
        match self.lines.recv_timeout(GUARD) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no line from the agent within {GUARD:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the agent closed stdout"),
        }
    }

    /// The next `n` stdout lines.
    pub fn recv_n(&mut self, n: usize) -> Vec<String> {
        (0..n).map(|_| self.recv()).collect()
    }

    /// Sends a request line and returns every line up to and including the response whose
    /// id is `id` (a number).
    pub fn call(&mut self, line: &str, id: u64) -> Vec<String> {
        self.send(line);
        self.until_response(id)
    }

    /// Lines up to and including the response to request `id`.
    pub fn until_response(&mut self, id: u64) -> Vec<String> {
        let needle = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\"");
        let error = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\"");
        let mut out = Vec::new();
        loop {
            let line = self.recv();
            let done = line.starts_with(&needle) || line.starts_with(&error);
            out.push(line);
            if done {
                return out;
            }
        }
    }

    /// `initialize` (with these client capabilities) and `session/new` in the scratch cwd;
    /// returns the session id.
    pub fn handshake_with(&mut self, client_capabilities: &str) -> String {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{client_capabilities}}}}}"#
        );
        let answer = self.call(&init, 1);
        assert_eq!(answer.len(), 1, "{answer:?}");
        self.new_session(2)
    }

    /// `initialize` with no capabilities and `session/new`; returns the session id.
    pub fn handshake(&mut self) -> String {
        self.handshake_with("{}")
    }

    /// `session/new` in the scratch cwd with request id `id`; returns the session id.
    pub fn new_session(&mut self, id: u64) -> String {
        let cwd = self.cwd.clone();
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#,
            s(&cwd)
        );
        let answer = self.call(&line, id);
        let session = session_id(answer.last().expect("answer")).expect("a sessionId");
        self.expect_commands(&session);
        session
    }

    /// The next line is the `available_commands_update` that follows every answer opening
    /// a session (R-SESSION-8), listing every demo command.
    pub fn expect_commands(&mut self, session: &str) {
        let line = self.recv();
        assert_commands(&line, session);
    }

    /// A `session/prompt` line with one text block (`text` is JSON-escaped here).
    pub fn prompt_line(id: u64, session: &str, text: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":{}}}]}}}}"#,
            json_string(text)
        )
    }

    /// Sends a prompt and returns the lines up to its answer.
    pub fn prompt(&mut self, id: u64, session: &str, text: &str) -> Vec<String> {
        self.call(&Self::prompt_line(id, session, text), id)
    }

    /// Closes stdin, collects the remaining stdout lines, waits for the exit; returns the
    /// lines, the status and stderr.
    pub fn finish(mut self) -> (Vec<String>, ExitStatus, String) {
        drop(self.stdin.take());
        self.wait_exit()
    }

    /// Waits for the exit without closing stdin (after a signal).
    pub fn wait_exit(mut self) -> (Vec<String>, ExitStatus, String) {
        let mut rest = Vec::new();
        loop {
            match self.lines.recv_timeout(GUARD) {
                Ok(line) => rest.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("the agent did not exit: {rest:?}"),
            }
        }
        let status = self.child.wait().expect("wait");
        let stderr = self
            .stderr
            .take()
            .map(|t| t.join().unwrap_or_default())
            .unwrap_or_default();
        (rest, status, stderr)
    }

    /// Sends a signal to the agent.
    pub fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).expect("pid");
        rustix::process::kill_process(pid, signal).expect("kill");
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The `sessionId` value in a line.
pub fn session_id(line: &str) -> Option<String> {
    let start = line.find("\"sessionId\":\"")? + "\"sessionId\":\"".len();
    let end = line[start..].find('"')?;
    Some(line[start..start + end].to_owned())
}

/// `text` as a JSON string literal.
pub fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A `session/update` line of a message chunk.
pub fn message(session: &str, text: &str) -> String {
    update(
        session,
        &format!(
            r#"{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":{}}}}}"#,
            json_string(text)
        ),
    )
}

/// A `session/update` line with this `update` object.
pub fn update(session: &str, update: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{session}","update":{update}}}}}"#
    )
}

/// The answer line of a prompt.
pub fn stop(id: u64, reason: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"stopReason":"{reason}"}}}}"#)
}

/// The four permission options as the agent sends them.
pub const OPTIONS: &str = r#"[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"},{"optionId":"allow_always","name":"Always allow","kind":"allow_always"},{"optionId":"reject_once","name":"Reject once","kind":"reject_once"},{"optionId":"reject_always","name":"Always reject","kind":"reject_always"}]"#;

/// The answer to the agent's request `id` choosing `option`.
pub fn choose(id: &str, option: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"outcome":{{"outcome":"selected","optionId":"{option}"}}}}}}"#
    )
}

/// The `id` of a request line from the agent.
pub fn request_id(line: &str) -> String {
    let start = line.find("\"id\":").expect("an id") + 5;
    let end = line[start..].find(',').expect("end of id");
    line[start..start + end].to_owned()
}

/// The demo commands, in the order `available_commands_update` lists them.
pub const COMMAND_NAMES: &[&str] = &[
    "echo", "think", "plan", "tool", "read", "write", "ask", "sleep", "flood", "stop", "error",
    "history", "notice", "usage", "title", "plan2", "unplan", "subagent", "mcp",
];

/// Checks that `line` is the `available_commands_update` of `session`: every demo command,
/// each with a description.
pub fn assert_commands(line: &str, session: &str) {
    let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    assert_eq!(value["method"], "session/update", "{line}");
    assert_eq!(value["params"]["sessionId"], session, "{line}");
    let update = &value["params"]["update"];
    assert_eq!(
        update["sessionUpdate"], "available_commands_update",
        "{line}"
    );
    let commands = update["availableCommands"].as_array().expect("a list");
    let names: Vec<&str> = commands.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, COMMAND_NAMES, "{line}");
    assert!(
        commands
            .iter()
            .all(|c| c["description"].as_str().is_some_and(|d| !d.is_empty())),
        "{line}"
    );
}

/// The `session_info_update` naming the session after its first prompt.
pub fn title(session: &str, title: &str) -> String {
    update(
        session,
        &format!(
            r#"{{"sessionUpdate":"session_info_update","title":{}}}"#,
            json_string(title)
        ),
    )
}

/// The `usage_update` closing a turn: `used` bytes of text exchanged in the session so far.
pub fn usage(session: &str, used: u64) -> String {
    update(
        session,
        &format!(r#"{{"sessionUpdate":"usage_update","used":{used},"size":1000000}}"#),
    )
}
