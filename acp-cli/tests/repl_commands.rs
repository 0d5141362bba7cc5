//! `acp-cli repl` with piped input, as a script uses it: every `/acp` subcommand and every
//! delegation form against a configured (scripted) agent, inline questions, `/status`, the
//! main agent, and no process left behind after leaving.

mod client_support;

use std::path::{Path, PathBuf};

use client_support::*;

/// A project whose `.agentao/acp.json` has `helper` (the scripted agent, writing
/// "helper booting" to stderr) plus `extra` servers (name, agent argv).
fn project(tag: &str, extra: &[(&str, Vec<String>)]) -> PathBuf {
    let dir = scratch_dir(tag);
    std::fs::create_dir_all(dir.join(".agentao")).unwrap();
    let mut servers = vec![(
        String::from("helper"),
        scripted_agent(&["--stderr", "helper booting"]),
        "Scripted helper",
    )];
    for (name, argv) in extra {
        servers.push((name.to_string(), argv.clone(), ""));
    }
    let entries: Vec<String> = servers
        .iter()
        .map(|(name, argv, description)| {
            let config = serde_json::json!({
                "command": argv[0], "args": argv[1..], "env": {}, "cwd": ".",
                "description": description,
            });
            format!("{}: {config}", serde_json::Value::String(name.clone()))
        })
        .collect();
    std::fs::write(
        dir.join(".agentao/acp.json"),
        format!("{{\"servers\": {{{}}}}}", entries.join(", ")),
    )
    .unwrap();
    dir
}

fn repl(dir: &Path, main: &[String], input: &str) -> Finished {
    let mut args = vec![String::from("repl")];
    if !main.is_empty() {
        args.push(String::from("--"));
        args.extend(main.iter().cloned());
    }
    let done = Running::start(&args, dir, Some(input)).finish();
    assert_eq!(done.code, Some(0), "{done:?}");
    done
}

fn has(done: &Finished, text: &str) {
    assert!(
        done.stdout.contains(text),
        "missing {text:?} in:\n{}",
        done.stdout
    );
}

#[test]
fn list_and_status_overview() {
    let dir = project("list", &[]);
    let done = repl(&dir, &[], "/acp\n/acp list\n/acp status\n/status\n");
    let overview = "ACP Servers (0/1 running):\n  ● helper  configured  Scripted helper\n";
    assert_eq!(done.stdout.matches(overview).count(), 3, "{}", done.stdout);
    has(
        &done,
        "Main agent: none\nACP servers: 0/1 running\nACP inbox: 0 queued\nACP interactions: 0 pending\n",
    );
}

#[test]
fn no_config_and_broken_config() {
    let dir = scratch_dir("noconfig");
    let done = repl(&dir, &[], "/acp\n");
    has(
        &done,
        "No ACP servers configured.\nAdd servers to .agentao/acp.json\n",
    );
    std::fs::create_dir_all(dir.join(".agentao")).unwrap();
    std::fs::write(dir.join(".agentao/acp.json"), "{not json").unwrap();
    let done = repl(&dir, &[], "/acp\n");
    has(&done, "Failed to load ACP config: ");
}

#[test]
fn start_then_send() {
    let dir = project("start", &[]);
    let done = repl(
        &dir,
        &[],
        "/acp start helper\n/acp send helper /echo hi\n/acp start nope\n",
    );
    has(&done, "ACP server 'helper' started.\n");
    has(
        &done,
        "Sending to helper...\n[helper] hi\nhelper: turn finished (end_turn)\n",
    );
    has(&done, "Unknown ACP server: nope\n");
}

#[test]
fn send_starts_the_server_and_checks_its_arguments() {
    let dir = project("send", &[]);
    let done = repl(
        &dir,
        &[],
        "/acp send helper /echo hi\n/acp send helper\n/acp send nope x\n",
    );
    has(
        &done,
        "Sending to helper...\n[helper] hi\nhelper: turn finished (end_turn)\n",
    );
    has(&done, "Usage: /acp send <name> <message>\n");
    has(&done, "Unknown ACP server: nope\n");
}

#[test]
fn send_to_an_agent_that_wants_authentication() {
    let dir = project("sendauth", &[("locked", scripted_agent(&["--auth"]))]);
    let done = repl(&dir, &[], "/acp send locked hi\n");
    has(
        &done,
        "Send failed: locked: handshake failed: the agent requires authentication \
         (session/new answered -32000: Authentication required: run `agent login`)\n",
    );
}

#[test]
fn stop_ends_the_process() {
    let dir = project("stop", &[]);
    let done = repl(
        &dir,
        &[],
        "/acp send helper /echo hi\n/acp list\n/acp stop helper\n/acp list\n/acp stop\n",
    );
    let pid = pid_in(&done.stdout, "pid=");
    has(&done, "ACP server 'helper' stopped.\n");
    has(&done, "  ● helper  stopped  Scripted helper\n");
    has(&done, "Usage: /acp stop <name>\n");
    assert!(is_gone(pid));
}

#[test]
fn restart_gives_a_new_process() {
    let dir = project("restart", &[]);
    let done = repl(
        &dir,
        &[],
        "/acp send helper /echo one\n/acp status helper\n/acp restart helper\n/acp send helper /echo two\n/acp status helper\n",
    );
    has(&done, "ACP server 'helper' restarted.\n");
    let first = pid_in(
        &done.stdout[..done.stdout.find("restarted").unwrap()],
        "PID: ",
    );
    let second = pid_in(&done.stdout, "PID: ");
    assert_ne!(first, second);
    assert!(is_gone(first));
    has(&done, "[helper] two\n");
}

#[test]
fn cancel_without_a_turn_and_of_an_unknown_server() {
    let dir = project("cancel", &[]);
    let done = repl(
        &dir,
        &[],
        "/acp cancel helper\n/acp cancel nope\n/acp cancel\n",
    );
    has(&done, "Cancel failed: server 'helper' has no active turn\n");
    has(&done, "Unknown ACP server: nope\n");
    has(&done, "Usage: /acp cancel <name>\n");
}

#[test]
fn status_of_a_running_server() {
    let dir = project("status", &[]);
    let done = repl(
        &dir,
        &[],
        "/acp send helper /echo hi\n/acp status helper\n/acp status nope\n",
    );
    let pid = pid_in(&done.stdout, "PID: ");
    has(
        &done,
        &format!("ACP server 'helper'\nState: ready\nPID: {pid}\nDescription: Scripted helper\n"),
    );
    has(
        &done,
        "Session ID: sess_1\nProtocol: v1\nBusy: false\nRecent stderr (1 of last 5):\n  helper booting\n",
    );
    has(&done, "Unknown ACP server: nope\n");
}

#[test]
fn logs_of_a_server() {
    let dir = project("logs", &[]);
    let done = repl(
        &dir,
        &[],
        "/acp logs helper\n/acp send helper /log second line\n/acp logs helper\n/acp logs helper 1\n/acp logs helper zero\n/acp logs\n",
    );
    has(&done, "No stderr output from 'helper'.\n");
    has(
        &done,
        "Stderr log for 'helper' (last 2 lines):\nhelper booting\nsecond line\n",
    );
    has(
        &done,
        "Stderr log for 'helper' (last 1 lines):\nsecond line\n",
    );
    has(&done, "Invalid line count: zero\n");
    has(&done, "Usage: /acp logs <name> [lines]\n");
}

#[test]
fn unknown_subcommand_and_unknown_command() {
    let dir = project("unknown", &[]);
    let done = repl(&dir, &[], "/acp frobnicate\n/frob\n");
    has(
        &done,
        "Unknown subcommand: frobnicate\nAvailable: list, start, stop, restart, send, cancel, status, logs\n",
    );
    has(&done, "Unknown command: /frob (try /help)\n");
}

#[test]
fn every_delegation_form_routes_to_the_server() {
    let dir = project("route", &[]);
    let done = repl(
        &dir,
        &[],
        "@helper one\nhelper: two\nhelper：three\n让 helper four\n请 helper five\n@helper\n请问 helper six\n",
    );
    for (syntax, task) in [
        ("at_mention", "one"),
        ("colon", "two"),
        ("colon", "three"),
        ("zh_explicit", "four"),
        ("zh_explicit", "five"),
    ] {
        has(
            &done,
            &format!(
                "ACP Delegation → helper ({syntax})\nSending to helper...\n[helper] echo: {task}\nhelper: turn finished (end_turn)\n"
            ),
        );
    }
    has(
        &done,
        "ACP route detected → helper, but no task text was provided.\nTry: '@helper review the latest diff'\n",
    );
    // Ordinary Chinese is not a route: without a main agent it is refused.
    has(
        &done,
        "No main agent (start with `acp-cli repl -- AGENT …`).",
    );
}

#[test]
fn permission_and_input_are_asked_inline() {
    let dir = project("inline", &[]);
    let done = repl(
        &dir,
        &[],
        "@helper /tool Fix\n9\n1\n@helper /tool Fix\n4\n@helper /ask Branch?\nfeature/x\n@helper /ask Branch?\n\n",
    );
    has(
        &done,
        "Permission request from 'helper':\n  Allow Fix (edit)?\n    path: a.txt\n  1. Approve once\n  2. Approve all\n  3. Reject once\n  4. Reject all\nPress 1-4 · Esc to reject\n",
    );
    has(
        &done,
        "Press 1-4 · Esc to reject\nApproved (once)\n[helper] allowed allow_once\n",
    );
    has(
        &done,
        "Rejected (all future calls)\n[helper] rejected reject_always\n",
    );
    has(
        &done,
        "Input request from 'helper':\n  Branch?\n> [helper] answer: feature/x\n",
    );
    has(
        &done,
        "Empty reply — cancelled.\n[helper] outcome: cancelled\n",
    );
}

#[test]
fn main_agent_gets_plain_text_and_asks_inline() {
    let dir = project("main", &[]);
    let done = repl(
        &dir,
        &scripted_agent(&[]),
        "hello there\n!tool Edit\n3\n/status\n",
    );
    has(
        &done,
        "echo: hello there\npython3: turn finished (end_turn)\n",
    );
    has(
        &done,
        "  · tool: Edit (edit) [pending]\nPermission request from 'python3':\n",
    );
    has(
        &done,
        "Rejected (once)\nrejected reject_once\npython3: turn finished (end_turn)\n",
    );
    has(&done, "Main agent: python3 (ready, pid=");
}

#[test]
fn leaving_stops_every_agent_and_its_children() {
    let dir = project("orphans", &[("kid", scripted_agent(&["--grandchild"]))]);
    let main = scripted_agent(&["--grandchild"]);
    let done = repl(
        &dir,
        &main,
        "hi\n/acp send helper /echo x\n@kid /echo y\n/status\n/acp list\n/acp logs kid\n/quit\n",
    );
    let main_pid = pid_in(&done.stdout, "Main agent: python3 (ready, pid=");
    let list = &done.stdout[done
        .stdout
        .find("ACP Servers (2/2 running)")
        .expect("both running")..];
    let helper = pid_in(&list[..list.find("● kid").unwrap()], "pid=");
    let kid = pid_in(list, "pid=");
    let grandchild = pid_in(&done.stdout, "grandchild ");
    for pid in [main_pid, helper, kid] {
        assert!(is_gone(pid), "process {pid} outlived the REPL");
    }
    wait_gone(grandchild, "the grandchild of the REPL's agents");
}

#[test]
fn a_server_that_cannot_start() {
    let dir = project(
        "nostart",
        &[("broken", vec![String::from("/nonexistent/agent")])],
    );
    let done = repl(
        &dir,
        &[],
        "/acp start broken\n/acp send broken hi\n@broken hi\n",
    );
    let error = "acp server 'broken': failed to start: No such file or directory (os error 2)";
    has(&done, &format!("Failed to start 'broken': {error}\n"));
    assert_eq!(
        done.stdout
            .matches(&format!("Send failed: {error}\n"))
            .count(),
        2,
        "{}",
        done.stdout
    );
}

#[test]
fn a_turn_past_the_servers_timeout() {
    let dir = scratch_dir("slow");
    std::fs::create_dir_all(dir.join(".agentao")).unwrap();
    let argv = scripted_agent(&[]);
    let config = serde_json::json!({"servers": {"slow": {
        "command": argv[0], "args": argv[1..], "env": {}, "cwd": ".",
        "requestTimeoutMs": 200}}});
    std::fs::write(dir.join(".agentao/acp.json"), config.to_string()).unwrap();
    let done = repl(&dir, &[], "@slow /hang\n/acp status slow\n");
    has(&done, "Timeout waiting for response from 'slow'\n");
    has(
        &done,
        "Last error: timeout waiting for response from 'slow' after 200 ms\n",
    );
}

#[test]
fn a_server_that_dies_during_a_turn() {
    let dir = project("dies", &[]);
    let done = repl(&dir, &[], "@helper /die\n/acp list\n");
    has(
        &done,
        "[helper] dying\nPrompt failed: server 'helper' exited (exit code 3)\n",
    );
    has(
        &done,
        "[helper] process died (exit code 3); it starts again when next needed\n",
    );
    has(
        &done,
        "  ● helper  configured  Scripted helper\n    last error: server 'helper' exited (exit code 3)\n",
    );
}

#[test]
fn a_main_agent_that_cannot_start() {
    let dir = project("nomain", &[]);
    let done = repl(&dir, &[String::from("/nonexistent/main")], "hello\n");
    let error = "acp server 'main': failed to start: No such file or directory (os error 2)";
    has(&done, &format!("Main agent failed to start: {error}\n"));
    has(&done, &format!("Main agent unavailable: {error}\n"));
}

#[test]
fn agent_text_is_sanitized_before_it_is_shown() {
    let dir = project("sanitize", &[]);
    let done = repl(
        &dir,
        &scripted_agent(&[]),
        "@helper /echo \u{1b}[2Jred\u{7}\u{202e}x\n/echo \u{1b}]0;title\u{7}main\n",
    );
    has(&done, "[helper] [2Jredx\n");
    assert!(!done.stdout.contains('\u{1b}'), "{:?}", done.stdout);
    assert!(!done.stdout.contains('\u{202e}'));
}

#[test]
fn the_main_agents_advertised_commands_go_to_it() {
    let dir = project("agentcmds", &[]);
    let done = repl(
        &dir,
        &scripted_agent(&["--commands", "log,status"]),
        "hello\n/log noted\n//think deep\n/think again\n/status\n/help\n/quit\n",
    );
    // Advertised: sent as typed.
    has(&done, "> logged\npython3: turn finished (end_turn)\n");
    // `//text` sends `/text`, advertised or not.
    has(
        &done,
        "[completed] look around\ndeep\npython3: turn finished (end_turn)\n",
    );
    has(&done, "Unknown command: /think (try /help)\n");
    // The REPL's /status wins over the agent's.
    has(&done, "> Main agent: python3 (ready, pid=");
    has(
        &done,
        &format!(
            "Anything else goes to the main agent.\n\
             Commands of python3 (sent to it as typed; //text sends /text):\n  \
             {:<26} does log\n  {:<26} does status (the REPL's /status comes first: type //status)\n",
            "/log <what>", "/status <what>"
        ),
    );
}
