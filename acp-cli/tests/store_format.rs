//! The session file: Agentao's format field for field, our lossless round trip, and a file
//! written by Agentao (fixture per R-STORE-1) loading and replaying per R-STORE-4.

mod store_common;

use std::fs;

use acp_cli::store::{EXTENSION_KEY, SessionHistory, SessionStore, StoreConfig, replay};
use acp_core::schema::{
    ContentChunk, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate, StopReason,
    ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolContent, ToolKind,
};
use serde_json::{Value, json};
use store_common::*;

fn store(scratch: &Scratch) -> SessionStore {
    SessionStore::new(scratch.path(), StoreConfig::default())
}

/// A turn with every kind of output the demo backend produces.
fn rich_history() -> SessionHistory {
    let mut history = SessionHistory::new("sess_rich", "demo-model");
    history.record_update(&SessionUpdate::CurrentModeUpdate(
        acp_core::schema::CurrentModeUpdate::new("read-only"),
    ));
    turn(
        &mut history,
        "/think hmm\n/plan A | B\n/tool execute Run tests\nhéllo ✓",
        &[
            thought("hmm"),
            plan(&[
                ("A", PlanEntryStatus::Pending),
                ("B", PlanEntryStatus::Pending),
            ]),
            tool_call("call_1", "Run tests", ToolKind::Execute),
            tool_update("call_1", ToolCallStatus::InProgress, None),
            tool_update("call_1", ToolCallStatus::Completed, Some("3 passed")),
            message("héllo ✓"),
        ],
    );
    turn(
        &mut history,
        "/tool edit Rewrite",
        &[
            tool_call("call_2", "Rewrite", ToolKind::Edit),
            tool_update("call_2", ToolCallStatus::Failed, Some("rejected by user")),
            message("The tool call was rejected."),
        ],
    );
    history
}

/// R-STORE-1: the file is in Agentao's format.
#[test]
fn the_file_has_agentaos_keys_in_order_pretty_printed_and_unescaped() {
    let scratch = Scratch::new("format-keys");
    let mut history = rich_history();
    let saved = store(&scratch).save(&mut history, at(5)).unwrap();
    let path = saved.path.unwrap();
    let text = fs::read_to_string(&path).unwrap();

    assert!(
        text.starts_with("{\n  \"session_id\": \"sess_rich\",\n  \"title\": "),
        "{text}"
    );
    assert!(text.contains("héllo ✓"), "non-ASCII is written as is");
    let keys: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("  \"") && !line.starts_with("   "))
        .map(|line| line.trim_start().split('"').nth(1).unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "title",
            "created_at",
            "updated_at",
            "model",
            "active_skills",
            "messages",
            EXTENSION_KEY
        ]
    );

    let file: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        file["title"],
        "/think hmm\n/plan A | B\n/tool execute Run tests\nhéllo ✓"
    );
    assert_eq!(file["created_at"], "2026-11-21T07:00:05.000000+00:00");
    assert_eq!(file["updated_at"], "2026-11-21T07:00:05.000000+00:00");
    assert_eq!(file["model"], "demo-model");
    assert_eq!(file["active_skills"], json!([]));
    assert_eq!(
        file["messages"],
        json!([
            {"role": "user", "content": "/think hmm\n/plan A | B\n/tool execute Run tests\nhéllo ✓"},
            {"role": "assistant", "content": null, "reasoning_content": "hmm", "tool_calls": [
                {"id": "plan_0_1", "type": "function", "function": {"name": "todo_write",
                    "arguments": "{\"todos\":[{\"content\":\"A\",\"status\":\"pending\"},{\"content\":\"B\",\"status\":\"pending\"}]}"}},
                {"id": "call_1", "type": "function", "function": {"name": "run_shell_command", "arguments": "{}"}}
            ]},
            {"role": "tool", "content": "Todo list updated.", "tool_call_id": "plan_0_1", "name": "todo_write"},
            {"role": "tool", "content": "3 passed", "tool_call_id": "call_1", "name": "run_shell_command"},
            {"role": "assistant", "content": "héllo ✓"},
            {"role": "user", "content": "/tool edit Rewrite"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_2", "type": "function", "function": {"name": "write_file", "arguments": "{}"}}
            ]},
            {"role": "tool", "content": "Error: rejected by user", "tool_call_id": "call_2", "name": "write_file"},
            {"role": "assistant", "content": "The tool call was rejected."}
        ])
    );
    assert_eq!(file[EXTENSION_KEY]["version"], 1);
    assert_eq!(file[EXTENSION_KEY]["message_count"], 9);
    assert_eq!(file[EXTENSION_KEY]["mode"], "read-only");
}

#[test]
fn save_then_load_gives_back_the_same_history_and_replay() {
    let scratch = Scratch::new("format-round-trip");
    let store = store(&scratch);
    let mut history = rich_history();
    store.save(&mut history, at(1)).unwrap();
    turn(&mut history, "third", &[message("three")]);
    store.save(&mut history, at(2)).unwrap();

    let loaded = store.load("sess_rich").unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.history.turns(), history.turns());
    assert_eq!(loaded.history.mode.as_deref(), Some("read-only"));
    assert_eq!(loaded.history.model, "demo-model");
    assert_eq!(
        loaded.history.created_at(),
        Some(at(1)),
        "created_at survives later saves"
    );
    assert_eq!(loaded.history.turn_count(), 3);
    assert_eq!(replay(&loaded.history), replay(&history));
    assert_eq!(
        scratch.file_names(),
        ["20261121_070001_000000_sess_rich.json"]
    );
}

#[test]
fn a_turn_still_running_is_not_saved() {
    let scratch = Scratch::new("format-running");
    let store = store(&scratch);
    let mut history = simple_history("s1", &["done"]);
    history.record_user_prompt(&[text("running")]);
    history.record_update(&message("half"));
    store.save(&mut history, at(1)).unwrap();
    let loaded = store.load("s1").unwrap();
    assert_eq!(loaded.history.turn_count(), 1);
    assert_eq!(loaded.history.turns().len(), 1);

    // R-SESSION-11: a session without a finished turn is saved too, header only.
    let mut empty = SessionHistory::new("s2", "demo");
    let saved = store.save(&mut empty, at(2)).unwrap();
    assert!(
        saved.path.is_some(),
        "a session exists from its creation on"
    );
    assert_eq!(scratch.file_names().len(), 2);
    let loaded = store.load("s2").unwrap();
    assert_eq!(loaded.history.turn_count(), 0);
    assert!(replay(&loaded.history).is_empty());
}

fn user(text_: &str) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(text(text_)))
}

fn announced(id: &str, title: &str, kind: ToolKind, raw_input: Value) -> SessionUpdate {
    let mut call = ToolCall::new(id, title);
    call.kind = Some(kind);
    call.status = Some(ToolCallStatus::Pending);
    call.raw_input = Some(raw_input);
    SessionUpdate::ToolCall(call)
}

fn finished(id: &str, status: ToolCallStatus, output: Option<&str>) -> SessionUpdate {
    let mut update = ToolCallUpdate::new(id);
    update.status = Some(status);
    update.content =
        output.map(|output| vec![ToolCallContent::Content(ToolContent::new(text(output)))]);
    SessionUpdate::ToolCallUpdate(update)
}

#[test]
fn an_agentao_file_loads_and_replays_per_the_mapping() {
    let scratch = Scratch::new("format-agentao").with_agentao_fixtures();
    let loaded = store(&scratch).load("sess_3f9a1c2e4b5d").unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert!(
        loaded.path.ends_with("20260115_093012_123456.json"),
        "the newest save wins"
    );
    assert_eq!(loaded.history.model, "gpt-4o");
    assert_eq!(loaded.history.turn_count(), 2);

    let mut plan = Plan::default();
    plan.entries = vec![
        PlanEntry::new(
            "Read the code",
            PlanEntryPriority::Medium,
            PlanEntryStatus::Completed,
        ),
        PlanEntry::new(
            "Split the module",
            PlanEntryPriority::Medium,
            PlanEntryStatus::Pending,
        ),
    ];
    let mut orphan = ToolCall::new("call_orphan", "read_file");
    orphan.kind = Some(ToolKind::Read);
    orphan.status = Some(ToolCallStatus::Pending);
    let expected = vec![
        user("List the files and make a plan for the refactor"),
        thought("The user wants a listing first."),
        message("Running it now."),
        announced(
            "call_abc123",
            "run_shell_command",
            ToolKind::Execute,
            json!({"command": "ls"}),
        ),
        finished(
            "call_abc123",
            ToolCallStatus::Completed,
            Some("README.md\nsrc"),
        ),
        SessionUpdate::Plan(plan),
        message("Two entries: README.md and src."),
        user("Now grep for TODO"),
        // No id in the file: one is made up from the message's position.
        announced(
            "replay_000000070000",
            "search_file_content",
            ToolKind::Search,
            json!({"_raw": "not json"}),
        ),
        // No result in the history: it never finished (Agentao would say completed).
        finished("replay_000000070000", ToolCallStatus::Failed, None),
        announced(
            "call_write9",
            "replace",
            ToolKind::Edit,
            json!({"_value": [1, 2]}),
        ),
        finished("call_write9", ToolCallStatus::Failed, None),
        SessionUpdate::ToolCall(orphan),
        finished("call_orphan", ToolCallStatus::Completed, None),
        message("[LLM API error: rate limited]"),
    ];
    let replayed = replay(&loaded.history);
    for (index, (got, want)) in replayed.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "update {index}");
    }
    assert_eq!(replayed.len(), expected.len());
}

#[test]
fn saving_an_agentao_session_keeps_its_fields_and_leaves_one_file() {
    let scratch = Scratch::new("format-agentao-continue").with_agentao_fixtures();
    let store = store(&scratch);
    let mut history = store.load("sess_3f9a").unwrap().history;
    assert_eq!(history.active_skills, ["review"]);
    turn(&mut history, "and now?", &[message("now this")]);
    let saved = store.save(&mut history, at(0)).unwrap();

    // Agentao's created_at (+08:00) becomes the UTC stamp of our file name.
    assert!(
        saved
            .path
            .as_ref()
            .unwrap()
            .ends_with("20260114_100000_000000_sess_3f9a.json")
    );
    assert_eq!(
        saved.removed.len(),
        1,
        "Agentao's copy is superseded: {:?}",
        saved.removed
    );
    assert!(saved.removed[0].ends_with("20260114_180000_000000.json"));
    let file: Value =
        serde_json::from_str(&fs::read_to_string(saved.path.unwrap()).unwrap()).unwrap();
    assert_eq!(file["created_at"], "2026-01-14T10:00:00.000000+00:00");
    assert_eq!(file["active_skills"], json!(["review"]));
    assert_eq!(file["title"], "Hello");

    let again = store.load("sess_3f9a").unwrap().history;
    assert_eq!(again.turn_count(), 2);
    assert_eq!(again.turns(), history.turns());
    // The other session's two Agentao files are not touched.
    assert_eq!(
        scratch.file_names(),
        [
            "20260114_100000_000000_sess_3f9a.json",
            "20260115_092600_000001.json",
            "20260115_093012_123456.json"
        ]
    );
}

/// What Agentao does with our file: it reads `messages` and drops `_acp` when it saves.
fn strip_extension(path: &std::path::Path) {
    let mut file: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    file.as_object_mut().unwrap().remove(EXTENSION_KEY).unwrap();
    fs::write(path, serde_json::to_vec_pretty(&file).unwrap()).unwrap();
}

#[test]
fn our_file_without_its_extension_reads_like_agentao_would() {
    let scratch = Scratch::new("format-messages-only");
    let store = store(&scratch);
    let mut history = rich_history();
    let path = store.save(&mut history, at(1)).unwrap().path.unwrap();
    strip_extension(&path);

    let loaded = store.load("sess_rich").unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(
        loaded.history.mode, None,
        "the mode lives only in the extension"
    );
    let expected = vec![
        user("/think hmm\n/plan A | B\n/tool execute Run tests\nhéllo ✓"),
        thought("hmm"),
        {
            let mut plan = Plan::default();
            plan.entries = vec![
                PlanEntry::new("A", PlanEntryPriority::Medium, PlanEntryStatus::Pending),
                PlanEntry::new("B", PlanEntryPriority::Medium, PlanEntryStatus::Pending),
            ];
            SessionUpdate::Plan(plan)
        },
        announced("call_1", "run_shell_command", ToolKind::Execute, json!({})),
        finished("call_1", ToolCallStatus::Completed, Some("3 passed")),
        message("héllo ✓"),
        user("/tool edit Rewrite"),
        announced("call_2", "write_file", ToolKind::Edit, json!({})),
        finished(
            "call_2",
            ToolCallStatus::Failed,
            Some("Error: rejected by user"),
        ),
        message("The tool call was rejected."),
    ];
    assert_eq!(replay(&loaded.history), expected);
}

#[test]
fn an_extension_that_disagrees_with_the_messages_is_ignored_with_a_warning() {
    let scratch = Scratch::new("format-stale-extension");
    let store = store(&scratch);
    let mut history = simple_history("s", &["one", "two"]);
    let path = store.save(&mut history, at(1)).unwrap().path.unwrap();
    let mut file: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    file["messages"].as_array_mut().unwrap().truncate(2);
    fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();

    let loaded = store.load("s").unwrap();
    assert_eq!(
        loaded.history.turn_count(),
        1,
        "read from the edited messages"
    );
    assert_eq!(loaded.warnings.len(), 1);
    assert_eq!(
        loaded.warnings[0].reason,
        "read from `messages` only: its messages were changed by another program; `_acp` ignored"
    );

    file[EXTENSION_KEY] = json!({"version": 2, "message_count": 2, "turns": []});
    fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();
    let loaded = store.load("s").unwrap();
    assert_eq!(loaded.history.turn_count(), 1);
    assert_eq!(
        loaded.warnings[0].reason,
        "read from `messages` only: `_acp` ignored (unknown version 2)"
    );
}

#[test]
fn the_stop_reason_of_each_turn_survives() {
    let scratch = Scratch::new("format-stop-reasons");
    let store = store(&scratch);
    let mut history = SessionHistory::new("s", "demo");
    history.record_user_prompt(&[text("a")]);
    history.end_turn(StopReason::MaxTokens);
    history.record_user_prompt(&[text("b")]);
    history.end_turn(StopReason::Cancelled);
    store.save(&mut history, at(1)).unwrap();
    let stops: Vec<_> = store
        .load("s")
        .unwrap()
        .history
        .turns()
        .iter()
        .map(|turn| turn.stop_reason)
        .collect();
    assert_eq!(
        stops,
        [Some(StopReason::MaxTokens), Some(StopReason::Cancelled)]
    );
}
