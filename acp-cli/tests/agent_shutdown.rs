//! How turns end when the client cancels or goes away: `session/cancel` ends a `/sleep` at
//! once, EOF and SIGTERM/SIGINT answer a running turn `cancelled` and exit 0.

mod agent_support;

use agent_support::{Agent, message, stop, title, update, usage};
use rustix::process::Signal;

fn cancel(sid: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"session/cancel","params":{{"sessionId":"{sid}"}}}}"#)
}

#[test]
fn cancel_ends_a_long_sleep_at_once() {
    let mut agent = Agent::start("cancel-sleep", &[]);
    let sid = agent.handshake();
    agent.send(&Agent::prompt_line(
        3,
        &sid,
        "/echo zzz\n/sleep 3600000\n/echo never",
    ));
    assert_eq!(agent.recv(), title(&sid, "/echo zzz"));
    assert_eq!(agent.recv(), message(&sid, "zzz"));
    agent.send(&cancel(&sid));
    // A cancelled turn still reports its usage before its answer: 36 + 3 bytes.
    assert_eq!(agent.recv(), usage(&sid, 39));
    assert_eq!(agent.recv(), stop(3, "cancelled"));
    // The session goes on.
    assert_eq!(
        agent.prompt(4, &sid, "/echo again"),
        [
            message(&sid, "again"),
            usage(&sid, 39 + 11 + 5),
            stop(4, "end_turn")
        ]
    );
}

#[test]
fn cancel_during_a_permission_request_fails_the_tool_and_ends_cancelled() {
    let mut agent = Agent::start("cancel-permission", &[]);
    let sid = agent.handshake();
    agent.send(&Agent::prompt_line(
        3,
        &sid,
        "/tool execute Deploy\n/echo never",
    ));
    assert_eq!(agent.recv(), title(&sid, "/tool execute Deploy"));
    agent.recv_n(2);
    agent.send(&cancel(&sid));
    assert_eq!(
        agent.until_response(3),
        [
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-1","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Error: cancelled by user"}}]}"#
            ),
            usage(&sid, 32),
            stop(3, "cancelled"),
        ]
    );
}

/// R-PROC-2: a running turn is answered `cancelled`, exit 0.
#[test]
fn eof_with_a_turn_running_answers_it_cancelled_and_exits_0() {
    let mut agent = Agent::start("eof-sleep", &[]);
    let sid = agent.handshake();
    agent.send(&Agent::prompt_line(3, &sid, "/sleep 3600000"));
    let (rest, status, _) = agent.finish();
    // EOF answers the turn at once: the connection closes, no usage_update.
    assert_eq!(rest, [title(&sid, "/sleep 3600000"), stop(3, "cancelled")]);
    assert_eq!(status.code(), Some(0));
}

#[test]
fn eof_with_a_permission_pending_settles_it_and_exits_0() {
    let mut agent = Agent::start("eof-permission", &[]);
    let sid = agent.handshake();
    agent.send(&Agent::prompt_line(3, &sid, "/tool execute Deploy"));
    agent.recv_n(2);
    let (rest, status, _) = agent.finish();
    assert_eq!(
        rest.last().map(String::as_str),
        Some(stop(3, "cancelled").as_str()),
        "{rest:?}"
    );
    assert_eq!(status.code(), Some(0));
}

/// R-PROC-2: SIGTERM and SIGINT end as stdin EOF does.
#[test]
fn sigterm_and_sigint_behave_like_eof() {
    for (name, signal) in [("sigterm", Signal::TERM), ("sigint", Signal::INT)] {
        let mut agent = Agent::start(name, &[]);
        let sid = agent.handshake();
        agent.send(&Agent::prompt_line(3, &sid, "/echo start\n/sleep 3600000"));
        assert_eq!(agent.recv(), title(&sid, "/echo start"));
        assert_eq!(agent.recv(), message(&sid, "start"));
        agent.signal(signal);
        let (rest, status, _) = agent.wait_exit();
        assert_eq!(rest, [stop(3, "cancelled")], "{name}");
        assert_eq!(status.code(), Some(0), "{name}");
    }
}

#[test]
fn eof_while_idle_exits_0_with_nothing_more_on_stdout() {
    let mut agent = Agent::start("eof-idle", &[]);
    agent.handshake();
    let (rest, status, _) = agent.finish();
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(status.code(), Some(0));
}
