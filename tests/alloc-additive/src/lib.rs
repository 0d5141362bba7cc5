//! Embedding code written against acp-core without `alloc`: it must compile, unchanged, when
//! `alloc` is on (the `alloc` feature of this crate turns it on in acp-core).
//!
//! [`tool_turn`] drives an agent over `Fixed` storage through a handshake, a session, a
//! `/tool` prompt with a permission request (R-PERM-1, R-PERM-2) and EOF, feeding the client's
//! lines one by one and handing each line the agent writes to `sink`.
#![no_std]

use acp_core::conn::agent::{RawToolCall, RawUpdate};
use acp_core::prelude::*;
use acp_core::view::ClientRequestView;

/// The storage of the agent: 1 KiB lines, a 2 KiB outbox, one session.
pub type Storage = Fixed<1024, 2048, 1, 2, 4>;

const TOOL_CALL: &str =
    r#"{"toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"}"#;
const ANNOUNCE: &str = r#"{"sessionUpdate":"tool_call","toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"}"#;
const COMPLETED: &str =
    r#"{"sessionUpdate":"tool_call_update","toolCallId":"call-1","status":"completed"}"#;

/// What the application saw, besides the lines.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// `PermissionResolved` events that allowed the tool.
    pub allowed: u32,
    /// `SaveSession` events.
    pub saved: u32,
    /// Whether `Closed` came.
    pub closed: bool,
}

/// Feeds `client_lines` (each ending in `\n`) one input at a time, acting on every event, and
/// passes each line the agent writes to `sink`; EOF after the last. Errors name the command
/// that failed.
pub fn tool_turn(client_lines: &[&str], sink: &mut dyn FnMut(&str)) -> Result<Seen, UsageError> {
    let mut agent: AgentConnection<Storage> =
        AgentConnection::new(AgentConfig::new(AgentInfo::new("tiny", "Tiny", "1")));
    let mut seen = Seen::default();
    let tool_call =
        RawToolCall::new(TOOL_CALL, "edit write notes.txt").expect("a constant tool call");
    let mut tick = 0;
    for line in client_lines {
        let mut rest = line.as_bytes();
        while !rest.is_empty() {
            tick += 1;
            let taken = agent.handle_bytes(Instant(tick), rest);
            rest = &rest[taken..];
            drain(&mut agent, Instant(tick), &tool_call, &mut seen, sink)?;
        }
    }
    agent.handle_eof(Instant(tick + 1));
    drain(&mut agent, Instant(tick + 1), &tool_call, &mut seen, sink)?;
    Ok(seen)
}

fn drain(
    agent: &mut AgentConnection<Storage>,
    now: Instant,
    tool_call: &RawToolCall<'_>,
    seen: &mut Seen,
    sink: &mut dyn FnMut(&str),
) -> Result<(), UsageError> {
    while let Some(event) = agent.poll_event() {
        match event {
            AgentEvent::NewSession { ticket, .. } => agent.accept_new_session_id(ticket, "s1")?,
            AgentEvent::Prompt {
                session, params, ..
            } => {
                let is_tool = matches!(
                    agent.request_view("session/prompt", params),
                    Some(Ok(ClientRequestView::Prompt(prompt)))
                        if prompt.prompt.iter().any(|b| {
                            b.as_text().and_then(|t| t.as_plain()) == Some("/tool")
                        })
                );
                if is_tool {
                    agent.send_update(
                        session.as_str(),
                        &RawUpdate::new(ANNOUNCE).expect("a constant"),
                    )?;
                    agent.request_permission_raw(now, session.as_str(), tool_call, None)?;
                } else {
                    agent.end_turn(session.as_str(), StopReason::EndTurn)?;
                }
            }
            AgentEvent::PermissionResolved {
                session, decision, ..
            } => {
                if decision.is_allowed() {
                    seen.allowed += 1;
                    agent.send_update(
                        session.as_str(),
                        &RawUpdate::new(COMPLETED).expect("a constant"),
                    )?;
                }
                agent.end_turn(session.as_str(), StopReason::EndTurn)?;
            }
            AgentEvent::AskUserAnswered { text, .. } => {
                // The answer's text is the same type in both builds.
                let _: &str = text.as_str();
            }
            AgentEvent::SaveSession { .. } => seen.saved += 1,
            AgentEvent::Closed => seen.closed = true,
            _ => {}
        }
    }
    let out = agent.poll_transmit();
    let n = out.len();
    for line in core::str::from_utf8(out)
        .expect("the agent writes UTF-8")
        .lines()
    {
        sink(line);
    }
    agent.transmitted(n);
    Ok(())
}
