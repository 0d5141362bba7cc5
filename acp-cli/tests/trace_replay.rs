//! `acp-cli trace replay` (R-TRACE-3): a trace of our agent recorded through the proxy replays
//! against the same agent with no difference (as events and as a `>`/`<` capture); an edited
//! trace, an agent that ends, an agent that cannot start and a bad `--wait` each give their
//! exact report.

mod client_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use acp_conform::trace as format;
use client_support::{acp_cli, scratch_dir};
use serde_json::Value;

fn agent() -> Vec<String> {
    ["--acp", "--stdio", "--log-level", "error"]
        .into_iter()
        .map(String::from)
        .fold(vec![acp_cli().to_owned()], |mut argv, arg| {
            argv.push(arg);
            argv
        })
}

/// `acp-cli client` asking the demo agent for an echo and a file write (a permission request
/// and an `fs/write_text_file` request from the agent, both answered), recorded by the proxy.
fn record(dir: &Path) -> PathBuf {
    let trace = dir.join("t.jsons");
    let out = Command::new(acp_cli())
        .args([
            "client",
            "--approve",
            "allow",
            "--prompt",
            "/echo hello\n/write note.txt hi",
        ])
        .args(["--", acp_cli(), "trace", "--out"])
        .arg(&trace)
        .arg("--")
        .args(agent())
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("acp-cli client starts");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    for method in ["session/request_permission", "fs/write_text_file"] {
        assert!(text.contains(method), "the recording has {method}: {text}");
    }
    trace
}

fn replay(dir: &Path, trace: &Path, options: &[&str], agent: &[String]) -> Output {
    Command::new(acp_cli())
        .args(["trace", "replay"])
        .arg(trace)
        .args(options)
        .arg("--")
        .args(agent)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("acp-cli trace replay starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_recorded_trace_replays_against_the_same_agent_without_a_difference() {
    let dir = scratch_dir("replay-same");
    let trace = record(&dir);
    let out = replay(&dir, &trace, &[], &agent());
    let agent_messages = format::read(&std::fs::read(&trace).unwrap())
        .entries
        .iter()
        .filter(|e| e.from == format::Side::Agent)
        .count();
    assert_eq!(text(&out.stdout), "", "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!("acp-cli trace replay: no differences in {agent_messages} agent messages\n")
    );
    assert_eq!(out.status.code(), Some(0));

    // The same messages as a plain `>`/`<` capture.
    let mut capture = Vec::new();
    for entry in format::read(&std::fs::read(&trace).unwrap()).entries {
        capture.extend_from_slice(if entry.from == format::Side::Client {
            b"> "
        } else {
            b"< "
        });
        capture.extend_from_slice(&entry.text);
        capture.push(b'\n');
    }
    let capture_file = dir.join("capture.ndjson");
    std::fs::write(&capture_file, capture).unwrap();
    let out = replay(&dir, &capture_file, &[], &agent());
    assert_eq!(text(&out.stdout), "", "{}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn an_edited_answer_is_reported_with_its_line_path_and_both_values() {
    let dir = scratch_dir("replay-edited");
    let trace = record(&dir);
    let recorded = std::fs::read_to_string(&trace).unwrap();
    // The first message chunk the agent sent, its text changed.
    let mut lines: Vec<String> = recorded.lines().map(str::to_owned).collect();
    let (index, original) = lines
        .iter()
        .enumerate()
        .find_map(|(i, line)| {
            let event: Value = serde_json::from_str(line).ok()?;
            let update = event.pointer("/params/update")?;
            (update["sessionUpdate"] == "agent_message_chunk")
                .then(|| (i, update["content"]["text"].clone()))
        })
        .expect("the agent sent a message chunk");
    let mut event: Value = serde_json::from_str(&lines[index]).unwrap();
    event["params"]["update"]["content"]["text"] = "edited".into();
    lines[index] = event.to_string();
    let edited = dir.join("edited.jsons");
    std::fs::write(&edited, lines.join("\n") + "\n").unwrap();

    let out = replay(&dir, &edited, &[], &agent());
    assert_eq!(
        text(&out.stdout),
        format!(
            "{}: $.params.update.content.text: recorded \"edited\", now {original}\n",
            index + 1
        ),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).starts_with("acp-cli trace replay: 1 difference in "),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn an_agent_that_ends_at_once_is_reported_at_the_first_answer_it_owes() {
    let dir = scratch_dir("replay-ends");
    let trace = record(&dir);
    let first_answer = format::read(&std::fs::read(&trace).unwrap())
        .entries
        .into_iter()
        .find(|e| e.from == format::Side::Agent)
        .unwrap();
    let silent = ["sh".to_owned(), "-c".to_owned(), "exit 0".to_owned()];
    let out = replay(&dir, &trace, &[], &silent);
    let recorded: Value = serde_json::from_slice(&first_answer.text).unwrap();
    assert_eq!(
        text(&out.stdout),
        format!(
            "{}: $: recorded {recorded}, now nothing (the agent ended)\n",
            first_answer.line
        )
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn an_agent_that_cannot_start_or_a_bad_wait_exit_2() {
    let dir = scratch_dir("replay-errors");
    let trace = dir.join("t.jsons");
    std::fs::write(&trace, "").unwrap();
    let missing = ["/nonexistent/agent".to_owned()];
    let out = replay(&dir, &trace, &[], &missing);
    assert_eq!(
        text(&out.stderr),
        "acp-cli trace replay: cannot start /nonexistent/agent: No such file or directory (os error 2)\n"
    );
    assert_eq!(out.status.code(), Some(2));

    let out = replay(&dir, &trace, &["--wait=-1"], &agent());
    assert_eq!(
        text(&out.stderr),
        "acp-cli trace replay: --wait must be a number of seconds, 0 or more\n"
    );
    assert_eq!(out.status.code(), Some(2));

    let out = replay(&dir, &dir.join("absent.jsons"), &[], &agent());
    assert_eq!(
        text(&out.stderr),
        format!(
            "acp-cli trace replay: cannot read {}: No such file or directory (os error 2)\n",
            dir.join("absent.jsons").display()
        )
    );
    assert_eq!(out.status.code(), Some(2));
}
