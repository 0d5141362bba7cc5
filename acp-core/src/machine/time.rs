//! The virtual clock: time is always a parameter, never read inside the core.

use core::ops::Add;
use core::time::Duration;

/// A point in time, in milliseconds from an origin the caller picks (process start, test
/// start, zero). Only differences and order matter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(pub u64);

impl Instant {
    /// The origin.
    pub const ZERO: Self = Self(0);

    /// The instant `ms` milliseconds after the origin.
    pub const fn from_millis(ms: u64) -> Self {
        Self(ms)
    }

    /// Milliseconds since the origin.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// `self + d`, saturating at the far future instead of overflowing: a deadline that far
    /// away never fires, which is what an absurd timeout means.
    pub fn saturating_add(self, d: Duration) -> Self {
        let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Self(self.0.saturating_add(ms))
    }

    /// The instant `ms` milliseconds later, saturating at the end of time.
    pub const fn plus_ms(self, ms: u64) -> Instant {
        Instant(self.0.saturating_add(ms))
    }

    /// Milliseconds from `earlier` to `self`, zero if `earlier` is later.
    pub const fn ms_since(self, earlier: Instant) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// How long after `earlier` this is; zero if `earlier` is in fact later.
    pub fn saturating_duration_since(self, earlier: Self) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// Same as [`Instant::saturating_add`].
    fn add(self, d: Duration) -> Instant {
        self.saturating_add(d)
    }
}

impl core::fmt::Display for Instant {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

/// Keeps time monotonic: a `now` earlier than one already seen is treated as the latest seen
/// (str0m's rule), so a clock that steps backwards can never make a deadline fire twice or a
/// settled state come back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Monotonic {
    latest: Instant,
}

impl Monotonic {
    /// A clock that has seen nothing later than `start`.
    pub const fn new(start: Instant) -> Self {
        Self { latest: start }
    }

    /// Feeds one `now` and returns the time to use: the later of `now` and every earlier one.
    pub fn observe(&mut self, now: Instant) -> Instant {
        if now > self.latest {
            self.latest = now;
        }
        self.latest
    }

    /// The latest time observed.
    pub const fn latest(&self) -> Instant {
        self.latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_nows_are_ignored() {
        let mut clock = Monotonic::new(Instant(5));
        assert_eq!(clock.observe(Instant(10)), Instant(10));
        assert_eq!(clock.observe(Instant(3)), Instant(10));
        assert_eq!(clock.observe(Instant(11)), Instant(11));
    }

    #[test]
    fn adding_a_huge_duration_saturates() {
        assert_eq!(Instant(10) + Duration::MAX, Instant(u64::MAX));
        assert_eq!(Instant(10) + Duration::from_millis(5), Instant(15));
        assert_eq!(
            Instant(3).saturating_duration_since(Instant(10)),
            Duration::ZERO
        );
    }
}
