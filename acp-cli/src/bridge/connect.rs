//! `acp-cli bridge --connect URL`: a stdio agent that relays to a remote one (R-NETC-7).
//!
//! Each stdin line, without its `\n`, is one message to the remote agent, byte for byte;
//! each message of the remote agent is one stdout line. The exceptions keep NDJSON framing
//! whole: a blank line is skipped (R-FRAME-2); a line that is not UTF-8 (which no text frame
//! can carry) or longer than 16 MiB is answered here as the agent would answer it
//! (R-FRAME-6, R-FRAME-5) and memory stays bounded; a raw `\r` or `\n`
//! in a remote message, which can only be whitespace between JSON tokens (R-MSG-1), is
//! written as a space.

use std::path::Path;

use async_signal::{Signal, Signals};
use smol::io::AsyncReadExt as _;
use smol::stream::StreamExt as _;

use crate::remote::target::{RemoteUrl, TOKEN_VARIABLE, Token};
use crate::remote::{Incoming, Remote};

/// Exit status for a bad `--connect` URL or token file.
const EXIT_USAGE: i32 = 2;

/// Runs the bridge to its end; returns the exit status.
pub fn run(url: &str, token_file: Option<&Path>) -> i32 {
    let url = match RemoteUrl::parse(url) {
        Ok(url) => url,
        Err(why) => {
            eprintln!("acp-cli bridge: --connect '{url}' {why}");
            return EXIT_USAGE;
        }
    };
    let token = match Token::load(token_file, std::env::var(TOKEN_VARIABLE).ok().as_deref()) {
        Ok(token) => token,
        Err(why) => {
            eprintln!("acp-cli bridge: {why}");
            return EXIT_USAGE;
        }
    };
    smol::block_on(relay(url, token))
}

/// How long, after stdin's end, the answers to requests already sent are waited for.
const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// What woke the relay.
enum Wake {
    Line(Option<StdinLine>),
    /// stdin ended and [`DRAIN_GRACE`] passed with answers still missing.
    DrainOver,
    Remote(Incoming),
    Signal(i32),
}

/// Connects, then relays until stdin, the remote agent or a signal ends it.
async fn relay(url: RemoteUrl, token: Option<Token>) -> i32 {
    let signals = Signals::new([Signal::Term, Signal::Int]).ok();
    let mut remote = match Remote::connect(&url, token.as_ref()).await {
        Ok(remote) => remote,
        Err(error) => {
            eprintln!("acp-cli bridge: {error}");
            return 1;
        }
    };
    let lines = stdin_lines();
    let signal_numbers = smol::channel::bounded::<i32>(1);
    let _signal_task = signals.map(|mut signals| {
        let sender = signal_numbers.0.clone();
        smol::spawn(async move {
            if let Some(Ok(signal)) = signals.next().await {
                let _ = sender.send(signal as i32).await;
            }
        })
    });
    let mut stdout = std::io::stdout().lock();
    let mut pending = Pending::default();
    // Set at stdin's end while requests still wait for their answers (R-NETC-9).
    let mut draining: Option<std::time::Instant> = None;
    loop {
        let wake = smol::future::or(
            async {
                match draining {
                    Some(deadline) => {
                        smol::Timer::at(deadline).await;
                        Wake::DrainOver
                    }
                    None => Wake::Line(lines.recv().await.ok().flatten()),
                }
            },
            smol::future::or(async { Wake::Remote(remote.next().await) }, async {
                match signal_numbers.1.recv().await {
                    Ok(signal) => Wake::Signal(signal),
                    Err(_) => std::future::pending().await,
                }
            }),
        )
        .await;
        match wake {
            Wake::Line(Some(StdinLine::Line(line))) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let answer = match String::from_utf8(line) {
                    Ok(text) => {
                        pending.sent(&text);
                        // A `false` (the remote ended) is reported by `next`.
                        remote.send(text).await;
                        continue;
                    }
                    Err(error) => parse_error(&format!(
                        "invalid UTF-8 at byte {}",
                        error.utf8_error().valid_up_to()
                    )),
                };
                if !write_line(&mut stdout, answer.as_bytes()) {
                    remote.close().await;
                    return 0;
                }
            }
            Wake::Line(Some(StdinLine::TooLong)) => {
                let answer = parse_error(&format!(
                    "line exceeds the maximum length of {MAX_LINE} bytes"
                ));
                if !write_line(&mut stdout, answer.as_bytes()) {
                    remote.close().await;
                    return 0;
                }
            }
            Wake::Line(None) if pending.is_empty() => {
                remote.close().await;
                return 0;
            }
            Wake::Line(None) => draining = Some(std::time::Instant::now() + DRAIN_GRACE),
            Wake::DrainOver => {
                remote.close().await;
                return 0;
            }
            Wake::Remote(Incoming::Message(message)) => {
                pending.received(&message);
                if !write_line(&mut stdout, &one_line(message)) {
                    remote.close().await;
                    return 0;
                }
                if draining.is_some() && pending.is_empty() {
                    remote.close().await;
                    return 0;
                }
            }
            Wake::Remote(Incoming::Ended(None)) => {
                eprintln!("acp-cli bridge: the remote agent closed the connection");
                return 1;
            }
            Wake::Remote(Incoming::Ended(Some(error))) => {
                eprintln!("acp-cli bridge: {error}");
                return 1;
            }
            Wake::Signal(signal) => {
                remote.close().await;
                return 128 + signal;
            }
        }
    }
}

/// The longest stdin line relayed: the stdio line limit (R-FRAME-5).
const MAX_LINE: usize = 16 << 20;

/// One stdin line, as read.
enum StdinLine {
    /// A line without its `\n` (a last line without one included).
    Line(Vec<u8>),
    /// A line longer than [`MAX_LINE`], dropped up to its end.
    TooLong,
}

/// stdin's lines, read on a blocking thread, each bounded by [`MAX_LINE`]; `None` at the
/// end. (Plain reads, not `fill_buf`: smol's `Unblock` starts a new blocking read when polled
/// again after the end, which `fill_buf`'s second poll does.)
fn stdin_lines() -> smol::channel::Receiver<Option<StdinLine>> {
    let (sender, receiver) = smol::channel::bounded(16);
    smol::spawn(async move {
        let mut stdin = smol::Unblock::new(std::io::stdin());
        let mut buffer = vec![0u8; 64 * 1024];
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let read = match stdin.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            let mut rest = &buffer[..read];
            while !rest.is_empty() {
                let (part, ended) = match memchr::memchr(b'\n', rest) {
                    Some(at) => (&rest[..at], Some(at + 1)),
                    None => (rest, None),
                };
                if !too_long && line.len() + part.len() > MAX_LINE {
                    too_long = true;
                    line = Vec::new();
                }
                if !too_long {
                    line.extend_from_slice(part);
                }
                rest = &rest[ended.unwrap_or(rest.len())..];
                if ended.is_some() {
                    let item = if std::mem::take(&mut too_long) {
                        StdinLine::TooLong
                    } else {
                        StdinLine::Line(std::mem::take(&mut line))
                    };
                    if sender.send(Some(item)).await.is_err() {
                        return;
                    }
                }
            }
        }
        let last = if too_long {
            Some(StdinLine::TooLong)
        } else {
            (!line.is_empty()).then_some(StdinLine::Line(line))
        };
        if let Some(last) = last {
            let _ = sender.send(Some(last)).await;
        }
        let _ = sender.send(None).await;
    })
    .detach();
    receiver
}

/// The ids of the editor's requests the remote agent has not answered yet, so stdin's end
/// does not cut off an answer on its way (R-NETC-9). Ids are compared as their JSON text.
#[derive(Default)]
struct Pending(std::collections::HashSet<String>);

/// Just enough of a message to tell a request from an answer.
#[derive(serde::Deserialize)]
struct Shape<'a> {
    #[serde(borrow)]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    method: Option<&'a serde_json::value::RawValue>,
}

impl Pending {
    /// Records `line` if it is a request.
    fn sent(&mut self, line: &str) {
        if let Ok(Shape {
            id: Some(id),
            method: Some(_),
        }) = serde_json::from_str(line)
        {
            self.0.insert(id.get().to_owned());
        }
    }

    /// Forgets the request `message` answers, if it is an answer.
    fn received(&mut self, message: &[u8]) {
        if self.0.is_empty() {
            return;
        }
        if let Ok(Shape {
            id: Some(id),
            method: None,
        }) = serde_json::from_slice(message)
        {
            self.0.remove(id.get());
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The bridge's own answer to a line it cannot relay (R-FRAME-5, R-FRAME-6).
fn parse_error(why: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{{\"code\":-32700,\"message\":\"Parse error: {why}\"}}}}"
    )
}

/// A remote message as one stdout line's content: raw line breaks become spaces.
pub fn one_line(mut message: Vec<u8>) -> Vec<u8> {
    for byte in &mut message {
        if *byte == b'\n' || *byte == b'\r' {
            *byte = b' ';
        }
    }
    message
}

/// Writes `content` and `\n` and flushes; `false` when stdout is gone.
fn write_line(stdout: &mut impl std::io::Write, content: &[u8]) -> bool {
    stdout
        .write_all(content)
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush())
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-NETC-9: a request stays pending until an answer with its id comes back; notifications
    /// and the agent's own requests are not waited for.
    #[test]
    fn requests_wait_for_their_answers() {
        let mut pending = Pending::default();
        pending.sent(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#);
        assert!(pending.is_empty());
        pending.sent(r#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{}}"#);
        pending.received(br#"{"jsonrpc":"2.0","id":"a","method":"fs/read_text_file"}"#);
        pending.received(br#"{"jsonrpc":"2.0","id":"b","result":{}}"#);
        assert!(!pending.is_empty());
        pending.received(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#);
        assert!(pending.is_empty());
        pending.sent(r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt"}"#);
        pending.received(br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}}"#);
        assert!(pending.is_empty());
    }

    /// R-NETC-7: a message without line breaks is written byte for byte; raw line breaks
    /// become spaces, so the message stays one line.
    #[test]
    fn remote_messages_become_one_line() {
        let message = br#"{"jsonrpc":"2.0","id":1,"result":{"t":"a\nb \u00e9"}}"#.to_vec();
        assert_eq!(one_line(message.clone()), message);
        assert_eq!(
            one_line(b"{\r\n \"id\": 1\n}".to_vec()),
            b"{   \"id\": 1 }".to_vec()
        );
    }
}
