//! An agent and a client connected in memory, driven by a virtual clock: the client's prompt
//! deadline passes without anyone sleeping, the client cancels the turn (R-HOST-2), the agent
//! answers it `cancelled` (R-CANCEL-3), and every line exchanged is checked exactly.
//!
//! Run: `cargo run -p acp-core --example deterministic_test`.

use std::time::Duration;

use acp_core::conn::client::NO_MCP_SERVERS;
use acp_core::prelude::*;

/// The in-memory pair and the lines that crossed between them, in order.
struct Pair {
    agent: AgentConnection<Growable>,
    client: ClientConnection<Growable>,
    /// Client bytes the agent has not taken yet.
    to_agent: Vec<u8>,
    transcript: Vec<String>,
    client_events: Vec<String>,
}

impl Pair {
    /// Moves bytes both ways and lets each side act on its events until nothing moves.
    fn settle(&mut self, now: Instant) {
        loop {
            let mut moved = false;
            while let Some(event) = self.client.poll_event() {
                self.client_events.push(describe(&event));
            }
            let to_agent = self.client.poll_transmit().to_vec();
            if !to_agent.is_empty() {
                self.client.transmitted(to_agent.len());
                self.record("client -> agent", &to_agent);
                // One request line is taken per call: the rest is fed after the events.
                self.to_agent.extend(to_agent);
                moved = true;
            }
            let taken = self.agent.handle_bytes(now, &self.to_agent);
            self.to_agent.drain(..taken);
            moved |= !self.to_agent.is_empty() || self.agent.is_input_held();
            while let Some(event) = self.agent.poll_event() {
                match event {
                    AgentEvent::NewSession { ticket, .. } => {
                        self.agent.accept_new_session_id(ticket, "s1").unwrap();
                    }
                    // The agent works on the prompt and never finishes in time.
                    AgentEvent::Prompt { .. } => {}
                    AgentEvent::Cancelled { session } => {
                        let stop = self.agent.end_turn(session.as_str(), StopReason::EndTurn);
                        assert_eq!(stop, Ok(StopReason::Cancelled));
                    }
                    _ => {}
                }
            }
            let to_client = self.agent.poll_transmit().to_vec();
            if !to_client.is_empty() {
                self.agent.transmitted(to_client.len());
                self.record("agent -> client", &to_client);
                let taken = self.client.handle_bytes(now, &to_client);
                assert_eq!(taken, to_client.len());
                moved = true;
            }
            if !moved {
                while let Some(event) = self.client.poll_event() {
                    self.client_events.push(describe(&event));
                }
                return;
            }
        }
    }

    fn record(&mut self, direction: &str, bytes: &[u8]) {
        for line in String::from_utf8_lossy(bytes).lines() {
            self.transcript.push(format!("{direction}: {line}"));
        }
    }
}

fn describe(event: &ClientEvent) -> String {
    match event {
        ClientEvent::Initialized { .. } => "Initialized".into(),
        ClientEvent::SessionOpened { session, .. } => format!("SessionOpened {}", session.as_str()),
        ClientEvent::TurnEnded {
            session, outcome, ..
        } => format!("TurnEnded {} {outcome:?}", session.as_str()),
        other => format!("{other:?}"),
    }
}

fn main() {
    let mut config = ClientConfig::new("example-client", "1.0", Serves::NOTHING);
    config.prompt_timeout = Some(Duration::from_secs(5));
    let mut pair = Pair {
        agent: AgentConnection::new(AgentConfig::new(AgentInfo::new(
            "example", "Example", "0.1",
        ))),
        client: ClientConnection::new(config),
        to_agent: Vec::new(),
        transcript: Vec::new(),
        client_events: Vec::new(),
    };

    // Virtual time: milliseconds since the start, advanced by hand.
    let mut now = Instant(0);
    pair.client.initialize(now).unwrap();
    pair.settle(now);
    pair.client
        .new_session(now, "/home/user/p", NO_MCP_SERVERS)
        .unwrap();
    pair.settle(now);
    now = Instant(1_000);
    pair.client.prompt_text(now, "s1", "hello").unwrap();
    pair.settle(now);

    // The only deadline is the prompt's: 1 s + 5 s. Jump straight to it, no sleeping.
    let deadline = pair
        .client
        .poll_timeout()
        .expect("the prompt has a deadline");
    assert_eq!(deadline, Instant(6_000));
    now = deadline;
    pair.client.handle_timeout(now);
    pair.settle(now);
    assert_eq!(pair.client.poll_timeout(), None);
    assert_eq!(pair.agent.poll_timeout(), None);

    for line in &pair.transcript {
        println!("{line}");
    }
    for event in &pair.client_events {
        println!("client event: {event}");
    }
    assert_eq!(
        pair.transcript.len(),
        7,
        "initialize, session/new, prompt: three exchanges, then the cancel"
    );
    let expected_tail = [
        r#"client -> agent: {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hello"}]}}"#,
        r#"client -> agent: {"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#,
        r#"agent -> client: {"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#,
    ];
    assert_eq!(
        &pair.transcript[pair.transcript.len() - 3..],
        &expected_tail
    );
    assert_eq!(
        pair.transcript[2],
        r#"client -> agent: {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/user/p","mcpServers":[]}}"#
    );
    assert_eq!(
        pair.transcript[3],
        r#"agent -> client: {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#
    );
    // The turn was settled at its deadline; the agent's `cancelled` answer that follows is
    // what R-CANCEL-3 asks of it, so the client absorbs it without an event.
    assert_eq!(
        pair.client_events,
        ["Initialized", "SessionOpened s1", "TurnEnded s1 TimedOut"]
    );
    println!("ok: the prompt timed out at {now} without sleeping");
}
