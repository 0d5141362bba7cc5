//! `run_shell_command` done by the agent itself: `/bin/sh -c` in the session's directory, in
//! a process group of its own, its output (stdout and stderr as they come) kept up to
//! [`OUTPUT_LIMIT`] bytes.
//!
//! The whole group is killed with SIGKILL when the command outlives its timeout and when the
//! future is dropped (the turn was cancelled), so neither the command nor what it started
//! outlives the turn.
//!
//! The command inherits the agent's environment except every `*_API_KEY` variable: what the
//! model runs must not be able to print the key into its output, which goes to the model,
//! the client and the session file.

use std::os::unix::process::CommandExt;
use std::time::Duration;

use smol::future::FutureExt;
use smol::io::AsyncReadExt;
use smol::process::{Command, Stdio};

use super::backend::ShellOutcome;

/// Most bytes of output kept; the rest is read and dropped.
pub(crate) const OUTPUT_LIMIT: usize = 64 * 1024;

/// Kills a process group when dropped, unless disarmed.
struct GroupGuard {
    pid: Option<rustix::process::Pid>,
}

impl GroupGuard {
    fn kill(&self) {
        if let Some(pid) = self.pid {
            // Gone already is what we wanted.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `command` in `cwd`; after `timeout` its group is killed and the outcome says so.
pub(crate) async fn run(
    command: &str,
    cwd: &str,
    timeout: Duration,
) -> Result<ShellOutcome, String> {
    let mut std_command = std::process::Command::new("/bin/sh");
    std_command
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .process_group(0);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().ends_with("_API_KEY") {
            std_command.env_remove(name);
        }
    }
    let mut child = Command::from(std_command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start /bin/sh in '{cwd}': {e}"))?;
    let guard = GroupGuard {
        pid: i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw),
    };
    let output = std::cell::RefCell::new(Output::default());
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let read_all = async {
        let reads = smol::future::zip(drain(stdout, &output), drain(stderr, &output));
        let exit = async {
            let status = child.status().await;
            // The command is done: what it left running in its group (holding the pipes
            // open) goes with it, so the reads end.
            guard.kill();
            status
        };
        smol::future::zip(exit, reads).await.0
    };
    let timed = async {
        smol::Timer::after(timeout).await;
        Err(std::io::Error::from(std::io::ErrorKind::TimedOut))
    };
    let status = read_all.or(timed).await;
    guard.kill();
    let output = output.into_inner();
    match status {
        Ok(status) => Ok(ShellOutcome {
            exit_code: status.code(),
            output: String::from_utf8_lossy(&output.bytes).into_owned(),
            truncated: output.truncated,
            timed_out: false,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => Ok(ShellOutcome {
            exit_code: None,
            output: String::from_utf8_lossy(&output.bytes).into_owned(),
            truncated: output.truncated,
            timed_out: true,
        }),
        Err(e) => Err(format!("waiting for the command failed: {e}")),
    }
}

/// The output kept so far.
#[derive(Default)]
struct Output {
    bytes: Vec<u8>,
    truncated: bool,
}

/// Reads a pipe to its end into `output`, keeping at most [`OUTPUT_LIMIT`] bytes in all.
async fn drain(
    pipe: Option<impl smol::io::AsyncRead + Unpin>,
    output: &std::cell::RefCell<Output>,
) {
    let Some(mut pipe) = pipe else {
        return;
    };
    let mut buf = [0u8; 8192];
    while let Ok(n @ 1..) = pipe.read(&mut buf).await {
        let mut output = output.borrow_mut();
        let room = OUTPUT_LIMIT - output.bytes.len();
        if n > room {
            output.truncated = true;
        }
        let keep = n.min(room);
        output.bytes.extend_from_slice(&buf[..keep]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(command: &str, timeout_ms: u64) -> ShellOutcome {
        let cwd = std::env::temp_dir();
        smol::block_on(run(
            command,
            cwd.to_str().unwrap(),
            Duration::from_millis(timeout_ms),
        ))
        .expect("ran")
    }

    #[test]
    fn output_and_exit_code_come_back() {
        let outcome = sh("echo out; echo err >&2; exit 3", 60_000);
        assert_eq!(outcome.exit_code, Some(3));
        assert!(outcome.output.contains("out\n") && outcome.output.contains("err\n"));
        assert!(!outcome.truncated && !outcome.timed_out);
    }

    #[test]
    fn output_beyond_the_limit_is_cut_and_said_so() {
        let outcome = sh("head -c 200000 /dev/zero | tr '\\0' a", 60_000);
        assert_eq!(outcome.exit_code, Some(0));
        assert_eq!(outcome.output.len(), OUTPUT_LIMIT);
        assert!(outcome.truncated);
    }

    #[test]
    fn a_command_that_never_ends_is_answered_timed_out_with_its_output_so_far() {
        // The outcome is asserted, not the time: the command would run for an hour.
        let outcome = sh("echo started; sleep 3600", 50);
        assert!(outcome.timed_out);
        assert_eq!(outcome.exit_code, None);
        assert_eq!(outcome.output, "started\n");
    }

    #[test]
    fn a_command_that_leaves_a_child_behind_returns_when_it_exits() {
        // The background sleep holds the pipes open; its group is killed when the shell
        // exits, so the answer comes now, not in an hour (and not as a timeout).
        let outcome = sh("sleep 3600 & echo done", 3_600_000);
        assert!(!outcome.timed_out);
        assert_eq!(outcome.exit_code, Some(0));
        assert_eq!(outcome.output, "done\n");
    }
}
