//! Shared helpers of the `store_*` tests: scratch directories and a demo-like turn recorder.
#![allow(dead_code)] // each test file uses a different subset

use std::fs;
use std::path::{Path, PathBuf};

use acp_cli::store::{SessionHistory, Timestamp};
use acp_core::schema::{
    ContentBlock, ContentChunk, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
    StopReason, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolContent, ToolKind,
};

/// A fresh directory under the system temp dir, removed on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(test: &str) -> Self {
        let path = std::env::temp_dir().join(format!("acp-store-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.0.join(".agentao/sessions")
    }

    /// Copies the Agentao fixtures into this project's sessions directory.
    pub fn with_agentao_fixtures(self) -> Self {
        let dir = self.sessions_dir();
        fs::create_dir_all(&dir).unwrap();
        for entry in fs::read_dir(fixtures_dir()).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
        self
    }

    /// The names of the files in the sessions directory, sorted.
    pub fn file_names(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.sessions_dir())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/agentao-sessions"
    ))
}

/// 2026-11-21T07:00:00Z plus `seconds`.
pub fn at(seconds: i64) -> Timestamp {
    Timestamp::from_unix_seconds(1_795_244_400 + seconds)
}

pub fn text(text: &str) -> ContentBlock {
    ContentBlock::text(text)
}

pub fn message(text_: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(text(text_)))
}

pub fn thought(text_: &str) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(text(text_)))
}

pub fn tool_call(id: &str, title: &str, kind: ToolKind) -> SessionUpdate {
    let mut call = ToolCall::new(id, title);
    call.kind = Some(kind);
    call.status = Some(ToolCallStatus::Pending);
    SessionUpdate::ToolCall(call)
}

pub fn tool_update(id: &str, status: ToolCallStatus, output: Option<&str>) -> SessionUpdate {
    let mut update = ToolCallUpdate::new(id);
    update.status = Some(status);
    update.content =
        output.map(|output| vec![ToolCallContent::Content(ToolContent::new(text(output)))]);
    SessionUpdate::ToolCallUpdate(update)
}

pub fn plan(entries: &[(&str, PlanEntryStatus)]) -> SessionUpdate {
    let mut plan = Plan::default();
    for (content, status) in entries {
        plan.entries
            .push(PlanEntry::new(*content, PlanEntryPriority::High, *status));
    }
    SessionUpdate::Plan(plan)
}

/// One finished turn: the prompt, then the updates, then `end_turn`.
pub fn turn(history: &mut SessionHistory, prompt: &str, updates: &[SessionUpdate]) {
    history.record_user_prompt(&[text(prompt)]);
    for update in updates {
        history.record_update(update);
    }
    history.end_turn(StopReason::EndTurn);
}

/// A history with one simple turn per prompt.
pub fn simple_history(id: &str, prompts: &[&str]) -> SessionHistory {
    let mut history = SessionHistory::new(id, "demo");
    for prompt in prompts {
        turn(&mut history, prompt, &[message(&format!("echo: {prompt}"))]);
    }
    history
}
