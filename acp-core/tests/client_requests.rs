//! Agent → client requests: served ones become events, unserved ones are answered at once,
//! each is answered exactly once, with an answer of the right shape.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

mod client_support;

use acp_core::Instant;
use acp_core::conn::client::{
    AgentMethod, AgentViolation, AskUserAnswer, ClientEvent, PermissionAnswer, Serves,
};
use acp_core::machine::UsageError;
use acp_core::machine::pending::{MethodKind, Settle};
use acp_core::wire::ErrorCode;
use client_support::Host;
use pretty_assertions::assert_eq;

fn request(id: &str, method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

#[test]
fn unserved_methods_are_answered_method_not_found_at_once() {
    let mut host = Host::with_session(Serves::NOTHING);
    let cases = [
        ("fs/read_text_file", r#"{"sessionId":"s1","path":"/a"}"#),
        (
            "fs/write_text_file",
            r#"{"sessionId":"s1","path":"/a","content":"x"}"#,
        ),
        ("terminal/create", r#"{"sessionId":"s1","command":"ls"}"#),
        ("terminal/output", r#"{"sessionId":"s1","terminalId":"t"}"#),
        (
            "terminal/wait_for_exit",
            r#"{"sessionId":"s1","terminalId":"t"}"#,
        ),
        ("terminal/kill", r#"{"sessionId":"s1","terminalId":"t"}"#),
        ("terminal/release", r#"{"sessionId":"s1","terminalId":"t"}"#),
        (
            "elicitation/create",
            r#"{"sessionId":"s1","mode":"form","message":"m","requestedSchema":{}}"#,
        ),
        (
            "_agentao.cn/ask_user",
            r#"{"sessionId":"s1","question":"q"}"#,
        ),
        ("x/unknown", r#"{}"#),
    ];
    for (index, (method, params)) in cases.iter().enumerate() {
        host.agent(&request(&index.to_string(), method, params));
        let events = host.events();
        assert_eq!(
            events,
            [ClientEvent::PeerViolation(AgentViolation::RequestRefused {
                method: acp_core::conn::client::Text::new(method),
                code: ErrorCode::METHOD_NOT_FOUND
            })]
        );
        assert_eq!(
            host.sent(),
            [format!(
                r#"{{"jsonrpc":"2.0","id":{index},"error":{{"code":-32601,"message":"Method not found: {method}"}}}}"#
            )]
        );
    }
    assert_eq!(host.conn.requests_owed(), 0);
}

#[test]
fn served_methods_become_events_the_application_answers() {
    let mut host = Host::with_session(Serves::EVERYTHING);
    host.agent(&request(
        "7",
        "fs/read_text_file",
        r#"{"sessionId":"s1","path":"/a"}"#,
    ));
    let events = host.events();
    let [ClientEvent::Request(req)] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(req.method, AgentMethod::ReadTextFile);
    assert_eq!(
        req.params.as_json(),
        Some(r#"{"sessionId":"s1","path":"/a"}"#)
    );
    assert!(matches!(
        req.decoded,
        Some(acp_core::schema::AgentRequest::ReadTextFile(_))
    ));
    // Typed answers are for their own methods only.
    assert_eq!(
        host.conn
            .respond_permission(Instant(0), req.ticket, PermissionAnswer::Cancelled),
        Err(UsageError::WrongKind)
    );
    host.conn
        .respond(
            Instant(0),
            req.ticket,
            &serde_json::json!({"content": "abc"}),
        )
        .unwrap();
    assert_eq!(
        host.sent(),
        [r#"{"jsonrpc":"2.0","id":7,"result":{"content":"abc"}}"#]
    );

    host.agent(&request(
        "8",
        "terminal/create",
        r#"{"sessionId":"s1","command":"ls"}"#,
    ));
    let events = host.events();
    let [ClientEvent::Request(req)] = events.as_slice() else {
        panic!("{events:?}")
    };
    host.conn
        .respond_error(
            Instant(0),
            req.ticket,
            ErrorCode::INTERNAL_ERROR,
            "no shell",
        )
        .unwrap();
    assert_eq!(
        host.sent(),
        [r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"no shell"}}"#]
    );
    assert_eq!(
        host.conn
            .respond_error(Instant(0), req.ticket, ErrorCode::INTERNAL_ERROR, "again"),
        Err(UsageError::AlreadySettled)
    );
}

#[test]
fn ask_user_answers_have_the_ask_user_shape() {
    let mut host = Host::with_session(Serves::EVERYTHING);
    host.agent(&request(
        r#""q1""#,
        "_agentao.cn/ask_user",
        r#"{"sessionId":"s1","question":"Which?"}"#,
    ));
    host.agent(&request(
        r#""q2""#,
        "_agentao.cn/ask_user",
        r#"{"sessionId":"s1","question":"Why?"}"#,
    ));
    let events = host.events();
    let [ClientEvent::Request(first), ClientEvent::Request(second)] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(
        host.conn.respond_permission(
            Instant(0),
            first.ticket,
            PermissionAnswer::Selected("reject_once")
        ),
        Err(UsageError::WrongKind)
    );
    assert_eq!(
        host.conn
            .respond(Instant(0), first.ticket, &serde_json::json!({})),
        Err(UsageError::WrongKind)
    );
    host.conn
        .respond_ask_user(Instant(0), first.ticket, AskUserAnswer::Answered("blue"))
        .unwrap();
    host.conn
        .respond_ask_user(Instant(0), second.ticket, AskUserAnswer::Cancelled)
        .unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":"q1","result":{"outcome":"answered","text":"blue"}}"#,
            r#"{"jsonrpc":"2.0","id":"q2","result":{"outcome":"cancelled"}}"#
        ]
    );
    assert_eq!(
        UsageError::WrongKind.to_string(),
        "the answer does not fit the request's method"
    );
}

#[test]
fn requests_before_initialize_get_32002() {
    let mut host = Host::new(Serves::EVERYTHING);
    host.agent(&request(
        "1",
        "session/request_permission",
        r#"{"sessionId":"s1"}"#,
    ));
    host.events();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"session/request_permission called before initialize handshake"}}"#
        ]
    );
}

#[test]
fn requests_for_unknown_sessions_or_without_session_are_refused() {
    let mut host = Host::with_session(Serves::EVERYTHING);
    host.agent(&request(
        "1",
        "session/request_permission",
        r#"{"sessionId":"zz","toolCall":{"toolCallId":"t"},"options":[]}"#,
    ));
    host.agent(&request("2", "fs/read_text_file", r#"{"path":"/a"}"#));
    host.agent(&request("3", "fs/read_text_file", r#"{"sessionId":"s1"}"#));
    let events = host.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"unknown sessionId: zz"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: fs/read_text_file.sessionId must be a string"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: fs/read_text_file.path is required"}}"#,
        ]
    );
}

#[test]
fn extension_methods_are_handed_over_when_declared() {
    let mut serves = Serves::NOTHING;
    serves.extension_methods = true;
    let mut host = Host::with_session(serves);
    host.agent(&request("5", "_acme/ping", r#"{"n":1}"#));
    let events = host.events();
    let [ClientEvent::Request(req)] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(
        (req.method, req.name.as_str()),
        (AgentMethod::Other, "_acme/ping")
    );
    host.conn
        .respond(Instant(0), req.ticket, &serde_json::json!({"pong":true}))
        .unwrap();
    assert_eq!(
        host.sent(),
        [r#"{"jsonrpc":"2.0","id":5,"result":{"pong":true}}"#]
    );
}

#[test]
fn cancel_request_from_the_agent_is_answered_32800_and_reported() {
    let mut host = Host::with_session(Serves::EVERYTHING);
    host.agent(&request(
        "9",
        "fs/read_text_file",
        r#"{"sessionId":"s1","path":"/a"}"#,
    ));
    let events = host.events();
    let [ClientEvent::Request(req)] = events.as_slice() else {
        panic!("{events:?}")
    };
    host.agent(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":9}}"#);
    let events = host.events();
    assert_eq!(
        events,
        [ClientEvent::RequestSettled {
            ticket: req.ticket,
            kind: MethodKind::Fs,
            how: Settle::CancelRequested
        }]
    );
    assert_eq!(
        host.sent(),
        [r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32800,"message":"Request cancelled"}}"#]
    );
    assert_eq!(
        host.conn
            .respond(Instant(0), req.ticket, &serde_json::json!({"content":""})),
        Err(UsageError::AlreadySettled)
    );
}

#[test]
fn other_notifications_are_delivered_and_responses_to_unknown_ids_reported() {
    let mut host = Host::with_session(Serves::NOTHING);
    host.agent(
        r#"{"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"e"}}"#,
    );
    host.agent(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#);
    host.agent(r#"{"jsonrpc":"2.0","id":"1","result":{}}"#);
    host.agent("[1,2]");
    let events = host.events();
    assert_eq!(events.len(), 4, "{events:?}");
    assert!(
        matches!(&events[0], ClientEvent::Notification { method, .. } if method.as_str() == "elicitation/complete")
    );
    assert_eq!(
        events[1],
        ClientEvent::PeerViolation(AgentViolation::UnknownResponse)
    );
    assert_eq!(
        events[2],
        ClientEvent::PeerViolation(AgentViolation::UnknownResponse)
    );
    assert_eq!(
        events[3],
        ClientEvent::PeerViolation(AgentViolation::RejectedLine {
            code: ErrorCode::INVALID_REQUEST
        })
    );
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected JSON object"}}"#
        ]
    );
}
