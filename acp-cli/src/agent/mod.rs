//! `acp-cli --acp --stdio`: the agent editors launch.
//!
//! - [`backend`]: the trait every agent backend sits behind, and the steps a turn asks for.
//! - [`modes`]: the four session mode presets and what they mean for tools.
//! - [`sessions`]: the application side of sessions: cwd checks, ids, mode and model.

pub mod backend;
pub mod modes;
pub mod sessions;
