//! `acp-cli client` against the scripted agent (tests/fixtures/scripted_agent.py): the
//! answer on stdout, the rest on stderr, permission policies and asking, ask_user, files
//! served inside the cwd only, handshake failure, death, timeout, Ctrl-C.

mod client_support;

use client_support::*;

#[test]
fn answer_goes_to_stdout_and_the_stop_reason_to_stderr() {
    let dir = scratch_dir("echo");
    let run = client(
        &["--prompt", "/echo hello world"],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "hello world\n");
    assert_eq!(run.stderr, "Sending to python3...\nstop reason: end_turn\n");
}

#[test]
fn prompt_is_read_from_stdin_without_prompt_flag() {
    let dir = scratch_dir("stdin");
    let run = client(&[], &scripted_agent(&[]), &dir, "just text\n");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "echo: just text\n");
}

#[test]
fn empty_prompt_is_refused() {
    let dir = scratch_dir("empty");
    let run = client(&[], &scripted_agent(&[]), &dir, "  \n");
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        "acp-cli client: the prompt is empty (give --prompt TEXT or write it to stdin)\n"
    );
}

#[test]
fn thoughts_plans_and_tools_are_shown_on_stderr() {
    let dir = scratch_dir("think");
    let run = client(&["--prompt", "/think done"], &scripted_agent(&[]), &dir, "");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "done\n");
    assert_eq!(
        run.stderr,
        "Sending to python3...\nthought: pondering\nplan:\n  [completed] look around\nstop reason: end_turn\n"
    );
}

#[test]
fn permission_by_policy_allow_and_reject() {
    let dir = scratch_dir("policy");
    let allow = client(
        &["--approve", "allow", "--prompt", "/tool Fix"],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(allow.stdout, "allowed allow_once\n", "{allow:?}");
    assert!(
        allow
            .stderr
            .contains("tool: Fix (edit) [pending]\nApproved (once)\n")
    );
    let reject = client(
        &["--approve", "reject", "--prompt", "/tool Fix"],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(reject.stdout, "rejected reject_once\n", "{reject:?}");
    assert!(reject.stderr.contains("Rejected (once)\n"));
}

/// R-HOST-6: `--approve` is `reject` off a terminal.
#[test]
fn permission_defaults_to_reject_when_stdin_is_not_a_terminal() {
    let dir = scratch_dir("default");
    let run = client(
        &["--prompt", "/tool Fix"],
        &scripted_agent(&[]),
        &dir,
        "2\n",
    );
    assert_eq!(run.stdout, "rejected reject_once\n", "{run:?}");
}

#[test]
fn permission_asked_shows_the_prompt_and_takes_a_key() {
    let dir = scratch_dir("ask");
    let run = client(
        &["--approve", "ask", "--prompt", "/tool Fix"],
        &scripted_agent(&[]),
        &dir,
        "maybe\n2\n",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "allowed allow_always\n");
    assert_eq!(
        run.stderr,
        "Sending to python3...\n\
         tool: Fix (edit) [pending]\n\
         Permission request from 'python3':\n  Allow Fix (edit)?\n    path: a.txt\n  \
         1. Approve once\n  2. Approve all\n  3. Reject once\n  4. Reject all\n\
         Press 1-4 · Esc to reject\n\
         Press 1-4 · Esc to reject\n\
         Approved (all future calls)\n\
         stop reason: end_turn\n"
    );
}

#[test]
fn permission_asked_esc_and_end_of_input_reject() {
    let dir = scratch_dir("esc");
    let esc = client(
        &["--approve", "ask", "--prompt", "/tool Fix"],
        &scripted_agent(&[]),
        &dir,
        "\u{1b}\n",
    );
    assert_eq!(esc.stdout, "rejected reject_once\n", "{esc:?}");
    assert!(esc.stderr.contains("Rejected (cancelled)\n"));
    let eof = client(
        &["--approve", "ask", "--prompt", "/tool Fix"],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(eof.stdout, "rejected reject_once\n", "{eof:?}");
}

#[test]
fn ask_user_is_asked_or_cancelled() {
    let dir = scratch_dir("askuser");
    let asked = client(
        &["--approve", "ask", "--prompt", "/ask Your name?"],
        &scripted_agent(&[]),
        &dir,
        "Ada\n",
    );
    assert_eq!(asked.stdout, "answer: Ada\n", "{asked:?}");
    assert!(
        asked
            .stderr
            .starts_with("Sending to python3...\nInput request from 'python3':\n  Your name?\n> ")
    );
    let empty = client(
        &["--approve", "ask", "--prompt", "/ask Your name?"],
        &scripted_agent(&[]),
        &dir,
        "\n",
    );
    assert_eq!(empty.stdout, "outcome: cancelled\n", "{empty:?}");
    assert!(empty.stderr.contains("Empty reply — cancelled.\n"));
    let nobody = client(
        &["--prompt", "/ask Your name?"],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(nobody.stdout, "outcome: cancelled\n", "{nobody:?}");
    assert!(
        nobody
            .stderr
            .contains("(no one to ask: \"Your name?\" answered cancelled)\n")
    );
}

#[test]
fn files_inside_the_cwd_are_served() {
    let dir = scratch_dir("fs");
    std::fs::write(dir.join("h.txt"), "hello\n").unwrap();
    let path = dir.join("h.txt");
    let read = client(
        &["--prompt", &format!("/read {}", path.display())],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(read.stdout, "read 6 bytes\n", "{read:?}");
    let out = dir.join("out.txt");
    let write = client(
        &["--prompt", &format!("/write {} new text", out.display())],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(write.stdout, "written\n", "{write:?}");
    assert_eq!(std::fs::read_to_string(out).unwrap(), "new text");
}

#[test]
fn files_outside_the_cwd_get_an_error() {
    let dir = scratch_dir("inside");
    let other = scratch_dir("outside");
    std::fs::write(other.join("secret.txt"), "x").unwrap();
    let read = client(
        &[
            "--cwd",
            dir.to_str().unwrap(),
            "--prompt",
            &format!("/read {}/secret.txt", other.display()),
        ],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(
        read.stdout,
        format!(
            "error -32602 path is outside the session's working directory {}: {}/secret.txt\n",
            dir.display(),
            other.display()
        )
    );
    let escape = format!(
        "{}/../{}/w.txt",
        dir.display(),
        other.file_name().unwrap().to_str().unwrap()
    );
    let write = client(
        &[
            "--cwd",
            dir.to_str().unwrap(),
            "--prompt",
            &format!("/write {escape} x"),
        ],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert!(
        write.stdout.starts_with("error -32602 path is outside"),
        "{write:?}"
    );
    assert!(!other.join("w.txt").exists());
    let relative = client(&["--prompt", "/read h.txt"], &scripted_agent(&[]), &dir, "");
    assert_eq!(
        relative.stdout,
        "error -32602 path must be absolute, got 'h.txt'\n"
    );
}

#[test]
fn authentication_required_is_named_with_the_agents_message() {
    let dir = scratch_dir("auth");
    let run = client(&["--prompt", "hi"], &scripted_agent(&["--auth"]), &dir, "");
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "acp-cli client: handshake failed: the agent requires authentication \
         (session/new answered -32000: Authentication required: run `agent login`)\n"
    );
}

#[test]
fn an_agent_that_dies_during_the_turn_fails_with_its_status_and_stderr() {
    let dir = scratch_dir("die");
    let run = client(
        &["--prompt", "/die"],
        &scripted_agent(&["--stderr", "about to fail"]),
        &dir,
        "",
    );
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stdout, "dying\n");
    assert_eq!(
        run.stderr,
        "Sending to python3...\n\
         acp-cli client: the agent exited (exit code 3) before the turn ended\n\
         last lines the agent wrote to stderr:\n  about to fail\n"
    );
}

#[test]
fn an_agent_that_cannot_start_is_reported() {
    let dir = scratch_dir("nostart");
    let run = client(
        &["--prompt", "hi"],
        &[String::from("/nonexistent/agent")],
        &dir,
        "",
    );
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        "acp-cli client: acp server 'agent': failed to start: No such file or directory (os error 2)\n"
    );
}

#[test]
fn an_agent_that_quits_before_the_handshake_is_reported() {
    let dir = scratch_dir("quit");
    let agent = ["sh", "-c", "echo no acp here >&2; exit 4"].map(String::from);
    let run = client(&["--prompt", "hi"], &agent, &dir, "");
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        "acp-cli client: handshake failed: initialize failed: the agent's output ended before \
         it answered (the agent ended: exit code 4)\n\
         last lines the agent wrote to stderr:\n  no acp here\n"
    );
}

#[test]
fn a_turn_past_the_timeout_is_cancelled_and_fails() {
    let dir = scratch_dir("timeout");
    let run = client(
        &["--timeout", "0.2", "--prompt", "/hang"],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(run.code, Some(1));
    assert!(run.stdout.starts_with("waiting (pid "), "{run:?}");
    assert_eq!(
        run.stderr,
        "Sending to python3...\nacp-cli client: no answer within 0.2 s; sent session/cancel\n"
    );
}

#[test]
fn a_turn_past_the_timeout_sends_session_cancel() {
    let dir = scratch_dir("timeout2");
    let mark = dir.join("mark");
    let agent = scripted_agent(&["--mark", mark.to_str().unwrap()]);
    let run = client(&["--timeout", "0.2", "--prompt", "/hang"], &agent, &dir, "");
    assert_eq!(run.code, Some(1));
    // The agent is stopped (stdin closed) after the cancel, so it has read it by then.
    assert_eq!(std::fs::read_to_string(mark).unwrap(), "cancel\n");
}

#[test]
fn ctrl_c_cancels_the_turn() {
    let dir = scratch_dir("ctrlc");
    let args: Vec<String> = ["client", "--prompt", "/sleep", "--"]
        .iter()
        .map(|s| s.to_string())
        .chain(scripted_agent(&[]))
        .collect();
    let run = Running::start(&args, &dir, None);
    run.wait_for("the turn to run", |out, _| out.contains("waiting"));
    run.interrupt();
    let done = run.finish();
    assert_eq!(done.code, Some(130), "{done:?}");
    assert_eq!(
        done.stderr,
        "Sending to python3...\nCancelling the turn… (Ctrl-C again stops the agent)\nstop reason: cancelled\n"
    );
}

#[test]
fn second_ctrl_c_stops_an_agent_that_ignores_the_cancel() {
    let dir = scratch_dir("ctrlc2");
    let args: Vec<String> = ["client", "--prompt", "/hang", "--"]
        .iter()
        .map(|s| s.to_string())
        .chain(scripted_agent(&[]))
        .collect();
    let run = Running::start(&args, &dir, None);
    run.wait_for("the turn to run", |out, _| out.contains("waiting (pid "));
    let agent = pid_in(&run_stdout(&run), "pid ");
    run.interrupt();
    run.wait_for("the cancel", |_, err| err.contains("Cancelling the turn"));
    run.interrupt();
    let done = run.finish();
    assert_eq!(done.code, Some(130), "{done:?}");
    assert!(
        done.stderr
            .ends_with("acp-cli client: interrupted; stopping the agent\n")
    );
    assert!(is_gone(agent), "the agent {agent} outlived the client");
}

#[test]
fn the_group_of_an_agent_that_exits_at_stdin_eof_goes_with_it() {
    let dir = scratch_dir("group");
    // A grandchild that holds none of the agent's pipes, so nothing waits for it; its pid
    // goes to a file, since the client shows the agent's stderr only on failure.
    let mut agent: Vec<String> = [
        "sh",
        "-c",
        "sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >grandchild.pid; exec \"$@\"",
        "sh",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    agent.extend(scripted_agent(&[]));
    let run = client(&["--prompt", "/echo hi"], &agent, &dir, "");
    assert_eq!(run.code, Some(0), "{run:?}");
    let pid_file = std::fs::read_to_string(dir.join("grandchild.pid")).unwrap();
    let grandchild: u32 = pid_file.trim().parse().unwrap();
    wait_gone(grandchild, "the grandchild of the client's agent");
}

fn run_stdout(run: &Running) -> String {
    let out = std::cell::RefCell::new(String::new());
    run.wait_for("stdout", |o, _| {
        *out.borrow_mut() = o.to_owned();
        true
    });
    out.into_inner()
}

#[test]
fn help_explains_usage_with_an_example() {
    let out = std::process::Command::new(acp_cli())
        .args(["client", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(
        text.contains("Usage: acp-cli client [OPTIONS] -- <AGENT>..."),
        "{text}"
    );
    assert!(text.contains("acp-cli client --prompt 'list the files' -- my-agent --stdio"));
    assert!(text.contains("--approve <APPROVE>"));
}

#[test]
fn bad_cwd_and_bad_timeout_are_refused() {
    let dir = scratch_dir("badargs");
    let missing = dir.join("missing");
    let run = client(
        &["--cwd", missing.to_str().unwrap(), "--prompt", "hi"],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        format!(
            "acp-cli client: --cwd {} is not a directory\n",
            missing.display()
        )
    );
    let run = client(
        &["--timeout", "0", "--prompt", "hi"],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        "acp-cli client: --timeout must be a positive number of seconds, got 0\n"
    );
}

#[test]
fn agent_text_is_sanitized_on_both_streams() {
    let dir = scratch_dir("sanitize");
    let run = client(
        &["--prompt", "/think \u{1b}[31mred\u{9b}"],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(run.stdout, "[31mred\n", "{run:?}");
    assert!(!run.stderr.contains('\u{1b}'));
}

/// R-HOST-6: `--approve` is `ask` on a terminal.
#[test]
fn at_a_terminal_permission_is_asked_and_answered_with_one_key() {
    let dir = scratch_dir("pty");
    let mut args: Vec<String> = ["client", "--prompt", "/tool Fix", "--"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(scripted_agent(&[]));
    let steps = serde_json::json!([
        ["expect", "Press 1-4 · Esc to reject\n"],
        ["send", "2"],
        ["expect", "Approved (all future calls)\n"],
        ["expect", "allowed allow_always\n"],
        ["wait_exit"]
    ]);
    let screen = pty(&dir, &args, steps);
    assert!(
        screen.ends_with("stop reason: end_turn\n\nEXIT 0\n"),
        "{screen}"
    );
}

#[test]
fn a_symlink_out_of_the_cwd_is_refused_for_reading_and_writing() {
    let dir = scratch_dir("symlink");
    let other = scratch_dir("symlink-target");
    std::fs::write(other.join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(other.join("secret.txt"), dir.join("link.txt")).unwrap();
    let link = dir.join("link.txt");
    let read = client(
        &["--prompt", &format!("/read {}", link.display())],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert_eq!(
        read.stdout,
        format!(
            "error -32602 path is outside the session's working directory {}: {}\n",
            dir.display(),
            link.display()
        )
    );
    let write = client(
        &[
            "--prompt",
            &format!("/write {} overwritten", link.display()),
        ],
        &scripted_agent(&[]),
        &dir,
        "",
    );
    assert!(
        write.stdout.starts_with("error -32602 path is outside"),
        "{write:?}"
    );
    assert_eq!(
        std::fs::read_to_string(other.join("secret.txt")).unwrap(),
        "secret"
    );
}

/// Scratch directories stay out of the system's temp dir: test runs leave nothing in /tmp.
#[test]
fn scratch_directories_live_under_cargos_test_tmpdir() {
    let dir = scratch_dir("where");
    let tmpdir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .canonicalize()
        .unwrap();
    // Under cargo's test tmpdir, which lives in the target directory (itself under /tmp when
    // the checkout is: that case is not a leak, so the test does not refuse it).
    assert!(dir.starts_with(tmpdir), "{dir:?}");
}
