//! In-memory byte pipes over futures-io, for tests and benchmarks: no runtime, no threads
//! needed (any executor, or none: poll by hand), bounded so a reader that stops holds its
//! writer.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use futures_io::{AsyncRead, AsyncWrite};

#[derive(Debug)]
struct State {
    buf: VecDeque<u8>,
    capacity: usize,
    writer_closed: bool,
    reader_dropped: bool,
    reader: Option<Waker>,
    writer: Option<Waker>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // Nothing panics while holding the lock; a poisoned one is still consistent.
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One direction: bytes written to a [`PipeWriter`] come out of its [`PipeReader`], at most
/// `capacity` bytes in between (a write waits for the reader beyond that).
///
/// Closing or dropping the writer is EOF for the reader once it has read everything;
/// dropping the reader makes every later write fail with `BrokenPipe`.
pub fn pipe(capacity: usize) -> (PipeReader, PipeWriter) {
    let state = Arc::new(Mutex::new(State {
        buf: VecDeque::new(),
        capacity: capacity.max(1),
        writer_closed: false,
        reader_dropped: false,
        reader: None,
        writer: None,
    }));
    (
        PipeReader {
            state: state.clone(),
        },
        PipeWriter { state },
    )
}

/// Two connected ends, each reading what the other writes, `capacity` bytes each way.
pub fn duplex(capacity: usize) -> (Duplex, Duplex) {
    let (a_reader, b_writer) = pipe(capacity);
    let (b_reader, a_writer) = pipe(capacity);
    (
        Duplex {
            reader: a_reader,
            writer: a_writer,
        },
        Duplex {
            reader: b_reader,
            writer: b_writer,
        },
    )
}

/// The reading end of a [`pipe`].
#[derive(Debug)]
pub struct PipeReader {
    state: Arc<Mutex<State>>,
}

/// The writing end of a [`pipe`].
#[derive(Debug)]
pub struct PipeWriter {
    state: Arc<Mutex<State>>,
}

/// One end of a [`duplex`]: take the halves apart to hand them to a connection.
#[derive(Debug)]
pub struct Duplex {
    /// What the other end writes.
    pub reader: PipeReader,
    /// What the other end reads.
    pub writer: PipeWriter,
}

impl PipeReader {
    /// Bytes written and not read yet.
    pub fn buffered(&self) -> usize {
        lock(&self.state).buf.len()
    }
}

impl PipeWriter {
    /// Bytes written and not read yet.
    pub fn buffered(&self) -> usize {
        lock(&self.state).buf.len()
    }
}

impl AsyncRead for PipeReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = lock(&self.state);
        if state.buf.is_empty() {
            if state.writer_closed || out.is_empty() {
                return Poll::Ready(Ok(0));
            }
            state.reader = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = out.len().min(state.buf.len());
        for (slot, byte) in out.iter_mut().zip(state.buf.drain(..n)) {
            *slot = byte;
        }
        if let Some(waker) = state.writer.take() {
            waker.wake();
        }
        Poll::Ready(Ok(n))
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        let mut state = lock(&self.state);
        state.reader_dropped = true;
        state.buf.clear();
        if let Some(waker) = state.writer.take() {
            waker.wake();
        }
    }
}

impl AsyncWrite for PipeWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = lock(&self.state);
        if state.reader_dropped {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if state.writer_closed {
            return Poll::Ready(Err(io::ErrorKind::NotConnected.into()));
        }
        let room = state.capacity - state.buf.len();
        if room == 0 {
            state.writer = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = room.min(bytes.len());
        state.buf.extend(&bytes[..n]);
        if let Some(waker) = state.reader.take() {
            waker.wake();
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = lock(&self.state);
        state.writer_closed = true;
        if let Some(waker) = state.reader.take() {
            waker.wake();
        }
        Poll::Ready(Ok(()))
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        let mut state = lock(&self.state);
        state.writer_closed = true;
        if let Some(waker) = state.reader.take() {
            waker.wake();
        }
    }
}

impl AsyncRead for Duplex {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.reader).poll_read(cx, out)
    }
}

impl AsyncWrite for Duplex {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.writer).poll_write(cx, bytes)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.writer).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.writer).poll_close(cx)
    }
}
