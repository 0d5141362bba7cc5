//! End-to-end `/flood` benchmark: notifications per second from an agent child process over
//! stdio to a reading client, for our agent (`acp-cli --acp --stdio`) and an agent built on the
//! official Rust SDK (`peer-agent` of tests/interop/rust), in one run; then the agents' peak
//! memory while a client reads nothing during `/flood 1000000`; then our agent's peak memory
//! over a long turn read after a stall, saving included. See README.md.

mod memory;
mod peer;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use memory::{Memory, load_average, mib};
use peer::{AgentSpec, Peer, PeerError, Turn};

/// The command line, with its defaults.
#[derive(Debug)]
struct Options {
    ours: PathBuf,
    official: PathBuf,
    /// Chunks per measured `/flood`.
    count: u64,
    /// Bytes per chunk.
    bytes: usize,
    /// Measured rounds, after one warm-up round.
    rounds: usize,
    /// Chunks of the memory run's `/flood`.
    memory_count: u64,
    /// How long the memory run samples a client that reads nothing.
    memory_secs: f64,
    /// The memory run stops sampling an agent once it is resident beyond this.
    memory_cap_mib: u64,
    /// How long the long-turn run reads nothing before reading at full speed.
    stall_secs: f64,
    throughput: bool,
    memory: bool,
    long_turn: bool,
}

const USAGE: &str = "usage: acp-bench-e2e [--ours PATH] [--official PATH] [--count N] [--bytes B] \
[--rounds R] [--memory-count N] [--memory-secs S] [--memory-cap-mib M] [--stall-secs S] \
[--only throughput|memory|long-turn]";

impl Options {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut options = Options {
            ours: repo.join("target/release/acp-cli"),
            official: repo.join("tests/interop/rust/target/release/peer-agent"),
            count: 100_000,
            bytes: 32,
            rounds: 5,
            memory_count: 1_000_000,
            memory_secs: 3.0,
            memory_cap_mib: 2048,
            stall_secs: 5.0,
            throughput: true,
            memory: true,
            long_turn: true,
        };
        while let Some(flag) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
            let number = |text: String| {
                text.replace('_', "")
                    .parse::<u64>()
                    .map_err(|_| format!("{flag} needs a whole number, got '{text}'"))
            };
            match flag.as_str() {
                "--ours" => options.ours = value()?.into(),
                "--official" => options.official = value()?.into(),
                "--count" => options.count = number(value()?)?,
                "--bytes" => options.bytes = number(value()?)? as usize,
                "--rounds" => options.rounds = number(value()?)?.max(1) as usize,
                "--memory-count" => options.memory_count = number(value()?)?,
                "--memory-secs" => options.memory_secs = seconds(&flag, value()?)?,
                "--stall-secs" => options.stall_secs = seconds(&flag, value()?)?,
                "--memory-cap-mib" => options.memory_cap_mib = number(value()?)?,
                "--only" => {
                    let only = value()?;
                    options.throughput = only == "throughput";
                    options.memory = only == "memory";
                    options.long_turn = only == "long-turn";
                    if !(options.throughput || options.memory || options.long_turn) {
                        return Err(format!(
                            "--only takes throughput, memory or long-turn, not '{only}'"
                        ));
                    }
                }
                "-h" | "--help" => return Err(USAGE.into()),
                other => return Err(format!("unknown argument '{other}'\n{USAGE}")),
            }
        }
        Ok(options)
    }

    fn agents(&self) -> [AgentSpec; 2] {
        [
            AgentSpec {
                name: "ours (acp-cli --acp --stdio)",
                program: self.ours.clone(),
                args: vec!["--acp".into(), "--stdio".into()],
            },
            AgentSpec {
                name: "official SDK 5.0.0 (peer-agent)",
                program: self.official.clone(),
                args: Vec::new(),
            },
        ]
    }
}

/// A positive, finite number of seconds.
fn seconds(flag: &str, text: String) -> Result<f64, String> {
    text.parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s > 0.0)
        .ok_or_else(|| format!("{flag} needs seconds, got '{text}'"))
}

/// A scratch directory for the sessions' cwd (our agent writes `acp-cli.log` there).
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        let dir = std::env::temp_dir().join(format!("acp-bench-e2e-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    // The long-turn run needs only our agent.
    let needed = if options.throughput || options.memory {
        2
    } else {
        1
    };
    for agent in options.agents().into_iter().take(needed) {
        if !agent.program.is_file() {
            eprintln!(
                "{} not found at {}; build it first (benches/e2e/run.sh does)",
                agent.name,
                agent.program.display()
            );
            return ExitCode::from(2);
        }
    }
    let scratch = match Scratch::new() {
        Ok(scratch) => scratch,
        Err(error) => {
            eprintln!("cannot create a scratch directory: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = (|| {
        if options.throughput {
            throughput(&options, &scratch.0)?;
        }
        if options.memory {
            memory(&options, &scratch.0)?;
        }
        if options.long_turn {
            long_turn(&options, &scratch.0)?;
        }
        Ok::<(), PeerError>(())
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("e2e bench failed: {error}");
            ExitCode::FAILURE
        }
    }
}

/// One measured prompt: a fresh child, initialize and session/new (not timed), then the
/// `/flood` turn (timed), checked to deliver exactly `count` chunks.
fn one_turn(agent: &AgentSpec, cwd: &Path, count: u64, bytes: usize) -> Result<Turn, PeerError> {
    let mut peer = Peer::start(agent, cwd)?;
    let turn = peer.prompt(&format!("/flood {count} {bytes}"))?;
    if turn.chunks != count {
        return Err(PeerError::Unexpected(format!(
            "{}: {} chunks arrived, {count} were asked for",
            agent.name, turn.chunks
        )));
    }
    Ok(turn)
}

fn throughput(options: &Options, cwd: &Path) -> Result<(), PeerError> {
    let agents = options.agents();
    println!(
        "== throughput: /flood {} {} through a child process, {} rounds after 1 warm-up, round-robin",
        options.count, options.bytes, options.rounds
    );
    let load_before = load_average();
    // turns[agent][round]
    let mut turns: [Vec<Turn>; 2] = [Vec::new(), Vec::new()];
    for round in 0..=options.rounds {
        // Alternate who goes first, so neither always meets the other's leftovers.
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for index in order {
            let turn = one_turn(&agents[index], cwd, options.count, options.bytes)?;
            let label = if round == 0 { "warm-up" } else { "round" };
            eprintln!(
                "  {label} {round}: {:<32} {:>12.0} msg/s {:>8.1} MB/s",
                agents[index].name,
                per_second(turn.chunks as f64, turn.elapsed),
                per_second(turn.wire_bytes as f64, turn.elapsed) / 1e6,
            );
            if round > 0 {
                turns[index].push(turn);
            }
        }
    }
    let load_after = load_average();

    println!();
    println!(
        "| agent | msg/s min | msg/s median | msg/s max | MB/s median | ns/msg median | wire B/msg |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (agent, turns) in agents.iter().zip(&turns) {
        let rates = sorted(turns.iter().map(|t| per_second(t.chunks as f64, t.elapsed)));
        let mbs = sorted(
            turns
                .iter()
                .map(|t| per_second(t.wire_bytes as f64, t.elapsed) / 1e6),
        );
        let bytes_per_msg = turns[0].wire_bytes as f64 / turns[0].chunks.max(1) as f64;
        println!(
            "| {} | {} | {} | {} | {:.1} | {:.0} | {:.0} |",
            agent.name,
            thousands(rates[0]),
            thousands(median(&rates)),
            thousands(rates[rates.len() - 1]),
            median(&mbs),
            1e9 / median(&rates),
            bytes_per_msg,
        );
    }
    let ratios = sorted(turns[0].iter().zip(&turns[1]).map(|(ours, official)| {
        per_second(ours.chunks as f64, ours.elapsed)
            / per_second(official.chunks as f64, official.elapsed)
    }));
    println!();
    println!(
        "ratio ours / official, msg/s, same round: median {:.1}x (min {:.1}x, max {:.1}x; target >= 10x)",
        median(&ratios),
        ratios[0],
        ratios[ratios.len() - 1]
    );
    println!("load average (1/5/15 min): before {load_before}, after {load_after}");
    println!();
    Ok(())
}

fn memory(options: &Options, cwd: &Path) -> Result<(), PeerError> {
    println!(
        "== memory: /flood {} {} to a client that reads nothing, sampled every 10 ms for {} s \
(cap {} MiB resident)",
        options.memory_count, options.bytes, options.memory_secs, options.memory_cap_mib
    );
    println!();
    println!(
        "| agent | RSS before prompt MiB | peak VmHWM MiB | VmRSS at end MiB | sampled s | then |"
    );
    println!("|---|---:|---:|---:|---:|---|");
    let load_before = load_average();
    for (index, agent) in options.agents().iter().enumerate() {
        let mut peer = Peer::start(agent, cwd)?;
        let pid = peer.pid();
        let before = Memory::of(pid).unwrap_or_default();
        let prompt = format!("/flood {} {}", options.memory_count, options.bytes);
        let start = Instant::now();
        let id = peer.send_prompt(&prompt)?;
        let limit = Duration::from_secs_f64(options.memory_secs);
        let (peak, last, sampled) = sample_while_unread(pid, limit, options.memory_cap_mib);
        // Our agent must have paused, not dropped: read the whole flood now and count it. The
        // official agent's queue would take a minute to drain, so it is only killed.
        let then = if index == 0 {
            let turn = peer.finish_prompt(id, start)?;
            if turn.chunks != options.memory_count {
                return Err(PeerError::Unexpected(format!(
                    "{}: {} chunks arrived after the pause, {} were asked for",
                    agent.name, turn.chunks, options.memory_count
                )));
            }
            let after = Memory::of(pid).unwrap_or_default();
            format!(
                "read on: all {} chunks arrived, peak VmHWM then {} MiB",
                turn.chunks,
                mib(after.hwm_kib)
            )
        } else {
            "killed".to_owned()
        };
        println!(
            "| {} | {} | {} | {} | {:.1} | {then} |",
            agent.name,
            mib(before.rss_kib),
            mib(peak.hwm_kib),
            mib(last.rss_kib),
            sampled.as_secs_f64(),
        );
        drop(peer);
    }
    println!();
    println!(
        "load average (1/5/15 min): before {load_before}, after {}",
        load_average()
    );
    Ok(())
}

/// Our agent over one long turn: `/flood N B` unread for `stall_secs` (the agent pauses),
/// then read at full speed to the end; the turn is saved before its answer (R-STORE-5; one more
/// `initialize` here before the reading), and once more when stdin closes. The
/// peak is the kernel's `VmHWM`.
fn long_turn(options: &Options, cwd: &Path) -> Result<(), PeerError> {
    let [ours, _] = options.agents();
    println!(
        "== long turn: /flood {} {}, nothing read for {} s, then read at full speed; the turn is \
saved as it ends (ours only: the official agent saves nothing)",
        options.memory_count, options.bytes, options.stall_secs
    );
    println!();
    println!(
        "| agent | RSS before prompt MiB | VmHWM after the stall MiB | VmHWM after the answer \
and the next request (turn saved) MiB | VmHWM at exit (saved again) MiB | session file MiB | read after the stall s |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let load_before = load_average();
    let mut peer = Peer::start(&ours, cwd)?;
    let pid = peer.pid();
    let before = Memory::of(pid).unwrap_or_default();
    let prompt = format!("/flood {} {}", options.memory_count, options.bytes);
    let id = peer.send_prompt(&prompt)?;
    let stall = Duration::from_secs_f64(options.stall_secs);
    let (stalled, _, _) = sample_while_unread(pid, stall, options.memory_cap_mib);
    let start = Instant::now();
    let turn = peer.finish_prompt(id, start)?;
    if turn.chunks != options.memory_count {
        return Err(PeerError::Unexpected(format!(
            "{}: {} chunks arrived, {} were asked for",
            ours.name, turn.chunks, options.memory_count
        )));
    }
    // The next request: the agent has saved the turn before it answers.
    peer.ping()?;
    let answered = Memory::of(pid).unwrap_or_default();
    let (status, at_exit) = peer.close_and_wait(Duration::from_secs(30));
    if !status.is_some_and(|s| s.success()) {
        return Err(PeerError::Unexpected(format!(
            "{}: exited with {status:?} after stdin closed",
            ours.name
        )));
    }
    let file = session_file(cwd, peer.session_id())
        .and_then(|path| std::fs::metadata(path).ok())
        .map_or_else(|| "missing".to_owned(), |m| mib(m.len() / 1024));
    println!(
        "| {} | {} | {} | {} | {} | {file} | {:.1} |",
        ours.name,
        mib(before.rss_kib),
        mib(stalled.hwm_kib),
        mib(answered.hwm_kib),
        mib(at_exit.hwm_kib),
        turn.elapsed.as_secs_f64(),
    );
    println!();
    println!("target (issue 18): peak under 64 MiB");
    println!(
        "load average (1/5/15 min): before {load_before}, after {}",
        load_average()
    );
    Ok(())
}

/// The file our agent saved `session` to in `cwd`: `<stamp>_<id>.json` (ids of the demo
/// agent need no escaping).
fn session_file(cwd: &Path, session: &str) -> Option<PathBuf> {
    let suffix = format!("_{session}.json");
    std::fs::read_dir(cwd.join(".agentao/sessions"))
        .ok()?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.ends_with(&suffix))
        })
}

/// Samples the child's memory every 10 ms for `limit` (or until it passes the cap or exits):
/// the highest reading, the last one, and how long it sampled.
fn sample_while_unread(pid: u32, limit: Duration, cap_mib: u64) -> (Memory, Memory, Duration) {
    let start = Instant::now();
    let cap_kib = cap_mib * 1024;
    let mut peak = Memory::default();
    let mut last = Memory::default();
    while start.elapsed() < limit {
        let Some(now) = Memory::of(pid) else { break };
        peak.hwm_kib = peak.hwm_kib.max(now.hwm_kib);
        peak.rss_kib = peak.rss_kib.max(now.rss_kib);
        last = now;
        if now.rss_kib > cap_kib {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    (peak, last, start.elapsed())
}

fn per_second(amount: f64, elapsed: Duration) -> f64 {
    amount / elapsed.as_secs_f64().max(1e-9)
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values
}

fn median(sorted: &[f64]) -> f64 {
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    }
}

/// A rate with a k or M suffix.
fn thousands(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.2} M", rate / 1e6)
    } else {
        format!("{:.0} k", rate / 1e3)
    }
}
