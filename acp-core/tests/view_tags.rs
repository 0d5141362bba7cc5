//! The views read a tag that comes first once and then walk the members after it, and match
//! member names as sent: these cases check that escaped spellings, spacing and repeats still
//! read as the owned types read them.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

use acp_core::schema::AgentNotification;
use acp_core::view::{AgentNotificationView, ContentBlockView, SessionUpdateView};
use acp_core::wire::json::parse_value;

/// The `session/update` view of `params`, or its error message.
fn view(params: &str) -> Result<SessionUpdateView<'_>, String> {
    let raw = parse_value(params).expect("test input is JSON");
    match AgentNotificationView::decode("session/update", Some(raw)) {
        Ok(AgentNotificationView::SessionUpdate(update)) => Ok(update.update),
        Ok(other) => panic!("not a session/update: {other:?}"),
        Err(error) => Err(error.to_string()),
    }
}

/// The plain text of a chunk's text block.
fn chunk_text<'a>(update: &SessionUpdateView<'a>) -> Option<&'a str> {
    match update {
        SessionUpdateView::AgentMessageChunk(chunk)
        | SessionUpdateView::AgentThoughtChunk(chunk)
        | SessionUpdateView::UserMessageChunk(chunk) => match chunk.content {
            ContentBlockView::Text(text) => text.text.as_plain(),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the owned types decode `params` too.
fn owned_ok(params: &str) -> bool {
    AgentNotification::decode("session/update", Some(params)).is_ok()
}

#[test]
fn escaped_member_names_read_as_their_names() {
    let params = r#"{"session\u0049d":"s1","upd\u0061te":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","te\u0078t":"hi"},"message\u0049d":"m"}}"#;
    let raw = parse_value(params).unwrap();
    let Ok(AgentNotificationView::SessionUpdate(update)) =
        AgentNotificationView::decode("session/update", Some(raw))
    else {
        panic!("escaped names must decode");
    };
    assert_eq!(update.session_id.as_plain(), Some("s1"));
    let SessionUpdateView::AgentMessageChunk(chunk) = update.update else {
        panic!("an agent message chunk");
    };
    assert_eq!(chunk.message_id.and_then(|m| m.as_plain()), Some("m"));
    assert_eq!(chunk_text(&update.update), Some("hi"));
    assert!(owned_ok(params));
}

#[test]
fn escaped_tags_and_spaced_tags_read_as_their_kinds() {
    let escaped = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_thought\u005fchunk","content":{"t\u0079pe":"text","text":"a"}}}"#;
    let update = view(escaped).unwrap();
    assert!(matches!(update, SessionUpdateView::AgentThoughtChunk(_)));
    assert_eq!(chunk_text(&update), Some("a"));
    let spaced = "{ \"sessionId\" : \"s\" , \"update\" : { \"sessionUpdate\" : \"user_message_chunk\" ,\n \"content\" : { \"type\" :\t\"text\" , \"text\" : \"b\" } } }";
    let update = view(spaced).unwrap();
    assert!(matches!(update, SessionUpdateView::UserMessageChunk(_)));
    assert_eq!(chunk_text(&update), Some("b"));
}

#[test]
fn a_tag_that_prefixes_another_picks_the_whole_name() {
    // `tool_call` is a prefix of `tool_call_update`, which needs no title.
    let update =
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c"}}"#;
    assert!(matches!(
        view(update),
        Ok(SessionUpdateView::ToolCallUpdate(_))
    ));
    let call = r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c"}}"#;
    assert_eq!(
        view(call).unwrap_err(),
        "session/update.update.title is required"
    );
    assert!(!owned_ok(call));
}

#[test]
fn members_after_the_tag_are_still_checked_for_repeats() {
    let text = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a","te\u0078t":"b"}}}"#;
    assert_eq!(
        view(text).unwrap_err(),
        "session/update.update.content.text must not appear twice"
    );
    assert!(!owned_ok(text));
    let id =
        r#"{"sessionId":"s","session\u0049d":"t","update":{"sessionUpdate":"plan","entries":[]}}"#;
    assert_eq!(
        view(id).unwrap_err(),
        "session/update.sessionId must not appear twice"
    );
    // A second tag after the first is an unknown member, as serde reads it.
    let tags = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","type":"image","text":"c"}}}"#;
    assert_eq!(chunk_text(&view(tags).unwrap()), Some("c"));
    assert!(owned_ok(tags));
}
