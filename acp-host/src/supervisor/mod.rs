//! The host side: a sans-IO model of the agent processes a host runs from `.agentao/acp.json`.
//!
//! A host (an editor, a CLI, a daemon) keeps a few ACP agents as child processes. This module
//! holds every decision about them and none of the doing: the driver spawns, signals, reads
//! pipes and reads the clock, feeds what happened in, and carries out the actions that come
//! back. The pieces:
//!
//! - [`config`]: parse and type-check `.agentao/acp.json`, expand `$VAR` in `env`.
//! - [`env`](mod@env): the environment a child gets (the host's, minus provider keys, plus `env`).
//! - [`lifecycle`]: one server's state machine, from spawn to stop, with the stop sequence,
//!   the startup and turn deadlines, and crash recovery.
//! - [`recovery`]: the rule that tells a recoverable death from a fatal one.
//! - [`stderr`]: the last 200 lines a server wrote to stderr.
//! - [`inbox`]: the bounded queue of what servers said while nobody was looking.
//! - [`answer`]: the JSON answer to a permission or input request (options, policy).
//! - [`interaction`]: permission and input requests waiting for the user, with short ids.
//! - [`session`]: when a cached session may be reused (same cwd, same mcpServers).
//! - [`Supervisor`]: all of a host's servers by name, with the inbox and the questions.
//! - [`routing`]: `@name task`, `name: task`, `让 name task`: delegating a line to a server.
//!
//! Time is an [`Instant`]: milliseconds from any origin the driver picks.

pub mod answer;
pub mod config;
pub mod env;
pub mod inbox;
pub mod interaction;
pub mod lifecycle;
pub mod recovery;
mod registry;
pub mod routing;
pub mod session;
pub mod stderr;

pub use registry::{Supervisor, SupervisorError};

pub use acp_core::Instant;
