//! An incremental Server-Sent Events parser: fed the response body in whatever pieces the
//! network delivers, it yields the events those bytes complete.
//!
//! Sans-IO and small on purpose: the model server's bytes are untrusted, so every event is
//! bounded ([`SseParser::with_limit`]), a split anywhere (even inside a `\r\n` or a UTF-8
//! character) gives the same events, and a parser that failed stays failed. It follows the
//! WHATWG event-stream rules the client needs: `data:` lines (several join with `\n`), one
//! optional space after the colon, `event:`, comments (`:`), `\n`, `\r\n` or `\r` line ends,
//! a leading byte-order mark, and an event dispatched by a blank line. `id:` and `retry:` are
//! read and ignored (the client never reconnects). An unfinished event at the end of the
//! stream is dropped, as the standard says.

use core::fmt;

/// The default bound on one event (its data plus the line being read): 4 MiB.
pub(crate) const DEFAULT_EVENT_LIMIT: usize = 4 << 20;

/// The UTF-8 byte-order mark, skipped at the very start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, or empty (a plain "message").
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Why the byte stream is not a usable event stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseError {
    /// One event (or one line) grew past the limit.
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// An event's data is not UTF-8.
    NotUtf8,
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { limit } => {
                write!(f, "a server-sent event is larger than {limit} bytes")
            }
            Self::NotUtf8 => f.write_str("a server-sent event's data is not UTF-8"),
        }
    }
}

impl std::error::Error for SseError {}

/// The parser's state between two pieces of input.
#[derive(Debug)]
pub struct SseParser {
    /// The current line, when it started in an earlier piece.
    line: Vec<u8>,
    /// The data of the event being read.
    data: Vec<u8>,
    /// Whether a `data` field was seen for the event being read (its data may be empty).
    has_data: bool,
    /// The `event` field of the event being read.
    event: Vec<u8>,
    /// The last piece ended with `\r`: a `\n` starting the next piece belongs to it.
    skip_lf: bool,
    /// No line has been completed yet (a leading BOM is still possible).
    at_start: bool,
    /// The bound on `line` plus `data`.
    limit: usize,
    /// The error the parser stopped at; it repeats it for any later input.
    failed: Option<SseError>,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A parser bounded by [`DEFAULT_EVENT_LIMIT`].
    pub fn new() -> Self {
        Self::with_limit(DEFAULT_EVENT_LIMIT)
    }

    /// A parser that refuses any event (data plus current line) over `limit` bytes.
    pub(crate) fn with_limit(limit: usize) -> Self {
        Self {
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            event: Vec::new(),
            skip_lf: false,
            at_start: true,
            limit,
            failed: None,
        }
    }

    /// Feeds the next piece of the body, pushing every event it completes onto `out`. On an
    /// error, the events completed before it are on `out` and the parser is spent.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let result = loop {
            if self.skip_lf && !bytes.is_empty() {
                self.skip_lf = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                }
            }
            let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) else {
                break self.keep_partial(bytes);
            };
            self.skip_lf = bytes[end] == b'\r';
            let step = if self.line.is_empty() {
                self.end_line(&bytes[..end], out)
            } else {
                self.keep_partial(&bytes[..end]).and_then(|()| {
                    let line = core::mem::take(&mut self.line);
                    let result = self.end_line(&line, out);
                    self.line = line;
                    self.line.clear();
                    result
                })
            };
            if let Err(error) = step {
                break Err(error);
            }
            bytes = &bytes[end + 1..];
        };
        if let Err(error) = &result {
            self.failed = Some(error.clone());
        }
        result
    }

    /// Whether an event or line was started and not finished (at the end of the stream, it
    /// is dropped).
    #[cfg(test)]
    pub(crate) fn has_partial(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    /// Keeps the start of a line that the next piece finishes, within the limit.
    fn keep_partial(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + self.data.len() + bytes.len() > self.limit {
            return Err(SseError::TooLarge { limit: self.limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// Handles one complete line (without its line end).
    fn end_line(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        // The same bound as `keep_partial`, so a line gives the same verdict whether it came
        // in one piece or several.
        if self.data.len() + line.len() > self.limit {
            return Err(SseError::TooLarge { limit: self.limit });
        }
        if self.at_start {
            self.at_start = false;
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                let extra = usize::from(self.has_data) + value.len();
                if self.data.len() + extra > self.limit {
                    return Err(SseError::TooLarge { limit: self.limit });
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            _ => {}
        }
        Ok(())
    }

    /// A blank line: the event read so far is complete (if it has data).
    fn dispatch(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let had_data = core::mem::take(&mut self.has_data);
        let event = core::mem::take(&mut self.event);
        let data = core::mem::take(&mut self.data);
        if !had_data {
            return Ok(());
        }
        let data = String::from_utf8(data).map_err(|_| SseError::NotUtf8)?;
        let event = String::from_utf8(event).map_err(|_| SseError::NotUtf8)?;
        out.push(SseEvent { event, data });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use quickcheck::{Arbitrary, Gen, QuickCheck};

    use super::*;

    /// Everything `input` yields in one piece, then the error if any.
    fn parse_whole(input: &[u8], limit: usize) -> (Vec<SseEvent>, Option<SseError>) {
        let mut parser = SseParser::with_limit(limit);
        let mut out = Vec::new();
        let error = parser.feed(input, &mut out).err();
        (out, error)
    }

    /// The same, fed in pieces cut at `cuts` (byte offsets, any order, any value).
    fn parse_split(
        input: &[u8],
        cuts: &[usize],
        limit: usize,
    ) -> (Vec<SseEvent>, Option<SseError>) {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        cuts.push(input.len());
        cuts.sort_unstable();
        let mut parser = SseParser::with_limit(limit);
        let mut out = Vec::new();
        let mut start = 0;
        for cut in cuts {
            if let Err(error) = parser.feed(&input[start..cut], &mut out) {
                return (out, Some(error));
            }
            start = cut;
        }
        (out, None)
    }

    fn data(text: &str) -> SseEvent {
        SseEvent {
            event: String::new(),
            data: text.to_owned(),
        }
    }

    #[test]
    fn data_lines_join_with_newlines_and_blank_lines_dispatch() {
        let (events, error) = parse_whole(b"data: a\ndata:b\ndata:  c\n\ndata: two\n\n", 1024);
        assert_eq!(error, None);
        assert_eq!(events, vec![data("a\nb\n c"), data("two")]);
    }

    #[test]
    fn crlf_and_lone_cr_end_lines() {
        let (events, _) = parse_whole(b"data: one\r\n\r\ndata: two\r\rdata: three\n\n", 1024);
        assert_eq!(events, vec![data("one"), data("two"), data("three")]);
    }

    #[test]
    fn a_crlf_split_across_pieces_is_one_line_end() {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        parser.feed(b"data: x\r", &mut out).unwrap();
        parser.feed(b"\ndata: y\r", &mut out).unwrap();
        parser.feed(b"\n\r", &mut out).unwrap();
        parser.feed(b"\n", &mut out).unwrap();
        assert_eq!(out, vec![data("x\ny")]);
    }

    #[test]
    fn comments_ids_retries_and_unknown_fields_are_ignored() {
        let (events, _) = parse_whole(
            b": keep-alive\n\nid: 7\nretry: 10\nfoo: bar\ndata: x\n\n: OPENROUTER PROCESSING\n\n",
            1024,
        );
        assert_eq!(events, vec![data("x")]);
    }

    #[test]
    fn event_names_are_kept_and_reset_after_each_event() {
        let (events, _) = parse_whole(b"event: error\ndata: {}\n\ndata: next\n\n", 1024);
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: "error".to_owned(),
                    data: "{}".to_owned()
                },
                data("next")
            ]
        );
    }

    #[test]
    fn an_empty_data_field_dispatches_an_empty_event_but_no_data_dispatches_nothing() {
        let (events, _) = parse_whole(b"data\n\nevent: x\n\n\n\ndata:\n\n", 1024);
        assert_eq!(events, vec![data(""), data("")]);
    }

    #[test]
    fn a_leading_bom_is_skipped_once() {
        let (events, _) = parse_whole(b"\xEF\xBB\xBFdata: x\n\n\xEF\xBB\xBFdata: y\n\n", 1024);
        assert_eq!(events, vec![data("x")]);
    }

    #[test]
    fn done_and_unfinished_events() {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        parser
            .feed(b"data: [DONE]\n\ndata: half", &mut out)
            .unwrap();
        assert_eq!(out, vec![data("[DONE]")]);
        assert!(parser.has_partial());
    }

    #[test]
    fn an_event_over_the_limit_is_refused_and_the_parser_stays_failed() {
        let mut parser = SseParser::with_limit(16);
        let mut out = Vec::new();
        parser.feed(b"data: 1234\n\n", &mut out).unwrap();
        let error = parser
            .feed(b"data: 1234567\ndata: 89012", &mut out)
            .unwrap_err();
        assert_eq!(error, SseError::TooLarge { limit: 16 });
        assert_eq!(
            error.to_string(),
            "a server-sent event is larger than 16 bytes"
        );
        assert_eq!(
            parser.feed(b"\n\ndata: x\n\n", &mut out),
            Err(SseError::TooLarge { limit: 16 })
        );
        assert_eq!(out, vec![data("1234")]);
    }

    #[test]
    fn an_endless_line_is_refused_without_holding_it() {
        let mut parser = SseParser::with_limit(64);
        let mut out = Vec::new();
        let mut result = Ok(());
        for _ in 0..100 {
            result = parser.feed(b"data: xxxxxxxxxxxxxxxxxxx", &mut out);
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(SseError::TooLarge { limit: 64 }));
        assert!(parser.line.len() <= 64);
    }

    #[test]
    fn invalid_utf8_data_is_an_error() {
        let (events, error) = parse_whole(b"data: ok\n\ndata: \xFF\n\n", 1024);
        assert_eq!(events, vec![data("ok")]);
        assert_eq!(error, Some(SseError::NotUtf8));
        assert_eq!(
            SseError::NotUtf8.to_string(),
            "a server-sent event's data is not UTF-8"
        );
    }

    #[test]
    fn a_multibyte_character_split_across_pieces_survives() {
        let input = "data: h€llo\n\n".as_bytes();
        for cut in 0..=input.len() {
            assert_eq!(
                parse_split(input, &[cut], 1024).0,
                vec![data("h€llo")],
                "{cut}"
            );
        }
    }

    /// Input made of the tokens that matter to the grammar, so random cases hit real lines.
    #[derive(Clone, Debug)]
    struct SseBytes(Vec<u8>);

    impl Arbitrary for SseBytes {
        fn arbitrary(g: &mut Gen) -> Self {
            const TOKENS: &[&[u8]] = &[
                b"data:",
                b"data: ",
                b"event: ",
                b"id: 1",
                b"retry: 5",
                b":",
                b" ",
                b"\r",
                b"\n",
                b"\r\n",
                b"x",
                b"[DONE]",
                b"{\"a\":1}",
                "€".as_bytes(),
                b"\xEF\xBB\xBF",
                b"\xFF",
            ];
            let count = usize::arbitrary(g) % 64;
            let mut bytes = Vec::new();
            for _ in 0..count {
                bytes.extend_from_slice(g.choose(TOKENS).unwrap());
            }
            Self(bytes)
        }

        fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
            Box::new(self.0.shrink().map(Self))
        }
    }

    #[test]
    fn any_split_of_the_input_gives_the_same_events() {
        fn property(input: SseBytes, cuts: Vec<usize>, small: bool) -> bool {
            let limit = if small { 24 } else { 1 << 20 };
            parse_whole(&input.0, limit) == parse_split(&input.0, &cuts, limit)
        }
        QuickCheck::new()
            .tests(2000)
            .quickcheck(property as fn(SseBytes, Vec<usize>, bool) -> bool);
    }

    #[test]
    fn any_split_of_random_bytes_gives_the_same_events() {
        fn property(input: Vec<u8>, cuts: Vec<usize>) -> bool {
            parse_whole(&input, 64) == parse_split(&input, &cuts, 64)
        }
        QuickCheck::new()
            .tests(1000)
            .quickcheck(property as fn(Vec<u8>, Vec<usize>) -> bool);
    }

    #[test]
    fn byte_by_byte_feeding_matches_whole_feeding() {
        fn property(input: SseBytes) -> bool {
            let cuts: Vec<usize> = (0..input.0.len()).collect();
            parse_whole(&input.0, 1 << 20) == parse_split(&input.0, &cuts, 1 << 20)
        }
        QuickCheck::new()
            .tests(500)
            .quickcheck(property as fn(SseBytes) -> bool);
    }
}
