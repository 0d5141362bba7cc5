//! `acp-cli`: the Agent Client Protocol on real pipes.
//!
//! This binary is the I/O shell around `acp-core`; all protocol decisions live in the core.

use std::io::Write as _;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// The Agent Client Protocol (ACP v1) from the command line.
#[derive(Debug, Parser)]
#[command(name = "acp-cli", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Measure NDJSON decode throughput of a capture.
    #[command(long_about = BENCH_ABOUT)]
    Bench {
        /// The NDJSON capture: one JSON-RPC message per line.
        file: PathBuf,
        /// Print exactly one JSON object on stdout instead of the table.
        #[arg(long)]
        json: bool,
        /// Timed passes per path; each path is reported at its median pass.
        #[arg(long, default_value_t = acp_cli::bench::DEFAULT_PASSES)]
        passes: usize,
    },
}

const BENCH_ABOUT: &str = "\
Measure NDJSON decode throughput of a capture.

The file is read into memory once, then decoded several times (--passes) along three paths,
each reported at its median pass in MB/s (10^6 bytes) and messages/s:

  envelope  framing (lines out of 64 KiB reads, UTF-8 checked) + the JSON-RPC envelope scan,
            which validates the whole line and classifies it
  borrowed  the same + the borrowed, allocation-free view picked by the method (responses by
            the method of the request they answer), reading the text each message carries
  owned     the same + the owned typed decode picked by the method

Also prints how many messages each method has (requests and notifications by method,
responses under \"(response)\"). Lines that are not JSON-RPC messages, or whose params or
result do not fit the method's type, are counted as invalid, never fatal.

With --json, prints exactly one JSON object: {\"file\", \"bytes\", \"messages\", \"invalid\",
\"passes\", \"paths\": {\"envelope\": {\"mb_per_s\", \"msg_per_s\"}, \"borrowed\": {...},
\"owned\": {...}}, \"methods\": {\"session/update\": N, ...}}.";

fn main() {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Bench { file, json, passes }) => bench(&file, json, passes),
        None => {
            eprintln!("acp-cli: nothing to do yet; run `acp-cli --help`");
            std::process::exit(2);
        }
    }
}

fn bench(file: &std::path::Path, json: bool, passes: usize) {
    let big = std::fs::metadata(file)
        .map(|m| m.len() >= acp_cli::bench::PROGRESS_BYTES as u64)
        .unwrap_or(false);
    let progress = |path: &str, pass: usize, passes: usize| {
        if big {
            eprint!("\racp-cli bench: {path} pass {pass}/{passes}   ");
            let _ = std::io::stderr().flush();
        }
    };
    match acp_cli::bench::run(file, passes, progress) {
        Ok(report) => {
            if big {
                eprintln!();
            }
            if json {
                println!("{}", report.to_json());
            } else {
                print!("{report}");
            }
        }
        Err(error) => {
            eprintln!("acp-cli bench: {error}");
            std::process::exit(2);
        }
    }
}
