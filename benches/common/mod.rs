//! What the wire benchmarks share: the corpora, the decode paths, and the round-robin ratio
//! harness.
//!
//! Every decode path is a plain function that processes a whole corpus once: it splits the
//! lines and decodes each one, and returns how many messages it saw plus a checksum built from
//! decoded fields (so the optimiser cannot skip the work). Framing is included in every path,
//! as in the real pipeline, so the ratio to `a1` (the memchr split alone) is what the decode
//! costs on top of finding the lines.
//!
//! The same list of paths feeds both the criterion bench (`benches/wire.rs`) and the ratio
//! table (`benches/ratios.rs`); `benches/official/` includes this file too, so its numbers
//! are computed the same way.

#![allow(dead_code, unreachable_pub)] // Each bench binary uses a different part of this module.

pub mod paths;
pub mod ratio;

use std::hint::black_box;

use acp_testkit::corpus;

/// What one run of a decode path over a corpus returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Lines decoded (for a split-only path: lines found).
    pub messages: usize,
    /// A value folded from decoded fields, so the work is observable.
    pub checksum: u64,
}

/// One way of decoding a corpus, as the benches name it.
#[derive(Clone, Copy)]
pub struct DecodePath {
    /// Short id used in bench names and tables, e.g. `"a1"`.
    pub id: &'static str,
    /// One-line description for the tables.
    pub label: &'static str,
    /// Processes the whole corpus once.
    pub run: fn(&[u8]) -> Outcome,
}

impl DecodePath {
    /// Runs the path once with its input and output through `black_box`.
    pub fn run_once(&self, corpus: &[u8]) -> Outcome {
        black_box((self.run)(black_box(corpus)))
    }
}

/// A named corpus with its line count.
pub struct Corpus {
    /// `"mixed"` or `"small"`.
    pub name: &'static str,
    /// The NDJSON bytes.
    pub bytes: Vec<u8>,
    /// Number of lines.
    pub messages: usize,
}

impl Corpus {
    /// Wraps corpus bytes under a name.
    pub fn named(name: &'static str, bytes: Vec<u8>) -> Self {
        let messages = memchr::memchr_iter(b'\n', &bytes).count();
        Self {
            name,
            bytes,
            messages,
        }
    }

    /// The mixed corpus; size from `ACP_BENCH_MIXED_BYTES` (default 16 MiB).
    pub fn mixed() -> Self {
        Self::named(
            "mixed",
            corpus::mixed(env_bytes("ACP_BENCH_MIXED_BYTES", 16 << 20)),
        )
    }

    /// The small-message corpus; size from `ACP_BENCH_SMALL_BYTES` (default 8 MiB).
    pub fn small() -> Self {
        Self::named(
            "small",
            corpus::small(env_bytes("ACP_BENCH_SMALL_BYTES", 8 << 20)),
        )
    }

    /// Both corpora, mixed first. Outside `cargo bench` (under `cargo test --benches`, where
    /// the benches only check that they run) they are small, so the check stays quick.
    pub fn both() -> [Self; 2] {
        if bench_mode() {
            [Self::mixed(), Self::small()]
        } else {
            [
                Self::named("mixed", corpus::mixed(256 << 10)),
                Self::named("small", corpus::small(64 << 10)),
            ]
        }
    }
}

/// Whether the binary runs as a benchmark (`cargo bench` passes `--bench`), rather than as a
/// smoke test under `cargo test --benches`.
pub fn bench_mode() -> bool {
    std::env::args().any(|arg| arg == "--bench")
}

/// Reads a byte count from the environment (`16777216`, or with a suffix: `16M`, `512K`).
pub fn env_bytes(var: &str, default: usize) -> usize {
    let Ok(text) = std::env::var(var) else {
        return default;
    };
    let text = text.trim();
    let (digits, unit) = match text.as_bytes().last() {
        Some(b'K' | b'k') => (&text[..text.len() - 1], 1 << 10),
        Some(b'M' | b'm') => (&text[..text.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    match digits.parse::<usize>() {
        Ok(n) => n * unit,
        Err(_) => panic!("{var}={text:?} is not a byte count (e.g. 16777216, 16M, 512K)"),
    }
}

/// Reads a count from the environment, with a default.
pub fn env_count(var: &str, default: usize) -> usize {
    match std::env::var(var) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{var}={text:?} is not a count")),
        Err(_) => default,
    }
}

/// Checks that every path sees every line of the corpus before anything is timed, so a
/// decoder that silently fails on some lines cannot look fast.
pub fn check_paths(corpus: &Corpus, paths: &[DecodePath]) {
    for path in paths {
        let outcome = (path.run)(&corpus.bytes);
        assert_eq!(
            outcome.messages, corpus.messages,
            "{} decoded {} of the {} lines of the {} corpus",
            path.id, outcome.messages, corpus.messages, corpus.name
        );
    }
}
