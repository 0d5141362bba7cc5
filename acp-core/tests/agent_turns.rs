//! Prompt turns: one per session, concurrent sessions, content rules, update ordering,
//! cancellation in all its forms (R-TURN-1 … R-TURN-5, R-CANCEL-1 … R-CANCEL-4).
#![cfg(feature = "std")]

mod agent_support;

use acp_core::conn::agent::{AgentEvent, RawUpdate, TurnEnd};
use acp_core::machine::UsageError;
use acp_core::machine::turn::StopReason;
use acp_core::schema::{ContentBlock, ContentChunk, SessionUpdate, ToolCall};
use acp_core::wire::ErrorCode;
use agent_support::{Harness, chunk_line};

fn ready() -> Harness {
    let mut h = Harness::new();
    h.initialize("{}");
    h.open_session("s1");
    h
}

fn chunk(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(text)))
}

#[test]
fn a_turn_sends_updates_then_exactly_one_answer() {
    let mut h = ready();
    let ticket = h.prompt(7, "s1");
    h.agent.send_update("s1", &chunk("hello")).unwrap();
    assert_eq!(
        h.agent.end_turn("s1", StopReason::EndTurn),
        Ok(StopReason::EndTurn)
    );
    assert_eq!(
        h.take_lines(),
        [
            chunk_line("s1", "hello"),
            r#"{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}"#.to_string(),
        ]
    );
    assert_eq!(
        h.agent.end_turn("s1", StopReason::EndTurn),
        Err(UsageError::NoTurn)
    );
    assert_eq!(
        h.agent.send_update("s1", &chunk("late")),
        Err(UsageError::TurnAnswered),
        "no update after the turn's response"
    );
    assert_eq!(
        h.agent
            .respond_error(ticket, acp_core::wire::ErrorCode::INTERNAL_ERROR, "x"),
        Err(UsageError::AlreadySettled)
    );
    assert!(h.take_lines().is_empty());
}

#[test]
fn session_level_updates_are_allowed_outside_turns_but_not_before_the_session_exists() {
    let mut h = Harness::new();
    h.initialize("{}");
    let commands =
        RawUpdate::new(r#"{"sessionUpdate":"available_commands_update","availableCommands":[]}"#)
            .unwrap();
    h.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#,
    );
    let ticket = h.new_session_ticket();
    assert_eq!(
        h.agent.send_update("s9", &commands),
        Err(UsageError::UnknownSession),
        "never before the session/new response"
    );
    h.agent.accept_new_session_id(ticket, "s9").unwrap();
    h.agent.send_update("s9", &commands).unwrap();
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s9"}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s9","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}"#,
        ]
    );
    assert_eq!(
        h.agent.send_update("s9", &chunk("x")),
        Err(UsageError::TurnAnswered),
        "turn updates need a turn"
    );
}

#[test]
fn a_second_prompt_on_a_busy_session_is_refused_while_other_sessions_run() {
    let mut h = ready();
    h.open_session("s2");
    h.prompt(1, "s1");
    h.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"again"}]}}"#);
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"session s1 already has an active turn"}}"#
        ]
    );
    h.take_events();
    h.prompt(3, "s2");
    h.agent.end_turn("s2", StopReason::MaxTokens).unwrap();
    h.agent.end_turn("s1", StopReason::Refusal).unwrap();
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"max_tokens"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"refusal"}}"#,
        ]
    );
}

#[test]
fn prompt_validation_texts() {
    let mut h = ready();
    let cases = [
        (
            r#"{"sessionId":"s1","prompt":[]}"#,
            -32602,
            "Invalid params: session/prompt.prompt must not be empty",
        ),
        (
            r#"{"sessionId":"nope","prompt":[{"type":"text","text":"x"}]}"#,
            -32600,
            "unknown sessionId: nope",
        ),
        (
            r#"{"sessionId":"s1","prompt":[{"type":"text","text":"x"},{"type":"audio","data":"AA==","mimeType":"audio/wav"}]}"#,
            -32602,
            "Invalid params: session/prompt.prompt[1]: block type 'audio' is not yet supported (v1 supports 'text', 'resource_link', and 'image')",
        ),
        (
            r#"{"sessionId":"s1","prompt":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}"#,
            -32602,
            "Invalid params: session/prompt.prompt[0]: block type 'resource' is not yet supported (v1 supports 'text', 'resource_link', and 'image')",
        ),
        (
            r#"{"sessionId":"s1","prompt":[{"type":"video"}]}"#,
            -32602,
            "Invalid params: session/prompt.prompt[0]: unknown block type 'video'",
        ),
    ];
    for (i, (params, code, message)) in cases.iter().enumerate() {
        h.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"session/prompt","params":{params}}}"#
        ));
        assert_eq!(
            h.take_lines(),
            [format!(
                r#"{{"jsonrpc":"2.0","id":{i},"error":{{"code":{code},"message":"{message}"}}}}"#
            )],
            "{params}"
        );
    }
    // text, resource_link and an advertised image are accepted.
    h.send(r#"{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"a"},{"type":"resource_link","uri":"file:///a","name":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]}}"#);
    let events = h.take_events();
    assert_eq!(events.len(), 6, "five refusals reported, then the prompt");
    match events.last() {
        Some(AgentEvent::Prompt { params, .. }) => {
            assert_eq!(h.agent.prompt(*params).map(|p| p.len()), Some(3))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn cancel_as_a_notification_forces_cancelled_and_is_idempotent() {
    let mut h = ready();
    h.prompt(4, "s1");
    h.agent.send_update("s1", &chunk("partial")).unwrap();
    h.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#);
    h.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#);
    assert_eq!(
        h.take_events(),
        [AgentEvent::Cancelled {
            session: acp_core::machine::SessionId::new("s1").unwrap()
        }]
    );
    assert_eq!(
        h.agent.end_turn("s1", StopReason::EndTurn),
        Ok(StopReason::Cancelled)
    );
    assert_eq!(
        h.take_lines(),
        [
            chunk_line("s1", "partial"),
            r#"{"jsonrpc":"2.0","id":4,"result":{"stopReason":"cancelled"}}"#.to_string(),
        ]
    );
}

#[test]
fn a_failed_turn_after_cancel_still_answers_cancelled_and_otherwise_32603() {
    let mut h = ready();
    h.prompt(1, "s1");
    assert_eq!(
        h.agent.fail_turn("s1", "model exploded"),
        Ok(TurnEnd::Failed)
    );
    h.prompt(2, "s1");
    h.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#);
    h.take_events();
    assert_eq!(
        h.agent.fail_turn("s1", "model exploded"),
        Ok(TurnEnd::Cancelled)
    );
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error: model exploded"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#,
        ]
    );
}

#[test]
fn a_turn_failed_with_its_own_code_answers_that_code_and_message_unless_cancelled() {
    let mut h = ready();
    h.prompt(1, "s1");
    let auth = "Authentication required: set OPENAI_API_KEY (LLM_PROVIDER=openai)";
    assert_eq!(
        h.agent.fail_turn_with("s1", ErrorCode(-32000), auth),
        Ok(TurnEnd::Failed)
    );
    h.prompt(2, "s1");
    h.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#);
    h.take_events();
    assert_eq!(
        h.agent.fail_turn_with("s1", ErrorCode(-32000), auth),
        Ok(TurnEnd::Cancelled)
    );
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Authentication required: set OPENAI_API_KEY (LLM_PROVIDER=openai)"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#,
        ]
    );
}

#[test]
fn cancel_as_a_request_answers_empty_object_or_unknown_session() {
    let mut h = ready();
    h.send(r#"{"jsonrpc":"2.0","id":5,"method":"session/cancel","params":{"sessionId":"s1"}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":6,"method":"session/cancel","params":{"sessionId":"ghost"}}"#);
    h.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"ghost"}}"#);
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"unknown sessionId: ghost"}}"#,
        ]
    );
    assert_eq!(h.agent.requests_owed(), 0);
}

#[test]
fn cancel_request_for_a_prompt_cancels_the_turn_and_for_others_answers_32800() {
    let mut h = ready();
    h.prompt(10, "s1");
    h.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":10}}"#);
    assert!(matches!(
        h.take_events().as_slice(),
        [AgentEvent::Cancelled { .. }]
    ));
    h.agent.end_turn("s1", StopReason::EndTurn).unwrap();
    h.send(r#"{"jsonrpc":"2.0","id":"m","method":"session/set_mode","params":{"sessionId":"s1","modeId":"plan"}}"#);
    let ticket = match h.take_events().as_slice() {
        [AgentEvent::Request { ticket, .. }] => *ticket,
        other => panic!("{other:?}"),
    };
    h.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"m"}}"#);
    assert_eq!(h.take_events(), [AgentEvent::RequestCancelled { ticket }]);
    assert_eq!(
        h.agent.accept_mode(ticket, "plan"),
        Err(UsageError::AlreadySettled)
    );
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":10,"result":{"stopReason":"cancelled"}}"#,
            r#"{"jsonrpc":"2.0","id":"m","error":{"code":-32800,"message":"Request cancelled"}}"#,
        ]
    );
}

#[test]
fn backpressure_refuses_updates_above_the_high_water_mark() {
    let mut config = agent_support::config();
    config.limits.outbox_high_water = 2048;
    config.limits.outbox_limit = 8192;
    let mut h: Harness = Harness::with_config(config);
    h.initialize("{}");
    h.open_session("s1");
    h.prompt(1, "s1");
    let text = "x".repeat(500);
    let mut sent = 0;
    while h.agent.send_update("s1", &chunk(&text)).is_ok() {
        sent += 1;
        assert!(sent < 100, "never blocks");
    }
    assert_eq!(
        h.agent.send_update("s1", &chunk(&text)),
        Err(UsageError::WouldBlock)
    );
    assert!(!h.agent.has_room_for_updates());
    assert_eq!(h.take_lines().len(), sent);
    h.agent.send_update("s1", &chunk(&text)).unwrap();
}

#[test]
fn tool_call_updates_announce_ids_for_the_running_turn() {
    let mut h = ready();
    h.prompt(1, "s1");
    let call = SessionUpdate::ToolCall(ToolCall::new("call_1", "Read"));
    h.agent.send_update("s1", &call).unwrap();
    let line = h.take_lines().remove(0);
    assert_eq!(
        line,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Read"}}}"#
    );
}

/// The call order is checked in debug builds: feeding input with events still queued is a
/// bug in the driver.
#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "drain poll_event() until None after every input")]
fn feeding_input_before_draining_events_panics_in_debug_builds() {
    let mut agent: acp_core::AgentConnection<acp_core::conn::Growable> =
        acp_core::AgentConnection::new(agent_support::config());
    let line = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";
    agent.handle_bytes(acp_core::Instant(0), line);
    agent.handle_bytes(acp_core::Instant(0), line);
}

/// R-STORE-7: `send_text_chunk` writes the line `send_update` writes for the same plain chunk
/// and returns the text as escaped in it; it follows the same rules: refused once the turn is
/// answered (R-TURN-3), for an unknown session, and above the high-water mark.
#[test]
fn a_text_chunk_sent_pre_escaped_is_the_typed_chunks_line_under_the_same_rules() {
    use acp_core::wire::encode::TextChunkKind;

    let mut h = ready();
    h.prompt(7, "s1");
    let text = "a \"quoted\"\nline — ok";
    let escaped = h
        .agent
        .send_text_chunk("s1", TextChunkKind::AgentMessage, text)
        .unwrap()
        .to_owned();
    assert_eq!(escaped, r#"a \"quoted\"\nline — ok"#);
    h.agent.send_update("s1", &chunk(text)).unwrap();
    let lines = h.take_lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], lines[1]);
    assert_eq!(lines[0], chunk_line("s1", &escaped));
    assert_eq!(
        h.agent
            .send_text_chunk("s9", TextChunkKind::AgentThought, "x")
            .map(str::to_owned),
        Err(UsageError::UnknownSession)
    );
    h.agent.end_turn("s1", StopReason::EndTurn).unwrap();
    assert_eq!(
        h.agent
            .send_text_chunk("s1", TextChunkKind::AgentMessage, "late")
            .map(str::to_owned),
        Err(UsageError::TurnAnswered)
    );
    h.take_lines();
    // Above the high-water mark: refused, nothing queued.
    h.prompt(8, "s1");
    let big = "x".repeat(4096);
    let refused = loop {
        match h
            .agent
            .send_text_chunk("s1", TextChunkKind::AgentMessage, &big)
        {
            Ok(_) => {}
            Err(error) => break error,
        }
    };
    assert_eq!(refused, UsageError::WouldBlock);
    let queued = h.agent.poll_transmit().len();
    assert_eq!(
        h.agent
            .send_text_chunk("s1", TextChunkKind::AgentMessage, "more")
            .map(str::to_owned),
        Err(UsageError::WouldBlock)
    );
    assert_eq!(h.agent.poll_transmit().len(), queued);
}
