//! `--resume [ID]`: the first `session/new` of the process answers with a stored session of
//! its cwd (the latest, or the one with that id); nothing stored means a fresh session and a
//! log line saying why.

mod persist_support;

use persist_support::*;

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
    let resumed = agent.handshake();
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
    let resumed = agent.handshake();
    assert_eq!(resumed, older);
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
