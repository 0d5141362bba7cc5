//! Sessions that survive the process: the application's side of `crate::store`.
//!
//! Each session's [`SessionHistory`] is fed exactly what goes on the wire (the prompt, every
//! update sent, the stop reason) and saved after every finished turn, after `session/close`
//! and at EOF, so a `kill -9` loses at most the running turn. `session/load` replays a stored
//! history before its answer; `--resume` answers the first `session/new` with a stored
//! session and replays its history right behind that answer (never before it: the client
//! learns the session id from the answer); a prompt sent meanwhile runs after the replay.
//! `session/resume` answers without a replay, as ACP says.
//! `session/list`, `session/close` and `session/delete` are answered here too.
//!
//! A replay goes out only as fast as the outbox drains: its updates wait in a [`Load`] (then
//! the answer) or a [`Replay`] (after it), and [`AgentApp::pump`] sends them while there is
//! room.

use std::collections::VecDeque;
use std::path::PathBuf;

use acp_core::machine::Ticket;
use acp_core::machine::turn::StopReason;
use acp_core::schema::{
    CloseSessionResponse, ContentBlock, DeleteSessionResponse, ListSessionsRequest,
    LoadSessionResponse, McpServer, NewSessionResponse, SessionUpdate, SystemPrompt,
};
use acp_core::wire::ErrorCode;
use acp_core::wire::encode::TextChunkKind;
use serde::Deserialize;

use super::{AgentApp, Notice, Workspace};
use crate::agent::backend::Backend;
use crate::agent::session_map::SessionMap;
use crate::agent::sessions::{
    CwdKind, check_additional_directories, check_cwd, check_system_prompt,
};
use crate::store::{SessionHistory, StoreError, StoreWarning, replay};

/// Most working directories remembered for `session/list` and `session/delete` without a
/// cwd; past it the oldest is forgotten.
pub(super) const MAX_KNOWN_CWDS: usize = 256;

/// The application's persistence state.
#[derive(Debug, Default)]
pub(super) struct Persistence {
    /// Every open session's history, the running turn included.
    histories: SessionMap<SessionHistory>,
    /// `--resume [ID]`, used up by the first `session/new`.
    pub(super) resume: Option<String>,
    /// The working directories of the sessions served, oldest first.
    known_cwds: Vec<PathBuf>,
    /// `session/load`s whose replay is being sent.
    pub(super) loads: Vec<Load>,
    /// Sessions resumed by `--resume` whose replay is being sent behind their answer.
    pub(super) replays: Vec<Replay>,
}

/// The history of a session resumed by `--resume`, still to send after its `session/new`
/// answer. A turn of the session steps only once it is out ([`AgentApp::pump`] sends
/// replays first, and turns only while the outbox has room).
#[derive(Debug)]
pub(super) struct Replay {
    session: String,
    updates: VecDeque<SessionUpdate>,
}

/// A `session/load` in progress: the replay still to send, then the answer.
#[derive(Debug)]
pub(super) struct Load {
    pub(super) ticket: Ticket,
    session: String,
    cwd: String,
    /// The session's additional directories, decided when the request came.
    directories: Vec<String>,
    /// The session's system prompt, decided when the request came.
    system_prompt: Option<String>,
    /// The MCP servers to start once the session is open.
    mcp_servers: Vec<McpServer>,
    updates: VecDeque<SessionUpdate>,
    history: SessionHistory,
}

/// What a client asked for when it reopens a session (checked already): each replaces what
/// was stored, and what it leaves out comes back from the stored session.
#[derive(Clone, Copy, Debug)]
pub(super) struct Requested<'a> {
    /// `additionalDirectories`: a non-empty list is the complete list.
    pub(super) directories: &'a [String],
    /// `systemPrompt`'s text.
    pub(super) system_prompt: Option<&'a str>,
    /// `mcpServers`: started with the session.
    pub(super) mcp_servers: &'a [McpServer],
}

/// The part of `session/load` and `session/resume` params this side needs (the connection
/// has validated the rest).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CwdParam {
    cwd: String,
    /// Read like the schema says: not an array means none, items that are not strings are
    /// skipped.
    #[serde(default)]
    additional_directories: Option<serde_json::Value>,
    /// Decoded by the connection already; `null` is absent.
    #[serde(default)]
    system_prompt: Option<SystemPrompt>,
    /// Validated by the connection already.
    #[serde(default)]
    mcp_servers: Vec<McpServer>,
}

impl CwdParam {
    fn additional_directories(&self) -> Vec<String> {
        match &self.additional_directories {
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl Persistence {
    /// Whether `session`'s stored history is still going out behind its `session/new` answer.
    pub(super) fn is_replaying(&self, session: &str) -> bool {
        self.replays.iter().any(|replay| replay.session == session)
    }

    /// A session is open (new, loaded or resumed) with this history.
    pub(super) fn opened(&mut self, history: SessionHistory, cwd: &str) {
        self.remember_cwd(cwd);
        self.histories
            .insert(history.session_id().to_owned(), history);
    }

    /// A prompt starts a turn: the history it continues, with the prompt recorded.
    pub(super) fn start_turn(
        &mut self,
        session: &str,
        model: &str,
        prompt: &[ContentBlock],
    ) -> &SessionHistory {
        let history = self
            .histories
            .entry(session.to_owned())
            .or_insert_with(|| SessionHistory::new(session, model));
        // The backend reads the session's current model here (set_model may have changed it).
        model.clone_into(&mut history.model);
        history.record_user_prompt(prompt);
        history
    }

    /// An update was sent for `session`.
    pub(super) fn record(&mut self, session: &str, update: &SessionUpdate) {
        if let Some(history) = self.histories.get_mut(session) {
            history.record_update(update);
        }
    }

    /// The history of `session`, to record a run of text chunks in (one lookup for the run).
    pub(super) fn history(&mut self, session: &str) -> Option<&mut SessionHistory> {
        self.histories.get_mut(session)
    }

    /// A plain text chunk was sent for `session`, escaped into its line as `escaped`.
    pub(super) fn record_text(&mut self, session: &str, kind: TextChunkKind, escaped: &str) {
        if let Some(history) = self.histories.get_mut(session) {
            history.record_text_chunk(kind, escaped);
        }
    }

    fn remember_cwd(&mut self, cwd: &str) {
        let cwd = PathBuf::from(cwd);
        self.known_cwds.retain(|known| *known != cwd);
        if self.known_cwds.len() >= MAX_KNOWN_CWDS {
            self.known_cwds.remove(0);
        }
        self.known_cwds.push(cwd);
    }
}

/// The history's stop reason for the connection's.
fn stored_stop(stop: StopReason) -> acp_core::schema::StopReason {
    use acp_core::schema::StopReason as Stored;
    match stop {
        StopReason::EndTurn => Stored::EndTurn,
        StopReason::MaxTokens => Stored::MaxTokens,
        StopReason::MaxTurnRequests => Stored::MaxTurnRequests,
        StopReason::Refusal => Stored::Refusal,
        StopReason::Cancelled => Stored::Cancelled,
    }
}

fn log_warnings(warnings: &[StoreWarning]) {
    for warning in warnings {
        tracing::warn!(path = %warning.path.display(), reason = warning.reason.as_str(), "session file");
    }
}

impl<B: Backend, W: Workspace> AgentApp<B, W> {
    /// Ends the session's running turn in its history (if one runs) and saves it.
    pub(super) fn finish_and_save(&mut self, session: &str, stop: StopReason) {
        if let Some(history) = self.persist.histories.get_mut(session) {
            history.end_turn(stored_stop(stop));
        }
        self.save(session);
    }

    /// Saves the session's history with its current settings: after every turn, on close,
    /// and when it is created (R-SESSION-11: only its header then).
    pub(super) fn save(&mut self, session: &str) {
        let Some(state) = self.sessions.get(session) else {
            return;
        };
        let Some(history) = self.persist.histories.get_mut(session) else {
            return;
        };
        history.model.clone_from(&state.model);
        history.mode = Some(state.mode_id.clone());
        history
            .additional_directories
            .clone_from(&state.additional_directories);
        history.system_prompt.clone_from(&state.system_prompt);
        match self.workspace.save_session(&state.cwd, history) {
            Ok(saved) => {
                log_warnings(&saved.warnings);
                if let Some(path) = saved.path {
                    tracing::info!(session, path = %path.display(), "session saved");
                }
            }
            Err(error) => tracing::warn!(session, %error, "session not saved"),
        }
    }

    /// The additional directories a reopened session gets: the request's list when it has
    /// one (it is the complete list), else the stored list, without the directories that
    /// are gone since (R-SESSION-4: saved with the session, restored on load).
    fn reopened_directories(&self, requested: &[String], stored: &[String]) -> Vec<String> {
        if !requested.is_empty() {
            return requested.to_vec();
        }
        stored
            .iter()
            .filter(|dir| {
                let usable = std::path::Path::new(dir).is_absolute()
                    && self.workspace.cwd_kind(dir) == CwdKind::Directory;
                if !usable {
                    tracing::warn!(
                        directory = dir.as_str(),
                        "stored additional directory is gone; not restored"
                    );
                }
                usable
            })
            .cloned()
            .collect()
    }

    /// `--resume`: answers the first `session/new` with the stored session. Returns whether
    /// it did; `false` means: open a fresh session (the reason is logged).
    pub(super) fn resume_session(
        &mut self,
        ticket: Ticket,
        cwd: &str,
        requested: Requested<'_>,
        selector: &str,
    ) -> bool {
        let wanted = (!selector.is_empty()).then_some(selector);
        let loaded = match self.workspace.load_session(cwd, wanted) {
            Ok(loaded) => loaded,
            Err(error) => {
                tracing::warn!(
                    "--resume: {error}; the first session/new starts a fresh session instead"
                );
                return false;
            }
        };
        log_warnings(&loaded.warnings);
        let mut history = loaded.history;
        history.additional_directories =
            self.reopened_directories(requested.directories, &history.additional_directories);
        if let Some(prompt) = requested.system_prompt {
            history.system_prompt = Some(prompt.to_owned());
        }
        let id = history.session_id().to_owned();
        if self.sessions.get(&id).is_some() || self.conn.session_state(&id).is_some() {
            tracing::warn!(
                session = id.as_str(),
                "--resume: the session is already open; the first session/new starts a fresh session instead"
            );
            return false;
        }
        let stored = self
            .sessions
            .open_stored(&id, cwd, history.mode.as_deref(), &history.model);
        if let Some(session) = self.sessions.get_mut(&id) {
            session
                .additional_directories
                .clone_from(&history.additional_directories);
            session.system_prompt.clone_from(&history.system_prompt);
        }
        let mut answer = NewSessionResponse::default();
        answer.session_id = id.clone();
        answer.modes = stored.modes;
        answer.config_options = stored.config_options;
        if let Err(error) = self.conn.accept_new_session(ticket, &answer) {
            tracing::warn!(%error, "session/new answer not sent");
            self.sessions.remove(&id);
            return false;
        }
        let updates = self.replayed(&history);
        tracing::info!(
            session = id.as_str(),
            cwd,
            turns = history.turn_count(),
            replayed = updates.len(),
            "session resumed (--resume)"
        );
        if !updates.is_empty() {
            self.persist.replays.push(Replay {
                session: id.clone(),
                updates,
            });
        }
        self.persist.opened(history, cwd);
        self.first_session(cwd);
        self.session_opened(&id, requested.mcp_servers);
        true
    }

    /// `session/load` (replay, then the answer) or `session/resume` (the answer only).
    pub(super) fn load_session(
        &mut self,
        ticket: Ticket,
        session: &str,
        resume: bool,
        params: &str,
    ) {
        let method = if resume {
            "session/resume"
        } else {
            "session/load"
        };
        let (cwd, requested, prompt, mcp_servers) = match serde_json::from_str::<CwdParam>(params) {
            Ok(param) => {
                let requested = param.additional_directories();
                (param.cwd, requested, param.system_prompt, param.mcp_servers)
            }
            Err(error) => {
                let message = format!("Invalid params: {method}.cwd: {error}");
                let _ = self
                    .conn
                    .respond_error(ticket, ErrorCode::INVALID_PARAMS, &message);
                return;
            }
        };
        let checked = check_cwd(method, &cwd, self.workspace.cwd_kind(&cwd))
            .and_then(|()| {
                check_additional_directories(method, &requested, |path| {
                    self.workspace.cwd_kind(path)
                })
            })
            .and_then(|()| {
                prompt
                    .as_ref()
                    .map(|prompt| check_system_prompt(method, prompt))
                    .transpose()
            });
        let system_prompt = match checked {
            Ok(system_prompt) => system_prompt,
            Err(refusal) => {
                tracing::info!(code = refusal.code.0, method, "refused");
                let _ = self
                    .conn
                    .respond_error(ticket, refusal.code, &refusal.message);
                return;
            }
        };
        let loaded = match self.workspace.load_session(&cwd, Some(session)) {
            Ok(loaded) => loaded,
            Err(error) => {
                tracing::info!(session, method, %error, "refused");
                let _ = self
                    .conn
                    .respond_error(ticket, error.code(), &error.rpc_message(method));
                return;
            }
        };
        log_warnings(&loaded.warnings);
        let directories =
            self.reopened_directories(&requested, &loaded.history.additional_directories);
        let system_prompt = system_prompt.or_else(|| loaded.history.system_prompt.clone());
        let updates = if resume {
            VecDeque::new()
        } else {
            self.replayed(&loaded.history)
        };
        tracing::info!(
            session,
            method,
            turns = loaded.history.turn_count(),
            replayed = updates.len(),
            "loading"
        );
        self.persist.loads.push(Load {
            ticket,
            session: session.to_owned(),
            cwd,
            directories,
            system_prompt,
            mcp_servers,
            updates,
            history: loaded.history,
        });
        self.progress_loads();
    }

    /// The updates that replay `history` to this client: all of them, compaction updates
    /// only when it shows them (R-LLM-CONTEXT-2).
    fn replayed(&self, history: &SessionHistory) -> VecDeque<SessionUpdate> {
        replay(history)
            .into_iter()
            .filter(|update| self.client_compaction || !super::is_compaction(update))
            .collect()
    }

    /// Sends what the outbox takes of each replay, and answers the loads whose replay is
    /// out. Bounded by the updates queued.
    pub(super) fn progress_loads(&mut self) {
        // Bounded: each pass sends an update, or answers or drops a load, or returns.
        while let Some(load) = self.persist.loads.first_mut() {
            if let Some(update) = load.updates.front() {
                if !self.conn.has_room_for_updates() {
                    return;
                }
                match self.conn.send_update(&load.session, update) {
                    Ok(()) => {
                        load.updates.pop_front();
                    }
                    Err(acp_core::machine::UsageError::WouldBlock) => return,
                    Err(error) => {
                        tracing::warn!(session = load.session.as_str(), %error, "replay stopped");
                        self.persist.loads.remove(0);
                    }
                }
                continue;
            }
            let load = self.persist.loads.remove(0);
            self.answer_load(load);
        }
    }

    /// Sends what the outbox takes of each `--resume` replay. Bounded by the updates queued.
    pub(super) fn progress_replays(&mut self) {
        // Bounded: each pass sends an update or drops a replay, or returns.
        while let Some(replay) = self.persist.replays.first_mut() {
            let Some(update) = replay.updates.front() else {
                self.persist.replays.remove(0);
                continue;
            };
            if !self.conn.has_room_for_updates() {
                return;
            }
            match self.conn.send_replay(&replay.session, update) {
                Ok(()) => {
                    replay.updates.pop_front();
                }
                Err(acp_core::machine::UsageError::WouldBlock) => return,
                Err(error) => {
                    tracing::warn!(session = replay.session.as_str(), %error, "replay stopped");
                    self.persist.replays.remove(0);
                }
            }
        }
    }

    /// The replay is out: the session opens with its stored mode and model.
    fn answer_load(&mut self, load: Load) {
        let Load {
            ticket,
            session,
            cwd,
            directories,
            system_prompt,
            mcp_servers,
            mut history,
            ..
        } = load;
        // A reloaded session starts over: no turn, no remembered permission answers.
        self.backend.forget_session(&session);
        let answer: LoadSessionResponse =
            self.sessions
                .open_stored(&session, &cwd, history.mode.as_deref(), &history.model);
        if let Some(state) = self.sessions.get_mut(&session) {
            state.additional_directories.clone_from(&directories);
            state.system_prompt.clone_from(&system_prompt);
        }
        history.additional_directories = directories;
        history.system_prompt = system_prompt;
        match self.conn.accept_load(ticket, &answer) {
            Ok(()) => {
                tracing::info!(
                    session = session.as_str(),
                    cwd = cwd.as_str(),
                    "session loaded"
                );
                self.persist.opened(history, &cwd);
                self.first_session(&cwd);
                self.session_opened(&session, &mcp_servers);
            }
            Err(error) => {
                tracing::warn!(session = session.as_str(), %error, "load answer not sent");
                self.sessions.remove(&session);
                self.persist.histories.remove(&session);
            }
        }
    }

    /// `session/list`: the stored sessions of `cwd`, else of every cwd served.
    pub(super) fn list_sessions(&mut self, ticket: Ticket, request: &ListSessionsRequest) {
        // A listed cwd is one the client works in: `session/delete` looks there too.
        if let Some(cwd) = request.cwd.as_deref().filter(|c| c.starts_with('/')) {
            self.persist.remember_cwd(cwd);
        }
        let answered = match self
            .workspace
            .list_sessions(request, &self.persist.known_cwds)
        {
            Ok(page) => {
                log_warnings(&page.warnings);
                self.conn.respond(ticket, &page.response)
            }
            Err(error) => {
                self.conn
                    .respond_error(ticket, error.code(), &error.rpc_message("session/list"))
            }
        };
        if let Err(error) = answered {
            tracing::warn!(%error, "session/list answer not sent");
        }
    }

    /// `session/close`: the connection has closed the session and answered its turn
    /// `cancelled`; the turn stops here, the session is saved and forgotten.
    pub(super) fn close_session(&mut self, ticket: Ticket, session: &str) {
        if self.turns.contains_key(session) {
            self.backend.cancel(session);
        }
        self.end_turn(session);
        self.finish_and_save(session, StopReason::Cancelled);
        self.backend.forget_session(session);
        self.sessions.remove(session);
        self.persist.histories.remove(session);
        self.persist
            .replays
            .retain(|replay| replay.session != session);
        self.notices.push(Notice::McpStop {
            session: session.to_owned(),
        });
        self.mcp_tools.remove(session);
        self.mcp_starting.remove(session);
        self.mcp_deferred.remove(session);
        tracing::info!(session, "session closed");
        if let Err(error) = self.conn.respond(ticket, &CloseSessionResponse::default()) {
            tracing::warn!(%error, "session/close answer not sent");
        }
    }

    /// `session/delete`: removes the stored session from whichever cwd served or listed holds
    /// it (the newest first). An open session is refused: its next save would bring it back.
    /// A session stored nowhere (never saved, or deleted already) is deleted already: `{}`
    /// (R-SESSION-7; ACP's delete is idempotent).
    pub(super) fn delete_session(&mut self, ticket: Ticket, session: &str) {
        if self.sessions.get(session).is_some() {
            let message = format!("session/delete: session '{session}' is open; close it first");
            let _ = self
                .conn
                .respond_error(ticket, ErrorCode::INVALID_REQUEST, &message);
            return;
        }
        for cwd in self.persist.known_cwds.iter().rev() {
            let Some(cwd) = cwd.to_str() else { continue };
            match self.workspace.delete_session(cwd, session) {
                Ok(deleted) => {
                    log_warnings(&deleted.warnings);
                    tracing::info!(session, files = deleted.removed.len(), "session deleted");
                    let _ = self.conn.respond(ticket, &DeleteSessionResponse::default());
                    return;
                }
                Err(
                    StoreError::NotFound { .. }
                    | StoreError::NoSavedSessions
                    | StoreError::NoSessionsDirectory,
                ) => {}
                Err(error) => {
                    let _ = self.conn.respond_error(
                        ticket,
                        error.code(),
                        &error.rpc_message("session/delete"),
                    );
                    return;
                }
            }
        }
        tracing::info!(
            session,
            "session/delete: no stored session; nothing to delete"
        );
        let _ = self.conn.respond(ticket, &DeleteSessionResponse::default());
    }
}
