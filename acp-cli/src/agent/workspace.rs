//! The real file system behind [`Workspace`]: cwd checks, the agent's own `/read` and
//! `/write`, and the session store.

use std::path::PathBuf;

use acp_core::schema::ListSessionsRequest;

use super::app::Workspace;
use super::local_fs;
use super::paths::Roots;
use super::sessions::CwdKind;
use crate::store::{
    DEFAULT_PAGE_SIZE, Deleted, Loaded, Saved, SessionHistory, SessionPage, SessionStore,
    StoreConfig, StoreError, Timestamp, list_sessions,
};

/// The real file system.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RealWorkspace;

impl Workspace for RealWorkspace {
    fn cwd_kind(&self, path: &str) -> CwdKind {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => CwdKind::Directory,
            Ok(_) => CwdKind::NotADirectory,
            Err(_) => CwdKind::Missing,
        }
    }

    fn read(&self, roots: Roots<'_>, path: &str) -> Result<String, String> {
        local_fs::read_inside(roots, path)
    }

    fn write(&self, roots: Roots<'_>, path: &str, content: &str) -> Result<(), String> {
        local_fs::write_inside(roots, path, content)
    }

    fn save_session(&self, cwd: &str, history: &mut SessionHistory) -> Result<Saved, StoreError> {
        SessionStore::new(cwd, StoreConfig::default()).save(history, Timestamp::now())
    }

    fn load_session(&self, cwd: &str, id: Option<&str>) -> Result<Loaded, StoreError> {
        let store = SessionStore::new(cwd, StoreConfig::default());
        match id {
            Some(id) => store.load(id),
            None => store.load_latest(),
        }
    }

    fn list_sessions(
        &self,
        request: &ListSessionsRequest,
        known_cwds: &[PathBuf],
    ) -> Result<SessionPage, StoreError> {
        list_sessions(request, known_cwds, DEFAULT_PAGE_SIZE)
    }

    fn delete_session(&self, cwd: &str, id: &str) -> Result<Deleted, StoreError> {
        SessionStore::new(cwd, StoreConfig::default()).delete(id)
    }
}
