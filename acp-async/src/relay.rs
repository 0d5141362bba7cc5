//! A byte stream whose other end is the application: for a connection whose peer's bytes
//! arrive through something the pump does not own (a process supervisor that multiplexes
//! many agents' pipes on one channel, a recorded trace), and whose output the application
//! passes on itself.
//!
//! [`relay`] gives the application's end, a [`Relay`] ([`push`](Relay::push) what the peer
//! sent, [`close`](Relay::close) at its EOF, [`take_output`](Relay::take_output) what the
//! connection wrote), and the two halves a [`Pump`](crate::pump::Pump) takes. Nothing waits
//! on anything outside: [`settle`] then runs the pump in place, from the application's own
//! loop, until it has handled everything handed over. Every protocol decision (a line split
//! across pushes, bytes before EOF, the close) stays in acp-core and the pump.
//!
//! Unbounded and single-threaded (`Rc`): the application hands over what it has already
//! read, so bounding it here would only move the buffer.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures_io::{AsyncRead, AsyncWrite};

#[derive(Debug, Default)]
struct State {
    /// Pushed and not read yet.
    input: VecDeque<u8>,
    input_closed: bool,
    reader: Option<Waker>,
    /// Written and not taken yet.
    output: Vec<u8>,
    output_closed: bool,
}

/// The application's end of a [`relay`].
#[derive(Debug)]
pub struct Relay {
    state: Rc<RefCell<State>>,
}

/// What the pump reads: the bytes [`Relay::push`] hands over; EOF after [`Relay::close`].
#[derive(Debug)]
pub struct RelayReader {
    state: Rc<RefCell<State>>,
}

/// What the pump writes: kept for [`Relay::take_output`].
#[derive(Debug)]
pub struct RelayWriter {
    state: Rc<RefCell<State>>,
}

/// A relay: the application's end and the reader and writer to hand to a pump.
pub fn relay() -> (Relay, RelayReader, RelayWriter) {
    let state = Rc::new(RefCell::new(State::default()));
    (
        Relay {
            state: state.clone(),
        },
        RelayReader {
            state: state.clone(),
        },
        RelayWriter { state },
    )
}

impl Relay {
    /// Hands over bytes the peer sent; ignored after [`close`](Self::close).
    pub fn push(&self, bytes: &[u8]) {
        let mut state = self.state.borrow_mut();
        if state.input_closed {
            return;
        }
        state.input.extend(bytes);
        if let Some(waker) = state.reader.take() {
            waker.wake();
        }
    }

    /// The peer's output ended: the reader gives EOF once it has read everything pushed.
    pub fn close(&self) {
        let mut state = self.state.borrow_mut();
        state.input_closed = true;
        if let Some(waker) = state.reader.take() {
            waker.wake();
        }
    }

    /// Everything the connection wrote since the last call, to pass on to the peer.
    pub fn take_output(&self) -> Vec<u8> {
        std::mem::take(&mut self.state.borrow_mut().output)
    }

    /// Whether the pump closed its writer (the connection is over); what it wrote before
    /// is still to take.
    pub fn is_output_closed(&self) -> bool {
        self.state.borrow().output_closed
    }
}

impl AsyncRead for RelayReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.state.borrow_mut();
        if state.input.is_empty() {
            if state.input_closed || out.is_empty() {
                return Poll::Ready(Ok(0));
            }
            state.reader = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = out.len().min(state.input.len());
        for (slot, byte) in out.iter_mut().zip(state.input.drain(..n)) {
            *slot = byte;
        }
        Poll::Ready(Ok(n))
    }
}

impl AsyncWrite for RelayWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.state.borrow_mut();
        if state.output_closed {
            return Poll::Ready(Err(io::ErrorKind::NotConnected.into()));
        }
        state.output.extend_from_slice(bytes);
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.state.borrow_mut().output_closed = true;
        Poll::Ready(Ok(()))
    }
}

/// Records whether anything woke it.
#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Polls `future` in place until it is done, or pending without having been woken while it
/// was polled (its step budget spent, a command queued bytes, a relay handed over input):
/// for a [`Pump`](crate::pump::Pump) on a [`relay`], that is once every byte pushed, every
/// command and the EOF are handled and the output is written to the relay.
///
/// Its wakers are this call's own: a future that waits on a real source (a pipe, a timer)
/// is not woken by it later. Use it only on futures whose every source the caller feeds
/// and then settles again: a pump on a relay, on a connection without deadlines.
pub fn settle<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    let flag = Arc::new(Flag::default());
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    // Each pass is one poll; a pass that nothing woke ends the loop. A future that wakes
    // itself at every poll forever would not end: the pump wakes itself only while it has
    // input or output left, which a relay makes finite.
    loop {
        flag.0.store(false, Ordering::Relaxed);
        match Pin::new(&mut *future).poll(&mut cx) {
            Poll::Ready(out) => return Poll::Ready(out),
            Poll::Pending if flag.0.load(Ordering::Relaxed) => {}
            Poll::Pending => return Poll::Pending,
        }
    }
}
