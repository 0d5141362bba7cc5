//! A host for client-connection tests: the connection, a virtual clock, and helpers that play
//! a scripted agent (lines written by hand, as an agent would write them).
#![allow(dead_code)]

use acp_core::Instant;
use acp_core::conn::client::{
    Buffers, ClientConfig, ClientConnection, ClientEvent, Growable, NO_MCP_SERVERS, Serves,
};

/// The connection under test, its clock, and everything it wrote so far.
pub struct Host<S: Buffers = Growable> {
    pub conn: ClientConnection<S>,
    pub now: u64,
}

pub fn config(serves: Serves) -> ClientConfig {
    let mut config = ClientConfig::new("acp-test", "0.1.0", serves);
    config.request_timeout = Some(core::time::Duration::from_millis(30_000));
    config.prompt_timeout = Some(core::time::Duration::from_millis(60_000));
    config
}

impl Host<Growable> {
    pub fn new(serves: Serves) -> Self {
        Self::with_config(config(serves))
    }

    /// A host whose `initialize` has been answered with `caps` as `agentCapabilities`.
    pub fn ready(serves: Serves, caps: &str) -> Self {
        let mut host = Self::new(serves);
        host.initialize(caps);
        host
    }

    /// A ready host with session `s1` open.
    pub fn with_session(serves: Serves) -> Self {
        let mut host = Self::ready(serves, "{}");
        host.open("s1");
        host
    }
}

impl<S: Buffers> Host<S> {
    pub fn with_config(config: ClientConfig) -> Self {
        Self {
            conn: ClientConnection::new(config),
            now: 0,
        }
    }

    pub fn at(&self) -> Instant {
        Instant(self.now)
    }

    /// Everything in the outbox, as lines without newline; the outbox is emptied.
    pub fn sent(&mut self) -> Vec<String> {
        let bytes = self.conn.outbox().pending().to_vec();
        let n = bytes.len();
        self.conn.outbox().consume(n);
        let text = String::from_utf8(bytes).expect("output is UTF-8");
        text.lines().map(str::to_owned).collect()
    }

    /// Feeds one agent line (a newline is added), polling events as the documented loop does
    /// when not everything is taken. Events are left in the connection.
    pub fn agent(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.feed_bytes(&bytes);
    }

    /// Feeds raw bytes, following the documented loop; events produced while making room
    /// are kept in `self.stash`-less fashion: the loop only runs when the buffer is full,
    /// which the growable tests never hit.
    pub fn feed_bytes(&mut self, mut bytes: &[u8]) {
        for _ in 0..10_000 {
            if bytes.is_empty() {
                return;
            }
            let n = self.conn.handle_bytes(Instant(self.now), bytes);
            bytes = &bytes[n..];
            if n == 0 {
                panic!("the connection took no bytes; poll events or write the outbox first");
            }
        }
        panic!("feeding did not finish");
    }

    /// Drains every event.
    pub fn events(&mut self) -> Vec<ClientEvent> {
        let mut events = Vec::new();
        while let Some(event) = self.conn.poll_event() {
            events.push(event);
            assert!(events.len() < 10_000, "event loop does not end");
        }
        events
    }

    /// Moves the clock and runs the timeout handler.
    pub fn advance(&mut self, to: u64) {
        self.now = to;
        self.conn.handle_timeout(Instant(to));
    }

    pub fn initialize(&mut self, caps: &str) {
        let id = self.conn.initialize(self.at()).expect("initialize");
        assert_eq!(self.sent().len(), 1);
        self.agent(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":1,"agentCapabilities":{caps}}}}}"#,
            id.0
        ));
        let events = self.events();
        assert!(
            matches!(events.as_slice(), [ClientEvent::Initialized { .. }]),
            "{events:?}"
        );
    }

    pub fn open(&mut self, session: &str) {
        let id = self
            .conn
            .new_session(self.at(), "/tmp", NO_MCP_SERVERS)
            .expect("new_session");
        assert_eq!(self.sent().len(), 1);
        self.agent(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"sessionId":"{session}"}}}}"#,
            id.0
        ));
        let events = self.events();
        assert!(
            matches!(events.as_slice(), [ClientEvent::SessionOpened { .. }]),
            "{events:?}"
        );
    }
}
