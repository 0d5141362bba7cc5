//! The agent connection over fixed storage (`Fixed`): the handshake and a whole prompt turn.
//! Run it without an allocator too: `cargo test -p acp-core --no-default-features --test
//! agent_noalloc`. Events are the same in both builds: request params are read through the
//! connection (`params`, `request_view`) while the events of an input are drained.

use acp_core::Instant;
use acp_core::conn::agent::{
    AgentConfig, AgentConnection, AgentEvent, AgentInfo, Fixed, RawToolCall, RawUpdate,
};
use acp_core::machine::UsageError;
use acp_core::machine::handshake::Capabilities;
use acp_core::machine::turn::StopReason;

type Small = Fixed<1024, 4096, 2, 4, 8>;

fn agent() -> AgentConnection<Small> {
    AgentConnection::new(AgentConfig::agentao(AgentInfo::new("tiny", "Tiny", "1")))
}

/// Feeds `input`, drains events into `events`, returns the output lines.
fn step(
    agent: &mut AgentConnection<Small>,
    input: &str,
    events: &mut Vec<AgentEvent>,
) -> Vec<String> {
    // A request's params are kept until the next input, so lines after one wait: feed the
    // rest after draining (the call order).
    let mut rest = input.as_bytes();
    loop {
        let taken = agent.handle_bytes(Instant(0), rest);
        rest = &rest[taken..];
        while let Some(event) = agent.poll_event() {
            events.push(event);
        }
        if rest.is_empty() {
            return take(agent);
        }
        assert!(taken > 0 || agent.poll_transmit().is_empty(), "no progress");
    }
}

fn take(agent: &mut AgentConnection<Small>) -> Vec<String> {
    let text = String::from_utf8(agent.poll_transmit().to_vec()).unwrap();
    agent.transmitted(text.len());
    text.lines().map(String::from).collect()
}

#[test]
fn handshake_and_a_prompt_turn_over_fixed_storage() {
    let mut agent = agent();
    let mut events = Vec::new();
    let out = step(
        &mut agent,
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":3,\"clientCapabilities\":{\"terminal\":true}}}\n",
        &mut events,
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false}},"authMethods":[],"agentInfo":{"name":"tiny","title":"Tiny","version":"1"},"_meta":{"_agentao.cn/extensions":[{"method":"_agentao.cn/ask_user","description":"Request free-form text input from the user."},{"method":"_agentao.cn/set_model","description":"Switch the session's model (model-only, secret-free)."}]}}}"#
        ]
    );
    assert!(matches!(
        events.as_slice(),
        [AgentEvent::Initialized { client, .. }] if *client == Capabilities::TERMINAL
    ));
    events.clear();

    let out = step(
        &mut agent,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/w\",\"mcpServers\":[]}}\n",
        &mut events,
    );
    assert!(out.is_empty());
    let ticket = match events.as_slice() {
        [AgentEvent::NewSession { ticket, .. }] => *ticket,
        other => panic!("{other:?}"),
    };
    events.clear();
    agent.accept_new_session_id(ticket, "s1").unwrap();
    assert_eq!(
        take(&mut agent),
        [r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#]
    );

    step(
        &mut agent,
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n",
        &mut events,
    );
    match events.as_slice() {
        [AgentEvent::Prompt { session, .. }] => assert_eq!(session.as_str(), "s1"),
        other => panic!("{other:?}"),
    }
    if let AgentEvent::Prompt { params, .. } = &events[0] {
        assert_eq!(
            agent.params(*params),
            Some(r#"{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}"#)
        );
        let Some(Ok(acp_core::view::ClientRequestView::Prompt(prompt))) =
            agent.request_view("session/prompt", *params)
        else {
            panic!("a prompt view")
        };
        let first = prompt.prompt.iter().next().unwrap();
        assert_eq!(first.as_text().and_then(|t| t.as_plain()), Some("hi"));
    }
    let update = RawUpdate::new(
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}"#,
    )
    .unwrap();
    agent.send_update("s1", &update).unwrap();
    agent.end_turn("s1", StopReason::EndTurn).unwrap();
    assert_eq!(
        agent.send_update("s1", &update),
        Err(UsageError::TurnAnswered)
    );
    assert_eq!(
        take(&mut agent),
        [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
        ]
    );
}

#[test]
fn cancel_and_eof_over_fixed_storage() {
    let mut agent = agent();
    agent.restore_handshake(Capabilities::empty());
    agent.restore_session("s1").unwrap();
    let mut events = Vec::new();
    step(
        &mut agent,
        "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\",\"prompt\":[{\"type\":\"text\",\"text\":\"x\"}]}}\n{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s1\"}}\n",
        &mut events,
    );
    assert!(matches!(
        events.as_slice(),
        [AgentEvent::Prompt { .. }, AgentEvent::Cancelled { .. }]
    ));
    events.clear();
    assert_eq!(
        agent.end_turn("s1", StopReason::EndTurn),
        Ok(StopReason::Cancelled)
    );
    assert_eq!(
        take(&mut agent),
        [r#"{"jsonrpc":"2.0","id":"p","result":{"stopReason":"cancelled"}}"#]
    );
    agent.handle_eof(Instant(5));
    while let Some(event) = agent.poll_event() {
        events.push(event);
    }
    assert!(matches!(
        events.as_slice(),
        [AgentEvent::SaveSession { .. }, AgentEvent::Closed]
    ));
    assert_eq!((agent.requests_owed(), agent.requests_in_flight()), (0, 0));
}

#[test]
fn the_fixed_line_limit_is_enforced() {
    let mut agent = agent();
    agent.restore_handshake(Capabilities::empty());
    let mut events = Vec::new();
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{{\"cwd\":\"/{}\"}}}}\n",
        "a".repeat(1100)
    );
    let out = step(&mut agent, &long, &mut events);
    assert_eq!(out.len(), 1);
    assert!(
        out[0].starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#),
        "{out:?}"
    );
    assert_eq!(agent.requests_owed(), 0);
}

/// Params are not copied into events: a request as long as the line limit allows is handed
/// over whole, and its params stay readable until the next input only.
#[test]
fn params_are_kept_whole_until_the_next_input() {
    let mut agent: AgentConnection<Fixed<8192, 8192, 2, 4, 8>> =
        AgentConnection::new(AgentConfig::agentao(AgentInfo::new("tiny", "Tiny", "1")));
    agent.restore_handshake(Capabilities::empty());
    let cwd = format!("/{}", "a".repeat(6000));
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{{\"cwd\":\"{cwd}\",\"mcpServers\":[]}}}}\n"
    );
    assert_eq!(agent.handle_bytes(Instant(0), line.as_bytes()), line.len());
    let Some(AgentEvent::NewSession { params, .. }) = agent.poll_event() else {
        panic!("a session/new event")
    };
    assert!(agent.poll_event().is_none());
    assert!(agent.poll_transmit().is_empty());
    let expected = format!("{{\"cwd\":\"{cwd}\",\"mcpServers\":[]}}");
    assert_eq!(agent.params(params), Some(expected.as_str()));
    agent.handle_bytes(Instant(0), b"");
    assert_eq!(
        agent.params(params),
        None,
        "a handle of an earlier input reads nothing"
    );
}

/// One line's params are kept at a time: lines after a request wait (backpressure) until the
/// events are drained and input is fed again; nothing is lost.
#[test]
fn a_second_request_waits_for_the_next_input() {
    let mut agent = agent();
    agent.restore_handshake(Capabilities::empty());
    let one = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/a\",\"mcpServers\":[]}}\n";
    let two = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{\"cwd\":\"/b\",\"mcpServers\":[]}}\n";
    let input = format!("{one}{two}");
    assert_eq!(agent.handle_bytes(Instant(0), input.as_bytes()), one.len());
    let Some(AgentEvent::NewSession { params, .. }) = agent.poll_event() else {
        panic!("the first session/new")
    };
    assert_eq!(
        agent.params(params),
        Some(r#"{"cwd":"/a","mcpServers":[]}"#)
    );
    assert!(agent.poll_event().is_none());
    assert_eq!(agent.handle_bytes(Instant(0), two.as_bytes()), two.len());
    let Some(AgentEvent::NewSession { params, .. }) = agent.poll_event() else {
        panic!("the second session/new")
    };
    assert_eq!(
        agent.params(params),
        Some(r#"{"cwd":"/b","mcpServers":[]}"#)
    );
}

/// A whole tool turn without an allocator (R-PERM-1, R-PERM-2, R-ASK-1): the tool call is
/// announced, permission is asked and granted, the user is asked a question and answers, the
/// turn ends. Exact lines both ways.
#[test]
fn a_permission_and_an_ask_user_turn_over_fixed_storage() {
    let mut agent = agent();
    let mut events = Vec::new();
    agent.restore_handshake(Capabilities::empty());
    agent.restore_session("s1").unwrap();
    step(
        &mut agent,
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\",\"prompt\":[{\"type\":\"text\",\"text\":\"/tool\"}]}}\n",
        &mut events,
    );
    assert!(matches!(events.as_slice(), [AgentEvent::Prompt { .. }]));
    events.clear();
    let call =
        r#"{"toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"}"#;
    let tool_call = RawToolCall::new(call, "edit write notes.txt").unwrap();
    // R-PERM-2: not announced yet.
    assert_eq!(
        agent.request_permission_raw(Instant(0), "s1", &tool_call, None),
        Err(UsageError::UnknownToolCall)
    );
    let announce = format!(r#"{{"sessionUpdate":"tool_call",{}"#, &call[1..]);
    agent
        .send_update("s1", &RawUpdate::new(&announce).unwrap())
        .unwrap();
    let permission = agent
        .request_permission_raw(Instant(0), "s1", &tool_call, None)
        .unwrap();
    assert_eq!(
        take(&mut agent),
        [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"}}}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"},"options":[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"},{"optionId":"allow_always","name":"Always allow","kind":"allow_always"},{"optionId":"reject_once","name":"Reject once","kind":"reject_once"},{"optionId":"reject_always","name":"Always reject","kind":"reject_always"}]}}"#,
        ]
    );
    step(
        &mut agent,
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"outcome\":{\"outcome\":\"selected\",\"optionId\":\"allow_once\"}}}\n",
        &mut events,
    );
    match events.as_slice() {
        [
            AgentEvent::PermissionResolved {
                request,
                decision,
                remembered: false,
                ..
            },
        ] => {
            assert_eq!(*request, permission);
            assert!(decision.is_allowed(), "{decision:?}");
        }
        other => panic!("{other:?}"),
    }
    events.clear();
    let ask = agent
        .ask_user_question(Instant(0), "s1", "Which colour?", None)
        .unwrap();
    assert_eq!(
        take(&mut agent),
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"_agentao.cn/ask_user","params":{"sessionId":"s1","question":"Which colour?"}}"#
        ]
    );
    step(
        &mut agent,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"outcome\":\"answered\",\"text\":\"blue \\u00e9\"}}\n",
        &mut events,
    );
    match events.as_slice() {
        [
            AgentEvent::AskUserAnswered {
                request,
                text,
                answered: true,
                ..
            },
        ] => {
            assert_eq!(*request, ask);
            assert_eq!(text.as_str(), "blue \u{e9}");
        }
        other => panic!("{other:?}"),
    }
    agent.end_turn("s1", StopReason::EndTurn).unwrap();
    assert_eq!(
        take(&mut agent),
        [r#"{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}"#]
    );
    assert_eq!((agent.requests_owed(), agent.requests_in_flight()), (0, 0));
}

/// Input stops while the outbox cannot take another reply, and resumes (with nothing lost)
/// once the caller writes out: memory stays bounded by the fixed storage.
#[test]
fn input_backpressure_holds_lines_until_the_outbox_is_written() {
    let mut agent: AgentConnection<Fixed<256, 2048, 2, 4, 8>> =
        AgentConnection::new(AgentConfig::agentao(AgentInfo::new("tiny", "Tiny", "1")));
    let line = "{\"jsonrpc\":\"2.0\",\"id\":12345,\"method\":\"session/new\"}\n";
    let input = line.repeat(40);
    let mut rest = input.as_bytes();
    let mut replies = Vec::new();
    let mut stalls = 0;
    // Bounded: each round writes the outbox out, which lets more input in.
    for _ in 0..1000 {
        let taken = agent.handle_bytes(Instant(0), rest);
        rest = &rest[taken..];
        while agent.poll_event().is_some() {}
        if !rest.is_empty() || agent.is_input_held() {
            stalls += 1;
        }
        let out = agent.poll_transmit().to_vec();
        agent.transmitted(out.len());
        replies.extend(String::from_utf8(out).unwrap().lines().map(String::from));
        if rest.is_empty() && !agent.is_input_held() {
            break;
        }
    }
    assert!(stalls > 0, "a 2 KiB outbox cannot take 40 replies at once");
    assert_eq!(replies.len(), 40, "every request answered once");
    assert!(replies.iter().all(|r| r
        == r#"{"jsonrpc":"2.0","id":12345,"error":{"code":-32002,"message":"session/new called before initialize handshake"}}"#));
}

#[test]
fn an_unadvertised_system_prompt_is_refused_and_an_advertised_one_passes() {
    let new_session = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/w\",\"systemPrompt\":{\"mode\":\"append\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]},\"mcpServers\":[]}}\n";
    let init = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";
    let mut events = Vec::new();
    let mut plain = agent();
    step(&mut plain, init, &mut events);
    events.clear();
    assert_eq!(
        step(&mut plain, new_session, &mut events),
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: session/new.systemPrompt is not supported (sessionCapabilities.systemPrompt is not advertised)"}}"#
        ]
    );
    assert!(
        matches!(
            events.as_slice(),
            [AgentEvent::PeerViolation(acp_core::conn::agent::ClientViolation::Refused(code))]
                if code.0 == -32602
        ),
        "refused by the connection, never handed over: {events:?}"
    );
    events.clear();

    let mut config = AgentConfig::agentao(AgentInfo::new("tiny", "Tiny", "1"));
    config.features.system_prompt = true;
    config.features.additional_directories = true;
    let mut advertised: AgentConnection<Small> = AgentConnection::new(config);
    let out = step(&mut advertised, init, &mut events);
    assert!(
        out[0].contains(r#""sessionCapabilities":{"additionalDirectories":{},"systemPrompt":{}}"#),
        "{out:?}"
    );
    events.clear();
    assert!(step(&mut advertised, new_session, &mut events).is_empty());
    assert!(
        matches!(events.as_slice(), [AgentEvent::NewSession { .. }]),
        "{events:?}"
    );
}
