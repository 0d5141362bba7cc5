//! The ratio table: every decode path as a multiple of the memchr newline split (a1),
//! measured round-robin in one process (see `common/ratio.rs`).
//!
//! ```text
//! cargo bench --bench ratios
//! ACP_BENCH_ROUNDS=11 ACP_BENCH_MIXED_BYTES=64M cargo bench --bench ratios
//! ```
//!
//! Under `cargo test --benches` (no `--bench` argument) it only checks, on small corpora, that
//! every path decodes every line.

mod common;

use acp_testkit::corpus::Mix;
use common::paths::decode_paths;
use common::{Corpus, bench_mode, check_paths};

fn main() {
    let paths = decode_paths();
    let corpora = Corpus::both();
    if bench_mode() {
        // The message mix of the mixed corpus, as perf-anchors tabulates its own.
        println!(
            "Mixed corpus mix:\n```\n{}\n```",
            Mix::of(&corpora[0].bytes)
        );
        common::ratio::run(&corpora, &paths);
    } else {
        for corpus in &corpora {
            check_paths(corpus, &paths);
        }
        println!("ratios: every path decodes every line (test mode; run `cargo bench` to measure)");
    }
}
