//! The decode paths that need nothing but memchr and serde_json (`a1`, `b2`), and the slots
//! where ours go.
//!
//! Names follow perf-anchors.md so the ratios can be set beside its tables.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::value::RawValue;

use acp_core::wire::Id;
use acp_core::wire::envelope::{self, Message, Outcome as Reply};
use acp_core::wire::frame::Framer;

use super::{DecodePath, Outcome};

/// The per-message decoders of `acp-cli bench`, shared so both measure the same work.
#[path = "../../acp-cli/src/bench/decode.rs"]
pub mod decode;

/// a1: count the lines and sum their lengths with `memchr_iter`. The framing floor every
/// other path is divided by.
pub const A1_MEMCHR: DecodePath = DecodePath {
    id: "a1",
    label: "memchr_iter newline split (baseline)",
    run: a1_memchr,
};

/// b2: serde_json into a borrowed envelope with params/result/error as `&RawValue`.
pub const B2_SERDE_ENVELOPE: DecodePath = DecodePath {
    id: "b2",
    label: "serde_json envelope, params/result/error as &RawValue",
    run: b2_serde_envelope,
};

/// o1: acp-core's framer alone: lines out of 64 KiB reads, UTF-8 validated (which a1 does not).
pub const O1_FRAMER: DecodePath = DecodePath {
    id: "o1",
    label: "acp-core Framer (lines, UTF-8 checked)",
    run: o1_framer,
};

/// o2: acp-core's framer and envelope scan: every line fully validated and classified.
pub const O2_FRAMER_ENVELOPE: DecodePath = DecodePath {
    id: "o2",
    label: "acp-core Framer + envelope::scan",
    run: o2_envelope,
};

/// o2b: as o2 on the path the connections use: lines taken straight from each read
/// (`Framer::next_line_bytes_from`, only a line cut by a read is copied) and the UTF-8 check
/// done by the envelope scan (`envelope::scan_bytes`).
pub const O2B_FRAMER_ENVELOPE_BYTES: DecodePath = DecodePath {
    id: "o2b",
    label: "acp-core Framer lines from the read + envelope::scan_bytes (UTF-8 in the scan)",
    run: o2b_envelope_bytes,
};

/// o3: acp-core's owned typed decode: framer and envelope scan as o2b, then the owned type
/// picked by the method (responses by the method of the request they answer).
pub const O3_OWNED: DecodePath = DecodePath {
    id: "o3",
    label: "acp-core owned types: Framer + envelope::scan_bytes + decode by method",
    run: o3_owned,
};

/// o4: acp-core's borrowed views: framer and envelope scan as o2b, then the view picked by the
/// method, reading the text each message carries.
pub const O4_VIEWS: DecodePath = DecodePath {
    id: "o4",
    label: "acp-core borrowed views: Framer + envelope::scan_bytes + view by method",
    run: o4_views,
};

/// Feeds the corpus in 64 KiB reads, as a pipe reader would, and hands every line to `each`,
/// which returns what to fold into the checksum (`None`: not counted).
fn with_framer(corpus: &[u8], mut each: impl FnMut(&str) -> Option<u64>) -> Outcome {
    let mut framer = Framer::with_limit(16 << 20);
    let mut outcome = Outcome::default();
    let mut drain = |framer: &mut Framer<Vec<u8>>| {
        while let Some(line) = framer.next_line() {
            outcome.count(line.ok().and_then(&mut each));
        }
    };
    for read in corpus.chunks(64 << 10) {
        let mut input = read;
        while !input.is_empty() {
            input = &input[framer.feed(input)..];
            drain(&mut framer);
        }
    }
    framer.finish();
    drain(&mut framer);
    outcome
}

/// [`with_framer`] the way the connections read: lines taken straight from each 64 KiB read
/// as bytes, not checked as UTF-8 by the framer.
fn with_framer_bytes(corpus: &[u8], mut each: impl FnMut(&[u8]) -> Option<u64>) -> Outcome {
    let mut framer = Framer::with_limit(16 << 20);
    let mut outcome = Outcome::default();
    for read in corpus.chunks(64 << 10) {
        let mut input = read;
        while let Some(line) = framer.next_line_bytes_from(&mut input) {
            outcome.count(line.ok().and_then(&mut each));
        }
    }
    framer.finish();
    while let Some(line) = framer.next_line_bytes_from(&mut &[][..]) {
        outcome.count(line.ok().and_then(&mut each));
    }
    outcome
}

impl Outcome {
    /// Counts one decoded line and folds its sum into the checksum; `None` is not counted.
    fn count(&mut self, sum: Option<u64>) {
        if let Some(sum) = sum {
            self.messages += 1;
            self.checksum = self.checksum.wrapping_add(sum);
        }
    }
}

fn o1_framer(corpus: &[u8]) -> Outcome {
    with_framer(corpus, |line| Some(line.len() as u64))
}

fn o2_envelope(corpus: &[u8]) -> Outcome {
    with_framer(corpus, |line| {
        envelope::scan(line).ok().map(|m| fingerprint(&m))
    })
}

fn o2b_envelope_bytes(corpus: &[u8]) -> Outcome {
    with_framer_bytes(corpus, |line| {
        envelope::scan_bytes(line).ok().map(|m| fingerprint(&m))
    })
}

/// Frames and scans every line, then decodes each message with `decode`.
fn with_decoder(
    corpus: &[u8],
    decode: fn(&Message<'_>, &mut decode::Pending) -> Result<u64, decode::Skip>,
) -> Outcome {
    let mut pending = decode::Pending::new();
    with_framer_bytes(corpus, |line| {
        let message = envelope::scan_bytes(line).ok()?;
        decode(&message, &mut pending).ok()
    })
}

/// Text chunks in the form SDKs write them are checked and decoded in one pass; every other
/// line scanned, then decoded (see `decode::owned_line`).
fn o3_owned(corpus: &[u8]) -> Outcome {
    let mut pending = decode::Pending::new();
    with_framer_bytes(corpus, |line| decode::owned_line(line, &mut pending)?.ok())
}

fn o4_views(corpus: &[u8]) -> Outcome {
    with_decoder(corpus, decode::borrowed)
}

/// Like [`Envelope::fingerprint`]: the id, the method length and the raw payload length.
fn fingerprint(message: &Message<'_>) -> u64 {
    let id = |id: &Id<'_>| match id {
        Id::Int(_) => id.as_i64().unwrap_or(0) as u64,
        Id::Str(s) => s.raw().len() as u64,
        Id::Null => 0,
    };
    let raw_len =
        |raw: Option<acp_core::wire::RawValue<'_>>| raw.map_or(0, |r| r.get().len()) as u64;
    match message {
        Message::Request(r) => id(&r.id) + 3 + r.method.raw().len() as u64 + raw_len(r.params),
        Message::Notification(n) => 3 + n.method.raw().len() as u64 + raw_len(n.params),
        Message::Response(r) => {
            let payload = match &r.outcome {
                Reply::Result(raw) => Some(*raw),
                Reply::Error(e) => e.data,
                Reply::Malformed(_) => None,
            };
            id(&r.id) + 3 + raw_len(payload)
        }
    }
}

/// Every path this package measures, baseline first.
pub fn decode_paths() -> Vec<DecodePath> {
    vec![
        A1_MEMCHR,
        O1_FRAMER,
        O2_FRAMER_ENVELOPE,
        O2B_FRAMER_ENVELOPE_BYTES,
        B2_SERDE_ENVELOPE,
        O3_OWNED,
        O4_VIEWS,
    ]
}

/// The lines of a corpus, as every path splits them.
pub fn split_lines(corpus: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', corpus).map(move |end| {
        let line = &corpus[start..end];
        start = end + 1;
        line
    })
}

fn a1_memchr(corpus: &[u8]) -> Outcome {
    let mut outcome = Outcome::default();
    for line in split_lines(corpus) {
        outcome.messages += 1;
        outcome.checksum += line.len() as u64;
    }
    outcome
}

fn b2_serde_envelope(corpus: &[u8]) -> Outcome {
    let mut outcome = Outcome::default();
    for line in split_lines(corpus) {
        let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(line) else {
            continue;
        };
        outcome.messages += 1;
        outcome.checksum = outcome.checksum.wrapping_add(envelope.fingerprint());
    }
    outcome
}

/// A JSON-RPC message with everything below the top level left as raw, validated JSON.
#[derive(Deserialize)]
pub struct Envelope<'a> {
    /// `"2.0"`.
    #[serde(borrow)]
    pub jsonrpc: Cow<'a, str>,
    /// Absent for notifications.
    #[serde(default)]
    pub id: Option<WireId<'a>>,
    /// Present on requests and notifications.
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
    /// The request or notification parameters.
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    /// A success response's result.
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    /// An error response's error object.
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

impl Envelope<'_> {
    /// A number folded from the decoded fields, for the checksum.
    pub fn fingerprint(&self) -> u64 {
        let id = match &self.id {
            Some(WireId::Int(n)) => *n as u64,
            Some(WireId::Str(s)) => s.len() as u64,
            Some(WireId::Null) | None => 0,
        };
        let raw = self.params.or(self.result).or(self.error);
        id + self.jsonrpc.len() as u64
            + self.method.as_deref().map_or(0, str::len) as u64
            + raw.map_or(0, |raw| raw.get().len()) as u64
    }
}

/// A JSON-RPC id: an integer, a string or null, read in one pass with `deserialize_any`
/// (serde's untagged enums would buffer the value first).
#[derive(Debug, PartialEq, Eq, Hash)]
pub enum WireId<'a> {
    /// An integer id.
    Int(i64),
    /// A string id, borrowed unless it had escapes.
    Str(Cow<'a, str>),
    /// `null`.
    Null,
}

impl<'de: 'a, 'a> Deserialize<'de> for WireId<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;

        impl<'de> Visitor<'de> for IdVisitor {
            type Value = WireId<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer, a string or null")
            }

            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
                Ok(WireId::Int(n))
            }

            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
                i64::try_from(n)
                    .map(WireId::Int)
                    .map_err(|_| E::custom("integer id out of range"))
            }

            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(WireId::Str(Cow::Borrowed(s)))
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(WireId::Str(Cow::Owned(s.to_owned())))
            }

            fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(WireId::Str(Cow::Owned(s)))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(WireId::Null)
            }
        }

        deserializer.deserialize_any(IdVisitor)
    }
}
