//! `acp-cli repl` at a terminal, as a person uses it: driven through a pseudo-terminal
//! (python3's `pty`, tests/fixtures/pty_drive.py) answering a permission prompt with a
//! single key (no Enter; Esc rejects), running `/acp list` and `/acp logs`, cancelling with Ctrl-C and with
//! `/acp cancel` typed during a turn, typing the main agent's own slash commands (Tab
//! completes them, the arrow keys recall the project's history), and leaving with Ctrl-D.
//! The prompt is drawn by the line editor (with its cursor sequences), so it is expected
//! on its own after the text before it.

mod client_support;

use client_support::*;

/// Runs `acp-cli repl` in `dir` under the pty driver with `steps`; returns the screen.
fn drive(dir: &std::path::Path, steps: serde_json::Value) -> String {
    pty(dir, &[String::from("repl")], steps)
}

fn project(tag: &str) -> std::path::PathBuf {
    let dir = scratch_dir(tag);
    std::fs::create_dir_all(dir.join(".agentao")).unwrap();
    let argv = scripted_agent(&["--stderr", "helper booting"]);
    let config = serde_json::json!({"servers": {"helper": {
        "command": argv[0], "args": argv[1..], "env": {}, "cwd": ".",
        "description": "Scripted helper"}}});
    std::fs::write(dir.join(".agentao/acp.json"), config.to_string()).unwrap();
    dir
}

#[test]
fn a_person_answers_a_permission_lists_and_reads_logs() {
    let dir = project("pty");
    let steps = serde_json::json!([
        ["expect", "> "],
        ["send", "@helper /tool Fix\r"],
        ["expect", "Press 1-4 · Esc to reject\n"],
        ["send", "x"],
        ["expect", "Press 1-4 · Esc to reject\n"],
        ["send", "1"],
        [
            "expect",
            "Approved (once)\n[helper] allowed allow_once\nhelper: turn finished (end_turn)\n"
        ],
        ["expect", "> "],
        ["send", "/acp list\r"],
        [
            "expect",
            "ACP Servers (1/1 running):\n  ● helper  ready  pid="
        ],
        ["expect", "> "],
        ["send", "\u{3}"],
        ["expect", "(Ctrl-C: type /quit or press Ctrl-D to leave)\n"],
        ["expect", "> "],
        ["send", "/acp logs helper\r"],
        [
            "expect",
            "Stderr log for 'helper' (last 1 lines):\nhelper booting\n"
        ],
        ["expect", "> "],
        ["send", "\u{4}"],
        ["wait_exit"]
    ]);
    let screen = drive(&dir, steps);
    assert!(screen.ends_with("EXIT 0\n"), "{screen}");
    let pid = pid_in(&screen, "pid=");
    assert!(is_gone(pid), "the agent {pid} outlived the REPL");
}

#[test]
fn esc_rejects_and_ctrl_c_cancels_the_turn() {
    let dir = project("ptyc");
    let steps = serde_json::json!([
        ["expect", "> "],
        ["send", "@helper /tool Fix\r"],
        ["expect", "Press 1-4 · Esc to reject\n"],
        ["send", "\u{1b}"],
        [
            "expect",
            "Rejected (cancelled)\n[helper] rejected reject_once\n"
        ],
        ["expect", "> "],
        ["send", "@helper /sleep\r"],
        ["expect", "[helper] waiting (pid "],
        ["send", "\u{3}"],
        ["expect", "Cancelled prompt to 'helper'.\n"],
        ["expect", "> "],
        ["send", "@helper /sleep\r"],
        ["expect", "[helper] waiting (pid "],
        ["send", "/acp cancel helper\r"],
        ["expect", "Cancel sent to 'helper'.\n"],
        ["expect", "helper: turn finished (cancelled)\n"],
        ["expect", "> "],
        ["send", "/quit\r"],
        ["wait_exit"]
    ]);
    let screen = drive(&dir, steps);
    assert!(screen.ends_with("EXIT 0\n"), "{screen}");
    let pid = pid_in(&screen, "(pid ");
    assert!(is_gone(pid), "the agent {pid} outlived the REPL");
}

#[test]
fn a_person_talks_to_the_main_agent_and_interrupts_it() {
    let dir = project("ptymain");
    let mut args = vec![String::from("repl"), String::from("--")];
    args.extend(scripted_agent(&[]));
    let steps = serde_json::json!([
        ["expect", "> "],
        ["send", "hello\r"],
        ["expect", "echo: hello\npython3: turn finished (end_turn)\n"],
        ["expect", "> "],
        ["send", "!tool Edit\r"],
        ["expect", "Press 1-4 · Esc to reject\n"],
        ["send", "4"],
        [
            "expect",
            "Rejected (all future calls)\nrejected reject_always\n"
        ],
        ["expect", "> "],
        ["send", "!sleep\r"],
        ["expect", "waiting (pid "],
        ["send", "\u{3}"],
        ["expect", "Cancelled prompt to 'python3'.\n"],
        ["expect", "> "],
        ["send", "\u{4}"],
        ["wait_exit"]
    ]);
    let screen = pty(&dir, &args, steps);
    assert!(screen.ends_with("EXIT 0\n"), "{screen}");
    let pid = pid_in(&screen, "(pid ");
    assert!(is_gone(pid), "the main agent {pid} outlived the REPL");
}

#[test]
fn the_main_agents_commands_are_typed_completed_and_recalled() {
    let dir = project("ptycmds");
    let mut args = vec![String::from("repl"), String::from("--")];
    args.extend(scripted_agent(&["--commands", "tool,help"]));
    let steps = serde_json::json!([
        ["expect", "> "],
        // The commands come right after session/new, before this answer.
        ["send", "hello\r"],
        ["expect", "echo: hello\npython3: turn finished (end_turn)\n"],
        ["expect", "> "],
        ["send", "/help\r"],
        ["expect", "Anything else goes to the main agent.\n"],
        [
            "expect",
            "Commands of python3 (sent to it as typed; //text sends /text):\n  /tool <what>"
        ],
        [
            "expect",
            "does help (the REPL's /help comes first: type //help)\n"
        ],
        ["expect", "> "],
        // Tab completes the agent's command; it reaches the agent as typed.
        ["send", "/to\t"],
        ["send", "Edit\r"],
        ["expect", "Allow Edit (edit)?\n"],
        ["expect", "Press 1-4 · Esc to reject\n"],
        ["send", "1"],
        ["expect", "Approved (once)\nallowed allow_once\n"],
        ["expect", "> "],
        ["send", "//help me\r"],
        ["expect", "echo: /help me\n"],
        ["expect", "> "],
        ["send", "/nope\r"],
        ["expect", "Unknown command: /nope (try /help)\n"],
        ["expect", "> "],
        // An input question takes a line typed as it is (not kept in the history).
        ["send", "!ask Name?\r"],
        ["expect", "Input request from 'python3':\n  Name?\n> "],
        ["send", "Ada\r"],
        ["expect", "answer: Ada\npython3: turn finished (end_turn)\n"],
        ["expect", "> "],
        // An update kind from the future: one dim line at a terminal.
        ["send", "!raw [{\"sessionUpdate\": \"hologram_update\"}]\r"],
        [
            "expect",
            "\u{1b}[2m  · (update: hologram_update)\u{1b}[0m\nsent 1\n"
        ],
        ["expect", "> "],
        // A line starting with a space is not kept.
        ["send", " secret\r"],
        ["expect", "echo: secret\n"],
        ["expect", "> "],
        // Up five times: /tool Edit again.
        ["send", "\u{1b}[A\u{1b}[A\u{1b}[A\u{1b}[A\u{1b}[A\r"],
        ["expect", "Press 1-4 · Esc to reject\n"],
        ["send", "3"],
        ["expect", "Rejected (once)\nrejected reject_once\n"],
        ["expect", "> "],
        ["send", "\u{4}"],
        ["wait_exit"]
    ]);
    let screen = pty(&dir, &args, steps);
    assert!(screen.ends_with("EXIT 0\n"), "{screen}");
    let file = dir.join(".agentao/repl_history");
    let mode = std::os::unix::fs::PermissionsExt::mode(&file.metadata().unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "the history is private");
    let history = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = history.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [
            "hello",
            "/help",
            "/tool Edit",
            "//help me",
            "/nope",
            "!ask Name?",
            "!raw [{\"sessionUpdate\": \"hologram_update\"}]",
            "/tool Edit"
        ],
        "{history}"
    );
}
