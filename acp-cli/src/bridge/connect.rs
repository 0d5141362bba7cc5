//! `acp-cli bridge --connect URL`: a stdio agent that relays to a remote one (R-NETC-7).
//!
//! Each stdin line, without its `\n`, is one message to the remote agent, byte for byte;
//! each message of the remote agent is one stdout line. The exceptions keep NDJSON framing
//! whole: a blank line is skipped (R-FRAME-2); a line that is not UTF-8 (which no text frame
//! can carry) is answered here as the agent would answer it (R-FRAME-6); a raw `\r` or `\n`
//! in a remote message, which can only be whitespace between JSON tokens (R-MSG-1), is
//! written as a space.

use std::path::Path;

use async_signal::{Signal, Signals};
use smol::io::AsyncBufReadExt as _;
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

/// What woke the relay.
enum Wake {
    Line(Option<Vec<u8>>),
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
    loop {
        let wake = smol::future::or(
            async { Wake::Line(lines.recv().await.ok().flatten()) },
            smol::future::or(async { Wake::Remote(remote.next().await) }, async {
                match signal_numbers.1.recv().await {
                    Ok(signal) => Wake::Signal(signal),
                    Err(_) => std::future::pending().await,
                }
            }),
        )
        .await;
        match wake {
            Wake::Line(Some(line)) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match String::from_utf8(line) {
                    Ok(text) => {
                        if !remote.send(text).await {
                            // The remote's end is reported by `next`.
                            continue;
                        }
                    }
                    Err(error) => {
                        let at = error.utf8_error().valid_up_to();
                        let answer = format!(
                            "{{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{{\"code\":-32700,\"message\":\"Parse error: invalid UTF-8 at byte {at}\"}}}}"
                        );
                        if !write_line(&mut stdout, answer.as_bytes()) {
                            remote.close().await;
                            return 0;
                        }
                    }
                }
            }
            Wake::Line(None) => {
                remote.close().await;
                return 0;
            }
            Wake::Remote(Incoming::Message(message)) => {
                if !write_line(&mut stdout, &one_line(message)) {
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

/// stdin's lines without their `\n` (a last line without one included), read on a blocking
/// thread; `None` at the end.
fn stdin_lines() -> smol::channel::Receiver<Option<Vec<u8>>> {
    let (sender, receiver) = smol::channel::bounded(16);
    smol::spawn(async move {
        let mut stdin = smol::io::BufReader::new(smol::Unblock::new(std::io::stdin()));
        loop {
            let mut line = Vec::new();
            match stdin.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                    }
                    if sender.send(Some(line)).await.is_err() {
                        return;
                    }
                }
            }
        }
        let _ = sender.send(None).await;
    })
    .detach();
    receiver
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
