//! The cost of `acp-cli trace` on the fastest stream our agent makes: `/flood N 32` read by a
//! minimal client straight from `acp-cli --acp --stdio`, and through `acp-cli trace --out FILE
//! -- acp-cli --acp --stdio` (R-TRACE-2: forwarding must not wait for the recorder). Prints
//! chunks/s of each at their median round and the ratio proxy / direct (the target is ≥ 0.8).
//!
//! `cargo bench -p acp-cli --bench trace_proxy` (`-- --count N --rounds R` to change the load).

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
fn turn(argv: &[String], count: usize) -> Duration {
    let dir = std::env::temp_dir();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(&dir)
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
    let rounds = arg("--rounds", 5);
    let acp = env!("CARGO_BIN_EXE_acp-cli").to_owned();
    let trace = std::env::temp_dir().join(format!("acp-trace-bench-{}.jsons", std::process::id()));
    let direct = vec![acp.clone(), "--acp".into(), "--stdio".into()];
    let proxied = vec![
        acp.clone(),
        "trace".into(),
        "--out".into(),
        trace.display().to_string(),
        "--".into(),
        acp,
        "--acp".into(),
        "--stdio".into(),
    ];
    turn(&direct, count / 10);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    // Interleaved rounds, so both see the same machine load.
    for _ in 0..rounds {
        a.push(turn(&direct, count));
        b.push(turn(&proxied, count));
    }
    let (a, b) = (median(a), median(b));
    let rate = |d: Duration| count as f64 / d.as_secs_f64();
    let recorded = std::fs::read(&trace)
        .map(|t| t.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0);
    println!("/flood {count} 32, median of {rounds} rounds");
    println!(
        "direct:         {:>12.0} chunks/s ({:.3} s)",
        rate(a),
        a.as_secs_f64()
    );
    println!(
        "through trace:  {:>12.0} chunks/s ({:.3} s), {recorded} events recorded",
        rate(b),
        b.as_secs_f64()
    );
    println!("ratio trace/direct: {:.2}", rate(b) / rate(a));
    let _ = std::fs::remove_file(&trace);
}
