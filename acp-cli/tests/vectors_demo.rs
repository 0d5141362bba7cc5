//! Replays every `vectors/demo/` scenario against the demo agent itself: `acp-cli`'s
//! `AgentApp` with the demo backend (what `acp-cli --acp --stdio` runs), on a virtual clock,
//! with an in-memory workspace where every absolute path is an empty directory. The client's
//! lines go in; the agent's lines must come out byte for byte.
//!
//! These vectors have no `app` steps and no events: the application is the thing under
//! test. Session ids are deterministic (`sess_` + 32 hex digits counting from 1), so the
//! files hold them verbatim. Each vector is replayed whole and in 7-byte pieces.

use std::path::PathBuf;

use acp_cli::agent::app::{AgentApp, DEMO_TITLE, Workspace, agent_config};
use acp_cli::agent::paths::Roots;
use acp_cli::agent::sessions::{CwdKind, SessionTable};
use acp_cli::demo::DemoBackend;
use acp_cli::store::{Deleted, Loaded, Saved, SessionHistory, SessionPage, StoreError};
use acp_core::Instant;
use acp_core::schema::ListSessionsRequest;
use acp_testkit::vectors::{Event, Harness, Vector, load_dir, replay, vectors_dir};

/// A file system where every absolute path is an existing, empty directory and nothing is
/// ever saved: the demo's answers depend on nothing outside the vector.
struct EmptyWorkspace;

impl Workspace for EmptyWorkspace {
    fn cwd_kind(&self, path: &str) -> CwdKind {
        if path.starts_with('/') && !path.contains("missing") {
            CwdKind::Directory
        } else {
            CwdKind::Missing
        }
    }

    fn read(&self, _roots: Roots<'_>, path: &str) -> Result<String, String> {
        Err(format!("cannot read '{path}': No such file or directory"))
    }

    fn write(&self, _roots: Roots<'_>, _path: &str, _content: &str) -> Result<(), String> {
        Ok(())
    }

    fn save_session(&self, _cwd: &str, _history: &mut SessionHistory) -> Result<Saved, StoreError> {
        Ok(Saved::default())
    }

    fn load_session(&self, _cwd: &str, id: Option<&str>) -> Result<Loaded, StoreError> {
        Err(StoreError::NotFound {
            session_id: id.unwrap_or_default().to_owned(),
        })
    }

    fn list_sessions(
        &self,
        _request: &ListSessionsRequest,
        _known_cwds: &[PathBuf],
    ) -> Result<SessionPage, StoreError> {
        Ok(SessionPage {
            response: Default::default(),
            warnings: Vec::new(),
        })
    }

    fn delete_session(&self, _cwd: &str, id: &str) -> Result<Deleted, StoreError> {
        Err(StoreError::NotFound {
            session_id: id.to_owned(),
        })
    }
}

/// The demo agent and the lines it wrote since the last look.
struct Demo {
    app: AgentApp<DemoBackend, EmptyWorkspace>,
    now: Instant,
    outputs: Vec<Vec<u8>>,
}

impl Demo {
    fn new() -> Self {
        Self {
            app: AgentApp::new(
                agent_config(DEMO_TITLE),
                DemoBackend::new(),
                EmptyWorkspace,
                SessionTable::with_nonce(0),
            ),
            now: Instant(0),
            outputs: Vec::new(),
        }
    }

    /// Writes out everything pending, as the driver does, letting paused turns go on.
    fn drain(&mut self) {
        loop {
            let bytes = self.app.poll_transmit().to_vec();
            if bytes.is_empty() {
                return;
            }
            self.app.transmitted(bytes.len());
            for line in bytes.split_inclusive(|b| *b == b'\n') {
                assert_eq!(line.last(), Some(&b'\n'), "whole lines only");
                self.outputs.push(line[..line.len() - 1].to_vec());
            }
            self.app.pump(self.now);
        }
    }
}

impl Harness for Demo {
    fn feed(&mut self, mut bytes: &[u8]) {
        let mut rounds = 0;
        while !bytes.is_empty() || self.app.is_input_held() {
            let taken = self.app.handle_bytes(self.now, bytes);
            bytes = &bytes[taken..];
            self.drain();
            rounds += 1;
            assert!(rounds < 1_000_000, "no progress");
        }
    }

    fn eof(&mut self) {
        self.app.handle_eof(self.now);
        self.drain();
    }

    fn advance_to(&mut self, now_ms: u64) {
        self.now = Instant(now_ms);
        self.app.handle_timeout(self.now);
        self.drain();
    }

    fn take_outputs(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.outputs)
    }

    fn take_events(&mut self) -> Vec<Event> {
        Vec::new()
    }
}

/// Holds the demo agent to every rule its vectors' headers cite (R-DEMO-*);
/// a failure names the vector's rules before its file and line.
#[test]
fn every_demo_vector_replays_whole_and_in_pieces() {
    let vectors: Vec<Vector> =
        load_dir(&vectors_dir().join("demo")).expect("the demo vectors parse");
    assert!(
        !vectors.is_empty(),
        "vectors/demo/ holds at least one scenario"
    );
    for vector in &vectors {
        for chunk in [usize::MAX, 7] {
            let mut demo = Demo::new();
            if let Err(failure) = replay(vector, &mut demo, chunk) {
                panic!("{failure} (pieces of {chunk} bytes)");
            }
        }
    }
}
