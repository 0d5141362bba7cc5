//! The harness's `terminal/*`, for the cases that offer `terminal: true` (R-FS-3..R-FS-5):
//! each `terminal/create` runs for real, a command line without `args` through `sh -c`, in
//! the case's temporary directory (or the absolute `cwd` asked for), in a process group of its
//! own so `kill` and `release` stop everything it started. Its stdout and stderr go to one
//! buffer that keeps the last `outputByteLimit` bytes, cut from the start at a character
//! boundary (`truncated: true`) as the schema asks of a client. `wait_for_exit` is answered
//! when the command exits: [`TerminalHost::finished_waits`] says which waits can be answered,
//! and the connection polls it while any is pending. What the agent did with each terminal
//! stays here for the cases to read; every command still running when the case ends is killed.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use serde_json::{Value, json};

/// What a command keeps when the agent names no `outputByteLimit`: a bound on the harness's
/// own memory, reported as a truncation like any other.
const DEFAULT_KEPT: usize = 16 << 20;
/// How long the output readers get to copy what a command wrote before its exit is told.
const READERS_DRAIN: Duration = Duration::from_secs(2);

/// A reply the connection sends: a result, or a JSON-RPC error `(code, message)`.
pub(crate) type Reply = Result<Value, (i64, &'static str)>;

/// What the host does with one `terminal/*` request.
pub(crate) enum Handled {
    /// Answer now.
    Now(Reply),
    /// A `wait_for_exit` on a running command: answered by [`TerminalHost::finished_waits`].
    Later,
}

/// The output a command wrote, within its limit.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl Captured {
    fn push(&mut self, piece: &[u8]) {
        self.bytes.extend_from_slice(piece);
        if self.bytes.len() > self.limit {
            let cut = self.bytes.len() - self.limit;
            self.bytes.drain(..cut);
            self.truncated = true;
        }
    }

    /// The kept bytes from the first character boundary (a cut may leave up to three
    /// continuation bytes of a character whose start went), as text.
    fn text(&self) -> String {
        let start = self
            .bytes
            .iter()
            .take(3)
            .take_while(|&&b| (0x80..0xC0).contains(&b))
            .count();
        String::from_utf8_lossy(&self.bytes[start..]).into_owned()
    }
}

/// One terminal the agent created; see the module docs.
pub(crate) struct HostedTerminal {
    /// The id the harness gave it (`term-1`, …).
    pub(crate) id: String,
    /// The `terminal/create` params as sent.
    pub(crate) params: Value,
    child: Child,
    readers: Vec<JoinHandle<()>>,
    output: Arc<Mutex<Captured>>,
    /// `(exitCode, signal)` once the command exited.
    pub(crate) exit: Option<(Option<i32>, Option<String>)>,
    /// Whether the agent sent `terminal/kill` for it.
    pub(crate) killed: bool,
    /// Whether the agent sent `terminal/release` for it.
    pub(crate) released: bool,
    /// Whether a `terminal/output` answer said `truncated: true`.
    pub(crate) served_truncated: bool,
}

impl HostedTerminal {
    /// Records the exit once the command ended (without waiting); true when it has.
    fn poll_exit(&mut self) -> bool {
        if self.exit.is_some() {
            return true;
        }
        match self.child.try_wait() {
            Ok(Some(status)) => {
                self.finish(status);
                true
            }
            Ok(None) => false,
            Err(_) => {
                self.exit = Some((None, None));
                true
            }
        }
    }

    /// After the leader's exit: whatever it left in its group goes too (so the pipes close),
    /// and the readers have copied everything before the exit is told.
    /// A command that left its group (`setsid`) may hold the pipes open: the readers get
    /// [`READERS_DRAIN`], not forever.
    fn finish(&mut self, status: ExitStatus) {
        kill_group(self.child.id());
        let give_up = Instant::now() + READERS_DRAIN;
        while self.readers.iter().any(|r| !r.is_finished()) && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.readers.clear();
        self.exit = Some(exit_of(status));
    }

    /// Kills the command's group and waits for it.
    fn stop(&mut self) {
        if self.exit.is_none() {
            kill_group(self.child.id());
            match self.child.wait() {
                Ok(status) => self.finish(status),
                Err(_) => self.exit = Some((None, None)),
            }
        }
    }

    /// Whether the command is still running.
    pub(crate) fn running(&mut self) -> bool {
        !self.poll_exit()
    }

    fn exit_status(&self) -> Value {
        match &self.exit {
            Some((code, signal)) => json!({"exitCode": code, "signal": signal}),
            None => Value::Null,
        }
    }
}

/// Every terminal of a case; see the module docs.
pub(crate) struct TerminalHost {
    cwd: PathBuf,
    /// Every terminal created, in order (released ones too).
    pub(crate) terminals: Vec<HostedTerminal>,
    /// Pending `wait_for_exit` requests: (request id, terminal id).
    waits: Vec<(Value, String)>,
}

impl TerminalHost {
    /// A host whose commands run in `cwd` unless the agent names another.
    pub(crate) fn new(cwd: &Path) -> TerminalHost {
        TerminalHost {
            cwd: cwd.to_path_buf(),
            terminals: Vec::new(),
            waits: Vec::new(),
        }
    }

    /// The terminal `id`, released or not.
    pub(crate) fn get(&mut self, id: &str) -> Option<&mut HostedTerminal> {
        self.terminals.iter_mut().find(|t| t.id == id)
    }

    /// Whether a `wait_for_exit` is pending.
    pub(crate) fn has_waits(&self) -> bool {
        !self.waits.is_empty()
    }

    /// Serves one `terminal/*` request with id `id`.
    pub(crate) fn handle(&mut self, id: &Value, method: &str, params: &Value) -> Handled {
        if method == "terminal/create" {
            return Handled::Now(self.create(params));
        }
        let terminal_id = params
            .get("terminalId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let Some(terminal) = self
            .terminals
            .iter_mut()
            .find(|t| t.id == terminal_id && !t.released)
        else {
            return Handled::Now(Err((-32602, "Invalid params: unknown terminalId")));
        };
        Handled::Now(match method {
            "terminal/output" => {
                terminal.poll_exit();
                let output = terminal.output.lock().expect("the output lock");
                let (text, truncated) = (output.text(), output.truncated);
                drop(output);
                terminal.served_truncated |= truncated;
                let mut result = json!({"output": text, "truncated": truncated});
                if terminal.exit.is_some() {
                    result["exitStatus"] = terminal.exit_status();
                }
                Ok(result)
            }
            "terminal/wait_for_exit" => {
                if !terminal.poll_exit() {
                    self.waits.push((id.clone(), terminal_id));
                    return Handled::Later;
                }
                Ok(terminal.exit_status())
            }
            "terminal/kill" => {
                terminal.killed = true;
                terminal.stop();
                Ok(json!({}))
            }
            "terminal/release" => {
                terminal.released = true;
                terminal.stop();
                Ok(json!({}))
            }
            _ => Err((-32601, "Method not found")),
        })
    }

    /// The pending waits whose command has exited (or whose terminal went), with their
    /// answers; they are pending no more.
    pub(crate) fn finished_waits(&mut self) -> Vec<(Value, Reply)> {
        let mut done = Vec::new();
        let mut i = 0;
        while i < self.waits.len() {
            let terminal = self.terminals.iter_mut().find(|t| t.id == self.waits[i].1);
            let reply = match terminal {
                Some(t) => t.poll_exit().then(|| Ok(t.exit_status())),
                None => Some(Err((-32602, "Invalid params: unknown terminalId"))),
            };
            match reply {
                Some(reply) => done.push((self.waits.remove(i).0, reply)),
                None => i += 1,
            }
        }
        done
    }

    fn create(&mut self, params: &Value) -> Reply {
        let Some(command) = params.get("command").and_then(Value::as_str) else {
            return Err((-32602, "Invalid params: command must be a string"));
        };
        let args: Vec<&str> = params
            .get("args")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut process = if args.is_empty() {
            let mut shell = Command::new("sh");
            shell.arg("-c").arg(command);
            shell
        } else {
            let mut program = Command::new(command);
            program.args(&args);
            program
        };
        let cwd = params
            .get("cwd")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| self.cwd.clone());
        for entry in params
            .get("env")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(name), Some(value)) = (
                entry.get("name").and_then(Value::as_str),
                entry.get("value").and_then(Value::as_str),
            ) {
                process.env(name, value);
            }
        }
        let limit = params
            .get("outputByteLimit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_KEPT, |l| l.min(DEFAULT_KEPT as u64) as usize);
        process
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let Ok(mut child) = process.spawn() else {
            return Err((-32603, "Internal error: the command did not start"));
        };
        let output = Arc::new(Mutex::new(Captured {
            limit,
            ..Captured::default()
        }));
        let mut readers = Vec::new();
        let pipes: [Option<Box<dyn Read + Send>>; 2] = [
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ];
        for mut pipe in pipes.into_iter().flatten() {
            let output = output.clone();
            readers.push(std::thread::spawn(move || {
                let mut buffer = [0u8; 8192];
                while let Ok(n) = pipe.read(&mut buffer) {
                    if n == 0 {
                        break;
                    }
                    output.lock().expect("the output lock").push(&buffer[..n]);
                }
            }));
        }
        let id = format!("term-{}", self.terminals.len() + 1);
        self.terminals.push(HostedTerminal {
            id: id.clone(),
            params: params.clone(),
            child,
            readers,
            output,
            exit: None,
            killed: false,
            released: false,
            served_truncated: false,
        });
        Ok(json!({"terminalId": id}))
    }
}

impl Drop for TerminalHost {
    /// A command the agent left running ends with the case.
    fn drop(&mut self) {
        for terminal in &mut self.terminals {
            terminal.stop();
        }
    }
}

/// SIGKILL to the process group `pid` leads; gone already is fine.
fn kill_group(pid: u32) {
    if let Some(pid) = Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    }
}

/// `(exitCode, signal)` of a status, the signal by its name.
fn exit_of(status: ExitStatus) -> (Option<i32>, Option<String>) {
    let signal = status.signal().map(|n| {
        let name = match n {
            1 => "SIGHUP",
            2 => "SIGINT",
            3 => "SIGQUIT",
            6 => "SIGABRT",
            9 => "SIGKILL",
            13 => "SIGPIPE",
            15 => "SIGTERM",
            _ => return format!("SIG{n}"),
        };
        name.to_string()
    });
    (status.code(), signal)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-FS-5: the kept output is cut from the start at a character boundary.
    #[test]
    fn a_cut_output_starts_at_a_character_boundary() {
        let mut captured = Captured {
            limit: 5,
            ..Captured::default()
        };
        captured.push("aé€b".as_bytes()); // 1 + 2 + 3 + 1 bytes
        assert!(captured.truncated);
        assert_eq!(captured.bytes.len(), 5);
        // The last five bytes start inside 'é': its continuation byte is dropped.
        assert_eq!(captured.text(), "€b");
        let mut short = Captured {
            limit: 64,
            ..Captured::default()
        };
        short.push("aé".as_bytes());
        assert_eq!((short.text().as_str(), short.truncated), ("aé", false));
    }

    fn now(handled: Handled) -> Reply {
        match handled {
            Handled::Now(reply) => reply,
            Handled::Later => panic!("answered later"),
        }
    }

    /// The pending waits' answers, once there are any (a guard against a hang, not a timing
    /// assertion).
    fn answered_waits(host: &mut TerminalHost) -> Vec<(Value, Reply)> {
        let give_up = Instant::now() + Duration::from_secs(30);
        loop {
            let done = host.finished_waits();
            if !done.is_empty() || Instant::now() > give_up {
                return done;
            }
            std::thread::yield_now();
        }
    }

    /// R-FS-5: a real command through `sh -c` in the host's directory: its output cut to the
    /// limit at a character boundary, its exit told by `wait_for_exit` and `output`.
    #[test]
    fn a_command_runs_in_the_directory_and_its_output_keeps_the_limit() {
        let dir = std::env::temp_dir().join(format!("acp-conform-th-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut host = TerminalHost::new(&dir);
        let created = now(host.handle(
            &json!(1),
            "terminal/create",
            &json!({"sessionId": "s", "command": "printf 'aé€b' > made; cat made; exit 3",
                    "outputByteLimit": 5}),
        ));
        assert_eq!(created, Ok(json!({"terminalId": "term-1"})));
        let params = json!({"sessionId": "s", "terminalId": "term-1"});
        if let Handled::Now(reply) = host.handle(&json!(2), "terminal/wait_for_exit", &params) {
            assert_eq!(reply, Ok(json!({"exitCode": 3, "signal": null})));
        } else {
            let done = answered_waits(&mut host);
            assert_eq!(
                done,
                [(json!(2), Ok(json!({"exitCode": 3, "signal": null})))]
            );
        }
        assert!(dir.join("made").exists());
        assert_eq!(
            now(host.handle(&json!(3), "terminal/output", &params)),
            Ok(json!({"output": "€b", "truncated": true,
                      "exitStatus": {"exitCode": 3, "signal": null}}))
        );
        assert_eq!(
            now(host.handle(&json!(4), "terminal/release", &params)),
            Ok(json!({}))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// R-FS-4: `kill` ends a running command (a pending wait is answered with the signal);
    /// after `release` the id is unknown.
    #[test]
    fn kill_answers_the_pending_wait_and_release_frees_the_id() {
        let mut host = TerminalHost::new(&std::env::temp_dir());
        let create = json!({"sessionId": "s", "command": "sleep", "args": ["30"]});
        assert!(now(host.handle(&json!(1), "terminal/create", &create)).is_ok());
        let params = json!({"sessionId": "s", "terminalId": "term-1"});
        assert!(matches!(
            host.handle(&json!(2), "terminal/wait_for_exit", &params),
            Handled::Later
        ));
        assert!(host.has_waits());
        assert!(host.get("term-1").unwrap().running());
        assert_eq!(
            now(host.handle(&json!(3), "terminal/kill", &params)),
            Ok(json!({}))
        );
        let killed = json!({"exitCode": null, "signal": "SIGKILL"});
        assert_eq!(host.finished_waits(), [(json!(2), Ok(killed))]);
        assert!(!host.has_waits());
        assert_eq!(
            now(host.handle(&json!(4), "terminal/release", &params)),
            Ok(json!({}))
        );
        assert_eq!(
            now(host.handle(&json!(5), "terminal/output", &params)),
            Err((-32602, "Invalid params: unknown terminalId"))
        );
    }

    /// The harness's own errors, with their exact messages.
    #[test]
    fn a_bad_create_is_refused_with_its_reason() {
        let mut host = TerminalHost::new(&std::env::temp_dir());
        assert_eq!(
            now(host.handle(&json!(1), "terminal/create", &json!({"sessionId": "s"}))),
            Err((-32602, "Invalid params: command must be a string"))
        );
        let missing = json!({"sessionId": "s", "command": "/nonexistent/conform", "args": ["x"]});
        assert_eq!(
            now(host.handle(&json!(2), "terminal/create", &missing)),
            Err((-32603, "Internal error: the command did not start"))
        );
        assert!(host.terminals.is_empty());
    }
}
