//! Sessions that survive the agent: the history of each session, its file in
//! `<cwd>/.agentao/sessions/`, and the replay `session/load` sends.
//!
//! Pure storage: no protocol I/O, no clock (every save takes `now`), no logging (files that
//! could not be read come back as [`StoreWarning`]s for the caller to log). The agent:
//!
//! 1. keeps a [`SessionHistory`] per session and feeds it what it sends:
//!    [`SessionHistory::record_user_prompt`] when a prompt arrives,
//!    [`SessionHistory::record_update`] for every `session/update`, or
//!    [`SessionHistory::record_text_chunk`] with the escaped text acp-core's `send_text_chunk`
//!    returns for a plain text chunk (kept and saved as it is: R-STORE-7),
//!    [`SessionHistory::end_turn`] with the stop reason;
//! 2. calls [`SessionStore::save`] when a session is created (its header, no turn) and after
//!    every finished turn (atomic; a crash loses at most the running turn);
//! 3. answers `session/load` with [`SessionStore::load`] (exact id) and sends [`replay`]'s
//!    updates before the response; `--resume` uses [`SessionStore::load_latest`] or `load`;
//!    `session/list` is [`list_sessions`]; `session/delete` is [`SessionStore::delete`].
//!    Errors carry their wire code and text ([`StoreError::code`], [`StoreError::rpc_message`]).
//!    `session/close` and `session/resume` need nothing more: every finished turn is already
//!    saved, and resume is `load` without the replay.
//!
//! The file format is Agentao's (see the `agentao` module's docs), so Agentao and this agent
//! load each other's sessions (R-STORE-1). Fixed Agentao bugs:
//! lookups match the whole id, never a prefix (R-SESSION-6); a session is saved
//! after every turn, in one file per session, atomically (R-STORE-2); tool calls replay with
//! the status they really ended with.

mod agentao;
mod directory;
mod error;
mod escaped;
mod history;
mod list;
mod replay;
mod text;
mod time;

pub use agentao::EXTENSION_KEY;
pub use directory::{Deleted, Loaded, SESSIONS_DIR, Saved, SessionStore, StoreConfig};
pub use error::{StoreError, StoreWarning};
pub use escaped::EscapedText;
pub use history::{Compaction, SessionHistory, Turn, TurnItem};
pub use list::{DEFAULT_PAGE_SIZE, SessionPage, list_sessions};
pub use replay::replay;
pub use time::Timestamp;
