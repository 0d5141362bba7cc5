//! Cancel, deadlines and EOF: every request settled exactly once, whatever happens.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

mod client_support;

use acp_core::Instant;
use acp_core::conn::client::{
    ClientEvent, ClientMethod, Failure, HandshakeError, NO_MCP_SERVERS, PermissionAnswer, Serves,
    TurnOutcome,
};
use acp_core::machine::UsageError;
use acp_core::machine::pending::{MethodKind, Settle};
use acp_core::machine::turn::StopReason;
use client_support::Host;
use pretty_assertions::assert_eq;

const PERMISSION: &str = r#"{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":[{"optionId":"allow_once","name":"Allow","kind":"allow_once"}]}}"#;
const ASK: &str = r#"{"jsonrpc":"2.0","id":"a1","method":"_agentao.cn/ask_user","params":{"sessionId":"s1","question":"Which?"}}"#;

/// A host in a turn on `s1` with one permission and one ask_user request open.
fn turn_with_questions() -> (Host, Vec<ClientEvent>) {
    let mut host = Host::with_session(Serves::EVERYTHING);
    host.conn.prompt_text(Instant(0), "s1", "go").unwrap();
    host.sent();
    host.agent(PERMISSION);
    host.agent(ASK);
    let events = host.events();
    assert_eq!(events.len(), 2);
    assert_eq!(host.conn.requests_owed(), 2);
    (host, events)
}

fn ticket(event: &ClientEvent) -> acp_core::machine::Ticket {
    match event {
        ClientEvent::Request(r) => r.ticket,
        other => panic!("{other:?}"),
    }
}

#[test]
fn cancel_sends_the_notification_and_settles_permission_and_ask_user_as_cancelled() {
    let (mut host, asked) = turn_with_questions();
    assert_eq!(host.conn.cancel(Instant(5), "s1"), Ok(true));
    let events = host.events();
    assert_eq!(
        events,
        [
            ClientEvent::RequestSettled {
                ticket: ticket(&asked[0]),
                kind: MethodKind::Permission,
                how: Settle::SessionCancelled
            },
            ClientEvent::RequestSettled {
                ticket: ticket(&asked[1]),
                kind: MethodKind::AskUser,
                how: Settle::SessionCancelled
            },
        ]
    );
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#,
            r#"{"jsonrpc":"2.0","id":"p1","result":{"outcome":{"outcome":"cancelled"}}}"#,
            r#"{"jsonrpc":"2.0","id":"a1","result":{"outcome":"cancelled"}}"#,
        ]
    );
    // The application's late answer is refused; nothing is written twice.
    assert_eq!(
        host.conn.respond_permission(
            Instant(6),
            ticket(&asked[0]),
            PermissionAnswer::Selected("allow_once")
        ),
        Err(UsageError::AlreadySettled)
    );
    // Cancelling again sends nothing more.
    assert_eq!(host.conn.cancel(Instant(6), "s1"), Ok(false));
    assert!(host.events().is_empty());
    assert!(host.sent().is_empty());
    // A permission asked after the cancel is answered `cancelled` at once, after its event.
    host.agent(&PERMISSION.replace("\"p1\"", "\"p2\""));
    let events = host.events();
    assert!(
        matches!(
            events.as_slice(),
            [
                ClientEvent::Request(_),
                ClientEvent::RequestSettled {
                    how: Settle::SessionCancelled,
                    ..
                }
            ]
        ),
        "{events:?}"
    );
    assert_eq!(
        host.sent(),
        [r#"{"jsonrpc":"2.0","id":"p2","result":{"outcome":{"outcome":"cancelled"}}}"#]
    );
    // Whatever the agent answers, the turn ends cancelled.
    host.agent(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#);
    let events = host.events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::TurnEnded {
                outcome: TurnOutcome::Stopped {
                    stop: StopReason::Cancelled,
                    rewritten: true
                },
                ..
            }]
        ),
        "{events:?}"
    );
}

#[test]
fn cancelling_an_idle_or_unknown_session() {
    let mut host = Host::with_session(Serves::NOTHING);
    assert_eq!(host.conn.cancel(Instant(0), "s1"), Ok(false));
    assert!(host.sent().is_empty());
    assert_eq!(
        host.conn.cancel(Instant(0), "zz"),
        Err(UsageError::UnknownSession)
    );
}

#[test]
fn an_agent_error_after_cancel_still_ends_the_turn_cancelled() {
    let mut host = Host::with_session(Serves::NOTHING);
    host.conn.prompt_text(Instant(0), "s1", "go").unwrap();
    host.conn.cancel(Instant(1), "s1").unwrap();
    host.agent(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"interrupted"}}"#);
    let events = host.events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::TurnEnded {
                outcome: TurnOutcome::Stopped {
                    stop: StopReason::Cancelled,
                    rewritten: true
                },
                ..
            }]
        ),
        "{events:?}"
    );
}

#[test]
fn a_failed_or_malformed_prompt_answer_ends_the_turn_failed() {
    let mut host = Host::with_session(Serves::NOTHING);
    host.conn.prompt_text(Instant(0), "s1", "go").unwrap();
    host.agent(r#"{"jsonrpc":"2.0","id":2,"error":{"code":"x","message":"bad"}}"#);
    assert!(matches!(
        host.events().as_slice(),
        [ClientEvent::TurnEnded {
            outcome: TurnOutcome::Failed(Failure::Malformed),
            ..
        }]
    ));
    host.conn.prompt_text(Instant(0), "s1", "go").unwrap();
    host.agent(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"done"}}"#);
    assert!(matches!(
        host.events().as_slice(),
        [ClientEvent::TurnEnded {
            outcome: TurnOutcome::Failed(Failure::BadResult),
            ..
        }]
    ));
    host.conn.prompt_text(Instant(0), "s1", "go").unwrap();
    host.agent(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"model down"}}"#);
    let events = host.events();
    let [
        ClientEvent::TurnEnded {
            outcome: TurnOutcome::Failed(failure),
            ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(failure.to_string(), "JSON-RPC error -32603: model down");
}

#[test]
fn a_prompt_timeout_cancels_the_turn_and_settles_its_questions() {
    let (mut host, asked) = turn_with_questions();
    assert_eq!(host.conn.poll_timeout(), Some(Instant(60_000)));
    host.advance(59_999);
    assert!(host.events().is_empty());
    host.advance(60_000);
    let events = host.events();
    assert_eq!(
        events,
        [
            ClientEvent::TurnEnded {
                session: acp_core::machine::SessionId::new("s1").unwrap(),
                request: acp_core::machine::RequestId(2),
                outcome: TurnOutcome::TimedOut
            },
            ClientEvent::RequestSettled {
                ticket: ticket(&asked[0]),
                kind: MethodKind::Permission,
                how: Settle::SessionCancelled
            },
            ClientEvent::RequestSettled {
                ticket: ticket(&asked[1]),
                kind: MethodKind::AskUser,
                how: Settle::SessionCancelled
            },
        ]
    );
    assert!(TurnOutcome::TimedOut.timed_out());
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#,
            r#"{"jsonrpc":"2.0","id":"p1","result":{"outcome":{"outcome":"cancelled"}}}"#,
            r#"{"jsonrpc":"2.0","id":"a1","result":{"outcome":"cancelled"}}"#,
        ]
    );
    assert_eq!(host.conn.poll_timeout(), None);
    // The session is usable again; the cancelled turn's late answer is what R-CANCEL-3 asks
    // of the agent, so it is absorbed: no event, and no violation.
    host.agent(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#);
    assert_eq!(host.events(), []);
    host.conn
        .prompt_text(Instant(60_001), "s1", "again")
        .unwrap();
}

#[test]
fn a_request_timeout_fails_that_request() {
    let mut host = Host::ready(Serves::NOTHING, "{}");
    host.conn
        .new_session(Instant(0), "/w", NO_MCP_SERVERS)
        .unwrap();
    host.advance(30_000);
    let events = host.events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::Failed {
                method: ClientMethod::NewSession,
                failure: Failure::TimedOut,
                ..
            }]
        ),
        "{events:?}"
    );
    assert_eq!(host.conn.sessions().count(), 0);

    let mut host = Host::new(Serves::NOTHING);
    host.conn.initialize(Instant(0)).unwrap();
    host.advance(30_000);
    assert!(matches!(
        host.events().as_slice(),
        [ClientEvent::HandshakeFailed {
            error: HandshakeError::Failed(Failure::TimedOut),
            ..
        }]
    ));
}

#[test]
fn eof_fails_everything_pending_at_once_and_writes_nothing_more() {
    let (mut host, asked) = turn_with_questions();
    host.conn
        .set_config_option(Instant(0), "s1", "model", "m")
        .unwrap_err();
    host.conn
        .new_session(Instant(0), "/w", NO_MCP_SERVERS)
        .unwrap();
    host.sent();
    // A last line without newline is still processed.
    host.feed_bytes(br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk"}}}"#);
    host.conn.handle_eof(Instant(10));
    let events = host.events();
    assert!(
        matches!(events[0], ClientEvent::Update { .. }),
        "{events:?}"
    );
    assert!(matches!(
        events[1],
        ClientEvent::Failed {
            method: ClientMethod::NewSession,
            failure: Failure::Disconnected,
            ..
        }
    ));
    assert_eq!(
        events[2..],
        [
            ClientEvent::RequestSettled {
                ticket: ticket(&asked[0]),
                kind: MethodKind::Permission,
                how: Settle::ConnectionClosed
            },
            ClientEvent::RequestSettled {
                ticket: ticket(&asked[1]),
                kind: MethodKind::AskUser,
                how: Settle::ConnectionClosed
            },
            ClientEvent::TurnEnded {
                session: acp_core::machine::SessionId::new("s1").unwrap(),
                request: acp_core::machine::RequestId(2),
                outcome: TurnOutcome::Disconnected
            },
            ClientEvent::Closed,
        ]
    );
    assert!(host.sent().is_empty(), "nothing is written after EOF");
    assert!(host.conn.is_closed());
    assert_eq!(host.conn.requests_in_flight(), 0);
    assert_eq!(host.conn.requests_owed(), 0);
    assert_eq!(host.conn.poll_timeout(), None);
    assert_eq!(
        host.conn.prompt_text(Instant(11), "s1", "x"),
        Err(UsageError::Closed)
    );
    assert_eq!(
        host.conn
            .respond_permission(Instant(11), ticket(&asked[0]), PermissionAnswer::Cancelled),
        Err(UsageError::Closed)
    );
    assert_eq!(host.conn.handle_bytes(Instant(12), b"{}\n"), 3);
    host.conn.handle_eof(Instant(12));
    assert!(host.events().is_empty());
    assert!(host.sent().is_empty());
}

#[test]
fn a_full_outbox_pauses_input_and_refuses_commands_without_changing_state() {
    let mut config = client_support::config(Serves::NOTHING);
    config.outbox_limit = 2048;
    config.high_water = 0;
    let mut host: Host = Host::with_config(config);
    host.initialize("{}");
    host.open("s1");
    host.open("s2");
    let big = "x".repeat(1500);
    host.conn.prompt_text(Instant(0), "s1", &big).unwrap();
    // No room for a reply: input waits until the outbox is written.
    let answer = b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}\n";
    assert_eq!(host.conn.handle_bytes(Instant(0), answer), 0);
    // A second line does not fit either: refused, and nothing changed.
    assert_eq!(
        host.conn.prompt_text(Instant(0), "s2", &big),
        Err(UsageError::WouldBlock)
    );
    assert_eq!(
        host.conn.session_state("s2"),
        Some(acp_core::machine::session::SessionState::Active { turn: None })
    );
    assert_eq!(host.conn.requests_in_flight(), 1);
    assert_eq!(
        UsageError::WouldBlock.to_string(),
        "the outbox is full; write out pending bytes first"
    );
    assert_eq!(host.sent().len(), 1, "only the first prompt");
    assert_eq!(host.conn.handle_bytes(Instant(0), answer), answer.len());
    assert!(matches!(
        host.events().as_slice(),
        [ClientEvent::TurnEnded { .. }]
    ));
    host.conn.prompt_text(Instant(0), "s2", &big).unwrap();
    assert_eq!(host.sent().len(), 1);
}

#[test]
fn eof_completes_even_when_the_outbox_is_never_written_again() {
    let mut config = client_support::config(Serves::NOTHING);
    config.outbox_limit = 2048;
    let mut host: Host = Host::with_config(config);
    host.initialize("{}");
    host.open("s1");
    // Fill the outbox past the reply reserve and never write it (the agent's pipe broke).
    host.conn
        .prompt_text(Instant(0), "s1", &"x".repeat(1500))
        .unwrap();
    host.conn.handle_eof(Instant(1));
    let events = host.events();
    assert!(
        matches!(
            events.as_slice(),
            [
                ClientEvent::TurnEnded {
                    outcome: TurnOutcome::Disconnected,
                    ..
                },
                ClientEvent::Closed
            ]
        ),
        "{events:?}"
    );
}
