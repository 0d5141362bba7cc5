//! `host::Host`: loading `.agentao/acp.json` from a directory, the `/acp` commands on real
//! children, and `stop_all` leaving no process behind.

use acp_cli::host;
mod host_support;

use std::path::Path;
use std::time::Duration;

use acp_host::supervisor::lifecycle::{Input, ServerState};
use host::commands::{self, ClientView};
use host::runner::{RunnerEvent, StopTimings};
use host::{CommandOutput, Host, HostError};
use host_support::{run, scratch_dir, sh_config, wait_gone};

const TIMINGS: StopTimings = StopTimings {
    stdin_close_grace: Duration::from_millis(100),
    terminate_grace: Duration::from_millis(100),
    kill_grace: Duration::from_millis(200),
};

fn project(config: &str) -> std::path::PathBuf {
    let root = scratch_dir("project");
    std::fs::create_dir_all(root.join(".agentao")).unwrap();
    std::fs::write(root.join(".agentao/acp.json"), config).unwrap();
    root
}

fn load(root: &Path) -> Host<()> {
    Host::load_with_env(root, host_support::test_env(), TIMINGS).unwrap()
}

async fn text(host: &mut Host<()>, line: &str) -> String {
    let command = commands::parse(line).expect("an /acp line").expect("valid");
    match host.execute(command).await {
        CommandOutput::Text(text) => text,
        other => panic!("expected text, got {other:?}"),
    }
}

#[test]
fn a_missing_file_means_no_servers() {
    run(async {
        let root = scratch_dir("empty");
        let mut host = load(&root);
        assert_eq!(
            text(&mut host, "/acp").await,
            "No ACP servers configured.\nAdd servers to .agentao/acp.json"
        );
    });
}

#[test]
fn a_broken_file_is_a_load_error_with_its_path() {
    let root = project("{");
    let error = Host::<()>::load_with_env(&root, vec![], TIMINGS).unwrap_err();
    let path = root.join(".agentao/acp.json");
    assert_eq!(
        commands::load_failed(&error),
        format!(
            "Failed to load ACP config: invalid JSON in {}: EOF while parsing an object at line 1 column 1",
            path.display()
        )
    );
    assert!(matches!(error, HostError::Config(_)));
}

#[test]
fn an_unreadable_file_is_a_load_error() {
    let root = scratch_dir("unreadable");
    // A directory where the file should be cannot be read as text.
    std::fs::create_dir_all(root.join(".agentao/acp.json")).unwrap();
    let error = Host::<()>::load_with_env(&root, vec![], TIMINGS).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot read {}: Is a directory (os error 21)",
            root.join(".agentao/acp.json").display()
        )
    );
}

/// R-HOST-1: `$VAR` and `${VAR}` expand in `env` values.
#[test]
fn env_values_expand_from_the_host_environment() {
    run(async {
        let root = project(
            r#"{"servers": {"a": {"command": "sh", "args": ["-c", "echo \"v=$TOKEN\" >&2"],
                "env": {"TOKEN": "${SECRET}"}, "cwd": "."}}}"#,
        );
        let mut env = host_support::test_env();
        env.push(("SECRET".into(), "s3".into()));
        let mut host: Host<()> = Host::load_with_env(&root, env, TIMINGS).unwrap();
        assert_eq!(
            text(&mut host, "/acp start a").await,
            "ACP server 'a' started."
        );
        let done = host
            .runner()
            .run_until(|s| s.server("a").unwrap().stderr().tail(5).any(|l| l == "v=s3"))
            .await;
        assert!(done);
        host.stop_all().await;
    });
}

#[test]
fn rejected_entries_are_listed_and_valid_ones_still_load() {
    run(async {
        let root = project(
            r#"{"servers": {"ok": {"command": "sh", "args": [], "env": {}, "cwd": "."},
                            "broken": {"command": 1, "args": [], "env": {}, "cwd": "."}}}"#,
        );
        let mut host = load(&root);
        assert_eq!(
            text(&mut host, "/acp list").await,
            "ACP Servers (0/1 running):\n  ● ok  configured\n  ✗ server 'broken': 'command' must be str, got int"
        );
    });
}

#[test]
fn commands_on_real_servers() {
    run(async {
        let root = project(
            r#"{"servers": {
                "a": {"command": "sh", "args": ["-c", "echo 'a says hi' >&2; cat >/dev/null"],
                      "env": {}, "cwd": "."},
                "bad": {"command": "/nonexistent/agent", "args": [], "env": {}, "cwd": "."}}}"#,
        );
        let mut host = load(&root);

        assert_eq!(
            text(&mut host, "/acp start nope").await,
            "Unknown ACP server: nope"
        );
        assert_eq!(
            text(&mut host, "/acp stop nope").await,
            "Unknown ACP server: nope"
        );
        assert_eq!(
            text(&mut host, "/acp restart nope").await,
            "Unknown ACP server: nope"
        );
        assert_eq!(
            text(&mut host, "/acp cancel nope").await,
            "Unknown ACP server: nope"
        );
        assert_eq!(
            text(&mut host, "/acp logs nope").await,
            "Unknown ACP server: nope"
        );
        assert_eq!(
            text(&mut host, "/acp status nope").await,
            "Unknown ACP server: nope"
        );
        assert_eq!(
            text(&mut host, "/acp send nope hi").await,
            "Unknown ACP server: nope"
        );

        assert_eq!(
            text(&mut host, "/acp start bad").await,
            "Failed to start 'bad': acp server 'bad': failed to start: No such file or directory (os error 2)"
        );

        assert_eq!(
            text(&mut host, "/acp logs a").await,
            "No stderr output from 'a'."
        );
        assert_eq!(
            text(&mut host, "/acp start a").await,
            "ACP server 'a' started."
        );
        let pid = host
            .runner()
            .supervisor()
            .server("a")
            .unwrap()
            .pid()
            .unwrap();
        assert!(
            host.runner()
                .run_until(|s| s.server("a").unwrap().stderr().len() == 1)
                .await
        );
        assert_eq!(
            text(&mut host, "/acp logs a").await,
            "Stderr log for 'a' (last 1 lines):\na says hi"
        );
        // The glue would handshake now.
        host.runner().handle("a", Input::HandshakeStarted).unwrap();
        host.runner().handle("a", Input::HandshakeOk).unwrap();
        assert_eq!(
            text(&mut host, "/acp").await,
            format!(
                "ACP Servers (1/2 running):\n  ● a  ready  pid={pid}\n  ● bad  failed\n    \
                 last error: acp server 'bad': failed to start: No such file or directory (os error 2)"
            )
        );
        assert_eq!(
            text(&mut host, "/acp cancel a").await,
            "Cancel failed: server 'a' has no active turn"
        );
        host.runner().handle("a", Input::PromptStarted).unwrap();
        assert_eq!(
            text(&mut host, "/acp cancel a").await,
            "Cancel sent to 'a'."
        );
        let events: Vec<_> = std::iter::from_fn(|| host.runner().poll_event()).collect();
        assert!(
            events
                .iter()
                .any(|e| matches!(e, RunnerEvent::CancelTurn { server } if server == "a"))
        );
        host.runner()
            .handle("a", Input::PromptEnded { ok: true })
            .unwrap();

        host.set_client(
            "a",
            Some(ClientView {
                session_id: Some("sess-9".into()),
                protocol_version: 1,
            }),
        );
        let status = text(&mut host, "/acp status a").await;
        let expected_head =
            format!("ACP server 'a'\nState: ready\nPID: {pid}\nDescription: —\nLast activity: ");
        assert!(status.starts_with(&expected_head), "{status}");
        assert!(
            status.ends_with(
                "s ago\nSession ID: sess-9\nProtocol: v1\nBusy: false\n\
                 Recent stderr (1 of last 5):\n  a says hi"
            ),
            "{status}"
        );

        let command = commands::parse("/acp send a  do the thing ")
            .unwrap()
            .unwrap();
        assert_eq!(
            host.execute(command).await,
            CommandOutput::Send {
                server: "a".into(),
                message: "do the thing".into()
            }
        );

        assert_eq!(
            text(&mut host, "/acp restart a").await,
            "ACP server 'a' restarted."
        );
        let new_pid = host
            .runner()
            .supervisor()
            .server("a")
            .unwrap()
            .pid()
            .unwrap();
        assert_ne!(new_pid, pid);
        wait_gone(pid);

        assert_eq!(
            text(&mut host, "/acp stop a").await,
            "ACP server 'a' stopped."
        );
        assert_eq!(
            host.runner().supervisor().server("a").unwrap().state(),
            ServerState::Stopped
        );
        wait_gone(new_pid);
        assert_eq!(
            text(&mut host, "/acp restart bad").await,
            "Failed to start 'bad': acp server 'bad': failed to start: No such file or directory (os error 2)"
        );
    });
}

#[test]
fn stop_all_leaves_no_process_behind() {
    run(async {
        let root = project(&sh_config(&[
            // Exits on EOF but leaves a grandchild holding the pipes.
            (
                "eof",
                "sleep 1000 & echo \"grandchild $!\" >&2; cat >/dev/null",
            ),
            // Needs SIGTERM.
            ("term", "sleep 1000 & echo \"grandchild $!\" >&2; wait"),
            // Needs SIGKILL.
            (
                "kill",
                "trap '' TERM; sleep 1000 & echo \"grandchild $!\" >&2; while :; do wait; done",
            ),
            // Never started.
            ("idle", "cat"),
        ]));
        let mut host = load(&root);
        let mut pids = Vec::new();
        for name in ["eof", "term", "kill"] {
            assert_eq!(
                text(&mut host, &format!("/acp start {name}")).await,
                format!("ACP server '{name}' started.")
            );
            pids.push(
                host.runner()
                    .supervisor()
                    .server(name)
                    .unwrap()
                    .pid()
                    .unwrap(),
            );
            let has_grandchild = |s: &acp_host::supervisor::Supervisor<()>| {
                s.server(name)
                    .unwrap()
                    .stderr()
                    .tail(5)
                    .any(|l| l.starts_with("grandchild "))
            };
            assert!(host.runner().run_until(has_grandchild).await);
            let line = host
                .runner()
                .supervisor()
                .server(name)
                .unwrap()
                .stderr()
                .tail(5)
                .find_map(|l| l.strip_prefix("grandchild ").map(String::from))
                .unwrap();
            pids.push(line.parse().unwrap());
        }
        host.stop_all().await;
        for (config, lifecycle) in host.runner().supervisor().servers() {
            assert_eq!(lifecycle.state(), ServerState::Stopped, "{}", config.name);
            assert_eq!(lifecycle.pid(), None, "{}", config.name);
        }
        assert_eq!(host.runner().tracked_processes().count(), 0);
        for pid in pids {
            wait_gone(pid);
        }
    });
}
