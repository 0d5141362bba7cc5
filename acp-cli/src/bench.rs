//! `acp-cli bench FILE`: decode throughput of an NDJSON capture, the tool users run on their
//! own traffic.
//!
//! The file is read into memory once, then decoded several times along three paths, each pass
//! timed on its own, and each path reported at its median pass:
//!
//! - **envelope**: framing (the NDJSON framer over 64 KiB reads) and the envelope scan, which
//!   validates the whole line (UTF-8 included) and classifies it as a request, notification
//!   or response;
//! - **borrowed**: the same, then the borrowed, allocation-free view picked by the method
//!   (`acp_core::view`), reading the text each message carries;
//! - **owned**: the same, then the owned typed decode picked by the method
//!   (`acp_core::schema`).
//!
//! Responses are decoded as the result of the request they answer (matched by id within the
//! file). A line that is not a JSON-RPC message, or whose params or result do not fit the
//! method's type, is counted as invalid and never stops the run.

#[doc(hidden)]
pub(crate) mod decode;

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use acp_core::wire::envelope::{self, Message};
use acp_core::wire::frame::Framer;

use decode::{Pending, Skip};

/// Passes when none are asked for.
pub const DEFAULT_PASSES: usize = 5;

/// Files at least this big get a progress line on stderr.
pub const PROGRESS_BYTES: usize = 16 << 20;

/// The key responses are counted under in [`Report::methods`].
pub(crate) const RESPONSE_KEY: &str = "(response)";

/// The three measured paths, in report order.
pub(crate) const PATHS: [&str; 3] = ["envelope", "borrowed", "owned"];

/// Why a bench could not run.
#[derive(Debug)]
pub enum BenchError {
    /// The capture could not be read.
    Read {
        /// The path as given.
        path: PathBuf,
        /// What the OS said.
        error: std::io::Error,
    },
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Read { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for BenchError {}

/// Throughput of one path at its median pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    /// Millions of bytes (10^6) per second.
    pub mb_per_s: f64,
    /// Messages per second.
    pub msg_per_s: f64,
}

/// What a bench measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The capture, as given.
    pub file: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// Valid JSON-RPC messages in it.
    pub messages: u64,
    /// Lines that are not JSON-RPC messages, or whose params/result do not fit their type.
    pub invalid: u64,
    /// Timed passes per path.
    pub passes: usize,
    /// Per path, in [`PATHS`] order.
    pub rates: [Rate; 3],
    /// Requests and notifications per method; responses under [`RESPONSE_KEY`].
    pub methods: BTreeMap<String, u64>,
}

/// Reads `path` and measures it over `passes` passes (at least one). `progress` is told
/// `(path, pass, passes)` before each timed pass.
pub fn run(
    path: &Path,
    passes: usize,
    mut progress: impl FnMut(&str, usize, usize),
) -> Result<Report, BenchError> {
    let bytes = std::fs::read(path).map_err(|error| BenchError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    let passes = passes.max(1);
    let census = census(&bytes);
    let mut rates = [Rate {
        mb_per_s: 0.0,
        msg_per_s: 0.0,
    }; 3];
    for (index, name) in PATHS.iter().enumerate() {
        let mut times: Vec<Duration> = (1..=passes)
            .map(|pass| {
                progress(name, pass, passes);
                let started = Instant::now();
                let seen = match index {
                    0 => pass_envelope(&bytes),
                    1 => pass_decode(&bytes, decode::borrowed),
                    _ => pass_owned(&bytes),
                };
                std::hint::black_box(seen);
                started.elapsed()
            })
            .collect();
        times.sort();
        let median = times[times.len() / 2].as_secs_f64().max(1e-9);
        rates[index] = Rate {
            mb_per_s: bytes.len() as f64 / 1e6 / median,
            msg_per_s: census.messages as f64 / median,
        };
    }
    Ok(Report {
        file: path.display().to_string(),
        bytes: bytes.len(),
        messages: census.messages,
        invalid: census.invalid,
        passes,
        rates,
        methods: census.methods,
    })
}

/// Hands every line of `bytes` to `each`, through the framer in 64 KiB reads as a pipe reader
/// would get them, the way the connections read: lines taken straight from the read, their
/// UTF-8 left to the envelope scan (`envelope::scan_bytes`). Lines the framer refuses (too
/// long) come as `Err`.
fn for_each_line(bytes: &[u8], mut each: impl FnMut(Result<&[u8], ()>)) {
    let mut framer = Framer::with_limit(usize::MAX);
    for read in bytes.chunks(64 << 10) {
        let mut input = read;
        while let Some(line) = framer.next_line_bytes_from(&mut input) {
            each(line.map_err(drop));
        }
    }
    framer.finish();
    while let Some(line) = framer.next_line_bytes_from(&mut &[][..]) {
        each(line.map_err(drop));
    }
}

/// Path (a): framing and the envelope scan. Returns a checksum.
fn pass_envelope(bytes: &[u8]) -> u64 {
    let mut sum = 0u64;
    for_each_line(bytes, |line| {
        if let Ok(message) = line.map(envelope::scan_bytes) {
            sum = sum.wrapping_add(message.map_or(1, |m| decode::envelope(&m)));
        }
    });
    sum
}

/// Paths (b) and (c): framing, the envelope scan and a typed decode. Returns a checksum.
fn pass_decode(bytes: &[u8], decode: fn(&Message<'_>, &mut Pending) -> Result<u64, Skip>) -> u64 {
    let mut pending = Pending::new();
    let mut sum = 0u64;
    for_each_line(bytes, |line| {
        if let Ok(Ok(message)) = line.map(envelope::scan_bytes) {
            sum = sum.wrapping_add(decode(&message, &mut pending).unwrap_or(1));
        }
    });
    sum
}

/// Path (c): framing and the owned decode, text chunks in the form SDKs write them in one
/// pass that also checks them as the envelope scan does (`decode::owned_line`). Returns a
/// checksum, the same as [`pass_decode`] with [`decode::owned`] gives.
fn pass_owned(bytes: &[u8]) -> u64 {
    let mut pending = Pending::new();
    let mut sum = 0u64;
    for_each_line(bytes, |line| {
        if let Some(decoded) = line
            .ok()
            .and_then(|line| decode::owned_line(line, &mut pending))
        {
            sum = sum.wrapping_add(decoded.unwrap_or(1));
        }
    });
    sum
}

/// The untimed pass: counts per method, and which lines are invalid.
struct Census {
    messages: u64,
    invalid: u64,
    methods: BTreeMap<String, u64>,
}

fn census(bytes: &[u8]) -> Census {
    let mut census = Census {
        messages: 0,
        invalid: 0,
        methods: BTreeMap::new(),
    };
    let mut pending = Pending::new();
    for_each_line(bytes, |line| {
        let Ok(Ok(message)) = line.map(envelope::scan_bytes) else {
            census.invalid += 1;
            return;
        };
        census.messages += 1;
        let key = match message.method() {
            Some(method) => method.to_cow().into_owned(),
            None => String::from(RESPONSE_KEY),
        };
        *census.methods.entry(key).or_default() += 1;
        if decode::owned(&message, &mut pending) == Err(Skip::Invalid) {
            census.invalid += 1;
        }
    });
    census
}

impl Report {
    /// Exactly one JSON object (no newline): `{"file","bytes","messages","invalid","passes",
    /// "paths":{"envelope":{"mb_per_s","msg_per_s"},"borrowed":{…},"owned":{…}},"methods":{…}}`.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"file\":");
        out.push_str(&json_string(&self.file));
        let _ = write!(
            out,
            ",\"bytes\":{},\"messages\":{},\"invalid\":{},\"passes\":{},\"paths\":{{",
            self.bytes, self.messages, self.invalid, self.passes
        );
        for (i, (name, rate)) in PATHS.iter().zip(&self.rates).enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                "\"{name}\":{{\"mb_per_s\":{:.3},\"msg_per_s\":{:.1}}}",
                rate.mb_per_s, rate.msg_per_s
            );
        }
        out.push_str("},\"methods\":{");
        for (i, (method, count)) in self.methods.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{}:{count}", json_string(method));
        }
        out.push_str("}}");
        out
    }
}

/// A JSON string literal, escaped by acp-core's encoder.
fn json_string(text: &str) -> String {
    let bytes = acp_core::wire::encode::to_vec(&text).unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

/// The human-readable table.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} bytes, {} messages, {} invalid lines; median of {} passes",
            self.file, self.bytes, self.messages, self.invalid, self.passes
        )?;
        writeln!(f)?;
        writeln!(f, "{:<10} {:>12} {:>14}", "path", "MB/s", "messages/s")?;
        for (name, rate) in PATHS.iter().zip(&self.rates) {
            writeln!(
                f,
                "{name:<10} {:>12.1} {:>14.0}",
                rate.mb_per_s, rate.msg_per_s
            )?;
        }
        writeln!(f)?;
        writeln!(f, "{:<40} {:>10}", "method", "messages")?;
        for (method, count) in &self.methods {
            writeln!(f, "{method:<40} {count:>10}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::decode::{Pending, owned, owned_line};
    use acp_core::schema::AgentNotification;
    use acp_core::wire::envelope;

    /// The owned path of a whole line gives what scanning then `owned` gives, line by line
    /// over a mixed corpus, and the text chunks in it are read in one pass.
    #[test]
    fn owned_line_agrees_with_scan_then_owned() {
        let corpus = acp_testkit::corpus::mixed(256 << 10);
        let (mut fused, mut general) = (Pending::new(), Pending::new());
        let mut one_pass = 0;
        for line in acp_testkit::corpus::lines(&corpus) {
            let scanned = envelope::scan_bytes(line).ok();
            let want = scanned.map(|message| owned(&message, &mut general));
            assert_eq!(owned_line(line, &mut fused), want);
            one_pass += usize::from(AgentNotification::decode_text_chunk_line(line).is_some());
        }
        assert!(one_pass > 100, "{one_pass} lines read in one pass");
    }
}
