//! The person's side of the terminal: typed lines, single keys and Ctrl-C, as async sources.

use std::io::Read;

use acp_core::wire::frame::Framer;
use rustix::termios::{LocalModes, OptionalActions, SpecialCodeIndex, Termios};
use smol::channel::Receiver;
use smol::stream::StreamExt as _;

/// Bytes read from stdin at most per read.
const READ_CHUNK: usize = 4096;

/// What was typed on stdin, read by a thread started on first use (so stdin is not touched
/// unless input is wanted): whole lines, or, in [`RawMode`], single keys.
#[derive(Debug, Default)]
pub(crate) struct StdinLines {
    chunks: Option<Receiver<Vec<u8>>>,
    /// Read and not yet handed out.
    pending: TypedBytes,
    ended: bool,
}

impl StdinLines {
    /// Nothing read yet.
    pub(crate) fn new() -> StdinLines {
        StdinLines::default()
    }

    /// The next line without its line ending; `None` at the end of stdin. A last line
    /// without a newline is still a line.
    pub(crate) async fn next(&mut self) -> Option<String> {
        // Each pass either hands out a line or waits for one more chunk; stdin is finite
        // or the wait goes on as long as the person types nothing.
        loop {
            if let Some(line) = self.pending.take_line() {
                return Some(line);
            }
            if self.ended {
                return self.pending.take_last();
            }
            self.read_more().await;
        }
    }

    /// The next keypress (what one read returned: one key, or an escape sequence);
    /// `None` at the end of stdin. Meant for [`RawMode`], where keys arrive unbuffered.
    pub(crate) async fn next_key(&mut self) -> Option<Vec<u8>> {
        if self.pending.is_empty() && !self.ended {
            self.read_more().await;
        }
        if self.pending.is_empty() {
            return None;
        }
        Some(self.pending.take_all())
    }

    async fn read_more(&mut self) {
        let chunks = self.chunks.get_or_insert_with(|| {
            let (tx, rx) = smol::channel::unbounded();
            std::thread::spawn(move || {
                let mut buf = [0u8; READ_CHUNK];
                // Ends at EOF, a read error, or when nobody listens any more.
                while let Ok(n @ 1..) = std::io::stdin().read(&mut buf) {
                    if tx.send_blocking(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
            });
            rx
        });
        match chunks.recv().await {
            Ok(chunk) => self.pending.push(chunk),
            Err(_) => self.ended = true,
        }
    }
}

/// Bytes typed and not handed out yet: whole lines through acp-core's framer (raw, so a
/// blank line is a line, and without a length limit: a pasted prompt may be long), or all of
/// them at once as keys. Each byte is searched for a newline once, however the reads cut
/// the lines.
pub(crate) struct TypedBytes {
    /// Holds the start of a line the reads so far have not ended.
    framer: Framer<Vec<u8>>,
    /// The last read, taken from `at` on.
    read: Vec<u8>,
    at: usize,
}

/// How many bytes wait, not what was typed.
impl std::fmt::Debug for TypedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting = self.framer.buffered() + self.read.len() - self.at;
        f.debug_struct("TypedBytes")
            .field("waiting", &waiting)
            .finish()
    }
}

impl Default for TypedBytes {
    fn default() -> Self {
        TypedBytes {
            framer: Framer::with_limit(usize::MAX).raw(),
            read: Vec::new(),
            at: 0,
        }
    }
}

impl TypedBytes {
    /// Adds what one read gave.
    pub(crate) fn push(&mut self, bytes: Vec<u8>) {
        if self.at == self.read.len() {
            self.read = bytes;
        } else {
            self.read.drain(..self.at);
            self.read.extend_from_slice(&bytes);
        }
        self.at = 0;
    }

    /// The next whole line, without its `\n` and the `\r`s before it (invalid UTF-8
    /// replaced); `None` when no line is complete yet.
    pub(crate) fn take_line(&mut self) -> Option<String> {
        let mut input = &self.read[self.at..];
        let line = self.framer.next_line_bytes_from(&mut input);
        self.at = self.read.len() - input.len();
        let line = line?.unwrap_or_default();
        Some(
            String::from_utf8_lossy(line)
                .trim_end_matches('\r')
                .to_owned(),
        )
    }

    /// At the end of the input, after [`TypedBytes::take_line`] gave `None`: the last line,
    /// which has no newline, as typed (invalid UTF-8 replaced); `None` if nothing is left.
    pub(crate) fn take_last(&mut self) -> Option<String> {
        self.framer.finish();
        let line = self.framer.next_line_bytes_from(&mut &[][..])?;
        Some(String::from_utf8_lossy(line.unwrap_or_default()).into_owned())
    }

    /// Whether nothing is left to hand out.
    pub(crate) fn is_empty(&self) -> bool {
        self.framer.buffered() == 0 && self.at == self.read.len()
    }

    /// Every byte not handed out yet (what single keys gave).
    pub(crate) fn take_all(&mut self) -> Vec<u8> {
        let mut bytes = self.framer.held().to_vec();
        bytes.extend_from_slice(&self.read[self.at..]);
        self.clear();
        bytes
    }

    /// Forgets every byte not handed out yet.
    pub(crate) fn clear(&mut self) {
        self.framer.reset();
        self.read.clear();
        self.at = 0;
    }
}

/// The terminal on stdin without line editing or echo, so a single key is read at once
/// (Ctrl-C still interrupts). The previous settings come back when this is dropped.
#[derive(Debug)]
pub(crate) struct RawMode {
    saved: Termios,
}

impl RawMode {
    /// Switches stdin's terminal to single keys; `None` when stdin is not a terminal.
    pub(crate) fn enter() -> Option<RawMode> {
        let stdin = std::io::stdin();
        let saved = rustix::termios::tcgetattr(&stdin).ok()?;
        let mut raw = saved.clone();
        raw.local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO);
        raw.special_codes[SpecialCodeIndex::VMIN] = 1;
        raw.special_codes[SpecialCodeIndex::VTIME] = 0;
        rustix::termios::tcsetattr(&stdin, OptionalActions::Now, &raw).ok()?;
        Some(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let stdin = std::io::stdin();
        if let Err(e) = rustix::termios::tcsetattr(&stdin, OptionalActions::Now, &self.saved) {
            tracing::warn!("cannot restore the terminal: {e}");
        }
    }
}

/// Ctrl-C (SIGINT) presses. While this exists the signal no longer kills the process.
pub(crate) struct Interrupts {
    signals: Option<async_signal::Signals>,
}

impl std::fmt::Debug for Interrupts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupts")
            .field("installed", &self.signals.is_some())
            .finish()
    }
}

impl Default for Interrupts {
    fn default() -> Self {
        Self::new()
    }
}

impl Interrupts {
    /// Catches SIGINT from now on (if the handler cannot be installed, Ctrl-C keeps its
    /// default effect and [`Interrupts::next`] never returns).
    pub(crate) fn new() -> Interrupts {
        let signals = async_signal::Signals::new([async_signal::Signal::Int])
            .map_err(|e| tracing::warn!("cannot catch Ctrl-C: {e}"))
            .ok();
        Interrupts { signals }
    }

    /// Waits for the next Ctrl-C.
    pub(crate) async fn next(&mut self) {
        match self.signals.as_mut() {
            Some(signals) => {
                // A stream of signals never ends; an error is not a press.
                while let Some(signal) = signals.next().await {
                    if signal.is_ok() {
                        return;
                    }
                }
                std::future::pending().await
            }
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TypedBytes;

    fn typed(reads: &[&[u8]]) -> TypedBytes {
        let mut typed = TypedBytes::default();
        for read in reads {
            typed.push(read.to_vec());
        }
        typed
    }

    /// Lines typed across reads come out whole, without `\n` and the `\r`s before it; a blank
    /// line is a line.
    #[test]
    fn lines_across_reads() {
        let mut bytes = TypedBytes::default();
        let mut lines = Vec::new();
        for read in [&b"fir"[..], b"st\r\n\nsec", b"ond\r\r\nthi", b"rd\xff\n"] {
            bytes.push(read.to_vec());
            while let Some(line) = bytes.take_line() {
                lines.push(line);
            }
        }
        assert_eq!(lines, ["first", "", "second", "third\u{fffd}"]);
        assert!(bytes.is_empty());
        assert_eq!(bytes.take_last(), None);
    }

    /// R-FRAME-3: at the end of stdin the last line needs no newline; it comes as typed.
    #[test]
    fn the_last_line_without_a_newline() {
        let mut bytes = typed(&[b"a\nb", b"c\r"]);
        assert_eq!(bytes.take_line().as_deref(), Some("a"));
        assert_eq!(bytes.take_line(), None);
        assert_eq!(bytes.take_last().as_deref(), Some("bc\r"));
        assert_eq!(bytes.take_last(), None);
    }

    /// Keys take every byte not handed out: the start of a line held back, the rest of the
    /// read, newlines included.
    #[test]
    fn keys_take_everything_left() {
        let mut bytes = typed(&[b"line\nhalf"]);
        assert_eq!(bytes.take_line().as_deref(), Some("line"));
        assert_eq!(bytes.take_line(), None);
        bytes.push(b" y\nz".to_vec());
        assert!(!bytes.is_empty());
        assert_eq!(bytes.take_all(), b"half y\nz");
        assert!(bytes.is_empty());
        bytes.push(b"q".to_vec());
        bytes.clear();
        assert!(bytes.is_empty());
        bytes.push(b"new\n".to_vec());
        assert_eq!(bytes.take_line().as_deref(), Some("new"));
    }

    /// A read pushed while part of the last one waits is appended to it.
    #[test]
    fn a_read_pushed_before_the_last_is_used_up() {
        let mut bytes = typed(&[b"a\nb\n", b"c\n"]);
        let lines: Vec<String> = std::iter::from_fn(|| bytes.take_line()).collect();
        assert_eq!(lines, ["a", "b", "c"]);
    }
}
