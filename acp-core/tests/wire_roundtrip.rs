//! Encode → frame → scan round trips: whatever the encoder writes, the framer and the envelope
//! scanner read back as the same message, with ids echoed exactly and strings decoded to what
//! was written. And no byte sequence makes the read side panic.
#![cfg(feature = "alloc")]

use acp_core::wire::encode::{write_error, write_notification, write_request, write_result};
use acp_core::wire::envelope::{self, Message, Outcome};
use acp_core::wire::frame::Framer;
use acp_core::wire::{ErrorCode, Id};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

/// Text that exercises every escape: controls, quotes, backslashes, non-ASCII, astral chars.
#[derive(Clone, Debug)]
struct Tricky(String);

impl Arbitrary for Tricky {
    fn arbitrary(g: &mut Gen) -> Self {
        const PIECES: &[&str] = &[
            "\"",
            "\\",
            "\n",
            "\r",
            "\t",
            "\u{8}",
            "\u{c}",
            "\u{0}",
            "\u{1f}",
            "\u{7f}",
            "/",
            "é",
            "中文",
            "🚀",
            "\u{2028}",
            "a",
            "session/update",
            " ",
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
        ];
        let len = usize::arbitrary(g) % 24;
        let text = (0..len)
            .map(|_| {
                if bool::arbitrary(g) {
                    (*g.choose(PIECES).expect("non-empty")).to_owned()
                } else {
                    char::arbitrary(g).to_string()
                }
            })
            .collect();
        Tricky(text)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(Tricky))
    }
}

/// Frames `bytes` in one feed and returns its single line.
fn single_line(bytes: &[u8]) -> String {
    let mut framer = Framer::with_limit(1 << 20);
    assert_eq!(framer.feed(bytes), bytes.len());
    let line = framer
        .next_line()
        .expect("one line")
        .expect("valid UTF-8")
        .to_owned();
    assert!(framer.next_line().is_none(), "exactly one line");
    line
}

#[test]
fn requests_round_trip_their_id_method_and_params() {
    fn prop(id: u64, method: Tricky, text: Tricky) -> TestResult {
        if method.0.is_empty() {
            return TestResult::discard(); // an empty method is invalid by rule
        }
        let mut out = Vec::new();
        let params = serde_json::json!({ "text": text.0 });
        write_request(&mut out, id, &method.0, Some(&params)).expect("vec sink");
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1, "one frame");
        let line = single_line(&out);
        let Ok(Message::Request(request)) = envelope::scan(&line) else {
            return TestResult::error(format!("not a request: {line}"));
        };
        let params: serde_json::Value =
            serde_json::from_str(request.params.expect("params").get()).expect("valid JSON");
        TestResult::from_bool(
            request.id.as_u64() == Some(id)
                && request.method.to_cow() == method.0
                && params["text"] == text.0,
        )
    }
    QuickCheck::new()
        .tests(2000)
        .quickcheck(prop as fn(u64, Tricky, Tricky) -> TestResult);
}

#[test]
fn notifications_round_trip_method_and_session_id() {
    fn prop(method: Tricky, session: Tricky) -> TestResult {
        if method.0.is_empty() {
            return TestResult::discard();
        }
        let mut out = Vec::new();
        let params = serde_json::json!({ "sessionId": session.0, "update": {} });
        write_notification(&mut out, &method.0, Some(&params)).expect("vec sink");
        let line = single_line(&out);
        let Ok(message @ Message::Notification(_)) = envelope::scan(&line) else {
            return TestResult::error(format!("not a notification: {line}"));
        };
        TestResult::from_bool(
            message.method().map(|m| m.to_cow().into_owned()) == Some(method.0)
                && message.session_id().map(|s| s.to_cow().into_owned()) == Some(session.0),
        )
    }
    QuickCheck::new()
        .tests(2000)
        .quickcheck(prop as fn(Tricky, Tricky) -> TestResult);
}

/// Every id the scanner accepts comes back out of the encoder byte for byte: a response to it
/// carries exactly the same id text.
#[test]
fn peer_ids_are_echoed_exactly_in_results_and_errors() {
    fn prop(string_id: Tricky, int_id: i64, message: Tricky, as_error: bool) -> bool {
        let escaped = serde_json::to_string(&string_id.0).expect("string");
        for id_text in [
            escaped,
            int_id.to_string(),
            "123456789012345678901234567890".into(),
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id_text},"method":"m"}}"#);
            let Ok(Message::Request(request)) = envelope::scan(&line) else {
                return false;
            };
            let mut out = Vec::new();
            if as_error {
                write_error(
                    &mut out,
                    request.id,
                    ErrorCode::INTERNAL_ERROR,
                    &message.0,
                    None::<&()>,
                )
                .expect("vec sink");
            } else {
                write_result(&mut out, request.id, &message.0).expect("vec sink");
            }
            let reply = single_line(&out);
            let Ok(Message::Response(response)) = envelope::scan(&reply) else {
                return false;
            };
            let echoed = match response.id {
                Id::Int(digits) => digits.to_owned(),
                Id::Str(s) => format!("\"{}\"", s.raw()),
                Id::Null => return false,
            };
            let text_back = match response.outcome {
                Outcome::Result(raw) => serde_json::from_str::<String>(raw.get()).ok(),
                Outcome::Error(error) => Some(error.message.to_cow().into_owned()),
                Outcome::Malformed(_) => None,
            };
            if echoed != id_text || text_back.as_deref() != Some(message.0.as_str()) {
                return false;
            }
        }
        true
    }
    QuickCheck::new()
        .tests(2000)
        .quickcheck(prop as fn(Tricky, i64, Tricky, bool) -> bool);
}

/// Arbitrary bytes, arbitrarily chunked, through framer and scanner: never a panic, and every
/// line gets a verdict that the encoder can turn into a reply when it is a rejection.
#[test]
fn arbitrary_bytes_never_panic_the_read_side() {
    fn prop(bytes: Vec<u8>, chunk: u8) -> bool {
        let mut framer = Framer::with_limit(64);
        let chunk = usize::from(chunk.max(1));
        for piece in bytes.chunks(chunk) {
            let mut input = piece;
            while !input.is_empty() {
                input = &input[framer.feed(input)..];
                while let Some(line) = framer.next_line() {
                    if let Ok(Err(rejection)) = line.map(envelope::scan) {
                        let mut out = Vec::new();
                        write_error(
                            &mut out,
                            rejection.id,
                            rejection.code,
                            &rejection,
                            None::<&()>,
                        )
                        .expect("vec sink");
                    }
                }
            }
        }
        framer.finish();
        while framer.next_line().is_some() {}
        true
    }
    QuickCheck::new()
        .tests(5000)
        .quickcheck(prop as fn(Vec<u8>, u8) -> bool);
}
