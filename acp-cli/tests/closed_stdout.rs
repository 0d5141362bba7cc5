//! Every command that writes to stdout, run with nobody reading it: a pipe whose read end is
//! closed before the command starts (the first write fails), or closed after one byte, as
//! `| head -c1` does. Each ends quietly with status 0: no panic, nothing on stderr but what it
//! shows anyway. Any other failed write (`/dev/full`) is one line on stderr and status 1.

mod client_support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use client_support::{PATIENCE, acp_cli, scratch_dir};

/// How a run ended.
#[derive(Debug)]
struct Ended {
    pid: u32,
    code: Option<i32>,
    stderr: String,
}

/// Where the command's stdout goes.
enum Out {
    /// A pipe whose read end is already closed.
    Closed,
    /// A pipe read for one byte, then closed (`| head -c1`).
    HeadOneByte,
    /// `/dev/full`: every write fails with ENOSPC.
    Full,
}

/// Runs `acp-cli ARGS` in `cwd` with stdout as `out` and `input` on stdin. stdin stays open
/// until the command has exited, so nothing but its stdout can end it.
fn run(args: &[&str], cwd: &Path, out: Out, input: &str) -> Ended {
    let (stdout, reader) = match out {
        Out::Closed => {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            (Stdio::from(writer), None)
        }
        Out::HeadOneByte => {
            let (reader, writer) = std::io::pipe().unwrap();
            (Stdio::from(writer), Some(reader))
        }
        Out::Full => (
            Stdio::from(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            ),
            None,
        ),
    };
    let mut child = Command::new(acp_cli())
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("acp-cli starts");
    let mut stdin: ChildStdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    if let Some(mut reader) = reader {
        let mut byte = [0u8; 1];
        reader.read_exact(&mut byte).unwrap();
        drop(reader);
    }
    let code = wait(&mut child);
    drop(stdin);
    Ended {
        pid: child.id(),
        code,
        stderr: stderr.join().unwrap(),
    }
}

/// Waits (up to [`PATIENCE`]) for the exit; a command that keeps running fails the test.
fn wait(child: &mut Child) -> Option<i32> {
    let give_up = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() >= give_up {
            let _ = child.kill();
            let _ = child.wait();
            panic!("acp-cli did not exit although nobody reads its stdout");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A quiet end: status 0, no panic.
fn assert_quiet(what: &str, ended: &Ended) {
    assert_eq!(ended.code, Some(0), "{what}: {ended:?}");
    assert!(!ended.stderr.contains("panicked"), "{what}: {ended:?}");
    assert!(!ended.stderr.contains("Broken pipe"), "{what}: {ended:?}");
}

const ENOSPC: &str = "acp-cli: cannot write to stdout: No space left on device (os error 28)\n";

#[test]
fn demo_ends_quietly_and_cleans_up() {
    let dir = scratch_dir("closed-demo");
    let ended = run(&["demo"], &dir, Out::Closed, "");
    assert_quiet("demo", &ended);
    assert_eq!(ended.stderr, "");
    // It went the normal way out: its agent stopped, its scratch directory removed.
    let scratch = std::env::temp_dir().join(format!("acp-cli-demo-{}", ended.pid));
    assert!(!scratch.exists(), "{} left behind", scratch.display());
}

/// R-PROC-3: a closed stdout winds down as a normal end.
#[test]
fn demo_under_head_ends_quietly() {
    let dir = scratch_dir("head-demo");
    let ended = run(&["demo"], &dir, Out::HeadOneByte, "");
    assert_quiet("demo | head -c1", &ended);
    assert_eq!(ended.stderr, "");
}

#[test]
fn bench_ends_quietly() {
    let dir = scratch_dir("closed-bench");
    let capture = dir.join("capture.ndjson");
    std::fs::write(
        &capture,
        "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}\n",
    )
    .unwrap();
    let capture = capture.to_str().unwrap();
    for args in [
        vec!["bench", "--passes", "1", capture],
        vec!["bench", "--passes", "1", "--json", capture],
    ] {
        let ended = run(&args, &dir, Out::Closed, "");
        assert_quiet(&args.join(" "), &ended);
        assert_eq!(ended.stderr, "");
    }
}

#[test]
fn client_stops_the_agent_and_ends_quietly() {
    let dir = scratch_dir("closed-client");
    // The turn would sleep for ten minutes after its first chunk: only the closed stdout can
    // end the command within the test's patience.
    let ended = run(
        &[
            "client",
            "--prompt",
            "/echo first chunk\n/sleep 600000",
            "--",
            acp_cli(),
            "--acp",
            "--stdio",
        ],
        &dir,
        Out::Closed,
        "",
    );
    assert_quiet("client", &ended);
    // stderr carries what the agent told the client before the turn's text, and nothing else.
    assert_eq!(
        ended.stderr,
        "Sending to acp-cli...\n\
         commands: /echo /think /plan /tool /read /write /ask /sleep /flood /stop /error \
         /history /notice /usage /title /plan2 /unplan /subagent /mcp\n\
         title: /echo first chunk\n"
    );
}

#[test]
fn repl_leaves_and_stops_its_agent() {
    let dir = scratch_dir("closed-repl");
    // stdin stays open: the REPL would wait for a line for ever if it did not notice.
    let ended = run(
        &["repl", "--", acp_cli(), "--acp", "--stdio"],
        &dir,
        Out::Closed,
        "",
    );
    assert_quiet("repl", &ended);
    assert_eq!(ended.stderr, "");
}

#[test]
fn agent_exits_when_its_client_stops_reading() {
    let dir = scratch_dir("closed-agent");
    // stdin stays open: only the failed write of the answer can end the agent.
    let initialize = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";
    let ended = run(
        &["--acp", "--stdio", "--log-level", "warn"],
        &dir,
        Out::Closed,
        initialize,
    );
    assert_quiet("--acp --stdio", &ended);
    assert_eq!(ended.stderr, "");
}

#[test]
fn help_ends_quietly() {
    let dir = scratch_dir("closed-help");
    let ended = run(&["--help"], &dir, Out::Closed, "");
    assert_quiet("--help", &ended);
}

#[test]
fn another_write_failure_is_reported_with_status_1() {
    let dir = scratch_dir("full");
    let capture = dir.join("capture.ndjson");
    std::fs::write(
        &capture,
        "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}\n",
    )
    .unwrap();
    let initialize = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";
    let runs: [(&[&str], &str); 3] = [
        (&["demo"], ""),
        (&["bench", "--passes", "1", capture.to_str().unwrap()], ""),
        (&["--acp", "--stdio", "--log-level", "warn"], initialize),
    ];
    for (args, input) in runs {
        let ended = run(args, &dir, Out::Full, input);
        assert_eq!(ended.code, Some(1), "{args:?}: {ended:?}");
        assert_eq!(ended.stderr, ENOSPC, "{args:?}");
    }
}
