//! The library half of `acp-cli`: everything the binary does, importable by its integration
//! tests. `main.rs` only parses arguments and calls in here.
//!
//! The host side (`host`) runs the project-local agents of `.agentao/acp.json`; `client` and
//! `repl` drive agents from the command line; the agent side (`agent`, with the `demo`
//! backend, and `llm` behind the `model` seam) is what `acp-cli --acp --stdio` runs. Every command writes to stdout through
//! `stdout`, so a reader that goes away ends it quietly.

pub mod agent;
pub mod bench;
pub mod client;
pub mod conform;
pub mod demo;
pub mod host;
pub mod lint;
pub mod llm;
pub mod mcp;
pub mod model;
pub mod net;
pub mod repl;
pub mod stdout;
pub mod store;
pub mod trace;
pub mod view;
