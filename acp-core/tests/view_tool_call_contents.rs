//! A tool call's content items as the views iterate them (the first item is read while the
//! array is walked to find its end, the rest when iterated) against the owned types' list:
//! the same items, in the same order, none twice, none lost, invalid ones skipped.

use acp_core::schema::{AgentNotification, SessionUpdate, ToolCallContent};
use acp_core::view::{AgentNotificationView, SessionUpdateView, ToolCallContentView};
use acp_core::wire::json::parse_value;

/// What identifies an item: its kind and the path or id it names.
fn owned_items(params: &str) -> Vec<String> {
    let Ok(AgentNotification::SessionUpdate(notification)) =
        AgentNotification::decode("session/update", Some(params))
    else {
        panic!("the owned types decode {params}");
    };
    let content = match notification.update {
        SessionUpdate::ToolCall(call) => call.content,
        SessionUpdate::ToolCallUpdate(update) => update.content.unwrap_or_default(),
        other => panic!("not a tool call: {other:?}"),
    };
    content
        .iter()
        .map(|item| match item {
            ToolCallContent::Diff(diff) => format!("diff {}", diff.path),
            ToolCallContent::Terminal(terminal) => format!("terminal {}", terminal.terminal_id),
            ToolCallContent::Content(_) => "content".to_owned(),
            ToolCallContent::Session(session) => format!("session {}", session.session_id),
            other => panic!("unexpected item {other:?}"),
        })
        .collect()
}

fn view_items(params: &str) -> Vec<String> {
    let raw = parse_value(params).expect("test input is JSON");
    let Ok(AgentNotificationView::SessionUpdate(notification)) =
        AgentNotificationView::decode("session/update", Some(raw))
    else {
        panic!("the views decode {params}");
    };
    let contents = match notification.update {
        SessionUpdateView::ToolCall(call) => Some(call.content),
        SessionUpdateView::ToolCallUpdate(update) => update.content,
        other => panic!("not a tool call: {other:?}"),
    };
    contents
        .map(|contents| {
            contents
                .iter()
                .map(|item| match item {
                    ToolCallContentView::Diff { path, .. } => format!("diff {}", path.to_cow()),
                    ToolCallContentView::Terminal { terminal_id, .. } => {
                        format!("terminal {}", terminal_id.to_cow())
                    }
                    ToolCallContentView::Content { .. } => "content".to_owned(),
                    ToolCallContentView::Session { session_id, .. } => {
                        format!("session {}", session_id.to_cow())
                    }
                    other => panic!("unexpected item {other:?}"),
                })
                .collect()
        })
        .unwrap_or_default()
}

const DIFF_A: &str = r#"{"type":"diff","path":"/a","oldText":"x\n\"y\"","newText":"z\\n"}"#;
const DIFF_B: &str = r#"{"type":"diff","path":"/b","newText":"new"}"#;
const TERMINAL: &str = r#"{"type":"terminal","terminalId":"t1"}"#;
const CONTENT: &str = r#"{"type":"content","content":{"type":"text","text":"out"}}"#;
const INVALID: &str = r#"{"type":"diff","path":7,"newText":"n"}"#;
const SESSION: &str = r#"{"type":"session","sessionId":"sub_1"}"#;

#[test]
fn every_item_once_in_order_whatever_the_first_one_is() {
    let arrays = [
        String::from("[]"),
        format!("[{DIFF_A}]"),
        format!("[{DIFF_A},{DIFF_B}]"),
        format!("[ {DIFF_A} ,\n {DIFF_B} , {TERMINAL} ]"),
        format!("[{INVALID},{DIFF_B}]"),
        format!("[{INVALID}]"),
        format!("[{DIFF_A},{INVALID},{CONTENT}]"),
        format!("[5,{TERMINAL},\"x\",{DIFF_B}]"),
        format!("[{CONTENT},{CONTENT}]"),
        format!("[{SESSION},{DIFF_B}]"),
        format!("[{DIFF_A},{SESSION}]"),
    ];
    for array in &arrays {
        for (kind, extra) in [("tool_call_update", ""), ("tool_call", r#","title":"t""#)] {
            // Content first, last and in the middle of the members.
            for params in [
                format!(
                    r#"{{"sessionId":"s","update":{{"sessionUpdate":"{kind}","toolCallId":"c"{extra},"content":{array}}}}}"#
                ),
                format!(
                    r#"{{"sessionId":"s","update":{{"sessionUpdate":"{kind}","content":{array},"toolCallId":"c"{extra}}}}}"#
                ),
                format!(
                    r#"{{"sessionId":"s","update":{{"toolCallId":"c","content" : {array} ,"status":"completed","sessionUpdate":"{kind}"{extra}}}}}"#
                ),
            ] {
                let want = owned_items(&params);
                assert_eq!(view_items(&params), want, "{params}");
                // Iterating twice gives the same items again.
                assert_eq!(view_items(&params), want, "{params}");
            }
        }
    }
}

#[test]
fn the_raw_array_is_the_whole_array_as_sent() {
    let params = format!(
        r#"{{"sessionId":"s","update":{{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{DIFF_A}, {DIFF_B}],"status":"failed"}}}}"#
    );
    let raw = parse_value(&params).unwrap();
    let Ok(AgentNotificationView::SessionUpdate(notification)) =
        AgentNotificationView::decode("session/update", Some(raw))
    else {
        panic!("decodes");
    };
    let SessionUpdateView::ToolCallUpdate(update) = notification.update else {
        panic!("a tool call update");
    };
    let contents = update.content.expect("an array");
    assert_eq!(
        contents.raw().map(|raw| raw.get().to_owned()),
        Some(format!("[{DIFF_A}, {DIFF_B}]"))
    );
    assert_eq!(contents.iter().count(), 2);
}

#[test]
fn the_tool_name_reads_like_the_owned_one() {
    for (kind, extra) in [("tool_call_update", ""), ("tool_call", r#","title":"t""#)] {
        for (name, want) in [(r#""read_file""#, Some("read_file")), ("7", None)] {
            let params = format!(
                r#"{{"sessionId":"s","update":{{"sessionUpdate":"{kind}","toolCallId":"c"{extra},"name":{name}}}}}"#
            );
            let decoded = AgentNotification::decode("session/update", Some(&params));
            // The owned fast path (from the views) reads the same value as serde.
            let fast = AgentNotification::decode_raw("session/update", parse_value(&params).ok());
            assert_eq!(fast, decoded, "{params}");
            let Ok(AgentNotification::SessionUpdate(owned)) = decoded else {
                panic!("the owned types decode {params}");
            };
            let owned = match owned.update {
                SessionUpdate::ToolCall(call) => call.name,
                SessionUpdate::ToolCallUpdate(update) => update.name,
                other => panic!("not a tool call: {other:?}"),
            };
            let raw = parse_value(&params).unwrap();
            let Ok(AgentNotificationView::SessionUpdate(view)) =
                AgentNotificationView::decode("session/update", Some(raw))
            else {
                panic!("the views decode {params}");
            };
            let view = match view.update {
                SessionUpdateView::ToolCall(call) => call.name,
                SessionUpdateView::ToolCallUpdate(update) => update.name,
                other => panic!("not a tool call: {other:?}"),
            };
            assert_eq!(owned.as_deref(), want, "{params}");
            assert_eq!(
                view.map(|n| n.to_cow().into_owned()).as_deref(),
                want,
                "{params}"
            );
        }
    }
}
