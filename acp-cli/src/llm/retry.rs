//! When a busy or failing model server is tried again, and how the client waits.
//!
//! 429 and 5xx answers are retried, at most [`RetryPolicy::attempts`] tries in all, after
//! the server's `Retry-After` (seconds) or an exponential backoff, both capped. The wait is
//! a [`Sleeper`] so tests pass one that records the delays and returns at once: no test
//! sleeps or measures time.

use core::future::Future;
use core::time::Duration;

/// How often and how long to retry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// The backoff after the first failed try; it doubles after each further one.
    pub base_delay: Duration,
    /// The longest wait, whatever `Retry-After` asks.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 3,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed try number `attempt` (1-based): `retry_after` when the server
    /// sent one, else the backoff; never more than `max_delay`.
    pub(crate) fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self
            .base_delay
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        retry_after.unwrap_or(backoff).min(self.max_delay)
    }
}

/// Whether an HTTP status is worth another try: 429 (rate limited) and 5xx.
pub(crate) fn is_retryable(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// Waits between tries.
pub trait Sleeper {
    /// Waits `delay`.
    fn sleep(&mut self, delay: Duration) -> impl Future<Output = ()> + Send;
}

/// The real wait: a smol timer.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TimerSleeper;

impl Sleeper for TimerSleeper {
    async fn sleep(&mut self, delay: Duration) {
        smol::Timer::after(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let policy = RetryPolicy::default();
        let delays: Vec<u64> = (1..=7).map(|n| policy.delay(n, None).as_secs()).collect();
        assert_eq!(delays, vec![1, 2, 4, 8, 16, 30, 30]);
    }

    #[test]
    fn retry_after_wins_but_is_capped() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(0))),
            Duration::ZERO
        );
        assert_eq!(
            policy.delay(2, Some(Duration::from_secs(5))),
            Duration::from_secs(5)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3600))),
            Duration::from_secs(30)
        );
    }

    #[test]
    fn only_429_and_5xx_are_retried() {
        let retried: Vec<u16> = [400, 401, 403, 404, 408, 429, 500, 502, 503, 599, 600]
            .into_iter()
            .filter(|s| is_retryable(*s))
            .collect();
        assert_eq!(retried, vec![429, 500, 502, 503, 599]);
    }
}
