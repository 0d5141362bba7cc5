//! Check an ACP agent from your own tests: the conformance suite behind `acp-cli conform`, the
//! protocol rules behind `acp-cli lint`, and the trace format both read.
//!
//! From an agent's own `cargo test` (`acp-conform` as a dev-dependency):
//!
//! ```no_run
//! let report = acp_conform::check(&["target/debug/my-agent", "--stdio"]).unwrap();
//! let failed: Vec<_> = report.cases.iter()
//!     .filter(|c| c.status == acp_conform::Status::Fail)
//!     .map(|c| format!("{} — {}", c.id, c.detail))
//!     .collect();
//! assert!(failed.is_empty(), "{failed:#?}");
//! ```
//!
//! Or ask for the verdict, which weighs each case by its tier ([`Tier`]): conformant when no
//! MANDATORY case failed or went untested and no CAPABILITY case failed.
//!
//! ```no_run
//! let report = acp_conform::check(&["target/debug/my-agent", "--stdio"]).unwrap();
//! let verdict = report.conformance();
//! assert!(verdict.conformant, "{}", verdict.line());
//! ```
//!
//! Every case starts the agent afresh (a new temporary directory, its own process group, killed
//! after the case) and speaks raw NDJSON to it; the cases are named after the rules of the
//! project's `docs/protocol.md`. [`check_with`] takes [`Options`]: which cases, timeouts,
//! parallel jobs, chaos.
//!
//! A recorded exchange is checked with [`lint::check`] over a [`trace::Trace`] read by
//! [`trace::read`] (`acp-cli trace` events, the official conductor's `.jsons`, or `>`/`<`
//! prefixed NDJSON); [`rules::Monitor`] takes the messages one at a time.
//!
//! - [`runner`]: one fresh process per case, a few at a time, results in order ([`Report`]).
//! - [`report`]: a report as text, JSON and JUnit.
//! - [`tier`]: each case's weight (MANDATORY, CAPABILITY, ADVISORY, INFORMATIONAL) and the
//!   run's verdict ([`Conformance`]).
//! - [`cases`]: the cases, one module per capability; [`case`] and `verdict` say what a case
//!   is and what it concludes.
//! - [`client`]: the client suite behind `acp-cli conform --client`: the suite plays the
//!   agent through a scripted agent the client launches, and checks what a client owes.
//! - [`rules`], [`lint`]: the exchange monitor and a whole trace checked by it.
//! - [`trace`]: the trace file formats, written and read.
//! - [`process`]: one agent process on real pipes (own process group, events, signals); the
//!   harness runs the agent under test with it, and `acp-cli`'s host its project agents.
//! - Internal: `subject` (the agent under test as lines), `cx` (the client half of JSON-RPC
//!   that cases use), `terminal_host` (the `terminal/*` it serves when a case offers it),
//!   `profile` (what the agent advertised), `chaos` (`--chaos SEED`).

#![warn(missing_docs, unreachable_pub)]

pub mod case;
pub mod cases;
mod chaos;
pub mod client;
mod cx;
pub mod lint;
pub mod process;
mod profile;
pub mod report;
pub mod rules;
pub mod runner;
mod subject;
mod terminal_host;
pub mod tier;
pub mod trace;
mod verdict;

pub use runner::{CaseReport, Options, Report, RunError};
pub use tier::{Conformance, Tier};
pub use verdict::Status;

use case::conform_case;
use verdict::conform_ensure;

/// Runs every case against `agent` with the default options.
pub fn check<S: AsRef<str>>(agent: &[S]) -> Result<Report, RunError> {
    let options = Options::new(agent.iter().map(|s| s.as_ref().to_string()).collect());
    runner::run(&cases::all(), &options, |_| {})
}

/// Runs the cases `options` selects.
pub fn check_with(options: &Options) -> Result<Report, RunError> {
    runner::run(&cases::all(), options, |_| {})
}
