//! Replays every `vectors/wire/` scenario against acp-core's wire layer: the framer, the
//! envelope scanner and the encoder, glued the way a connection glues them.
//!
//! Each vector is replayed whole, in 7-byte pieces and one byte at a time (the 20 MiB ones in
//! 64 KiB reads only), on every read path (text; the fused UTF-8-in-the-scan path, lines fed
//! into the framer; and the same with lines taken straight from each read, as the agent
//! connection reads): the outcome must depend neither on how the bytes arrive nor on the path.
#![cfg(feature = "std")] // files, hash maps and the std-only connection defaults

use acp_core::wire::Id;
use acp_core::wire::encode::write_error;
use acp_core::wire::envelope::{self, LineRejection, Message, Outcome};
use acp_core::wire::frame::{DEFAULT_MAX_LINE, Framer};
use acp_testkit::vectors::{Event, Harness, ResponseOutcome, Step, Vector, load_dir, replay};

/// Which read path a replay exercises: both must give the same replies and events.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// `Framer::next_line` (UTF-8 checked by the framer) then `envelope::scan`.
    Text,
    /// `Framer::next_line_bytes` then `envelope::scan_bytes` (UTF-8 checked inside the scan):
    /// what `conn::transport` uses for bytes fed to it.
    Fused,
    /// `Framer::next_line_bytes_from` (lines taken straight from each read) then
    /// `envelope::scan_bytes`: what `conn::transport` uses for lines taken from a read.
    FromRead,
}

/// The wire layer under test: lines out of the framer, each scanned, each rejection answered.
struct Wire {
    framer: Framer<Vec<u8>>,
    path: Path,
    outputs: Vec<Vec<u8>>,
    events: Vec<Event>,
}

impl Wire {
    fn new(vector: &Vector, path: Path) -> Self {
        Self {
            framer: Framer::with_limit(vector.config.max_line.unwrap_or(DEFAULT_MAX_LINE)),
            path,
            outputs: Vec::new(),
            events: Vec::new(),
        }
    }

    /// The next line's event, or the exact reply line its rejection gets (no newline). The
    /// `FromRead` path takes lines from `input`, the others only from the framer.
    fn next_verdict(&mut self, input: &mut &[u8]) -> Option<Result<Event, Vec<u8>>> {
        let verdict = match self.path {
            Path::Text => match self.framer.next_line()? {
                Ok(line) => envelope::scan(line).map(event),
                Err(error) => Err(LineRejection::from_frame_error(error)),
            },
            Path::Fused => match self.framer.next_line_bytes()? {
                Ok(line) => envelope::scan_bytes(line).map(event),
                Err(error) => Err(LineRejection::from_frame_error(error)),
            },
            Path::FromRead => match self.framer.next_line_bytes_from(input)? {
                Ok(line) => envelope::scan_bytes(line).map(event),
                Err(error) => Err(LineRejection::from_frame_error(error)),
            },
        };
        Some(verdict.map_err(|rejection| {
            let mut reply = Vec::new();
            write_error(
                &mut reply,
                rejection.id,
                rejection.code,
                &rejection,
                None::<&()>,
            )
            .expect("a Vec sink cannot fail");
            assert_eq!(reply.pop(), Some(b'\n'), "every line ends in a newline");
            reply
        }))
    }

    fn drain(&mut self, input: &mut &[u8]) {
        while let Some(verdict) = self.next_verdict(input) {
            match verdict {
                Ok(event) => self.events.push(event),
                Err(reply) => self.outputs.push(reply),
            }
        }
    }
}

/// The raw JSON text of an id, as the vectors write it.
fn raw_id(id: &Id<'_>) -> String {
    match id {
        Id::Int(digits) => (*digits).to_owned(),
        Id::Str(text) => format!("\"{}\"", text.raw()),
        Id::Null => "null".to_owned(),
    }
}

fn event(message: Message<'_>) -> Event {
    match message {
        Message::Request(request) => Event::Request {
            id: raw_id(&request.id),
            method: request.method.to_cow().into_owned(),
        },
        Message::Notification(notification) => Event::Notification {
            method: notification.method.to_cow().into_owned(),
        },
        Message::Response(response) => Event::Response {
            id: raw_id(&response.id),
            outcome: match response.outcome {
                Outcome::Result(_) => ResponseOutcome::Result,
                Outcome::Error(_) => ResponseOutcome::Error,
                Outcome::Malformed(_) => ResponseOutcome::Malformed,
            },
        },
    }
}

impl Harness for Wire {
    fn message(&mut self, message: &[u8]) -> Result<(), String> {
        // Nothing is held between steps: every line is drained after each.
        assert!(
            self.framer.feed_message(message),
            "an idle framer takes a message"
        );
        self.drain(&mut &[][..]);
        Ok(())
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        if let Path::FromRead = self.path {
            self.drain(&mut bytes);
            assert!(bytes.is_empty(), "every line of a read is taken");
            return;
        }
        // The documented loop: feed what fits, drain, repeat.
        while !bytes.is_empty() {
            bytes = &bytes[self.framer.feed(bytes)..];
            self.drain(&mut &[][..]);
        }
    }

    fn eof(&mut self) {
        self.framer.finish();
        self.drain(&mut &[][..]);
    }

    fn advance_to(&mut self, _now_ms: u64) {
        // The wire layer has no timers.
    }

    fn take_outputs(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.outputs)
    }

    fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }
}

/// Holds the wire layer to every rule its vectors' headers cite (R-FRAME-*, R-ENV-*, R-ID-*);
/// a failure names the vector's rules before its file and line.
#[test]
fn every_wire_vector_replays_on_every_read_path_however_the_bytes_are_chunked() {
    let dir = acp_testkit::vectors::vectors_dir().join("wire");
    let vectors = load_dir(&dir).unwrap_or_else(|error| panic!("{error}"));
    assert!(
        vectors.len() >= 20,
        "expected the wire vectors, found {}",
        vectors.len()
    );
    let mut failures = Vec::new();
    for vector in &vectors {
        let big = vector
            .steps
            .iter()
            .any(|step| matches!(step, Step::In(input) if input.len() > 1 << 20));
        let chunkings: &[usize] = if big { &[1 << 16] } else { &[usize::MAX, 7, 1] };
        for path in [Path::Text, Path::Fused, Path::FromRead] {
            for &chunk in chunkings {
                if let Err(failure) = replay(vector, &mut Wire::new(vector, path), chunk) {
                    failures.push(format!("[{path:?}, chunk {chunk}] {failure}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
