//! Where a scan must stop, as a bit mask over a block of sixteen bytes: the quotes, backslashes
//! and control characters for the string scan, the newlines for the framer.
//!
//! Most bytes of ACP traffic sit inside long strings, and a stop comes every dozen bytes or so
//! (escaped newlines and quotes in code and diffs), so both the bytes per step and the cost of
//! each stop count. On x86_64 the mask comes from SSE2 compares (three compares and one
//! `pmovmskb` per block); elsewhere from word arithmetic (SWAR) on two 64-bit halves.
//!
//! The vector path is compiled only where SSE2 is enabled for the whole build (every x86_64
//! target but the soft-float ones). Rust still treats calling a function compiled with
//! `#[target_feature(enable = "sse2")]` from one without the attribute as `unsafe`: those two
//! calls, in [`stop_bits`] and [`newline_bits`], are the crate's only `unsafe` code. Loading
//! the block needs none: the two halves are read as integers and LLVM folds them into one
//! unaligned vector load.

/// Bytes per block.
pub(in crate::wire) const BLOCK: usize = 16;

/// Bit `i` is set when byte `i` of `block` is `"`, `\` or below `0x20`; bits 16 and up are
/// clear.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
#[allow(unsafe_code)]
pub(super) fn stop_bits(block: &[u8; BLOCK]) -> u32 {
    // SAFETY: `stop_bits_sse2` needs SSE2, and this item only exists when the build enables
    // SSE2 for all code (`cfg(target_feature = "sse2")`), so the CPU running it has SSE2.
    unsafe { stop_bits_sse2(block) }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn stop_bits_sse2(block: &[u8; BLOCK]) -> u32 {
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
    _mm_movemask_epi8(stops) as u32 & 0xffff
}

/// Bit `i` is set when byte `i` of `block` is `\n`; bits 16 and up are clear.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
#[allow(unsafe_code)]
pub(in crate::wire) fn newline_bits(block: &[u8; BLOCK]) -> u32 {
    // SAFETY: as in `stop_bits`: this item only exists when the build enables SSE2.
    unsafe { newline_bits_sse2(block) }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn newline_bits_sse2(block: &[u8; BLOCK]) -> u32 {
    use core::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set_epi64x, _mm_set1_epi8};
    let (low, high) = halves(block);
    let bytes = _mm_set_epi64x(high as i64, low as i64);
    _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\n' as i8))) as u32 & 0xffff
}

/// [`newline_bits`] by word arithmetic, for targets without a vector path (tested everywhere).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
pub(in crate::wire) fn newline_bits_swar(block: &[u8; BLOCK]) -> u32 {
    let (low, high) = halves(block);
    u32::from(compress(zero_bytes(low ^ (ONES * u64::from(b'\n')))))
        | u32::from(compress(zero_bytes(high ^ (ONES * u64::from(b'\n'))))) << 8
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
pub(in crate::wire) use newline_bits_swar as newline_bits;

/// `0x80` in each byte of `word` that is zero (exact, as in [`stop_bytes`]).
#[inline(always)]
const fn zero_bytes(word: u64) -> u64 {
    !(((word & LOWS) + LOWS) | word) & HIGHS
}

/// [`stop_bits`] by word arithmetic, for targets without a vector path (tested everywhere).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
pub(super) fn stop_bits_swar(block: &[u8; BLOCK]) -> u32 {
    let (low, high) = halves(block);
    u32::from(compress(stop_bytes(low))) | u32::from(compress(stop_bytes(high))) << 8
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
pub(super) use stop_bits_swar as stop_bits;

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
/// is clear.
#[inline(always)]
const fn stop_bytes(word: u64) -> u64 {
    let low = word & LOWS;
    let not_quote = (low ^ (ONES * b'"' as u64)) + LOWS;
    let not_backslash = (low ^ (ONES * b'\\' as u64)) + LOWS;
    let not_control = low + ONES * 0x60;
    !((not_quote & not_backslash & not_control) | word) & HIGHS
}

/// The high bits of the eight bytes of `word`, as bits 0 to 7: the multiplication moves bit 7
/// of byte `i` to bit `56 + i` with no two partial products overlapping.
#[inline(always)]
const fn compress(high_bits: u64) -> u8 {
    ((high_bits >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_bytes(block: &[u8; BLOCK]) -> u32 {
        block
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'"' || b == b'\\' || b < 0x20)
            .fold(0, |mask, (i, _)| mask | 1 << i)
    }

    fn newlines_by_bytes(block: &[u8; BLOCK]) -> u32 {
        block
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
            .fold(0, |mask, (i, _)| mask | 1 << i)
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
                    let want = by_bytes(&block);
                    assert_eq!(stop_bits(&block), want, "{block:?}");
                    assert_eq!(stop_bits_swar(&block), want, "{block:?}");
                    let newlines = newlines_by_bytes(&block);
                    assert_eq!(newline_bits(&block), newlines, "{block:?}");
                    assert_eq!(newline_bits_swar(&block), newlines, "{block:?}");
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
                *byte = alphabet[(state >> 60) as usize];
            }
            let want = by_bytes(&block);
            assert_eq!(stop_bits(&block), want, "{block:?}");
            assert_eq!(stop_bits_swar(&block), want, "{block:?}");
            let newlines = newlines_by_bytes(&block);
            assert_eq!(newline_bits(&block), newlines, "{block:?}");
            assert_eq!(newline_bits_swar(&block), newlines, "{block:?}");
        }
    }
}
