//! `acp-cli trace`: record what an editor and an agent say ([`proxy`]), in the conductor's
//! event format or raw ([`format`]).

pub mod format;
pub mod proxy;

use std::path::PathBuf;

use clap::Args;

/// `acp-cli trace`.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// The trace file to write (created or truncated)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Write the exact lines, each as `DIR TS LINE` (`>` client → agent, `<` agent → client),
    /// instead of the conductor's JSON events
    #[arg(long)]
    pub raw: bool,
    /// The agent's command line, after `--`
    #[arg(last = true, required = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// `acp-cli trace --help`.
pub const TRACE_ABOUT: &str = "\
Record what an editor and an agent say: a transparent stdio proxy.

Put it in the editor's agent configuration in place of the agent:

  acp-cli trace --out /tmp/t.jsons -- the-agent --acp

What the editor writes reaches the agent byte for byte and the other way round, invalid lines
included; the agent's stderr passes through; stdin EOF reaches the agent; SIGTERM and SIGINT go
to the agent's process group; the proxy exits with the agent's exit code (128 + N when the
agent died of signal N).

The trace is the official conductor's `.jsons` format (one JSON event per line: `type`
request/response/notification, `ts`, `protocol`, `from`, `to`, `id`, `method`, `session`,
`params`, `is_error`, `payload`), plus `invalid` events for lines that are not JSON-RPC (their
text in `raw`) and `dropped` events if the recorder ever fell behind (it never slows the
exchange down: it drops and counts instead). Check it with `acp-cli lint`, look at it with
`acp-cli view`.";

/// Runs `acp-cli trace …`; returns the exit status.
pub fn run(args: TraceArgs) -> i32 {
    let options = proxy::ProxyOptions {
        out: args.out,
        raw: args.raw,
        agent: args.agent,
    };
    match proxy::run(&options) {
        Ok(status) => status,
        Err(message) => {
            eprintln!("acp-cli trace: {message}");
            2
        }
    }
}
