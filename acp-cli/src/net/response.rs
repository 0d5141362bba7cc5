//! Reading an HTTP/1.1 response, sans-IO: its head (status and headers, parsed by httparse)
//! and its body framing (`Transfer-Encoding: chunked`, `Content-Length`, or until the server
//! closes). The transport feeds bytes in; these types say what they mean.
//!
//! Everything here reads the server's bytes, so every size is bounded and every malformed
//! input is an error with a message, never a panic.

use core::time::Duration;

/// The most bytes a response head may take.
pub(crate) const HEAD_LIMIT: usize = 64 << 10;

/// The most headers a response head may have.
const MAX_HEADERS: usize = 64;

/// The most bytes of a chunk-size line or trailer line.
const LINE_LIMIT: usize = 4096;

/// A response's status line and the headers the client reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResponseHead {
    /// The status code.
    pub status: u16,
    /// The reason phrase (may be empty).
    pub reason: String,
    /// Every header, names lower-cased, values as text (lossy UTF-8).
    pub headers: Vec<(String, String)>,
}

impl ResponseHead {
    /// The first value of a header (`name` lower-case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// `Retry-After` in seconds (the HTTP-date form is not read: the caller backs off).
    pub(crate) fn retry_after(&self) -> Option<Duration> {
        self.header("retry-after")?
            .trim()
            .parse::<u64>()
            .ok()
            .map(Duration::from_secs)
    }

    /// How the body is delimited.
    pub(crate) fn body_decoder(&self) -> Result<BodyDecoder, String> {
        if let Some(encoding) = self.header("transfer-encoding") {
            let last = encoding.rsplit(',').next().unwrap_or("").trim();
            return if last.eq_ignore_ascii_case("chunked") {
                Ok(BodyDecoder::Chunked(ChunkedDecoder::default()))
            } else {
                Ok(BodyDecoder::UntilClose)
            };
        }
        match self.header("content-length") {
            Some(length) => length
                .trim()
                .parse::<u64>()
                .map(BodyDecoder::Length)
                .map_err(|_| format!("the response has an invalid Content-Length '{length}'")),
            None => Ok(BodyDecoder::UntilClose),
        }
    }
}

/// Parses a response head from the start of `bytes`: the head and how many bytes it took,
/// or `None` when more bytes are needed. Informational (1xx) heads are skipped.
pub(crate) fn parse_head(bytes: &[u8]) -> Result<Option<(ResponseHead, usize)>, String> {
    let mut offset = 0;
    loop {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let used = match response.parse(&bytes[offset..]) {
            Ok(httparse::Status::Complete(used)) => used,
            Ok(httparse::Status::Partial) => {
                return if bytes.len() > HEAD_LIMIT {
                    Err(format!(
                        "the response head is larger than {HEAD_LIMIT} bytes"
                    ))
                } else {
                    Ok(None)
                };
            }
            Err(error) => return Err(format!("the response is not HTTP/1.1 ({error})")),
        };
        let status = response.code.unwrap_or(0);
        offset += used;
        if (100..200).contains(&status) && status != 101 {
            continue;
        }
        let head = ResponseHead {
            status,
            reason: response.reason.unwrap_or("").to_owned(),
            headers: response
                .headers
                .iter()
                .map(|header| {
                    (
                        header.name.to_ascii_lowercase(),
                        String::from_utf8_lossy(header.value).into_owned(),
                    )
                })
                .collect(),
        };
        return Ok(Some((head, offset)));
    }
}

/// How a body ends, and the state of reading it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BodyDecoder {
    /// `Content-Length`: this many bytes are still to come.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked(ChunkedDecoder),
    /// No length: the body ends when the server closes.
    UntilClose,
}

impl BodyDecoder {
    /// Decodes `input`, appending body bytes to `out`. Returns whether the body is complete
    /// (bytes after its end are ignored).
    pub(crate) fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<bool, String> {
        match self {
            Self::Length(remaining) => {
                let take = input
                    .len()
                    .min(usize::try_from(*remaining).unwrap_or(usize::MAX));
                out.extend_from_slice(&input[..take]);
                *remaining -= take as u64;
                Ok(*remaining == 0)
            }
            Self::Chunked(decoder) => decoder.decode(input, out),
            Self::UntilClose => {
                out.extend_from_slice(input);
                Ok(false)
            }
        }
    }

    /// Whether the server closing now ends the body properly.
    pub(crate) fn complete_at_close(&self) -> bool {
        match self {
            Self::Length(remaining) => *remaining == 0,
            Self::Chunked(decoder) => decoder.is_done(),
            Self::UntilClose => true,
        }
    }
}

/// Where a chunked body is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum ChunkedState {
    /// Reading a chunk-size line (hex digits, then an optional `;extension`).
    #[default]
    Size,
    /// Reading chunk data: this many bytes left.
    Data(u64),
    /// Expecting the `\r\n` after chunk data.
    DataEnd,
    /// Reading trailer lines after the last (zero) chunk, until an empty one.
    Trailers,
    /// The body is complete.
    Done,
}

/// The `Transfer-Encoding: chunked` decoder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkedDecoder {
    /// Where it is.
    state: ChunkedState,
    /// The line being read (size or trailer), without its line end.
    line: Vec<u8>,
}

impl ChunkedDecoder {
    /// Whether the last chunk and the trailers were read.
    pub(crate) fn is_done(&self) -> bool {
        self.state == ChunkedState::Done
    }

    /// Decodes `input`, appending chunk data to `out`. Returns whether the body is complete.
    pub fn decode(&mut self, mut input: &[u8], out: &mut Vec<u8>) -> Result<bool, String> {
        while !input.is_empty() {
            match self.state {
                ChunkedState::Done => break,
                ChunkedState::Data(remaining) => {
                    let take = input
                        .len()
                        .min(usize::try_from(remaining).unwrap_or(usize::MAX));
                    out.extend_from_slice(&input[..take]);
                    input = &input[take..];
                    self.state = match remaining - take as u64 {
                        0 => ChunkedState::DataEnd,
                        left => ChunkedState::Data(left),
                    };
                }
                ChunkedState::Size | ChunkedState::DataEnd | ChunkedState::Trailers => {
                    let Some(end) = memchr::memchr(b'\n', input) else {
                        self.take_line_part(input)?;
                        break;
                    };
                    self.take_line_part(&input[..end])?;
                    input = &input[end + 1..];
                    let mut line = core::mem::take(&mut self.line);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    self.end_line(&line)?;
                }
            }
        }
        Ok(self.is_done())
    }

    /// Keeps part of a line, within [`LINE_LIMIT`].
    fn take_line_part(&mut self, part: &[u8]) -> Result<(), String> {
        if self.line.len() + part.len() > LINE_LIMIT {
            return Err(format!(
                "a chunked-encoding line is longer than {LINE_LIMIT} bytes"
            ));
        }
        self.line.extend_from_slice(part);
        Ok(())
    }

    /// Handles one complete line in the current state.
    fn end_line(&mut self, line: &[u8]) -> Result<(), String> {
        self.state = match self.state {
            ChunkedState::Size => {
                let digits = line
                    .split(|byte| *byte == b';')
                    .next()
                    .unwrap_or_default()
                    .trim_ascii();
                let size = core::str::from_utf8(digits)
                    .ok()
                    .filter(|text| !text.is_empty() && text.len() <= 16)
                    .and_then(|text| u64::from_str_radix(text, 16).ok())
                    .ok_or_else(|| {
                        format!(
                            "a chunk size is not hexadecimal: '{}'",
                            String::from_utf8_lossy(&line[..line.len().min(40)])
                        )
                    })?;
                if size == 0 {
                    ChunkedState::Trailers
                } else {
                    ChunkedState::Data(size)
                }
            }
            ChunkedState::DataEnd => {
                if !line.is_empty() {
                    return Err("a chunk is longer than its size says".to_owned());
                }
                ChunkedState::Size
            }
            ChunkedState::Trailers if line.is_empty() => ChunkedState::Done,
            ChunkedState::Trailers => ChunkedState::Trailers,
            ChunkedState::Data(_) | ChunkedState::Done => unreachable!("not a line state"),
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use quickcheck::{QuickCheck, TestResult};

    use super::*;

    #[test]
    fn a_head_is_parsed_with_lower_cased_headers() {
        let bytes = b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Type: application/json\r\n\r\n{}";
        let (head, used) = parse_head(bytes).unwrap().unwrap();
        assert_eq!(head.status, 429);
        assert_eq!(head.reason, "Too Many Requests");
        assert_eq!(head.header("content-type"), Some("application/json"));
        assert_eq!(head.retry_after(), Some(Duration::from_secs(7)));
        assert_eq!(&bytes[used..], b"{}");
    }

    #[test]
    fn a_partial_head_asks_for_more_and_1xx_heads_are_skipped() {
        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\nContent-"), Ok(None));
        let (head, _) = parse_head(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(head.status, 200);
    }

    #[test]
    fn a_bad_or_huge_head_is_an_error() {
        assert_eq!(
            parse_head(b"SSH-2.0-OpenSSH\r\n\r\n"),
            Err("the response is not HTTP/1.1 (invalid HTTP version)".to_owned())
        );
        let mut huge = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        huge.resize(HEAD_LIMIT + 10, b'a');
        assert_eq!(
            parse_head(&huge),
            Err(format!(
                "the response head is larger than {HEAD_LIMIT} bytes"
            ))
        );
    }

    #[test]
    fn retry_after_in_http_date_form_is_not_read() {
        let (head, _) =
            parse_head(b"HTTP/1.1 503 x\r\nRetry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n\r\n")
                .unwrap()
                .unwrap();
        assert_eq!(head.retry_after(), None);
    }

    #[test]
    fn framing_follows_transfer_encoding_then_content_length() {
        let decoder = |head: &[u8]| parse_head(head).unwrap().unwrap().0.body_decoder();
        assert_eq!(
            decoder(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 5\r\n\r\n"
            ),
            Ok(BodyDecoder::Chunked(ChunkedDecoder::default()))
        );
        assert_eq!(
            decoder(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"),
            Ok(BodyDecoder::Length(5))
        );
        assert_eq!(
            decoder(b"HTTP/1.1 200 OK\r\n\r\n"),
            Ok(BodyDecoder::UntilClose)
        );
        assert_eq!(
            decoder(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
            Err("the response has an invalid Content-Length '-1'".to_owned())
        );
    }

    #[test]
    fn content_length_stops_at_the_length() {
        let mut decoder = BodyDecoder::Length(4);
        let mut out = Vec::new();
        assert_eq!(decoder.decode(b"ab", &mut out), Ok(false));
        assert!(!decoder.complete_at_close());
        assert_eq!(decoder.decode(b"cdEXTRA", &mut out), Ok(true));
        assert_eq!(out, b"abcd");
    }

    #[test]
    fn chunked_bodies_decode_with_extensions_and_trailers() {
        let mut decoder = ChunkedDecoder::default();
        let mut out = Vec::new();
        let body = b"5;ext=1\r\nhello\r\n1\nX\n0\r\nTrailer: t\r\n\r\nafter";
        assert_eq!(decoder.decode(body, &mut out), Ok(true));
        assert_eq!(out, b"helloX");
    }

    #[test]
    fn chunked_errors_say_what_is_wrong() {
        let cases: [(&[u8], &str); 3] = [
            (b"zz\r\n", "a chunk size is not hexadecimal: 'zz'"),
            (b"2\r\nabc\r\n", "a chunk is longer than its size says"),
            (
                b"11111111111111111\r\n",
                "a chunk size is not hexadecimal: '11111111111111111'",
            ),
        ];
        for (body, message) in cases {
            let mut decoder = ChunkedDecoder::default();
            assert_eq!(
                decoder.decode(body, &mut Vec::new()),
                Err(message.to_owned())
            );
        }
        let mut decoder = ChunkedDecoder::default();
        assert_eq!(
            decoder.decode(&[b'1'; LINE_LIMIT + 1], &mut Vec::new()),
            Err(format!(
                "a chunked-encoding line is longer than {LINE_LIMIT} bytes"
            ))
        );
    }

    #[test]
    fn an_unfinished_chunked_body_is_not_complete_at_close() {
        let mut decoder = BodyDecoder::Chunked(ChunkedDecoder::default());
        decoder.decode(b"3\r\nab", &mut Vec::new()).unwrap();
        assert!(!decoder.complete_at_close());
    }

    /// A chunked encoding of `pieces`, then the result of decoding it split at `cuts`.
    fn encode(pieces: &[Vec<u8>]) -> Vec<u8> {
        let mut body = Vec::new();
        for piece in pieces.iter().filter(|p| !p.is_empty()) {
            body.extend_from_slice(format!("{:X}\r\n", piece.len()).as_bytes());
            body.extend_from_slice(piece);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(b"0\r\n\r\n");
        body
    }

    #[test]
    fn chunked_decoding_is_the_same_for_any_split() {
        fn property(pieces: Vec<Vec<u8>>, cuts: Vec<usize>) -> TestResult {
            let body = encode(&pieces);
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
            cuts.push(body.len());
            cuts.sort_unstable();
            let mut decoder = ChunkedDecoder::default();
            let mut out = Vec::new();
            let mut start = 0;
            let mut done = false;
            for cut in cuts {
                done = decoder.decode(&body[start..cut], &mut out).unwrap();
                start = cut;
            }
            TestResult::from_bool(done && out == pieces.concat())
        }
        QuickCheck::new()
            .tests(1000)
            .quickcheck(property as fn(Vec<Vec<u8>>, Vec<usize>) -> TestResult);
    }

    #[test]
    fn chunked_decoding_of_random_bytes_never_panics() {
        fn property(bytes: Vec<u8>) -> bool {
            let mut decoder = ChunkedDecoder::default();
            let _ = decoder.decode(&bytes, &mut Vec::new());
            true
        }
        QuickCheck::new()
            .tests(1000)
            .quickcheck(property as fn(Vec<u8>) -> bool);
    }
}
