//! `acp-cli trace` as a proxy (R-TRACE-1, R-TRACE-2): between each official SDK client and our
//! agent the bytes are the same on both sides, the trace holds every message and lints clean;
//! invalid bytes, stderr, exit codes and signals pass through.

mod client_support;

use std::path::Path;
use std::process::{Command, Stdio};

use acp_conform::lint::check;
use acp_conform::rules::MonitorOptions;
use acp_conform::trace::{self as format, Side};
use client_support::{Running, acp_cli, scratch_dir, sdk_peers};
use serde_json::Value;

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The JSON values of the non-blank lines of `bytes`.
fn messages(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .map(|l| serde_json::from_slice(l).expect("an SDK line is JSON"))
        .collect()
}

#[test]
fn between_every_sdk_client_and_our_agent_the_bytes_match_the_trace_is_complete_and_lints_clean() {
    for (sdk, client) in sdk_peers("client") {
        let dir = scratch_dir(&format!("trace-{sdk}"));
        let f = |name: &str| dir.join(name).to_string_lossy().into_owned();
        // tee on each side of the proxy: what the client wrote (c-in) and what the agent read
        // (a-in); what the agent wrote (a-out) and what the client read (c-out).
        let agent = format!(
            "tee {} | {} --acp --stdio | tee {}",
            f("a-in"),
            acp_cli(),
            f("a-out")
        );
        let wrapped = format!(
            "tee {} | {} trace --out {} -- sh -c '{agent}' | tee {}",
            f("c-in"),
            acp_cli(),
            f("t.jsons"),
            f("c-out")
        );
        let out = Command::new(&client[0])
            .args(&client[1..])
            .args(["--", "sh", "-c", &wrapped])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("the SDK client starts");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.lines().any(|l| l == "7 passed, 0 failed"),
            "{sdk}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (c_in, a_in) = (read(&dir.join("c-in")), read(&dir.join("a-in")));
        let (a_out, c_out) = (read(&dir.join("a-out")), read(&dir.join("c-out")));
        assert!(
            !c_in.is_empty() && !a_out.is_empty(),
            "{sdk}: nothing went through"
        );
        assert!(c_in == a_in, "{sdk}: client → agent bytes differ");
        assert!(a_out == c_out, "{sdk}: agent → client bytes differ");

        let trace = format::read(&read(&dir.join("t.jsons")));
        assert!(
            trace.unreadable.is_empty() && trace.dropped.is_empty(),
            "{sdk}: {trace:?}"
        );
        let recorded = |side: Side| -> Vec<Value> {
            trace
                .entries
                .iter()
                .filter(|e| e.from == side)
                .map(|e| serde_json::from_slice(&e.text).unwrap())
                .collect()
        };
        assert_eq!(
            recorded(Side::Client),
            messages(&c_in),
            "{sdk}: client side"
        );
        assert_eq!(recorded(Side::Agent), messages(&a_out), "{sdk}: agent side");
        let findings = check(&trace, MonitorOptions::default());
        assert!(findings.is_empty(), "{sdk}: {findings:#?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn raw_mode_keeps_invalid_bytes_and_stderr_and_the_exit_code_pass_through() {
    let dir = scratch_dir("trace-raw");
    let trace_file = dir.join("t.raw");
    let agent = format!(
        "cat > {}; printf 'x\\377y\\n{{\"a\":1}}\\n'; echo to-stderr >&2; exit 7",
        dir.join("in").display()
    );
    let input = b"\xff\xfe\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\nlast".to_vec();
    let mut child = Command::new(acp_cli())
        .args([
            "trace",
            "--raw",
            "--out",
            trace_file.to_str().unwrap(),
            "--",
        ])
        .args(["sh", "-c", &agent])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(out.stdout, b"x\xffy\n{\"a\":1}\n");
    assert_eq!(out.stderr, b"to-stderr\n");
    assert_eq!(read(&dir.join("in")), input);
    let raw = read(&trace_file);
    assert!(
        raw.windows(4).any(|w| w == b"\"}\r\n"),
        "the \\r is recorded"
    );
    let trace = format::read(&raw);
    let lines: Vec<_> = trace
        .entries
        .iter()
        .map(|e| (e.from, e.ts.is_some(), e.text.clone()))
        .collect();
    let client: Vec<_> = lines.iter().filter(|l| l.0 == Side::Client).collect();
    let agent: Vec<_> = lines.iter().filter(|l| l.0 == Side::Agent).collect();
    assert_eq!(
        client,
        [
            &(Side::Client, true, b"\xff\xfe".to_vec()),
            // Reading drops one trailing `\r` (R-FRAME-1); the file has it (below).
            &(
                Side::Client,
                true,
                b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}".to_vec()
            ),
            &(Side::Client, true, b"last".to_vec()),
        ]
    );
    assert_eq!(
        agent,
        [
            &(Side::Agent, true, b"x\xffy".to_vec()),
            &(Side::Agent, true, b"{\"a\":1}".to_vec()),
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The proxy keeps running; the signal reaches the agent's group, whose handler decides the
/// exit code the proxy leaves with.
#[test]
fn sigterm_and_sigint_go_to_the_agent_and_its_exit_code_comes_back() {
    for (signal, code) in [
        (rustix::process::Signal::TERM, "42"),
        (rustix::process::Signal::INT, "43"),
    ] {
        let dir = scratch_dir("trace-signal");
        let agent =
            "trap 'exit 42' TERM; trap 'exit 43' INT; echo ready >&2; while :; do sleep 0.05; done";
        let args: Vec<String> = [
            "trace",
            "--out",
            dir.join("t").to_str().unwrap(),
            "--",
            "sh",
            "-c",
            agent,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let running = Running::start(&args, &dir, None);
        running.wait_for("the agent's trap", |_, err| err.contains("ready"));
        let pid = rustix::process::Pid::from_raw(running.pid() as i32).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
        let finished = running.finish();
        assert_eq!(finished.code, code.parse().ok(), "{signal:?}: {finished:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn an_agent_that_cannot_start_or_a_trace_that_cannot_be_created_is_exit_2() {
    let dir = scratch_dir("trace-errors");
    let out = Command::new(acp_cli())
        .args([
            "trace",
            "--out",
            dir.join("t").to_str().unwrap(),
            "--",
            "/nonexistent-agent",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "acp-cli trace: cannot start /nonexistent-agent: No such file or directory (os error 2)\n"
    );
    let out = Command::new(acp_cli())
        .args(["trace", "--out", "/nonexistent/dir/t", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "acp-cli trace: cannot create /nonexistent/dir/t: No such file or directory (os error 2)\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
