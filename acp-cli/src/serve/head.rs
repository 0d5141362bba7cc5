//! HTTP/1.1 request heads in, response heads out: sans-IO, so the parser is property-tested
//! without a socket (R-NET-1).

/// Longest request head taken; longer is refused with 431 (R-NET-7).
pub const MAX_HEAD: usize = 64 * 1024;

/// Most header lines in one head.
const MAX_HEADERS: usize = 64;

/// A parsed request head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// `GET`, `POST`, …, as sent.
    pub method: String,
    /// The request target without its query.
    pub path: String,
    /// `1` for HTTP/1.1, `0` for HTTP/1.0.
    pub version: u8,
    /// Names lowercased, values as sent (invalid UTF-8 values are dropped).
    pub headers: Vec<(String, String)>,
}

/// Why a head was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// Longer than [`MAX_HEAD`] or more than the header lines allowed: 431.
    TooLarge,
    /// Not an HTTP/1.x request head: 400.
    Malformed,
}

impl Head {
    /// The first value of a header (`name` lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether a comma-separated header holds `token` (case-insensitive), as `Connection`,
    /// `Upgrade` and `Accept` list theirs.
    pub fn header_has(&self, name: &str, token: &str) -> bool {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .flat_map(|(_, v)| v.split(','))
            .any(|item| {
                let item = item.split(';').next().unwrap_or("").trim();
                item.eq_ignore_ascii_case(token)
            })
    }
}

/// Parses the head at the start of `buf`: `Ok(None)` while it is incomplete, else the head
/// and how many bytes it took (the body follows).
pub fn parse(buf: &[u8]) -> Result<Option<(Head, usize)>, HeadError> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut slots);
    match request.parse(buf) {
        Ok(httparse::Status::Complete(len)) => {
            let (Some(method), Some(target), Some(version)) =
                (request.method, request.path, request.version)
            else {
                return Err(HeadError::Malformed);
            };
            let path = target.split('?').next().unwrap_or("").to_owned();
            let headers = request
                .headers
                .iter()
                .filter_map(|h| {
                    let value = std::str::from_utf8(h.value).ok()?;
                    Some((h.name.to_ascii_lowercase(), value.trim().to_owned()))
                })
                .collect();
            Ok(Some((
                Head {
                    method: method.to_owned(),
                    path,
                    version,
                    headers,
                },
                len,
            )))
        }
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => Err(HeadError::TooLarge),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(httparse::Error::TooManyHeaders) => Err(HeadError::TooLarge),
        Err(_) => Err(HeadError::Malformed),
    }
}

/// A status line's reason phrase.
pub fn reason(status: u16) -> &'static str {
    match status {
        101 => "Switching Protocols",
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// A response head: status line, the headers given, and the blank line.
pub fn response_head(status: u16, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status)).into_bytes();
    for (name, value) in headers {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// A whole response with a body and its length.
pub fn response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let length = body.len().to_string();
    let mut all: Vec<(&str, &str)> = headers.to_vec();
    all.push(("Content-Length", &length));
    let mut out = response_head(status, &all);
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    /// R-NET-1: a complete head parses, with the body's offset; a prefix is incomplete.
    #[test]
    fn parses_a_head_and_its_prefixes() {
        let raw = b"POST /acp?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\r\n{}";
        let (head, len) = parse(raw).unwrap().unwrap();
        assert_eq!(head.method, "POST");
        assert_eq!(head.path, "/acp");
        assert_eq!(len, raw.len() - 2);
        assert!(head.header_has("accept", "text/event-stream"));
        assert_eq!(head.header("content-type"), Some("application/json"));
        for cut in 0..len {
            assert_eq!(parse(&raw[..cut]), Ok(None), "prefix of {cut} bytes");
        }
    }

    /// R-NET-7: a head that never ends is refused once past the limit.
    #[test]
    fn an_endless_head_is_too_large() {
        let mut raw = b"GET /acp HTTP/1.1\r\nX: ".to_vec();
        raw.resize(MAX_HEAD + 10, b'a');
        assert_eq!(parse(&raw), Err(HeadError::TooLarge));
    }

    quickcheck! {
        /// R-NET-1: arbitrary bytes never panic the parser; a parsed head never claims more
        /// bytes than it was given, and parsing the same bytes with anything appended gives
        /// the same head.
        fn arbitrary_bytes_never_panic(bytes: Vec<u8>, tail: Vec<u8>) -> bool {
            match parse(&bytes) {
                Ok(Some((head, len))) => {
                    let mut longer = bytes.clone();
                    longer.extend_from_slice(&tail);
                    len <= bytes.len() && parse(&longer) == Ok(Some((head, len)))
                }
                Ok(None) | Err(_) => true,
            }
        }

        /// R-NET-1: any valid head, cut anywhere, is incomplete until its blank line.
        fn valid_heads_parse_whole(name: String, value: String) -> bool {
            let name: String = name.chars().filter(char::is_ascii_alphanumeric).collect();
            let value: String = value.chars().filter(|c| c.is_ascii_alphanumeric() || *c == ' ').collect();
            let name = if name.is_empty() { "x".to_owned() } else { name };
            let raw = format!("GET /acp HTTP/1.1\r\n{name}: {value}\r\n\r\n");
            let raw = raw.as_bytes();
            let whole = parse(raw) == Ok(Some((Head {
                method: "GET".into(),
                path: "/acp".into(),
                version: 1,
                headers: vec![(name.to_ascii_lowercase(), value.trim().to_owned())],
            }, raw.len())));
            whole && (0..raw.len()).all(|cut| parse(&raw[..cut]) == Ok(None))
        }
    }
}
