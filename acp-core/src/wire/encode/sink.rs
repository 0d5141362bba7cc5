//! Where encoded bytes go: the [`Sink`] trait and its implementations.

use core::fmt;

/// A destination for encoded bytes.
///
/// The encoder only ever appends. When a call fails, the bytes written before the failure stay
/// in the sink: a failed message leaves a partial line behind, which the caller must discard
/// (for a [`SliceSink`], [`encode_line`] does that bookkeeping).
pub trait Sink {
    /// Why the sink refused bytes (full, or an I/O error).
    type Error: fmt::Debug + fmt::Display;

    /// Appends all of `bytes`, or fails.
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Self::Error>;

    /// Appends one byte. Sinks with a cheaper single-byte path override it.
    #[inline]
    fn write_byte(&mut self, byte: u8) -> Result<(), Self::Error> {
        self.write_bytes(&[byte])
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    type Error = S::Error;

    #[inline]
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        (**self).write_bytes(bytes)
    }

    #[inline]
    fn write_byte(&mut self, byte: u8) -> Result<(), Self::Error> {
        (**self).write_byte(byte)
    }
}

#[cfg(feature = "alloc")]
impl Sink for alloc::vec::Vec<u8> {
    type Error = core::convert::Infallible;

    #[inline]
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        self.extend_from_slice(bytes);
        Ok(())
    }

    #[inline]
    fn write_byte(&mut self, byte: u8) -> Result<(), Self::Error> {
        self.push(byte);
        Ok(())
    }
}

/// A fixed-capacity buffer had no room for the rest of the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferFull;

impl fmt::Display for BufferFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("output buffer full")
    }
}

impl core::error::Error for BufferFull {}

impl<const N: usize> Sink for heapless::Vec<u8, N> {
    type Error = BufferFull;

    #[inline]
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        self.extend_from_slice(bytes).map_err(|_| BufferFull)
    }

    #[inline]
    fn write_byte(&mut self, byte: u8) -> Result<(), Self::Error> {
        self.push(byte).map_err(|_| BufferFull)
    }
}

/// A write cursor over a caller's `&mut [u8]`.
///
/// A write that does not fit writes nothing and fails with [`BufferFull`]; earlier writes of the
/// same message stay in the buffer, so after a failure the caller must throw away everything
/// past the position it started from. [`encode_line`] does exactly that.
#[derive(Debug)]
pub struct SliceSink<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> SliceSink<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// How many bytes have been written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing has been written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes written so far.
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// How many more bytes fit.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.len
    }
}

impl Sink for SliceSink<'_> {
    type Error = BufferFull;

    #[inline]
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        let end = self.len + bytes.len();
        match self.buf.get_mut(self.len..end) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len = end;
                Ok(())
            }
            None => Err(BufferFull),
        }
    }

    #[inline]
    fn write_byte(&mut self, byte: u8) -> Result<(), Self::Error> {
        match self.buf.get_mut(self.len) {
            Some(slot) => {
                *slot = byte;
                self.len += 1;
                Ok(())
            }
            None => Err(BufferFull),
        }
    }
}

/// Runs `write` over a fresh [`SliceSink`] on `buf` and returns the number of bytes it wrote.
///
/// Use it with the message writers to put one whole line into a slice: on `Ok(n)`,
/// `buf[..n]` is the line; on an error the contents of `buf` are meaningless (a partial line)
/// and must not be sent.
///
/// ```
/// use acp_core::wire::encode::{encode_line, write_notification};
///
/// let mut buf = [0u8; 64];
/// let n = encode_line(&mut buf, |sink| write_notification(sink, "ping", None::<&()>)).unwrap();
/// assert_eq!(&buf[..n], b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n");
/// ```
pub fn encode_line<E>(
    buf: &mut [u8],
    write: impl FnOnce(&mut SliceSink<'_>) -> Result<(), E>,
) -> Result<usize, E> {
    let mut sink = SliceSink::new(buf);
    write(&mut sink)?;
    Ok(sink.len())
}

/// An [`embedded_io::Write`] seen as a [`Sink`]. Every `write_bytes` is one `write_all`;
/// wrap the writer in a buffer if small writes are expensive.
#[derive(Debug)]
pub struct IoSink<W>(pub W);

/// Why an [`IoSink`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoSinkError<E> {
    /// The writer reported an error.
    Io(E),
    /// The writer accepted zero bytes of a non-empty write (it can take no more).
    WriteZero,
}

impl<E: fmt::Display> fmt::Display for IoSinkError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IoSinkError::Io(e) => write!(f, "write failed: {e}"),
            IoSinkError::WriteZero => f.write_str("writer accepted no bytes"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for IoSinkError<E> {}

impl<W: embedded_io::Write> Sink for IoSink<W> {
    type Error = IoSinkError<W::Error>;

    fn write_bytes(&mut self, mut bytes: &[u8]) -> Result<(), Self::Error> {
        // Bounded: every turn consumes at least one byte or returns.
        while !bytes.is_empty() {
            match self.0.write(bytes) {
                Ok(0) => return Err(IoSinkError::WriteZero),
                Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
                Err(e) => return Err(IoSinkError::Io(e)),
            }
        }
        Ok(())
    }
}

/// Runs `write` to append one line to `out`, and on an error removes whatever part of the line
/// it had written, so `out` only ever holds whole lines.
///
/// ```
/// use acp_core::wire::encode::{append_line, write_notification};
///
/// let mut out = Vec::new();
/// append_line(&mut out, |line| write_notification(line, "ping", None::<&()>)).unwrap();
/// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n");
/// ```
#[cfg(feature = "alloc")]
pub fn append_line(
    out: &mut alloc::vec::Vec<u8>,
    write: impl FnOnce(
        &mut alloc::vec::Vec<u8>,
    ) -> Result<(), super::EncodeError<core::convert::Infallible>>,
) -> Result<(), super::ValueError> {
    let start = out.len();
    write(out).map_err(|error| {
        out.truncate(start);
        match error {
            super::EncodeError::Value(error) => error,
            super::EncodeError::Sink(never) => match never {},
        }
    })
}
