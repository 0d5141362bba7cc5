//! `acp-cli conform`: a conformance suite any ACP agent can be run against (issue 15).
//!
//! - [`subject`]: the agent process (via [`crate::host::process`]) and its stdout as lines.
//! - [`cx`]: the client half of JSON-RPC that cases use; serves the agent's requests.
//! - [`case`], [`verdict`]: a case and what it concludes.
//! - [`cases`]: the cases, one module per capability.
//! - [`profile`]: what the agent advertised in the first handshake.
//! - [`runner`]: one fresh process per case, a few at a time, results in order.
//! - [`report`]: text, JSON and JUnit.
//! - [`chaos`]: `--chaos SEED`.
//! - [`command`]: the subcommand.
//!
//! As a library, from an agent's own `cargo test`:
//!
//! ```no_run
//! let report = acp_cli::conform::check(&["target/debug/my-agent", "--stdio"]).unwrap();
//! let failed: Vec<_> = report.cases.iter()
//!     .filter(|c| c.status == acp_cli::conform::Status::Fail)
//!     .map(|c| format!("{} — {}", c.id, c.detail))
//!     .collect();
//! assert!(failed.is_empty(), "{failed:#?}");
//! ```

pub mod case;
pub mod cases;
pub mod chaos;
pub mod command;
pub mod cx;
pub mod profile;
pub mod report;
pub mod runner;
pub mod subject;
pub mod verdict;

pub use runner::{CaseReport, Options, Report, RunError};
pub use verdict::Status;

/// Runs every case against `agent` with the default options.
pub fn check<S: AsRef<str>>(agent: &[S]) -> Result<Report, RunError> {
    let options = Options::new(agent.iter().map(|s| s.as_ref().to_string()).collect());
    runner::run(&cases::all(), &options, |_| {})
}

/// Runs the cases `options` selects.
pub fn check_with(options: &Options) -> Result<Report, RunError> {
    runner::run(&cases::all(), options, |_| {})
}
