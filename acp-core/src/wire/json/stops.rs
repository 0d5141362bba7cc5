//! Where a scan must stop, over a block of sixteen bytes: the quotes, backslashes and control
//! characters for the string scan (and the non-ASCII bytes when it checks UTF-8 too), the
//! newlines for the framer, the quotes and backslashes apart for skipping validated strings,
//! and every class at once as masks ([`classes`]) for the chunk scans.
//!
//! Most bytes of ACP traffic sit inside long strings, and a stop comes every dozen bytes or so
//! (escaped newlines and quotes in code and diffs), so both the bytes per step and the cost of
//! each stop count. On x86_64 the stops come from SSE2 compares (three compares and one
//! `pmovmskb` per block) as a bit per byte; elsewhere from word arithmetic (SWAR) on two
//! 64-bit halves, as the high bit of each byte's lane. [`Stops`] hides which.
//!
//! The vector path is compiled only where SSE2 is enabled for the whole build (every x86_64
//! target but the soft-float ones). Rust still treats calling a function compiled with
//! `#[target_feature(enable = "sse2")]` from one without the attribute as `unsafe`: those three
//! calls, in [`stops`], [`equal_to`] and [`classes`], are `unsafe` code (with
//! `from_utf8_unchecked` in `json::scan_bytes`, the crate's only). Loading the block
//! needs none: the two halves are read as integers and LLVM folds them into one unaligned
//! vector load. Without them (`cfg` false) the SWAR path is used and nothing else changes.

/// Bytes per block.
pub(in crate::wire) const BLOCK: usize = 16;

/// Whether this build computes the stops with SSE2.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
macro_rules! if_sse2 {
    ($sse2:expr, $swar:expr) => {
        $sse2
    };
}
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
macro_rules! if_sse2 {
    ($sse2:expr, $swar:expr) => {
        $swar
    };
}

/// The stops of one block: bit `i` per byte `i` (SSE2), or bit `8 i + 7` (SWAR). Every set
/// bit is a stop, and every stop is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::wire) struct Stops(Lanes);

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
type Lanes = u32;
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
type Lanes = u128;

/// Bits per byte in [`Stops`].
const WIDTH: u32 = if_sse2!(1, 8);

impl Stops {
    /// Whether the block holds a stop.
    #[inline(always)]
    pub(in crate::wire) fn any(self) -> bool {
        self.0 != 0
    }

    /// The index of the first stop (meaningless when there is none).
    #[inline(always)]
    pub(in crate::wire) fn first(self) -> usize {
        (self.0.trailing_zeros() / WIDTH) as usize
    }

    /// The stops after the first `skip` bytes, numbered from there.
    #[inline(always)]
    pub(in crate::wire) fn after(self, skip: usize) -> Self {
        Stops(self.0.checked_shr(skip as u32 * WIDTH).unwrap_or(0))
    }

    /// The stops of either (for the string reader that builds owned text).
    #[cfg(feature = "alloc")]
    #[inline(always)]
    pub(in crate::wire) fn or(self, other: Self) -> Self {
        Stops(self.0 | other.0)
    }

    /// The stops before byte `index` (below [`BLOCK`]).
    #[inline(always)]
    pub(in crate::wire) fn before(self, index: usize) -> Self {
        Stops(self.0 & ((1 << (index as u32 * WIDTH)) - 1))
    }

    /// A bit per byte, whatever the representation (for the tests).
    #[cfg(test)]
    fn bits(self) -> u32 {
        (0..BLOCK as u32)
            .filter(|i| self.0 >> (i * WIDTH + WIDTH - 1) & 1 == 1)
            .fold(0, |bits, i| bits | 1 << i)
    }
}

/// The `"`, `\` and control characters (below `0x20`) of `block`, and with `NON_ASCII` its
/// bytes of `0x80` and above too (for the scan that checks UTF-8 as it goes: in JSON those
/// bytes only occur inside strings). The high bits come free: they are the block's own.
#[inline(always)]
pub(in crate::wire) fn stops<const NON_ASCII: bool>(block: &[u8; BLOCK]) -> Stops {
    if_sse2!(
        // SAFETY: `stop_bits_sse2` needs SSE2, and this line is only compiled when the build
        // enables SSE2 for all code (`cfg(target_feature = "sse2")`), so the CPU has it.
        #[allow(unsafe_code)]
        Stops(u32::from(unsafe { stop_bits_sse2::<NON_ASCII>(block) })),
        Stops(stop_lanes::<NON_ASCII>(block))
    )
}

/// The newlines of `block`.
#[inline(always)]
pub(in crate::wire) fn newlines(block: &[u8; BLOCK]) -> Stops {
    equal_to::<b'\n'>(block)
}

/// The quotes and the backslashes of `block`, for skipping a string already validated: only
/// an unescaped quote ends it, so escapes are no stop there.
#[inline(always)]
pub(in crate::wire) fn quotes_and_backslashes(block: &[u8; BLOCK]) -> (Stops, Stops) {
    (equal_to::<b'"'>(block), equal_to::<b'\\'>(block))
}

/// The bytes of `block` equal to `BYTE`.
#[inline(always)]
fn equal_to<const BYTE: u8>(block: &[u8; BLOCK]) -> Stops {
    if_sse2!(
        // SAFETY: as in `stops`: only compiled when the build enables SSE2.
        #[allow(unsafe_code)]
        Stops(u32::from(unsafe { equal_bits_sse2::<BYTE>(block) })),
        Stops(equal_lanes::<BYTE>(block))
    )
}

/// Every byte class a string scan cares about in one block, each as a bit per byte (bit `i`
/// for byte `i`), for the chunk scans (`chunk.rs`) that work on masks rather than on the
/// first stop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::wire) struct Classes {
    /// `"`
    pub(in crate::wire) quotes: u16,
    /// `\`
    pub(in crate::wire) backslashes: u16,
    /// Bytes below `0x20`.
    pub(in crate::wire) controls: u16,
    /// Bytes of `0x80` and above.
    pub(in crate::wire) non_ascii: u16,
}

impl Classes {
    /// These classes without the first `skip` bytes, numbered from there.
    #[inline(always)]
    pub(in crate::wire) fn after(self, skip: usize) -> Self {
        let shift = |bits: u16| bits.checked_shr(skip as u32).unwrap_or(0);
        Classes {
            quotes: shift(self.quotes),
            backslashes: shift(self.backslashes),
            controls: shift(self.controls),
            non_ascii: shift(self.non_ascii),
        }
    }
}

/// The [`Classes`] of `block`. What a caller does not read costs nothing once inlined.
#[inline(always)]
pub(in crate::wire) fn classes(block: &[u8; BLOCK]) -> Classes {
    if_sse2!(
        // SAFETY: as in `stops`: only compiled when the build enables SSE2.
        #[allow(unsafe_code)]
        unsafe {
            classes_sse2(block)
        },
        classes_swar(block)
    )
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn classes_sse2(block: &[u8; BLOCK]) -> Classes {
    use core::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_min_epu8, _mm_movemask_epi8, _mm_set_epi64x, _mm_set1_epi8,
    };
    let (low, high) = halves(block);
    let bytes = _mm_set_epi64x(high as i64, low as i64);
    let bits = |lanes| _mm_movemask_epi8(lanes) as u16;
    Classes {
        quotes: bits(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8))),
        backslashes: bits(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8))),
        // As in `stop_bits_sse2`.
        controls: bits(_mm_cmpeq_epi8(
            _mm_min_epu8(bytes, _mm_set1_epi8(0x1f)),
            bytes,
        )),
        non_ascii: bits(bytes),
    }
}

/// [`classes`] by word arithmetic (compiled and tested everywhere).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn classes_swar(block: &[u8; BLOCK]) -> Classes {
    let (low, high) = halves(block);
    let bits = |lanes: fn(u64) -> u64| {
        u16::from(lane_byte(lanes(low))) | u16::from(lane_byte(lanes(high))) << 8
    };
    Classes {
        quotes: bits(|word| zero_bytes(word ^ (ONES * u64::from(b'"')))),
        backslashes: bits(|word| zero_bytes(word ^ (ONES * u64::from(b'\\')))),
        // As in `stop_bytes`: `l + 0x60` has its high bit clear exactly when `l < 0x20`.
        controls: bits(|word| !(((word & LOWS) + ONES * 0x60) | word) & HIGHS),
        non_ascii: bits(|word| word & HIGHS),
    }
}

/// The high bits of a word's eight bytes as the eight bits of one byte (bit `i` for byte `i`).
///
/// Moved down to the bottom of their bytes, the lanes are bits `8 i`; the multiplier adds the
/// word to itself shifted by `7 k + 7` for every `k`, which puts bit `8 i` at `56 + i` when
/// `k = 7 - i`. No other pair of `i` and `k` lands in the top byte or overlaps another below
/// it, so nothing carries into it.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
const fn lane_byte(lanes: u64) -> u8 {
    ((lanes >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn stop_bits_sse2<const NON_ASCII: bool>(block: &[u8; BLOCK]) -> u16 {
    use core::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x,
        _mm_set1_epi8,
    };
    let (low, high) = halves(block);
    let bytes = _mm_set_epi64x(high as i64, low as i64);
    let quotes = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
    let backslashes = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
    // `min(b, 0x1f) == b` exactly when `b <= 0x1f`, comparing unsigned.
    let controls = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
    let stops = _mm_or_si128(_mm_or_si128(quotes, backslashes), controls);
    let stops = if NON_ASCII {
        _mm_or_si128(stops, bytes)
    } else {
        stops
    };
    _mm_movemask_epi8(stops) as u16
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn equal_bits_sse2<const BYTE: u8>(block: &[u8; BLOCK]) -> u16 {
    use core::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set_epi64x, _mm_set1_epi8};
    let (low, high) = halves(block);
    let bytes = _mm_set_epi64x(high as i64, low as i64);
    _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(BYTE as i8))) as u16
}

/// [`stops`] by word arithmetic, as lanes (compiled and tested everywhere).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn stop_lanes<const NON_ASCII: bool>(block: &[u8; BLOCK]) -> u128 {
    let (low, high) = halves(block);
    u128::from(stop_bytes::<NON_ASCII>(low)) | u128::from(stop_bytes::<NON_ASCII>(high)) << 64
}

/// [`equal_to`] by word arithmetic, as lanes (compiled and tested everywhere).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn equal_lanes<const BYTE: u8>(block: &[u8; BLOCK]) -> u128 {
    let (low, high) = halves(block);
    let byte = ONES * u64::from(BYTE);
    u128::from(zero_bytes(low ^ byte)) | u128::from(zero_bytes(high ^ byte)) << 64
}

/// The two little-endian halves of a block.
#[inline(always)]
fn halves(block: &[u8; BLOCK]) -> (u64, u64) {
    let (low, high) = block.split_at(8);
    let word = |half: &[u8]| u64::from_le_bytes(half.first_chunk().copied().unwrap_or_default());
    (word(low), word(high))
}

/// `0x01` in every byte of a word.
const ONES: u64 = u64::from_le_bytes([0x01; 8]);
/// `0x7f` in every byte of a word.
const LOWS: u64 = u64::from_le_bytes([0x7f; 8]);
/// `0x80` in every byte of a word.
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// `0x80` in each byte of `word` that is a quote, a backslash or a control character.
///
/// For the low seven bits `l` of a byte, `(l ^ c) + 0x7f` has its high bit set unless
/// `l == c`, and `l + 0x60` unless `l < 0x20`; none of the sums carries into the next byte,
/// so every bit is exact. A byte is a stop when none of the three is set and its own high bit
/// is clear, or (`NON_ASCII`) when its own high bit is set.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
const fn stop_bytes<const NON_ASCII: bool>(word: u64) -> u64 {
    let low = word & LOWS;
    let not_quote = (low ^ (ONES * b'"' as u64)) + LOWS;
    let not_backslash = (low ^ (ONES * b'\\' as u64)) + LOWS;
    let not_control = low + ONES * 0x60;
    if NON_ASCII {
        (!(not_quote & not_backslash & not_control) | word) & HIGHS
    } else {
        !((not_quote & not_backslash & not_control) | word) & HIGHS
    }
}

/// `0x80` in each byte of `word` that is zero (exact, as in [`stop_bytes`]).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
const fn zero_bytes(word: u64) -> u64 {
    !(((word & LOWS) + LOWS) | word) & HIGHS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_bytes(block: &[u8; BLOCK], stop: fn(u8) -> bool) -> u32 {
        block
            .iter()
            .enumerate()
            .filter(|&(_, &b)| stop(b))
            .fold(0, |mask, (i, _)| mask | 1 << i)
    }

    /// The lanes of the word arithmetic, a bit per byte, whichever path the build uses.
    fn lane_bits(lanes: u128) -> u32 {
        (0..BLOCK as u32)
            .filter(|i| lanes >> (8 * i + 7) & 1 == 1)
            .fold(0, |bits, i| bits | 1 << i)
    }

    fn check(block: &[u8; BLOCK]) {
        let want = by_bytes(block, |b| {
            b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b)
        });
        assert_eq!(stops::<true>(block).bits(), want, "{block:?}");
        assert_eq!(lane_bits(stop_lanes::<true>(block)), want, "{block:?}");
        let want = by_bytes(block, |b| b == b'"' || b == b'\\' || b < 0x20);
        assert_eq!(stops::<false>(block).bits(), want, "{block:?}");
        assert_eq!(lane_bits(stop_lanes::<false>(block)), want, "{block:?}");
        let want = by_bytes(block, |b| b == b'\n');
        assert_eq!(newlines(block).bits(), want, "{block:?}");
        assert_eq!(lane_bits(equal_lanes::<b'\n'>(block)), want, "{block:?}");
        let (quotes, backslashes) = quotes_and_backslashes(block);
        let want = by_bytes(block, |b| b == b'"');
        assert_eq!(quotes.bits(), want, "{block:?}");
        assert_eq!(lane_bits(equal_lanes::<b'"'>(block)), want, "{block:?}");
        let want = by_bytes(block, |b| b == b'\\');
        assert_eq!(backslashes.bits(), want, "{block:?}");
        assert_eq!(lane_bits(equal_lanes::<b'\\'>(block)), want, "{block:?}");
        // Every class apart, on both paths.
        let want = Classes {
            quotes: by_bytes(block, |b| b == b'"') as u16,
            backslashes: by_bytes(block, |b| b == b'\\') as u16,
            controls: by_bytes(block, |b| b < 0x20) as u16,
            non_ascii: by_bytes(block, |b| b >= 0x80) as u16,
        };
        assert_eq!(classes(block), want, "{block:?}");
        assert_eq!(classes_swar(block), want, "{block:?}");
        for skip in 0..=BLOCK + 1 {
            let shift = |bits: u16| bits.checked_shr(skip as u32).unwrap_or(0);
            let after = classes(block).after(skip);
            assert_eq!(after.quotes, shift(want.quotes), "{block:?} {skip}");
            assert_eq!(
                after.backslashes,
                shift(want.backslashes),
                "{block:?} {skip}"
            );
            assert_eq!(after.controls, shift(want.controls), "{block:?} {skip}");
            assert_eq!(after.non_ascii, shift(want.non_ascii), "{block:?} {skip}");
        }
        // The first stop and the stops after a prefix.
        let all = stops::<false>(block);
        let bits = all.bits();
        if bits != 0 {
            assert_eq!(all.first(), bits.trailing_zeros() as usize, "{block:?}");
        }
        for index in 0..BLOCK {
            let before = all.before(index).bits();
            assert_eq!(before, bits & ((1 << index) - 1), "{block:?} {index}");
        }
        for skip in 0..=BLOCK + 1 {
            let after = all.after(skip).bits();
            assert_eq!(
                after,
                bits.checked_shr(skip as u32).unwrap_or(0),
                "{block:?} {skip}"
            );
        }
    }

    /// Every byte value at every position, on a background of every other byte value
    /// (which catches carries and borrows between bytes and halves).
    #[test]
    fn every_byte_value_at_every_position() {
        for background in 0..=255u8 {
            for value in 0..=255u8 {
                for at in 0..BLOCK {
                    let mut block = [background; BLOCK];
                    block[at] = value;
                    check(&block);
                }
            }
        }
    }

    /// Pseudo-random blocks dense in bytes near the stops.
    #[test]
    fn mixed_blocks() {
        let alphabet = [
            b'"', b'\\', b'\n', 0x0b, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0x9f, 0xa2,
            0xdc, 0xff, b'a',
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            let mut block = [0u8; BLOCK];
            for byte in &mut block {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                *byte = alphabet[(state >> 60) as usize % alphabet.len()];
            }
            check(&block);
        }
    }
}
