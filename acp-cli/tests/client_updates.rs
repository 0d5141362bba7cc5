//! Every session update kind of ACP v1 (schema crate 1.20.0) shown readably, by
//! `acp-cli client` and by `acp-cli repl`: the scripted agent (tests/fixtures/
//! scripted_agent.py, `/raw`) sends one of each, then answers; the person sees each one's
//! content, an unknown kind as one line naming its tag, and the run ends well.

mod client_support;

use client_support::*;

/// One update of every kind, plus a kind from the future, as `/raw` takes them.
fn every_kind() -> String {
    serde_json::json!([
        {"sessionUpdate": "plan", "entries": [
            {"content": "old style step", "priority": "high", "status": "pending"}]},
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1",
            "entries": [{"content": "first step", "priority": "high", "status": "pending"},
                        {"content": "second step", "priority": "low", "status": "pending"}]}},
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1",
            "entries": [{"content": "first step", "priority": "high", "status": "completed"}]}},
        {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p2",
            "content": "# Markdown plan\n- write it"}},
        {"sessionUpdate": "plan_removed", "planId": "p1"},
        {"sessionUpdate": "notice", "severity": "info", "title": "Index ready"},
        {"sessionUpdate": "notice", "severity": "warning", "title": "Disk almost full",
            "description": "95% used"},
        {"sessionUpdate": "notice", "severity": "error", "title": "Tool crashed"},
        {"sessionUpdate": "session_info_update", "title": "Fixing the parser"},
        {"sessionUpdate": "usage_update", "used": 4321, "size": 1000000,
            "cost": {"amount": 0.5, "currency": "EUR"}},
        {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1",
            "content": {"type": "text", "text": "kept the gist"}},
        {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"},
        {"sessionUpdate": "subagent_update", "sessionId": "sub_1", "title": "Scout",
            "state": {"state": "running"}},
        {"sessionUpdate": "session_message", "messageId": "m1",
            "senderSessionId": "sub_1", "recipientSessionId": "sess_1",
            "content": [{"type": "text", "text": "the map is ready"}]},
        {"sessionUpdate": "session_message_chunk", "messageId": "m1",
            "content": {"type": "text", "text": "and the route"}},
        {"sessionUpdate": "config_option_update", "configOptions": [
            {"id": "model", "name": "Model", "type": "select", "currentValue": "big",
             "options": [{"value": "big", "name": "Big model"}]},
            {"id": "think", "name": "Thinking", "type": "boolean", "currentValue": false}]},
        {"sessionUpdate": "current_mode_update", "currentModeId": "architect"},
        {"sessionUpdate": "available_commands_update", "availableCommands": [
            {"name": "review", "description": "Review the diff"}]},
        {"sessionUpdate": "hologram_update", "beam": 1}
    ])
    .to_string()
}

/// What each kind must show, in order.
const SHOWN: &[&str] = &[
    "plan:\n  [pending] old style step",
    "plan p1:\n  [pending] first step\n  [pending] second step",
    "plan p1 (replaced):\n  [completed] first step",
    "plan p2:\n  # Markdown plan\n  - write it",
    "plan p1 removed",
    "info: Index ready",
    "warning: Disk almost full\n  95% used",
    "error: Tool crashed",
    "title: Fixing the parser",
    "usage: 4321/1000000 tokens, cost 0.5 EUR",
    "compaction c1: in progress",
    "compaction c1 summary: kept the gist",
    "compaction c1: completed",
    "subagent Scout [running]",
    "[Scout] the map is ready",
    "[Scout] and the route",
    "config: Model = Big model, Thinking = off",
    "mode: architect",
    "commands: /review",
    "(update: hologram_update)",
];

/// `text` holds every line of [`SHOWN`] (those after `skip`), in order, each after `prefix`.
fn shows_all_in_order(text: &str, prefix: &str, skip: &[&str]) {
    let mut from = 0;
    for want in SHOWN.iter().filter(|w| !skip.contains(w)) {
        let want = format!("{prefix}{want}\n");
        match text[from..].find(&want) {
            Some(at) => from += at + want.len(),
            None => panic!("missing {want:?} (in order) in:\n{text}"),
        }
    }
}

/// R-TURN-6: every stable kind is shown, an unknown one as one line with its tag.
#[test]
fn client_shows_every_update_kind() {
    let dir = scratch_dir("kinds");
    let prompt = format!("/raw {}", every_kind());
    let run = client(&["--prompt", &prompt], &scripted_agent(&[]), &dir, "");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "sent 20\n");
    shows_all_in_order(&run.stderr, "", &[]);
    assert!(run.stderr.ends_with("stop reason: end_turn\n"), "{run:?}");
    assert!(
        !run.stderr.contains('\u{1b}'),
        "piped output has no escape sequences: {:?}",
        run.stderr
    );
}

/// R-TURN-6: as `client`, in the REPL.
#[test]
fn repl_shows_every_update_kind() {
    let dir = scratch_dir("replkinds");
    let mut args = vec![String::from("repl"), String::from("--")];
    args.extend(scripted_agent(&[]));
    let input = format!("!raw {}\n/quit\n", every_kind());
    let done = Running::start(&args, &dir, Some(&input)).finish();
    assert_eq!(done.code, Some(0), "{done:?}");
    // The REPL keeps the main agent's commands for itself (for /help and Tab).
    shows_all_in_order(&done.stdout, "  · ", &["commands: /review"]);
    assert!(
        done.stdout
            .contains("sent 20\npython3: turn finished (end_turn)\n"),
        "{}",
        done.stdout
    );
    assert!(!done.stdout.contains('\u{1b}'), "{:?}", done.stdout);
}
