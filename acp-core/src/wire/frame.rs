//! NDJSON framing: a byte stream in, one line at a time out.
//!
//! The rules (R-FRAME-1 … R-FRAME-6 of docs/protocol.md):
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
//!   served normally. [`Framer::next_line_bytes`] leaves that check to the caller
//!   (`envelope::scan_bytes` does it while it scans the line, for less work per byte).
//!
//! Two settings serve the workspace's other line readers (agent stderr, typed input, the
//! trace proxy, the conformance harness) with the same splitting: [`Framer::raw`] hands out
//! every line as written (`\r` kept, blank lines too) and [`Framer::truncating`] cuts an
//! oversized line to the limit instead of reporting it.
//!
//! Two ways in. [`Framer::feed`] copies the input into the storage, and the lines are taken
//! out with [`next_line`](Framer::next_line) or [`next_line_bytes`](Framer::next_line_bytes):
//! the caller may reuse its read buffer at once. [`Framer::next_line_bytes_from`] takes the
//! lines straight out of the caller's read buffer and copies only a line cut by the end of
//! the read: less work per byte for a caller that keeps the buffer until every line of it
//! has been taken.
//!
//! Memory is bounded: the framer works inside a [`ByteStorage`] the caller provides and never
//! holds more than its size (fixed storage) or `max(max_line, GROWABLE_MIN_CAPACITY)` bytes
//! (growable storage). An oversized line is dropped as it streams by: once the storage is full
//! of it, the rest passes through without being stored.
//!
//! Work is O(n) in the bytes fed however they are chunked: the newline search resumes where it
//! stopped (a line cut by a read is searched at most twice: in the read and in the storage),
//! and a partial line is moved to the front of the storage at most once.

use core::fmt;
use core::str;

use super::json::stops::{BLOCK, newlines};

/// The line limit of [`Framer::default`]: 16 MiB (R-FRAME-5).
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

/// How far a growable storage may always grow, even when the line limit is smaller.
///
/// A growable storage starts at its current length (empty for `Framer::with_limit`), grows
/// to at least this size when it first fills and doubles when a line does not fit, never past
/// `max(max_line, GROWABLE_MIN_CAPACITY)`. The floor keeps a tiny limit from forcing tiny
/// copies; it is the only slack above the limit.
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
pub trait ByteStorage {
    /// The bytes usable now.
    fn bytes(&self) -> &[u8];

    /// The bytes usable now, for writing.
    fn bytes_mut(&mut self) -> &mut [u8];

    /// The most bytes this storage can ever provide; the line limit is clamped to it.
    fn max_len(&self) -> usize;

    /// Makes at least `len` bytes usable; the framer never asks for more than
    /// [`max_len`](ByteStorage::max_len). Fixed storage has nothing to do.
    ///
    /// A storage that does not grow when asked is treated as full: lines that do not fit are
    /// reported as too long.
    fn grow_to(&mut self, len: usize) {
        let _ = len;
    }
}

impl<const N: usize> ByteStorage for [u8; N] {
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

impl ByteStorage for [u8] {
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

/// Borrowed storage (`&mut [u8]`, `&mut [u8; N]`, `&mut Vec<u8>`, …) stays with its owner.
impl<S: ByteStorage + ?Sized> ByteStorage for &mut S {
    fn bytes(&self) -> &[u8] {
        (**self).bytes()
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        (**self).bytes_mut()
    }

    fn max_len(&self) -> usize {
        (**self).max_len()
    }

    fn grow_to(&mut self, len: usize) {
        (**self).grow_to(len);
    }
}

impl<LenT: heapless::LenType, const N: usize> ByteStorage for heapless::Vec<u8, N, LenT> {
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
impl ByteStorage for alloc::vec::Vec<u8> {
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
    /// Lines are handed out as written: no `\r` stripped, blank lines kept ([`Framer::raw`]).
    raw: bool,
    /// An oversized line is cut to the limit instead of reported
    /// ([`Framer::truncating`]).
    truncate: bool,
    #[cfg(test)]
    work: Work,
}

/// The positions and state, not the bytes (the storage may hold megabytes).
impl<S: ByteStorage> fmt::Debug for Framer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Framer")
            .field("start", &self.start)
            .field("scan", &self.scan)
            .field("end", &self.end)
            .field("capacity", &self.capacity())
            .field("max_line", &self.max_line)
            .field("discarding", &self.discarding)
            .field("too_long_due", &self.too_long_due)
            .field("terminated", &self.terminated)
            .field("raw", &self.raw)
            .field("truncate", &self.truncate)
            .finish()
    }
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

impl<S: ByteStorage> Framer<S> {
    /// A framer over `storage` that accepts lines of up to `max_line` bytes (newline
    /// excluded, a trailing `\r` included).
    ///
    /// The limit is clamped to the storage's [`max_len`](ByteStorage::max_len), so `[u8; 64]`
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
            raw: false,
            truncate: false,
            #[cfg(test)]
            work: Work::default(),
        }
    }

    /// Hands out every line exactly as written, without its `\n` but with a `\r` before it,
    /// blank lines included: for readers of lines that are not NDJSON (stderr, typed input)
    /// or that must keep the bytes as the peer sent them (`acp-cli trace`). Everything else
    /// (the limit, the last line at [`finish`](Framer::finish), chunking) is unchanged.
    #[must_use]
    pub fn raw(mut self) -> Self {
        self.raw = true;
        self
    }

    /// Cuts a line longer than the limit to its first `max_line` bytes and drops the rest up
    /// to its newline, instead of reporting [`FrameError::LineTooLong`]: for logs, where the
    /// start of a long line is worth keeping. The cut line may be handed out before its
    /// newline arrives (as soon as the storage is full of it).
    #[must_use]
    pub fn truncating(mut self) -> Self {
        self.truncate = true;
        self
    }

    /// Forgets every byte held and every report due, as if the stream started anew; the
    /// storage is kept.
    pub fn reset(&mut self) {
        self.start = 0;
        self.scan = 0;
        self.end = 0;
        self.discarding = false;
        self.too_long_due = false;
        self.terminated = false;
    }

    /// The bytes held and not handed out yet: complete lines not taken (with their newlines)
    /// and the partial line. [`buffered`](Framer::buffered) is their length.
    pub fn held(&self) -> &[u8] {
        &self.storage.bytes()[self.start..self.end]
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
                let found = position_of_newline(rest);
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
        if self.too_long_due || self.terminated || self.next_newline().is_some() {
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
            self.storage.grow_to(
                self.growth_cap
                    .min(size.saturating_mul(2).max(GROWABLE_MIN_CAPACITY)),
            );
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
        if self.truncate {
            // The partial line, cut to the limit, is complete; the rest of it is dropped.
            self.end = self.end.min(self.start.saturating_add(self.max_line));
            self.scan = self.end;
            self.terminated = true;
            self.discarding = true;
            return Room::Made;
        }
        self.end = self.start;
        self.scan = self.start;
        self.too_long_due = true;
        self.discarding = true;
        Room::Made
    }

    /// Takes one whole message of a message transport (a WebSocket text frame, an SSE event's
    /// data, an HTTP body) as one line (R-MSG-1): no newline framing, the frame's end ends it.
    ///
    /// A `\n` or `\r` between JSON tokens is whitespace and goes in as a space. One inside a
    /// string is not JSON, on a message transport as on stdio: it goes in as `0x1F`, another
    /// control character, so the line is still refused as a parse error (and as one line, not
    /// two). The limit, a blank message and invalid UTF-8 are treated as for a line.
    ///
    /// Returns `false` and takes nothing while bytes fed earlier are still held: take every
    /// line first. Never copies more than the limit, like [`feed`](Framer::feed).
    pub fn feed_message(&mut self, message: &[u8]) -> bool {
        if self.buffered() > 0 {
            return false;
        }
        let mut taken = 0;
        let mut from = 0;
        if message.iter().any(|&byte| matches!(byte, b'\n' | b'\r')) {
            let mut in_string = false;
            let mut escaped = false;
            for (at, &byte) in message.iter().enumerate() {
                match byte {
                    b'\n' | b'\r' => {
                        taken += self.feed(&message[from..at]);
                        taken += self.feed(if in_string { &[0x1F] } else { b" " });
                        from = at + 1;
                        escaped = false;
                    }
                    _ if !in_string => in_string = byte == b'"',
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
            }
        }
        taken += self.feed(&message[from..]);
        // Nothing else is held and no newline goes in, so the storage never blocks.
        debug_assert_eq!(taken, message.len());
        self.finish();
        true
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
    /// Blank and whitespace-only lines are skipped (unless [`raw`](Framer::raw)). The `&str`
    /// borrows the storage until the next call.
    pub fn next_line(&mut self) -> Option<Result<&str, FrameError>> {
        Some(match self.next_span()? {
            Ok((from, to)) => str::from_utf8(&self.storage.bytes()[from..to]).map_err(|error| {
                FrameError::InvalidUtf8 {
                    valid_up_to: error.valid_up_to(),
                }
            }),
            Err(error) => Err(error),
        })
    }

    /// [`next_line`](Framer::next_line) without the UTF-8 check, for a caller that checks it
    /// while it reads the line anyway (`envelope::scan_bytes`): never
    /// [`FrameError::InvalidUtf8`], and the same lines and `LineTooLong` reports otherwise.
    pub fn next_line_bytes(&mut self) -> Option<Result<&[u8], FrameError>> {
        Some(match self.next_span()? {
            Ok((from, to)) => Ok(&self.storage.bytes()[from..to]),
            Err(error) => Err(error),
        })
    }

    /// The next line, taken from `input` without copying it when it can be: `feed` and
    /// [`next_line_bytes`](Framer::next_line_bytes) in one call, for a caller that owns the
    /// read buffer until it has taken every line of it.
    ///
    /// Lines that lie whole in `input` are served straight from it; only a line cut by the
    /// end of `input` is copied into the storage, and served from there once a later call
    /// brings its newline (or [`finish`](Framer::finish) ends it). `input` is advanced past
    /// what was taken; `None` means it is used up (or empty) and no line is held. Lines,
    /// reports and their order are exactly those of `feed` + `next_line_bytes` over the same
    /// bytes, however they are split into reads, except that a line served from `input` is
    /// never refused for not fitting a storage that declines to grow (only `max_line`
    /// counts for it).
    ///
    /// Lines already held (fed earlier, or the last line after `finish`) come first. Like
    /// `next_line_bytes` it does not check UTF-8. The line borrows the framer and the input
    /// until the next call.
    ///
    /// ```
    /// use acp_core::wire::frame::{FrameError, Framer};
    ///
    /// let mut framer = Framer::new([0u8; 16], 16);
    /// let mut lines = Vec::new();
    /// for read in [&b"{\"a\":1}\r\n\n{\"b\""[..], b":2}\nthis one is too long\n{}"] {
    ///     let mut input = read;
    ///     while let Some(line) = framer.next_line_bytes_from(&mut input) {
    ///         lines.push(line.map(<[u8]>::to_vec));
    ///     }
    ///     assert!(input.is_empty());
    /// }
    /// framer.finish();
    /// while let Some(line) = framer.next_line_bytes_from(&mut &[][..]) {
    ///     lines.push(line.map(<[u8]>::to_vec));
    /// }
    /// assert_eq!(
    ///     lines,
    ///     [
    ///         Ok(b"{\"a\":1}".to_vec()),
    ///         Ok(b"{\"b\":2}".to_vec()),
    ///         Err(FrameError::LineTooLong { limit: 16 }),
    ///         Ok(b"{}".to_vec()),
    ///     ]
    /// );
    /// ```
    pub fn next_line_bytes_from<'r, 'i: 'r>(
        &'r mut self,
        input: &mut &'i [u8],
    ) -> Option<Result<&'r [u8], FrameError>> {
        // Every pass returns, or takes input and leaves the framer holding a complete line, a
        // report or nothing, so the next pass returns or takes input again.
        loop {
            if self.is_idle() {
                let rest: &'i [u8] = input;
                let found = position_of_newline(rest);
                #[cfg(test)]
                {
                    self.work.scanned += found.map_or(rest.len(), |at| at + 1);
                }
                let Some(at) = found else {
                    if rest.is_empty() {
                        return None;
                    }
                    // A partial line: the only bytes that are copied. It holds no newline,
                    // so the search for one resumes after it.
                    *input = &rest[rest.len()..];
                    self.feed(rest);
                    self.scan = self.end;
                    continue;
                };
                *input = &rest[at + 1..];
                let mut line = &rest[..at];
                if at > self.max_line {
                    if !self.truncate {
                        return Some(Err(self.too_long()));
                    }
                    line = &line[..self.max_line];
                }
                match self.content_len(line) {
                    Some(len) => return Some(Ok(&rest[..len])),
                    None => continue,
                }
            }
            if let Some(span) = self.next_span() {
                return Some(span.map(|(from, to)| &self.storage.bytes()[from..to]));
            }
            if input.is_empty() {
                return None;
            }
            // A partial line is held, or an oversized one is being dropped: it ends at the
            // first newline, so only that much is fed and the lines after it stay in input.
            let found = position_of_newline(input);
            #[cfg(test)]
            {
                self.work.scanned += found.map_or(input.len(), |at| at + 1);
            }
            let end = found.map_or(input.len(), |at| at + 1);
            let taken = self.feed(&input[..end]);
            *input = &input[taken..];
            if found.is_none() {
                // What was fed holds no newline and nothing stored before it did (no span
                // was found): the next search starts after it.
                self.scan = self.end;
            }
        }
    }

    /// Keeps the `len` bytes at address `addr`, part of the line just served, readable after
    /// the call that served it: bytes inside the storage (a line served from it) stay where
    /// they are; bytes inside `input` (a line served straight from the caller's input) are
    /// copied to the front of the idle storage. Returns their storage range; `None` when they
    /// are in neither, the framer is not idle, or the storage cannot hold them. Valid until
    /// the next `feed` or `next_line_bytes_from`.
    pub(crate) fn keep(&mut self, addr: usize, len: usize, input: &[u8]) -> Option<(usize, usize)> {
        let base = self.storage.bytes().as_ptr() as usize;
        let size = self.storage.bytes().len();
        if addr >= base && addr + len <= base + size {
            return Some((addr - base, len));
        }
        let from = input.as_ptr() as usize;
        if !(addr >= from && addr + len <= from + input.len() && self.is_idle()) {
            return None;
        }
        let bytes = &input[addr - from..addr - from + len];
        if len > self.storage.max_len() {
            return None;
        }
        if size < len {
            self.storage.grow_to(len);
        }
        self.storage
            .bytes_mut()
            .get_mut(..len)?
            .copy_from_slice(bytes);
        Some((0, len))
    }

    /// Bytes kept by [`keep`](Framer::keep).
    pub(crate) fn kept(&self, start: usize, len: usize) -> &[u8] {
        self.storage.bytes().get(start..start + len).unwrap_or(&[])
    }

    /// Whether nothing is held or due: no bytes stored, no report, no line being dropped.
    fn is_idle(&self) -> bool {
        self.start == self.end && !self.terminated && !self.too_long_due && !self.discarding
    }

    /// The storage range of the next complete, non-blank line (without its `\n` and one
    /// `\r` before it), or the report that replaces it.
    fn next_span(&mut self) -> Option<Result<(usize, usize), FrameError>> {
        // Every pass takes one line out of the storage, so this ends.
        let (from, to) = loop {
            if self.too_long_due {
                self.too_long_due = false;
                return Some(Err(self.too_long()));
            }
            let from = self.start;
            let to = match self.next_newline() {
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
            let mut to = to;
            if to - from > self.max_line {
                if !self.truncate {
                    return Some(Err(self.too_long()));
                }
                to = from + self.max_line;
            }
            if let Some(len) = self.content_len(&self.storage.bytes()[from..to]) {
                break (from, from + len);
            }
        };
        Some(Ok((from, to)))
    }

    /// The length of `raw`, a line without its `\n`, as handed out; `None` when the line is
    /// skipped. Raw framers hand out every line whole.
    #[inline]
    fn content_len(&self, raw: &[u8]) -> Option<usize> {
        if self.raw {
            Some(raw.len())
        } else {
            content_len(raw)
        }
    }

    fn too_long(&self) -> FrameError {
        FrameError::LineTooLong {
            limit: self.max_line,
        }
    }

    /// Position of the first newline at or after `start`, resuming the search at `scan`.
    fn next_newline(&mut self) -> Option<usize> {
        let unsearched = &self.storage.bytes()[self.scan..self.end];
        let found = position_of_newline(unsearched);
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

/// The length of `raw`, a line without its `\n`, once one trailing `\r` is stripped; `None`
/// when what is left is blank (JSON whitespace only, or nothing), so the line is skipped.
#[inline]
fn content_len(raw: &[u8]) -> Option<usize> {
    let line = raw.strip_suffix(b"\r").unwrap_or(raw);
    let blank = line
        .iter()
        .all(|&byte| matches!(byte, b' ' | b'\t' | b'\r'));
    (!blank).then_some(line.len())
}

/// Index of the first `\n` in `haystack`.
///
/// Thirty-two bytes per step as two blocks of the stop masks the string scan uses (see
/// `wire/json/stops.rs`); the first set bit is the position. The last bytes, fewer than a
/// step, are looked at through a zero-padded copy.
pub(crate) fn position_of_newline(haystack: &[u8]) -> Option<usize> {
    let (steps, tail) = haystack.as_chunks::<STEP>();
    for (index, step) in steps.iter().enumerate() {
        if let Some(at) = first_newline(step) {
            return Some(index * STEP + at);
        }
    }
    let mut last = [0u8; STEP];
    last[..tail.len()].copy_from_slice(tail);
    first_newline(&last).map(|at| steps.len() * STEP + at)
}

/// Bytes per step of [`position_of_newline`].
const STEP: usize = 2 * BLOCK;

/// The position of the first newline in `step`.
#[inline(always)]
fn first_newline(step: &[u8; STEP]) -> Option<usize> {
    let (low, high) = step.split_at(BLOCK);
    let block = |half: &[u8]| half.first_chunk::<BLOCK>().copied().unwrap_or_default();
    let (low, high) = (newlines(&block(low)), newlines(&block(high)));
    if low.any() {
        Some(low.first())
    } else if high.any() {
        Some(BLOCK + high.first())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "alloc")]
    use alloc::{borrow::ToOwned, string::String, string::ToString, vec, vec::Vec};

    /// One item the framer hands out, owned so that it can be collected.
    #[cfg(feature = "alloc")]
    type Item = Result<String, FrameError>;

    /// Runs the documented call loop over `reads`, then `finish`, and collects everything.
    #[cfg(feature = "alloc")]
    fn run<S: ByteStorage>(framer: &mut Framer<S>, reads: &[&[u8]]) -> Vec<Item> {
        let mut items = Vec::new();
        for read in reads {
            let mut input = *read;
            loop {
                let taken = framer.feed(input);
                input = &input[taken..];
                drain(framer, &mut items);
                if input.is_empty() {
                    break;
                }
            }
        }
        framer.finish();
        drain(framer, &mut items);
        items
    }

    #[cfg(feature = "alloc")]
    fn drain<S: ByteStorage>(framer: &mut Framer<S>, items: &mut Vec<Item>) {
        while let Some(item) = framer.next_line() {
            items.push(item.map(ToOwned::to_owned));
        }
    }

    #[cfg(feature = "alloc")]
    fn one_byte_reads(bytes: &[u8]) -> Vec<&[u8]> {
        bytes.chunks(1).collect()
    }

    #[cfg(feature = "alloc")]
    fn ok(line: &str) -> Item {
        Ok(line.to_owned())
    }

    #[cfg(feature = "alloc")]
    const TOO_LONG_64: FrameError = FrameError::LineTooLong { limit: 64 };

    #[test]
    #[cfg(feature = "alloc")]
    fn error_texts() {
        assert_eq!(
            FrameError::LineTooLong { limit: 16 }.to_string(),
            "line exceeds the maximum length of 16 bytes"
        );
        assert_eq!(
            FrameError::InvalidUtf8 { valid_up_to: 3 }.to_string(),
            "invalid UTF-8 at byte 3"
        );
    }

    #[test]
    fn empty_input_yields_nothing() {
        let mut framer = Framer::new([0u8; 64], 64);
        assert_eq!(framer.feed(b""), 0);
        assert_eq!(framer.next_line(), None);
        assert_eq!(framer.buffered(), 0);
        framer.finish();
        assert_eq!(framer.next_line(), None);
    }

    #[test]
    fn crlf_loses_exactly_one_carriage_return() {
        let mut framer = Framer::new([0u8; 64], 64);
        let input = b"{\"a\":1}\r\n{}\r\r\n";
        assert_eq!(framer.feed(input), input.len());
        assert_eq!(framer.next_line(), Some(Ok("{\"a\":1}")));
        assert_eq!(framer.next_line(), Some(Ok("{}\r")));
        assert_eq!(framer.next_line(), None);
    }

    #[test]
    fn lone_carriage_return_inside_a_line_is_kept() {
        let mut framer = Framer::new([0u8; 64], 64);
        framer.feed(b"a\rb\n\rc\n");
        assert_eq!(framer.next_line(), Some(Ok("a\rb")));
        assert_eq!(framer.next_line(), Some(Ok("\rc")));
        assert_eq!(framer.next_line(), None);
    }

    #[test]
    fn blank_and_whitespace_only_lines_are_skipped() {
        let mut framer = Framer::new([0u8; 64], 64);
        framer.feed(b"\n \n\t\r\n\r\n \t \r\n{}\n\n  x \n\r\r\n");
        assert_eq!(framer.next_line(), Some(Ok("{}")));
        assert_eq!(framer.next_line(), Some(Ok("  x ")));
        assert_eq!(framer.next_line(), None);
        framer.finish();
        assert_eq!(framer.next_line(), None);
        assert_eq!(framer.buffered(), 0);
    }

    #[test]
    fn whitespace_only_final_line_is_skipped_at_eof() {
        let mut framer = Framer::new([0u8; 64], 64);
        framer.feed(b"{}\n \t\r");
        assert_eq!(framer.next_line(), Some(Ok("{}")));
        framer.finish();
        assert_eq!(framer.next_line(), None);
    }

    #[test]
    fn final_line_without_newline_comes_only_after_finish() {
        let mut framer = Framer::new([0u8; 64], 64);
        framer.feed(b"{\"a\":1}\n{\"b\"");
        framer.feed(b":2}");
        assert_eq!(framer.next_line(), Some(Ok("{\"a\":1}")));
        assert_eq!(framer.next_line(), None);
        assert_eq!(framer.buffered(), 7);
        framer.finish();
        assert_eq!(framer.next_line(), Some(Ok("{\"b\":2}")));
        assert_eq!(framer.next_line(), None);
        framer.finish();
        assert_eq!(framer.next_line(), None);
    }

    #[test]
    fn final_line_keeps_its_crlf_rule_at_eof() {
        let mut framer = Framer::new([0u8; 64], 64);
        framer.feed(b"{}\r");
        framer.finish();
        assert_eq!(framer.next_line(), Some(Ok("{}")));
    }

    #[test]
    fn feeding_after_finish_starts_a_new_line() {
        let mut framer = Framer::new([0u8; 64], 64);
        framer.feed(b"ab");
        framer.finish();
        assert_eq!(framer.feed(b"cd\n"), 3);
        assert_eq!(framer.next_line(), Some(Ok("ab")));
        assert_eq!(framer.next_line(), Some(Ok("cd")));
        assert_eq!(framer.next_line(), None);
    }

    #[test]
    fn finish_ends_an_oversized_line_being_dropped() {
        let mut framer = Framer::new([0u8; 16], 16);
        framer.feed(&[b'a'; 20]);
        framer.finish();
        assert_eq!(framer.feed(b"{}\n"), 3);
        assert_eq!(
            framer.next_line(),
            Some(Err(FrameError::LineTooLong { limit: 16 }))
        );
        assert_eq!(framer.next_line(), Some(Ok("{}")));
        assert_eq!(framer.next_line(), None);
    }

    #[test]
    fn invalid_utf8_is_reported_for_that_line_only() {
        let mut framer = Framer::new([0u8; 64], 64);
        framer.feed(b"ab\xc3(cd\n\xff\n{\"\xc3\xa9\":1}\n");
        assert_eq!(
            framer.next_line(),
            Some(Err(FrameError::InvalidUtf8 { valid_up_to: 2 }))
        );
        assert_eq!(
            framer.next_line(),
            Some(Err(FrameError::InvalidUtf8 { valid_up_to: 0 }))
        );
        assert_eq!(framer.next_line(), Some(Ok("{\"é\":1}")));
        assert_eq!(framer.next_line(), None);
    }

    #[test]
    fn utf8_sequence_cut_by_the_stripped_carriage_return_is_invalid() {
        // The `\r` is stripped before validation: a truncated sequence stays truncated.
        let mut framer = Framer::new([0u8; 64], 64);
        framer.feed(b"x\xe2\x82\r\n");
        assert_eq!(
            framer.next_line(),
            Some(Err(FrameError::InvalidUtf8 { valid_up_to: 1 }))
        );
    }

    #[test]
    fn many_lines_in_one_feed() {
        let mut input = [0u8; 1000];
        for (i, chunk) in input.chunks_mut(10).enumerate() {
            chunk[..9].copy_from_slice(b"{\"n\":000}");
            chunk[5] = b'0' + (i / 10) as u8;
            chunk[6] = b'0' + (i % 10) as u8;
            chunk[9] = b'\n';
        }
        let mut framer = Framer::new([0u8; 1024], 1024);
        assert_eq!(framer.feed(&input), 1000);
        for i in 0..100 {
            let line = framer.next_line().unwrap().unwrap();
            assert_eq!(&line.as_bytes()[5..7], &[b'0' + i / 10, b'0' + i % 10]);
            assert_eq!(line.len(), 9);
        }
        assert_eq!(framer.next_line(), None);
        assert_eq!(framer.buffered(), 0);
    }

    #[test]
    fn feed_stops_when_storage_is_full_of_complete_lines() {
        let mut framer = Framer::new([0u8; 8], 8);
        let input = b"{1}\n{2}\nab\n";
        assert_eq!(framer.feed(input), 8);
        assert_eq!(framer.feed(b"ab\n"), 0);
        assert_eq!(framer.next_line(), Some(Ok("{1}")));
        assert_eq!(framer.feed(b"ab\n"), 0, "a complete line still waits");
        assert_eq!(framer.next_line(), Some(Ok("{2}")));
        assert_eq!(framer.next_line(), None);
        assert_eq!(framer.feed(b"ab\n"), 3);
        assert_eq!(framer.next_line(), Some(Ok("ab")));
        assert_eq!(framer.next_line(), None);
    }

    #[test]
    fn limit_is_clamped_to_fixed_storage() {
        assert_eq!(Framer::new([0u8; 64], 1000).max_line(), 64);
        assert_eq!(Framer::new([0u8; 64], 10).max_line(), 10);
        let mut backing = [0u8; 20];
        assert_eq!(Framer::new(&mut backing[..], 30).max_line(), 20);
        assert_eq!(
            Framer::new(heapless::Vec::<u8, 32>::new(), 100).max_line(),
            32
        );
    }

    /// Lines of 63, 64 and 65 bytes in `[u8; 64]`, each placed at every offset of the storage
    /// (a short line before it shifts it), so that the boundary is hit before and after the
    /// partial line is moved to the front.
    #[test]
    #[cfg(feature = "alloc")]
    fn fixed_storage_at_the_boundary() {
        for prefix in 0..64 {
            for (len, expected) in [(63, None), (64, None), (65, Some(TOO_LONG_64))] {
                let mut stream = Vec::new();
                let lead = "p".repeat(prefix);
                stream.extend_from_slice(lead.as_bytes());
                stream.push(b'\n');
                let line = "x".repeat(len);
                stream.extend_from_slice(line.as_bytes());
                stream.extend_from_slice(b"\n{}\n");
                let mut want = Vec::new();
                if prefix > 0 {
                    want.push(ok(&lead));
                }
                want.push(expected.map_or_else(|| ok(&line), Err));
                want.push(ok("{}"));
                for reads in [vec![&stream[..]], one_byte_reads(&stream)] {
                    let mut framer = Framer::new([0u8; 64], 64);
                    assert_eq!(run(&mut framer, &reads), want, "prefix {prefix} len {len}");
                }
            }
        }
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn trailing_carriage_return_counts_towards_the_limit() {
        let fits = [&b"y"[..].repeat(63)[..], b"\r\n{}\n"].concat();
        let too_long = [&b"y"[..].repeat(64)[..], b"\r\n{}\n"].concat();
        for reads in [vec![&fits[..]], one_byte_reads(&fits)] {
            let mut framer = Framer::new([0u8; 64], 64);
            assert_eq!(run(&mut framer, &reads), [ok(&"y".repeat(63)), ok("{}")]);
        }
        for reads in [vec![&too_long[..]], one_byte_reads(&too_long)] {
            let mut framer = Framer::new([0u8; 64], 64);
            assert_eq!(run(&mut framer, &reads), [Err(TOO_LONG_64), ok("{}")]);
        }
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn line_exactly_at_the_limit_without_newline_is_delivered_at_eof() {
        let line = "z".repeat(64);
        let mut framer = Framer::new([0u8; 64], 64);
        assert_eq!(run(&mut framer, &[line.as_bytes()]), [ok(&line)]);
        let longer = "z".repeat(65);
        let mut framer = Framer::new([0u8; 64], 64);
        assert_eq!(run(&mut framer, &[longer.as_bytes()]), [Err(TOO_LONG_64)]);
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn oversized_line_then_valid_line() {
        let stream = [&b"{\"big\":\""[..], &b"a".repeat(200), b"\"}\n{\"ok\":1}\n"].concat();
        let want = [Err(TOO_LONG_64), ok("{\"ok\":1}")];
        for reads in [vec![&stream[..]], one_byte_reads(&stream)] {
            let mut fixed = Framer::new([0u8; 64], 64);
            assert_eq!(run(&mut fixed, &reads), want);
            let mut growable = Framer::with_limit(64);
            assert_eq!(run(&mut growable, &reads), want);
            let mut inline = Framer::new(heapless::Vec::<u8, 128>::new(), 64);
            assert_eq!(run(&mut inline, &reads), want);
        }
    }

    #[test]
    fn oversized_line_is_reported_before_it_ends() {
        let mut framer = Framer::new([0u8; 16], 16);
        assert_eq!(framer.feed(&[b'a'; 40]), 40);
        assert_eq!(
            framer.next_line(),
            Some(Err(FrameError::LineTooLong { limit: 16 }))
        );
        assert_eq!(framer.next_line(), None);
        assert_eq!(framer.buffered(), 0);
        assert_eq!(framer.feed(&[b'a'; 40]), 40);
        assert_eq!(framer.feed(b"a\n{}\n"), 5);
        assert_eq!(framer.next_line(), Some(Ok("{}")));
        assert_eq!(framer.next_line(), None);
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn oversized_line_cut_by_eof_is_reported_once() {
        let stream = b"{}\n"
            .iter()
            .chain(&[b'q'; 100])
            .copied()
            .collect::<Vec<u8>>();
        let mut framer = Framer::new([0u8; 64], 64);
        assert_eq!(run(&mut framer, &[&stream]), [ok("{}"), Err(TOO_LONG_64)]);
        // Not reaching the end of the storage: found too long only when it is complete.
        let mut framer = Framer::new([0u8; 64], 32);
        assert_eq!(
            run(&mut framer, &[&[b'q'; 40]]),
            [Err(FrameError::LineTooLong { limit: 32 })]
        );
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn consecutive_oversized_lines_each_get_one_report_in_order() {
        let stream = [
            &b"a".repeat(70)[..],
            b"\n{1}\n",
            &b"b".repeat(300),
            b"\n",
            &b" ".repeat(65),
            b"\n{2}\n",
        ]
        .concat();
        let want = [
            Err(TOO_LONG_64),
            ok("{1}"),
            Err(TOO_LONG_64),
            Err(TOO_LONG_64),
            ok("{2}"),
        ];
        for reads in [
            vec![&stream[..]],
            one_byte_reads(&stream),
            stream.chunks(7).collect(),
        ] {
            let mut framer = Framer::new([0u8; 64], 64);
            assert_eq!(run(&mut framer, &reads), want);
        }
    }

    #[test]
    fn mutable_slice_storage() {
        let mut backing = [0u8; 32];
        let mut framer = Framer::new(&mut backing[..], 32);
        framer.feed(b"{\"x\":true}\n");
        assert_eq!(framer.next_line(), Some(Ok("{\"x\":true}")));
    }

    #[test]
    fn borrowed_storage_stays_with_its_owner() {
        let mut backing = [0u8; 32];
        {
            let mut framer = Framer::new(&mut backing, 32);
            assert_eq!(framer.max_line(), 32);
            framer.feed(b"{\"y\":1}\nrest");
            assert_eq!(framer.next_line(), Some(Ok("{\"y\":1}")));
        }
        assert_eq!(&backing[..12], b"{\"y\":1}\nrest");
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn borrowed_vec_grows_for_its_owner() {
        let mut backing = Vec::new();
        {
            let mut framer = Framer::new(&mut backing, 100);
            framer.feed(b"{}\n");
            assert_eq!(framer.next_line(), Some(Ok("{}")));
        }
        assert_eq!(backing.len(), GROWABLE_MIN_CAPACITY);
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn debug_shows_positions_not_bytes() {
        let mut framer = Framer::new([b'#'; 64], 64);
        framer.feed(b"{}\nab");
        assert_eq!(
            alloc::format!("{framer:?}"),
            "Framer { start: 0, scan: 0, end: 5, capacity: 64, max_line: 64, \
             discarding: false, too_long_due: false, terminated: false, raw: false, \
             truncate: false }"
        );
    }

    #[test]
    fn inline_vec_grows_on_demand_up_to_its_capacity() {
        let mut framer = Framer::new(heapless::Vec::<u8, 64>::new(), 64);
        assert_eq!(framer.capacity(), 0);
        framer.feed(b"{}\n");
        assert_eq!(framer.capacity(), 64);
        assert_eq!(framer.next_line(), Some(Ok("{}")));
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn growable_storage_stays_within_its_bound() {
        let mut framer = Framer::with_limit(100);
        let small_lines = b"{\"n\":1}\n".repeat(20_000);
        run(&mut framer, &[&small_lines]);
        assert_eq!(framer.capacity(), GROWABLE_MIN_CAPACITY);

        let mut framer = Framer::with_limit(100_000);
        let long = [&b"w".repeat(99_999)[..], b"\n"].concat();
        let items = run(&mut framer, &[&long, &long]);
        assert_eq!(items.len(), 2);
        assert!(
            items
                .iter()
                .all(|item| item.as_ref().is_ok_and(|l| l.len() == 99_999))
        );
        assert_eq!(framer.capacity(), 100_000);

        let huge = b"v".repeat(1_000_000);
        assert_eq!(
            run(&mut framer, &[&huge]),
            [Err(FrameError::LineTooLong { limit: 100_000 })]
        );
        assert_eq!(framer.capacity(), 100_000);
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn default_limit_is_sixteen_mebibytes() {
        let framer = Framer::default();
        assert_eq!(framer.max_line(), 16 * 1024 * 1024);
        assert_eq!(framer.capacity(), 0);
    }

    #[test]
    fn newline_search_finds_every_position() {
        let mut haystack = [b'a'; 100];
        assert_eq!(position_of_newline(&haystack), None);
        for at in 0..100 {
            haystack[at] = b'\n';
            for from in 0..=at {
                assert_eq!(position_of_newline(&haystack[from..]), Some(at - from));
            }
            haystack[at] = b'a';
        }
    }

    /// A 16 MiB line at the 16 MiB limit, fed one byte at a time with a drain after every
    /// byte: the bytes examined for newlines and moved in the storage stay linear. A framer
    /// that rescanned the partial line on every call would examine ~2^47 bytes.
    #[test]
    #[cfg(feature = "alloc")]
    fn one_byte_feeds_of_a_16_mib_line_do_linear_work() {
        let mut framer = Framer::default();
        let total = DEFAULT_MAX_LINE + 1 + 3;
        for _ in 0..DEFAULT_MAX_LINE {
            assert_eq!(framer.feed(b"a"), 1);
            assert_eq!(framer.next_line(), None);
        }
        assert_eq!(framer.feed(b"\n"), 1);
        let line = framer.next_line().unwrap().unwrap();
        assert_eq!(line.len(), DEFAULT_MAX_LINE);
        assert!(line.bytes().all(|byte| byte == b'a'));
        assert_eq!(framer.feed(b"{}\n"), 3);
        assert_eq!(framer.next_line(), Some(Ok("{}")));
        assert!(
            framer.work.scanned <= total,
            "scanned {}",
            framer.work.scanned
        );
        assert!(framer.work.moved <= total, "moved {}", framer.work.moved);
    }

    /// The same for a line one byte over the limit, then 16 MiB more of it: dropped as it
    /// streams by, in linear work, reported once.
    #[test]
    #[cfg(feature = "alloc")]
    fn one_byte_feeds_of_an_oversized_line_do_linear_work() {
        let mut framer = Framer::with_limit(1024 * 1024);
        let line_len = 2 * 1024 * 1024;
        let mut reports = 0;
        for _ in 0..line_len {
            assert_eq!(framer.feed(b"b"), 1);
            while let Some(item) = framer.next_line() {
                assert_eq!(item, Err(FrameError::LineTooLong { limit: 1024 * 1024 }));
                reports += 1;
            }
            assert!(framer.buffered() <= 1024 * 1024);
        }
        for &byte in b"\n{}\n" {
            framer.feed(&[byte]);
        }
        assert_eq!(framer.next_line(), Some(Ok("{}")));
        assert_eq!(reports, 1);
        assert!(
            framer.work.scanned <= line_len + 4,
            "scanned {}",
            framer.work.scanned
        );
        assert!(framer.work.moved <= line_len, "moved {}", framer.work.moved);
    }

    /// Many short lines in one-byte feeds with a drain after each: moving partial lines to the
    /// front of a small storage costs each byte at most one move.
    #[test]
    #[cfg(feature = "alloc")]
    fn one_byte_feeds_of_short_lines_move_each_byte_at_most_once() {
        let stream = b"{\"k\":\"0123456789\"}\r\n".repeat(10_000);
        let mut framer = Framer::new([0u8; 64], 64);
        let items = run(&mut framer, &one_byte_reads(&stream));
        assert_eq!(items.len(), 10_000);
        assert!(framer.work.scanned <= stream.len());
        assert!(framer.work.moved <= stream.len());
    }

    // ----- next_line_bytes_from: lines taken straight from the caller's input -----

    /// Takes every line of every read with `next_line_bytes_from`, checking that each read
    /// is used up, then finishes and takes the rest. Lines are ASCII in these tests.
    #[cfg(feature = "alloc")]
    fn run_from<S: ByteStorage>(framer: &mut Framer<S>, reads: &[&[u8]]) -> Vec<Item> {
        let mut items = Vec::new();
        let owned = |line: Result<&[u8], FrameError>| {
            line.map(|bytes| String::from_utf8(bytes.to_vec()).expect("ASCII test line"))
        };
        for read in reads {
            let mut input = *read;
            while let Some(line) = framer.next_line_bytes_from(&mut input) {
                items.push(owned(line));
            }
            assert!(input.is_empty(), "None only once the read is used up");
        }
        framer.finish();
        while let Some(line) = framer.next_line_bytes_from(&mut &[][..]) {
            items.push(owned(line));
        }
        assert_eq!(framer.buffered(), 0);
        items
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn whole_lines_are_served_from_the_input_without_touching_the_storage() {
        let mut framer = Framer::with_limit(64);
        let reads: [&[u8]; 2] = [b"{\"a\":1}\n\n{}\r\n", b"{\"b\":2}\n"];
        assert_eq!(
            run_from(&mut framer, &reads),
            [ok("{\"a\":1}"), ok("{}"), ok("{\"b\":2}")]
        );
        assert_eq!(framer.capacity(), 0, "nothing was ever stored");
    }

    #[test]
    fn a_line_from_the_input_borrows_the_input() {
        let read = *b"{\"a\":1}\nrest";
        let mut input = &read[..];
        let mut framer = Framer::new([0u8; 16], 16);
        let line = framer.next_line_bytes_from(&mut input).unwrap().unwrap();
        assert_eq!(line, b"{\"a\":1}");
        assert_eq!(line.as_ptr(), read.as_ptr());
        assert_eq!(input, b"rest");
        assert_eq!(framer.next_line_bytes_from(&mut input), None);
        assert!(input.is_empty());
        assert_eq!(framer.buffered(), 4, "only the partial line is copied");
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn a_line_ending_exactly_at_the_end_of_a_read_is_not_stored() {
        let mut framer = Framer::with_limit(64);
        let reads: [&[u8]; 3] = [b"{\"a\":1}\n", b"{\"b\":2}\n", b"{}\n"];
        assert_eq!(
            run_from(&mut framer, &reads),
            [ok("{\"a\":1}"), ok("{\"b\":2}"), ok("{}")]
        );
        assert_eq!(framer.capacity(), 0);
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn a_line_split_across_reads_is_joined_in_the_storage() {
        let mut framer = Framer::new([0u8; 32], 32);
        let reads: [&[u8]; 4] = [b"{}\n{\"a\"", b":", b"1}\n{\"b\":2", b"}\n{}\n"];
        assert_eq!(
            run_from(&mut framer, &reads),
            [ok("{}"), ok("{\"a\":1}"), ok("{\"b\":2}"), ok("{}")]
        );
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn carriage_return_at_the_end_of_a_read_and_newline_at_the_start_of_the_next() {
        let mut framer = Framer::new([0u8; 16], 16);
        let reads: [&[u8]; 3] = [b"{}\r", b"\n{\"a\":1}\r", b"\n"];
        assert_eq!(run_from(&mut framer, &reads), [ok("{}"), ok("{\"a\":1}")]);
        // The `\r` counts towards the limit when it arrives alone, too.
        let mut framer = Framer::new([0u8; 16], 16);
        let line = "c".repeat(16);
        let reads: [&[u8]; 3] = [line.as_bytes(), b"\r", b"\n{}\n"];
        assert_eq!(
            run_from(&mut framer, &reads),
            [Err(FrameError::LineTooLong { limit: 16 }), ok("{}")]
        );
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn an_oversized_line_that_starts_as_a_partial_line_is_reported_once() {
        let too_long = Err(FrameError::LineTooLong { limit: 16 });
        let cases: [[&[u8]; 2]; 3] = [
            // Under the limit when the first read ends.
            [b"{}\naaaaaaaaaa", b"aaaaaaaaaa\n{}\n"],
            // Over the limit already in the first read.
            [b"{}\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", b"a\n{}\n"],
            // Over the limit, its newline alone at the start of the next read.
            [b"{}\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", b"\n{}\n"],
        ];
        for reads in cases {
            let want = [ok("{}"), too_long.clone(), ok("{}")];
            let mut fixed = Framer::new([0u8; 16], 16);
            assert_eq!(run_from(&mut fixed, &reads), want, "{reads:?}");
            let mut growable = Framer::with_limit(16);
            assert_eq!(run_from(&mut growable, &reads), want, "{reads:?}");
        }
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn a_partial_line_exactly_at_the_limit_then_its_newline() {
        let line = "x".repeat(16);
        let reads: [&[u8]; 2] = [line.as_bytes(), b"\n{}\n"];
        let mut framer = Framer::new([0u8; 16], 16);
        assert_eq!(run_from(&mut framer, &reads), [ok(&line), ok("{}")]);
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn eof_delivers_the_partial_line() {
        let mut framer = Framer::new([0u8; 16], 16);
        assert_eq!(
            run_from(&mut framer, &[b"{}\n{\"b\"", b":2}\r"]),
            [ok("{}"), ok("{\"b\":2}")]
        );
        let mut framer = Framer::new([0u8; 16], 16);
        assert_eq!(run_from(&mut framer, &[b"{}\n \t\r"]), [ok("{}")]);
        let mut framer = Framer::new([0u8; 16], 8);
        assert_eq!(
            run_from(&mut framer, &[b"{}\n", b"0123456789"]),
            [ok("{}"), Err(FrameError::LineTooLong { limit: 8 })]
        );
    }

    #[test]
    fn input_after_finish_starts_a_new_line() {
        let mut framer = Framer::new([0u8; 16], 16);
        let mut input = &b"ab"[..];
        assert_eq!(framer.next_line_bytes_from(&mut input), None);
        framer.finish();
        let mut input = &b"cd\n"[..];
        assert_eq!(
            framer.next_line_bytes_from(&mut input),
            Some(Ok(&b"ab"[..]))
        );
        assert_eq!(
            framer.next_line_bytes_from(&mut input),
            Some(Ok(&b"cd"[..]))
        );
        assert_eq!(framer.next_line_bytes_from(&mut input), None);
    }

    #[test]
    fn lines_already_fed_come_before_the_input() {
        let mut framer = Framer::new([0u8; 16], 16);
        assert_eq!(framer.feed(b"{1}\n{2}\n{3"), 10);
        assert_eq!(framer.next_line_bytes(), Some(Ok(&b"{1}"[..])));
        let mut input = &b"}\n{4}\n"[..];
        assert_eq!(
            framer.next_line_bytes_from(&mut input),
            Some(Ok(&b"{2}"[..]))
        );
        assert_eq!(input.len(), 6, "nothing taken while a stored line waits");
        assert_eq!(
            framer.next_line_bytes_from(&mut input),
            Some(Ok(&b"{3}"[..]))
        );
        assert_eq!(
            framer.next_line_bytes_from(&mut input),
            Some(Ok(&b"{4}"[..]))
        );
        assert_eq!(framer.next_line_bytes_from(&mut input), None);
        assert_eq!(framer.buffered(), 0);
    }

    /// A 4 MiB line in one-byte reads, then short lines in one-byte reads: every byte is
    /// searched at most twice (once in the read, once in the storage) and moved at most once.
    #[test]
    #[cfg(feature = "alloc")]
    fn one_byte_reads_do_linear_work() {
        let line_len = 4 * 1024 * 1024;
        let mut framer = Framer::with_limit(line_len);
        for _ in 0..line_len {
            assert_eq!(framer.next_line_bytes_from(&mut &b"a"[..]), None);
        }
        let line = framer
            .next_line_bytes_from(&mut &b"\n"[..])
            .unwrap()
            .unwrap();
        assert_eq!(line.len(), line_len);
        let short = b"{\"k\":\"0123456789\"}\r\n".repeat(10_000);
        let items = run_from(&mut framer, &one_byte_reads(&short));
        assert_eq!(items.len(), 10_000);
        let total = line_len + 1 + short.len();
        assert!(
            framer.work.scanned <= 2 * total,
            "scanned {}",
            framer.work.scanned
        );
        assert!(framer.work.moved <= total, "moved {}", framer.work.moved);
    }

    /// The same stream through both call loops, whole and in one-byte reads, with each kind
    /// of storage: the same items.
    #[test]
    #[cfg(feature = "alloc")]
    fn taking_from_the_input_matches_feeding() {
        let stream = [
            &b"{}\n\r\n  \n{\"a\":1}\r\r\n"[..],
            &b"q".repeat(70),
            b"\n{\"b\":2}\n",
            &b"w".repeat(64),
            b"\r\n",
            &b"e".repeat(63),
            b"\r\nlast",
        ]
        .concat();
        for reads in [
            vec![&stream[..]],
            one_byte_reads(&stream),
            stream.chunks(5).collect(),
        ] {
            let want = run(&mut Framer::new([0u8; 64], 64), &reads);
            assert_eq!(want.len(), 7);
            assert_eq!(run_from(&mut Framer::new([0u8; 64], 64), &reads), want);
            assert_eq!(run_from(&mut Framer::with_limit(64), &reads), want);
            let inline = Framer::new(heapless::Vec::<u8, 64>::new(), 64);
            assert_eq!(run_from(&mut { inline }, &reads), want);
        }
    }

    // ----- raw and truncating framers -----

    #[test]
    #[cfg(feature = "alloc")]
    fn raw_lines_keep_their_carriage_returns_and_blank_lines() {
        let reads: [&[u8]; 3] = [b"{}\r\n\n  \r", b"\na\rb\n\r\r", b"\nlast\r"];
        let want = [
            ok("{}\r"),
            ok(""),
            ok("  \r"),
            ok("a\rb"),
            ok("\r\r"),
            ok("last\r"),
        ];
        assert_eq!(run(&mut Framer::new([0u8; 16], 16).raw(), &reads), want);
        assert_eq!(run_from(&mut Framer::with_limit(16).raw(), &reads), want);
        // A final newline ends the last line; no empty line follows it.
        assert_eq!(run(&mut Framer::with_limit(16).raw(), &[b"a\n"]), [ok("a")]);
        // The `\r` counts towards the limit, as in NDJSON framing.
        assert_eq!(
            run(
                &mut Framer::new([0u8; 4], 4).raw(),
                &[b"abc\r\nabcd\r\nok\n"]
            ),
            [
                ok("abc\r"),
                Err(FrameError::LineTooLong { limit: 4 }),
                ok("ok")
            ]
        );
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn truncating_cuts_an_oversized_line_and_drops_the_rest_of_it() {
        let reads: [&[u8]; 3] = [b"abcdefgh", b"ij\nkl\nmnopqrstuvwxyz", b"\n"];
        let want = [ok("abcd"), ok("kl"), ok("mnop")];
        // Cut as soon as the storage is full of it, or once its newline arrives.
        assert_eq!(
            run(&mut Framer::new([0u8; 4], 4).truncating(), &reads),
            want
        );
        assert_eq!(
            run(&mut Framer::new([0u8; 64], 4).truncating(), &reads),
            want
        );
        assert_eq!(
            run_from(&mut Framer::with_limit(4).truncating(), &reads),
            want
        );
        // At the end of the stream, too.
        assert_eq!(
            run_from(&mut Framer::with_limit(4).truncating(), &[b"x\nabcdef"]),
            [ok("x"), ok("abcd")]
        );
    }

    #[test]
    fn a_truncated_line_is_handed_out_once_the_storage_is_full_of_it() {
        let mut framer = Framer::new([0u8; 4], 4).truncating();
        assert_eq!(
            framer.feed(b"abcdefgh"),
            8,
            "the rest is dropped as it arrives"
        );
        assert_eq!(framer.next_line(), Some(Ok("abcd")));
        assert_eq!(framer.next_line(), None);
        assert_eq!(framer.feed(b"ij\r\nkl\n"), 7);
        assert_eq!(framer.next_line(), Some(Ok("kl")));
    }

    #[test]
    fn held_bytes_and_reset() {
        let mut framer = Framer::new([0u8; 16], 16);
        assert_eq!(framer.feed(b"{}\nab"), 5);
        assert_eq!(framer.held(), b"{}\nab");
        assert_eq!(framer.next_line(), Some(Ok("{}")));
        assert_eq!(framer.held(), b"ab");
        framer.reset();
        assert_eq!((framer.held(), framer.buffered()), (&b""[..], 0));
        assert_eq!(framer.feed(b"cd\n"), 3);
        assert_eq!(
            framer.next_line(),
            Some(Ok("cd")),
            "nothing of `ab` is left"
        );
        // A report due and a line being dropped are forgotten as well.
        let mut framer = Framer::new([0u8; 4], 4);
        framer.feed(b"abcdefg");
        framer.reset();
        assert_eq!(framer.feed(b"h\n"), 2);
        assert_eq!(framer.next_line(), Some(Ok("h")));
        assert_eq!(framer.next_line(), None);
    }
}
