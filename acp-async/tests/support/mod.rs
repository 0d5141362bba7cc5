//! Deterministic harness: the connection future is polled by hand until it stalls (no
//! executor, no clock, no sleeps), and the test plays the client with raw NDJSON lines on
//! the other end of an in-memory duplex.

#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use acp_async::duplex::{Duplex, PipeReader, PipeWriter, duplex};
use futures_io::{AsyncRead, AsyncWrite};
use serde_json::{Value, json};

/// A waker that remembers it was woken.
#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Polls `future` until it is done or nothing wakes it any more.
pub fn run<F: Future + ?Sized>(future: Pin<&mut F>) -> Poll<F::Output> {
    let flag = Arc::new(Flag::default());
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = future;
    // Bounded: a connection that keeps waking itself without end is a bug worth a failure.
    for _ in 0..1_000_000 {
        flag.0.store(false, Ordering::SeqCst);
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return Poll::Ready(out);
        }
        if !flag.0.load(Ordering::SeqCst) {
            return Poll::Pending;
        }
    }
    panic!("the future never stalls");
}

/// The client's end: writes lines, reads what has arrived.
pub struct Peer {
    pub reader: PipeReader,
    pub writer: Option<PipeWriter>,
    partial: Vec<u8>,
}

/// A connected pair: the agent's end and the test's, `capacity` bytes each way.
pub fn pair(capacity: usize) -> (Duplex, Peer) {
    let (agent, peer) = duplex(capacity);
    let Duplex { reader, writer } = peer;
    (
        agent,
        Peer {
            reader,
            writer: Some(writer),
            partial: Vec::new(),
        },
    )
}

fn noop() -> Context<'static> {
    Context::from_waker(Waker::noop())
}

impl Peer {
    /// Writes one line (the pipe must have room: tests size it so).
    pub fn send(&mut self, line: Value) {
        let mut bytes = serde_json::to_vec(&line).unwrap();
        bytes.push(b'\n');
        let writer = self.writer.as_mut().expect("not closed");
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            match Pin::new(&mut *writer).poll_write(&mut noop(), rest) {
                Poll::Ready(Ok(n)) => rest = &rest[n..],
                other => panic!("the pipe to the agent is full: {other:?}"),
            }
        }
    }

    /// Sends `initialize` and `session/new` (ids 0 and 1).
    pub fn open(&mut self) {
        self.send(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}),
        );
        self.send(json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/user/p","mcpServers":[]}}));
    }

    /// Sends `session/prompt` with `text` for `session`.
    pub fn prompt(&mut self, id: u64, session: &str, text: &str) {
        self.send(
            json!({"jsonrpc":"2.0","id":id,"method":"session/prompt","params":{
            "sessionId":session,"prompt":[{"type":"text","text":text}]}}),
        );
    }

    /// Closes the client's output: EOF for the agent.
    pub fn close(&mut self) {
        self.writer = None;
    }

    /// Every complete line that has arrived, parsed.
    pub fn lines(&mut self) -> Vec<Value> {
        let mut buf = [0u8; 4096];
        while let Poll::Ready(Ok(n)) = Pin::new(&mut self.reader).poll_read(&mut noop(), &mut buf) {
            if n == 0 {
                break;
            }
            self.partial.extend_from_slice(&buf[..n]);
        }
        let mut lines = Vec::new();
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            lines.push(serde_json::from_slice(&line).expect("the agent writes JSON lines"));
        }
        lines
    }
}

/// The answer to request `id` among `lines`.
pub fn answer(lines: &[Value], id: u64) -> Option<&Value> {
    lines
        .iter()
        .find(|l| l["id"] == json!(id) && l.get("method").is_none())
}

/// The `session/update`s among `lines` of kind `kind`.
pub fn updates<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| {
            l["method"] == "session/update" && l["params"]["update"]["sessionUpdate"] == kind
        })
        .collect()
}

/// The requests among `lines` with method `method`.
pub fn requests<'a>(lines: &'a [Value], method: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["method"] == method && l.get("id").is_some())
        .collect()
}
