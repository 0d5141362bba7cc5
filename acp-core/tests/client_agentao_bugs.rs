//! The defects of Agentao's client (R-INIT-6, R-RPC-4, R-FS-2, R-PERM-2, R-CANCEL-6), each
//! with the behaviour of our `ClientConnection`. Its config typing (R-HOST-1) and liveness
//! while starting (R-HOST-7) are about the supervisor of agent processes, not the connection,
//! and are tested in `supervisor_config.rs` and `supervisor_lifecycle.rs`; its "/acp cancel
//! <unknown> prints success" (R-HOST-8) has its connection-level counterpart here (cancelling
//! an unknown session is an error). Also the decisions of its JSON-RPC client we make
//! differently (R-ID-6, R-CANCEL-6, R-TURN-2).
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

mod client_support;

use acp_core::Instant;
use acp_core::conn::client::{
    AgentViolation, AskUserAnswer, ClientEvent, Failure, HandshakeError, NO_MCP_SERVERS,
    PermissionAnswer, Serves, TurnOutcome, UpdateContext,
};
use acp_core::machine::UsageError;
use acp_core::machine::pending::Settle;
use client_support::Host;
use pretty_assertions::assert_eq;

/// Bug 16: `fs/*`, `terminal/*` and unknown requests were never answered; a server waiting
/// on them hung. Ours: answered `-32601` at once when not served, handed to the application
/// when served, never left unanswered.
#[test]
fn bug_16_every_agent_request_gets_an_answer() {
    let mut host = Host::with_session(Serves::NOTHING);
    host.agent(r#"{"jsonrpc":"2.0","id":"srv_1","method":"fs/read_text_file","params":{"sessionId":"s1","path":"/x"}}"#);
    host.agent(r#"{"jsonrpc":"2.0","id":"srv_2","method":"terminal/create","params":{"sessionId":"s1","command":"ls"}}"#);
    host.agent(r#"{"jsonrpc":"2.0","id":"srv_3","method":"vendor/anything","params":{}}"#);
    host.events();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":"srv_1","error":{"code":-32601,"message":"Method not found: fs/read_text_file"}}"#,
            r#"{"jsonrpc":"2.0","id":"srv_2","error":{"code":-32601,"message":"Method not found: terminal/create"}}"#,
            r#"{"jsonrpc":"2.0","id":"srv_3","error":{"code":-32601,"message":"Method not found: vendor/anything"}}"#,
        ]
    );
    assert_eq!(host.conn.requests_owed(), 0);
}

/// Bug 17: a crash or EOF did not fail pending requests; callers waited for their timeout
/// (a crashed server made `initialize` wait 5 s). Ours: EOF fails them at once.
#[test]
fn bug_17_eof_fails_pending_requests_at_once() {
    let mut host = Host::new(Serves::NOTHING);
    host.conn.initialize(Instant(0)).unwrap();
    host.conn.handle_eof(Instant(50));
    assert_eq!(
        host.events(),
        [
            ClientEvent::HandshakeFailed {
                request: acp_core::machine::RequestId(0),
                error: HandshakeError::Failed(Failure::Disconnected)
            },
            ClientEvent::Closed
        ]
    );
    assert_eq!(
        host.conn.poll_timeout(),
        None,
        "nothing waits for a deadline"
    );
}

/// Bug 18: a blocking `send_prompt` timeout did not send `session/cancel`, so the server
/// kept working on an abandoned turn. Ours: the timeout sends it.
#[test]
fn bug_18_a_prompt_timeout_sends_session_cancel() {
    let mut host = Host::with_session(Serves::NOTHING);
    host.conn.prompt_text(Instant(0), "s1", "long").unwrap();
    host.sent();
    host.advance(60_000);
    let events = host.events();
    assert!(matches!(
        events.as_slice(),
        [ClientEvent::TurnEnded {
            outcome: TurnOutcome::TimedOut,
            ..
        }]
    ));
    assert_eq!(
        host.sent(),
        [r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#]
    );
}

/// Bug 19: rejecting an ask_user sent a permission-shaped `selected/reject_once`, and the
/// interactive path could never send a `cancelled` permission outcome. Ours: each request
/// kind has its own answer type, `cancelled` exists for both, and a mismatched answer is a
/// usage error.
#[test]
fn bug_19_answers_have_the_shape_of_their_request() {
    let mut host = Host::with_session(Serves::EVERYTHING);
    host.agent(r#"{"jsonrpc":"2.0","id":1,"method":"_agentao.cn/ask_user","params":{"sessionId":"s1","question":"?"}}"#);
    host.agent(r#"{"jsonrpc":"2.0","id":2,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t"},"options":[]}}"#);
    let events = host.events();
    let [ClientEvent::Request(ask), ClientEvent::Request(permission)] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(
        host.conn.respond_permission(
            Instant(0),
            ask.ticket,
            PermissionAnswer::Selected("reject_once")
        ),
        Err(UsageError::WrongKind)
    );
    host.conn
        .respond_ask_user(Instant(0), ask.ticket, AskUserAnswer::Cancelled)
        .unwrap();
    host.conn
        .respond_permission(Instant(0), permission.ticket, PermissionAnswer::Cancelled)
        .unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":"cancelled"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"outcome":{"outcome":"cancelled"}}}"#,
        ]
    );
}

/// Bug 22 (connection side): cancelling something that does not exist is reported, not
/// silently successful.
#[test]
fn bug_22_cancelling_an_unknown_session_is_an_error() {
    let mut host = Host::with_session(Serves::NOTHING);
    assert_eq!(
        host.conn.cancel(Instant(0), "nope"),
        Err(UsageError::UnknownSession)
    );
    assert!(host.sent().is_empty());
}

/// Bug 23, part 1: `session/load` was never used, so a restart always meant a new
/// conversation. Ours: `load_session` exists (gated on `loadSession`).
#[test]
fn bug_23_session_load_is_available() {
    let mut host = Host::ready(Serves::NOTHING, r#"{"loadSession":true}"#);
    host.conn
        .load_session(Instant(0), "old", "/w", NO_MCP_SERVERS)
        .unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"old","cwd":"/w","mcpServers":[]}}"#
        ]
    );
}

/// Bug 23, part 2: no `clientInfo` was sent. Ours: always.
#[test]
fn bug_23_client_info_is_sent() {
    let mut host = Host::new(Serves::NOTHING);
    host.conn.initialize(Instant(0)).unwrap();
    let line = host.sent().remove(0);
    assert!(
        line.ends_with(r#""clientInfo":{"name":"acp-test","version":"0.1.0"}}}"#),
        "{line}"
    );
}

/// Bug 23, part 3: the negotiated `protocolVersion` was never checked. Ours: anything but 1
/// fails the handshake.
#[test]
fn bug_23_the_negotiated_version_is_checked() {
    for version in ["0", "2", "65535", "-1"] {
        let mut host = Host::new(Serves::NOTHING);
        host.conn.initialize(Instant(0)).unwrap();
        host.agent(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":{version}}}}}"#
        ));
        let events = host.events();
        assert_eq!(
            events,
            [ClientEvent::HandshakeFailed {
                request: acp_core::machine::RequestId(0),
                error: HandshakeError::UnsupportedVersion(version.parse().unwrap())
            }]
        );
    }
}

/// Bug 23, part 4: inbox messages were stamped with the client's current session, not the
/// notification's `sessionId`. Ours: each update carries its own session, and one for a
/// session we do not know is flagged.
#[test]
fn bug_23_updates_carry_their_own_session() {
    let mut host = Host::with_session(Serves::NOTHING);
    host.open("s2");
    host.conn.prompt_text(Instant(0), "s2", "x").unwrap();
    for sid in ["s2", "s1", "elsewhere"] {
        host.agent(&format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{sid}","update":{{"sessionUpdate":"agent_message_chunk"}}}}}}"#));
    }
    let seen: Vec<_> = host
        .events()
        .into_iter()
        .map(|event| match event {
            ClientEvent::Update {
                session, context, ..
            } => (session.as_str().to_owned(), context),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("s2".to_owned(), UpdateContext::Turn),
            ("s1".to_owned(), UpdateContext::AfterTurn),
            ("elsewhere".to_owned(), UpdateContext::UnknownSession),
        ]
    );
}

/// R-ID-6: Agentao's client converts "a string of digits" to an int, and "an unknown id gets a
/// warning and is dropped". Ours: ids are exact (`"2"` is not our `2`), unknown ids reported.
#[test]
fn response_ids_are_exact_and_unknown_ones_reported() {
    let mut host = Host::with_session(Serves::NOTHING);
    host.conn.set_mode(Instant(0), "s1", "plan").unwrap();
    host.agent(r#"{"jsonrpc":"2.0","id":"2","result":{}}"#);
    assert_eq!(
        host.events(),
        [ClientEvent::PeerViolation(AgentViolation::UnknownResponse)]
    );
    assert_eq!(host.conn.requests_in_flight(), 1);
    host.agent(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    assert!(matches!(
        host.events().as_slice(),
        [ClientEvent::Answered { .. }]
    ));
}

/// R-CANCEL-6: Agentao's `cancel_active_turn()` sends `session/cancel` even when no turn runs.
/// Ours: only when a turn runs; the open questions of the session are settled either way.
#[test]
fn cancel_without_a_turn_sends_nothing_but_settles_questions() {
    let mut host = Host::with_session(Serves::EVERYTHING);
    host.agent(r#"{"jsonrpc":"2.0","id":4,"method":"_agentao.cn/ask_user","params":{"sessionId":"s1","question":"?"}}"#);
    host.events();
    assert_eq!(host.conn.cancel(Instant(0), "s1"), Ok(false));
    let events = host.events();
    assert!(matches!(
        events.as_slice(),
        [ClientEvent::RequestSettled {
            how: Settle::SessionCancelled,
            ..
        }]
    ));
    assert_eq!(
        host.sent(),
        [r#"{"jsonrpc":"2.0","id":4,"result":{"outcome":"cancelled"}}"#]
    );
}

/// R-TURN-2: Agentao has a single active turn per server; ours is one turn per session,
/// sessions run concurrently.
#[test]
fn different_sessions_run_turns_concurrently() {
    let mut host = Host::with_session(Serves::NOTHING);
    host.open("s2");
    host.conn.prompt_text(Instant(0), "s1", "a").unwrap();
    host.conn.prompt_text(Instant(0), "s2", "b").unwrap();
    assert_eq!(
        host.conn.prompt_text(Instant(0), "s1", "c"),
        Err(UsageError::TurnInProgress)
    );
}
