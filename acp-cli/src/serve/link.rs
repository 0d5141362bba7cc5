//! The in-memory pipe between a network connection's messages and an agent that speaks
//! lines: the same pump, the same application, as `--stdio`.
//!
//! In: each message becomes one line ([`message_line`], the transform of R-MSG-1), queued in
//! a bounded channel the agent's pump reads as a byte stream ([`LineReader`]). Out: the
//! pump's lines are cut at their newlines into messages (R-MSG-2: a message never holds a raw
//! newline) and queued in a bounded channel ([`MessageWriter`]); a full channel makes the
//! write pending, so a peer that does not read holds the agent back (R-NET-6).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use smol::channel::{Receiver, Sender, TrySendError};
use smol::io::{AsyncRead, AsyncWrite};
use smol::stream::Stream;

/// Messages queued towards the agent before the network side waits (R-NET-6).
pub const INPUT_QUEUE: usize = 16;

/// Messages queued from the agent before its pump waits (R-NET-6).
pub const OUTPUT_QUEUE: usize = 64;

/// One message of a message transport as one line of the stdio transport (R-MSG-1): a `\n`
/// or `\r` between JSON tokens is whitespace and becomes a space; one inside a string is not
/// JSON and becomes `0x1F`, another control character, so the agent still refuses the line as
/// a parse error, as one line. A single-line message passes byte for byte, with `\n` added.
pub fn message_line(message: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(message.len() + 1);
    let mut in_string = false;
    let mut escaped = false;
    for &byte in message {
        match byte {
            b'\n' | b'\r' => {
                line.push(if in_string { 0x1F } else { b' ' });
                escaped = false;
                continue;
            }
            _ if !in_string => in_string = byte == b'"',
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => in_string = false,
            _ => {}
        }
        line.push(byte);
    }
    line.push(b'\n');
    line
}

/// A pipe's two ends for one agent: what the network side holds.
pub struct Link {
    /// Lines to the agent; dropping every clone is the agent's EOF.
    pub input: Sender<Vec<u8>>,
    /// Messages from the agent; closed once the agent has ended.
    pub output: Receiver<Vec<u8>>,
}

/// A new pipe: the network side's [`Link`], and the agent side's reader and writer.
pub fn pipe() -> (Link, LineReader, MessageWriter) {
    let (input, lines) = smol::channel::bounded(INPUT_QUEUE);
    let (messages, output) = smol::channel::bounded(OUTPUT_QUEUE);
    let reader = LineReader {
        lines: Box::pin(lines),
        current: Vec::new(),
        at: 0,
    };
    let writer = MessageWriter {
        messages,
        partial: Vec::new(),
        sending: None,
    };
    (Link { input, output }, reader, writer)
}

/// The agent's input: the queued lines as one byte stream; EOF once every sender is gone.
pub struct LineReader {
    lines: Pin<Box<Receiver<Vec<u8>>>>,
    current: Vec<u8>,
    at: usize,
}

impl AsyncRead for LineReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        while self.at >= self.current.len() {
            match self.lines.as_mut().poll_next(cx) {
                Poll::Ready(Some(line)) => {
                    self.current = line;
                    self.at = 0;
                }
                Poll::Ready(None) => return Poll::Ready(Ok(0)),
                Poll::Pending => return Poll::Pending,
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Poll::Ready(Ok(n))
    }
}

type Sending = Pin<Box<dyn Future<Output = Result<(), smol::channel::SendError<Vec<u8>>>>>>;

/// The agent's output: lines cut into messages, each sent on the bounded channel. A write
/// waits while a message waits for room.
pub struct MessageWriter {
    messages: Sender<Vec<u8>>,
    partial: Vec<u8>,
    sending: Option<Sending>,
}

impl MessageWriter {
    /// Finishes a message that waited for room; an error once the network side is gone.
    fn poll_sent(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(sending) = self.sending.as_mut() {
            let done = std::task::ready!(sending.as_mut().poll(cx));
            self.sending = None;
            if done.is_err() {
                return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for MessageWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        std::task::ready!(self.poll_sent(cx))?;
        let Some(end) = memchr::memchr(b'\n', buf) else {
            self.partial.extend_from_slice(buf);
            return Poll::Ready(Ok(buf.len()));
        };
        self.partial.extend_from_slice(&buf[..end]);
        let message = std::mem::take(&mut self.partial);
        match self.messages.try_send(message) {
            Ok(()) => {}
            Err(TrySendError::Full(message)) => {
                let messages = self.messages.clone();
                self.sending = Some(Box::pin(async move { messages.send(message).await }));
            }
            Err(TrySendError::Closed(_)) => {
                return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
            }
        }
        Poll::Ready(Ok(end + 1))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_sent(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.poll_sent(cx))?;
        self.messages.close();
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-MSG-1: newlines between tokens become spaces, inside strings `0x1F`; one line out.
    #[test]
    fn message_line_is_the_message_transform() {
        assert_eq!(message_line(b"{\"a\":1}"), b"{\"a\":1}\n");
        assert_eq!(message_line(b"{\n\"a\":\r\n1}"), b"{ \"a\":  1}\n");
        assert_eq!(message_line(b"{\"a\":\"x\ny\"}"), b"{\"a\":\"x\x1Fy\"}\n");
        assert_eq!(
            message_line(b"{\"a\":\"\\\"\n\"}"),
            b"{\"a\":\"\\\"\x1F\"}\n"
        );
    }
}
