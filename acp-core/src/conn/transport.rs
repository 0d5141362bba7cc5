//! The byte plumbing both connections share: peer bytes in through the framer and the envelope
//! scanner, lines out through a bounded, batched outbox.
//!
//! Garbage from the peer never reaches a connection's state machines: a line that cannot be
//! framed or is not a valid JSON-RPC message is answered here, with the exact reply the rules
//! give (R-FRAME-*, R-ENV-*, R-ID-* of docs/protocol.md), and reported as
//! [`Incoming::Rejected`] so the connection can tell the application.
//!
//! Memory is bounded on both sides. The framer never holds more than one line. The outbox holds
//! complete lines until the caller has written them; [`Transport::feed`] stops consuming input
//! while the outbox lacks room for a worst-case reply, so a peer that writes without reading
//! cannot make us queue replies without bound, and [`Outbox::has_room_for_updates`] tells an
//! application when to pause its own sending.

use core::fmt;

use crate::machine::UsageError;
use crate::wire::encode::{EncodeError, Sink};
use crate::wire::envelope::{self, LineRejection, Message};
use crate::wire::frame::{ByteStorage, FrameError, Framer, position_of_newline};

/// Bytes the outbox keeps free for one reply to a peer line before more input is consumed: an
/// error reply with a 128-byte id and a message naming a field path fits easily.
pub const REPLY_RESERVE: usize = 1024;

/// One framed line, classified.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A valid JSON-RPC message for the connection to route.
    Message(Message<'a>),
    /// A line that was not a valid message. Its reply (when one is due) is already in the
    /// outbox; the connection only reports it.
    Rejected(LineRejection<'a>),
}

/// Complete lines waiting to be written, in order.
///
/// The caller takes everything with [`Outbox::pending`], writes as much as it can in one go,
/// and reports it with [`Outbox::consume`]; that is how output gets batched into few `write`
/// calls. ByteStorage grows (for growable storage) up to `limit` bytes.
#[derive(Debug)]
pub struct Outbox<S> {
    storage: S,
    /// Start of the bytes not yet written.
    start: usize,
    /// End of the last complete line.
    end: usize,
    /// Most bytes held at once: the lesser of the configured limit and the storage's size.
    limit: usize,
    /// Above this many pending bytes the application should stop sending updates.
    high_water: usize,
}

impl<S: ByteStorage> Outbox<S> {
    /// An outbox over `storage` holding at most `limit` bytes, telling applications to pause
    /// once `high_water` bytes are pending (clamped so a reply always still fits).
    pub fn new(storage: S, limit: usize, high_water: usize) -> Self {
        let limit = limit.min(storage.max_len());
        let high_water = high_water.min(limit.saturating_sub(REPLY_RESERVE));
        Self {
            storage,
            start: 0,
            end: 0,
            limit,
            high_water,
        }
    }

    /// The bytes ready to be written: whole lines, each ending in `\n`.
    pub fn pending(&self) -> &[u8] {
        &self.storage.bytes()[self.start..self.end]
    }

    /// Marks the first `n` bytes of [`Outbox::pending`] as written.
    pub fn consume(&mut self, n: usize) {
        self.start += n.min(self.end - self.start);
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Bytes waiting to be written.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// The next message for a message transport: the first pending line without its `\n`
    /// (R-MSG-2). Mark it sent with [`Outbox::consume_message`]; do not mix with
    /// [`Outbox::consume`], which may leave a line half sent.
    pub fn next_message(&self) -> Option<&[u8]> {
        let pending = self.pending();
        position_of_newline(pending).map(|at| &pending[..at])
    }

    /// The message [`Outbox::next_message`] gave was sent.
    pub fn consume_message(&mut self) {
        if let Some(message) = self.next_message() {
            let sent = message.len() + 1;
            self.consume(sent);
        }
    }

    /// Whether nothing waits to be written.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Whether the application may send more updates now: pending bytes are under the high
    /// water mark. When this is false, write out [`Outbox::pending`] before sending more.
    pub fn has_room_for_updates(&self) -> bool {
        self.len() < self.high_water
    }

    /// Whether `n` more bytes fit.
    pub fn has_room_for(&self, n: usize) -> bool {
        self.len().saturating_add(n) <= self.limit
    }

    /// Bytes of the storage: `range` of a line [`Outbox::push_line_with`] just pushed, counted
    /// from the line start it returned plus the writer's own offsets.
    pub(crate) fn stored(&self, range: core::ops::Range<usize>) -> &[u8] {
        &self.storage.bytes()[range]
    }

    /// Takes back the last `n` bytes pushed: a line a command wrote and then refused.
    pub(crate) fn retract(&mut self, n: usize) {
        self.end = self.end.saturating_sub(n).max(self.start);
    }

    /// Appends one line written by `write` (which must write exactly one complete line, as
    /// every `wire::encode::write_*` function does). On any failure nothing is kept.
    pub fn push_line<F>(&mut self, write: F) -> Result<(), UsageError>
    where
        F: FnOnce(&mut OutboxSink<'_, S>) -> Result<(), EncodeError<UsageError>>,
    {
        self.push_line_with(write).map(|_| ())
    }

    /// [`Outbox::push_line`] for a writer that returns something (where a piece of its line
    /// landed): returns that, with where the line starts in the outbox's storage (see
    /// [`Outbox::stored`]).
    pub(crate) fn push_line_with<T, F>(&mut self, write: F) -> Result<(usize, T), UsageError>
    where
        F: FnOnce(&mut OutboxSink<'_, S>) -> Result<T, EncodeError<UsageError>>,
    {
        // No compaction here: the sink makes room only when the line reaches the end of the
        // storage (see `OutboxSink::make_room`), so a pump that writes out a little and then
        // refills does not move all pending bytes before every line.
        let mut sink = OutboxSink {
            line_start: self.end,
            outbox: self,
        };
        match write(&mut sink) {
            Ok(value) => Ok((sink.line_start, value)),
            Err(_) => {
                let line_start = sink.line_start;
                self.end = line_start;
                if self.start == self.end {
                    self.start = 0;
                    self.end = 0;
                }
                Err(UsageError::WouldBlock)
            }
        }
    }

    /// Moves the pending bytes (a line being written included) to the front of the storage.
    /// Returns how far they moved.
    fn compact(&mut self) -> usize {
        let (start, end) = (self.start, self.end);
        if start > 0 {
            self.storage.bytes_mut().copy_within(start..end, 0);
            self.end -= start;
            self.start = 0;
        }
        start
    }
}

/// The [`Sink`] that [`Outbox::push_line`] hands to an encoder.
#[derive(Debug)]
pub struct OutboxSink<'o, S> {
    outbox: &'o mut Outbox<S>,
    /// Where the line being written starts in the storage (moves when the storage is
    /// compacted under it).
    line_start: usize,
}

impl<S: ByteStorage> OutboxSink<'_, S> {
    /// Makes `n` more bytes writable at the end of the storage, or says no (the outbox would
    /// hold more than its limit, or the storage cannot provide them).
    ///
    /// Written bytes (at `start..end`) move to the front only when the tail lacks room and
    /// the written-out prefix is at least as long as what is pending, or the storage cannot
    /// grow any more: each move then frees at least as many bytes as it copies, so copying
    /// costs at most one byte per byte pushed, however the caller interleaves pushes and
    /// partial writes. Otherwise the storage grows (geometrically, up to the limit).
    #[cold]
    fn make_room(&mut self, n: usize) -> Result<(), UsageError> {
        let outbox = &mut *self.outbox;
        let pending = outbox.end - outbox.start;
        if outbox.start >= pending {
            self.line_start -= outbox.compact();
        }
        let new_end = outbox.end + n;
        if new_end > outbox.storage.bytes().len() {
            // Grow geometrically so a stream of small lines costs amortised O(1) each.
            let want = new_end
                .max(outbox.storage.bytes().len() * 2)
                .min(outbox.limit);
            if want > outbox.storage.bytes().len() {
                outbox.storage.grow_to(want);
            }
        }
        if outbox.end + n > outbox.storage.bytes().len() {
            // The storage cannot grow (fixed, or at the limit): use the written-out prefix.
            self.line_start -= outbox.compact();
        }
        if outbox.end + n > outbox.storage.bytes().len() {
            return Err(UsageError::WouldBlock);
        }
        Ok(())
    }
}

impl<S: ByteStorage> Sink for OutboxSink<'_, S> {
    type Error = UsageError;

    #[inline]
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), UsageError> {
        let n = bytes.len();
        let outbox = &*self.outbox;
        // The limit bounds the bytes held (pending ones), wherever they lie in the storage.
        if outbox.end - outbox.start + n > outbox.limit {
            return Err(UsageError::WouldBlock);
        }
        if outbox.end + n > outbox.storage.bytes().len() {
            self.make_room(n)?;
        }
        let outbox = &mut *self.outbox;
        let end = outbox.end;
        outbox.storage.bytes_mut()[end..end + n].copy_from_slice(bytes);
        outbox.end = end + n;
        Ok(())
    }
}

/// Framer, scanner and outbox together. Generic over the storage of both buffers, so it runs
/// over fixed arrays without an allocator and over growable vectors with one.
pub struct Transport<I, O> {
    framer: Framer<I>,
    outbox: Outbox<O>,
    /// Lines rejected since the start, for diagnostics.
    rejected: u64,
}

impl<I: ByteStorage, O: ByteStorage> fmt::Debug for Transport<I, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("buffered_input", &self.framer.buffered())
            .field("pending_output", &self.outbox.len())
            .field("rejected", &self.rejected)
            .finish()
    }
}

impl<I: ByteStorage, O: ByteStorage> Transport<I, O> {
    /// A transport over the given framer and outbox.
    pub fn new(framer: Framer<I>, outbox: Outbox<O>) -> Self {
        Self {
            framer,
            outbox,
            rejected: 0,
        }
    }

    /// Takes as many of `bytes` as the framer accepts, unless the outbox lacks room for a reply
    /// (then nothing: write out pending bytes first). Returns how many were taken. Call
    /// [`Transport::next_incoming`] until `None` after every feed.
    pub fn feed(&mut self, bytes: &[u8]) -> usize {
        if !self.outbox.has_room_for(REPLY_RESERVE) {
            return 0;
        }
        self.framer.feed(bytes)
    }

    /// Takes one whole message of a message transport as one line (R-MSG-1; see
    /// [`Framer::feed_message`]). `false`, taking nothing, while the outbox lacks room for a
    /// reply or bytes fed earlier are still held: take the lines, write out, then again.
    pub fn feed_message(&mut self, message: &[u8]) -> bool {
        self.outbox.has_room_for(REPLY_RESERVE) && self.framer.feed_message(message)
    }

    /// The peer's input has ended: a last line without a newline becomes available.
    pub fn finish(&mut self) {
        self.framer.finish();
    }

    /// The next line, classified, together with the outbox so the caller can answer it while
    /// the line is still borrowed. A rejected line has been answered already.
    pub fn next_incoming(&mut self) -> Option<(Incoming<'_>, &mut Outbox<O>)> {
        let line = self.framer.next_line_bytes()?;
        Some(classify(line, &mut self.outbox, &mut self.rejected))
    }

    /// [`feed`](Transport::feed) and [`next_incoming`](Transport::next_incoming) in one call,
    /// without copying: the next line is taken straight from `input` when it lies whole in it
    /// (see [`Framer::next_line_bytes_from`]), and `input` is advanced past what was taken.
    ///
    /// Lines the framer holds come first. Input is taken only while the outbox has room for a
    /// reply, checked before every line, so a reply is never dropped: `None` with `input` not
    /// empty means write out pending bytes and call again with the rest. `None` with `input`
    /// empty means it is used up (a line it ends in the middle of is kept in the framer).
    pub fn next_incoming_from<'r, 'i: 'r>(
        &'r mut self,
        input: &mut &'i [u8],
    ) -> Option<(Incoming<'r>, &'r mut Outbox<O>)> {
        let line = if self.outbox.has_room_for(REPLY_RESERVE) {
            self.framer.next_line_bytes_from(input)?
        } else {
            self.framer.next_line_bytes()?
        };
        Some(classify(line, &mut self.outbox, &mut self.rejected))
    }

    /// Keeps `bytes` (part of the line just served) readable until the next input; see
    /// [`Framer::keep`].
    pub(crate) fn keep(&mut self, addr: usize, len: usize, input: &[u8]) -> Option<(usize, usize)> {
        self.framer.keep(addr, len, input)
    }

    /// Bytes kept by [`keep`](Transport::keep).
    pub(crate) fn kept(&self, start: usize, len: usize) -> &[u8] {
        self.framer.kept(start, len)
    }

    /// The outbox, to write lines of our own or to take pending bytes.
    pub fn outbox(&mut self) -> &mut Outbox<O> {
        &mut self.outbox
    }

    /// The outbox, read-only.
    pub fn outbox_ref(&self) -> &Outbox<O> {
        &self.outbox
    }

    /// Peer lines rejected so far (framing errors and invalid messages).
    pub fn rejected_lines(&self) -> u64 {
        self.rejected
    }

    /// Bytes held by the framer for a line not yet complete.
    pub fn buffered_input(&self) -> usize {
        self.framer.buffered()
    }
}

/// Scans one framed line into a message, or answers it in `outbox` and counts it in
/// `rejected`. The scan checks UTF-8 as it goes (cheaper than the framer checking it first).
fn classify<'a, O: ByteStorage>(
    line: Result<&'a [u8], FrameError>,
    outbox: &'a mut Outbox<O>,
    rejected: &mut u64,
) -> (Incoming<'a>, &'a mut Outbox<O>) {
    let verdict = match line {
        Ok(bytes) => envelope::scan_bytes(bytes),
        Err(error) => Err(LineRejection::from_frame_error(error)),
    };
    match verdict {
        Ok(message) => (Incoming::Message(message), outbox),
        Err(rejection) => {
            *rejected += 1;
            // The reply cannot be refused: input is taken only while REPLY_RESERVE bytes are
            // free. Should a reply somehow not fit, dropping it is the only bounded choice; it
            // is counted.
            let _ = outbox.push_line(|sink| {
                crate::wire::encode::write_error(
                    sink,
                    rejection.id,
                    rejection.code,
                    &rejection,
                    None::<&()>,
                )
            });
            (Incoming::Rejected(rejection), outbox)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::encode::write_notification;

    fn transport<const N: usize, const M: usize>() -> Transport<[u8; N], [u8; M]> {
        Transport::new(Framer::new([0; N], N), Outbox::new([0; M], M, M))
    }

    #[test]
    fn a_rejected_line_is_answered_in_the_outbox_and_the_next_line_is_served() {
        let mut t = transport::<256, 4096>();
        let input = b"[1,2]\n{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n";
        assert_eq!(t.feed(input), input.len());
        match t.next_incoming() {
            Some((Incoming::Rejected(r), _)) => assert_eq!(r.code.0, -32600),
            other => panic!("expected a rejection, got {other:?}"),
        }
        assert!(matches!(
            t.next_incoming(),
            Some((Incoming::Message(Message::Notification(_)), _))
        ));
        assert!(t.next_incoming().is_none());
        assert_eq!(
            t.outbox_ref().pending(),
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: expected JSON object\"}}\n"
        );
        assert_eq!(t.rejected_lines(), 1);
    }

    #[test]
    fn input_stops_when_the_outbox_cannot_take_a_reply_and_resumes_after_writing() {
        // An outbox just big enough for the reserve: after one rejection it is too full.
        let mut t = transport::<64, { REPLY_RESERVE + 50 }>();
        assert_eq!(t.feed(b"1\n2\n"), 4);
        assert!(t.next_incoming().is_some());
        assert!(t.next_incoming().is_some());
        assert!(t.next_incoming().is_none());
        assert_eq!(
            t.feed(b"3\n"),
            0,
            "no room for another reply: nothing taken"
        );
        let n = t.outbox_ref().pending().len();
        t.outbox().consume(n);
        assert_eq!(t.feed(b"3\n"), 2, "room again");
    }

    #[test]
    fn lines_are_taken_from_the_input_and_a_cut_line_is_kept_for_the_next_read() {
        let mut t = transport::<64, 4096>();
        let mut input = &b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n[1]\n{\"jsonrpc\":\"2.0\","[..];
        assert!(matches!(
            t.next_incoming_from(&mut input),
            Some((Incoming::Message(Message::Notification(n)), _)) if n.method.raw() == "a"
        ));
        match t.next_incoming_from(&mut input) {
            Some((Incoming::Rejected(r), _)) => assert_eq!(r.code.0, -32600),
            other => panic!("expected a rejection, got {other:?}"),
        }
        assert!(t.next_incoming_from(&mut input).is_none());
        assert!(input.is_empty());
        assert_eq!(t.buffered_input(), 17, "only the cut line is copied");
        let mut input = &b"\"method\":\"b\"}\n"[..];
        assert!(matches!(
            t.next_incoming_from(&mut input),
            Some((Incoming::Message(Message::Notification(n)), _)) if n.method.raw() == "b"
        ));
        assert!(t.next_incoming_from(&mut input).is_none());
        assert_eq!(t.rejected_lines(), 1);
        assert_eq!(
            t.outbox_ref().pending(),
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: expected JSON object\"}}\n"
        );
    }

    #[test]
    fn input_is_taken_line_by_line_only_while_a_reply_fits() {
        // Room for one reply: the second line waits in the input, not in the framer.
        let mut t = transport::<64, { REPLY_RESERVE + 50 }>();
        let mut input = &b"1\n2\n"[..];
        assert!(matches!(
            t.next_incoming_from(&mut input),
            Some((Incoming::Rejected(_), _))
        ));
        assert!(t.next_incoming_from(&mut input).is_none());
        assert_eq!(input, b"2\n", "nothing taken without room for a reply");
        assert_eq!(t.buffered_input(), 0);
        let n = t.outbox_ref().pending().len();
        t.outbox().consume(n);
        assert!(matches!(
            t.next_incoming_from(&mut input),
            Some((Incoming::Rejected(_), _))
        ));
        assert!(input.is_empty());
        assert_eq!(t.rejected_lines(), 2);
        assert_eq!(
            t.outbox_ref()
                .pending()
                .iter()
                .filter(|&&b| b == b'\n')
                .count(),
            1,
            "every rejection was answered"
        );
    }

    #[test]
    fn lines_already_fed_are_served_even_when_the_outbox_is_full() {
        let mut t = transport::<64, { REPLY_RESERVE + 50 }>();
        assert_eq!(t.feed(b"1\n2\n"), 4);
        assert!(t.next_incoming_from(&mut &b"3\n"[..]).is_some());
        let mut input = &b"3\n"[..];
        assert!(
            t.next_incoming_from(&mut input).is_some(),
            "the fed line is served without room"
        );
        assert!(t.next_incoming_from(&mut input).is_none());
        assert_eq!(input, b"3\n");
    }

    #[test]
    fn a_line_that_does_not_fit_leaves_no_partial_bytes() {
        let mut outbox = Outbox::new([0u8; 64], 64, 64);
        outbox
            .push_line(|s| write_notification(s, "a", None::<&()>))
            .expect("fits");
        let before = outbox.pending().to_vec();
        let long = "x".repeat(100);
        assert_eq!(
            outbox.push_line(|s| write_notification(s, &long, None::<&()>)),
            Err(UsageError::WouldBlock)
        );
        assert_eq!(outbox.pending(), &before[..]);
    }

    #[test]
    fn consuming_part_of_the_pending_bytes_keeps_the_rest_in_order() {
        let mut outbox = Outbox::new([0u8; 256], 256, 256);
        for method in ["one", "two", "three"] {
            outbox
                .push_line(|s| write_notification(s, method, None::<&()>))
                .expect("fits");
        }
        let all = outbox.pending().to_vec();
        outbox.consume(10);
        assert_eq!(outbox.pending(), &all[10..]);
        outbox
            .push_line(|s| write_notification(s, "four", None::<&()>))
            .expect("fits after compaction");
        let mut expected = all[10..].to_vec();
        expected.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"four\"}\n");
        assert_eq!(outbox.pending(), &expected[..]);
        outbox.consume(usize::MAX);
        assert!(outbox.is_empty());
    }

    #[test]
    fn a_line_moved_to_the_front_while_written_is_found_where_push_line_with_says() {
        let put = |sink: &mut OutboxSink<'_, [u8; 64]>, bytes: &[u8]| {
            sink.write_bytes(bytes).map_err(EncodeError::Sink)
        };
        let mut outbox = Outbox::new([0u8; 64], 64, 64);
        outbox
            .push_line(|s| put(s, &[b'a'; 39]).and_then(|()| put(s, b"\n")))
            .expect("fits");
        outbox.consume(30);
        // Ten bytes pending at 30..40; the next line's second piece reaches past the end, so
        // the pending bytes and the line begun move to the front under the writer.
        let (start, span) = outbox
            .push_line_with(|s| {
                put(s, b"0123456789")?;
                put(s, &[b'b'; 20])?;
                put(s, b"\n")?;
                Ok(10..30)
            })
            .expect("fits after compaction");
        assert_eq!(start, 10, "the line now starts after the ten pending bytes");
        assert_eq!(outbox.stored(start..start + 10), b"0123456789");
        assert_eq!(
            outbox.stored(start + span.start..start + span.end),
            &[b'b'; 20]
        );
        let mut expected = [b'a'; 9].to_vec();
        expected.extend_from_slice(b"\n0123456789");
        expected.extend_from_slice(&[b'b'; 20]);
        expected.push(b'\n');
        assert_eq!(outbox.pending(), &expected[..]);
    }

    #[test]
    fn pending_bytes_move_only_when_the_tail_lacks_room() {
        let mut outbox = Outbox::new([0u8; 256], 256, 256);
        for method in ["one", "two", "three"] {
            outbox
                .push_line(|s| write_notification(s, method, None::<&()>))
                .expect("fits");
        }
        outbox.consume(10);
        outbox
            .push_line(|s| write_notification(s, "four", None::<&()>))
            .expect("fits");
        assert_eq!(outbox.start, 10, "room at the tail: nothing moved");
    }

    #[test]
    fn the_high_water_mark_tells_the_application_to_pause() {
        let mut outbox = Outbox::new([0u8; 2048], 2048, 1100);
        assert!(outbox.has_room_for_updates());
        // 1,000 bytes of text make a 1,034-byte line: over the clamped mark of 1,024.
        let text = "y".repeat(1000);
        outbox
            .push_line(|s| write_notification(s, &text, None::<&()>))
            .expect("fits");
        assert!(
            !outbox.has_room_for_updates(),
            "high water clamps to limit - reserve = 1024"
        );
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn growable_storage_grows_up_to_the_limit_only() {
        let mut outbox = Outbox::new(alloc::vec::Vec::new(), 4096, 2048);
        // Lines of 1,034 bytes: three fit in 4,096, a fourth does not.
        let text = "z".repeat(1000);
        for _ in 0..3 {
            outbox
                .push_line(|s| write_notification(s, &text, None::<&()>))
                .expect("fits");
        }
        assert_eq!(
            outbox.push_line(|s| write_notification(s, &text, None::<&()>)),
            Err(UsageError::WouldBlock)
        );
        assert!(outbox.len() <= 4096);
    }
}
