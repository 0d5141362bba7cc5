//! The client that drives every agent: raw NDJSON over one end of a `tokio::io::duplex`,
//! written with acp-core's wire layer only, so its cost is the same whichever agent answers.
//!
//! It reads 64 KiB at a time, frames with `Framer` and classifies every line with
//! `envelope::scan` (which validates the whole line as JSON). A line that is not the expected
//! notification or answer fails the run, so a run that completes has seen exactly what it
//! counts. Its code runs inside [`alloc::as_client`], so its allocations are counted apart.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use acp_core::wire::envelope::{self, Message, Outcome};
use acp_core::wire::frame::Framer;
use memchr::memmem::Finder;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

use crate::alloc;

/// How many bytes one read asks for.
const READ_BLOCK: usize = 64 * 1024;
/// The longest line accepted from an agent.
const MAX_LINE: usize = 1024 * 1024;

/// What one prompt turn delivered.
#[derive(Clone, Copy, Debug)]
pub struct Turn {
    /// `agent_message_chunk` notifications before the answer.
    pub chunks: u64,
    /// From writing the prompt until its answer (and every chunk before it) was read.
    pub elapsed: Duration,
}

/// One connection to an agent with an open session.
pub struct Client {
    stream: DuplexStream,
    framer: Framer<Vec<u8>>,
    block: Box<[u8]>,
    /// `block[pending.0..pending.1]` was read but not yet taken by the framer.
    pending: (usize, usize),
    /// The outgoing line, reused.
    line: String,
    next_id: i64,
    session_id: String,
    /// Finds the chunk's tag in a notification's params (built once: it is on every line).
    chunk_tag: Finder<'static>,
}

impl Client {
    /// Runs `initialize` and `session/new` over `stream`.
    pub async fn connect(stream: DuplexStream) -> Result<Client, String> {
        let mut client = alloc::as_client(|| Client {
            stream,
            framer: Framer::with_limit(MAX_LINE),
            block: vec![0; READ_BLOCK].into_boxed_slice(),
            pending: (0, 0),
            line: String::with_capacity(256),
            next_id: 0,
            session_id: String::new(),
            chunk_tag: Finder::new(r#""sessionUpdate":"agent_message_chunk""#),
        });
        let id = client
            .send(
                "initialize",
                r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}"#,
            )
            .await?;
        client.read_until_answer(id, None).await?;
        let id = client
            .send("session/new", r#"{"cwd":"/home/user/p","mcpServers":[]}"#)
            .await?;
        let answer = client.read_until_answer(id, None).await?;
        let answer: serde_json::Value = serde_json::from_str(&answer).map_err(|e| e.to_string())?;
        let Some(session_id) = answer.get("sessionId").and_then(|s| s.as_str()) else {
            return Err(format!(
                "session/new answered without a sessionId: {answer}"
            ));
        };
        client.session_id = session_id.to_owned();
        Ok(client)
    }

    /// Sends a prompt and reads until its `end_turn` answer, counting the chunks.
    pub async fn prompt(&mut self, text: &str) -> Result<Turn, String> {
        let start = Instant::now();
        let id = self.send_prompt(text).await?;
        self.finish_prompt(id, start).await
    }

    /// Sends `session/prompt` with one text block (no JSON escapes needed) and returns its id.
    pub async fn send_prompt(&mut self, text: &str) -> Result<i64, String> {
        debug_assert!(!text.contains(['"', '\\']) && text.chars().all(|c| c >= ' '));
        self.next_id += 1;
        let id = self.next_id;
        alloc::as_client(|| {
            self.line.clear();
            write!(
                self.line,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{}","prompt":[{{"type":"text","text":"{text}"}}]}}}}"#,
                self.session_id
            )
            .expect("a String takes every write");
            self.line.push('\n');
        });
        self.write_line().await?;
        Ok(id)
    }

    /// Reads the rest of a prompt sent with [`Client::send_prompt`] at `start`.
    pub async fn finish_prompt(&mut self, id: i64, start: Instant) -> Result<Turn, String> {
        let mut chunks = 0;
        let answer = self.read_until_answer(id, Some(&mut chunks)).await?;
        let elapsed = start.elapsed();
        if !answer.contains(r#""stopReason":"end_turn""#) {
            return Err(format!("the prompt ended with {answer}, not end_turn"));
        }
        Ok(Turn { chunks, elapsed })
    }

    /// Closes the client's end: the agent sees EOF.
    pub async fn close(mut self) {
        let _ = self.stream.shutdown().await;
    }

    async fn send(&mut self, method: &str, params: &str) -> Result<i64, String> {
        self.next_id += 1;
        let id = self.next_id;
        alloc::as_client(|| {
            self.line.clear();
            write!(
                self.line,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
            )
            .expect("a String takes every write");
            self.line.push('\n');
        });
        self.write_line().await?;
        Ok(id)
    }

    async fn write_line(&mut self) -> Result<(), String> {
        self.stream
            .write_all(self.line.as_bytes())
            .await
            .map_err(|e| format!("writing to the agent: {e}"))
    }

    /// Reads lines until the answer to `id` and returns its `result` text. Notifications are
    /// allowed only when `chunks` counts them, and each must be an `agent_message_chunk`
    /// `session/update`; anything else (a request, an error answer, another id) is an error.
    async fn read_until_answer(
        &mut self,
        id: i64,
        mut chunks: Option<&mut u64>,
    ) -> Result<String, String> {
        loop {
            let done = alloc::as_client(|| self.take_lines(id, chunks.as_deref_mut()))?;
            if let Some(answer) = done {
                return Ok(answer);
            }
            let read = self
                .stream
                .read(&mut self.block)
                .await
                .map_err(|e| format!("reading from the agent: {e}"))?;
            if read == 0 {
                return Err(format!(
                    "the agent closed its end before answering request {id}"
                ));
            }
            self.pending = (0, read);
        }
    }

    /// Frames and scans everything read so far; `Some(result)` once the answer to `id` came.
    fn take_lines(
        &mut self,
        id: i64,
        mut chunks: Option<&mut u64>,
    ) -> Result<Option<String>, String> {
        loop {
            while let Some(line) = self.framer.next_line() {
                let line = line.map_err(|e| format!("framing: {e}"))?;
                let message = envelope::scan(line)
                    .map_err(|e| format!("the agent sent an invalid line ({e}): {line}"))?;
                match message {
                    Message::Notification(notification) => {
                        let is_chunk = notification.method.as_plain() == Some("session/update")
                            && notification
                                .params
                                .is_some_and(|p| self.chunk_tag.find(p.get().as_bytes()).is_some());
                        match chunks.as_deref_mut() {
                            Some(count) if is_chunk => *count += 1,
                            _ => return Err(format!("unexpected notification: {line}")),
                        }
                    }
                    Message::Response(response) if response.id.as_i64() == Some(id) => {
                        return match response.outcome {
                            Outcome::Result(result) => Ok(Some(result.get().to_owned())),
                            _ => Err(format!("request {id} failed: {line}")),
                        };
                    }
                    _ => return Err(format!("unexpected message while awaiting {id}: {line}")),
                }
            }
            let (from, to) = self.pending;
            if from == to {
                return Ok(None);
            }
            self.pending.0 += self.framer.feed(&self.block[from..to]);
        }
    }
}
