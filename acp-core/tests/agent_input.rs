//! How input reaches the application: any number of pipelined requests in one buffer, fed by
//! the documented loop (R-RPC-1), and the params handles of their events, which read as the
//! request sent or as nothing, never as an empty or another request's params (R-RPC-13).
//! Nothing here relies on debug assertions: `cargo test --release` runs the same checks.

use acp_core::Instant;
use acp_core::conn::Fixed;
use acp_core::conn::agent::{AgentConfig, AgentConnection, AgentEvent, AgentInfo, Buffers};
use acp_core::machine::turn::StopReason;

fn agent<B: Buffers>() -> AgentConnection<B> {
    AgentConnection::new(AgentConfig::new(AgentInfo::new("t", "T", "1")))
}

fn init_line(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":1}}}}"#
    )
}

fn new_line(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/w","mcpServers":[]}}}}"#
    )
}

fn prompt_line(id: u32, session: &str, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":"{text}"}}]}}}}"#
    )
}

/// The loop of the docs: feed, drain the events (acting on each), write out, and feed the
/// rest again until everything was taken and nothing is held. `act` sees each event with the
/// connection. Returns the lines written.
fn run<B: Buffers>(
    agent: &mut AgentConnection<B>,
    input: &[u8],
    mut act: impl FnMut(&mut AgentConnection<B>, AgentEvent),
) -> Vec<String> {
    let mut wire = Vec::new();
    let mut rest = input;
    // Bounded: each pass takes a line or writes out, and the test's input is finite.
    for _ in 0..100_000 {
        let taken = agent.handle_bytes(Instant(0), rest);
        rest = &rest[taken..];
        while let Some(event) = agent.poll_event() {
            act(agent, event);
        }
        let out = agent.poll_transmit();
        wire.extend_from_slice(out);
        let n = out.len();
        agent.transmitted(n);
        if rest.is_empty() && !agent.is_input_held() {
            let text = String::from_utf8(wire).unwrap();
            return text.lines().map(String::from).collect();
        }
    }
    panic!("the documented loop stalled")
}

/// Accepts sessions as `s1`, `s2`, … and ends every turn at once, recording each prompt's
/// params as read while draining.
fn act<B: Buffers>(prompts: &mut Vec<String>) -> impl FnMut(&mut AgentConnection<B>, AgentEvent) {
    let mut sessions = 0;
    move |agent, event| match event {
        AgentEvent::NewSession { ticket, .. } => {
            sessions += 1;
            agent
                .accept_new_session_id(ticket, &format!("s{sessions}"))
                .unwrap();
        }
        AgentEvent::Prompt {
            session, params, ..
        } => {
            prompts.push(
                agent
                    .params(params)
                    .expect("read while draining")
                    .to_owned(),
            );
            agent
                .end_turn(session.as_str(), StopReason::EndTurn)
                .unwrap();
        }
        _ => {}
    }
}

/// R-RPC-1: two requests pipelined in one buffer are both answered by the documented loop.
#[test]
fn two_pipelined_requests_in_one_buffer_are_both_answered() {
    let input = format!("{}\n{}\n", init_line(0), new_line(1));
    let mut agent = agent::<Fixed<1024, 4096, 4, 4, 8>>();
    let mut prompts = Vec::new();
    let lines = run(&mut agent, input.as_bytes(), act(&mut prompts));
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].starts_with(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"#));
    assert_eq!(
        lines[1],
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#
    );
}

/// R-RPC-1: many pipelined requests (sessions and prompts interleaved) in one buffer, over
/// fixed and growable storage: every one answered, in order, each prompt read as sent.
#[test]
fn many_pipelined_requests_in_one_buffer_are_all_answered_in_order() {
    let mut input = format!("{}\n", init_line(0));
    let mut expected = Vec::new();
    let mut texts = Vec::new();
    for n in 1..=20u32 {
        input += &format!("{}\n", new_line(n * 2));
        input += &format!(
            "{}\n",
            prompt_line(n * 2 + 1, &format!("s{n}"), &format!("p{n}"))
        );
        expected.push(format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"sessionId":"s{n}"}}}}"#,
            n * 2
        ));
        expected.push(format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"stopReason":"end_turn"}}}}"#,
            n * 2 + 1
        ));
        texts.push(format!(
            r#"{{"sessionId":"s{n}","prompt":[{{"type":"text","text":"p{n}"}}]}}"#
        ));
    }
    fn check<B: Buffers>(input: &str, expected: &[String], texts: &[String]) {
        let mut agent = agent::<B>();
        let mut prompts = Vec::new();
        let lines = run(&mut agent, input.as_bytes(), act(&mut prompts));
        assert_eq!(&lines[1..], expected);
        assert_eq!(prompts, texts);
    }
    // Fixed storage with room for one line and a few answers, and growable storage.
    check::<Fixed<1024, 1024, 32, 4, 8>>(&input, &expected, &texts);
    #[cfg(feature = "alloc")]
    check::<acp_core::conn::Growable>(&input, &expected, &texts);
}

/// R-RPC-13: a handle read after the next input reads as nothing (`None`), in every build,
/// through every reader; never as an empty prompt.
#[test]
fn a_params_handle_read_after_the_next_input_is_none_in_every_build() {
    let mut agent = agent::<Fixed<1024, 4096, 4, 4, 8>>();
    let input = format!(
        "{}\n{}\n{}\n",
        init_line(0),
        new_line(1),
        prompt_line(2, "s1", "first")
    );
    let mut kept = Vec::new();
    run(&mut agent, input.as_bytes(), |agent, event| match event {
        AgentEvent::NewSession { ticket, .. } => agent.accept_new_session_id(ticket, "s1").unwrap(),
        event => kept.push(event),
    });
    let Some(AgentEvent::Prompt { params, .. }) = kept.pop() else {
        panic!("a prompt event: {kept:?}")
    };
    // The same-length prompt of another session: its line takes the place of the first one.
    agent.restore_session("s2").unwrap();
    let second = format!("{}\n", prompt_line(3, "s2", "other"));
    let mut fresh = None;
    run(&mut agent, second.as_bytes(), |agent, event| {
        if let AgentEvent::Prompt { params, .. } = event {
            fresh = Some(agent.params(params).map(String::from));
        }
    });
    assert_eq!(
        fresh,
        Some(Some(
            r#"{"sessionId":"s2","prompt":[{"type":"text","text":"other"}]}"#.to_owned()
        ))
    );
    assert_eq!(agent.params(params), None);
    assert!(agent.params_value(params).is_none());
    assert!(agent.request_view("session/prompt", params).is_none());
    #[cfg(feature = "alloc")]
    {
        assert_eq!(agent.prompt(params), None);
        assert_eq!(agent.request("session/prompt", params), None);
    }
    // An input without lines (a timeout) ends the handles of the last input too.
    agent.handle_timeout(Instant(1));
    assert_eq!(agent.params(params), None);
}
