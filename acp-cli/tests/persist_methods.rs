//! `session/list`, `session/resume`, `session/close` and `session/delete` over pipes, as the
//! official schema shapes them, with every error they answer.

mod persist_support;

use acp_cli::store::{SessionHistory, SessionStore, StoreConfig, Timestamp};
use acp_core::schema::ContentBlock;
use persist_support::*;
use serde_json::json;

#[test]
fn initialize_advertises_load_and_every_session_method() {
    let cwd = scratch("persist-caps");
    let mut agent = agent_in("persist-caps-a", &cwd, &[]);
    let answer = initialize(&mut agent);
    let caps = &answer["result"]["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(
        caps["sessionCapabilities"],
        json!({"list": {}, "resume": {}, "close": {}, "delete": {}, "additionalDirectories": {}, "systemPrompt": {}})
    );
}

/// Writes `count` finished sessions into `cwd` with the store itself, one second apart
/// (`sess_00` oldest).
fn stored_sessions(cwd: &std::path::Path, count: usize) -> Vec<String> {
    let store = SessionStore::new(
        cwd,
        StoreConfig {
            max_sessions: count + 1,
        },
    );
    (0..count)
        .map(|n| {
            let id = format!("sess_{n:02}");
            let mut history = SessionHistory::new(id.clone(), "demo");
            history.record_user_prompt(&[ContentBlock::text(format!("prompt {n}"))]);
            history.end_turn(acp_core::schema::StopReason::EndTurn);
            let at = Timestamp::from_unix_seconds(1_700_000_000 + n as i64);
            store.save(&mut history, at).unwrap();
            id
        })
        .collect()
}

#[test]
fn list_pages_with_a_cursor_newest_first_and_filters_by_cwd() {
    let cwd = scratch("persist-list");
    let other = scratch("persist-list-other");
    let ids = stored_sessions(&cwd, 55);
    stored_sessions(&other, 1);
    let mut agent = agent_in("persist-list-a", &cwd, &[]);
    initialize(&mut agent);
    // Without a filter: the cwds this agent has served or listed (none yet).
    let lines = agent.call(&list_line(9, "{}"), 9);
    assert_eq!(result_of(&lines[0]), json!({"sessions": []}));

    let cwd_filter = format!(r#"{{"cwd":"{}"}}"#, s(&cwd));
    let lines = agent.call(&list_line(2, &cwd_filter), 2);
    let first = result_of(&lines[0]);
    let page: Vec<_> = first["sessions"].as_array().unwrap().clone();
    assert_eq!(page.len(), 50);
    assert_eq!(page[0]["sessionId"], "sess_54", "newest first");
    assert_eq!(page[0]["cwd"], s(&cwd));
    assert_eq!(page[0]["title"], "prompt 54");
    assert!(
        page[0]["updatedAt"]
            .as_str()
            .unwrap()
            .starts_with("2023-11-14T22:14:14")
    );
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();

    let params = format!(
        r#"{{"cwd":"{}","cursor":{}}}"#,
        s(&cwd),
        json_string(&cursor)
    );
    let lines = agent.call(&list_line(3, &params), 3);
    let second = result_of(&lines[0]);
    let rest: Vec<String> = second["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["sessionId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        rest,
        ["sess_04", "sess_03", "sess_02", "sess_01", "sess_00"]
    );
    assert!(
        second.get("nextCursor").is_none_or(|c| c.is_null()),
        "{second}"
    );
    assert_eq!(ids.len(), 55);

    // Another cwd shows only its own sessions.
    let lines = agent.call(&list_line(4, &format!(r#"{{"cwd":"{}"}}"#, s(&other))), 4);
    let listed = result_of(&lines[0]);
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(listed["sessions"][0]["cwd"], s(&other));

    let lines = agent.call(&list_line(6, r#"{"cursor":"nope"}"#), 6);
    assert_eq!(
        error_of(&lines[0]),
        (-32602, "session/list: invalid cursor 'nope'".into())
    );
    let lines = agent.call(&list_line(7, r#"{"cwd":"relative/dir"}"#), 7);
    assert_eq!(
        error_of(&lines[0]),
        (
            -32602,
            "session/list: cwd must be an absolute path, got 'relative/dir'".into()
        )
    );
}

/// R-SESSION-11: a session is listed from its creation on, untitled until its first turn.
#[test]
fn list_without_a_filter_covers_the_served_cwds() {
    let cwd = scratch("persist-list-served");
    let mut agent = agent_in("persist-list-served-a", &cwd, &[]);
    let session = agent.handshake();
    let lines = agent.call(&list_line(3, "{}"), 3);
    let listed = result_of(&lines[0]);
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["sessions"][0]["sessionId"], session.as_str());
    assert!(listed["sessions"][0].get("title").is_none(), "{listed}");
    agent.prompt(4, &session, "first words");
    let lines = agent.call(&list_line(5, "{}"), 5);
    let listed = result_of(&lines[0]);
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(listed["sessions"][0]["sessionId"], session.as_str());
    assert_eq!(listed["sessions"][0]["title"], "first words");
}

#[test]
fn close_ends_a_running_turn_saves_it_and_the_session_can_be_loaded_again() {
    let cwd = scratch("persist-close");
    let mut agent = agent_in("persist-close-a", &cwd, &[]);
    let session = agent.handshake();
    agent.prompt(3, &session, "/echo kept");
    agent.send(&Agent::prompt_line(4, &session, "/echo cut\n/sleep 600000"));
    assert_eq!(agent.recv(), agent::message(&session, "cut"));
    let lines = agent.call(&by_id_line(5, "session/close", &session), 5);
    assert_eq!(
        lines,
        vec![
            agent::stop(4, "cancelled"),
            r#"{"jsonrpc":"2.0","id":5,"result":{}}"#.to_owned()
        ]
    );
    let lines = agent.prompt(6, &session, "/echo after");
    assert_eq!(
        error_of(&lines[0]),
        (-32600, format!("session {session} is not active"))
    );
    let lines = agent.call(&by_id_line(7, "session/close", "sess_unknown"), 7);
    assert_eq!(
        error_of(&lines[0]),
        (-32600, "unknown sessionId: sess_unknown".into())
    );

    // Closed, it loads again in the same process with both turns.
    let lines = agent.call(&load_line(8, &session, &cwd), 8);
    assert_eq!(messages(&lines), ["kept", "cut"]);
    assert_eq!(
        history_answer(&mut agent, 9, &session),
        "this session has 2 completed turns"
    );
}

/// R-SESSION-7: an open session is not deleted; deleting one stored nowhere (deleted
/// already, or never existed) succeeds.
#[test]
fn delete_removes_a_closed_session_refuses_an_open_one_and_is_idempotent() {
    let cwd = scratch("persist-delete");
    let mut agent = agent_in("persist-delete-a", &cwd, &[]);
    let session = agent.handshake();
    agent.prompt(3, &session, "/echo x");
    assert_eq!(session_files(&cwd).len(), 1);

    let lines = agent.call(&by_id_line(4, "session/delete", &session), 4);
    assert_eq!(
        error_of(&lines[0]),
        (
            -32600,
            format!("session/delete: session '{session}' is open; close it first")
        )
    );
    agent.call(&by_id_line(5, "session/close", &session), 5);
    let lines = agent.call(&by_id_line(6, "session/delete", &session), 6);
    assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":6,"result":{}}"#]);
    assert!(session_files(&cwd).is_empty());

    let lines = agent.call(&by_id_line(7, "session/delete", &session), 7);
    assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":7,"result":{}}"#], "again");
    let lines = agent.call(&by_id_line(10, "session/delete", "sess_never_was"), 10);
    assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":10,"result":{}}"#], "never");
    let lines = agent.call(&load_line(8, &session, &cwd), 8);
    assert_eq!(
        error_of(&lines[0]),
        (-32600, "session/load: No saved sessions found".into())
    );
}

/// R-STORE-5: a turn whose answer was read survives the agent being killed outright; the
/// resumed session goes on from it.
#[test]
fn resume_answers_without_a_replay_and_the_session_goes_on() {
    let cwd = scratch("persist-resume-method");
    let mut first = agent_in("persist-resume-method-a", &cwd, &[]);
    let session = first.handshake();
    let set_mode = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{{"sessionId":"{session}","modeId":"full-access"}}}}"#
    );
    first.call(&set_mode, 3);
    first.prompt(4, &session, "/echo one");
    // Killed outright right after the answer: the turn was saved before it (R-STORE-5).
    drop(first);

    let mut second = agent_in("persist-resume-method-b", &cwd, &[]);
    initialize(&mut second);
    let lines = second.call(&resume_line(2, &session, &cwd), 2);
    assert_eq!(lines.len(), 1, "no replay: {lines:?}");
    let result = result_of(&lines[0]);
    assert_eq!(
        result["modes"]["currentModeId"], "full-access",
        "the stored mode"
    );
    assert_eq!(
        history_answer(&mut second, 3, &session),
        "this session has 1 completed turn"
    );
}

#[test]
fn delete_finds_a_session_in_a_cwd_the_client_listed() {
    let cwd = scratch("persist-delete-listed");
    let ids = stored_sessions(&cwd, 2);
    let mut agent = agent_in("persist-delete-listed-a", &cwd, &[]);
    initialize(&mut agent);
    // Nothing served yet: the agent does not know where to look, so nothing is deleted (and
    // the answer is still `{}`: R-SESSION-7).
    let lines = agent.call(&by_id_line(2, "session/delete", &ids[0]), 2);
    assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":2,"result":{}}"#]);
    assert_eq!(session_files(&cwd).len(), 2, "nothing deleted");
    agent.call(&list_line(3, &format!(r#"{{"cwd":"{}"}}"#, s(&cwd))), 3);
    let lines = agent.call(&by_id_line(4, "session/delete", &ids[0]), 4);
    assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":4,"result":{}}"#]);
    assert_eq!(
        session_files(&cwd).len(),
        1,
        "only that session's file went"
    );
}

/// R-SESSION-11: a session is saved when it is created (its header only): before any turn it
/// is listed, `session/close` keeps it, a later agent loads it (nothing to replay) and
/// `session/delete` removes its file.
#[test]
fn a_session_without_a_turn_is_saved_listed_loaded_and_deleted() {
    let cwd = scratch("persist-fresh");
    let mut agent = agent_in("persist-fresh-a", &cwd, &[]);
    let session = agent.handshake();
    assert_eq!(session_files(&cwd).len(), 1, "saved on creation");
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&session_files(&cwd)[0]).unwrap()).unwrap();
    assert_eq!(saved["session_id"], session.as_str());
    assert_eq!(saved["messages"], json!([]));
    let lines = agent.call(&by_id_line(3, "session/close", &session), 3);
    assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":3,"result":{}}"#]);
    drop(agent);

    let mut second = agent_in("persist-fresh-b", &cwd, &[]);
    initialize(&mut second);
    let lines = second.call(&list_line(2, &format!(r#"{{"cwd":"{}"}}"#, s(&cwd))), 2);
    let listed = result_of(&lines[0]);
    assert_eq!(
        listed["sessions"][0]["sessionId"],
        session.as_str(),
        "{listed}"
    );
    let lines = second.call(&load_line(3, &session, &cwd), 3);
    assert_eq!(lines.len(), 1, "nothing to replay: {lines:?}");
    result_of(&lines[0]);
    assert_eq!(
        history_answer(&mut second, 4, &session),
        "this session has 0 completed turns"
    );
    second.call(&by_id_line(5, "session/close", &session), 5);
    let lines = second.call(&by_id_line(6, "session/delete", &session), 6);
    assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":6,"result":{}}"#]);
    assert!(session_files(&cwd).is_empty());
}
