//! Decode throughput of NDJSON ACP traffic, with criterion: bytes/s and messages/s of every
//! decode path on the mixed and small corpora (see `common/mod.rs` and perf-anchors.md).
//!
//! ```text
//! cargo bench --bench wire                          # 16 MiB mixed + 8 MiB small corpora
//! ACP_BENCH_MIXED_BYTES=64M cargo bench --bench wire -- mixed
//! ```
//!
//! Criterion reports each path alone. For ratios to the memchr baseline measured in the same
//! rounds, run `cargo bench --bench ratios`. The official crates are measured in a separate
//! package, `benches/official/` (see `benches/README.md` for why).

mod common;

use criterion::{Criterion, SamplingMode, Throughput};

use common::paths::decode_paths;
use common::{Corpus, DecodePath, check_paths};

fn bench_corpus(criterion: &mut Criterion, corpus: &Corpus, paths: &[DecodePath]) {
    let mut group = criterion.benchmark_group(format!("decode/{}", corpus.name));
    group.throughput(Throughput::ElementsAndBytes {
        elements: corpus.messages as u64,
        bytes: corpus.bytes.len() as u64,
    });
    // One call decodes megabytes and takes milliseconds: equal-sized samples, fewer of them.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(20);
    for path in paths {
        group.bench_function(path.id, |bencher| {
            bencher.iter(|| path.run_once(&corpus.bytes));
        });
    }
    group.finish();
}

fn main() {
    let paths = decode_paths();
    let corpora = Corpus::both();
    for corpus in &corpora {
        check_paths(corpus, &paths);
    }
    let mut criterion = Criterion::default().configure_from_args();
    for corpus in &corpora {
        bench_corpus(&mut criterion, corpus, &paths);
    }
    criterion.final_summary();
}
