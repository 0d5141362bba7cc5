//! `acp-cli`: the Agent Client Protocol on real pipes.
//!
//! This binary is the I/O shell around `acp-core`; all protocol decisions live in the core.

use clap::Parser;

/// The Agent Client Protocol (ACP v1) from the command line.
#[derive(Debug, Parser)]
#[command(name = "acp-cli", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    Client(acp_cli::client::command::ClientArgs),
    Repl(acp_cli::repl::ReplArgs),
}

fn main() {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Client(args)) => std::process::exit(acp_cli::client::command::run(args)),
        Some(Command::Repl(args)) => std::process::exit(acp_cli::repl::run(args)),
        None => {
            eprintln!("acp-cli: nothing to do yet; run `acp-cli --help`");
            std::process::exit(2);
        }
    }
}
