//! Shared by the `client_*` and `repl_*` tests: running the `acp-cli` binary with its output
//! captured, waiting for text with a generous bound, Ctrl-C, scratch directories, the
//! scripted agent and the interop peers.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Upper bound for anything a test waits for; reaching it fails the test.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The binary under test.
pub fn acp_cli() -> &'static str {
    env!("CARGO_BIN_EXE_acp-cli")
}

/// The scripted agent's command line (see the fixture's docstring).
pub fn scripted_agent(extra: &[&str]) -> Vec<String> {
    let mut argv = vec![
        String::from("python3"),
        String::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/scripted_agent.py"
        )),
    ];
    argv.extend(extra.iter().map(|s| s.to_string()));
    argv
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A fresh empty directory under cargo's `CARGO_TARGET_TMPDIR` (symlinks resolved).
pub fn scratch_dir(tag: &str) -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // Under cargo's scratch directory for integration tests, not the system's: a run leaves
    // nothing in /tmp, and the next run reuses (empties) the same names.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("acp-client-{tag}-{n}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// `acp-cli` running, its stdout and stderr collected as they come.
pub struct Running {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

/// How a run ended.
#[derive(Debug)]
pub struct Finished {
    /// The exit code.
    pub code: Option<i32>,
    /// Everything on stdout.
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
}

fn collect(
    mut pipe: impl Read + Send + 'static,
    into: Arc<Mutex<String>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = pipe.read(&mut buf) {
            into.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    })
}

impl Running {
    /// Starts `acp-cli ARGS` in `cwd` with `stdin` written and closed (`None`: stdin stays
    /// open and empty until the run ends).
    pub fn start(args: &[String], cwd: &Path, stdin: Option<&str>) -> Running {
        let mut child = Command::new(acp_cli())
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("acp-cli starts");
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).unwrap();
            drop(input);
        } else {
            // Kept open: leaked on purpose for the life of the test process (a closed stdin
            // would be read as the end of input).
            std::mem::forget(input);
        }
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let readers = vec![
            collect(child.stdout.take().unwrap(), stdout.clone()),
            collect(child.stderr.take().unwrap(), stderr.clone()),
        ];
        Running {
            child,
            stdout,
            stderr,
            readers,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (up to [`PATIENCE`]) until `ready(stdout, stderr)` holds.
    pub fn wait_for(&self, what: &str, ready: impl Fn(&str, &str) -> bool) {
        let give_up = Instant::now() + PATIENCE;
        loop {
            let (out, err) = (
                self.stdout.lock().unwrap().clone(),
                self.stderr.lock().unwrap().clone(),
            );
            if ready(&out, &err) {
                return;
            }
            assert!(
                Instant::now() < give_up,
                "gave up waiting for {what}\nstdout:\n{out}\nstderr:\n{err}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Sends SIGINT, as Ctrl-C at a terminal would.
    pub fn interrupt(&self) {
        let pid = rustix::process::Pid::from_raw(self.pid() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    }

    /// Waits (up to [`PATIENCE`]) for the exit and returns the output.
    pub fn finish(mut self) -> Finished {
        let give_up = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() >= give_up {
                let _ = self.child.kill();
                panic!(
                    "acp-cli did not exit\nstdout:\n{}\nstderr:\n{}",
                    self.stdout.lock().unwrap(),
                    self.stderr.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        for reader in self.readers.drain(..) {
            reader.join().unwrap();
        }
        Finished {
            code: status.code(),
            stdout: self.stdout.lock().unwrap().clone(),
            stderr: self.stderr.lock().unwrap().clone(),
        }
    }
}

/// `acp-cli client [options] -- AGENT…` run to its end with `stdin`.
pub fn client(options: &[&str], agent: &[String], cwd: &Path, stdin: &str) -> Finished {
    let mut args: Vec<String> = vec![String::from("client")];
    args.extend(options.iter().map(|s| s.to_string()));
    args.push(String::from("--"));
    args.extend(agent.iter().cloned());
    Running::start(&args, cwd, Some(stdin)).finish()
}

/// Waits (polling, up to [`PATIENCE`]) until `pid` is gone, else fails with `what`. For a
/// process nobody of ours reaps (a grandchild killed with its group): the kill was sent before
/// the command exited, its delivery is what may take a moment on a loaded machine.
pub fn wait_gone(pid: u32, what: &str) {
    let give_up = Instant::now() + PATIENCE;
    while !is_gone(pid) {
        assert!(Instant::now() < give_up, "{what} {pid} is still alive");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `pid` is gone (no process, or a zombie nobody of ours waits for).
pub fn is_gone(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    matches!(state, None | Some('Z' | 'X'))
}

/// The pids of the processes whose parent is `parent`, from /proc.
pub fn children_of(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let fields: Vec<&str> = match stat.rsplit_once(')') {
            Some((_, rest)) => rest.split_whitespace().collect(),
            None => continue,
        };
        if fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(parent) {
            out.push(pid);
        }
    }
    out
}

/// The number after `pid ` / `pid=` in `text` (the last one).
pub fn pid_in(text: &str, marker: &str) -> u32 {
    let at = text
        .rfind(marker)
        .unwrap_or_else(|| panic!("no '{marker}' in:\n{text}"));
    text[at + marker.len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

/// Runs `acp-cli ARGS` in `dir` under a pseudo-terminal (tests/fixtures/pty_drive.py) with
/// the driver's `steps`; returns the screen, which ends with `EXIT <status>`.
pub fn pty(dir: &Path, args: &[String], steps: serde_json::Value) -> String {
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pty_drive.py");
    let out = Command::new("python3")
        .arg(driver)
        .arg(steps.to_string())
        .arg("--")
        .arg(acp_cli())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("python3 runs the pty driver");
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{screen}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    screen
}

/// The command lines of the three official-SDK peers of one role (`"agent"` or `"client"`),
/// installed by `tests/interop/setup.sh`: Python, TypeScript, Rust. A missing install fails
/// the test with the fix.
pub fn sdk_peers(role: &str) -> Vec<(&'static str, Vec<String>)> {
    let interop = repo_root().join("tests/interop");
    let path = |p: &str| -> String {
        let full = interop.join(p);
        assert!(
            full.exists(),
            "{} is missing: run `bash tests/interop/setup.sh` first",
            full.display()
        );
        full.to_string_lossy().into_owned()
    };
    vec![
        (
            "python",
            vec![path(".venv/bin/python"), path(&format!("python/{role}.py"))],
        ),
        (
            "typescript",
            vec![String::from("node"), {
                path("ts/node_modules/@agentclientprotocol/sdk");
                path(&format!("ts/{role}.mjs"))
            }],
        ),
        (
            "rust",
            vec![path(&format!("rust/target/debug/peer-{role}"))],
        ),
    ]
}
