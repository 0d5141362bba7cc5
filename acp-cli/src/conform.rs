//! `acp-cli conform`: the arguments, and the run (`acp_conform::runner`) printed the way they
//! ask.

use std::path::PathBuf;

use acp_conform::report;
use acp_conform::runner::{self, Options, RunError};

mod client;

/// `acp-cli conform --help`.
pub const ABOUT: &str = "\
Run the ACP conformance suite against any agent: `acp-cli conform [OPTIONS] -- AGENT [ARGS...]`.

Every case starts the agent afresh (in a new temporary directory, its own process group, killed
after the case), speaks raw NDJSON to it and prints one line: `PASS|FAIL|SKIP <capability>/<case>
[<TIER>] — <why>`. Then a summary per capability, `N passed, M failed, K skipped`, and last the
verdict: `verdict: conformant (…)` or `verdict: not conformant (…)` with the counts per tier.

Every case has a tier, from the spec's words for what it checks: MANDATORY (a MUST), CAPABILITY (a
MUST that applies when the agent advertises or uses a feature), ADVISORY (a SHOULD, or our rule
where the spec is silent), INFORMATIONAL (a measurement). The agent is conformant when no MANDATORY
case failed or was untested (skipped: the harness could not make the agent show the behaviour) and
no CAPABILITY case failed.

Cases are named after the rules of docs/protocol.md (their ids are in `--list`) and grouped by
capability: framing, ids, initialize, rpc, sessions, prompt, cancel, permission, client, process,
latency. Cases that need a behaviour (a long turn, a tool call with permission, a file read) use
the agent's advertised `available_commands` when they match acp-cli's demo commands (/sleep,
/tool, /read, /write, /ask, /echo); otherwise they are skipped, with the reason. Nothing passes
without having been observed.

The agent runs in a temporary directory: a relative program path with a `/`, and relative
arguments with a `/` that exist, are made absolute first.

Exit status: 0 when the verdict is conformant, 1 when it is not (with --strict: 0 when no case of
any tier failed, 1 when one did), 2 when the agent could not be started or never answered
`initialize` (or --only matched nothing).

With --client the suite checks a client instead and plays its agent: `acp-cli conform --client --
CLIENT [ARGS...]`, where the placeholder `{agent}` in the client's command line stands for the
agent's command (`acp-cli conform --client -- acp-cli client --prompt hi -- {agent}`). The client
is started once per case; each case's line says its tier: MANDATORY and CAPABILITY failures fail
the run (exit 1), ADVISORY ones are reported, INFORMATIONAL ones never fail. A client command
without `{agent}` runs the cases one at a time and prints the agent command to point it at.";

/// `acp-cli conform`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ConformArgs {
    /// Run only the cases whose id (`capability/case`) contains PATTERN; `*` is a wildcard;
    /// several patterns separated by commas
    #[arg(long, value_name = "PATTERN")]
    pub only: Option<String>,
    /// Print one JSON document instead of the text lines: the run's metadata, one entry per case
    /// (tier, rule, status, detail; for a failure the exchange and the agent's stderr tail) and
    /// the verdict with counts per tier (docs/conform.md describes it)
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when any case fails, whatever its tier (the verdict is still reported)
    #[arg(long)]
    pub strict: bool,
    /// Also write the results as JUnit XML to FILE
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Multiply every timeout by X (for slow agents or machines)
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    pub timeout_scale: f64,
    /// List the cases (id, rule, what it checks) and exit, without starting the agent
    #[arg(long)]
    pub list: bool,
    /// Cut the harness's writes at random byte boundaries and delay them, and stall its reads,
    /// reproducibly from SEED; the `chaos` cases draw their delays, moments and counts from it
    /// too
    #[arg(long, value_name = "SEED")]
    pub chaos: Option<u64>,
    /// How many cases run at the same time (each against its own agent process)
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Check a client instead of an agent: the command line after `--` is the client's, with
    /// `{agent}` where the agent's command goes
    #[arg(long)]
    pub client: bool,
    /// The scripted agent a client under test runs (started by the suite itself)
    #[arg(long, hide = true, value_name = "TOKEN@ADDR")]
    pub scripted_agent: Option<String>,
    /// Check the remote agent at URL (ws://, wss://, http://, https://) instead of a command;
    /// cases that need the agent's own process are skipped as not applicable
    #[arg(long, value_name = "URL", conflicts_with_all = ["agent", "client"])]
    pub url: Option<String>,
    /// With --url: the bearer token is in FILE [default: the ACP_TOKEN environment variable]
    #[arg(long, value_name = "FILE", requires = "url")]
    pub token_file: Option<PathBuf>,
    /// The agent's command line (with --client: the client's)
    #[arg(last = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// The cases `--url` cannot run, by id, with why: over the network the agent's process is
/// the bridge's (R-NETC-8).
pub const NOT_APPLICABLE_REMOTE: &[(&str, &str)] = &[
    (
        "framing/last-line-without-newline",
        "it needs stdin EOF, which ends the bridge's connection",
    ),
    (
        "framing/oversized-line-bounded",
        "it measures the agent process's memory, which is the bridge's",
    ),
    (
        "framing/invalid-utf8-parse-error",
        "a message that is not UTF-8 cannot travel in a text frame; the bridge answers it",
    ),
    (
        "framing/invalid-utf8-survived",
        "a message that is not UTF-8 cannot travel in a text frame; the bridge answers it",
    ),
    (
        "process/stdin-eof-exits",
        "it needs the agent's own process (stdin EOF, exit)",
    ),
    (
        "process/stdin-eof-before-initialize-exits",
        "it needs the agent's own process (stdin EOF, exit)",
    ),
    (
        "process/stdin-eof-during-turn-exits",
        "it needs the agent's own process (stdin EOF, exit)",
    ),
    (
        "process/sigterm-exits",
        "it needs the agent's own process (signals)",
    ),
    (
        "process/no-orphaned-children",
        "it needs the agent's own process group",
    ),
    (
        "chaos/client-vanishes-mid-turn",
        "it needs the agent's own process (stdin EOF, exit, process group)",
    ),
];

/// Runs the command; returns the exit status.
pub fn run(mut args: ConformArgs) -> i32 {
    if let Some(target) = &args.scripted_agent {
        return acp_conform::client::relay::scripted_agent(target);
    }
    if args.client {
        return client::run(&args);
    }
    let mut cases = acp_conform::cases::all();
    if let Some(url) = &args.url {
        // R-NETC-8: the remote agent is the bridge's process; what needs the agent's own
        // process is not applicable.
        match crate::remote::agent::bridge_command(url, args.token_file.as_deref()) {
            Ok(argv) => args.agent = argv,
            Err(message) => {
                eprintln!("acp-cli conform: {message}");
                return 2;
            }
        }
        let skipped = not_applicable_remote(&cases, args.only.as_deref());
        if !args.json && !args.list {
            for (case, why) in &skipped {
                crate::stdout::print(format_args!(
                    "SKIP {} [{}] — not applicable over --url: {why}\n",
                    case.id(),
                    case.tier.word()
                ));
            }
        }
        cases.retain(|case| !skipped.iter().any(|(s, _)| s.id() == case.id()));
    }
    if args.list {
        for case in cases
            .iter()
            .filter(|c| runner::selected(&c.id(), args.only.as_deref()))
        {
            crate::stdout::print(format_args!(
                "{}  [{}]  {}  {}\n",
                case.id(),
                case.rule,
                case.tier.word(),
                case.doc
            ));
        }
        return 0;
    }
    if args.agent.is_empty() {
        eprintln!("acp-cli conform: no agent given; run `acp-cli conform -- AGENT [ARGS...]`");
        return 2;
    }
    if !(args.timeout_scale.is_finite() && args.timeout_scale > 0.0) {
        eprintln!("acp-cli conform: --timeout-scale must be a positive number");
        return 2;
    }
    let mut options = Options::new(args.agent.clone());
    options.only = args.only.clone();
    options.timeout_scale = args.timeout_scale;
    options.chaos = args.chaos;
    if let Some(jobs) = args.jobs {
        options.jobs = jobs.max(1);
    }
    let Ok(mut junit) = create_junit(args.junit.as_ref()) else {
        return 2;
    };
    let json = args.json;
    let result = runner::run(&cases, &options, |case| {
        if !json {
            crate::stdout::print(format_args!("{}\n", report::case_line(case)));
        }
    });
    let report = match result {
        Ok(report) => report,
        Err(error @ RunError::Start(_)) | Err(error @ RunError::NoCases(_)) => {
            eprintln!("acp-cli conform: {error}");
            return 2;
        }
    };
    if json {
        crate::stdout::print(format_args!("{}\n", report::to_json(&report)));
    } else {
        crate::stdout::print(format_args!("{}", report::summary(&report)));
    }
    if let Some((path, file)) = &mut junit
        && let Err(e) = std::io::Write::write_all(file, report::to_junit(&report).as_bytes())
    {
        eprintln!("acp-cli conform: cannot write {}: {e}", path.display());
        return 2;
    }
    report.exit_code(args.strict)
}

/// Creates `--junit`'s file before the run, so a bad path costs no run; the error is printed
/// here (the caller exits 2).
fn create_junit(path: Option<&PathBuf>) -> Result<Option<(&PathBuf, std::fs::File)>, ()> {
    let Some(path) = path else {
        return Ok(None);
    };
    match std::fs::File::create(path) {
        Ok(file) => Ok(Some((path, file))),
        Err(e) => {
            eprintln!("acp-cli conform: cannot write {}: {e}", path.display());
            Err(())
        }
    }
}

/// The selected cases `--url` cannot run, with why.
fn not_applicable_remote(
    cases: &[acp_conform::case::Case],
    only: Option<&str>,
) -> Vec<(acp_conform::case::Case, &'static str)> {
    cases
        .iter()
        .filter(|case| runner::selected(&case.id(), only))
        .filter_map(|case| {
            NOT_APPLICABLE_REMOTE
                .iter()
                .find(|(id, _)| *id == case.id())
                .map(|(_, why)| (*case, *why))
        })
        .collect()
}
