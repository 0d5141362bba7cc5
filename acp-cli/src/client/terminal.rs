//! The person's side of the terminal: typed lines, single keys and Ctrl-C, as async sources.

use std::io::Read;

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
    pending: Vec<u8>,
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
            if let Some(at) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=at).collect();
                let text = String::from_utf8_lossy(&line);
                return Some(text.trim_end_matches(['\n', '\r']).to_owned());
            }
            if self.ended {
                if self.pending.is_empty() {
                    return None;
                }
                let rest = std::mem::take(&mut self.pending);
                return Some(String::from_utf8_lossy(&rest).into_owned());
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
        Some(std::mem::take(&mut self.pending))
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
            Ok(chunk) => self.pending.extend_from_slice(&chunk),
            Err(_) => self.ended = true,
        }
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
