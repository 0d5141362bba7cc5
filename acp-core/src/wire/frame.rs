//! NDJSON framing: a byte stream in, one line at a time out.
//!
//! The rules (DESIGN.md §4, "framing", "oversized line", "invalid UTF-8"):
//!
//! - Lines end at byte `0x0A` and nowhere else. One `\r` right before it is stripped; a lone
//!   `\r` anywhere else stays in the line.
//! - Blank lines and lines of JSON whitespace only (space, `\t`, `\r`) are skipped silently.
//! - A last line without a newline is delivered once the caller says the stream ended
//!   ([`Framer::finish`]).
//! - A line longer than the limit is discarded up to its newline and reported once, as
//!   [`FrameError::LineTooLong`]; the line after it is served normally. The limit counts the
//!   bytes before the `\n`, **including** a trailing `\r`: with a limit of 64, `64 bytes + \n`
//!   and `63 bytes + \r\n` fit, `64 bytes + \r\n` does not.
//! - A line that is not UTF-8 is reported as [`FrameError::InvalidUtf8`]; the next line is
//!   served normally.
//!
//! Memory is bounded: the framer works inside a [`Storage`] the caller provides and never
//! holds more than its size (fixed storage) or `max(max_line, GROWABLE_MIN_CAPACITY)` bytes
//! (growable storage). An oversized line is dropped as it streams by, so it costs no memory.
//!
//! Work is O(n) in the bytes fed however they are chunked: the newline search resumes where it
//! stopped, and a partial line is moved to the front of the storage at most once.

use core::fmt;
use core::str;

/// The line limit of [`Framer::default`] and [`Framer::with_limit`]'s usual choice: 16 MiB.
#[cfg(feature = "alloc")]
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

/// How far a growable storage may always grow, even when the line limit is smaller.
///
/// A growable storage starts empty, grows to this size on the first feed and doubles when a
/// line does not fit, never past `max(max_line, GROWABLE_MIN_CAPACITY)`. The floor keeps a
/// tiny limit from forcing tiny copies; it is the only slack above the limit.
pub const GROWABLE_MIN_CAPACITY: usize = 8 * 1024;

/// Why one line could not be delivered. The framer reports it once for that line and goes on
/// with the next one; the connection answers it with `-32700` and `id: null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The line was longer than the limit; it was discarded up to its newline.
    LineTooLong {
        /// The maximum line length in bytes, newline excluded.
        limit: usize,
    },
    /// The line was not valid UTF-8.
    InvalidUtf8 {
        /// Byte offset within the line of the first invalid sequence.
        valid_up_to: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::LineTooLong { limit } => {
                write!(f, "line exceeds the maximum length of {limit} bytes")
            }
            FrameError::InvalidUtf8 { valid_up_to } => {
                write!(f, "invalid UTF-8 at byte {valid_up_to}")
            }
        }
    }
}

impl core::error::Error for FrameError {}

/// Bytes the framer may keep partial and complete lines in.
///
/// Fixed storage (`[u8; N]`, `&mut [u8]`) is used whole from the start. Growable storage
/// (`heapless::Vec<u8, N>`, and `Vec<u8>` under `alloc`) starts at its current length and is
/// grown on demand, so an idle connection costs little. Existing contents are overwritten.
pub trait Storage {
    /// The bytes usable now.
    fn bytes(&self) -> &[u8];

    /// The bytes usable now, for writing.
    fn bytes_mut(&mut self) -> &mut [u8];

    /// The most bytes this storage can ever provide; the line limit is clamped to it.
    fn max_len(&self) -> usize;

    /// Makes at least `len` bytes usable; the framer never asks for more than
    /// [`max_len`](Storage::max_len). Fixed storage has nothing to do.
    ///
    /// A storage that does not grow when asked is treated as full: lines that do not fit are
    /// reported as too long.
    fn grow_to(&mut self, len: usize) {
        let _ = len;
    }
}

impl<const N: usize> Storage for [u8; N] {
    fn bytes(&self) -> &[u8] {
        self
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }

    fn max_len(&self) -> usize {
        N
    }
}

impl Storage for &mut [u8] {
    fn bytes(&self) -> &[u8] {
        self
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }

    fn max_len(&self) -> usize {
        self.len()
    }
}

impl<LenT: heapless::LenType, const N: usize> Storage for heapless::Vec<u8, N, LenT> {
    fn bytes(&self) -> &[u8] {
        self.as_slice()
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }

    fn max_len(&self) -> usize {
        N
    }

    fn grow_to(&mut self, len: usize) {
        // Cannot fail: the length is clamped to the capacity.
        let _ = self.resize(len.min(N), 0);
    }
}

#[cfg(feature = "alloc")]
impl Storage for alloc::vec::Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }

    fn max_len(&self) -> usize {
        usize::MAX
    }

    fn grow_to(&mut self, len: usize) {
        if len > self.len() {
            self.resize(len, 0);
        }
    }
}

/// Splits a byte stream into NDJSON lines, bounded by a maximum line length, over storage the
/// caller provides.
///
/// # Call loop
///
/// [`feed`](Framer::feed) copies what fits and returns how many bytes it took; it takes less
/// than offered only while complete lines (or a report) wait in the storage. So feed, drain
/// [`next_line`](Framer::next_line) until `None`, and feed the rest again. After a full drain
/// the next `feed` always takes at least one byte, so the loop ends. At end of stream call
/// [`finish`](Framer::finish) and drain once more for the last line.
///
/// ```
/// use acp_core::wire::frame::{FrameError, Framer};
///
/// let mut framer = Framer::new([0u8; 64], 64);
/// let mut lines = Vec::new();
/// let mut errors = Vec::new();
/// for read in [&b"{\"a\":1}\r\n\n  \n{\"b\""[..], b":2}\nno newline at the end"] {
///     let mut input = read;
///     loop {
///         let taken = framer.feed(input);
///         input = &input[taken..];
///         while let Some(line) = framer.next_line() {
///             match line {
///                 Ok(line) => lines.push(line.to_owned()),
///                 Err(error) => errors.push(error),
///             }
///         }
///         if input.is_empty() {
///             break;
///         }
///     }
/// }
/// framer.finish();
/// while let Some(line) = framer.next_line() {
///     lines.push(line.unwrap().to_owned());
/// }
/// assert_eq!(lines, ["{\"a\":1}", "{\"b\":2}", "no newline at the end"]);
/// assert_eq!(errors, Vec::<FrameError>::new());
/// ```
#[derive(Debug)]
pub struct Framer<S> {
    storage: S,
    /// First byte not yet handed out.
    start: usize,
    /// `start..scan` holds no newline: the search resumes here.
    scan: usize,
    /// End of the bytes written.
    end: usize,
    /// Lines longer than this are reported and dropped.
    max_line: usize,
    /// A growable storage is never grown past this.
    growth_cap: usize,
    /// The rest of an oversized line is being dropped as it arrives.
    discarding: bool,
    /// A `LineTooLong` is due before the line at `start`.
    too_long_due: bool,
    /// The bytes after the last stored newline form a complete line: the stream ended, or its
    /// newline arrived when the storage was full.
    terminated: bool,
    #[cfg(test)]
    work: Work,
}

/// Bytes examined, for the tests that prove the work is linear.
#[cfg(test)]
#[derive(Debug, Default)]
struct Work {
    scanned: usize,
    moved: usize,
}

/// What [`Framer::make_room`] achieved.
enum Room {
    /// There is free storage now, or the framer changed state; carry on.
    Made,
    /// Complete lines or a report must be taken first.
    Blocked,
    /// The full line was exactly at the limit and `1` input byte, its newline, was taken.
    TookNewline,
}

impl<S: Storage> Framer<S> {
    /// A framer over `storage` that accepts lines of up to `max_line` bytes (newline
    /// excluded, a trailing `\r` included).
    ///
    /// The limit is clamped to the storage's [`max_len`](Storage::max_len), so `[u8; 64]`
    /// accepts lines of up to 64 bytes.
    pub fn new(storage: S, max_line: usize) -> Self {
        let max_len = storage.max_len();
        let max_line = max_line.min(max_len);
        Framer {
            storage,
            start: 0,
            scan: 0,
            end: 0,
            max_line,
            growth_cap: max_len.min(max_line.max(GROWABLE_MIN_CAPACITY)),
            discarding: false,
            too_long_due: false,
            terminated: false,
            #[cfg(test)]
            work: Work::default(),
        }
    }

    /// The longest line accepted, in bytes, newline excluded (after clamping to the storage).
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// Bytes held that have not been handed out yet: complete lines not taken and the
    /// partial line.
    pub fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// Bytes of storage in use: the fixed size, or how far a growable storage has grown.
    pub fn capacity(&self) -> usize {
        self.storage.bytes().len()
    }

    /// Copies bytes from `input` and returns how many were taken.
    ///
    /// Takes all of `input` unless the storage is full while complete lines or a report wait
    /// to be taken with [`next_line`](Framer::next_line); the caller then drains and feeds the
    /// rest (see the [call loop](Framer#call-loop)). Bytes of an oversized line are taken and
    /// dropped without being stored.
    pub fn feed(&mut self, input: &[u8]) -> usize {
        let mut taken = 0;
        // Every pass takes input, returns, or changes state so that the next pass takes input.
        loop {
            if self.discarding {
                let rest = &input[taken..];
                let found = find_newline(rest);
                #[cfg(test)]
                {
                    self.work.scanned += found.map_or(rest.len(), |at| at + 1);
                }
                match found {
                    Some(at) => {
                        taken += at + 1;
                        self.discarding = false;
                    }
                    None => return input.len(),
                }
            }
            if self.start == self.end && !self.terminated {
                // Nothing held: start over at the front for free.
                self.start = 0;
                self.scan = 0;
                self.end = 0;
            }
            let rest = &input[taken..];
            if rest.is_empty() {
                return taken;
            }
            let mut room = self.storage.bytes().len() - self.end;
            if room == 0 {
                match self.make_room(rest) {
                    Room::Made => {}
                    Room::Blocked => return taken,
                    Room::TookNewline => taken += 1,
                }
                continue;
            }
            if self.terminated {
                // The stream ended before: that line gets its newline before anything else.
                self.storage.bytes_mut()[self.end] = b'\n';
                self.end += 1;
                self.terminated = false;
                room -= 1;
            }
            let count = room.min(rest.len());
            self.storage.bytes_mut()[self.end..self.end + count].copy_from_slice(&rest[..count]);
            self.end += count;
            taken += count;
        }
    }

    /// Frees storage when it is full, or finds out that the line filling it is oversized.
    fn make_room(&mut self, rest: &[u8]) -> Room {
        // Lines waiting to be taken are never moved: that keeps moving O(n) and tells the
        // caller to drain.
        if self.too_long_due || self.terminated || self.find_newline().is_some() {
            return Room::Blocked;
        }
        // Only the partial line is held, at start..end.
        if self.start > 0 {
            #[cfg(test)]
            {
                self.work.moved += self.end - self.start;
            }
            self.storage
                .bytes_mut()
                .copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.scan -= self.start;
            self.start = 0;
            return Room::Made;
        }
        let size = self.storage.bytes().len();
        if size < self.growth_cap {
            self.storage
                .grow_to(self.growth_cap.min(size.saturating_mul(2).max(GROWABLE_MIN_CAPACITY)));
            if self.storage.bytes().len() > size {
                return Room::Made;
            }
        }
        // The partial line fills all the storage there will ever be.
        if self.end == self.max_line && rest.first() == Some(&b'\n') {
            // Exactly at the limit: complete, although its newline does not fit.
            self.terminated = true;
            return Room::TookNewline;
        }
        self.end = self.start;
        self.scan = self.start;
        self.too_long_due = true;
        self.discarding = true;
        Room::Made
    }

    /// Signals the end of the stream: a last line without a newline becomes complete, and an
    /// oversized line being dropped ends. Drain [`next_line`](Framer::next_line) afterwards.
    ///
    /// Feeding after `finish` starts a new line, as if a newline had been read.
    pub fn finish(&mut self) {
        self.discarding = false;
        let tail_open = self.end > self.start && self.storage.bytes()[self.end - 1] != b'\n';
        self.terminated |= tail_open;
    }

    /// The next complete line without its newline (and without one `\r` before it), or the
    /// error that replaces it; `None` when no complete line is held.
    ///
    /// Blank and whitespace-only lines are skipped. The `&str` borrows the storage until the
    /// next call.
    pub fn next_line(&mut self) -> Option<Result<&str, FrameError>> {
        // Every pass takes one line out of the storage, so this ends.
        let (from, to) = loop {
            if self.too_long_due {
                self.too_long_due = false;
                return Some(Err(self.too_long()));
            }
            let from = self.start;
            let to = match self.find_newline() {
                Some(newline) => {
                    self.start = newline + 1;
                    self.scan = self.start;
                    newline
                }
                None if self.terminated => {
                    self.terminated = false;
                    self.start = self.end;
                    self.scan = self.end;
                    self.end
                }
                None => return None,
            };
            if to - from > self.max_line {
                return Some(Err(self.too_long()));
            }
            let line = &self.storage.bytes()[from..to];
            let to = if line.last() == Some(&b'\r') { to - 1 } else { to };
            if !is_blank(&self.storage.bytes()[from..to]) {
                break (from, to);
            }
        };
        Some(
            str::from_utf8(&self.storage.bytes()[from..to]).map_err(|error| {
                FrameError::InvalidUtf8 {
                    valid_up_to: error.valid_up_to(),
                }
            }),
        )
    }

    fn too_long(&self) -> FrameError {
        FrameError::LineTooLong {
            limit: self.max_line,
        }
    }

    /// Position of the first newline at or after `start`, resuming the search at `scan`.
    fn find_newline(&mut self) -> Option<usize> {
        let unsearched = &self.storage.bytes()[self.scan..self.end];
        let found = find_newline(unsearched);
        #[cfg(test)]
        {
            self.work.scanned += found.map_or(unsearched.len(), |at| at + 1);
        }
        match found {
            Some(at) => {
                self.scan += at;
                Some(self.scan)
            }
            None => {
                self.scan = self.end;
                None
            }
        }
    }
}

#[cfg(feature = "alloc")]
impl Framer<alloc::vec::Vec<u8>> {
    /// A framer over a `Vec` that grows on demand, accepting lines of up to `max_line` bytes.
    pub fn with_limit(max_line: usize) -> Self {
        Framer::new(alloc::vec::Vec::new(), max_line)
    }
}

#[cfg(feature = "alloc")]
impl Default for Framer<alloc::vec::Vec<u8>> {
    /// A framer over a growable `Vec` with the [`DEFAULT_MAX_LINE`] limit.
    fn default() -> Self {
        Framer::with_limit(DEFAULT_MAX_LINE)
    }
}

/// Whether `line` holds only JSON whitespace (or nothing).
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&byte| matches!(byte, b' ' | b'\t' | b'\r'))
}

/// Index of the first `\n` in `haystack`.
///
/// Thirty-two bytes per step, with no branch per byte and no `unsafe`: "does this block hold a
/// newline" folds into one boolean that LLVM turns into vector compares; only the block that
/// does is searched for the exact position.
fn find_newline(haystack: &[u8]) -> Option<usize> {
    let (blocks, tail) = haystack.as_chunks::<BLOCK>();
    for (index, block) in blocks.iter().enumerate() {
        if holds_newline(block) {
            return Some(index * BLOCK + first_newline(block));
        }
    }
    let mut last = [0u8; BLOCK];
    last[..tail.len()].copy_from_slice(tail);
    holds_newline(&last).then(|| blocks.len() * BLOCK + first_newline(&last))
}

/// Bytes per step of [`find_newline`].
const BLOCK: usize = 32;

fn holds_newline(block: &[u8; BLOCK]) -> bool {
    block.iter().fold(false, |found, &byte| found | (byte == b'\n'))
}

/// Position of the first newline in a block known to hold one.
fn first_newline(block: &[u8; BLOCK]) -> usize {
    let mask = block
        .iter()
        .enumerate()
        .fold(0u32, |mask, (i, &byte)| mask | (u32::from(byte == b'\n') << i));
    mask.trailing_zeros() as usize
}
