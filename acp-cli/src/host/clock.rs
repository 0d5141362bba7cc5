//! The host's clock: wall time as the supervisor's [`Instant`], able to jump ahead.
//!
//! The lifecycle's stop-sequence waits are fixed at the spec values (5 s, 5 s, 2 s). A host that
//! wants them shorter (tests; an impatient shutdown) waits its own shorter time and then moves
//! this clock forward to the lifecycle's deadline, so the lifecycle sees the time it expects
//! and never goes backwards. With the default timings nothing ever jumps and this is plain
//! elapsed time.

use std::time::Duration;

use acp_host::supervisor::Instant;

/// Milliseconds since the clock was made, plus every jump; see the module docs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostClock {
    origin: std::time::Instant,
    skipped_ms: u64,
}

impl Default for HostClock {
    fn default() -> Self {
        Self::new()
    }
}

impl HostClock {
    /// A clock at zero now.
    pub(crate) fn new() -> Self {
        HostClock {
            origin: std::time::Instant::now(),
            skipped_ms: 0,
        }
    }

    /// The current time.
    pub(crate) fn now(&self) -> Instant {
        let elapsed = u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
        Instant(elapsed.saturating_add(self.skipped_ms))
    }

    /// Jumps to `target` if it is ahead; never goes back.
    pub(crate) fn skip_to(&mut self, target: Instant) {
        let now = self.now();
        self.skipped_ms = self
            .skipped_ms
            .saturating_add(target.as_millis().saturating_sub(now.as_millis()));
    }

    /// The wall-clock moment at which the clock will read `at` (if no jump happens first).
    pub(crate) fn wall_time_of(&self, at: Instant) -> std::time::Instant {
        let ms = at.as_millis().saturating_sub(self.skipped_ms);
        self.origin
            .checked_add(Duration::from_millis(ms))
            // Unrepresentably far: a deadline that never comes; a day is as good.
            .unwrap_or_else(|| std::time::Instant::now() + Duration::from_secs(86_400))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_moves_forward_only() {
        let mut clock = HostClock::new();
        let before = clock.now();
        clock.skip_to(before.plus_ms(10_000));
        assert!(clock.now() >= before.plus_ms(10_000));
        let after = clock.now();
        clock.skip_to(Instant(0));
        assert!(clock.now() >= after);
    }

    #[test]
    fn wall_time_accounts_for_skips() {
        let mut clock = HostClock::new();
        clock.skip_to(Instant(60_000));
        let wall = clock.wall_time_of(Instant(60_000));
        // The clock already reads at least 60 s, so that moment is not in the future.
        assert!(wall <= std::time::Instant::now());
    }
}
