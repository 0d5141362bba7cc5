//! The fused UTF-8 check (`Framer::next_line_bytes` + `envelope::scan_bytes`) against the
//! checked path (`Framer::next_line` + `envelope::scan`): the same verdict, the same message
//! and the same rejection, on every line of the corpora, on those lines damaged, and on
//! random bytes.

use acp_core::wire::envelope::{self, LineRejection, Message};
use acp_core::wire::frame::Framer;
use acp_testkit::corpus;
use quickcheck::QuickCheck;

/// What the checked path makes of one line.
fn checked(line: &[u8]) -> Result<Message<'_>, LineRejection<'_>> {
    match std::str::from_utf8(line) {
        Ok(text) => envelope::scan(text),
        Err(error) => Err(LineRejection::from_frame_error(
            acp_core::wire::frame::FrameError::InvalidUtf8 {
                valid_up_to: error.valid_up_to(),
            },
        )),
    }
}

fn agree(line: &[u8]) {
    let want = checked(line);
    let got = envelope::scan_bytes(line);
    assert_eq!(got, want, "{:?}", String::from_utf8_lossy(line));
    if let (Err(got), Err(want)) = (got, want) {
        assert_eq!(got.to_string(), want.to_string());
    }
}

/// A small deterministic generator for the damage.
struct Damage(u64);

impl Damage {
    fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % below.max(1) as u64) as usize
    }
}

#[test]
fn every_corpus_line_gets_the_same_verdict() {
    let corpora = [
        corpus::mixed(4 << 20),
        corpus::small(1 << 20),
        corpus::mixed_with_seed(2 << 20, 7),
    ];
    let mut non_ascii = 0;
    for bytes in &corpora {
        for line in corpus::lines(bytes) {
            non_ascii += line.iter().filter(|&&b| b >= 0x80).count();
            agree(line);
            assert!(envelope::scan_bytes(line).is_ok());
        }
    }
    // The corpora exercise the inline check, not only the ASCII runs.
    assert!(non_ascii > 10_000, "{non_ascii}");
}

/// Corpus lines with one byte replaced by a byte of a UTF-8 sequence, or cut short: mostly
/// invalid UTF-8 at every kind of place, some still valid.
#[test]
fn damaged_corpus_lines_get_the_same_rejection() {
    let bytes = corpus::mixed(2 << 20);
    let mut damage = Damage(0x2545_f491_4f6c_dd1d);
    let replacements = [
        0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xf5, 0xff, b'"',
    ];
    let mut invalid = 0;
    for line in corpus::lines(&bytes) {
        for _ in 0..4 {
            let mut damaged = line.to_vec();
            // Near a non-ASCII byte when there is one, so sequences get broken.
            let at = match line.iter().position(|&b| b >= 0x80) {
                Some(near) if damage.next(2) == 0 => (near + damage.next(4)).min(line.len() - 1),
                _ => damage.next(line.len()),
            };
            damaged[at] = replacements[damage.next(replacements.len())];
            invalid += usize::from(std::str::from_utf8(&damaged).is_err());
            agree(&damaged);
            agree(&line[..damage.next(line.len())]);
        }
    }
    assert!(invalid > 1_000, "{invalid}");
}

#[test]
fn random_bytes_get_the_same_verdict() {
    fn property(head: Vec<u8>, tail: Vec<u8>) -> bool {
        let mut line = br#"{"jsonrpc":"2.0","method":"m","params":{"text":""#.to_vec();
        line.extend_from_slice(&head);
        line.extend_from_slice(br#"","#);
        line.extend_from_slice(&tail);
        line.extend_from_slice(br#""x":1}}"#);
        for candidate in [&line[..], &head, &tail] {
            agree(candidate);
        }
        true
    }
    QuickCheck::new()
        .tests(5_000)
        .quickcheck(property as fn(Vec<u8>, Vec<u8>) -> bool);
}

#[test]
fn the_rejection_text_is_the_framers() {
    let rejection = envelope::scan_bytes(b"{\"a\":\"\xc3\x28\"}").unwrap_err();
    assert_eq!(
        rejection.to_string(),
        "Parse error: invalid UTF-8 at byte 6"
    );
    assert_eq!(rejection.code.0, -32700);
    assert_eq!(rejection.id, acp_core::wire::Id::Null);
    // Not JSON before the bad byte: UTF-8 is still what is reported, as the framer does.
    let rejection = envelope::scan_bytes(b"nope \xff").unwrap_err();
    assert_eq!(
        rejection.to_string(),
        "Parse error: invalid UTF-8 at byte 5"
    );
}

/// `next_line_bytes` hands out the lines `next_line` does, the invalid ones as bytes, and
/// reports oversized lines the same way; so does `next_line_bytes_from` over the same reads.
#[test]
fn the_framer_hands_out_the_same_lines_as_bytes() {
    let mut input = corpus::mixed(1 << 20);
    input.extend_from_slice(b"{\"bad\":\"\xff\"}\r\n \t\r\n");
    input.extend_from_slice(&vec![b'x'; 5000]);
    input.extend_from_slice(b"\nlast\r");
    let collect = |bytes: bool| {
        let mut framer = Framer::with_limit(4096);
        let mut items: Vec<Result<Vec<u8>, String>> = Vec::new();
        let mut drain = |framer: &mut Framer<Vec<u8>>| loop {
            let item = if bytes {
                framer
                    .next_line_bytes()
                    .map(|line| line.map(<[u8]>::to_vec).map_err(|e| e.to_string()))
            } else {
                framer.next_line().map(|line| match line {
                    Ok(line) => Ok(line.as_bytes().to_vec()),
                    Err(acp_core::wire::frame::FrameError::InvalidUtf8 { .. }) => {
                        Ok(b"{\"bad\":\"\xff\"}".to_vec())
                    }
                    Err(e) => Err(e.to_string()),
                })
            };
            let Some(item) = item else { break };
            items.push(item);
        };
        for read in input.chunks(777) {
            let mut read = read;
            while !read.is_empty() {
                read = &read[framer.feed(read)..];
                drain(&mut framer);
            }
        }
        framer.finish();
        drain(&mut framer);
        items
    };
    let (lines, byte_lines) = (collect(false), collect(true));
    assert_eq!(lines, byte_lines);
    let mut framer = Framer::with_limit(4096);
    let mut from_reads = Vec::new();
    let mut take = |framer: &mut Framer<Vec<u8>>, mut read: &[u8]| {
        while let Some(line) = framer.next_line_bytes_from(&mut read) {
            from_reads.push(line.map(<[u8]>::to_vec).map_err(|e| e.to_string()));
        }
    };
    for read in input.chunks(777) {
        take(&mut framer, read);
    }
    framer.finish();
    take(&mut framer, &[]);
    assert_eq!(from_reads, byte_lines);
    assert!(lines.len() > 100);
    assert_eq!(
        byte_lines[byte_lines.len() - 3..],
        [
            Ok(b"{\"bad\":\"\xff\"}".to_vec()),
            Err("line exceeds the maximum length of 4096 bytes".to_string()),
            Ok(b"last".to_vec()),
        ]
    );
}
