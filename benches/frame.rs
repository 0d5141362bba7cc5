//! Throughput of the NDJSON framer alone (`acp_core::wire::frame::Framer`), beside the floor a
//! memchr newline split plus `str::from_utf8` per line gives on the same bytes.
//!
//! The corpus is `session/update` chunks of realistic size (~600 B per line) whose text holds
//! a chosen share of non-ASCII words: UTF-8 validation dominates once non-ASCII is frequent,
//! so the share is a parameter of the group.
//!
//! Run: `cargo bench --bench frame`.

use std::hint::black_box;

use acp_core::wire::frame::Framer;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Bytes of corpus per group.
const CORPUS_BYTES: usize = 4 << 20;

/// Reads are handed to the framer in pieces of this size, as a pipe reader would.
const READ_SIZE: usize = 64 * 1024;

/// Deterministic lines: ~100–800 B of text, each word non-ASCII with the given probability.
fn corpus(non_ascii_per_mille: u64) -> Vec<u8> {
    const ASCII: &[&str] = &[
        "the",
        "file",
        "function",
        "returns",
        "a",
        "value",
        "when",
        "called",
        "with",
        "we",
        "should",
        "update",
        "tests",
        "\\n",
        "\\t",
        "\\\"x\\\"",
        "and",
        "then",
        "run",
        "cargo",
        "build",
        "to",
        "check",
        "it",
        "works",
        "now",
        "done",
        "path",
        "src/lib.rs",
        "line",
    ];
    const OTHER: &[&str] = &[
        "é",
        "中文",
        "日本語",
        "—",
        "🚀",
        "Ελληνικά",
        "русский",
        "naïve",
        "Grüße",
    ];
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut random = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let mut out = Vec::with_capacity(CORPUS_BYTES + 1024);
    let mut n = 0;
    while out.len() < CORPUS_BYTES {
        let mut text = String::new();
        let length = 100 + random(700);
        while text.len() < length {
            if (random(1000) as u64) < non_ascii_per_mille {
                text.push_str(OTHER[random(OTHER.len())]);
            } else {
                text.push_str(ASCII[random(ASCII.len())]);
            }
            text.push(' ');
        }
        n += 1;
        out.extend_from_slice(
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\
                 \"sess_{n:06}\",\"update\":{{\"sessionUpdate\":\"agent_message_chunk\",\
                 \"content\":{{\"type\":\"text\",\"text\":\"{text}\"}}}}}}}}\n"
            )
            .as_bytes(),
        );
    }
    out
}

/// The documented call loop over `corpus` in `READ_SIZE` reads; returns lines and bytes seen.
fn frame_all<S: acp_core::wire::frame::ByteStorage>(
    framer: &mut Framer<S>,
    corpus: &[u8],
) -> (usize, usize) {
    let (mut lines, mut bytes) = (0, 0);
    for read in corpus.chunks(READ_SIZE) {
        let mut input = read;
        loop {
            let taken = framer.feed(input);
            input = &input[taken..];
            while let Some(line) = framer.next_line() {
                let line = line.expect("the corpus is valid");
                lines += 1;
                bytes += black_box(line).len();
            }
            if input.is_empty() {
                break;
            }
        }
    }
    (lines, bytes)
}

fn frame(c: &mut Criterion) {
    for per_mille in [0, 20, 60, 150] {
        let corpus = corpus(per_mille);
        let non_ascii = corpus.iter().filter(|&&byte| byte >= 0x80).count();
        let share = non_ascii * 1000 / corpus.len();
        let mut group =
            c.benchmark_group(format!("frame/non_ascii_{}.{}pct", share / 10, share % 10));
        group.throughput(Throughput::Bytes(corpus.len() as u64));
        group.bench_function("memchr_split+from_utf8", |b| {
            b.iter(|| {
                let mut start = 0;
                let mut bytes = 0;
                for end in memchr::memchr_iter(b'\n', &corpus) {
                    let line = std::str::from_utf8(&corpus[start..end]).expect("valid");
                    bytes += black_box(line).len();
                    start = end + 1;
                }
                bytes
            })
        });
        group.bench_function("framer_vec", |b| {
            let mut framer = Framer::default();
            b.iter(|| frame_all(&mut framer, &corpus))
        });
        group.bench_function("framer_array_16k", |b| {
            let mut framer = Framer::new([0u8; 16 * 1024], 16 * 1024);
            b.iter(|| frame_all(&mut framer, &corpus))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = frame
}
criterion_main!(benches);
