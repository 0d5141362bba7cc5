//! The client connection over fixed storage: it runs without an allocator. Run it with
//! `cargo test -p acp-core --no-default-features --test client_fixed` too.

use acp_core::Instant;
use acp_core::conn::client::{
    ClientConfig, ClientConnection, ClientEvent, Fixed, NO_MCP_SERVERS, PAYLOAD_MAX,
    PermissionAnswer, Serves, TurnOutcome, UpdateContext,
};
use acp_core::machine::UsageError;
use acp_core::machine::turn::StopReason;

/// Lines of 2 KiB, a 4 KiB outbox, 2 sessions, 4 requests each way.
type Small = Fixed<2048, 4096, 2, 4, 0>;

fn sent(conn: &mut ClientConnection<Small>) -> Vec<String> {
    let bytes = conn.outbox().pending().to_vec();
    conn.outbox().consume(bytes.len());
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn feed(conn: &mut ClientConnection<Small>, line: &str) -> Vec<ClientEvent> {
    let mut bytes = line.as_bytes().to_vec();
    bytes.push(b'\n');
    let mut rest = &bytes[..];
    let mut events = Vec::new();
    for _ in 0..1000 {
        let n = conn.handle_bytes(Instant(0), rest);
        rest = &rest[n..];
        while let Some(event) = conn.poll_event() {
            events.push(event);
        }
        if rest.is_empty() {
            return events;
        }
    }
    panic!("the line was never taken");
}

fn ready() -> ClientConnection<Small> {
    let mut conn = ClientConnection::<Small>::new(ClientConfig::new("tiny", "1", Serves::NOTHING));
    conn.initialize(Instant(0)).unwrap();
    assert_eq!(
        sent(&mut conn),
        [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"tiny","version":"1"}}}"#
        ]
    );
    let events = feed(
        &mut conn,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}"#,
    );
    assert!(
        matches!(events.as_slice(), [ClientEvent::Initialized { .. }]),
        "{events:?}"
    );
    conn.new_session(Instant(0), "/w", NO_MCP_SERVERS).unwrap();
    sent(&mut conn);
    let events = feed(
        &mut conn,
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
    );
    assert!(
        matches!(events.as_slice(), [ClientEvent::SessionOpened { .. }]),
        "{events:?}"
    );
    conn
}

#[test]
fn initialize_and_a_prompt_turn_run_on_fixed_storage() {
    let mut conn = ready();
    conn.prompt_text(Instant(1), "s1", "hi").unwrap();
    assert_eq!(
        sent(&mut conn),
        [
            r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}"#
        ]
    );
    let events = feed(
        &mut conn,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"yo"}}}}"#,
    );
    let [
        ClientEvent::Update {
            context: UpdateContext::Turn,
            kind,
            params,
            ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(kind.as_str(), "agent_message_chunk");
    assert!(params.as_json().unwrap().ends_with(r#""text":"yo"}}}"#));

    let events = feed(
        &mut conn,
        r#"{"jsonrpc":"2.0","id":"p","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t"},"options":[]}}"#,
    );
    let [ClientEvent::Request(request)] = events.as_slice() else {
        panic!("{events:?}")
    };
    conn.respond_permission(
        Instant(2),
        request.ticket,
        PermissionAnswer::Selected("allow_once"),
    )
    .unwrap();
    assert_eq!(
        sent(&mut conn),
        [
            r#"{"jsonrpc":"2.0","id":"p","result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}"#
        ]
    );

    let events = feed(
        &mut conn,
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
    );
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::TurnEnded {
                outcome: TurnOutcome::Stopped {
                    stop: StopReason::EndTurn,
                    rewritten: false
                },
                ..
            }]
        ),
        "{events:?}"
    );
}

#[test]
fn fixed_tables_bound_sessions_and_payloads() {
    let mut conn = ready();
    conn.new_session(Instant(0), "/w", NO_MCP_SERVERS).unwrap();
    assert_eq!(
        conn.new_session(Instant(0), "/w", NO_MCP_SERVERS),
        Err(UsageError::TooManyInFlight),
        "two sessions at most"
    );
    sent(&mut conn);
    // A payload longer than the event copy is still delivered, marked.
    let text = "z".repeat(1200);
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}}}"#
    );
    let events = feed(&mut conn, &line);
    let [
        ClientEvent::Update {
            params, context, ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(*context, UpdateContext::AfterTurn);
    if cfg!(feature = "alloc") {
        assert!(params.as_json().is_some());
    } else {
        assert!(params.len() > PAYLOAD_MAX && params.is_oversized() && params.as_json().is_none());
    }
    // A line over the 2 KiB line buffer is refused with -32700 and the next one served.
    let long = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":"{}"}}"#,
        "y".repeat(3000)
    );
    let events = feed(&mut conn, &long);
    assert_eq!(events.len(), 1);
    assert_eq!(
        sent(&mut conn),
        [
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: line exceeds the maximum length of 2048 bytes"}}"#
        ]
    );
}

#[test]
fn eof_settles_everything_on_fixed_storage() {
    let mut conn = ready();
    conn.prompt_text(Instant(1), "s1", "hi").unwrap();
    sent(&mut conn);
    conn.handle_eof(Instant(2));
    let mut events = Vec::new();
    while let Some(event) = conn.poll_event() {
        events.push(event);
    }
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
    assert!(sent(&mut conn).is_empty());
}

/// `{"sessionId": …}`, serializable without an allocator.
#[derive(serde::Serialize)]
struct BySession<'a> {
    #[serde(rename = "sessionId")]
    session_id: &'a str,
}

/// An image prompt block, serializable without an allocator.
#[derive(serde::Serialize)]
struct Image {
    #[serde(rename = "type")]
    kind: &'static str,
    data: &'static str,
    #[serde(rename = "mimeType")]
    mime_type: &'static str,
}

#[test]
fn the_capability_gate_and_empty_results_work_on_fixed_storage() {
    let mut conn = ready();
    // Not advertised (only `loadSession` was): refused, nothing written.
    assert_eq!(
        conn.request(Instant(1), "session/close", &BySession { session_id: "s1" }),
        Err(UsageError::NotAdvertised {
            method: "session/close",
            needs: "agentCapabilities.sessionCapabilities.close"
        })
    );
    let image = [Image {
        kind: "image",
        data: "AAAA",
        mime_type: "image/png",
    }];
    assert_eq!(
        conn.prompt(Instant(1), "s1", &image),
        Err(UsageError::NotAdvertised {
            method: "session/prompt",
            needs: "agentCapabilities.promptCapabilities.image"
        })
    );
    assert!(conn.outbox().pending().is_empty());

    // A `null` answer to `session/set_mode` reads as `{}`.
    let id = conn.set_mode(Instant(1), "s1", "plan").unwrap();
    sent(&mut conn);
    let events = feed(
        &mut conn,
        &format!(r#"{{"jsonrpc":"2.0","id":{},"result":null}}"#, id.0),
    );
    match events.as_slice() {
        [ClientEvent::Answered { result, .. }] => assert_eq!(result.as_json(), Some("{}")),
        other => panic!("{other:?}"),
    }
}
