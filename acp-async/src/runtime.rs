//! What the drive loop needs from an async runtime: the time and a timer. Nothing else —
//! no spawning, no I/O reactor of its own (byte streams come in as futures-io traits).
//!
//! acp-core is fed the time as [`Instant`] milliseconds and asks for its next deadline with
//! `poll_timeout`; a [`Runtime`] turns that into the runtime's own clock and timer.
//! [`Smol`](crate::smol::Smol) and [`Tokio`](crate::tokio::Tokio) come with their features;
//! [`NoTimers`] needs no runtime at all (tests, connections configured without deadlines).

use core::future::Future;

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
    type Sleep = core::future::Pending<()>;

    fn now(&self) -> Instant {
        Instant(0)
    }

    fn sleep_until(&self, _deadline: Instant) -> Self::Sleep {
        core::future::pending()
    }
}

/// Milliseconds from `origin` to `now`, saturating.
#[cfg(any(feature = "smol", feature = "tokio"))]
pub(crate) fn millis(elapsed: core::time::Duration) -> Instant {
    Instant(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
}
