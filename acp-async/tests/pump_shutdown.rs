//! Ending a pump early, from the application: `Shared::end_input` (a signal: EOF without
//! the peer's EOF) and `Shared::stop` (giving up on a peer that stopped reading). An agent
//! connection on the pump with a driver of its own, polled by hand.

mod support;

use std::cell::RefCell;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use acp_async::NoTimers;
use acp_async::acp_core::prelude::{AgentConfig, AgentConnection, AgentEvent, AgentInfo, Growable};
use acp_async::acp_core::schema::{ContentBlock, ContentChunk, SessionUpdate};
use acp_async::pump::{Driver, Pump, Shared};
use serde_json::json;
use support::{answer, pair, run, updates};

type Conn = AgentConnection<Growable>;

/// Opens sessions and leaves every prompt running, or streams `count` chunks for a prompt
/// `flood <count>`; records the events that matter here.
#[derive(Default)]
struct Hold {
    heard: Rc<RefCell<Vec<String>>>,
}

impl Driver<Conn> for Hold {
    fn on_event(&mut self, shared: &Rc<Shared<Conn>>, event: AgentEvent) {
        let mut heard = self.heard.borrow_mut();
        match event {
            AgentEvent::NewSession { ticket, .. } => {
                shared.with(|c| c.accept_new_session_id(ticket, "session-1").unwrap());
                heard.push("new session".into());
            }
            AgentEvent::Prompt {
                session, params, ..
            } => {
                let prompt = shared.borrow().prompt(params).unwrap_or_default();
                heard.push(format!("prompt {}", session.as_str()));
                let text = match prompt.first() {
                    Some(ContentBlock::Text(text)) => text.text.clone(),
                    _ => String::new(),
                };
                if let Some(count) = text.strip_prefix("flood ") {
                    let count: usize = count.parse().unwrap();
                    let chunk = ContentChunk::new(ContentBlock::text("x".repeat(1000)));
                    let update = SessionUpdate::AgentMessageChunk(chunk);
                    shared.with(|c| {
                        for _ in 0..count {
                            c.send_update(session.as_str(), &update).unwrap();
                        }
                    });
                }
            }
            AgentEvent::Closed => heard.push("closed".into()),
            _ => {}
        }
    }
}

fn agent() -> (Rc<Shared<Conn>>, Hold) {
    let config = AgentConfig::new(AgentInfo::new("hold", "Hold", "0.1.0"));
    (Shared::new(Conn::new(config), &NoTimers), Hold::default())
}

/// R-RPC-11: `end_input` is EOF without the peer's: with the client's output still open,
/// the running turn is answered `cancelled`, the connection closes and the pump ends
/// cleanly; a request the client sends afterwards is never read.
#[test]
fn end_input_answers_the_running_turn_cancelled_and_ends_the_pump() {
    let (agent_end, mut client) = pair(1 << 16);
    let (shared, hold) = agent();
    let heard = hold.heard.clone();
    let mut pump = pin!(Pump::new(
        shared.clone(),
        hold,
        NoTimers,
        agent_end.reader,
        agent_end.writer
    ));
    client.open();
    client.prompt(2, "session-1", "wait");
    assert!(run(pump.as_mut()).is_pending());
    let lines = client.lines();
    assert!(answer(&lines, 1).is_some(), "{lines:?}");
    assert!(answer(&lines, 2).is_none(), "the turn runs: {lines:?}");

    shared.end_input();
    assert!(shared.is_input_ended());
    client.send(json!({"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/home/user/p","mcpServers":[]}}));
    match run(pump.as_mut()) {
        Poll::Ready(done) => done.expect("the pump ends cleanly"),
        Poll::Pending => panic!("the pump must end after end_input: {:?}", heard.borrow()),
    }
    let lines = client.lines();
    assert_eq!(
        answer(&lines, 2).map(|a| a["result"]["stopReason"].clone()),
        Some(json!("cancelled")),
        "{lines:?}"
    );
    assert!(
        answer(&lines, 3).is_none(),
        "read after end_input: {lines:?}"
    );
    assert_eq!(
        *heard.borrow(),
        ["new session", "prompt session-1", "closed"]
    );
    assert!(shared.is_ended());
}

/// R-RPC-11: a client that stops reading keeps the pump waiting on its full pipe after
/// EOF; `stop` ends it at once, `Ok`, without the bytes the pipe did not take.
#[test]
fn stop_ends_a_pump_stuck_on_a_peer_that_stopped_reading() {
    let (agent_end, mut client) = pair(4 * 1024);
    let (shared, hold) = agent();
    let mut pump = pin!(Pump::new(
        shared.clone(),
        hold,
        NoTimers,
        agent_end.reader,
        agent_end.writer
    ));
    client.open();
    client.prompt(2, "session-1", "flood 64");
    client.close();
    // The pipe takes 4 KiB of the 64 KB of chunks, then the pump waits for room.
    assert!(run(pump.as_mut()).is_pending());
    assert!(!shared.borrow().poll_transmit().is_empty());
    assert!(
        run(pump.as_mut()).is_pending(),
        "still waiting for the reader"
    );

    shared.stop();
    match run(pump.as_mut()) {
        Poll::Ready(done) => done.expect("a stopped pump ends Ok"),
        Poll::Pending => panic!("the pump must end after stop"),
    }
    assert!(shared.is_ended());
    let lines = client.lines();
    assert!(
        updates(&lines, "agent_message_chunk").len() < 64,
        "{}",
        lines.len()
    );
    assert!(answer(&lines, 2).is_none());
}
