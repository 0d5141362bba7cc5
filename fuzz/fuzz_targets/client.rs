//! `ClientConnection` over arbitrary agent bytes interleaved with application commands.
//! The connection is first taken through `initialize` and `session/new` so the fuzzer
//! starts in the states where most rules apply. Bytes `0xF0..=0xFF` are commands (the low
//! nibble picks one); everything else is fed as agent output, in pieces of the first byte's
//! size. Asserts what must hold for any input: no panic, every written line is one valid
//! JSON value, nothing is written once `Closed` is reported, and nothing is pending once EOF is processed.
#![no_main]

use acp_core::Instant;
use acp_core::conn::client::{
    AgentMethod, AskUserAnswer, ClientConfig, ClientConnection, ClientEvent, Growable,
    NO_MCP_SERVERS, PermissionAnswer, Serves,
};
use acp_core::machine::Ticket;
use acp_core::wire::ErrorCode;
use acp_core::wire::json::parse_value;
use libfuzzer_sys::fuzz_target;

struct Run {
    conn: ClientConnection<Growable>,
    now: u64,
    open: Vec<(Ticket, AgentMethod)>,
    sessions: Vec<String>,
    eof_done: bool,
}

impl Run {
    fn drain(&mut self) {
        for _ in 0..100_000 {
            // Lines received before EOF may still be answered while it is processed; once
            // `Closed` was reported, nothing more.
            let closed_before = self.eof_done;
            while let Some(event) = self.conn.poll_event() {
                match event {
                    ClientEvent::Request(r) => self.open.push((r.ticket, r.method)),
                    ClientEvent::RequestSettled { ticket, .. } => {
                        self.open.retain(|(t, _)| *t != ticket)
                    }
                    ClientEvent::SessionOpened { session, .. } => {
                        self.sessions.push(session.as_str().to_owned())
                    }
                    ClientEvent::Closed => self.eof_done = true,
                    _ => {}
                }
            }
            let out = self.conn.outbox().pending().to_vec();
            if out.is_empty() {
                return;
            }
            assert!(!closed_before, "written after Closed");
            assert_eq!(out.last(), Some(&b'\n'));
            for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let text = std::str::from_utf8(line).expect("output is UTF-8");
                assert!(
                    parse_value(text).is_ok(),
                    "an output line is one JSON value: {text}"
                );
            }
            self.conn.outbox().consume(out.len());
        }
        panic!("the connection never settles");
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        for _ in 0..100_000 {
            if bytes.is_empty() {
                return;
            }
            let n = self.conn.handle_bytes(Instant(self.now), bytes);
            bytes = &bytes[n..];
            self.drain();
        }
        panic!("input never taken");
    }

    fn command(&mut self, op: u8) {
        let now = Instant(self.now);
        let session = self.sessions.last().cloned().unwrap_or_default();
        let _ = match op {
            0 => self.conn.initialize(now).map(drop),
            1 => self.conn.new_session(now, "/w", NO_MCP_SERVERS).map(drop),
            2 | 3 => self.conn.prompt_text(now, &session, "hi").map(drop),
            4 => self.conn.cancel(now, &session).map(drop),
            5 => self.conn.set_mode(now, &session, "plan").map(drop),
            6..=9 => match self.open.first().copied() {
                Some((ticket, method)) => {
                    let result = match (method, op) {
                        (_, 9) => {
                            self.conn
                                .respond_error(now, ticket, ErrorCode::INTERNAL_ERROR, "x")
                        }
                        (AgentMethod::RequestPermission, _) => self.conn.respond_permission(
                            now,
                            ticket,
                            PermissionAnswer::Selected("allow_once"),
                        ),
                        (AgentMethod::AskUser, _) => {
                            self.conn
                                .respond_ask_user(now, ticket, AskUserAnswer::Cancelled)
                        }
                        _ => self.conn.respond(now, ticket, &()),
                    };
                    if result.is_ok() {
                        self.open.remove(0);
                    }
                    result
                }
                None => Ok(()),
            },
            10..=13 => {
                self.now += 1 << (op * 2);
                self.conn.handle_timeout(Instant(self.now));
                Ok(())
            }
            14 => self
                .conn
                .load_session(now, "old", "/w", NO_MCP_SERVERS)
                .map(drop),
            _ => {
                self.conn.handle_eof(Instant(self.now));
                Ok(())
            }
        };
        self.drain();
    }
}

fuzz_target!(|data: &[u8]| {
    let [chunk, rest @ ..] = data else { return };
    let chunk = usize::from(*chunk).max(1);
    let mut config = ClientConfig::new("fuzz", "0", Serves::EVERYTHING);
    config.max_line = 4096;
    let mut run = Run {
        conn: ClientConnection::new(config),
        now: 0,
        open: Vec::new(),
        sessions: Vec::new(),
        eof_done: false,
    };
    run.command(0);
    run.feed(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{\"loadSession\":true}}}\n");
    run.command(1);
    run.feed(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessionId\":\"s1\"}}\n");
    let mut start = 0;
    for (index, byte) in rest.iter().enumerate() {
        if *byte >= 0xF0 {
            for piece in rest[start..index].chunks(chunk) {
                run.feed(piece);
            }
            run.command(byte & 0x0F);
            start = index + 1;
        }
    }
    for piece in rest[start..].chunks(chunk) {
        run.feed(piece);
    }
    run.conn.handle_eof(Instant(run.now));
    run.drain();
    assert!(run.eof_done, "Closed is reported after EOF");
    assert_eq!(run.conn.requests_in_flight(), 0);
    assert_eq!(run.conn.requests_owed(), 0);
    assert!(run.conn.poll_timeout().is_none());
});
