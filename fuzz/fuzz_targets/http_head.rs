//! The network server's readers over arbitrary bytes (R-NET-1, R-MSG-1): the HTTP/1.1 head
//! parser never panics, a complete head never claims more bytes than it was given and parses
//! the same from exactly its own bytes; a message becomes exactly one line, newline-free but
//! for its end, one byte for one byte.
#![no_main]

use acp_cli::serve::head;
use acp_cli::serve::link::message_line;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((parsed, len))) = head::parse(data) {
        assert!(len <= data.len());
        assert_eq!(head::parse(&data[..len]), Ok(Some((parsed, len))));
    }
    let line = message_line(data);
    assert_eq!(line.len(), data.len() + 1);
    assert_eq!(line.last(), Some(&b'\n'));
    assert!(!line[..data.len()].iter().any(|&b| b == b'\n' || b == b'\r'));
    if !data.iter().any(|&b| b == b'\n' || b == b'\r') {
        assert_eq!(&line[..data.len()], data);
    }
});
