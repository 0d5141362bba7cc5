//! Sessions survive the agent: saved after every finished turn, loaded with `session/load`
//! by a later process, which replays them before its answer. A `kill -9` mid-turn loses only
//! that turn, SIGTERM nothing; Agentao's files load too; sessions never overwrite each other.

mod persist_support;

use persist_support::*;
use serde_json::{Value, json};

/// Plan, thought, a tool call the user rejects, then a second plain turn.
fn two_finished_turns(agent: &mut Agent, session: &str) {
    let first = "/echo one\n/think hmm\n/plan a | b\n/tool execute Build it";
    agent.send(&Agent::prompt_line(3, session, first));
    let mut lines = Vec::new();
    let permission = loop {
        let line = agent.recv();
        if line.contains("session/request_permission") {
            break line;
        }
        lines.push(line);
    };
    let asked = agent::request_id(&permission);
    agent.send(&agent::choose(&asked, "reject_once"));
    let rest = agent.until_response(3);
    assert_eq!(rest.last().unwrap(), &agent::stop(3, "end_turn"));
    let done = agent.prompt(4, session, "/echo two");
    assert_eq!(done.last().unwrap(), &agent::stop(4, "end_turn"));
}

/// The replay of [`two_finished_turns`], as the client must see it.
fn replay_of_two_turns() -> Vec<Value> {
    let text = |t: &str| json!({"type": "text", "text": t});
    vec![
        json!({"sessionUpdate": "user_message_chunk",
               "content": text("/echo one\n/think hmm\n/plan a | b\n/tool execute Build it")}),
        json!({"sessionUpdate": "agent_message_chunk", "content": text("one")}),
        json!({"sessionUpdate": "agent_thought_chunk", "content": text("hmm")}),
        json!({"sessionUpdate": "plan", "entries": [
            {"content": "a", "priority": "medium", "status": "pending"},
            {"content": "b", "priority": "medium", "status": "pending"}]}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "tool-1", "title": "Build it",
               "kind": "execute", "status": "pending"}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "tool-1", "status": "failed",
               "content": [{"type": "content",
                            "content": text("Error: rejected by the user (reject_once)")}]}),
        json!({"sessionUpdate": "user_message_chunk", "content": text("/echo two")}),
        json!({"sessionUpdate": "agent_message_chunk", "content": text("two")}),
    ]
}

#[test]
fn kill_9_mid_turn_loses_only_that_turn_and_load_replays_the_rest_before_its_answer() {
    let cwd = scratch("persist-kill9");
    let mut first = agent_in("persist-kill9-a", &cwd, &[]);
    let session = first.handshake();
    two_finished_turns(&mut first, &session);
    // A third turn that never finishes: its first chunk shows it is running.
    first.send(&Agent::prompt_line(
        5,
        &session,
        "/echo three\n/sleep 600000",
    ));
    assert_eq!(first.recv(), agent::message(&session, "three"));
    first.signal(rustix::process::Signal::KILL);
    let (_, status, _) = first.wait_exit();
    assert!(!status.success(), "killed");
    assert_eq!(session_files(&cwd).len(), 1, "one file per session");

    let mut second = agent_in("persist-kill9-b", &cwd, &[]);
    initialize(&mut second);
    let lines = second.call(&load_line(2, &session, &cwd), 2);
    let (answer, replayed) = lines.split_last().unwrap();
    assert_eq!(updates(replayed, &session), replay_of_two_turns());
    let result = result_of(answer);
    assert_eq!(result["modes"]["currentModeId"], "workspace-write");
    assert_eq!(result["configOptions"][0]["currentValue"], "demo/demo");

    // The loaded session goes on: it knows its two turns, and numbers new tools after them.
    assert_eq!(
        history_answer(&mut second, 3, &session),
        "this session has 2 completed turns"
    );
    let lines = second.prompt(4, &session, "/read missing.txt");
    assert!(
        lines.iter().any(|l| l.contains(r#""toolCallId":"tool-2""#)),
        "{lines:?}"
    );
    let (_, status, _) = second.finish();
    assert!(status.success());

    // The turns after the load were saved too.
    let mut third = agent_in("persist-kill9-c", &cwd, &[]);
    initialize(&mut third);
    third.call(&load_line(2, &session, &cwd), 2);
    assert_eq!(
        history_answer(&mut third, 3, &session),
        "this session has 4 completed turns"
    );
}

#[test]
fn sigterm_loses_nothing_the_client_saw() {
    let cwd = scratch("persist-sigterm");
    let mut first = agent_in("persist-sigterm-a", &cwd, &[]);
    let session = first.handshake();
    first.send(&Agent::prompt_line(
        3,
        &session,
        "/echo before\n/sleep 600000",
    ));
    assert_eq!(first.recv(), agent::title(&session, "/echo before"));
    assert_eq!(first.recv(), agent::message(&session, "before"));
    first.signal(rustix::process::Signal::TERM);
    let (rest, status, _) = first.wait_exit();
    assert!(status.success());
    assert_eq!(rest, vec![agent::stop(3, "cancelled")]);

    let mut second = agent_in("persist-sigterm-b", &cwd, &[]);
    initialize(&mut second);
    let lines = second.call(&load_line(2, &session, &cwd), 2);
    let replayed = updates(&lines[..lines.len() - 1], &session);
    assert_eq!(
        replayed,
        vec![
            json!({"sessionUpdate": "user_message_chunk",
                   "content": {"type": "text", "text": "/echo before\n/sleep 600000"}}),
            json!({"sessionUpdate": "agent_message_chunk",
                   "content": {"type": "text", "text": "before"}}),
        ]
    );
    assert_eq!(
        history_answer(&mut second, 3, &session),
        "this session has 1 completed turn"
    );
}

#[test]
fn a_session_agentao_wrote_loads_replays_and_continues() {
    let cwd = scratch("persist-agentao");
    let dir = cwd.join(".agentao/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agentao-sessions");
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    let expected: Vec<Value> = {
        let store = acp_cli::store::SessionStore::new(&cwd, Default::default());
        let loaded = store.load("sess_3f9a1c2e4b5d").unwrap();
        acp_cli::store::replay(&loaded.history)
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect()
    };

    let mut agent = agent_in("persist-agentao-a", &cwd, &[]);
    initialize(&mut agent);
    let lines = agent.call(&load_line(2, "sess_3f9a1c2e4b5d", &cwd), 2);
    let (answer, replayed) = lines.split_last().unwrap();
    let replayed = updates(replayed, "sess_3f9a1c2e4b5d");
    assert_eq!(replayed, expected);
    // Spot checks against the file itself: reminders stripped, real statuses.
    assert_eq!(
        replayed[0],
        json!({"sessionUpdate": "user_message_chunk",
               "content": {"type": "text",
                           "text": "List the files and make a plan for the refactor"}})
    );
    assert!(
        replayed.contains(&json!({"sessionUpdate": "tool_call_update",
        "toolCallId": "call_abc123", "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "README.md\nsrc"}}]}))
    );
    assert!(
        replayed
            .iter()
            .any(|u| u["sessionUpdate"] == "plan"
                && u["entries"][1]["content"] == "Split the module")
    );
    assert_eq!(
        result_of(answer)["configOptions"][0]["currentValue"],
        "demo/gpt-4o",
        "the stored model"
    );
    // Right after the answer: the commands the loaded session offers.
    agent.expect_commands("sess_3f9a1c2e4b5d");
    // The session id is matched whole: `sess_3f9a` is another (older) session.
    let lines = agent.call(&load_line(3, "sess_3f9a1c", &cwd), 3);
    assert_eq!(
        error_of(&lines[0]),
        (
            -32600,
            "session/load: Session 'sess_3f9a1c' not found".into()
        )
    );
    assert_eq!(
        history_answer(&mut agent, 4, "sess_3f9a1c2e4b5d"),
        "this session has 2 completed turns"
    );
    let (_, status, _) = agent.finish();
    assert!(status.success());
    // Saving it again left one file for it (Agentao's two copies replaced).
    let holding: Vec<_> = session_files(&cwd)
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains("\"session_id\": \"sess_3f9a1c2e4b5d\"")
        })
        .collect();
    assert_eq!(holding.len(), 1, "{holding:?}");
}

#[test]
fn load_errors_carry_the_store_texts() {
    let cwd = scratch("persist-load-errors");
    let mut agent = agent_in("persist-load-errors-a", &cwd, &[]);
    initialize(&mut agent);
    let lines = agent.call(&load_line(2, "sess_x", &cwd), 2);
    assert_eq!(
        error_of(&lines[0]),
        (-32600, "session/load: No sessions directory found".into())
    );
    std::fs::create_dir_all(cwd.join(".agentao/sessions")).unwrap();
    let lines = agent.call(&load_line(3, "sess_x", &cwd), 3);
    assert_eq!(
        error_of(&lines[0]),
        (-32600, "session/load: No saved sessions found".into())
    );
    let session = agent.new_session(4);
    agent.prompt(5, &session, "hello");
    let lines = agent.call(&load_line(6, "sess_x", &cwd), 6);
    assert_eq!(
        error_of(&lines[0]),
        (-32600, "session/load: Session 'sess_x' not found".into())
    );
    let missing = cwd.join("gone");
    let lines = agent.call(&load_line(7, "sess_x", &missing), 7);
    assert_eq!(
        error_of(&lines[0]),
        (
            -32602,
            format!(
                "Invalid params: session/load.cwd does not exist: '{}'",
                s(&missing)
            )
        )
    );
    // R-SESSION-11: a session without a turn was saved when it was created: it resumes.
    let fresh = agent.new_session(8);
    agent.call(&by_id_line(9, "session/close", &fresh), 9);
    let lines = agent.call(&resume_line(10, &fresh, &cwd), 10);
    assert_eq!(lines.len(), 1, "no replay: {lines:?}");
    result_of(&lines[0]);
}

#[test]
fn concurrent_sessions_in_one_cwd_never_overwrite_each_other() {
    let cwd = scratch("persist-concurrent");
    let mut one = agent_in("persist-concurrent-a", &cwd, &[]);
    let mut two = agent_in("persist-concurrent-b", &cwd, &[]);
    let a = one.handshake();
    let b = one.new_session(3);
    let c = two.handshake();
    // Interleaved turns: two sessions of one process, and one of another process.
    for round in 0..3u64 {
        one.prompt(10 + round * 2, &a, &format!("/echo a{round}"));
        two.prompt(10 + round, &c, &format!("/echo c{round}"));
        one.prompt(11 + round * 2, &b, &format!("/echo b{round}"));
    }
    assert_eq!(session_files(&cwd).len(), 3);
    drop(two);

    let mut check = agent_in("persist-concurrent-c", &cwd, &[]);
    initialize(&mut check);
    for (id, session, tag) in [(2, &a, "a"), (3, &b, "b"), (4, &c, "c")] {
        let lines = check.call(&load_line(id, session, &cwd), id);
        let said = messages(&lines);
        assert_eq!(
            said,
            vec![format!("{tag}0"), format!("{tag}1"), format!("{tag}2")],
            "{session}"
        );
    }
}
