//! `acp_conform::process` (the agent process acp-cli's host runs) on real children: pipes,
//! environment, cwd, process group, signals.

mod host_support;

use std::path::PathBuf;

use acp_conform::process::{AgentCommand, AgentProcess, ProcessEvent, ProcessKey};
use acp_host::supervisor::config::AcpConfig;
use acp_host::supervisor::recovery::ExitStatus;
use host_support::{proc_group, run, scratch_dir, wait_gone};
use smol::channel::Receiver;

fn sh(script: &str) -> AgentCommand {
    AgentCommand {
        program: String::from("sh"),
        args: vec![String::from("-c"), String::from(script)],
        env: host_support::test_env(),
        cwd: std::env::temp_dir(),
    }
}

/// Everything a process reports until its exit and both EOFs.
#[derive(Debug, Default)]
struct Report {
    stdout: Vec<u8>,
    stderr: Vec<String>,
    status: Option<ExitStatus>,
}

async fn collect(events: &Receiver<(ProcessKey, ProcessEvent)>, key: ProcessKey) -> Report {
    let mut report = Report::default();
    let mut open = 3;
    while open > 0 {
        let (from, event) = events.recv().await.unwrap();
        assert_eq!(from, key);
        match event {
            ProcessEvent::Stdout(bytes) => report.stdout.extend(bytes),
            ProcessEvent::StderrLine(line) => report.stderr.push(line),
            ProcessEvent::StdoutEof | ProcessEvent::StderrEof => open -= 1,
            ProcessEvent::Exited(status) => {
                report.status = Some(status);
                open -= 1;
            }
        }
    }
    report
}

#[test]
fn pipes_carry_stdin_stdout_stderr_and_exit_code() {
    run(async {
        let (tx, rx) = smol::channel::unbounded();
        let script =
            "echo out; echo err1 >&2; printf 'err2\\r\\n' >&2; cat; printf tail >&2; exit 3";
        let mut child = AgentProcess::spawn(&sh(script), ProcessKey(7), tx).unwrap();
        child.write_stdin(b"hello\n").await.unwrap();
        child.write_stdin(b"world").await.unwrap();
        child.close_stdin();
        let report = collect(&rx, ProcessKey(7)).await;
        assert_eq!(report.stdout, b"out\nhello\nworld");
        assert_eq!(report.stderr, ["err1", "err2", "tail"]);
        assert_eq!(report.status, Some(ExitStatus::Code(3)));
    });
}

#[test]
fn writing_after_close_is_an_error() {
    run(async {
        let (tx, rx) = smol::channel::unbounded();
        let mut child = AgentProcess::spawn(&sh("cat >/dev/null"), ProcessKey(1), tx).unwrap();
        child.close_stdin();
        let error = child.write_stdin(b"late").await.unwrap_err();
        assert_eq!(error.to_string(), "server stdin is not available");
        let report = collect(&rx, ProcessKey(1)).await;
        assert_eq!(report.status, Some(ExitStatus::Code(0)));
    });
}

#[test]
fn environment_is_scrubbed_and_layered_and_cwd_resolved() {
    run(async {
        let root = scratch_dir("env");
        std::fs::create_dir_all(root.join("agents/a")).unwrap();
        let config = AcpConfig::parse(
            r#"{"servers": {"a": {"command": "sh",
                "args": ["-c", "pwd; echo \"$FOO|${OPENAI_API_KEY-unset}|$GOOGLE_API_KEY\""],
                "env": {"FOO": "bar"}, "cwd": "agents/a"}}}"#,
            "acp.json",
            |_| None,
        )
        .unwrap();
        let mut host_env = host_support::test_env();
        host_env.push(("OPENAI_API_KEY".into(), "sk-secret".into()));
        host_env.push(("GOOGLE_API_KEY".into(), "g".into()));
        let command = AgentCommand::for_server(
            &config.servers()[0],
            &root,
            host_env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        );
        assert_eq!(command.cwd, root.join("agents/a"));
        let (tx, rx) = smol::channel::unbounded();
        let _child = AgentProcess::spawn(&command, ProcessKey(2), tx).unwrap();
        let report = collect(&rx, ProcessKey(2)).await;
        let cwd = std::fs::canonicalize(root.join("agents/a")).unwrap();
        let expected = format!("{}\nbar|unset|g\n", cwd.display());
        assert_eq!(String::from_utf8(report.stdout).unwrap(), expected);
    });
}

#[test]
fn child_leads_its_own_process_group() {
    run(async {
        let (tx, rx) = smol::channel::unbounded();
        let child = AgentProcess::spawn(&sh("cat >/dev/null"), ProcessKey(3), tx).unwrap();
        let pid = child.pid();
        assert_eq!(proc_group(pid), Some(pid));
        assert_ne!(proc_group(std::process::id()), Some(pid));
        child.kill_group().unwrap();
        let report = collect(&rx, ProcessKey(3)).await;
        assert_eq!(report.status, Some(ExitStatus::Signal(9)));
    });
}

#[test]
fn terminate_sends_sigterm_to_the_child_only() {
    run(async {
        let (tx, rx) = smol::channel::unbounded();
        let script = "sleep 1000 & echo $! >&2; wait";
        let child = AgentProcess::spawn(&sh(script), ProcessKey(4), tx).unwrap();
        // The grandchild's pid comes first on stderr.
        let grandchild: u32 = loop {
            match rx.recv().await.unwrap().1 {
                ProcessEvent::StderrLine(line) => break line.parse().unwrap(),
                ProcessEvent::Stdout(_) => {}
                other => panic!("unexpected {other:?}"),
            }
        };
        child.terminate().unwrap();
        let status = loop {
            if let ProcessEvent::Exited(status) = rx.recv().await.unwrap().1 {
                break status;
            }
        };
        assert_eq!(status, ExitStatus::Signal(15));
        // The grandchild was not signalled: it lives in the group until the group is killed.
        assert!(!host_support::is_gone(grandchild));
        child.kill_group().unwrap();
        wait_gone(grandchild);
    });
}

#[test]
fn spawn_errors_are_the_os_errors() {
    let (tx, _rx) = smol::channel::unbounded();
    let mut command = sh("true");
    command.program = String::from("/nonexistent/agent-binary");
    let error = AgentProcess::spawn(&command, ProcessKey(5), tx.clone()).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound);

    let mut command = sh("true");
    command.cwd = PathBuf::from("/nonexistent/dir");
    let error = AgentProcess::spawn(&command, ProcessKey(6), tx).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
}

/// Scratch directories stay out of the system's temp dir: test runs leave nothing in /tmp.
#[test]
fn scratch_directories_live_under_cargos_test_tmpdir() {
    let dir = scratch_dir("where");
    // Under cargo's test tmpdir, which lives in the target directory (itself under /tmp when
    // the checkout is: that case is not a leak, so the test does not refuse it).
    assert!(dir.starts_with(env!("CARGO_TARGET_TMPDIR")), "{dir:?}");
}
