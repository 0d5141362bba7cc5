//! The one drive loop both sides share: a sans-IO connection of acp-core on an async byte
//! stream, as a future.
//!
//! [`Pump`] owns the reader, the writer and the timer; the connection itself sits in a
//! [`Shared`] cell so the application's futures can issue commands between inputs. Each time
//! the pump is polled it repeats, until nothing moves:
//!
//! 1. drain the connection's events into the [`Driver`] (which reads their params at once:
//!    they are valid until the next input) and poll the driver's own work (handler futures);
//! 2. write [`poll_transmit`](Connection::poll_transmit) as far as the writer takes it, report
//!    it with [`transmitted`](Connection::transmitted), flush when the outbox is empty, and
//!    wake whoever waits for room ([`Shared::room`]);
//! 3. feed bytes read and not yet taken, or held input
//!    ([`is_input_held`](Connection::is_input_held)) — `handle_bytes` takes at most one
//!    request line per call — before reading more;
//! 4. read only when nothing is held (a slow application slows the peer: backpressure);
//!    a read of 0 bytes, or a read error, is EOF: `handle_eof` once the bytes before it went in;
//! 5. at [`poll_timeout`](Connection::poll_timeout), `handle_timeout`;
//! 6. once the connection is closed, its events drained and its last bytes written and
//!    flushed, close the writer and end. ([`Shared::close_output`] closes the writer earlier,
//!    once written out, while reading goes on: how a client ends its agent.)
//!
//! Every protocol decision stays in acp-core: the pump only moves bytes, time and events.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use acp_core::conn::Buffers;
use acp_core::prelude::{AgentConnection, AgentEvent, ClientConnection, ClientEvent, UsageError};
use futures_io::{AsyncRead, AsyncWrite};

use crate::runtime::{Instant, Runtime};

/// Size of the pump's read buffer.
pub const READ_BUFFER: usize = 64 * 1024;

/// Steps one poll of the pump may take before it yields to the executor.
const STEP_BUDGET: usize = 256;

/// The loop vocabulary both of acp-core's connections speak.
pub trait Connection {
    /// What [`poll_event`](Self::poll_event) hands out.
    type Event;
    /// Peer bytes; returns how many were taken.
    fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> usize;
    /// The peer's output ended.
    fn handle_eof(&mut self, now: Instant);
    /// The deadline of [`poll_timeout`](Self::poll_timeout) passed.
    fn handle_timeout(&mut self, now: Instant);
    /// The next event.
    fn poll_event(&mut self) -> Option<Self::Event>;
    /// Bytes to write.
    fn poll_transmit(&self) -> &[u8];
    /// The first `n` bytes of `poll_transmit` were written.
    fn transmitted(&mut self, n: usize);
    /// The next deadline.
    fn poll_timeout(&self) -> Option<Instant>;
    /// Complete peer lines wait in the connection (feed `&[]` after writing out).
    fn is_input_held(&self) -> bool;
    /// EOF has been handled completely.
    fn is_closed(&self) -> bool;
}

impl<B: Buffers> Connection for AgentConnection<B> {
    type Event = AgentEvent;
    fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> usize {
        AgentConnection::handle_bytes(self, now, bytes)
    }
    fn handle_eof(&mut self, now: Instant) {
        AgentConnection::handle_eof(self, now);
    }
    fn handle_timeout(&mut self, now: Instant) {
        AgentConnection::handle_timeout(self, now);
    }
    fn poll_event(&mut self) -> Option<AgentEvent> {
        AgentConnection::poll_event(self)
    }
    fn poll_transmit(&self) -> &[u8] {
        AgentConnection::poll_transmit(self)
    }
    fn transmitted(&mut self, n: usize) {
        AgentConnection::transmitted(self, n);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        AgentConnection::poll_timeout(self)
    }
    fn is_input_held(&self) -> bool {
        AgentConnection::is_input_held(self)
    }
    fn is_closed(&self) -> bool {
        AgentConnection::is_closed(self)
    }
}

impl<B: Buffers> Connection for ClientConnection<B> {
    type Event = ClientEvent;
    fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> usize {
        ClientConnection::handle_bytes(self, now, bytes)
    }
    fn handle_eof(&mut self, now: Instant) {
        ClientConnection::handle_eof(self, now);
    }
    fn handle_timeout(&mut self, now: Instant) {
        ClientConnection::handle_timeout(self, now);
    }
    fn poll_event(&mut self) -> Option<ClientEvent> {
        ClientConnection::poll_event(self)
    }
    fn poll_transmit(&self) -> &[u8] {
        ClientConnection::poll_transmit(self)
    }
    fn transmitted(&mut self, n: usize) {
        ClientConnection::transmitted(self, n);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        ClientConnection::poll_timeout(self)
    }
    /// The client connection keeps received lines in its framer and processes them in
    /// `poll_event`; `handle_bytes` taking fewer bytes is its only backpressure.
    fn is_input_held(&self) -> bool {
        false
    }
    fn is_closed(&self) -> bool {
        ClientConnection::is_closed(self)
    }
}

/// A connection shared between its [`Pump`] and the application's futures, with the clock
/// and the wakers that tie them together. Single-threaded (`Rc`, `RefCell`): the connection
/// is one future, and everything that touches it runs inside that future or beside it on
/// the same thread.
pub struct Shared<C> {
    conn: RefCell<C>,
    now: Box<dyn Fn() -> Instant>,
    /// Futures waiting for room in the outbox (`UsageError::WouldBlock`).
    room: RefCell<Vec<Waker>>,
    /// The pump's waker: commands from outside the pump wake it to write their bytes.
    pump: RefCell<Option<Waker>>,
    /// The pump has ended (closed, or an I/O error): nothing more will be written.
    ended: Cell<bool>,
    /// The application asked to close the output once written out (a client ending its
    /// agent: EOF on the agent's stdin).
    close_output: Cell<bool>,
    /// [`Shared::end_input`]: read no more, feed EOF.
    input_ended: Cell<bool>,
    /// [`Shared::stop`]: end at once.
    stopped: Cell<bool>,
}

impl<C: Connection> Shared<C> {
    /// Shares `conn`, read with the clock of `runtime`.
    pub fn new<R: Runtime>(conn: C, runtime: &R) -> Rc<Self> {
        let runtime = runtime.clone();
        Rc::new(Self {
            conn: RefCell::new(conn),
            now: Box::new(move || runtime.now()),
            room: RefCell::new(Vec::new()),
            pump: RefCell::new(None),
            ended: Cell::new(false),
            close_output: Cell::new(false),
            input_ended: Cell::new(false),
            stopped: Cell::new(false),
        })
    }

    /// The runtime's time, as the connection's commands take it.
    pub fn now(&self) -> Instant {
        (self.now)()
    }

    /// Runs `f` on the connection, then wakes the pump (to write what `f` queued).
    ///
    /// # Panics
    ///
    /// When called from inside another `with` (the connection is borrowed): never hold the
    /// connection across an `.await` or call back into it.
    pub fn with<T>(&self, f: impl FnOnce(&mut C) -> T) -> T {
        let out = f(&mut self.conn.borrow_mut());
        self.wake_pump();
        out
    }

    /// The connection, to read (an event's params, its state) without a command. Never held
    /// across an `.await`.
    pub fn borrow(&self) -> std::cell::Ref<'_, C> {
        self.conn.borrow()
    }

    /// Runs `f` until it does not answer [`UsageError::WouldBlock`], waiting for room in the
    /// outbox between tries: a full outbox holds the caller instead of growing
    /// (backpressure). Once the pump has ended, or when the outbox is empty (what `f` sends
    /// can never fit), `f`'s refusal is returned as it is.
    pub async fn with_room<T>(
        &self,
        mut f: impl FnMut(&mut C) -> Result<T, UsageError>,
    ) -> Result<T, UsageError> {
        loop {
            match self.with(&mut f) {
                // Room comes only from writing out: with nothing to write, it never will.
                Err(UsageError::WouldBlock)
                    if !self.ended.get() && !self.conn.borrow().poll_transmit().is_empty() =>
                {
                    self.room().await;
                }
                other => return other,
            }
        }
    }

    /// Resolves once the pump has written some bytes out (or ended).
    pub fn room(&self) -> Room<'_, C> {
        Room {
            shared: self,
            registered: false,
        }
    }

    /// Wakes the pump, e.g. after a command queued bytes.
    pub fn wake_pump(&self) {
        if let Some(waker) = self.pump.borrow().as_ref() {
            waker.wake_by_ref();
        }
    }

    /// Asks the pump to close its writer once everything queued is written and flushed,
    /// while it keeps reading until the peer's EOF: a client ends its agent this way (EOF on
    /// the agent's stdin). Bytes queued after the writer closed are not written.
    pub fn close_output(&self) {
        self.close_output.set(true);
        self.wake_pump();
    }

    /// Whether the pump has ended.
    pub fn is_ended(&self) -> bool {
        self.ended.get()
    }

    fn wake_room(&self) {
        for waker in self.room.take() {
            waker.wake();
        }
    }
}

/// The future of [`Shared::room`].
pub struct Room<'a, C> {
    shared: &'a Shared<C>,
    registered: bool,
}

impl<C> Future for Room<'_, C> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // Woken by the pump after a write (the waker list is taken then), or the pump ended.
        if self.registered || self.shared.ended.get() {
            return Poll::Ready(());
        }
        self.shared.room.borrow_mut().push(cx.waker().clone());
        self.registered = true;
        Poll::Pending
    }
}

/// What a side of the protocol does with the connection's events.
pub trait Driver<C: Connection> {
    /// One event, right after the input (or command) that produced it: its params can be read
    /// from the connection now, and only until the next input.
    fn on_event(&mut self, shared: &Rc<Shared<C>>, event: C::Event);

    /// Polls the driver's own work (handler futures), with the pump's context. Called after
    /// every batch of events; return once everything is pending.
    fn poll_work(&mut self, cx: &mut Context<'_>) {
        let _ = cx;
    }

    /// Whether the driver takes events now. While it says no, the pump drains no events and
    /// feeds no input (bytes, EOF, deadlines), so nothing more is read from the peer: a
    /// consumer that stalls holds the peer back instead of growing memory (backpressure).
    /// The driver wakes the pump ([`Shared::wake_pump`]) once it is ready again; its
    /// [`poll_work`](Self::poll_work) is still polled meanwhile.
    fn is_ready(&self) -> bool {
        true
    }
}

/// A connection on a byte stream, as one future: resolves when the connection has closed
/// (peer EOF handled, last bytes written and flushed, writer closed), or with the first
/// write error. A read error is handled as EOF and returned at the end.
///
/// Dropping the pump drops the driver's unfinished work.
pub struct Pump<C: Connection, D, R: Runtime, Rd, Wr> {
    shared: Rc<Shared<C>>,
    driver: D,
    runtime: R,
    reader: Rd,
    writer: Wr,
    buf: Box<[u8]>,
    /// `buf[start..end]` was read and not yet taken.
    start: usize,
    end: usize,
    eof: bool,
    eof_fed: bool,
    read_error: Option<io::Error>,
    flush: bool,
    /// The writer is closed ([`Shared::close_output`]).
    output_closed: bool,
    closing: bool,
    timer: Option<(Instant, Pin<Box<R::Sleep>>)>,
}

impl<C, D, R, Rd, Wr> Pump<C, D, R, Rd, Wr>
where
    C: Connection,
    D: Driver<C>,
    R: Runtime,
    Rd: AsyncRead + Unpin,
    Wr: AsyncWrite + Unpin,
{
    /// A pump for the connection in `shared`, reading `reader`, writing `writer`.
    pub fn new(shared: Rc<Shared<C>>, driver: D, runtime: R, reader: Rd, writer: Wr) -> Self {
        Self {
            shared,
            driver,
            runtime,
            reader,
            writer,
            buf: vec![0; READ_BUFFER].into_boxed_slice(),
            start: 0,
            end: 0,
            eof: false,
            eof_fed: false,
            read_error: None,
            flush: false,
            output_closed: false,
            closing: false,
            timer: None,
        }
    }

    /// The shared connection.
    pub fn shared(&self) -> &Rc<Shared<C>> {
        &self.shared
    }

    /// Dispatches every queued event and polls the driver's work until both are quiet.
    /// Returns how many events were dispatched.
    fn settle(&mut self, cx: &mut Context<'_>) -> usize {
        let mut total = self.drain();
        // Bounded in practice: work that queues events without input (a remembered
        // permission) ends after a finite number of commands.
        loop {
            self.driver.poll_work(cx);
            let n = self.drain();
            if n == 0 {
                return total;
            }
            total += n;
        }
    }

    fn drain(&mut self) -> usize {
        let mut n = 0;
        while self.driver.is_ready() {
            let event = self.shared.conn.borrow_mut().poll_event();
            let Some(event) = event else { break };
            self.driver.on_event(&self.shared, event);
            n += 1;
        }
        n
    }

    /// One input in, with events drained before (the call order); returns whether anything
    /// moved.
    fn input(&mut self, cx: &mut Context<'_>, feed: impl FnOnce(&mut C, Instant) -> usize) -> bool {
        let settled = self.settle(cx);
        if !self.driver.is_ready() {
            // The driver stopped taking events: no input until it takes them again.
            return settled > 0;
        }
        let now = self.runtime.now();
        let mut conn = self.shared.conn.borrow_mut();
        let before = (conn.poll_transmit().len(), conn.is_input_held());
        let taken = feed(&mut conn, now);
        let after = (conn.poll_transmit().len(), conn.is_input_held());
        drop(conn);
        let events = self.settle(cx);
        if taken > 0 {
            self.start += taken;
        }
        taken > 0 || events > 0 || before != after
    }

    fn step(&mut self, cx: &mut Context<'_>) -> io::Result<bool> {
        let mut progress = self.settle(cx) > 0;

        // Write out.
        if !self.output_closed {
            let conn = self.shared.conn.borrow();
            let pending = conn.poll_transmit();
            if !pending.is_empty() {
                match Pin::new(&mut self.writer).poll_write(cx, pending) {
                    Poll::Ready(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                    Poll::Ready(Ok(n)) => {
                        drop(conn);
                        self.shared.conn.borrow_mut().transmitted(n);
                        self.flush = true;
                        self.shared.wake_room();
                        progress = true;
                    }
                    Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {
                        progress = true;
                    }
                    Poll::Ready(Err(e)) => return Err(e),
                    Poll::Pending => {}
                }
            } else if self.flush {
                drop(conn);
                match Pin::new(&mut self.writer).poll_flush(cx) {
                    Poll::Ready(Ok(())) => {
                        self.flush = false;
                        progress = true;
                    }
                    Poll::Ready(Err(e)) => return Err(e),
                    Poll::Pending => {}
                }
            } else if self.shared.close_output.get() {
                drop(conn);
                match Pin::new(&mut self.writer).poll_close(cx) {
                    Poll::Ready(Ok(())) => {
                        self.output_closed = true;
                        progress = true;
                    }
                    Poll::Ready(Err(e)) => return Err(e),
                    Poll::Pending => {}
                }
            }
        }

        // Bytes read and not taken, or lines the connection holds, go in before any read.
        self.take_end_input();
        let held = self.shared.conn.borrow().is_input_held() && !self.shared.input_ended.get();
        let ready = self.driver.is_ready();
        if !ready {
            // Held back by the driver (backpressure): nothing is fed or read until it wakes
            // the pump.
        } else if self.start < self.end || held {
            let (start, end) = (self.start, self.end);
            let buf = std::mem::take(&mut self.buf);
            progress |= self.input(cx, |conn, now| conn.handle_bytes(now, &buf[start..end]));
            self.buf = buf;
            if self.start >= self.end {
                (self.start, self.end) = (0, 0);
            }
        } else if !self.eof {
            match Pin::new(&mut self.reader).poll_read(cx, &mut self.buf) {
                Poll::Ready(Ok(0)) => {
                    self.eof = true;
                    progress = true;
                }
                Poll::Ready(Ok(n)) => {
                    (self.start, self.end) = (0, n);
                    progress = true;
                }
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => progress = true,
                Poll::Ready(Err(e)) => {
                    self.read_error = Some(e);
                    self.eof = true;
                    progress = true;
                }
                Poll::Pending => {}
            }
        } else if !self.eof_fed {
            self.eof_fed = true;
            self.input(cx, |conn, now| {
                conn.handle_eof(now);
                0
            });
            progress = true;
        }

        // The connection's deadline.
        let deadline = self.shared.conn.borrow().poll_timeout();
        match deadline {
            None => self.timer = None,
            Some(deadline) => {
                if self.timer.as_ref().is_none_or(|(at, _)| *at != deadline) {
                    let sleep = Box::pin(self.runtime.sleep_until(deadline));
                    self.timer = Some((deadline, sleep));
                }
                let fired = self
                    .timer
                    .as_mut()
                    .is_some_and(|(_, sleep)| sleep.as_mut().poll(cx).is_ready());
                if ready && (fired || self.runtime.now() >= deadline) {
                    self.timer = None;
                    self.input(cx, |conn, now| {
                        conn.handle_timeout(now);
                        0
                    });
                    progress = true;
                }
            }
        }

        // The end: closed, everything written and flushed, then the writer closed.
        let done = {
            let conn = self.shared.conn.borrow();
            self.eof_fed
                && conn.is_closed()
                && (self.output_closed || (conn.poll_transmit().is_empty() && !self.flush))
        };
        if done {
            self.closing = true;
        }
        Ok(progress)
    }
}

impl<C, D, R, Rd, Wr> Future for Pump<C, D, R, Rd, Wr>
where
    C: Connection,
    D: Driver<C>,
    R: Runtime,
    Rd: AsyncRead + Unpin,
    Wr: AsyncWrite + Unpin,
{
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        *this.shared.pump.borrow_mut() = Some(cx.waker().clone());
        // A peer that always has bytes ready must not keep the executor to this future:
        // after a budget of steps, yield and ask to be polled again.
        for _ in 0..STEP_BUDGET {
            if this.shared.stopped.get() {
                this.end();
                return Poll::Ready(Ok(()));
            }
            if this.closing {
                let closed = if this.output_closed {
                    Poll::Ready(Ok(()))
                } else {
                    Pin::new(&mut this.writer).poll_close(cx)
                };
                let Poll::Ready(closed) = closed else {
                    return Poll::Pending;
                };
                this.end();
                return Poll::Ready(match this.read_error.take() {
                    Some(e) => Err(e),
                    None => closed,
                });
            }
            match this.step(cx) {
                Ok(true) => continue,
                Ok(false) => return Poll::Pending,
                Err(e) => {
                    this.end();
                    return Poll::Ready(Err(e));
                }
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

// No field is ever pinned through the pump (the reader and the writer are `Unpin`, the
// timer is boxed), so the pump moves freely whatever the driver is.
impl<C: Connection, D, R: Runtime, Rd: Unpin, Wr: Unpin> Unpin for Pump<C, D, R, Rd, Wr> {}

impl<C: Connection, D, R: Runtime, Rd, Wr> Pump<C, D, R, Rd, Wr> {
    fn end(&mut self) {
        self.shared.ended.set(true);
        self.shared.wake_room();
    }
}

// Ending early: the application's own shutdown (a signal) and giving up on a stalled peer.

impl<C: Connection> Shared<C> {
    /// Ends the input as if the peer had closed its output: the pump reads no more, drops the
    /// bytes it read and has not fed, feeds no more held lines, and gives the connection
    /// `handle_eof` at its next step; then it ends as at the peer's EOF (last bytes written
    /// and flushed, writer closed). How an application shuts down gracefully on a signal:
    /// acp-core answers running turns `cancelled` and settles pending requests (R-RPC-11).
    pub fn end_input(&self) {
        self.input_ended.set(true);
        self.wake_pump();
    }

    /// Whether [`end_input`](Self::end_input) was called.
    pub fn is_input_ended(&self) -> bool {
        self.input_ended.get()
    }

    /// Ends the pump at its next poll, with `Ok(())`: nothing more is read, written or
    /// flushed, and the writer is not closed, so bytes not yet written are lost. For giving
    /// up on a peer that stopped reading (a grace period after EOF ran out, a second
    /// signal): a pump waiting on a full pipe would wait forever.
    pub fn stop(&self) {
        self.stopped.set(true);
        self.wake_pump();
    }
}

impl<C: Connection, D, R: Runtime, Rd, Wr> Pump<C, D, R, Rd, Wr> {
    /// After [`Shared::end_input`]: what was read and not fed is dropped, and the input is
    /// at its end (EOF is fed next).
    fn take_end_input(&mut self) {
        if self.shared.input_ended.get() && !self.eof_fed {
            self.eof = true;
            (self.start, self.end) = (0, 0);
        }
    }
}
