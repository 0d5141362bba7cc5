//! The host side on real processes: the project-local agents of `.agentao/acp.json`, run as
//! child processes and driven by `acp_host::supervisor`.
//!
//! - `acp_conform::process`: one agent process (own process group, piped stdio, events,
//!   signals), shared with the conformance harness.
//! - [`clock`]: wall time as the supervisor's `Instant`, able to jump ahead.
//! - [`runner`]: carries out the supervisor's actions on the processes, feeds their events
//!   back, and hands the connection glue what concerns the ACP connection.
//! - [`commands`]: the `/acp` commands: parsing and the texts they print.
//! - [`Host`]: a project's config loaded, its agents, the commands carried out, `stop_all`.
//!
//! This is the only place in the host that spawns, signals or reads the clock; every decision
//! stays in the core.

pub(crate) mod clock;
pub mod commands;
mod project;
pub mod runner;

pub use project::{CommandOutput, Host, HostError};
