//! NDJSON framing: a byte stream in, one line at a time out.
//!
//! (The `Framer` itself is being written; this file fixes the error type others build on.)

use core::fmt;

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
