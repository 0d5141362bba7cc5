//! `--chaos SEED`: the harness's writes cut at random byte boundaries and delayed, and its
//! reads of the agent's output stalled; the `chaos` cases draw their delays, moments and
//! counts from it too (seed 0 without `--chaos`). Every case gets its own generator, seeded from the
//! run's seed and the case's id, so a run is reproducible whatever order cases finish in.

use std::time::Duration;

/// A seeded source of cuts and pauses (SplitMix64: small, fast, good enough for this).
#[derive(Clone, Debug)]
pub struct Chaos {
    state: u64,
}

impl Chaos {
    /// The generator for one case of a run with `seed`.
    pub fn for_case(seed: u64, case_id: &str) -> Chaos {
        // FNV-1a of the id, so the same case gets the same cuts in every run with this seed.
        let hash = case_id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Chaos { state: seed ^ hash }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Where to cut a write of `len` bytes: the ends of its pieces, increasing, the last one
    /// `len`. At most eight pieces, so a megabyte line is not written byte by byte.
    pub fn cuts(&mut self, len: usize) -> Vec<usize> {
        let mut ends: Vec<usize> = (0..self.below(8))
            .filter(|_| len > 1)
            .map(|_| 1 + self.below(len as u64 - 1) as usize)
            .collect();
        ends.push(len);
        ends.sort_unstable();
        ends.dedup();
        ends
    }

    /// A number from `low` to `high`, both included (`low` <= `high`).
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high - low + 1)
    }

    /// A pause of 0 to 3 ms.
    pub fn pause(&mut self) -> Duration {
        Duration::from_micros(self.below(3000))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_cover_the_write_and_are_reproducible() {
        for len in [1usize, 2, 10, 1 << 20] {
            let a = Chaos::for_case(7, "framing/crlf").cuts(len);
            let b = Chaos::for_case(7, "framing/crlf").cuts(len);
            assert_eq!(a, b);
            assert_eq!(*a.last().unwrap(), len);
            assert!(a.windows(2).all(|w| w[0] < w[1]));
            assert!(a[0] >= 1 && a.len() <= 8);
        }
    }

    #[test]
    fn seeds_and_cases_change_the_cuts() {
        let base = Chaos::for_case(1, "x").cuts(1000);
        assert_ne!(base, Chaos::for_case(2, "x").cuts(1000));
        assert_ne!(base, Chaos::for_case(1, "y").cuts(1000));
    }
}
