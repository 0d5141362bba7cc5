//! Properties of the NDJSON framer: however a stream is chunked and however the caller
//! interleaves feeding and draining, the framer hands out exactly what a plain reading of the
//! framing rules gives for the whole stream, never panics, and stays within its memory bound.

#[cfg(feature = "alloc")]
use acp_core::wire::frame::GROWABLE_MIN_CAPACITY;
use acp_core::wire::frame::{ByteStorage, FrameError, Framer};
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// One item the framer hands out, owned.
type Item = Result<String, FrameError>;

/// One item of the byte paths (`next_line_bytes`, `next_line_bytes_from`), owned.
type ByteItem = Result<Vec<u8>, FrameError>;

/// The framing rules written as plainly as possible, for the whole stream at once, UTF-8 not
/// checked.
fn expected_bytes(stream: &[u8], limit: usize) -> Vec<ByteItem> {
    let mut items = Vec::new();
    // The piece after the last newline is the final line (empty if the stream ends in one).
    for raw in stream.split(|&byte| byte == b'\n') {
        if raw.len() > limit {
            items.push(Err(FrameError::LineTooLong { limit }));
            continue;
        }
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r')) {
            continue;
        }
        items.push(Ok(line.to_vec()));
    }
    items
}

/// [`expected_bytes`] with every line checked as UTF-8, as `next_line` does.
fn expected(stream: &[u8], limit: usize) -> Vec<Item> {
    expected_bytes(stream, limit)
        .into_iter()
        .map(|item| {
            item.and_then(|line| {
                String::from_utf8(line).map_err(|error| FrameError::InvalidUtf8 {
                    valid_up_to: error.utf8_error().valid_up_to(),
                })
            })
        })
        .collect()
}

/// A byte stream rich in what the framer cares about: newlines, `\r`, whitespace, multi-byte
/// and broken UTF-8, and runs long enough to exceed small limits.
#[derive(Clone, Debug)]
struct Stream(Vec<u8>);

impl Arbitrary for Stream {
    fn arbitrary(g: &mut Gen) -> Self {
        const PIECES: &[&[u8]] = &[
            b"\n",
            b"\n",
            b"\n",
            b"\r\n",
            b"\r",
            b" ",
            b"\t",
            b"{",
            b"}",
            b"\"",
            b"a",
            b"b",
            b"xyz",
            "é".as_bytes(),
            "中".as_bytes(),
            "🙂".as_bytes(),
            b"\xff",
            b"\xc3",
            b"\xe2\x82",
            b"\x80",
        ];
        let pieces = below(g, 4 * g.size() + 1);
        let mut bytes = Vec::new();
        for _ in 0..pieces {
            if below(g, 12) == 0 {
                // A run that may cross a limit, with or without its newline.
                bytes.extend(std::iter::repeat_n(b'r', below(g, 160)));
            } else {
                bytes.extend_from_slice(g.choose(PIECES).expect("PIECES is not empty"));
            }
        }
        Stream(bytes)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(Stream))
    }
}

/// How a caller chunks its reads and how eagerly it drains.
#[derive(Clone, Debug)]
struct Caller {
    /// Read sizes, used in turn (each at least 1).
    reads: Vec<usize>,
    /// How many items to take between feeds, used in turn; 0 means drain fully.
    takes: Vec<usize>,
}

impl Arbitrary for Caller {
    fn arbitrary(g: &mut Gen) -> Self {
        let reads = (0..1 + below(g, 8)).map(|_| 1 + below(g, 90)).collect();
        let takes = (0..1 + below(g, 4)).map(|_| below(g, 3)).collect();
        Caller { reads, takes }
    }
}

fn below(g: &mut Gen, bound: usize) -> usize {
    usize::from(u16::arbitrary(g)) % bound.max(1)
}

/// Feeds `stream` the way `caller` does, checking the memory bound after every call, then
/// finishes and drains. Every loop is bounded by the stream length.
fn run<S: ByteStorage>(
    framer: &mut Framer<S>,
    stream: &[u8],
    caller: &Caller,
    bound: usize,
) -> Vec<Item> {
    let mut items = Vec::new();
    let mut reads = caller.reads.iter().cycle();
    let mut takes = caller.takes.iter().cycle();
    let mut rest = stream;
    let mut rounds = 0;
    while !rest.is_empty() {
        let size = (*reads.next().expect("cycle")).min(rest.len());
        let mut read = &rest[..size];
        rest = &rest[size..];
        while !read.is_empty() {
            rounds += 1;
            assert!(rounds <= 2 * stream.len() + 2, "no progress");
            let taken = framer.feed(read);
            read = &read[taken..];
            assert!(framer.buffered() <= framer.capacity());
            assert!(
                framer.capacity() <= bound,
                "{} > {bound}",
                framer.capacity()
            );
            let take = *takes.next().expect("cycle");
            // A short feed obliges the caller to take something; otherwise it may take less.
            let take = if take == 0 || !read.is_empty() {
                usize::MAX
            } else {
                take
            };
            for _ in 0..take {
                match framer.next_line() {
                    Some(item) => items.push(item.map(str::to_owned)),
                    None => break,
                }
            }
        }
    }
    framer.finish();
    while let Some(item) = framer.next_line() {
        items.push(item.map(str::to_owned));
    }
    assert_eq!(framer.buffered(), 0);
    items
}

fn check<S: ByteStorage>(
    make: impl Fn() -> Framer<S>,
    stream: &Stream,
    caller: &Caller,
    bound: usize,
) -> bool {
    let limit = make().max_line();
    let want = expected(&stream.0, limit);
    let whole = Caller {
        reads: vec![usize::MAX],
        takes: vec![0],
    };
    let at_once = run(&mut make(), &stream.0, &whole, bound);
    let chunked = run(&mut make(), &stream.0, caller, bound);
    let ok = at_once == want && chunked == want;
    if !ok {
        eprintln!("limit {limit}\nwant    {want:?}\nat once {at_once:?}\nchunked {chunked:?}");
    }
    ok
}

fn quickcheck<A: quickcheck::Testable>(property: A) {
    QuickCheck::new().tests(400).quickcheck(property);
}

#[test]
fn fixed_array_storage_matches_the_rules_however_chunked() {
    fn property(stream: Stream, caller: Caller, limit: u8) -> bool {
        // Limits around and above the storage size; above it the limit becomes 64.
        let limit = usize::from(limit % 80);
        check(|| Framer::new([0u8; 64], limit), &stream, &caller, 64)
    }
    quickcheck(property as fn(Stream, Caller, u8) -> bool);
}

#[test]
fn slice_storage_of_any_size_matches_the_rules_however_chunked() {
    fn property(stream: Stream, caller: Caller, size: u8, limit: u8) -> bool {
        let size = usize::from(size % 100);
        let limit = usize::from(limit);
        let mut backings = (vec![0u8; size], vec![0u8; size]);
        let (first, second) = (&mut backings.0, &mut backings.1);
        let limit_used = Framer::new(&mut first[..], limit).max_line();
        let want = expected(&stream.0, limit_used);
        let whole = Caller {
            reads: vec![usize::MAX],
            takes: vec![0],
        };
        let at_once = run(
            &mut Framer::new(&mut first[..], limit),
            &stream.0,
            &whole,
            size,
        );
        let chunked = run(
            &mut Framer::new(&mut second[..], limit),
            &stream.0,
            &caller,
            size,
        );
        at_once == want && chunked == want
    }
    quickcheck(property as fn(Stream, Caller, u8, u8) -> bool);
}

#[test]
fn inline_vec_storage_matches_the_rules_however_chunked() {
    fn property(stream: Stream, caller: Caller, limit: u8) -> bool {
        let limit = usize::from(limit % 64);
        check(
            || Framer::new(heapless::Vec::<u8, 48>::new(), limit),
            &stream,
            &caller,
            48,
        )
    }
    quickcheck(property as fn(Stream, Caller, u8) -> bool);
}

#[cfg(feature = "alloc")]
#[test]
fn growable_storage_matches_the_rules_however_chunked() {
    fn property(stream: Stream, caller: Caller, limit: u8) -> bool {
        let limit = usize::from(limit % 120);
        check(
            || Framer::with_limit(limit),
            &stream,
            &caller,
            limit.max(GROWABLE_MIN_CAPACITY),
        )
    }
    quickcheck(property as fn(Stream, Caller, u8) -> bool);
}

/// A stream of up to six lines longer than the growable floor, a third of them right at the
/// limit (one under, at, one over), a limit above the floor, and reads scaled up to cut them.
#[cfg(feature = "alloc")]
fn long_lines(lines: Vec<(u16, bool)>, caller: Caller, limit: u16) -> (Stream, Caller, usize) {
    let limit = GROWABLE_MIN_CAPACITY + usize::from(limit % 4096);
    let mut stream = Vec::new();
    for (length, newline) in lines.into_iter().take(6) {
        let length = match length % 3 {
            0 => limit - 1 + usize::from(length / 3 % 3),
            _ => GROWABLE_MIN_CAPACITY - 2048 + usize::from(length % 8192),
        };
        stream.extend(std::iter::repeat_n(b'L', length));
        if newline {
            stream.push(b'\n');
        }
    }
    let caller = Caller {
        reads: caller.reads.iter().map(|read| read * 97).collect(),
        takes: caller.takes,
    };
    (Stream(stream), caller, limit)
}

/// Lines longer than the growable floor, so that a `Vec` fills up, grows and finds oversized
/// lines while they stream in.
#[cfg(feature = "alloc")]
#[test]
fn growable_storage_with_long_lines_matches_the_rules() {
    fn property(lines: Vec<(u16, bool)>, caller: Caller, limit: u16) -> bool {
        let (stream, caller, limit) = long_lines(lines, caller, limit);
        check(|| Framer::with_limit(limit), &stream, &caller, limit)
    }
    QuickCheck::new()
        .tests(60)
        .quickcheck(property as fn(Vec<(u16, bool)>, Caller, u16) -> bool);
}

/// Random calls in any order: feeds of random pieces, `finish` in the middle of the stream,
/// single `next_line` calls. Nothing panics, memory stays bounded, a feed after a full drain
/// always takes at least one byte (the call loop cannot spin), and the items are those of the
/// stream with a newline wherever `finish` was called.
#[test]
fn arbitrary_call_sequences_match_the_rules() {
    fn property(ops: Vec<(u8, Stream)>, limit: u8) -> bool {
        let mut framer = Framer::new([0u8; 32], usize::from(limit % 40));
        let mut items = Vec::new();
        let mut stream = Vec::new();
        for (op, bytes) in ops {
            match op % 4 {
                0 => {
                    framer.finish();
                    stream.push(b'\n');
                }
                1 => {
                    if let Some(item) = framer.next_line() {
                        items.push(item.map(str::to_owned));
                    }
                }
                _ => {
                    stream.extend_from_slice(&bytes.0);
                    let mut input = &bytes.0[..];
                    while !input.is_empty() {
                        while let Some(item) = framer.next_line() {
                            items.push(item.map(str::to_owned));
                        }
                        let taken = framer.feed(input);
                        if taken == 0 {
                            return false;
                        }
                        input = &input[taken..];
                    }
                }
            }
            if framer.buffered() > 32 || framer.capacity() != 32 {
                return false;
            }
        }
        framer.finish();
        while let Some(item) = framer.next_line() {
            items.push(item.map(str::to_owned));
        }
        items == expected(&stream, framer.max_line())
    }
    quickcheck(property as fn(Vec<(u8, Stream)>, u8) -> bool);
}

/// Uniformly random bytes in random pieces never make the framer panic.
#[test]
fn arbitrary_bytes_never_panic() {
    fn property(reads: Vec<Vec<u8>>, limit: u8) -> bool {
        let mut framer = Framer::new([0u8; 16], usize::from(limit % 20));
        let mut count = 0;
        for read in &reads {
            let mut input = &read[..];
            while !input.is_empty() {
                let taken = framer.feed(input);
                input = &input[taken..];
                while framer.next_line().is_some() {
                    count += 1;
                }
            }
        }
        framer.finish();
        while framer.next_line().is_some() {
            count += 1;
        }
        count <= reads.iter().map(Vec::len).sum::<usize>() + 1
    }
    quickcheck(property as fn(Vec<Vec<u8>>, u8) -> bool);
}

// ----- next_line_bytes_from: lines straight from the caller's input -----

/// Reads `stream` in `caller`'s read sizes, taking every line of each read with
/// `next_line_bytes_from`, checking the memory bound after every call; then finishes and takes
/// the rest. Every loop is bounded by the stream length.
fn run_from<S: ByteStorage>(
    framer: &mut Framer<S>,
    stream: &[u8],
    caller: &Caller,
    bound: usize,
) -> Vec<ByteItem> {
    let mut items = Vec::new();
    let mut reads = caller.reads.iter().cycle();
    let mut rest = stream;
    let mut calls = 0;
    while !rest.is_empty() {
        let size = (*reads.next().expect("cycle")).min(rest.len());
        let mut read = &rest[..size];
        rest = &rest[size..];
        loop {
            calls += 1;
            assert!(calls <= 2 * stream.len() + 2, "no progress");
            let before = read.len();
            let item = framer
                .next_line_bytes_from(&mut read)
                .map(|item| item.map(<[u8]>::to_vec));
            assert!(framer.buffered() <= framer.capacity());
            assert!(
                framer.capacity() <= bound,
                "{} > {bound}",
                framer.capacity()
            );
            match item {
                Some(item) => items.push(item),
                None => {
                    assert!(read.is_empty(), "None leaves no input behind");
                    break;
                }
            }
            assert!(read.len() <= before);
        }
    }
    framer.finish();
    while let Some(item) = framer.next_line_bytes_from(&mut &[][..]) {
        items.push(item.map(<[u8]>::to_vec));
    }
    assert_eq!(framer.buffered(), 0);
    items
}

/// `feed` + `next_line_bytes` in the documented call loop, for comparison.
fn run_fed_bytes<S: ByteStorage>(
    framer: &mut Framer<S>,
    stream: &[u8],
    caller: &Caller,
) -> Vec<ByteItem> {
    let mut items = Vec::new();
    let mut reads = caller.reads.iter().cycle();
    let mut rest = stream;
    while !rest.is_empty() {
        let size = (*reads.next().expect("cycle")).min(rest.len());
        let mut read = &rest[..size];
        rest = &rest[size..];
        while !read.is_empty() {
            read = &read[framer.feed(read)..];
            while let Some(item) = framer.next_line_bytes() {
                items.push(item.map(<[u8]>::to_vec));
            }
        }
    }
    framer.finish();
    while let Some(item) = framer.next_line_bytes() {
        items.push(item.map(<[u8]>::to_vec));
    }
    items
}

/// Taking lines from the input, chunked as `caller` reads and in one read, gives what the
/// rules give and what feeding gives (chunked the same way).
fn check_from<S: ByteStorage>(
    make: impl Fn() -> Framer<S>,
    stream: &Stream,
    caller: &Caller,
    bound: usize,
) -> bool {
    let limit = make().max_line();
    let want = expected_bytes(&stream.0, limit);
    let whole = Caller {
        reads: vec![usize::MAX],
        takes: vec![0],
    };
    let at_once = run_from(&mut make(), &stream.0, &whole, bound);
    let chunked = run_from(&mut make(), &stream.0, caller, bound);
    let fed = run_fed_bytes(&mut make(), &stream.0, caller);
    let ok = at_once == want && chunked == want && fed == want;
    if !ok {
        eprintln!(
            "limit {limit}\nwant    {want:?}\nat once {at_once:?}\nchunked {chunked:?}\nfed     {fed:?}"
        );
    }
    ok
}

#[test]
fn taking_from_input_with_fixed_array_storage_matches_feeding() {
    fn property(stream: Stream, caller: Caller, limit: u8) -> bool {
        let limit = usize::from(limit % 80);
        check_from(|| Framer::new([0u8; 64], limit), &stream, &caller, 64)
    }
    quickcheck(property as fn(Stream, Caller, u8) -> bool);
}

#[test]
fn taking_from_input_with_inline_vec_storage_matches_feeding() {
    fn property(stream: Stream, caller: Caller, limit: u8) -> bool {
        let limit = usize::from(limit % 64);
        check_from(
            || Framer::new(heapless::Vec::<u8, 48>::new(), limit),
            &stream,
            &caller,
            48,
        )
    }
    quickcheck(property as fn(Stream, Caller, u8) -> bool);
}

#[cfg(feature = "alloc")]
#[test]
fn taking_from_input_with_growable_storage_matches_feeding() {
    fn property(stream: Stream, caller: Caller, limit: u8) -> bool {
        let limit = usize::from(limit % 120);
        check_from(
            || Framer::with_limit(limit),
            &stream,
            &caller,
            limit.max(GROWABLE_MIN_CAPACITY),
        )
    }
    quickcheck(property as fn(Stream, Caller, u8) -> bool);
}

/// Lines around and over a limit above the growable floor, in reads that cut them anywhere:
/// the storage grows only for the lines that cross a read, and the items match feeding.
#[cfg(feature = "alloc")]
#[test]
fn taking_long_lines_from_input_matches_feeding() {
    fn property(lines: Vec<(u16, bool)>, caller: Caller, limit: u16) -> bool {
        let (stream, caller, limit) = long_lines(lines, caller, limit);
        check_from(|| Framer::with_limit(limit), &stream, &caller, limit)
    }
    QuickCheck::new()
        .tests(60)
        .quickcheck(property as fn(Vec<(u16, bool)>, Caller, u16) -> bool);
}

/// Both APIs mixed in any order with `finish` anywhere: feeds of random pieces drained with
/// `next_line_bytes` or not at all, reads taken with `next_line_bytes_from`, single
/// `next_line_bytes` calls. The items are those of the stream with a newline wherever `finish`
/// was called, and memory stays bounded.
#[test]
fn both_apis_mixed_in_any_order_match_the_rules() {
    fn property(ops: Vec<(u8, Stream)>, limit: u8) -> bool {
        let mut framer = Framer::new([0u8; 32], usize::from(limit % 40));
        let mut items = Vec::new();
        let mut stream = Vec::new();
        for (op, bytes) in ops {
            match op % 5 {
                0 => {
                    framer.finish();
                    stream.push(b'\n');
                }
                1 => {
                    if let Some(item) = framer.next_line_bytes() {
                        items.push(item.map(<[u8]>::to_vec));
                    }
                }
                2 => {
                    // A feed that leaves what it takes in the storage, undrained.
                    stream.extend_from_slice(&bytes.0);
                    let mut input = &bytes.0[..];
                    while !input.is_empty() {
                        let taken = framer.feed(input);
                        input = &input[taken..];
                        if !input.is_empty() {
                            while let Some(item) = framer.next_line_bytes() {
                                items.push(item.map(<[u8]>::to_vec));
                            }
                        }
                    }
                }
                _ => {
                    stream.extend_from_slice(&bytes.0);
                    let mut input = &bytes.0[..];
                    while let Some(item) = framer.next_line_bytes_from(&mut input) {
                        items.push(item.map(<[u8]>::to_vec));
                    }
                    if !input.is_empty() {
                        return false;
                    }
                }
            }
            if framer.buffered() > 32 || framer.capacity() != 32 {
                return false;
            }
        }
        framer.finish();
        while let Some(item) = framer.next_line_bytes_from(&mut &[][..]) {
            items.push(item.map(<[u8]>::to_vec));
        }
        items == expected_bytes(&stream, framer.max_line())
    }
    quickcheck(property as fn(Vec<(u8, Stream)>, u8) -> bool);
}

// ----- raw and truncating framers: the same splitting under other line rules -----

/// How a framer is set up: [`Framer::raw`], [`Framer::truncating`], both or neither.
#[derive(Clone, Copy, Debug)]
struct Mode {
    raw: bool,
    truncate: bool,
}

impl Arbitrary for Mode {
    fn arbitrary(g: &mut Gen) -> Self {
        Mode {
            raw: bool::arbitrary(g),
            truncate: bool::arbitrary(g),
        }
    }
}

impl Mode {
    fn apply<S: ByteStorage>(self, framer: Framer<S>) -> Framer<S> {
        let framer = if self.raw { framer.raw() } else { framer };
        if self.truncate {
            framer.truncating()
        } else {
            framer
        }
    }
}

/// The rules under `mode`, as plainly as possible: an oversized line is cut to the limit when
/// truncating (reported otherwise), and a raw framer hands out every line as written. The
/// empty piece after a final newline is no line.
fn expected_in(stream: &[u8], limit: usize, mode: Mode) -> Vec<ByteItem> {
    let mut pieces: Vec<&[u8]> = stream.split(|&byte| byte == b'\n').collect();
    if pieces.last().is_some_and(|piece| piece.is_empty()) {
        pieces.pop();
    }
    let mut items = Vec::new();
    for mut raw in pieces {
        if raw.len() > limit {
            if !mode.truncate {
                items.push(Err(FrameError::LineTooLong { limit }));
                continue;
            }
            raw = &raw[..limit];
        }
        if mode.raw {
            items.push(Ok(raw.to_vec()));
            continue;
        }
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if !line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r')) {
            items.push(Ok(line.to_vec()));
        }
    }
    items
}

/// Both call loops, chunked as `caller` reads and in one read, give what the rules under
/// `mode` give.
fn check_in<S: ByteStorage>(
    make: impl Fn() -> Framer<S>,
    mode: Mode,
    stream: &Stream,
    caller: &Caller,
    bound: usize,
) -> bool {
    let make = || mode.apply(make());
    let limit = make().max_line();
    let want = expected_in(&stream.0, limit, mode);
    let whole = Caller {
        reads: vec![usize::MAX],
        takes: vec![0],
    };
    let at_once = run_from(&mut make(), &stream.0, &whole, bound);
    let chunked = run_from(&mut make(), &stream.0, caller, bound);
    let fed = run_fed_bytes(&mut make(), &stream.0, caller);
    let ok = at_once == want && chunked == want && fed == want;
    if !ok {
        eprintln!(
            "{mode:?} limit {limit}\nwant    {want:?}\nat once {at_once:?}\nchunked {chunked:?}\nfed     {fed:?}"
        );
    }
    ok
}

/// Raw and truncating framers split any chunking of a stream into the same lines, over every
/// kind of storage.
#[test]
fn raw_and_truncating_framers_match_their_rules_however_chunked() {
    fn property(stream: Stream, caller: Caller, mode: Mode, limit: u8) -> bool {
        let fixed = usize::from(limit % 80);
        let inline = usize::from(limit % 64);
        check_in(|| Framer::new([0u8; 64], fixed), mode, &stream, &caller, 64)
            && check_in(
                || Framer::new(heapless::Vec::<u8, 48>::new(), inline),
                mode,
                &stream,
                &caller,
                48,
            )
            && growable_check_in(mode, &stream, &caller, usize::from(limit % 120))
    }
    quickcheck(property as fn(Stream, Caller, Mode, u8) -> bool);
}

#[cfg(feature = "alloc")]
fn growable_check_in(mode: Mode, stream: &Stream, caller: &Caller, limit: usize) -> bool {
    let bound = limit.max(GROWABLE_MIN_CAPACITY);
    check_in(|| Framer::with_limit(limit), mode, stream, caller, bound)
}

#[cfg(not(feature = "alloc"))]
fn growable_check_in(_: Mode, _: &Stream, _: &Caller, _: usize) -> bool {
    true
}

/// Lines around and over a limit above the growable floor: a truncating `Vec` framer cuts the
/// ones that fill it while they stream in.
#[cfg(feature = "alloc")]
#[test]
fn raw_and_truncating_framers_with_long_lines_match_their_rules() {
    fn property(lines: Vec<(u16, bool)>, caller: Caller, mode: Mode, limit: u16) -> bool {
        let (stream, caller, limit) = long_lines(lines, caller, limit);
        check_in(|| Framer::with_limit(limit), mode, &stream, &caller, limit)
    }
    QuickCheck::new()
        .tests(60)
        .quickcheck(property as fn(Vec<(u16, bool)>, Caller, Mode, u16) -> bool);
}
