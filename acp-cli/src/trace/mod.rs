//! `acp-cli trace`: record what an editor and an agent say ([`proxy`]), in the conductor's
//! event format or raw (`acp_conform::trace`).

pub(crate) mod proxy;
pub(crate) mod replay;

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `acp-cli trace`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct TraceArgs {
    /// The trace file to write (created or truncated)
    #[arg(long, value_name = "FILE", required = true)]
    pub out: Option<PathBuf>,
    /// Write the exact lines, each as `DIR TS LINE` (`>` client → agent, `<` agent → client),
    /// instead of the conductor's JSON events
    #[arg(long)]
    pub raw: bool,
    /// The agent's command line, after `--`
    #[arg(last = true, required = true, value_name = "AGENT")]
    pub agent: Vec<String>,
    /// `replay`, or none to record
    #[command(subcommand)]
    pub command: Option<TraceCommand>,
}

/// What `acp-cli trace` does besides recording.
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Play the client side of a trace against an agent and report where its answers differ
    #[command(long_about = REPLAY_ABOUT)]
    Replay(ReplayArgs),
}

/// `acp-cli trace replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recorded trace: `acp-cli trace` events or --raw lines, the official conductor's
    /// `.jsons`, or NDJSON lines prefixed with `>` (client → agent) or `<` (agent → client)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Seconds to wait for each message of the agent before calling it missing
    #[arg(long, value_name = "SECS", default_value_t = replay::DEFAULT_WAIT_SECS)]
    pub wait: f64,
    /// The agent's command line, after `--`
    #[arg(last = true, required = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// `acp-cli trace replay --help`.
pub(crate) const REPLAY_ABOUT: &str = "\
Play the client side of a recorded trace against a fresh agent and report where the agent's
answers differ: turn a bug report into a regression test.

  acp-cli trace --out bug.jsons -- the-agent --acp     # in the editor: reproduce the bug
  acp-cli trace replay bug.jsons -- the-agent --acp    # after the fix: what changed?

The client's requests and notifications are sent as recorded; the agent's requests
(permission, fs, terminals) get the recorded answers, under the ids the agent uses now; each
message the agent sends is compared with the recorded one, in order. Session ids are mapped
(the id a `session/new` answer gives now replaces the recorded one), as are the ids of the
agent's requests; times are ignored. Accepts every form `acp-cli lint` reads.

Output: one line per difference, `LINE: PATH: recorded R, now N`, with the trace line of the
recorded message, a path into its JSON (`$.params.update.content.text`) and both values as
JSON (`absent` for a missing member), e.g.

  14: $.params.update.content.text: recorded \"hello\", now \"hullo\"

A message that never came reads `LINE: $: recorded {...}, now nothing (the agent ended)`;
messages after the recorded ones read `end: $: recorded nothing, now {...}`. Exit status: 0
when nothing differs, 1 when something does, 2 when the trace cannot be read or the agent
cannot start.";

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
`acp-cli view`, replay it against an agent with `acp-cli trace replay`.";

/// Runs `acp-cli trace …`; returns the exit status.
pub fn run(args: TraceArgs) -> i32 {
    if let Some(TraceCommand::Replay(replay)) = args.command {
        let Ok(wait) = std::time::Duration::try_from_secs_f64(replay.wait) else {
            eprintln!("acp-cli trace replay: --wait must be a number of seconds, 0 or more");
            return 2;
        };
        return replay::run(&replay.file, &replay.agent, wait);
    }
    let Some(out) = args.out else {
        eprintln!("acp-cli trace: --out FILE is required");
        return 2;
    };
    let options = proxy::ProxyOptions {
        out,
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
