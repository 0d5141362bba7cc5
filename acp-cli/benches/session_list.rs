//! What a project's saved sessions cost the agent: `session/list` over `--count` saved
//! sessions whose one answer is `--kib` KiB long against as many small ones (one short
//! turn), and the
//! agent's startup with them present (spawn to the `initialize` answer, and `--resume` to the
//! first `session/new` answer, which finds the newest session among them). Each figure is
//! the median of `--rounds` runs of the built `acp-cli --acp --stdio`, as a client would see
//! it; the ratio large/small says whether a listing's cost follows the files' size.
//!
//! A file holds an answer twice (Agentao's `messages` and our `_acp` turns), so the default
//! `--kib 512` makes files of about 1 MiB. `cargo bench -p acp-rs-cli --bench session_list`
//! (`-- --count N --kib K --rounds R`). The sessions are written into temporary directories,
//! removed at the end.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use acp_cli::store::{SESSIONS_DIR, SessionHistory, SessionStore, StoreConfig, Timestamp};
use acp_core::schema::{ContentBlock, ContentChunk, SessionUpdate, StopReason};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The id of the template session; every copy's id has the same length.
const TEMPLATE_ID: &str = "sess_bench_template00";

fn copy_id(n: usize) -> String {
    format!("sess_bench_{n:010}")
}

/// Writes `count` sessions into `<cwd>/.agentao/sessions`: one saved by the store (one turn
/// whose answer is about `bytes` long, streamed as 100-byte chunks the way a model answers),
/// then copies of its file under other ids.
fn populate(cwd: &Path, count: usize, bytes: usize) {
    std::fs::create_dir_all(cwd).expect("a working directory");
    let store = SessionStore::new(cwd, StoreConfig::default());
    let mut history = SessionHistory::new(TEMPLATE_ID, "demo");
    history.record_user_prompt(&[ContentBlock::text("write me a long answer")]);
    let chunk = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.\n";
    for _ in 0..bytes.div_ceil(chunk.len()).max(1) {
        history.record_update(&SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::text(chunk),
        )));
    }
    history.end_turn(StopReason::EndTurn);
    let saved = store
        .save(&mut history, Timestamp::from_unix_seconds(1_700_000_000))
        .expect("the template is saved");
    let template_path = saved.path.expect("a file");
    let template = std::fs::read_to_string(&template_path).expect("the template reads");
    std::fs::remove_file(&template_path).expect("the template goes");
    let dir = cwd.join(SESSIONS_DIR);
    for n in 0..count {
        let id = copy_id(n);
        let text = template.replacen(TEMPLATE_ID, &id, 1);
        let name = SessionStore::file_name_for(&id, Timestamp::from_unix_seconds(1_700_000_000));
        std::fs::write(dir.join(name), text).expect("a copy is written");
    }
}

/// A running agent and its lines.
struct Agent {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: BufReader<std::process::ChildStdout>,
}

impl Agent {
    fn start(cwd: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_acp-cli"))
            .args(["--acp", "--stdio"])
            .args(extra)
            .current_dir(cwd)
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the agent starts");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::with_capacity(1 << 16, child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            lines,
        }
    }

    /// Sends `line` and reads until the answer with this id; returns it.
    fn call(&mut self, line: &str, id: u64) -> String {
        writeln!(self.stdin, "{line}").expect("the agent reads");
        let needle = format!(r#""id":{id},"#);
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.lines.read_line(&mut line).unwrap() > 0,
                "agent ended early"
            );
            if line.contains(&needle) {
                return line;
            }
        }
    }

    fn initialize(&mut self) {
        self.call(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
            0,
        );
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }

    /// Ends the agent without its saves at EOF. A stop after `--resume` would save the
    /// resumed session, and a save keeps at most 20 sessions in the directory (R-STORE-6):
    /// the next round would list 20, not `--count`.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `session/list` of `cwd` by a started agent: the time from the request to its answer.
fn list(cwd: &Path, expected: usize) -> Duration {
    let mut agent = Agent::start(cwd, &[]);
    agent.initialize();
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"session/list","params":{{"cwd":"{}"}}}}"#,
        cwd.display()
    );
    let start = Instant::now();
    let answer = agent.call(&request, 1);
    let took = start.elapsed();
    let listed = answer.matches(r#""sessionId":"#).count();
    assert_eq!(listed, expected.min(50), "a full first page: {answer:.300}");
    agent.stop();
    took
}

/// Spawn to the `initialize` answer, in `cwd`.
fn startup(cwd: &Path) -> Duration {
    let start = Instant::now();
    let mut agent = Agent::start(cwd, &[]);
    agent.initialize();
    let took = start.elapsed();
    agent.stop();
    took
}

/// `--resume`: spawn to the answer of the first `session/new`, which opens the newest saved
/// session of `cwd`.
fn resume(cwd: &Path) -> Duration {
    let start = Instant::now();
    let mut agent = Agent::start(cwd, &["--resume"]);
    agent.initialize();
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#,
        cwd.display()
    );
    let answer = agent.call(&request, 1);
    let took = start.elapsed();
    assert!(answer.contains("sess_bench_"), "resumed: {answer:.300}");
    agent.kill();
    took
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Removes the directory when dropped, so an early panic leaves nothing behind.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() {
    let count = arg("--count", 1000);
    let kib = arg("--kib", 512);
    let rounds = arg("--rounds", 3);
    let root = Scratch(
        std::env::temp_dir().join(format!("acp-session-list-bench-{}", std::process::id())),
    );
    let large = root.0.join("large");
    let small = root.0.join("small");
    let written = Instant::now();
    populate(&large, count, kib * 1024);
    populate(&small, count, 0);
    let size = |cwd: &Path| -> u64 {
        std::fs::read_dir(cwd.join(SESSIONS_DIR))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum()
    };
    println!(
        "{count} sessions of {:.0} KiB and {count} of {:.1} KiB written in {:.1} s",
        size(&large) as f64 / count as f64 / 1024.0,
        size(&small) as f64 / count as f64 / 1024.0,
        written.elapsed().as_secs_f64()
    );

    let mut figures: Vec<(&str, [Vec<Duration>; 2])> = vec![
        ("session/list", Default::default()),
        ("startup (to initialize)", Default::default()),
        ("--resume (to session/new)", Default::default()),
    ];
    // Interleaved rounds, so both sets see the same machine load.
    for _ in 0..rounds {
        for (which, cwd) in [&large, &small].into_iter().enumerate() {
            figures[0].1[which].push(list(cwd, count));
            figures[1].1[which].push(startup(cwd));
            figures[2].1[which].push(resume(cwd));
        }
    }
    println!("median of {rounds} rounds: large | small | ratio");
    for (name, [large, small]) in figures {
        let (large, small) = (median(large), median(small));
        println!(
            "{name:<26} {:>10.1} ms | {:>8.1} ms | {:>6.1}",
            ms(large),
            ms(small),
            large.as_secs_f64() / small.as_secs_f64()
        );
    }
}
