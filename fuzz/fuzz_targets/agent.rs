//! `AgentConnection::handle_bytes` over arbitrary bytes, with a small application that reacts
//! to every event (accepts sessions, sends updates, ends or fails turns, answers requests).
//! The first byte picks the read size and the second how the application behaves. Asserts
//! what must hold for any input: no panic, output is whole lines of JSON, and after EOF
//! nothing is owed or pending.
#![no_main]

use acp_core::Instant;
use acp_core::conn::agent::{AgentConfig, AgentConnection, AgentEvent, AgentInfo, RawUpdate};
use acp_core::machine::turn::StopReason;
use acp_core::wire::ErrorCode;
use libfuzzer_sys::fuzz_target;

fn drain(agent: &mut AgentConnection<acp_core::conn::Growable>, mood: u8, sessions: &mut u32) {
    while let Some(event) = agent.poll_event() {
        match event {
            AgentEvent::NewSession { ticket, .. } => {
                *sessions += 1;
                if mood & 1 == 0 {
                    let _ = agent.accept_new_session_id(ticket, &format!("s{sessions}"));
                } else {
                    let _ = agent.respond_error(ticket, ErrorCode::INTERNAL_ERROR, "no");
                }
            }
            AgentEvent::LoadSession { ticket, .. } => {
                let _ = agent.load_not_found(ticket);
            }
            AgentEvent::Prompt { session, .. } => {
                let update = RawUpdate::new(
                    r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}"#,
                )
                .expect("a valid update");
                let _ = agent.send_update(session.as_str(), &update);
                if mood & 2 == 0 {
                    let _ = agent.end_turn(session.as_str(), StopReason::EndTurn);
                }
            }
            AgentEvent::Cancelled { session } => {
                let _ = agent.fail_turn(session.as_str(), "stopped");
            }
            AgentEvent::Request { ticket, .. } if mood & 4 == 0 => {
                let _ = agent.respond(ticket, &());
            }
            _ => {}
        }
    }
    let out = agent.poll_transmit();
    assert!(out.is_empty() || out.ends_with(b"\n"), "whole lines only");
    for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let text = std::str::from_utf8(line).expect("output is UTF-8");
        assert!(acp_core::wire::json::parse_value(text).is_ok(), "output is JSON: {text}");
    }
    let n = out.len();
    agent.transmitted(n);
}

fuzz_target!(|data: &[u8]| {
    let [chunk, mood, bytes @ ..] = data else { return };
    let chunk = usize::from(*chunk).max(1);
    let mut config = AgentConfig::new(AgentInfo::new("fuzz", "Fuzz", "0"));
    config.features.load_session = true;
    config.features.session_close = true;
    config.limits.max_line = 4096;
    let mut agent: AgentConnection<acp_core::conn::Growable> = AgentConnection::new(config);
    let mut sessions = 0;
    let mut now = 0;
    for piece in bytes.chunks(chunk) {
        now += 1;
        let mut input = piece;
        // Bounded: every round takes input or drains the outbox, which frees room.
        for _ in 0..1000 {
            let taken = agent.handle_bytes(Instant(now), input);
            input = &input[taken..];
            drain(&mut agent, *mood, &mut sessions);
            if input.is_empty() && !agent.is_input_held() {
                break;
            }
        }
        agent.handle_timeout(Instant(now));
        drain(&mut agent, *mood, &mut sessions);
    }
    agent.handle_eof(Instant(now + 1));
    drain(&mut agent, *mood, &mut sessions);
    assert_eq!(agent.requests_owed(), 0, "nothing owed after EOF");
    assert_eq!(agent.requests_in_flight(), 0, "nothing pending after EOF");
});
