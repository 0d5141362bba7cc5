//! The library half of `acp-cli`: everything the binary does, importable by its integration
//! tests. `main.rs` only parses arguments and calls in here.
//!
//! The host side (`host`) runs the project-local agents of `.agentao/acp.json`.

pub mod host;
pub mod store;
