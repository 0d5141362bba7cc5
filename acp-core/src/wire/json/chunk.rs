//! Long strings a chunk of 64 bytes at a time, as bit masks: where the quotes, backslashes,
//! control characters and non-ASCII bytes are, and which bytes escapes hold.
//!
//! Code and diffs put a backslash every dozen bytes (`\n`, `\"`), so a scan that stops at the
//! first special byte of a block stops every dozen bytes, reloads, and branches on which kind
//! of byte it found. Here a chunk's masks are made once, the escapes are resolved by
//! arithmetic on them ([`held_by_escapes`]), and the closing quote is the first quote no
//! escape holds; what is left to look at byte by byte (the escapes' second bytes, the
//! non-ASCII runs) is read off the masks without reloading anything.

use super::stops::{BLOCK, Classes, classes};

/// Bytes per chunk: one bit each in a `u64`.
pub(in crate::wire) const CHUNK: usize = 64;

/// The byte classes of up to a chunk of text, bit `i` for the `i`th byte from where the chunk
/// starts. A chunk cut short by the end of the text has no bits past its `len`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::wire) struct ChunkBits {
    /// `"`
    pub(in crate::wire) quotes: u64,
    /// `\`
    pub(in crate::wire) backslashes: u64,
    /// Bytes below `0x20`.
    pub(in crate::wire) controls: u64,
    /// Bytes of `0x80` and above.
    pub(in crate::wire) non_ascii: u64,
    /// How many bytes the chunk has: [`CHUNK`], or fewer at the end of the text.
    pub(in crate::wire) len: usize,
}

impl ChunkBits {
    /// The classes of the bytes of `bytes` from `pos` (none when `pos` is past the end).
    #[inline(always)]
    pub(in crate::wire) fn at(bytes: &[u8], pos: usize) -> Self {
        match bytes
            .get(pos..pos + CHUNK)
            .and_then(|chunk| <&[u8; CHUNK]>::try_from(chunk).ok())
        {
            Some(chunk) => Self::whole(chunk),
            None => Self::tail(bytes, pos),
        }
    }

    /// A whole chunk: four blocks.
    #[inline(always)]
    fn whole(chunk: &[u8; CHUNK]) -> Self {
        let mut bits = ChunkBits {
            len: CHUNK,
            ..ChunkBits::default()
        };
        for (index, block) in chunk.chunks_exact(BLOCK).enumerate() {
            if let Ok(block) = <&[u8; BLOCK]>::try_from(block) {
                bits.add(classes(block), index * BLOCK);
            }
        }
        bits
    }

    /// The last, shorter chunk of the text: the text's last chunk less the bytes before
    /// `pos`, so nothing is copied. Text shorter than a chunk is read a block at a time, the
    /// last partial block as the text's last block less the bytes before it, and text shorter
    /// than a block byte by byte.
    #[inline(always)]
    fn tail(bytes: &[u8], pos: usize) -> Self {
        let len = bytes.len().saturating_sub(pos).min(CHUNK);
        if let Some(last) = bytes.last_chunk::<CHUNK>() {
            let skip = (CHUNK - len) as u32;
            let whole = Self::whole(last);
            let shift = |bits: u64| bits.checked_shr(skip).unwrap_or(0);
            return ChunkBits {
                quotes: shift(whole.quotes),
                backslashes: shift(whole.backslashes),
                controls: shift(whole.controls),
                non_ascii: shift(whole.non_ascii),
                len,
            };
        }
        Self::short_text(bytes, pos, len)
    }

    /// [`tail`](Self::tail) of a text shorter than a chunk.
    #[inline(never)]
    fn short_text(bytes: &[u8], pos: usize, len: usize) -> Self {
        let mut bits = ChunkBits {
            len,
            ..ChunkBits::default()
        };
        let Some(last) = bytes.last_chunk::<BLOCK>() else {
            for (offset, &byte) in bytes.iter().skip(pos).enumerate() {
                let one = 1u16 << offset;
                let class = |hit: bool| if hit { one } else { 0 };
                bits.add(
                    Classes {
                        quotes: class(byte == b'"'),
                        backslashes: class(byte == b'\\'),
                        controls: class(byte < 0x20),
                        non_ascii: class(byte >= 0x80),
                    },
                    0,
                );
            }
            return bits;
        };
        let mut offset = 0;
        while offset < len {
            let start = pos + offset;
            let block = match bytes
                .get(start..start + BLOCK)
                .and_then(|block| <&[u8; BLOCK]>::try_from(block).ok())
            {
                Some(block) => classes(block),
                None => classes(last).after(start + BLOCK - bytes.len()),
            };
            bits.add(block, offset);
            offset += BLOCK;
        }
        bits
    }

    /// Puts a block's classes in at bit `offset`.
    #[inline(always)]
    fn add(&mut self, block: Classes, offset: usize) {
        self.quotes |= u64::from(block.quotes) << offset;
        self.backslashes |= u64::from(block.backslashes) << offset;
        self.controls |= u64::from(block.controls) << offset;
        self.non_ascii |= u64::from(block.non_ascii) << offset;
    }

    /// A bit for each byte the chunk has.
    #[inline(always)]
    pub(in crate::wire) fn present(&self) -> u64 {
        below(self.len)
    }
}

/// The chunks of a string's contents, from `start` up to the chunk that holds the closing
/// quote (or to the end of the text), each with the bytes escapes hold.
pub(in crate::wire) struct StringChunks<'a> {
    bytes: &'a [u8],
    pos: usize,
    carried: bool,
    done: bool,
}

/// One chunk of a string's contents.
#[derive(Clone, Copy, Debug)]
pub(in crate::wire) struct StringChunk {
    /// Where the chunk starts in the text.
    pub(in crate::wire) pos: usize,
    /// Its byte classes.
    pub(in crate::wire) bits: ChunkBits,
    /// The bytes escapes hold (see [`held_by_escapes`]).
    pub(in crate::wire) held: u64,
    /// Whether the first byte is held by an escape whose backslash ends the chunk before.
    pub(in crate::wire) carried: bool,
    /// The offset of the closing quote: the first quote no escape holds.
    pub(in crate::wire) closing: Option<usize>,
}

impl StringChunk {
    /// The bytes of the chunk inside the string: those before the closing quote.
    #[inline(always)]
    pub(in crate::wire) fn inside(&self) -> u64 {
        match self.closing {
            Some(at) => below(at),
            None => self.bits.present(),
        }
    }
}

impl<'a> StringChunks<'a> {
    /// The chunks of the contents starting at `start`, which is not inside an escape.
    #[inline(always)]
    pub(in crate::wire) fn new(bytes: &'a [u8], start: usize) -> Self {
        StringChunks {
            bytes,
            pos: start,
            carried: false,
            done: false,
        }
    }
}

impl Iterator for StringChunks<'_> {
    type Item = StringChunk;

    /// Bounded by the text: every chunk but the last moves a whole chunk on.
    #[inline(always)]
    fn next(&mut self) -> Option<StringChunk> {
        if self.done {
            return None;
        }
        let bits = ChunkBits::at(self.bytes, self.pos);
        let (held, carry) = held_by_escapes(bits.backslashes, self.carried);
        let quotes = bits.quotes & !held;
        let chunk = StringChunk {
            pos: self.pos,
            bits,
            held,
            carried: self.carried,
            closing: (quotes != 0).then(|| quotes.trailing_zeros() as usize),
        };
        self.done = chunk.closing.is_some() || bits.len < CHUNK;
        self.pos += CHUNK;
        self.carried = carry;
        Some(chunk)
    }
}

/// The bits below bit `index` (all of them from 64 on).
#[inline(always)]
pub(in crate::wire) fn below(index: usize) -> u64 {
    match 1u64.checked_shl(index as u32) {
        Some(bit) => bit - 1,
        None => u64::MAX,
    }
}

/// The bits from bit `index` on (none from 64 on).
#[inline(always)]
pub(in crate::wire) fn from(index: usize) -> u64 {
    !below(index)
}

/// The bytes of a chunk that escapes hold (the byte after each escaping backslash), given the
/// chunk's backslashes and whether the previous chunk's last byte was an escaping backslash
/// (`carried`: then this chunk's first byte is held). Returns them and the same flag for the
/// next chunk. A held backslash (the second of `\\`) is left out, bar the first byte:
/// it is a complete escape and needs no look. A held bit may also be set just past a short
/// chunk's last byte.
///
/// A run of backslashes escapes the byte after it when the run is odd: its backslashes pair
/// up, and an odd one out escapes what follows. Adding a run's first bit to the run carries
/// through it and sets the bit just past it; the run is odd when that bit and the first differ
/// in parity. Runs starting on even and on odd bits are added apart, so each sum's parity test
/// is one mask; a run still going at the end of the chunk overflows, and an odd one (which only
/// a run starting on an odd bit can be) escapes the next chunk's first byte.
#[inline(always)]
pub(in crate::wire) fn held_by_escapes(backslashes: u64, carried: bool) -> (u64, bool) {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let carried = u64::from(carried);
    // A backslash held by the previous chunk's escape escapes nothing itself.
    let backslashes = backslashes & !carried;
    let starts = backslashes & !(backslashes << 1);
    let (past_even_runs, _) = backslashes.overflowing_add(starts & EVEN);
    let (past_odd_runs, carry) = backslashes.overflowing_add(starts & !EVEN);
    let held =
        (past_even_runs & !backslashes & !EVEN) | (past_odd_runs & !backslashes & EVEN) | carried;
    (held, carry)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// The classes byte by byte.
    fn by_bytes(bytes: &[u8], pos: usize) -> ChunkBits {
        let mut bits = ChunkBits::default();
        for (i, &b) in bytes.iter().skip(pos).take(CHUNK).enumerate() {
            let one = 1u64 << i;
            bits.len = i + 1;
            bits.quotes |= if b == b'"' { one } else { 0 };
            bits.backslashes |= if b == b'\\' { one } else { 0 };
            bits.controls |= if b < 0x20 { one } else { 0 };
            bits.non_ascii |= if b >= 0x80 { one } else { 0 };
        }
        bits
    }

    /// The bytes escapes hold, walking the text with a flag.
    fn held_by_bytes(text: &[u8]) -> std::vec::Vec<bool> {
        let mut escaping = false;
        text.iter()
            .map(|&b| {
                let held = escaping;
                escaping = !held && b == b'\\';
                held
            })
            .collect()
    }

    /// A pseudo-random text over `alphabet`.
    fn text(state: &mut u64, len: usize, alphabet: &[u8]) -> std::vec::Vec<u8> {
        (0..len)
            .map(|_| {
                *state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                alphabet[(*state >> 33) as usize % alphabet.len()]
            })
            .collect()
    }

    #[test]
    fn chunk_bits_agree_with_the_bytes_at_every_offset_and_length() {
        let alphabet = [b'"', b'\\', b'\n', 0x1f, 0x20, b'a', 0x7f, 0x80, 0xe6, 0xff];
        let mut state = 7;
        for len in 0..200 {
            let bytes = text(&mut state, len, &alphabet);
            for pos in 0..=len + 2 {
                assert_eq!(
                    ChunkBits::at(&bytes, pos),
                    by_bytes(&bytes, pos),
                    "{bytes:?} at {pos}"
                );
            }
        }
    }

    #[test]
    fn escapes_agree_with_a_byte_walk_across_chunks() {
        // Dense in backslashes, so runs of every length cross chunk edges.
        for alphabet in [&b"\\a"[..], b"\\\\\\\"", b"\\"] {
            let mut state = 11;
            for len in [1, 63, 64, 65, 127, 128, 300] {
                for _ in 0..200 {
                    let bytes = text(&mut state, len, alphabet);
                    let want = held_by_bytes(&bytes);
                    let mut carried = false;
                    for (index, chunk) in bytes.chunks(CHUNK).enumerate() {
                        let bits = by_bytes(chunk, 0);
                        let (held, carry) = held_by_escapes(bits.backslashes, carried);
                        let chunk_want = &want[index * CHUNK..][..chunk.len()];
                        for (i, (&expected, &byte)) in chunk_want.iter().zip(chunk).enumerate() {
                            // Held backslashes are left out, bar the first byte.
                            if byte != b'\\' || i == 0 {
                                assert_eq!(held >> i & 1 == 1, expected, "{bytes:?} byte {i}");
                            }
                        }
                        let next = index * CHUNK + CHUNK;
                        if let Some(&expected) = want.get(next) {
                            assert_eq!(carry, expected, "{bytes:?} carry into {next}");
                        }
                        carried = carry;
                    }
                }
            }
        }
    }

    #[test]
    fn a_run_over_the_whole_chunk_carries_by_its_parity() {
        assert_eq!(held_by_escapes(u64::MAX, false), (0, false));
        // The first byte held: the 63 after it pair up but one, which escapes the next chunk.
        assert_eq!(held_by_escapes(u64::MAX, true), (1, true));
        assert_eq!(held_by_escapes(u64::MAX << 1, false), (0, true));
        assert_eq!(held_by_escapes(1 << 63, false), (0, true));
    }

    #[test]
    fn bit_ranges() {
        assert_eq!(below(0), 0);
        assert_eq!(below(3), 0b111);
        assert_eq!(below(64), u64::MAX);
        assert_eq!(below(200), u64::MAX);
        assert_eq!(from(0), u64::MAX);
        assert_eq!(from(62), 0b11 << 62);
        assert_eq!(from(64), 0);
    }
}
