//! The history model (recording what the agent sends), the replay mapping, titles and
//! timestamps.

mod store_common;

use acp_cli::store::{SessionHistory, Timestamp, TurnItem, replay};
use acp_core::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, PlanEntryStatus, SessionUpdate, StopReason,
    ToolCallStatus, ToolKind,
};
use store_common::*;

fn kinds(updates: &[SessionUpdate]) -> Vec<&str> {
    updates.iter().map(SessionUpdate::kind).collect()
}

#[test]
fn text_chunks_join_and_the_order_of_output_is_kept() {
    let mut history = SessionHistory::new("s", "demo");
    turn(
        &mut history,
        "go",
        &[
            thought("let me "),
            thought("think"),
            message("Hel"),
            message("lo"),
            thought("again"),
        ],
    );
    let items = &history.turns()[0].items;
    assert_eq!(
        items,
        &vec![
            TurnItem::Thought(text("let me think")),
            TurnItem::Message(text("Hello")),
            TurnItem::Thought(text("again")),
        ]
    );
}

#[test]
fn tool_call_updates_merge_into_the_final_state() {
    let mut history = SessionHistory::new("s", "demo");
    turn(
        &mut history,
        "run",
        &[
            tool_call("t1", "Run tests", ToolKind::Execute),
            tool_update("t1", ToolCallStatus::InProgress, Some("partial")),
            tool_update("t1", ToolCallStatus::Completed, Some("all green")),
        ],
    );
    let TurnItem::ToolCall(call) = &history.turns()[0].items[0] else {
        panic!("expected a tool call, got {:?}", history.turns()[0].items);
    };
    assert_eq!(call.title, "Run tests");
    assert_eq!(call.kind(), ToolKind::Execute);
    assert_eq!(call.status(), ToolCallStatus::Completed);
    assert_eq!(
        call.content.len(),
        1,
        "content replaces, it does not append"
    );
}

#[test]
fn replay_sends_each_tool_call_with_the_status_it_really_ended_with() {
    let mut history = SessionHistory::new("s", "demo");
    turn(
        &mut history,
        "two tools",
        &[
            tool_call("ok", "Allowed", ToolKind::Edit),
            tool_update("ok", ToolCallStatus::Completed, Some("done")),
            tool_call("no", "Rejected", ToolKind::Execute),
            tool_update("no", ToolCallStatus::Failed, None),
        ],
    );
    let updates = replay(&history);
    assert_eq!(
        kinds(&updates),
        [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "tool_call",
            "tool_call_update"
        ]
    );
    let SessionUpdate::ToolCall(announced) = &updates[1] else {
        unreachable!()
    };
    assert_eq!(announced.status, Some(ToolCallStatus::Pending));
    assert_eq!(announced.kind, Some(ToolKind::Edit));
    assert_eq!(announced.title, "Allowed");
    let SessionUpdate::ToolCallUpdate(ok) = &updates[2] else {
        unreachable!()
    };
    assert_eq!(
        (ok.tool_call_id.as_str(), ok.status),
        ("ok", Some(ToolCallStatus::Completed))
    );
    assert!(ok.content.is_some());
    let SessionUpdate::ToolCallUpdate(no) = &updates[4] else {
        unreachable!()
    };
    assert_eq!(
        (no.tool_call_id.as_str(), no.status),
        ("no", Some(ToolCallStatus::Failed))
    );
    assert_eq!(no.content, None, "no content recorded, none replayed");
}

#[test]
fn replay_follows_the_turn_order_across_turns() {
    let mut history = SessionHistory::new("s", "demo");
    turn(
        &mut history,
        "first",
        &[
            thought("hmm"),
            message("answer"),
            plan(&[
                ("A", PlanEntryStatus::Pending),
                ("B", PlanEntryStatus::Completed),
            ]),
        ],
    );
    turn(&mut history, "second", &[message("more")]);
    let updates = replay(&history);
    assert_eq!(
        updates,
        vec![
            SessionUpdate::UserMessageChunk(ContentChunk::new(text("first"))),
            thought("hmm"),
            message("answer"),
            plan(&[
                ("A", PlanEntryStatus::Pending),
                ("B", PlanEntryStatus::Completed)
            ]),
            SessionUpdate::UserMessageChunk(ContentChunk::new(text("second"))),
            message("more"),
        ]
    );
}

#[test]
fn a_running_turn_is_neither_counted_nor_replayed() {
    let mut history = simple_history("s", &["one"]);
    history.record_user_prompt(&[text("two")]);
    history.record_update(&message("partial"));
    assert_eq!(history.turn_count(), 1);
    assert_eq!(history.turns().len(), 2);
    assert_eq!(
        kinds(&replay(&history)),
        ["user_message_chunk", "agent_message_chunk"]
    );
    history.end_turn(StopReason::Cancelled);
    assert_eq!(history.turn_count(), 2);
    assert_eq!(history.turns()[1].stop_reason, Some(StopReason::Cancelled));
}

#[test]
fn a_new_prompt_ends_a_turn_left_running_as_cancelled() {
    let mut history = SessionHistory::new("s", "demo");
    history.record_user_prompt(&[text("one")]);
    history.record_update(&message("a"));
    history.record_user_prompt(&[text("two")]);
    history.record_update(&message("b"));
    history.end_turn(StopReason::EndTurn);
    let stops: Vec<_> = history
        .turns()
        .iter()
        .map(|turn| turn.stop_reason)
        .collect();
    assert_eq!(
        stops,
        [Some(StopReason::Cancelled), Some(StopReason::EndTurn)]
    );
    assert_eq!(history.turns()[1].items, vec![TurnItem::Message(text("b"))]);
}

#[test]
fn output_outside_a_turn_is_ignored_but_the_mode_is_kept() {
    let mut history = SessionHistory::new("s", "demo");
    history.record_update(&message("stray"));
    history.record_update(&SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
        "plan",
    )));
    history.end_turn(StopReason::EndTurn);
    assert!(history.turns().is_empty());
    assert_eq!(history.mode.as_deref(), Some("plan"));
}

#[test]
fn empty_prompt_text_blocks_are_not_replayed() {
    let mut history = SessionHistory::new("s", "demo");
    history.record_user_prompt(&[text("  "), text("real")]);
    history.end_turn(StopReason::EndTurn);
    assert_eq!(
        replay(&history),
        vec![SessionUpdate::UserMessageChunk(ContentChunk::new(text(
            "real"
        )))]
    );
}

#[test]
fn title_is_the_first_prompt_without_reminders_cut_at_60_characters() {
    let long = "é".repeat(61);
    let history = simple_history(
        "s",
        &[&format!("<system-reminder>date</system-reminder>  {long}")],
    );
    assert_eq!(history.title(), format!("{}…", "é".repeat(60)));
    let short = simple_history("s", &["<system-reminder>x</system-reminder>\n hi \n"]);
    assert_eq!(short.title(), "hi");
    let exact = simple_history("s", &[&"a".repeat(60)]);
    assert_eq!(exact.title(), "a".repeat(60));
}

#[test]
fn non_text_prompt_blocks_are_kept_and_replayed() {
    let image: ContentBlock =
        serde_json::from_str(r#"{"type":"image","data":"AAAA","mimeType":"image/png"}"#).unwrap();
    let mut history = SessionHistory::new("s", "demo");
    history.record_user_prompt(&[text("look"), image.clone()]);
    history.end_turn(StopReason::EndTurn);
    assert_eq!(
        replay(&history),
        vec![
            SessionUpdate::UserMessageChunk(ContentChunk::new(text("look"))),
            SessionUpdate::UserMessageChunk(ContentChunk::new(image)),
        ]
    );
}

#[test]
fn timestamps_print_and_parse_agentao_iso_times() {
    let stamp = Timestamp(at(0).0 + 123_456);
    assert_eq!(stamp.to_iso(), "2026-11-21T07:00:00.123456+00:00");
    assert_eq!(stamp.file_stamp(), "20261121_070000_123456");
    assert_eq!(Timestamp::parse_iso(&stamp.to_iso()), Some(stamp));
    // Agentao writes local time with its offset; both spell the same instant.
    assert_eq!(
        Timestamp::parse_iso("2026-11-21T15:00:00.123456+08:00"),
        Some(stamp)
    );
    assert_eq!(Timestamp::parse_iso("2026-11-21T07:00:00Z"), Some(at(0)));
    assert_eq!(Timestamp::parse_iso("2026-11-21 07:00:00"), Some(at(0)));
    assert_eq!(
        Timestamp::parse_iso("2026-11-21T02:00:00-0500"),
        Some(at(0))
    );
    assert_eq!(
        Timestamp::parse_iso("2026-11-21T07:00:00.5"),
        Some(Timestamp(at(0).0 + 500_000))
    );
    assert_eq!(
        Timestamp::parse_iso("1969-12-31T23:59:59+00:00"),
        Some(Timestamp(-1_000_000))
    );
    assert_eq!(
        Timestamp::parse_iso("2024-02-29T00:00:00"),
        Some(Timestamp::from_unix_seconds(1_709_164_800))
    );
    for bad in [
        "",
        "yesterday",
        "2026-13-01T00:00:00",
        "2026-02-29T00:00:00",
        "2026-11-21T24:00:00",
        "2026-11-21T07:00:00+8",
        "2026-11-21T07:00:00.",
        "2026-11-21T07:00:00 junk",
        "2026/11/21T07:00:00",
    ] {
        assert_eq!(Timestamp::parse_iso(bad), None, "{bad:?}");
    }
}
