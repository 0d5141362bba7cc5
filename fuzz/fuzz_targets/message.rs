//! `Framer::feed_message` over arbitrary frames (R-MSG-1). The first byte picks the line
//! limit; then each frame is a length byte and that many bytes. Asserts what must hold for
//! any frame: an idle framer takes it whole, it becomes at most one line (or one report), the
//! line holds no newline and is no longer than the limit, and a frame without `\n`/`\r`
//! becomes exactly the line that feeding it with a newline gives.
#![no_main]

use acp_core::wire::frame::Framer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [limit, rest @ ..] = data else {
        return;
    };
    let mut rest: &[u8] = rest;
    let limit = usize::from(*limit).max(1) * 4;
    let mut framer = Framer::with_limit(limit);
    while let [len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        let (frame, next) = tail.split_at(len);
        rest = next;
        assert!(framer.feed_message(frame), "an idle framer takes a frame whole");
        let line = framer.next_line_bytes().map(|line| line.map(<[u8]>::to_vec));
        assert_eq!(framer.next_line_bytes(), None, "one frame, at most one line");
        assert_eq!(framer.buffered(), 0);
        if let Some(Ok(line)) = &line {
            assert!(!line.contains(&b'\n') && !line.contains(&b'\r'));
            assert!(line.len() <= limit);
            assert_eq!(line.len(), frame.len(), "one byte for one byte");
        }
        if !frame.iter().any(|&b| b == b'\n' || b == b'\r') {
            let mut fed = Framer::with_limit(limit);
            fed.feed(frame);
            fed.feed(b"\n");
            let expected = fed.next_line_bytes().map(|line| line.map(<[u8]>::to_vec));
            assert_eq!(line, expected);
        }
    }
});
