//! The runner carrying out the stop sequence on real children, with short waits: a child that
//! exits on stdin EOF, one that needs SIGTERM, one that needs SIGKILL, each with a grandchild
//! that must go too. Outcomes only; the waits are generous upper bounds, never measured.

use acp_cli::host;
mod host_support;

use std::time::Duration;

use acp_host::supervisor::config::AcpConfig;
use acp_host::supervisor::lifecycle::{Input, Notice, ServerState};
use acp_host::supervisor::recovery::ExitStatus;
use host::runner::{AgentRunner, RunnerEvent, StopTimings};
use host_support::{run, scratch_dir, sh_config, wait_gone};

const WAIT: Duration = Duration::from_millis(100);

fn runner(servers: &[(&str, &str)]) -> AgentRunner<()> {
    let config = AcpConfig::parse(&sh_config(servers), "acp.json", |_| None).unwrap();
    assert!(config.rejected().is_empty());
    AgentRunner::new(
        &config,
        &scratch_dir("stop"),
        host_support::test_env(),
        StopTimings::uniform(WAIT),
        0,
    )
}

/// Starts `name` and completes its handshake by hand (what the connection glue will do).
async fn start_ready(runner: &mut AgentRunner<()>, name: &str) -> u32 {
    runner.handle(name, Input::Start).unwrap();
    let pid = runner
        .supervisor()
        .server(name)
        .unwrap()
        .pid()
        .expect("spawned");
    loop {
        match runner.next_event().await.expect("an event") {
            RunnerEvent::BeginHandshake { server } if server == name => break,
            _ => {}
        }
    }
    runner.handle(name, Input::HandshakeStarted).unwrap();
    runner.handle(name, Input::HandshakeOk).unwrap();
    assert_eq!(
        runner.supervisor().server(name).unwrap().state(),
        ServerState::Ready
    );
    pid
}

/// Waits for server `name`'s stderr to hold a line starting with `prefix`; returns the rest.
async fn stderr_line(runner: &mut AgentRunner<()>, name: &str, prefix: &str) -> String {
    let find = |s: &acp_host::supervisor::Supervisor<()>| {
        s.server(name)
            .unwrap()
            .stderr()
            .tail(200)
            .find_map(|l| l.strip_prefix(prefix).map(String::from))
    };
    assert!(runner.run_until(|s| find(s).is_some()).await);
    find(runner.supervisor()).unwrap()
}

/// Stops `name` and collects the events until it is stopped.
async fn stop(runner: &mut AgentRunner<()>, name: &str) -> Vec<RunnerEvent<()>> {
    runner.handle(name, Input::Stop).unwrap();
    let stopped = runner
        .run_until(|s| s.server(name).unwrap().state() == ServerState::Stopped)
        .await;
    assert!(stopped, "nothing left to wait for before '{name}' stopped");
    std::iter::from_fn(|| runner.poll_event()).collect()
}

fn exit_of(events: &[RunnerEvent<()>], pid: u32) -> Option<ExitStatus> {
    events.iter().find_map(|e| match e {
        RunnerEvent::ProcessExited { pid: p, status, .. } if *p == pid => Some(*status),
        _ => None,
    })
}

#[test]
fn child_that_exits_on_stdin_eof_is_not_signalled() {
    run(async {
        let mut runner = runner(&[("eof", "cat >/dev/null; echo 'saw eof' >&2")]);
        let pid = start_ready(&mut runner, "eof").await;
        let events = stop(&mut runner, "eof").await;
        assert_eq!(exit_of(&events, pid), Some(ExitStatus::Code(0)));
        let lifecycle = runner.supervisor().server("eof").unwrap();
        assert_eq!(lifecycle.pid(), None);
        assert!(lifecycle.stderr().tail(5).any(|l| l == "saw eof"));
        // Stopping on purpose is not a failure.
        assert_eq!(lifecycle.last_error(), None);
        wait_gone(pid);
    });
}

/// Starts a grandchild that lets go of every pipe (so nothing waits for it), prints its pid
/// on stderr, then runs `rest`.
fn with_detached_grandchild(rest: &str) -> String {
    format!("sleep 1000 </dev/null >/dev/null 2>&1 & echo \"grandchild $!\" >&2; {rest}")
}

#[test]
fn child_that_exits_on_stdin_eof_takes_its_group_along() {
    run(async {
        let mut runner = runner(&[("eof", &with_detached_grandchild("cat >/dev/null"))]);
        let pid = start_ready(&mut runner, "eof").await;
        let grandchild: u32 = stderr_line(&mut runner, "eof", "grandchild ")
            .await
            .parse()
            .unwrap();
        let events = stop(&mut runner, "eof").await;
        // It left by itself at stdin EOF: no SIGTERM, no SIGKILL step of the lifecycle.
        assert_eq!(exit_of(&events, pid), Some(ExitStatus::Code(0)));
        wait_gone(pid);
        // The runner kills the group of every agent that exits.
        wait_gone(grandchild);
    });
}

#[test]
fn child_that_exits_on_its_own_takes_its_group_along() {
    run(async {
        let script = with_detached_grandchild("read line; exit 0");
        let mut runner = runner(&[("quits", &script)]);
        let pid = start_ready(&mut runner, "quits").await;
        let grandchild: u32 = stderr_line(&mut runner, "quits", "grandchild ")
            .await
            .parse()
            .unwrap();
        runner.write_stdin("quits", b"go\n").await.unwrap();
        let exited = runner
            .run_until(|s| s.server("quits").unwrap().pid().is_none())
            .await;
        assert!(exited);
        let events: Vec<_> = std::iter::from_fn(|| runner.poll_event()).collect();
        assert_eq!(exit_of(&events, pid), Some(ExitStatus::Code(0)));
        wait_gone(grandchild);
    });
}

/// R-HOST-4: the stop sequence on a real process group.
#[test]
fn child_that_ignores_eof_dies_on_sigterm_and_its_group_goes_too() {
    run(async {
        // Never reads stdin; default SIGTERM handling; a grandchild in the same group.
        let mut runner = runner(&[("term", "sleep 1000 & echo \"grandchild $!\" >&2; wait")]);
        let pid = start_ready(&mut runner, "term").await;
        let grandchild: u32 = stderr_line(&mut runner, "term", "grandchild ")
            .await
            .parse()
            .unwrap();
        let events = stop(&mut runner, "term").await;
        assert_eq!(exit_of(&events, pid), Some(ExitStatus::Signal(15)));
        wait_gone(pid);
        // The lifecycle kills the group after a SIGTERM exit (Agentao AC3).
        wait_gone(grandchild);
    });
}

#[test]
fn child_that_traps_sigterm_is_killed_with_its_grandchild() {
    run(async {
        let script = "trap '' TERM; sleep 1000 & echo \"grandchild $!\" >&2; \
                      while :; do wait; done";
        let mut runner = runner(&[("stubborn", script)]);
        let pid = start_ready(&mut runner, "stubborn").await;
        let grandchild: u32 = stderr_line(&mut runner, "stubborn", "grandchild ")
            .await
            .parse()
            .unwrap();
        let events = stop(&mut runner, "stubborn").await;
        assert_eq!(exit_of(&events, pid), Some(ExitStatus::Signal(9)));
        assert!(
            !events.iter().any(|e| matches!(
                e,
                RunnerEvent::Notice {
                    notice: Notice::ProcessLingering { .. },
                    ..
                }
            )),
            "the exit after SIGKILL was seen"
        );
        wait_gone(pid);
        wait_gone(grandchild);
        // Both pipes close once the whole group is dead, so the runner has nothing left.
        while runner.next_event().await.is_some() {}
        assert_eq!(runner.tracked_processes().count(), 0);
    });
}

#[test]
fn restart_stops_the_old_process_and_spawns_a_new_one() {
    run(async {
        let mut runner = runner(&[("a", "cat >/dev/null")]);
        let old = start_ready(&mut runner, "a").await;
        runner.handle("a", Input::Restart).unwrap();
        let restarted = runner
            .run_until(|s| s.server("a").unwrap().state() == ServerState::Starting)
            .await;
        assert!(restarted);
        let new = runner
            .supervisor()
            .server("a")
            .unwrap()
            .pid()
            .expect("respawned");
        assert_ne!(new, old);
        wait_gone(old);
        let events = stop(&mut runner, "a").await;
        assert_eq!(exit_of(&events, new), Some(ExitStatus::Code(0)));
    });
}

#[test]
fn spawn_failure_fails_the_start_with_the_os_error() {
    let config = AcpConfig::parse(
        r#"{"servers": {"bad": {"command": "/nonexistent/agent", "args": [], "env": {}, "cwd": "."}}}"#,
        "acp.json",
        |_| None,
    )
    .unwrap();
    let mut runner: AgentRunner<()> = AgentRunner::new(
        &config,
        &scratch_dir("bad"),
        host_support::test_env(),
        StopTimings::uniform(WAIT),
        0,
    );
    runner.handle("bad", Input::Start).unwrap();
    let lifecycle = runner.supervisor().server("bad").unwrap();
    assert_eq!(lifecycle.state(), ServerState::Failed);
    assert_eq!(
        lifecycle.last_error(),
        Some("acp server 'bad': failed to start: No such file or directory (os error 2)")
    );
}

#[test]
fn a_crash_while_ready_is_classified_by_its_exit_status() {
    run(async {
        // Exits 0 after its first stdin line: a clean exit of a running server is
        // recoverable (back to configured), and the connection is dropped.
        let mut runner = runner(&[("crash", "read line; exit 0")]);
        let pid = start_ready(&mut runner, "crash").await;
        runner.write_stdin("crash", b"go\n").await.unwrap();
        let recovered = runner
            .run_until(|s| s.server("crash").unwrap().state() == ServerState::Configured)
            .await;
        assert!(recovered);
        let events: Vec<_> = std::iter::from_fn(|| runner.poll_event()).collect();
        assert_eq!(exit_of(&events, pid), Some(ExitStatus::Code(0)));
        let dropped = events
            .iter()
            .any(|e| matches!(e, RunnerEvent::DropConnection { server } if server == "crash"));
        assert!(dropped);
        assert_eq!(
            runner.supervisor().server("crash").unwrap().restart_count(),
            1
        );
        wait_gone(pid);
    });
}

#[test]
fn a_signal_death_while_ready_is_fatal() {
    run(async {
        let mut runner = runner(&[("victim", "cat >/dev/null")]);
        let pid = start_ready(&mut runner, "victim").await;
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid as i32).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
        let failed = runner
            .run_until(|s| s.server("victim").unwrap().state() == ServerState::Failed)
            .await;
        assert!(failed);
        let lifecycle = runner.supervisor().server("victim").unwrap();
        assert!(lifecycle.is_fatal());
        assert_eq!(
            lifecycle.last_error(),
            Some("server 'victim' marked fatal by recovery classifier")
        );
    });
}

#[test]
fn stdout_reaches_the_glue_as_bytes() {
    run(async {
        let mut runner = runner(&[("echo", "cat")]);
        start_ready(&mut runner, "echo").await;
        runner
            .write_stdin("echo", b"{\"jsonrpc\":\"2.0\"}\n")
            .await
            .unwrap();
        let mut got = Vec::new();
        while !got.ends_with(b"\n") {
            if let RunnerEvent::Stdout { server, bytes } = runner.next_event().await.expect("event")
            {
                assert_eq!(server, "echo");
                got.extend(bytes);
            }
        }
        assert_eq!(got, b"{\"jsonrpc\":\"2.0\"}\n");
        stop(&mut runner, "echo").await;
    });
}

#[test]
fn writing_to_a_server_without_process_fails() {
    run(async {
        let mut runner = runner(&[("idle", "cat")]);
        let error = runner.write_stdin("idle", b"x").await.unwrap_err();
        assert_eq!(error.to_string(), "server 'idle' has no running process");
    });
}

#[test]
fn dropping_the_runner_kills_what_it_still_runs() {
    let pids = run(async {
        let mut runner = runner(&[(
            "a",
            "sleep 1000 & echo \"grandchild $!\" >&2; cat >/dev/null",
        )]);
        let pid = start_ready(&mut runner, "a").await;
        let grandchild: u32 = stderr_line(&mut runner, "a", "grandchild ")
            .await
            .parse()
            .unwrap();
        drop(runner);
        [pid, grandchild]
    });
    for pid in pids {
        wait_gone(pid);
    }
}

#[test]
fn default_stop_timings_are_the_spec_values() {
    let timings = StopTimings::default();
    assert_eq!(timings.stdin_close_grace, Duration::from_secs(5));
    assert_eq!(timings.terminate_grace, Duration::from_secs(5));
    assert_eq!(timings.kill_grace, Duration::from_secs(2));
}

/// A runner for one `sh -c` server with extra config fields.
fn runner_with(name: &str, script: &str, extra: &str) -> AgentRunner<()> {
    let config = sh_config(&[(name, script)]).replacen(
        r#""cwd": ".""#,
        &format!(r#""cwd": ".", {extra}"#),
        1,
    );
    let config = AcpConfig::parse(&config, "acp.json", |_| None).unwrap();
    assert!(config.rejected().is_empty(), "{:?}", config.rejected());
    AgentRunner::new(
        &config,
        &scratch_dir("extra"),
        host_support::test_env(),
        StopTimings::uniform(WAIT),
        0,
    )
}

#[test]
fn closed_stdout_of_a_live_process_stops_it_and_allows_a_restart() {
    run(async {
        // Closes its stdout but lives on, reading stdin until EOF.
        let mut runner = runner(&[("mute", "exec 1>&-; cat >/dev/null")]);
        let pid = start_ready(&mut runner, "mute").await;
        let settled = runner
            .run_until(|s| s.server("mute").unwrap().state() == ServerState::Configured)
            .await;
        assert!(settled);
        let lifecycle = runner.supervisor().server("mute").unwrap();
        assert_eq!(
            lifecycle.last_error(),
            Some("server 'mute' closed its stdout")
        );
        assert_eq!(lifecycle.restart_count(), 1);
        let events: Vec<_> = std::iter::from_fn(|| runner.poll_event()).collect();
        // Stopped through stdin EOF: it exited by itself.
        assert_eq!(exit_of(&events, pid), Some(ExitStatus::Code(0)));
        wait_gone(pid);
    });
}

#[test]
fn startup_timeout_fails_a_server_that_never_handshakes() {
    run(async {
        let mut runner = runner_with("slow", "cat >/dev/null", r#""startupTimeoutMs": 200"#);
        runner.handle("slow", Input::Start).unwrap();
        let pid = runner.supervisor().server("slow").unwrap().pid().unwrap();
        let failed = runner
            .run_until(|s| s.server("slow").unwrap().state() == ServerState::Failed)
            .await;
        assert!(failed);
        assert_eq!(
            runner.supervisor().server("slow").unwrap().last_error(),
            Some("server 'slow' did not become ready within 200 ms")
        );
        let events: Vec<_> = std::iter::from_fn(|| runner.poll_event()).collect();
        assert!(events.iter().any(|e| matches!(
            e,
            RunnerEvent::Notice {
                notice: Notice::StartupTimedOut,
                ..
            }
        )));
        assert!(
            events
                .iter()
                .any(|e| matches!(e, RunnerEvent::DropConnection { .. }))
        );
        wait_gone(pid);
    });
}

#[test]
fn turn_timeout_asks_the_glue_to_cancel() {
    run(async {
        let mut runner = runner_with("busy", "cat >/dev/null", r#""requestTimeoutMs": 200"#);
        start_ready(&mut runner, "busy").await;
        runner.handle("busy", Input::PromptStarted).unwrap();
        let mut cancelled = false;
        while !cancelled {
            if let RunnerEvent::CancelTurn { server } = runner.next_event().await.expect("an event")
            {
                cancelled = server == "busy";
            }
        }
        let lifecycle = runner.supervisor().server("busy").unwrap();
        assert_eq!(lifecycle.state(), ServerState::Ready);
        assert_eq!(
            lifecycle.last_error(),
            Some("timeout waiting for response from 'busy' after 200 ms")
        );
        stop(&mut runner, "busy").await;
    });
}
