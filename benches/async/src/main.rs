//! In-process echo-agent benchmark: the same echo agent on our `acp-async` layer and on the
//! official Rust SDK, each served over one end of a `tokio::io::duplex` under a tokio
//! current-thread runtime, both driven by the same raw NDJSON client ([`client`]), in one
//! process and one run. See README.md.

mod alloc;
mod client;
mod echo;
mod official;
mod ours;

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use client::Client;
use tokio::io::DuplexStream;

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

/// Bytes each direction of the in-memory pipe holds before a writer waits.
const PIPE_BYTES: usize = 64 * 1024;
/// How long an agent gets to end after the client closed its end.
const EXIT_WAIT: Duration = Duration::from_secs(5);
/// The most our agent may add to the live bytes while the client reads nothing, whatever
/// the flood's length: acp-core's outbox pauses updates at 1 MiB (`Limits::outbox_high_water`
/// by default), its `Vec` may have doubled past that, and the pipe holds 64 KiB. A run that
/// goes beyond fails: the flood was queued, not held.
const OURS_STALL_BOUND: i64 = 4 << 20;

/// The command line, with its defaults.
#[derive(Clone, Debug)]
struct Options {
    /// Measured rounds, after one warm-up round.
    rounds: usize,
    /// Prompts per prompts/s measurement, each answered with one chunk.
    prompts: u64,
    /// Chunks of the measured flood.
    count: u64,
    /// Chunks of the flood the client stops reading.
    stall_count: u64,
    /// How long the client reads nothing during that flood.
    stall: Duration,
    /// How our agent sends the flood's chunks.
    ours_send: ours::ChunkSend,
}

const USAGE: &str = "usage: acp-bench-async [--quick] [--rounds R] [--prompts P] [--count N] \
[--stall-count N] [--stall-ms MS] [--ours-send message|raw]";

impl Options {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut options = Options {
            rounds: 5,
            prompts: 20_000,
            count: 100_000,
            stall_count: 100_000,
            stall: Duration::from_millis(500),
            ours_send: ours::ChunkSend::Message,
        };
        while let Some(flag) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
            let number = |text: String| {
                text.replace('_', "")
                    .parse::<u64>()
                    .map_err(|_| format!("{flag} needs a whole number, got '{text}'"))
            };
            match flag.as_str() {
                "--quick" => {
                    options = Options {
                        rounds: 3,
                        prompts: 2_000,
                        count: 20_000,
                        stall_count: 20_000,
                        stall: Duration::from_millis(100),
                        ..options
                    }
                }
                "--ours-send" => {
                    options.ours_send = match value()?.as_str() {
                        "message" => ours::ChunkSend::Message,
                        "raw" => ours::ChunkSend::Raw,
                        other => {
                            return Err(format!("--ours-send takes message or raw, not '{other}'"));
                        }
                    }
                }
                "--rounds" => options.rounds = number(value()?)?.max(1) as usize,
                "--prompts" => options.prompts = number(value()?)?.max(1),
                "--count" => options.count = number(value()?)?.max(1),
                "--stall-count" => options.stall_count = number(value()?)?.max(1),
                "--stall-ms" => options.stall = Duration::from_millis(number(value()?)?),
                "-h" | "--help" => return Err(USAGE.to_owned()),
                _ => return Err(format!("unknown argument '{flag}'\n{USAGE}")),
            }
        }
        Ok(options)
    }
}

/// One implementation of the echo agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Ours,
    Official,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Ours => "ours (acp-async)",
            Side::Official => "official SDK 5.2.0",
        }
    }

    fn serve(self, stream: DuplexStream, options: &Options) -> Pin<Box<dyn Future<Output = ()>>> {
        match self {
            Side::Ours => Box::pin(ours::serve(stream, options.ours_send)),
            Side::Official => Box::pin(official::serve(stream)),
        }
    }
}

/// What one round measured of one agent.
#[derive(Clone, Copy, Debug)]
struct Measured {
    prompts_per_s: f64,
    notifications_per_s: f64,
    /// Allocations outside the client per notification of the measured flood.
    agent_allocs_per_notification: f64,
    /// The client's allocations per notification of the measured flood.
    client_allocs_per_notification: f64,
    /// Live bytes above those before the stalled flood's prompt, at their highest while the
    /// client read nothing.
    stall_peak_bytes: i64,
    /// The same over the whole stalled turn, the reading after the stall included.
    stall_turn_peak_bytes: i64,
}

/// Runs every measurement of one agent on a fresh connection.
async fn measure(side: Side, options: &Options) -> Result<Measured, String> {
    let (client_end, agent_end) = tokio::io::duplex(PIPE_BYTES);
    let agent = tokio::task::spawn_local(side.serve(agent_end, options));
    let mut client = Client::connect(client_end).await?;
    let expect = |what: &str, turn: client::Turn, chunks: u64| {
        if turn.chunks == chunks {
            Ok(())
        } else {
            Err(format!(
                "{}: {what} delivered {} chunks, not {chunks}",
                side.name(),
                turn.chunks
            ))
        }
    };

    // Prompts/s: each prompt answered with one short chunk, one after the other.
    expect("a warm-up prompt", client.prompt("hello").await?, 1)?;
    let start = Instant::now();
    for _ in 0..options.prompts {
        expect("a prompt", client.prompt("hello").await?, 1)?;
    }
    let prompts_per_s = options.prompts as f64 / start.elapsed().as_secs_f64();

    // Notifications/s and allocations: one prompt streaming `count` chunks.
    let flood = format!("flood {}", options.count);
    let before = alloc::Snapshot::now();
    let turn = client.prompt(&flood).await?;
    let after = alloc::Snapshot::now();
    expect("the flood", turn, options.count)?;
    let notifications_per_s = options.count as f64 / turn.elapsed.as_secs_f64();
    let per_chunk = |n: u64| n as f64 / options.count as f64;

    // A flood the client stops reading for `stall`, then reads to the end.
    let stalled = format!("flood {}", options.stall_count);
    let baseline = alloc::Snapshot::now().live;
    alloc::reset_peak();
    let start = Instant::now();
    let id = client.send_prompt(&stalled).await?;
    tokio::time::sleep(options.stall).await;
    let stall_peak_bytes = alloc::peak() - baseline;
    let turn = client.finish_prompt(id, start).await?;
    let stall_turn_peak_bytes = alloc::peak() - baseline;
    expect("the stalled flood", turn, options.stall_count)?;
    if side == Side::Ours && stall_turn_peak_bytes > OURS_STALL_BOUND {
        return Err(format!(
            "{}: {stall_turn_peak_bytes} bytes more were live during the stalled flood, \
             beyond the bound of {OURS_STALL_BOUND}",
            side.name()
        ));
    }

    client.close().await;
    match tokio::time::timeout(EXIT_WAIT, agent).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(format!("{}: the agent task failed: {e}", side.name())),
        Err(_) => return Err(format!("{}: the agent did not end at EOF", side.name())),
    }
    Ok(Measured {
        prompts_per_s,
        notifications_per_s,
        agent_allocs_per_notification: per_chunk(after.agent_allocs - before.agent_allocs),
        client_allocs_per_notification: per_chunk(after.client_allocs - before.client_allocs),
        stall_peak_bytes,
        stall_turn_peak_bytes,
    })
}

fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    let local = tokio::task::LocalSet::new();
    match local.block_on(&runtime, run(&options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("acp-bench-async: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: &Options) -> Result<(), String> {
    println!(
        "echo agent over tokio::io::duplex ({} KiB), tokio current_thread, one process; \
         {} prompts, flood {} x {} B, stalled flood {} for {} ms; 1 warm-up + {} rounds; \
         our chunks sent with {}",
        PIPE_BYTES / 1024,
        options.prompts,
        options.count,
        echo::FLOOD_CHUNK.len(),
        options.stall_count,
        options.stall.as_millis(),
        options.rounds,
        match options.ours_send {
            ours::ChunkSend::Message => "Turn::message",
            ours::ChunkSend::Raw => "Turn::send(&RawUpdate)",
        }
    );
    let load_before = load_average();
    let mut rounds: Vec<[Measured; 2]> = Vec::new();
    for round in 0..=options.rounds {
        // The order alternates, so neither agent always runs first.
        let order = if round % 2 == 0 {
            [Side::Ours, Side::Official]
        } else {
            [Side::Official, Side::Ours]
        };
        let mut got = [None, None];
        for side in order {
            let m = measure(side, options).await?;
            got[side as usize] = Some(m);
        }
        let [Some(ours), Some(official)] = got else {
            unreachable!("both sides ran")
        };
        let label = if round == 0 {
            "warm-up".to_owned()
        } else {
            format!("round {round}")
        };
        println!(
            "{label:>8}: prompts/s {} vs {} ({:.2}x), notifications/s {} vs {} ({:.2}x)",
            si(ours.prompts_per_s),
            si(official.prompts_per_s),
            ours.prompts_per_s / official.prompts_per_s,
            si(ours.notifications_per_s),
            si(official.notifications_per_s),
            ours.notifications_per_s / official.notifications_per_s,
        );
        if round > 0 {
            rounds.push([ours, official]);
        }
    }
    let load_after = load_average();
    println!();
    print_table(options, &rounds);
    println!();
    println!("load average: {load_before} (before) -> {load_after} (after)");
    Ok(())
}

fn print_table(options: &Options, rounds: &[[Measured; 2]]) {
    let of = |side: Side, f: &dyn Fn(&Measured) -> f64| -> Vec<f64> {
        rounds.iter().map(|r| f(&r[side as usize])).collect()
    };
    let ratios = |f: &dyn Fn(&Measured) -> f64| -> Vec<f64> {
        rounds
            .iter()
            .map(|r| f(&r[Side::Ours as usize]) / f(&r[Side::Official as usize]))
            .collect()
    };
    let n = rounds.len();
    println!(
        "| median of {n} rounds | {} | {} | ours / official (same round: median, min–max) |",
        Side::Ours.name(),
        Side::Official.name()
    );
    println!("|---|---:|---:|---:|");
    type Row<'a> = (
        &'a str,
        &'a dyn Fn(&Measured) -> f64,
        &'a dyn Fn(f64) -> String,
    );
    let kib = |b: f64| format!("{:.1} KiB", b / 1024.0);
    let rows: [Row; 5] = [
        ("prompts/s (one chunk each)", &|m| m.prompts_per_s, &si),
        (
            "notifications/s (one prompt, flood)",
            &|m| m.notifications_per_s,
            &si,
        ),
        (
            "allocations per notification (agent side)",
            &|m| m.agent_allocs_per_notification,
            &|v| format!("{v:.2}"),
        ),
        (
            "peak live bytes, reader stalled",
            &|m| m.stall_peak_bytes as f64,
            &kib,
        ),
        (
            "peak live bytes, stalled turn read to the end",
            &|m| m.stall_turn_peak_bytes as f64,
            &kib,
        ),
    ];
    for (label, f, show) in rows {
        let r = ratios(f);
        println!(
            "| {label} | {} | {} | **{}×** ({}–{}) |",
            show(median(of(Side::Ours, f))),
            show(median(of(Side::Official, f))),
            times(median(r.clone())),
            times(min(&r)),
            times(max(&r)),
        );
    }
    let client = median(of(Side::Ours, &|m| m.client_allocs_per_notification));
    println!();
    println!(
        "the shared client allocated {client:.3} times per notification (the same code for both); \
         stalled flood: {} chunks, client idle {} ms",
        options.stall_count,
        options.stall.as_millis()
    );
    let ratio = median(ratios(&|m| m.notifications_per_s));
    println!(
        "goal of issue 24 (notifications/s at least 3x the official SDK's): {} ({ratio:.2}x)",
        if ratio >= 3.0 { "met" } else { "NOT met" }
    );
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn min(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// A ratio with two significant digits at least (memory ratios are small).
fn times(ratio: f64) -> String {
    if ratio >= 0.1 {
        format!("{ratio:.2}")
    } else {
        format!("{ratio:.4}")
    }
}

/// A rate with a k/M suffix.
fn si(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.2} M", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.1} k", value / 1e3)
    } else {
        format!("{value:.0}")
    }
}

/// `/proc/loadavg`'s first three fields (Linux), or `?` elsewhere.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_owned())
}
