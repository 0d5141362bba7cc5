//! The client side on real processes: drive an ACP agent from the command line.
//!
//! - [`link`]: one agent's connection with the requests the host serves itself (`fs/*`).
//! - [`updates`]: what a person is shown of session updates (sanitized).
//! - [`render`]: what a person is shown of questions (sanitized).
//! - [`glue`]: links on top of the host's [`AgentRunner`](crate::host::runner::AgentRunner).
//! - [`terminal`]: typed lines and Ctrl-C.
//! - [`command`]: `acp-cli client`.

pub mod command;
pub(crate) mod glue;
pub(crate) mod link;
pub(crate) mod render;
pub(crate) mod terminal;
pub(crate) mod updates;
