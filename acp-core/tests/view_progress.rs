//! The borrowed views of the updates a client shows beside the conversation (`plan_update`,
//! `plan_removed`, `session_info_update`, `usage_update`, `notice`, `session_message_chunk`)
//! read the same values as the owned types, and fail with the owned types' messages.
#![cfg(feature = "alloc")]

use acp_core::schema::{
    AgentNotification, ContentBlock, NoticeSeverity, PlanUpdateContent, SessionUpdate,
};
use acp_core::view::{AgentNotificationView, PlanBodyView, SessionUpdateView};
use acp_core::wire::JsonStr;
use acp_core::wire::json::parse_value;
use pretty_assertions::assert_eq;

/// The decoded text of a wire string.
fn text(s: JsonStr<'_>) -> String {
    s.to_cow().into_owned()
}

fn params(update: &str) -> String {
    format!(r#"{{"sessionId":"sess_1","update":{update}}}"#)
}

/// Both decodes of `session/update` params; the view's kind is the owned one's.
fn decode(params: &str) -> (SessionUpdateView<'_>, SessionUpdate) {
    let Ok(AgentNotificationView::SessionUpdate(view)) =
        AgentNotificationView::decode("session/update", Some(parse_value(params).unwrap()))
    else {
        panic!("the view did not decode: {params}");
    };
    let Ok(AgentNotification::SessionUpdate(owned)) =
        AgentNotification::decode("session/update", Some(params))
    else {
        panic!("the owned types did not decode: {params}")
    };
    assert_eq!(view.update.kind(), owned.update.kind());
    (view.update, owned.update)
}

/// The view's and the owned types' error messages for the same params.
fn errors(params: &str) -> (String, String) {
    let view = AgentNotificationView::decode("session/update", Some(parse_value(params).unwrap()))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_else(|| panic!("the view decoded: {params}"));
    let owned = AgentNotification::decode("session/update", Some(params))
        .err()
        .map(|e| e.message().to_owned())
        .unwrap_or_else(|| panic!("the owned types decoded: {params}"));
    (view, owned)
}

#[test]
fn plan_update_items_and_markdown_read_like_the_owned_plan() {
    let items = params(
        r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"high","status":"pending"},{"content":7},{"content":"b","priority":"low","status":"completed"}]}}"#,
    );
    let (SessionUpdateView::PlanUpdate(view), SessionUpdate::PlanUpdate(owned)) = decode(&items)
    else {
        panic!("not a plan_update")
    };
    let PlanUpdateContent::Items(owned_items) = &owned.plan else {
        panic!("not items")
    };
    assert_eq!(view.plan.plan_id().map(text).as_deref(), Some("p1"));
    assert_eq!(owned.plan.plan_id(), Some("p1"));
    let entries: Vec<String> = view.plan.entries().map(|e| text(e.content)).collect();
    let owned_entries: Vec<String> = owned_items
        .entries
        .iter()
        .map(|e| e.content.clone())
        .collect();
    assert_eq!(entries, ["a", "b"], "the malformed entry is skipped");
    assert_eq!(entries, owned_entries);

    let markdown = params(
        r##"{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p2","content":"# Plan\n- a","path":"/w/PLAN.md"}}"##,
    );
    let (SessionUpdateView::PlanUpdate(view), SessionUpdate::PlanUpdate(owned)) = decode(&markdown)
    else {
        panic!("not a plan_update")
    };
    let PlanBodyView::Markdown {
        plan_id,
        content,
        path,
        ..
    } = view.plan
    else {
        panic!("not markdown: {:?}", view.plan)
    };
    let PlanUpdateContent::Markdown(owned) = owned.plan else {
        panic!("not markdown")
    };
    assert_eq!(text(plan_id), owned.plan_id);
    assert_eq!(text(content), owned.content);
    assert_eq!(text(content), "# Plan\n- a");
    assert_eq!(path.map(text), owned.path);
    assert_eq!(view.plan.entries().count(), 0);
}

#[test]
fn an_unknown_plan_form_is_kept_by_both() {
    let update = params(
        r#"{"sessionUpdate":"plan_update","plan":{"type":"graph","planId":"p3","nodes":[]}}"#,
    );
    let (SessionUpdateView::PlanUpdate(view), SessionUpdate::PlanUpdate(owned)) = decode(&update)
    else {
        panic!("not a plan_update")
    };
    assert!(matches!(view.plan, PlanBodyView::Unknown(_)));
    assert!(matches!(owned.plan, PlanUpdateContent::Unknown(_)));
    assert_eq!(view.plan.plan_id().map(text).as_deref(), Some("p3"));
    assert_eq!(owned.plan.plan_id(), Some("p3"));
}

#[test]
fn plan_removed_names_the_plan() {
    let update = params(r#"{"sessionUpdate":"plan_removed","planId":"p1"}"#);
    let (SessionUpdateView::PlanRemoved(view), SessionUpdate::PlanRemoved(owned)) = decode(&update)
    else {
        panic!("not a plan_removed")
    };
    assert_eq!(text(view.plan_id), owned.plan_id);
}

#[test]
fn session_info_update_keeps_absent_null_and_set_apart() {
    let update =
        params(r#"{"sessionUpdate":"session_info_update","title":"Fix the bug","updatedAt":null}"#);
    let (SessionUpdateView::SessionInfoUpdate(view), SessionUpdate::SessionInfoUpdate(owned)) =
        decode(&update)
    else {
        panic!("not a session_info_update")
    };
    assert_eq!(view.title.map(|t| t.map(text)), owned.title);
    assert_eq!(
        view.title.flatten().map(text).as_deref(),
        Some("Fix the bug")
    );
    assert_eq!(view.updated_at, Some(None));
    assert_eq!(owned.updated_at, Some(None));

    let update = params(r#"{"sessionUpdate":"session_info_update","title":5}"#);
    let (SessionUpdateView::SessionInfoUpdate(view), SessionUpdate::SessionInfoUpdate(owned)) =
        decode(&update)
    else {
        panic!("not a session_info_update")
    };
    assert_eq!(view.title, None, "a number reads as absent");
    assert_eq!(owned.title, None);
    assert_eq!(view.updated_at, None);
}

#[test]
fn usage_update_reads_numbers_and_a_well_formed_cost() {
    let update = params(
        r#"{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.25,"currency":"USD"}}"#,
    );
    let (SessionUpdateView::UsageUpdate(view), SessionUpdate::UsageUpdate(owned)) = decode(&update)
    else {
        panic!("not a usage_update")
    };
    assert_eq!((view.used, view.size), (owned.used, owned.size));
    assert_eq!((view.used, view.size), (1200, 200_000));
    let cost = view.cost.expect("a cost");
    let owned_cost = owned.cost.expect("an owned cost");
    assert_eq!(cost.amount.get(), "0.25");
    assert_eq!(cost.amount.get().parse::<f64>().unwrap(), owned_cost.amount);
    assert_eq!(text(cost.currency), owned_cost.currency);

    // A malformed cost is dropped by both (default-on-error).
    let update = params(
        r#"{"sessionUpdate":"usage_update","used":1,"size":2,"cost":{"amount":"1","currency":"USD"}}"#,
    );
    let (SessionUpdateView::UsageUpdate(view), SessionUpdate::UsageUpdate(owned)) = decode(&update)
    else {
        panic!("not a usage_update")
    };
    assert_eq!(view.cost, None);
    assert_eq!(owned.cost, None);
}

#[test]
fn notice_reads_severity_title_and_description() {
    let update = params(
        r#"{"sessionUpdate":"notice","severity":"warning","title":"Rate limited","description":"Retrying in 5 s"}"#,
    );
    let (SessionUpdateView::Notice(view), SessionUpdate::Notice(owned)) = decode(&update) else {
        panic!("not a notice")
    };
    assert_eq!(text(view.severity), owned.severity.as_str());
    assert_eq!(owned.severity, NoticeSeverity::Warning);
    assert_eq!(text(view.title), owned.title);
    assert_eq!(view.description.map(text), owned.description);

    let update =
        params(r#"{"sessionUpdate":"notice","severity":"fatal","title":"x","description":false}"#);
    let (SessionUpdateView::Notice(view), SessionUpdate::Notice(owned)) = decode(&update) else {
        panic!("not a notice")
    };
    assert_eq!(text(view.severity), "fatal");
    assert_eq!(owned.severity, NoticeSeverity::Unknown("fatal".into()));
    assert_eq!(view.description, None);
    assert_eq!(owned.description, None);
}

#[test]
fn session_message_chunk_has_its_message_id() {
    let update = params(
        r#"{"sessionUpdate":"session_message_chunk","messageId":"m7","content":{"type":"text","text":"fo"}}"#,
    );
    let (SessionUpdateView::SessionMessageChunk(view), SessionUpdate::SessionMessageChunk(owned)) =
        decode(&update)
    else {
        panic!("not a session_message_chunk")
    };
    assert_eq!(
        view.message_id.map(text).as_deref(),
        Some(owned.message_id.as_str())
    );
    let ContentBlock::Text(owned_text) = &owned.content else {
        panic!("not text")
    };
    assert_eq!(
        view.content.as_text().map(text).as_deref(),
        Some(owned_text.text.as_str())
    );
}

#[test]
fn agent_message_chunks_keep_their_message_id() {
    let update = params(
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"},"messageId":"m1"}"#,
    );
    let (SessionUpdateView::AgentMessageChunk(view), SessionUpdate::AgentMessageChunk(owned)) =
        decode(&update)
    else {
        panic!("not an agent_message_chunk")
    };
    assert_eq!(view.message_id.map(text), owned.message_id);
    assert_eq!(owned.message_id.as_deref(), Some("m1"));
}

#[test]
fn malformed_updates_fail_with_the_owned_messages() {
    for (update, expected) in [
        (
            r#"{"sessionUpdate":"plan_removed"}"#,
            "session/update.update.planId is required",
        ),
        (
            r#"{"sessionUpdate":"plan_update","plan":{"type":"items","entries":[]}}"#,
            "session/update.update.plan.planId is required",
        ),
        (
            r#"{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p"}}"#,
            "session/update.update.plan.content is required",
        ),
        (
            r#"{"sessionUpdate":"plan_update"}"#,
            "session/update.update.plan is required",
        ),
        (
            r#"{"sessionUpdate":"notice","severity":"info"}"#,
            "session/update.update.title is required",
        ),
        (
            r#"{"sessionUpdate":"usage_update","size":2}"#,
            "session/update.update.used is required",
        ),
        (
            r#"{"sessionUpdate":"session_message_chunk","content":{"type":"text","text":"x"}}"#,
            "session/update.update.messageId is required",
        ),
    ] {
        let (view, owned) = errors(&params(update));
        assert_eq!(view, expected, "{update}");
        assert_eq!(owned, expected, "{update}");
    }
}
