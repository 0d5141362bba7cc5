//! The library half of `acp-cli`: everything the binary does, importable by its integration
//! tests. `main.rs` only parses arguments and calls in here.
//!
//! The host side (`host`) runs the project-local agents of `.agentao/acp.json`; `client` and
//! `repl` drive agents from the command line.

pub mod client;
pub mod host;
pub mod repl;
pub mod store;
