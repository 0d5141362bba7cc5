//! The session file is streamed to disk (issue 18 item 4): the bytes are exactly those the
//! in-memory encoder wrote before, for a session with many turns of every kind.
//!
//! `fixtures/store-golden/many_turns.json` is what the in-memory encoder (`serde_json::
//! to_vec_pretty` of the whole file, before the streaming commit) wrote for [`many_turns`]
//! saved at [`at`]`(42)`: a change to it is a change of the file format.

mod store_common;

use std::fs;

use acp_cli::store::{SessionHistory, SessionStore, StoreConfig};
use acp_core::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, PlanEntryStatus, SessionUpdate, StopReason,
    ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolKind,
};
use serde_json::json;
use store_common::*;

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/store-golden/many_turns.json"
);

fn block(value: serde_json::Value) -> ContentBlock {
    serde_json::from_value(value).unwrap()
}

fn call_content(value: serde_json::Value) -> ToolCallContent {
    serde_json::from_value(value).unwrap()
}

/// Forty turns cycling through everything the file format has to say: text split over many
/// chunks, reasoning before and after text (new assistant messages), plans, tool calls
/// completed, failed with and without output, never finished, with diff and terminal
/// content and raw input, prompts of several blocks (links, images, embedded resources,
/// system reminders), escapes and non-ASCII, and every stop reason.
fn many_turns() -> SessionHistory {
    let mut history = SessionHistory::new("sess_many \"quoted\" ✓", "demo-model");
    history.active_skills = vec!["skill-a".into(), "skill \\ b".into()];
    history.record_update(&SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
        "workspace-write",
    )));
    let stops = [
        StopReason::EndTurn,
        StopReason::Cancelled,
        StopReason::MaxTokens,
        StopReason::Refusal,
        StopReason::MaxTurnRequests,
    ];
    for n in 0..40 {
        let prompt = match n % 4 {
            0 => vec![text(&format!(
                "<system-reminder>ctx {n}</system-reminder> prompt {n}: tab\there \"q\" \\ é 🦀"
            ))],
            1 => vec![
                text(&format!("look at {n}")),
                block(json!({"type":"resource_link","uri":format!("file:///w/{n}.rs"),"name":"f"})),
                block(json!({"type":"image","data":"aGk=","mimeType":"image/png"})),
            ],
            2 => vec![block(json!({
                "type":"resource",
                "resource":{"uri":"file:///w/r.txt","text":format!("embedded\n{n}\u{1}")}
            }))],
            _ => vec![text("   ")],
        };
        history.record_user_prompt(&prompt);
        if n % 5 == 0 {
            history.record_update(&SessionUpdate::UserMessageChunk(ContentChunk::new(text(
                "and a late block",
            ))));
        }
        for piece in 0..(n % 7) {
            history.record_update(&thought(&format!("think {n}.{piece} ")));
        }
        for piece in 0..(1 + n % 9) {
            history.record_update(&message(&format!("chunk {n}.{piece}\n")));
        }
        if n % 3 == 0 {
            history.record_update(&SessionUpdate::AgentMessageChunk(ContentChunk::new(block(
                json!({"type":"resource_link","uri":"https://example.invalid/x","name":"x"}),
            ))));
            history.record_update(&message("after a link"));
        }
        if n % 4 == 1 {
            history.record_update(&plan(&[
                ("first \"step\"", PlanEntryStatus::Completed),
                ("second", PlanEntryStatus::InProgress),
                ("third ✓", PlanEntryStatus::Pending),
            ]));
        }
        let id = format!("call_{n}");
        match n % 6 {
            0 => {
                history.record_update(&tool_call(&id, "Run tests", ToolKind::Execute));
                history.record_update(&tool_update(&id, ToolCallStatus::InProgress, None));
                history.record_update(&tool_update(
                    &id,
                    ToolCallStatus::Completed,
                    Some(&format!("{n} passed\nok")),
                ));
            }
            1 => {
                history.record_update(&tool_call(&id, "Rewrite", ToolKind::Edit));
                history.record_update(&tool_update(
                    &id,
                    ToolCallStatus::Failed,
                    Some("rejected by user"),
                ));
            }
            2 => {
                history.record_update(&tool_call(&id, "Delete", ToolKind::Delete));
                history.record_update(&tool_update(&id, ToolCallStatus::Failed, None));
            }
            3 => {
                let mut call = ToolCall::new(&id, "Write x.txt");
                call.kind = Some(ToolKind::Edit);
                call.status = Some(ToolCallStatus::Pending);
                call.raw_input = Some(json!({"path":"/w/x.txt","content":"a\"b\n","n":n}));
                history.record_update(&SessionUpdate::ToolCall(call));
                let mut done = ToolCallUpdate::new(&id);
                done.status = Some(ToolCallStatus::Completed);
                done.content = Some(vec![
                    call_content(json!({"type":"diff","path":"/w/x.txt","newText":"a\"b\n"})),
                    call_content(json!({"type":"terminal","terminalId":"term_1"})),
                    call_content(
                        json!({"type":"content","content":{"type":"text","text":"wrote"}}),
                    ),
                ]);
                history.record_update(&SessionUpdate::ToolCallUpdate(done));
            }
            4 => {
                // Never finished: no final status.
                let mut call = ToolCall::new(&id, "Fetch");
                call.kind = Some(ToolKind::Fetch);
                call.raw_input = Some(json!(["not", "an", "object"]));
                history.record_update(&SessionUpdate::ToolCall(call));
            }
            _ => {
                history.record_update(&tool_call(&id, "Think", ToolKind::Think));
                history.record_update(&tool_update(
                    &id,
                    ToolCallStatus::Failed,
                    Some("Error: already prefixed"),
                ));
            }
        }
        if n % 2 == 0 {
            history.record_update(&thought("second thoughts"));
            history.record_update(&message("closing words"));
        }
        history.end_turn(stops[n % stops.len()]);
    }
    // A turn still running is never written.
    history.record_user_prompt(&[text("unfinished")]);
    history.record_update(&message("half"));
    history
}

#[test]
fn the_streamed_file_is_byte_for_byte_what_the_in_memory_encoder_wrote() {
    let scratch = Scratch::new("stream-golden");
    let store = SessionStore::new(scratch.path(), StoreConfig::default());
    let mut history = many_turns();
    assert_eq!(history.turn_count(), 40);
    let path = store.save(&mut history, at(42)).unwrap().path.unwrap();
    let written = fs::read(&path).unwrap();
    let golden = fs::read(GOLDEN).unwrap();
    assert!(
        written == golden,
        "the session file differs from {GOLDEN} (first difference at byte {:?}, {} vs {} bytes)",
        written.iter().zip(&golden).position(|(a, b)| a != b),
        written.len(),
        golden.len(),
    );
    // Loading it back gives the same turns.
    let loaded = store.load(history.session_id()).unwrap();
    assert_eq!(
        loaded.history.turns(),
        history.turns()[..40].to_vec().as_slice()
    );
}
