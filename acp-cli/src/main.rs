//! `acp-cli`: the Agent Client Protocol on real pipes.
//!
//! This binary is the I/O shell around `acp-core`; all protocol decisions live in the core.

use clap::Parser;

/// The Agent Client Protocol (ACP v1) from the command line.
#[derive(Debug, Parser)]
#[command(name = "acp-cli", version, about, long_about = None)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
    eprintln!("acp-cli: nothing to do yet; run `acp-cli --help`");
    std::process::exit(2);
}
