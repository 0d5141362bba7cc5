//! Deterministic harness for the client tests: futures are polled by hand until they stall
//! (no executor, no clock, no sleeps), over acp-async's in-memory pipes. The agent is either
//! acp-async's own agent side or [`RawAgent`], which the test plays line by line.

#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use acp_async::duplex::{Duplex, PipeReader, PipeWriter, duplex};
use futures_io::{AsyncRead, AsyncWrite};
use serde_json::Value;

/// A waker that remembers it was woken.
#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Polls `future` until it is done (`Ready`) or nothing wakes it any more (`Pending`).
pub fn run<F: Future + ?Sized>(mut future: Pin<&mut F>) -> Poll<F::Output> {
    let flag = Arc::new(Flag::default());
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    // Bounded: a future that keeps waking itself without end is a bug worth a failure.
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

/// Runs `future` to its end; a future that stalls before (a deadlock) fails the test.
pub fn finish<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match run(future.as_mut()) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("stalled before finishing"),
    }
}

/// The agent's end of a pipe pair, played by the test with raw NDJSON lines.
pub struct RawAgent {
    reader: PipeReader,
    writer: Option<PipeWriter>,
    partial: Vec<u8>,
}

/// A connected pair: the client's end and the test's agent, `capacity` bytes each way.
pub fn raw_pair(capacity: usize) -> (Duplex, RawAgent) {
    let (client, agent) = duplex(capacity);
    let Duplex { reader, writer } = agent;
    (
        client,
        RawAgent {
            reader,
            writer: Some(writer),
            partial: Vec::new(),
        },
    )
}

impl RawAgent {
    /// Writes `line` and a newline (the pipe must have room: tests keep lines small).
    pub fn send_raw(&mut self, line: &str) {
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        let writer = self.writer.as_mut().expect("the agent's output is open");
        let mut bytes = format!("{line}\n").into_bytes();
        while !bytes.is_empty() {
            match Pin::new(&mut *writer).poll_write(&mut cx, &bytes) {
                Poll::Ready(Ok(n)) => {
                    bytes.drain(..n);
                }
                other => panic!("the pipe to the client is full or closed: {other:?}"),
            }
        }
    }

    /// Writes `message` as one line.
    pub fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    /// Ends the agent's output (EOF for the client).
    pub fn close(&mut self) {
        self.writer = None;
    }

    /// Every complete line the client has written since the last call, parsed.
    pub fn lines(&mut self) -> Vec<Value> {
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut buf = [0u8; 4096];
        while let Poll::Ready(Ok(n)) = Pin::new(&mut self.reader).poll_read(&mut cx, &mut buf) {
            if n == 0 {
                break;
            }
            self.partial.extend_from_slice(&buf[..n]);
        }
        let mut out = Vec::new();
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            out.push(serde_json::from_slice(&line).expect("the client writes JSON lines"));
        }
        out
    }

    /// The one request named `method` among `lines`.
    pub fn request<'a>(lines: &'a [Value], method: &str) -> &'a Value {
        let found: Vec<&Value> = lines.iter().filter(|l| l["method"] == method).collect();
        assert_eq!(found.len(), 1, "one {method} in {lines:?}");
        found[0]
    }
}
