//! A scripted client double for `AgentConnection`: it writes lines, keeps the virtual clock,
//! drains events and output after every input (the documented call order), and splits the
//! output into lines for exact comparison.
#![allow(dead_code)]

use acp_core::Instant;
use acp_core::conn::agent::{
    AgentConfig, AgentConnection, AgentEvent, AgentFeatures, AgentInfo, Buffers, Growable,
};
use acp_core::machine::Ticket;

/// The agent under test plus everything it produced since the last `take`.
pub struct Harness<B: Buffers = Growable> {
    pub agent: AgentConnection<B>,
    pub now: Instant,
    pub events: Vec<AgentEvent>,
    pub lines: Vec<String>,
}

/// Agentao-like features: load, images, MCP over http and sse.
pub fn features() -> AgentFeatures {
    AgentFeatures {
        load_session: true,
        prompt_image: true,
        mcp_http: true,
        mcp_sse: true,
        set_model: true,
        ask_user: true,
        ..AgentFeatures::default()
    }
}

pub fn config() -> AgentConfig {
    let mut config = AgentConfig::agentao(AgentInfo::new("agentao", "Agentao", "0.4.20"));
    config.features = features();
    config
}

impl Harness<Growable> {
    pub fn new() -> Self {
        Self::with_config(config())
    }
}

impl<B: Buffers> Harness<B> {
    pub fn with_config(config: AgentConfig) -> Self {
        Self {
            agent: AgentConnection::new(config),
            now: Instant(0),
            events: Vec::new(),
            lines: Vec::new(),
        }
    }

    /// Feeds one line (a newline is added) and drains.
    pub fn send(&mut self, line: &str) {
        let bytes = format!("{line}\n");
        self.feed(bytes.as_bytes());
    }

    /// Feeds raw bytes and drains (all must be taken).
    pub fn feed(&mut self, bytes: &[u8]) {
        let taken = self.agent.handle_bytes(self.now, bytes);
        assert_eq!(
            taken,
            bytes.len(),
            "backpressure in a test that expects none"
        );
        self.drain();
    }

    /// Moves the clock and runs the timeout handler.
    pub fn advance_to(&mut self, ms: u64) {
        self.now = Instant(ms);
        self.agent.handle_timeout(self.now);
        self.drain();
    }

    pub fn eof(&mut self) {
        self.agent.handle_eof(self.now);
        self.drain();
    }

    /// Pulls events and output lines into the harness.
    pub fn drain(&mut self) {
        while let Some(event) = self.agent.poll_event() {
            self.events.push(event);
        }
        self.flush();
    }

    /// Pulls output lines (after commands).
    pub fn flush(&mut self) {
        let bytes = self.agent.poll_transmit().to_vec();
        self.agent.transmitted(bytes.len());
        let text = String::from_utf8(bytes).expect("output is UTF-8");
        assert!(text.is_empty() || text.ends_with('\n'), "whole lines only");
        self.lines.extend(text.lines().map(String::from));
    }

    /// The lines written since the last call.
    pub fn take_lines(&mut self) -> Vec<String> {
        self.flush();
        std::mem::take(&mut self.lines)
    }

    /// The events since the last call.
    pub fn take_events(&mut self) -> Vec<AgentEvent> {
        std::mem::take(&mut self.events)
    }

    /// `initialize` with these client capabilities; the answer and event are consumed.
    pub fn initialize(&mut self, capabilities: &str) {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"init","method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{capabilities}}}}}"#
        ));
        let lines = self.take_lines();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains(r#""result":{"protocolVersion":1"#),
            "{lines:?}"
        );
        self.take_events();
    }

    /// The ticket of the only `NewSession` event queued.
    pub fn new_session_ticket(&mut self) -> Ticket {
        let events = self.take_events();
        match events.as_slice() {
            [AgentEvent::NewSession { ticket, .. }] => *ticket,
            other => panic!("expected one NewSession event, got {other:?}"),
        }
    }

    /// `session/new` accepted as `id`; output and events consumed.
    pub fn open_session(&mut self, id: &str) {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"new-{id}","method":"session/new","params":{{"cwd":"/home/user/p","mcpServers":[]}}}}"#
        ));
        let ticket = self.new_session_ticket();
        self.agent
            .accept_new_session_id(ticket, id)
            .expect("accept");
        let lines = self.take_lines();
        assert_eq!(
            lines,
            [format!(
                r#"{{"jsonrpc":"2.0","id":"new-{id}","result":{{"sessionId":"{id}"}}}}"#
            )]
        );
    }

    /// `session/prompt` with request id `id` on `session`; returns the prompt's ticket.
    pub fn prompt(&mut self, id: u64, session: &str) -> Ticket {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":"go"}}]}}}}"#
        ));
        let events = self.take_events();
        match events.as_slice() {
            [AgentEvent::Prompt { ticket, .. }] => *ticket,
            other => panic!(
                "expected one Prompt event, got {other:?} / {:?}",
                self.lines
            ),
        }
    }
}

/// An `agent_message_chunk` update line for `session`.
pub fn chunk_line(session: &str, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{session}","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}}}"#
    )
}
