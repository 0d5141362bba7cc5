//! What the drive loop needs from an async runtime: the time and a timer. Nothing else —
//! no spawning, no I/O reactor of its own (byte streams come in as futures-io traits).
//!
//! acp-core is fed the time as [`Instant`] milliseconds and asks for its next deadline with
//! `poll_timeout`; a [`Runtime`] turns that into the runtime's own clock and timer.
//! `smol::Smol` and `tokio::Tokio` come with the features of the same names;
//! [`NoTimers`] needs no runtime at all (connections configured without deadlines), and
//! [`ManualClock`] is a virtual clock for deterministic tests of deadlines.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

pub use acp_core::Instant;

/// The clock and the timer of an async runtime.
///
/// Times are milliseconds from an origin of the runtime's choice (usually when it was made):
/// the same scale for [`now`](Self::now) and [`sleep_until`](Self::sleep_until).
pub trait Runtime: Clone + 'static {
    /// A timer that resolves at its deadline.
    type Sleep: Future<Output = ()>;

    /// The current time.
    fn now(&self) -> Instant;

    /// A timer for `deadline` (already due: resolves at once).
    fn sleep_until(&self, deadline: Instant) -> Self::Sleep;
}

/// A runtime without a clock: the time is always 0 and timers never fire.
///
/// For deterministic tests (no sleeps, no wall clock) and for connections whose limits set
/// no deadlines (the default: permission, ask_user and client requests wait until answered,
/// cancelled or disconnected). With deadlines configured, they never pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTimers;

impl Runtime for NoTimers {
    type Sleep = std::future::Pending<()>;

    fn now(&self) -> Instant {
        Instant(0)
    }

    fn sleep_until(&self, _deadline: Instant) -> Self::Sleep {
        std::future::pending()
    }
}

/// A virtual clock: time moves only when the test says so ([`advance`](Self::advance)), and
/// the timers due then fire. Clones share the clock. For deterministic tests of deadlines
/// (a permission's timeout, a client's prompt deadline) without sleeping.
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    inner: Rc<ClockState>,
}

#[derive(Debug, Default)]
struct ClockState {
    now: Cell<u64>,
    timers: RefCell<Vec<Waker>>,
}

impl ManualClock {
    /// A clock at 0 ms.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock `ms` milliseconds on and wakes every timer (those now due fire).
    pub fn advance(&self, ms: u64) {
        self.inner.now.set(self.inner.now.get().saturating_add(ms));
        for waker in self.inner.timers.take() {
            waker.wake();
        }
    }
}

/// The timer of [`ManualClock`].
#[derive(Debug)]
pub struct ManualSleep {
    clock: Rc<ClockState>,
    deadline: u64,
}

impl Future for ManualSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.clock.now.get() >= self.deadline {
            return Poll::Ready(());
        }
        self.clock.timers.borrow_mut().push(cx.waker().clone());
        Poll::Pending
    }
}

impl Runtime for ManualClock {
    type Sleep = ManualSleep;

    fn now(&self) -> Instant {
        Instant(self.inner.now.get())
    }

    fn sleep_until(&self, deadline: Instant) -> ManualSleep {
        ManualSleep {
            clock: self.inner.clone(),
            deadline: deadline.0,
        }
    }
}

/// Milliseconds from `origin` to `now`, saturating.
#[cfg(any(feature = "smol", feature = "tokio"))]
pub(crate) fn millis(elapsed: core::time::Duration) -> Instant {
    Instant(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
}
