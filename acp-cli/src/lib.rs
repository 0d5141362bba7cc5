//! The library half of `acp-cli`: everything the binary does, importable by its integration
//! tests. `main.rs` only parses arguments and calls in here.
//!
//! The host side (`host`) runs the project-local agents of `.agentao/acp.json`; `client` and
//! `repl` drive agents from the command line; the agent side (`agent`, with the `demo`
//! backend, and `llm` behind the `model` seam) is what `acp-cli --acp --stdio` runs. Every
//! command writes to stdout through `stdout`, so a reader that goes away ends it quietly.
//!
//! # Not an API
//!
//! This library is the binary's other half, not a crate to depend on: what is `pub` here is
//! what `main.rs`, the integration tests (`tests/`) and the benches (`benches/`) call, and
//! nothing more (everything else is `pub(crate)`, and `unreachable_pub` keeps it so). It
//! changes whenever the binary does. What is meant for other projects lives in crates of
//! its own: `acp-core` (the protocol), `acp-host` (host policy) and `acp-conform` (the
//! conformance suite, the lint rules and the trace format).
#![warn(missing_docs, unreachable_pub)]
// Its module docs are a map for maintainers, read with `cargo doc --document-private-items`:
// they link to the crate-private modules they describe.
#![allow(rustdoc::private_intra_doc_links)]

pub mod agent;
pub mod bench;
pub mod bridge;
pub mod client;
pub mod conform;
pub mod demo;
pub mod host;
pub mod lint;
pub mod llm;
pub mod mcp;
pub mod model;
pub mod net;
pub mod remote;
pub mod repl;
pub mod serve;
pub mod stdout;
pub mod store;
pub mod trace;
pub mod view;
