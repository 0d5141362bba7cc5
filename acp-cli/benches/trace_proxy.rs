//! The cost of `acp-cli trace` on the fastest stream our agent makes: `/flood N 32` read by a
//! minimal client straight from `acp-cli --acp --stdio`, and through `acp-cli trace --out FILE
//! -- acp-cli --acp --stdio` (R-TRACE-2: forwarding must not wait for the recorder). Prints
//! chunks/s of each (direct, `--raw`, `.jsons`) at their median round and the ratio to direct
//! (the target is ≥ 0.8).
//!
//! `cargo bench -p acp-rs-cli --bench trace_proxy` (`-- --count N --rounds R` to change the load).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One `/flood count 32` turn against `argv`; the time from sending the prompt to its answer.
/// Each turn runs in a fresh directory: the agent keeps its sessions under its working
/// directory and looks through them, so a shared one would make every round slower than the
/// last (a flood session is megabytes).
fn turn(argv: &[String], count: usize) -> Duration {
    let dir = std::env::temp_dir().join(format!(
        "acp-trace-bench-cwd-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("a fresh working directory");
    let took = turn_in(argv, count, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    took
}

static NEXT_DIR: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn turn_in(argv: &[String], count: usize, dir: &std::path::Path) -> Duration {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the agent starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::with_capacity(1 << 16, child.stdout.take().unwrap());
    let mut line = String::new();
    let mut read_until = |needle: &str, lines: &mut BufReader<_>| -> String {
        loop {
            line.clear();
            assert!(lines.read_line(&mut line).unwrap() > 0, "agent ended early");
            if line.contains(needle) {
                return line.clone();
            }
        }
    };
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":1}}}}"#
    )
    .unwrap();
    read_until(r#""id":0"#, &mut lines);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#, dir.display()).unwrap();
    let created = read_until(r#""id":1"#, &mut lines);
    let session = created
        .split(r#""sessionId":""#)
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let start = Instant::now();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":"/flood {count} 32"}}]}}}}"#).unwrap();
    read_until(r#""id":2,"result""#, &mut lines);
    let took = start.elapsed();
    drop(stdin);
    let _ = child.wait();
    took
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let count = arg("--count", 200_000);
    let rounds = arg("--rounds", 7);
    let acp = env!("CARGO_BIN_EXE_acp-cli").to_owned();
    let trace = std::env::temp_dir().join(format!("acp-trace-bench-{}.jsons", std::process::id()));
    let agent = [acp.clone(), "--acp".into(), "--stdio".into()];
    let through = |raw: bool| {
        let mut argv = vec![acp.clone(), "trace".into()];
        if raw {
            argv.push("--raw".into());
        }
        argv.extend(["--out".into(), trace.display().to_string(), "--".into()]);
        argv.extend(agent.iter().cloned());
        argv
    };
    let ways = [
        ("direct", agent.to_vec()),
        ("trace --raw", through(true)),
        ("trace (.jsons)", through(false)),
    ];
    turn(&ways[0].1, count / 10);
    let mut times = vec![Vec::new(); ways.len()];
    let mut recorded = 0;
    // Interleaved rounds, so all see the same machine load.
    for _ in 0..rounds {
        for ((_, argv), times) in ways.iter().zip(&mut times) {
            times.push(turn(argv, count));
        }
        recorded = std::fs::read(&trace)
            .map(|t| t.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0);
    }
    let rate = |d: Duration| count as f64 / d.as_secs_f64();
    let medians: Vec<Duration> = times.into_iter().map(median).collect();
    println!("/flood {count} 32, median of {rounds} interleaved rounds");
    for ((name, _), took) in ways.iter().zip(&medians) {
        println!(
            "{name:<16} {:>12.0} chunks/s ({:.3} s), ratio to direct {:.2}",
            rate(*took),
            took.as_secs_f64(),
            rate(*took) / rate(medians[0]),
        );
    }
    println!("last .jsons trace: {recorded} events");
    let _ = std::fs::remove_file(&trace);
}
