//! The last lines a server wrote to stderr, for `/acp logs` and status views.
//!
//! Stderr is where an agent explains why it failed, so it is kept, but a chatty agent must not
//! grow the host's memory: the ring keeps the last [`STDERR_LINES`] non-empty lines, each cut to
//! [`MAX_LINE_BYTES`].

use alloc::collections::VecDeque;
use alloc::string::String;

/// How many lines the ring keeps.
pub const STDERR_LINES: usize = 200;

/// The longest line kept, in bytes; longer lines are cut at a character boundary.
pub const MAX_LINE_BYTES: usize = 8 * 1024;

/// A ring of the last [`STDERR_LINES`] non-empty stderr lines, oldest first.
#[derive(Clone, Debug, Default)]
pub struct StderrRing {
    lines: VecDeque<String>,
    dropped: u64,
}

impl StderrRing {
    /// An empty ring.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps one line: trailing whitespace (including `\r\n`) removed, blank lines skipped,
    /// the oldest line dropped when full.
    pub fn push(&mut self, line: &str) {
        let line = line.trim_end();
        if line.is_empty() {
            return;
        }
        let mut end = line.len().min(MAX_LINE_BYTES);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        if self.lines.len() == STDERR_LINES {
            self.lines.pop_front();
            self.dropped += 1;
        }
        self.lines.push_back(String::from(&line[..end]));
    }

    /// The last `n` lines (fewer if fewer were kept), oldest first.
    pub fn tail(&self, n: usize) -> impl Iterator<Item = &str> {
        let skip = self.lines.len().saturating_sub(n);
        self.lines.iter().skip(skip).map(String::as_str)
    }

    /// How many lines are kept.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether no line was kept.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// How many lines fell off the front since the ring was made.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Forgets every line (a new process starts a new log).
    pub fn clear(&mut self) {
        self.lines.clear();
    }
}
