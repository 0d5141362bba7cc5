//! `acp-cli --acp --stdio`: the agent editors launch.
//!
//! - [`app`]: the application over the connection: events, sessions, turns and their steps.
//! - [`auth`]: the auth methods a backend with a login offers, and what it is asked.
//! - [`backend`]: the trait every agent backend sits behind, and the steps a turn asks for.
//! - [`connection`]: the application as acp-async's pump sees it (its `Connection`).
//! - [`driver`]: the agent on acp-async's pump (stdin, stdout, the clock), with what is
//!   acp-cli's own: the jobs turns hand out, MCP servers, signals.
//! - [`logging`]: `tracing` to stderr and to `acp-cli.log` in the first session's cwd.
//! - [`local_fs`]: `/read` and `/write` done by the agent itself, confined to the cwd.
//! - [`paths`]: which directories a session's files may live in (cwd and additional
//!   directories), and the lexical rule that keeps a path inside them (R-DEMO-2).
//! - [`modes`]: the four session mode presets and what they mean for tools.
//! - [`reports`]: what every backend says about a session besides the conversation: the
//!   title from the first prompt, the usage.
//! - [`sessions`]: the application side of sessions: cwd checks, ids, mode and model.
//! - [`explore`], [`shell`]: the llm backend's looks at the tree and shell commands, run
//!   by the driver.
//! - [`tools`]: what every backend's tools share: the mode gate, `*_always`, refusal texts.
//! - [`turns`]: the running turns of a backend by session, stepped, resumed and cancelled.
//! - [`workspace`]: the real file system behind the application's `Workspace`.

pub mod app;
pub mod auth;
pub mod backend;
pub(crate) mod connection;
pub mod driver;
pub(crate) mod explore;
pub(crate) mod local_fs;
pub mod logging;
pub(crate) mod modes;
pub mod paths;
pub(crate) mod reports;
pub(crate) mod session_map;
pub mod sessions;
pub(crate) mod shell;
pub(crate) mod tools;
pub(crate) mod turns;
pub(crate) mod workspace;
