//! `acp-cli lint FILE`: a trace checked against the protocol by `acp_conform::lint::check`, one
//! finding per line.

use std::path::PathBuf;

use clap::Args;

use acp_conform::lint::check;
use acp_conform::rules::{MonitorOptions, Severity};
use acp_conform::trace as format;

/// `acp-cli lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// The trace: `acp-cli trace` events (or --raw lines), the official conductor's
    /// `.jsons`, or NDJSON lines prefixed with `>` (client → agent) or `<` (agent → client)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Also warn about requests answered after more than SECS seconds (needs times)
    #[arg(long, value_name = "SECS")]
    pub slow: Option<f64>,
}

/// `acp-cli lint --help`.
pub const ABOUT: &str = "\
Check a trace against the protocol and say who broke which rule.

Accepted forms (one message per line, mixed freely):
  - `acp-cli trace` events and the official conductor's `--trace` `.jsons` events (`from` /
    `to` name the sides; in a conductor chain only the editor's leg is checked);
  - `acp-cli trace --raw` lines: `> TS LINE` (client → agent) and `< TS LINE` (agent → client);
  - plain NDJSON captures with a direction prefix: `> {...}` and `< {...}` (time optional).

Checked: every request answered exactly once with its id echoed; nothing before `initialize`;
methods the other side did not advertise; updates for unknown sessions or after their turn's
answer; permission requests for tool calls no update announced; `session/cancel` not ending the
turn `cancelled`; messages that are not JSON-RPC or do not decode as ACP v1 (with the field
path); unknown methods without a `_` prefix; with --slow, requests answered late.

Output: one finding per line, `LINE: RULE — SIDE: detail` (warnings end in `(warning)`); the
rule ids are described in docs/protocol.md. Exit status: 0 when no finding is an error, 1 when
one is, 2 when the file cannot be read.";

/// Runs `acp-cli lint`; returns the exit status.
pub fn run(args: &LintArgs) -> i32 {
    let bytes = match std::fs::read(&args.file) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("acp-cli lint: cannot read {}: {e}", args.file.display());
            return 2;
        }
    };
    let trace = format::read(&bytes);
    for (line, why) in &trace.unreadable {
        eprintln!("acp-cli lint: line {line} skipped: {why}");
    }
    for (line, count) in &trace.dropped {
        eprintln!(
            "acp-cli lint: line {line}: the recorder dropped {count} messages here; findings near it may be wrong"
        );
    }
    let findings = check(&trace, MonitorOptions { slow: args.slow });
    let mut out = String::new();
    for finding in &findings {
        out.push_str(&format!("{finding}\n"));
    }
    crate::stdout::print(format_args!("{out}"));
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    i32::from(errors > 0)
}
