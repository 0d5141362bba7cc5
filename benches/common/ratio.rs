//! A round-robin harness that reports every path as a ratio to the first one (a1, the memchr
//! split), as perf-anchors.md does.
//!
//! Criterion measures each bench on its own, minutes apart, so load from other processes on a
//! shared machine moves the numbers between benches. Here every path runs once per round, in
//! order, and each path's time is divided by a1's time *from the same round*; the median of
//! those per-round ratios is what the table reports. That absorbs most of the noise, and the
//! ratio is comparable across machines.
//!
//! Schedule: one warm-up round, which also calibrates how many calls make one measurement last
//! at least `ACP_BENCH_MIN_MS` (default 150 ms); then `ACP_BENCH_ROUNDS` measured rounds
//! (default 7). `ACP_BENCH_ONLY=o2b,o4` keeps the baseline and the named paths, for profiling.

use std::time::{Duration, Instant};

use super::{Corpus, DecodePath, env_count};

/// How the table is measured.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    /// Measured rounds (after one warm-up round).
    pub rounds: usize,
    /// Minimum duration of one measurement; fast paths are repeated to reach it.
    pub min_time: Duration,
}

impl Schedule {
    /// From `ACP_BENCH_ROUNDS` and `ACP_BENCH_MIN_MS`, defaulting to 7 rounds of ≥ 150 ms.
    pub fn from_env() -> Self {
        Self {
            rounds: env_count("ACP_BENCH_ROUNDS", 7).max(1),
            min_time: Duration::from_millis(env_count("ACP_BENCH_MIN_MS", 150) as u64),
        }
    }
}

/// The measured result of one path.
#[derive(Clone, Debug)]
pub struct Row {
    /// The path's id.
    pub id: &'static str,
    /// The path's description.
    pub label: &'static str,
    /// Seconds per call over the whole corpus, one entry per round.
    pub seconds: Vec<f64>,
    /// This path's speed relative to the first path, per round (baseline time / this time).
    pub ratios: Vec<f64>,
}

/// The baseline and the paths named in `ACP_BENCH_ONLY` (ids, comma-separated: `o2b,o4`), or
/// every path when it is unset: for profiling one path without the others.
fn only_paths(paths: &[DecodePath]) -> Vec<DecodePath> {
    let Ok(only) = std::env::var("ACP_BENCH_ONLY") else {
        return paths.to_vec();
    };
    let wanted: Vec<&str> = only.split(',').map(str::trim).collect();
    paths
        .iter()
        .enumerate()
        .filter(|(index, path)| *index == 0 || wanted.contains(&path.id))
        .map(|(_, path)| *path)
        .collect()
}

/// Measures `paths` on `corpus` round-robin and returns one row per path. `paths[0]` is the
/// baseline the ratios divide by.
pub fn measure(corpus: &Corpus, paths: &[DecodePath], schedule: Schedule) -> Vec<Row> {
    assert!(
        !paths.is_empty(),
        "the ratio table needs at least the baseline"
    );
    let only = only_paths(paths);
    let paths = &only[..];

    // Warm-up and calibration: caches, branch predictors, allocator pools, page faults.
    let repeats: Vec<u32> = paths
        .iter()
        .map(|path| {
            path.run_once(&corpus.bytes);
            let started = Instant::now();
            path.run_once(&corpus.bytes);
            let once = started.elapsed().max(Duration::from_nanos(1));
            let needed = schedule.min_time.as_secs_f64() / once.as_secs_f64();
            needed.ceil().clamp(1.0, 1e6) as u32
        })
        .collect();

    let mut seconds = vec![Vec::with_capacity(schedule.rounds); paths.len()];
    for _ in 0..schedule.rounds {
        for ((path, &repeat), times) in paths.iter().zip(&repeats).zip(&mut seconds) {
            let started = Instant::now();
            for _ in 0..repeat {
                path.run_once(&corpus.bytes);
            }
            times.push(started.elapsed().as_secs_f64() / f64::from(repeat));
        }
    }

    let baseline = seconds[0].clone();
    paths
        .iter()
        .zip(seconds)
        .map(|(path, seconds)| Row {
            id: path.id,
            label: path.label,
            ratios: baseline.iter().zip(&seconds).map(|(b, s)| b / s).collect(),
            seconds,
        })
        .collect()
}

/// The median of a non-empty list.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Prints the rows as a Markdown table: MB/s (10^6 bytes) min / median / max over rounds,
/// messages/s and ns/message at the median, and the median per-round ratio to the baseline.
pub fn print_table(corpus: &Corpus, rows: &[Row]) {
    let megabytes = corpus.bytes.len() as f64 / 1e6;
    let messages = corpus.messages as f64;
    println!(
        "\n### {} corpus: {:.1} MB, {} messages, {:.0} B/message\n",
        corpus.name,
        megabytes,
        corpus.messages,
        corpus.bytes.len() as f64 / messages.max(1.0)
    );
    println!(
        "| bench | MB/s min | MB/s median | MB/s max | msg/s (median) | ns/msg | × {} same round |",
        rows.first().map_or("a1", |row| row.id)
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let fastest = row.seconds.iter().copied().fold(f64::INFINITY, f64::min);
        let slowest = row.seconds.iter().copied().fold(0.0, f64::max);
        let typical = median(&row.seconds);
        println!(
            "| {} {} | {:.0} | {:.0} | {:.0} | {} | {:.0} | {} |",
            row.id,
            row.label,
            megabytes / slowest,
            megabytes / typical,
            megabytes / fastest,
            rate(messages / typical),
            typical * 1e9 / messages.max(1.0),
            ratio(median(&row.ratios)),
        )
    }
}

/// `12.3 M`, `456 k` or `789`.
fn rate(per_second: f64) -> String {
    if per_second >= 1e6 {
        format!("{:.2} M", per_second / 1e6)
    } else if per_second >= 1e3 {
        format!("{:.0} k", per_second / 1e3)
    } else {
        format!("{per_second:.0}")
    }
}

/// Four significant digits, in scientific notation below 0.01.
fn ratio(value: f64) -> String {
    if value >= 0.01 {
        format!("{value:.4}")
    } else {
        format!("{value:.2e}")
    }
}

/// Measures and prints the table for each corpus: the whole ratio bench in one call.
pub fn run(corpora: &[Corpus], paths: &[DecodePath]) {
    let schedule = Schedule::from_env();
    println!(
        "Ratio table: 1 warm-up round, then {} rounds; every path once per round, each \
         measurement ≥ {} ms; × = median over rounds of (baseline time ÷ path time).",
        schedule.rounds,
        schedule.min_time.as_millis()
    );
    for corpus in corpora {
        super::check_paths(corpus, paths);
        let rows = measure(corpus, paths, schedule);
        print_table(corpus, &rows);
    }
}
