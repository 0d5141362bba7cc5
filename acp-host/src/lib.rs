//! What a host does around the Agent Client Protocol, beside speaking it: sans-IO, `no_std`
//! with `alloc`, on top of `acp-core`.
//!
//! - [`supervisor`]: the agent processes a host runs from `.agentao/acp.json`: the config
//!   file, each server's lifecycle (spawn, handshake, deadlines, the stop sequence, crash
//!   recovery), the inbox, questions waiting for the user, and delegation routing
//!   (`@name task`, `name: task`, `让 name task`).
//! - [`sanitize`]: agent text made safe to show on a terminal.
//!
//! None of this is ACP: another host (an editor, a daemon) may want other policy, and an
//! agent never needs it. So it lives here, not in `acp-core`, whose API and footprint stay the
//! protocol's; `docs/architecture.md` says why in full. `acp-cli`'s `host` module is the
//! driver that does the I/O these modules decide, its processes run by `acp-conform`'s
//! `process`.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

extern crate alloc;

pub mod sanitize;
pub mod supervisor;
