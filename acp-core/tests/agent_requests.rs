//! Requests the agent sends: permission, ask_user, fs/terminal, $/cancel_request, and EOF
//! (R-PERM-1 … R-PERM-4, R-ASK-1, R-FS-1, R-CANCEL-3 … R-CANCEL-5, R-RPC-11).
#![cfg(feature = "std")]

mod agent_support;

use core::time::Duration;

use acp_core::conn::agent::{AgentEvent, ClientViolation};
use acp_core::machine::permission::{PermissionChoice, PermissionDecision, RejectReason};
use acp_core::machine::turn::StopReason;
use acp_core::machine::{RequestId, SessionId, UsageError};
use acp_core::schema::{
    AskUserRequest, ContentBlock, ContentChunk, ReadTextFileRequest, SessionUpdate, ToolCall,
    ToolCallUpdate, ToolKind,
};
use acp_core::wire::ErrorCode;
use agent_support::Harness;

fn in_turn(client_caps: &str) -> Harness {
    let mut h = Harness::new();
    h.initialize(client_caps);
    h.open_session("s1");
    h.prompt(1, "s1");
    h
}

fn announce(h: &mut Harness, id: &str) -> ToolCallUpdate {
    let mut call = ToolCall::new(id, "Run ls");
    call.kind = Some(ToolKind::Execute);
    h.agent
        .send_update("s1", &SessionUpdate::ToolCall(call))
        .unwrap();
    h.take_lines();
    let mut update = ToolCallUpdate::new(id);
    update.kind = Some(ToolKind::Execute);
    update.title = Some("Run ls".into());
    update
}

fn sid(s: &str) -> SessionId {
    SessionId::new(s).unwrap()
}

fn resolved(h: &mut Harness) -> (RequestId, PermissionDecision, bool) {
    h.drain();
    match h.take_events().as_slice() {
        [
            AgentEvent::PermissionResolved {
                request,
                decision,
                remembered,
                session,
            },
        ] => {
            assert_eq!(*session, sid("s1"));
            (*request, *decision, *remembered)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn permission_offers_four_options_for_an_announced_tool_call() {
    let mut h = in_turn("{}");
    let unannounced = ToolCallUpdate::new("call_x");
    assert_eq!(
        h.agent.request_permission(h.now, "s1", &unannounced, None),
        Err(UsageError::UnknownToolCall)
    );
    let call = announce(&mut h, "call_1");
    let id = h
        .agent
        .request_permission(h.now, "s1", &call, None)
        .unwrap();
    assert_eq!(id, RequestId(0));
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"call_1","kind":"execute","title":"Run ls"},"options":[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"},{"optionId":"allow_always","name":"Always allow","kind":"allow_always"},{"optionId":"reject_once","name":"Reject once","kind":"reject_once"},{"optionId":"reject_always","name":"Always reject","kind":"reject_always"}]}}"#
        ]
    );
    h.send(r#"{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}"#);
    assert_eq!(
        resolved(&mut h),
        (
            id,
            PermissionDecision::Allowed(PermissionChoice::AllowOnce),
            false
        )
    );
    assert_eq!(h.agent.requests_in_flight(), 0);
}

#[test]
fn permission_reads_flat_answers_and_treats_anything_odd_as_rejected() {
    let mut h = in_turn("{}");
    let call = announce(&mut h, "call_1");
    let answers = [
        (
            r#"{"result":{"outcome":"selected","optionId":"reject_once"}}"#,
            PermissionDecision::Rejected(RejectReason::Chosen(PermissionChoice::RejectOnce)),
        ),
        (
            r#"{"result":{"outcome":{"outcome":"selected","optionId":"yes"}}}"#,
            PermissionDecision::Rejected(RejectReason::UnknownOption),
        ),
        (
            r#"{"result":{"answer":42}}"#,
            PermissionDecision::Rejected(RejectReason::Malformed),
        ),
        (
            r#"{"error":{"code":-32601,"message":"Method not found"}}"#,
            PermissionDecision::Rejected(RejectReason::Error(ErrorCode::METHOD_NOT_FOUND)),
        ),
        (
            r#"{"error":{"code":"bad","message":1}}"#,
            PermissionDecision::Rejected(RejectReason::Malformed),
        ),
        (
            r#"{"result":{"outcome":{"outcome":"cancelled"}}}"#,
            PermissionDecision::Cancelled,
        ),
    ];
    for (answer, expected) in answers {
        let id = h
            .agent
            .request_permission(h.now, "s1", &call, None)
            .unwrap();
        h.take_lines();
        let body = &answer[1..];
        h.send(&format!(r#"{{"jsonrpc":"2.0","id":{},{body}"#, id.0));
        assert_eq!(resolved(&mut h), (id, expected, false), "{answer}");
    }
}

#[test]
fn permission_times_out_as_rejected_and_late_answers_are_reported() {
    let mut h = in_turn("{}");
    let call = announce(&mut h, "call_1");
    let id = h
        .agent
        .request_permission(h.now, "s1", &call, Some(Duration::from_millis(500)))
        .unwrap();
    assert_eq!(h.take_lines().len(), 1);
    assert_eq!(h.agent.poll_timeout(), Some(acp_core::Instant(500)));
    h.advance_to(499);
    assert!(h.take_events().is_empty());
    h.advance_to(500);
    assert_eq!(
        resolved(&mut h),
        (
            id,
            PermissionDecision::Rejected(RejectReason::TimedOut),
            false
        )
    );
    h.send(r#"{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}"#);
    assert_eq!(
        h.take_events(),
        [AgentEvent::PeerViolation(ClientViolation::LateResponse(id))]
    );
    h.send(r#"{"jsonrpc":"2.0","id":77,"result":{}}"#);
    assert_eq!(
        h.take_events(),
        [AgentEvent::PeerViolation(ClientViolation::UnknownResponse)]
    );
    assert!(h.take_lines().is_empty(), "responses are never answered");
}

#[test]
fn always_answers_are_remembered_per_session_per_tool() {
    let mut h = in_turn("{}");
    let call = announce(&mut h, "call_1");
    let first = h
        .agent
        .request_permission(h.now, "s1", &call, None)
        .unwrap();
    h.take_lines();
    h.send(&format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"outcome":{{"outcome":"selected","optionId":"allow_always"}}}}}}"#, first.0));
    resolved(&mut h);
    let call2 = announce(&mut h, "call_2");
    let second = h
        .agent
        .request_permission(h.now, "s1", &call2, None)
        .unwrap();
    assert!(h.take_lines().is_empty(), "nothing is asked again");
    assert_eq!(
        resolved(&mut h),
        (
            second,
            PermissionDecision::Allowed(PermissionChoice::AllowAlways),
            true
        )
    );
    assert_ne!(first, second);
    // Another session asks again.
    h.agent.end_turn("s1", StopReason::EndTurn).unwrap();
    h.take_lines();
    h.open_session("s2");
    h.prompt(5, "s2");
    let mut other = ToolCall::new("call_3", "Run ls");
    other.kind = Some(ToolKind::Execute);
    h.agent
        .send_update("s2", &SessionUpdate::ToolCall(other))
        .unwrap();
    let mut update = ToolCallUpdate::new("call_3");
    update.kind = Some(ToolKind::Execute);
    update.title = Some("Run ls".into());
    h.take_lines();
    h.agent
        .request_permission(h.now, "s2", &update, None)
        .unwrap();
    assert_eq!(h.take_lines().len(), 1);
}

#[test]
fn cancel_settles_pending_permission_and_ask_user_at_once() {
    let mut h = in_turn("{}");
    let call = announce(&mut h, "call_1");
    let permission = h
        .agent
        .request_permission(h.now, "s1", &call, None)
        .unwrap();
    let ask = h
        .agent
        .ask_user(h.now, &AskUserRequest::new("s1", "Which file?"), None)
        .unwrap();
    let lines = h.take_lines();
    assert_eq!(
        lines[1],
        r#"{"jsonrpc":"2.0","id":1,"method":"_agentao.cn/ask_user","params":{"sessionId":"s1","question":"Which file?"}}"#
    );
    h.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#);
    assert_eq!(
        h.take_events(),
        [
            AgentEvent::PermissionResolved {
                request: permission,
                session: sid("s1"),
                decision: PermissionDecision::Cancelled,
                remembered: false
            },
            AgentEvent::AskUserAnswered {
                request: ask,
                session: sid("s1"),
                text: "(user unavailable)".into(),
                answered: false
            },
            AgentEvent::Cancelled { session: sid("s1") },
        ]
    );
    // Late answers from the client are ignored.
    h.send(r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":"answered","text":"a.txt"}}"#);
    assert_eq!(
        h.take_events(),
        [AgentEvent::PeerViolation(ClientViolation::LateResponse(
            ask
        ))]
    );
    assert_eq!(
        h.agent.request_permission(h.now, "s1", &call, None),
        Err(UsageError::NoTurn)
    );
    h.agent.end_turn("s1", StopReason::EndTurn).unwrap();
    assert_eq!(
        h.take_lines(),
        [r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}"#]
    );
}

#[test]
fn ask_user_gives_the_text_or_the_sentinel() {
    let mut h = in_turn("{}");
    let answers = [
        (
            r#""result":{"outcome":"answered","text":"blue"}"#,
            "blue",
            true,
        ),
        (
            r#""result":{"outcome":"answered","text":""}"#,
            "(user unavailable)",
            false,
        ),
        (
            r#""result":{"outcome":"cancelled"}"#,
            "(user unavailable)",
            false,
        ),
        (r#""result":{"answer":"x"}"#, "(user unavailable)", false),
        (r#""result":"blue""#, "(user unavailable)", false),
        (
            r#""error":{"code":-32601,"message":"Method not found"}"#,
            "(user unavailable)",
            false,
        ),
    ];
    for (body, text, answered) in answers {
        let id = h
            .agent
            .ask_user(h.now, &AskUserRequest::new("s1", "Colour?"), None)
            .unwrap();
        h.take_lines();
        h.send(&format!(r#"{{"jsonrpc":"2.0","id":{},{body}}}"#, id.0));
        assert_eq!(
            h.take_events(),
            [AgentEvent::AskUserAnswered {
                request: id,
                session: sid("s1"),
                text: text.into(),
                answered
            }],
            "{body}"
        );
    }
    h.agent
        .send_update(
            "s1",
            &SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(
                "still running",
            ))),
        )
        .unwrap();
}

#[test]
fn fs_and_terminal_are_refused_unless_the_client_advertised_them() {
    let mut h = in_turn("{}");
    let read: ReadTextFileRequest =
        serde_json::from_str(r#"{"sessionId":"s1","path":"/w/a"}"#).unwrap();
    assert_eq!(
        h.agent.read_text_file(h.now, &read, None),
        Err(UsageError::CapabilityNotAdvertised)
    );
    let mut h = in_turn(r#"{"fs":{"readTextFile":true}}"#);
    let id = h.agent.read_text_file(h.now, &read, None).unwrap();
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/w/a"}}"#
        ]
    );
    h.send(r#"{"jsonrpc":"2.0","id":0,"result":{"content":"hello"}}"#);
    match h.take_events().as_slice() {
        [
            AgentEvent::Response {
                request,
                result: Ok(acp_core::schema::ClientResponse::ReadTextFile(r)),
            },
        ] => {
            assert_eq!((*request, r.content.as_str()), (id, "hello"));
        }
        other => panic!("{other:?}"),
    }
    let id = h.agent.read_text_file(h.now, &read, None).unwrap();
    h.send(
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found: /w/a"}}"#,
    );
    match h.take_events().as_slice() {
        [
            AgentEvent::Response {
                request,
                result: Err(e),
            },
        ] => {
            assert_eq!(
                (*request, e.code, e.message.as_str()),
                (id, ErrorCode(-32002), "Resource not found: /w/a")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn cancel_request_of_ours_is_sent_and_settles_when_answered() {
    let mut h = in_turn(r#"{"fs":{"readTextFile":true}}"#);
    let read: ReadTextFileRequest =
        serde_json::from_str(r#"{"sessionId":"s1","path":"/w/a"}"#).unwrap();
    let id = h.agent.read_text_file(h.now, &read, None).unwrap();
    h.take_lines();
    h.agent.cancel_request(id).unwrap();
    assert_eq!(
        h.take_lines(),
        [r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":0}}"#]
    );
    assert_eq!(
        h.agent.requests_in_flight(),
        1,
        "still pending until the answer"
    );
    h.send(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32800,"message":"Request cancelled"}}"#);
    match h.take_events().as_slice() {
        [AgentEvent::Response { result: Err(e), .. }] => {
            assert_eq!(e.code, ErrorCode::REQUEST_CANCELLED)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(h.agent.cancel_request(id), Err(UsageError::AlreadySettled));
}

#[test]
fn eof_cancels_turns_settles_everything_and_names_sessions_to_save() {
    let mut h = in_turn("{}");
    h.open_session("s2");
    let call = announce(&mut h, "call_1");
    let permission = h
        .agent
        .request_permission(h.now, "s1", &call, None)
        .unwrap();
    h.send(r#"{"jsonrpc":"2.0","id":"mode","method":"session/set_mode","params":{"sessionId":"s2","modeId":"plan"}}"#);
    h.take_events();
    h.take_lines();
    // A last line without newline is still processed.
    h.agent.handle_bytes(h.now, br#"{"jsonrpc":"2.0","id":"last","method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#);
    h.eof();
    let events = h.take_events();
    assert!(
        matches!(events[0], AgentEvent::NewSession { .. }),
        "the last line was served"
    );
    assert_eq!(
        events[1..],
        [
            AgentEvent::SaveSession { session: sid("s1") },
            AgentEvent::SaveSession { session: sid("s2") },
            AgentEvent::Cancelled { session: sid("s1") },
            AgentEvent::PermissionResolved {
                request: permission,
                session: sid("s1"),
                decision: PermissionDecision::Cancelled,
                remembered: false
            },
            AgentEvent::Closed,
        ]
    );
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}"#,
            r#"{"jsonrpc":"2.0","id":"mode","error":{"code":-32800,"message":"Request cancelled: connection closed"}}"#,
            r#"{"jsonrpc":"2.0","id":"last","error":{"code":-32800,"message":"Request cancelled: connection closed"}}"#,
        ]
    );
    assert_eq!(
        (h.agent.requests_owed(), h.agent.requests_in_flight()),
        (0, 0),
        "nothing pending after EOF"
    );
    assert_eq!(
        h.agent.end_turn("s1", StopReason::EndTurn),
        Err(UsageError::Closed)
    );
    assert!(h.agent.is_closed());
}

#[test]
fn a_null_result_reads_as_empty_where_every_member_is_optional() {
    // R-RPC-5: some SDKs answer `null` where the schema has `{}`.
    use acp_core::schema::{ClientResponse, TerminalRequest, WriteTextFileRequest};
    let mut h = in_turn(r#"{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}"#);
    let write: WriteTextFileRequest =
        serde_json::from_str(r#"{"sessionId":"s1","path":"/w/a","content":"x"}"#).unwrap();
    let terminal: TerminalRequest =
        serde_json::from_str(r#"{"sessionId":"s1","terminalId":"t1"}"#).unwrap();
    let mut next = 0;
    let mut answer_null = |h: &mut Harness, id: RequestId| {
        h.take_lines();
        h.send(&format!(r#"{{"jsonrpc":"2.0","id":{next},"result":null}}"#));
        next += 1;
        match h.take_events().as_slice() {
            [AgentEvent::Response { request, result }] => {
                assert_eq!(*request, id);
                result.clone()
            }
            other => panic!("{other:?}"),
        }
    };
    let id = h.agent.write_text_file(h.now, &write, None).unwrap();
    assert!(matches!(
        answer_null(&mut h, id),
        Ok(ClientResponse::WriteTextFile(_))
    ));
    for (method, empty) in [
        ("terminal/wait_for_exit", r#"{}"#),
        ("terminal/kill", "{}"),
        ("terminal/release", "{}"),
    ] {
        let id = h.agent.terminal(h.now, method, &terminal, None).unwrap();
        let result = answer_null(&mut h, id).unwrap_or_else(|e| panic!("{method}: {e:?}"));
        assert_eq!(result.method().name(), method);
        assert_eq!(serde_json::to_string(&result).unwrap(), empty, "{method}");
    }
    // Where a member is required, `null` is still a malformed answer.
    let read: ReadTextFileRequest =
        serde_json::from_str(r#"{"sessionId":"s1","path":"/w/a"}"#).unwrap();
    let id = h.agent.read_text_file(h.now, &read, None).unwrap();
    let error = answer_null(&mut h, id).unwrap_err();
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
    assert!(
        error
            .message
            .starts_with("Internal error: malformed response: fs/read_text_file result"),
        "{}",
        error.message
    );
}
