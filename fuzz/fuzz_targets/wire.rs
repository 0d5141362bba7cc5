//! Framer + envelope scanner + encoder over arbitrary bytes. The first byte picks the read
//! size and the second the line limit, so chunk boundaries and oversized lines are explored
//! too. Asserts only what must hold for any input: no panic, every rejection encodes to exactly
//! one line, every accepted line's raw spans re-validate as JSON, and lines taken straight
//! from the reads (`next_line_bytes_from`) are exactly those fed and taken with
//! `next_line_bytes`.
#![no_main]

use acp_core::wire::encode::write_error;
use acp_core::wire::envelope::{self, Message, Outcome, LineRejection};
use acp_core::wire::frame::Framer;
use acp_core::wire::json::parse_value;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [chunk, limit, bytes @ ..] = data else {
        return;
    };
    let chunk = usize::from(*chunk).max(1);
    let limit = usize::from(*limit).max(1) * 16;
    let mut framer = Framer::with_limit(limit);
    let check = |line: Result<&str, _>| {
        let verdict = match line {
            Ok(line) => envelope::scan(line),
            Err(error) => Err(LineRejection::from_frame_error(error)),
        };
        match verdict {
            Ok(message) => {
                let raw = match &message {
                    Message::Request(r) => r.params,
                    Message::Notification(n) => n.params,
                    Message::Response(r) => match &r.outcome {
                        Outcome::Result(raw) => Some(*raw),
                        Outcome::Error(e) => e.data,
                        Outcome::Malformed(_) => None,
                    },
                };
                if let Some(raw) = raw {
                    assert!(parse_value(raw.get()).is_ok(), "a raw span re-validates");
                }
                let _ = message.session_id();
            }
            Err(rejection) => {
                let mut out = Vec::new();
                write_error(
                    &mut out,
                    rejection.id,
                    rejection.code,
                    &rejection,
                    None::<&()>,
                )
                .expect("a Vec sink cannot fail");
                assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
                assert_eq!(out.last(), Some(&b'\n'));
            }
        }
    };
    for piece in bytes.chunks(chunk) {
        let mut input = piece;
        while !input.is_empty() {
            input = &input[framer.feed(input)..];
            while let Some(line) = framer.next_line() {
                check(line);
            }
        }
    }
    framer.finish();
    while let Some(line) = framer.next_line() {
        check(line);
    }

    // The zero-copy read path against feeding, over the same reads and a small fixed storage.
    type Item = Result<Vec<u8>, acp_core::wire::frame::FrameError>;
    let mut fed: Vec<Item> = Vec::new();
    let mut framer = Framer::new([0u8; 4096], limit);
    for piece in bytes.chunks(chunk) {
        let mut input = piece;
        while !input.is_empty() {
            input = &input[framer.feed(input)..];
            while let Some(line) = framer.next_line_bytes() {
                fed.push(line.map(<[u8]>::to_vec));
            }
        }
    }
    framer.finish();
    while let Some(line) = framer.next_line_bytes() {
        fed.push(line.map(<[u8]>::to_vec));
    }
    let mut taken: Vec<Item> = Vec::new();
    let mut framer = Framer::new([0u8; 4096], limit);
    for piece in bytes.chunks(chunk) {
        let mut input = piece;
        while let Some(line) = framer.next_line_bytes_from(&mut input) {
            taken.push(line.map(<[u8]>::to_vec));
        }
        assert!(input.is_empty(), "every line of a read is taken");
    }
    framer.finish();
    while let Some(line) = framer.next_line_bytes_from(&mut &[][..]) {
        taken.push(line.map(<[u8]>::to_vec));
    }
    assert_eq!(taken, fed);
});
