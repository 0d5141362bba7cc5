//! `--resume [ID]`: the first `session/new` of the process answers with a stored session of
//! its cwd (the latest, or the one with that id), then replays its history right behind the
//! answer; nothing stored means a fresh session and a log line saying why.

mod persist_support;

use persist_support::*;
use serde_json::{Value, json};

/// `initialize` and `session/new`: the answer must be the first line, then `replayed`
/// `session/update`s follow. Returns the session id and the replayed updates.
fn resume(agent: &mut Agent, replayed: usize) -> (String, Vec<Value>) {
    initialize(agent);
    let cwd = agent.cwd.clone();
    agent.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#,
        s(&cwd)
    ));
    let answer = agent.recv();
    assert!(
        answer.starts_with(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"#),
        "the answer comes first: {answer}"
    );
    let session = agent::session_id(&answer).expect("a sessionId");
    let updates = updates(&agent.recv_n(replayed), &session);
    // Then the commands, as after a load: behind the whole history (R-SESSION-8).
    let commands = json(&agent.recv());
    assert_eq!(
        commands["params"]["update"]["sessionUpdate"], "available_commands_update",
        "{commands}"
    );
    (session, updates)
}

fn user(text: &str) -> Value {
    json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}})
}

fn said(text: &str) -> Value {
    json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})
}

/// Two saved sessions in `cwd`: the older with one turn, the newer with two.
fn two_saved_sessions(name: &str) -> (std::path::PathBuf, String, String) {
    let cwd = scratch(name);
    let mut agent = agent_in(&format!("{name}-a"), &cwd, &[]);
    let older = agent.handshake();
    agent.prompt(3, &older, "/echo old");
    let newer = agent.new_session(4);
    agent.prompt(5, &newer, "/echo new 1");
    agent.prompt(6, &newer, "/echo new 2");
    let (_, status, _) = agent.finish();
    assert!(status.success());
    (cwd, older, newer)
}

#[test]
fn resume_without_an_id_takes_the_latest_session_and_later_sessions_are_fresh() {
    let (cwd, _older, newer) = two_saved_sessions("persist-resume-latest");
    let mut agent = agent_in("persist-resume-latest-b", &cwd, &["--resume"]);
    let (resumed, _) = resume(&mut agent, 4);
    assert_eq!(resumed, newer);
    assert_eq!(
        history_answer(&mut agent, 3, &resumed),
        "this session has 2 completed turns"
    );
    let fresh = agent.new_session(4);
    assert_ne!(fresh, newer);
    assert_eq!(
        history_answer(&mut agent, 5, &fresh),
        "this session has 0 completed turns"
    );
    let (_, status, stderr) = agent.finish();
    assert!(status.success());
    assert!(stderr.contains("session resumed (--resume)"), "{stderr}");
}

#[test]
fn resume_with_an_id_takes_that_session() {
    let (cwd, older, _newer) = two_saved_sessions("persist-resume-id");
    let mut agent = agent_in("persist-resume-id-b", &cwd, &["--resume", &older]);
    let (resumed, replayed) = resume(&mut agent, 2);
    assert_eq!(resumed, older);
    assert_eq!(replayed, [user("/echo old"), said("old")]);
    let lines = agent.prompt(3, &resumed, "/history\n/echo more");
    assert_eq!(
        messages(&lines),
        ["this session has 1 completed turn", "more"]
    );
}

#[test]
fn resume_falls_back_to_a_fresh_session_with_a_log_line() {
    let (cwd, older, newer) = two_saved_sessions("persist-resume-fallback");
    let mut agent = agent_in(
        "persist-resume-fallback-b",
        &cwd,
        &["--resume", "sess_nope"],
    );
    let fresh = agent.handshake();
    assert!(fresh != older && fresh != newer, "{fresh}");
    let (_, status, stderr) = agent.finish();
    assert!(status.success());
    assert!(
        stderr.contains(
            "--resume: Session 'sess_nope' not found; the first session/new starts a fresh session instead"
        ),
        "{stderr}"
    );

    // A prefix is not an id.
    let prefix = &older[..10];
    let agent = agent_in("persist-resume-fallback-c", &cwd, &["--resume", prefix]);
    let mut agent = agent;
    let fresh = agent.handshake();
    assert_ne!(fresh, older);

    let empty = scratch("persist-resume-fallback-empty");
    let mut agent = agent_in("persist-resume-fallback-d", &empty, &["--resume"]);
    agent.handshake();
    let (_, status, stderr) = agent.finish();
    assert!(status.success());
    assert!(
        stderr.contains(
            "--resume: No sessions directory found; the first session/new starts a fresh session instead"
        ),
        "{stderr}"
    );
}

#[test]
fn resume_replays_the_history_behind_the_session_new_answer_then_the_session_goes_on() {
    let (cwd, _older, newer) = two_saved_sessions("persist-resume-replay");
    let mut agent = agent_in("persist-resume-replay-b", &cwd, &["--resume"]);
    let (resumed, replayed) = resume(&mut agent, 4);
    assert_eq!(resumed, newer);
    assert_eq!(
        replayed,
        [
            user("/echo new 1"),
            said("new 1"),
            user("/echo new 2"),
            said("new 2")
        ]
    );
    // Nothing more of the history: the next lines are the new turn's.
    let lines = agent.prompt(3, &resumed, "/echo new 3");
    // The turn's usage counts the text of the whole session, resumed turns included.
    let used = [
        "/echo new 1",
        "new 1",
        "/echo new 2",
        "new 2",
        "/echo new 3",
        "new 3",
    ]
    .iter()
    .map(|text| text.len())
    .sum::<usize>();
    assert_eq!(
        updates(&lines, &resumed),
        [
            said("new 3"),
            json!({"sessionUpdate": "usage_update", "used": used, "size": 1_000_000})
        ],
        "{lines:?}"
    );
    let (rest, status, _) = agent.finish();
    assert!(status.success());
    assert!(rest.is_empty(), "{rest:?}");

    // The turn was saved on top of the resumed history, and the next resume replays all three.
    let mut agent = agent_in("persist-resume-replay-c", &cwd, &["--resume", &newer]);
    let (_, replayed) = resume(&mut agent, 6);
    assert_eq!(replayed[4..], [user("/echo new 3"), said("new 3")]);
}
