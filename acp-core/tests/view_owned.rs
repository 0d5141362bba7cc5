//! The owned decode's fast path (`AgentNotification::decode_raw`, built on the views) gives
//! exactly what the serde path (`AgentNotification::decode`) gives: the same value, or the same
//! error message, on fixtures, hand-picked edge cases and generated updates.

#[path = "schema_common/mod.rs"]
mod schema_common;

use acp_core::schema::AgentNotification;
use acp_core::wire::json::parse_value;
use pretty_assertions::assert_eq;
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// Both paths on `params`; they must agree.
fn agree(params: &str) {
    let raw = parse_value(params).unwrap_or_else(|e| panic!("not JSON ({e}): {params}"));
    let fast = AgentNotification::decode_raw("session/update", Some(raw));
    let slow = AgentNotification::decode("session/update", Some(params));
    match (&fast, &slow) {
        (Ok(fast), Ok(slow)) => assert_eq!(fast, slow, "{params}"),
        (Err(fast), Err(slow)) => assert_eq!(fast.message(), slow.message(), "{params}"),
        _ => panic!("paths disagree on {params}:\nfast: {fast:?}\nslow: {slow:?}"),
    }
}

#[test]
fn fixtures_agree() {
    for name in schema_common::golden_names() {
        if name.starts_with("session_update_") {
            agree(&format!(
                r#"{{"sessionId":"s","update":{}}}"#,
                schema_common::golden(&name)
            ));
        }
    }
}

#[test]
fn edge_cases_agree() {
    let updates = [
        // Escapes everywhere, non-ASCII, surrogate pairs.
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a\"b\\c\n\u00e9\ud83d\ude80 中文"}}"#,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\uD83D\uDE80\u00E9\/\b\f\r\\\"end"}}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"diff","path":"/a","oldText":"\t\u0001x","newText":"\ud800\udc00"}]}"#,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","annotations":{"priority":0.5,"audience":["user",7]}},"messageId":"m1","_meta":{"k":[1,{"z":null}]}}"#,
        r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"x","annotations":[1],"_meta":5},"messageId":7}"#,
        r#"{"sessionUpdate":"user_message_chunk","content":{"type":"image","data":"AA","mimeType":"image/png"}}"#,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"text":"x","type":"text"}}"#,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a","text":"b"}}"#,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"mystery","x":1}}"#,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}"#,
        r#"{"content":{"type":"text","text":"x"},"sessionUpdate":"agent_message_chunk"}"#,
        r#"{"sessionUpdate":"agent_message_chunk","sessionUpdate":"plan","content":{"type":"text","text":"x"}}"#,
        r#"{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","kind":"re\u0061d","status":"in_progress","content":[{"type":"diff","path":"/a","oldText":null,"newText":"n"},{"type":"terminal","terminalId":"t1"},{"type":"content","content":{"type":"text","text":"o"}},{"type":"bogus"},5],"locations":[{"path":"/a","line":3},{"path":"/b","line":-1},{"path":"/c","line":1.5},{"line":2}],"rawInput":{"command":"ls","n":[1,2.5,"x"]},"rawOutput":null}"#,
        r#"{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","kind":"teleport","status":"exploded","content":"nope","locations":{}}"#,
        r#"{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","content":[{"path":"/a","newText":"n","type":"diff"}]}"#,
        r#"{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","kind":5,"status":null,"rawInput":"text","_meta":{}}"#,
        r#"{"sessionUpdate":"tool_call","toolCallId":"c"}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","content":[{"type":"content","content":{"type":"text","text":"out\n"}}],"title":7,"locations":null}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","content":null,"rawOutput":{"ok":true}}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"content","content":{"type":"resource_link","uri":"u","name":"n"}}]}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"diff","path":"/a","newText":"x","path":"/b"}]}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":7}"#,
        r#"{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"},{"content":"b","priority":"urgent","status":"pending"},{"content":"c","priority":"low","status":"completed","_meta":{"x":1}}],"_meta":{}}"#,
        r#"{"sessionUpdate":"plan","entries":{}}"#,
        r#"{"sessionUpdate":"usage_update","used":1,"size":2}"#,
        r#"{"sessionUpdate":"usage_update","used":-1,"size":2}"#,
        r#"{"sessionUpdate":"something_new","x":1}"#,
    ];
    for update in updates {
        agree(&format!(r#"{{"sessionId":"s","update":{update}}}"#));
    }
    for params in [
        r#"{"sessionId":"s","sessionId":"t","update":{"sessionUpdate":"plan","entries":[]}}"#,
        r#"{"sessionId":"s\u0021","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"a":1}}"#,
        r#"{"sessionId":5,"update":{"sessionUpdate":"plan","entries":[]}}"#,
        r#"{"update":{"sessionUpdate":"plan","entries":[]}}"#,
        r#"{"sessionId":"s"}"#,
        r#"[]"#,
        r#"null"#,
        r#"{"sessionId":"s","update":[]}"#,
    ] {
        agree(params);
    }
}

/// A generated `session/update`: the hot kinds with fields drawn from valid, lenient-invalid
/// and strictly invalid values, in any order, sometimes duplicated.
#[derive(Clone, Debug)]
struct Update(String);

fn pick<'a>(g: &mut Gen, items: &[&'a str]) -> &'a str {
    g.choose(items).copied().unwrap_or("null")
}

fn text_value(g: &mut Gen) -> String {
    pick(
        g,
        &[
            r#""plain""#,
            r#""esc\"aped\\ \n\t""#,
            r#""\u00e9\ud83d\ude80""#,
            r#""""#,
            "5",
            "null",
            "{}",
            "[]",
        ],
    )
    .to_owned()
}

fn object(members: Vec<(&str, String)>, g: &mut Gen) -> String {
    let mut members: Vec<(&str, String)> = members
        .into_iter()
        .filter(|_| u8::arbitrary(g) % 8 != 0)
        .collect();
    if bool::arbitrary(g) && members.len() > 1 {
        let i = usize::arbitrary(g) % members.len();
        let j = usize::arbitrary(g) % members.len();
        members.swap(i, j);
    }
    if u8::arbitrary(g) % 10 == 0
        && let Some(first) = members.first().cloned()
    {
        members.push(first);
    }
    let body: Vec<String> = members
        .iter()
        .map(|(k, v)| format!(r#""{k}":{v}"#))
        .collect();
    format!("{{{}}}", body.join(","))
}

fn block(g: &mut Gen) -> String {
    let kind = pick(
        g,
        &[r#""text""#, r#""text""#, r#""image""#, r#""weird""#, "3"],
    )
    .to_owned();
    let meta = pick(g, &["{}", r#"{"a":[1]}"#, "7"]).to_owned();
    let annotations = pick(g, &[r#"{"priority":1}"#, "[]", r#"{"audience":["user"]}"#]).to_owned();
    object(
        vec![
            ("type", kind),
            ("text", text_value(g)),
            ("annotations", annotations),
            ("_meta", meta),
        ],
        g,
    )
}

fn tool_item(g: &mut Gen) -> String {
    match u8::arbitrary(g) % 4 {
        0 => object(
            vec![("type", r#""content""#.into()), ("content", block(g))],
            g,
        ),
        1 => object(
            vec![
                ("type", r#""diff""#.into()),
                ("path", text_value(g)),
                ("oldText", text_value(g)),
                ("newText", text_value(g)),
            ],
            g,
        ),
        2 => object(
            vec![
                ("type", r#""terminal""#.into()),
                ("terminalId", text_value(g)),
            ],
            g,
        ),
        _ => pick(g, &["5", "null", r#"{"type":"x"}"#]).to_owned(),
    }
}

fn list(g: &mut Gen, item: fn(&mut Gen) -> String) -> String {
    if u8::arbitrary(g) % 6 == 0 {
        return pick(g, &["null", "{}", "7"]).to_owned();
    }
    let items: Vec<String> = (0..usize::arbitrary(g) % 4).map(|_| item(g)).collect();
    format!("[{}]", items.join(","))
}

fn location(g: &mut Gen) -> String {
    let line = pick(g, &["1", "-1", "1.5", "4294967296", r#""3""#]).to_owned();
    object(vec![("path", text_value(g)), ("line", line)], g)
}

fn plan_entry(g: &mut Gen) -> String {
    let priority = pick(g, &[r#""high""#, r#""low""#, r#""urgent""#, "1"]).to_owned();
    let status = pick(g, &[r#""pending""#, r#""completed""#, r#""nope""#]).to_owned();
    object(
        vec![
            ("content", text_value(g)),
            ("priority", priority),
            ("status", status),
        ],
        g,
    )
}

impl Arbitrary for Update {
    fn arbitrary(g: &mut Gen) -> Self {
        let kind = pick(
            g,
            &[
                "agent_message_chunk",
                "agent_thought_chunk",
                "user_message_chunk",
                "tool_call",
                "tool_call_update",
                "plan",
            ],
        );
        let mut members = vec![("sessionUpdate", format!(r#""{kind}""#))];
        match kind {
            "tool_call" | "tool_call_update" => {
                let kind_value =
                    pick(g, &[r#""read""#, r#""edit""#, r#""custom""#, "1", "null"]).to_owned();
                let status =
                    pick(g, &[r#""pending""#, r#""completed""#, r#""weird""#, "0"]).to_owned();
                let raw = pick(g, &[r#"{"a":1,"b":[true,null]}"#, "null", r#""s""#, "2.5"]);
                members.extend([
                    ("toolCallId", text_value(g)),
                    ("title", text_value(g)),
                    ("kind", kind_value),
                    ("status", status),
                    ("content", list(g, tool_item)),
                    ("locations", list(g, location)),
                    ("rawInput", raw.to_owned()),
                    ("rawOutput", raw.to_owned()),
                ]);
            }
            "plan" => members.push(("entries", list(g, plan_entry))),
            _ => {
                let message_id = text_value(g);
                members.extend([("content", block(g)), ("messageId", message_id)]);
            }
        }
        let meta = pick(g, &["{}", "3", r#"{"x":"y"}"#]).to_owned();
        members.push(("_meta", meta));
        let update = object(members, g);
        Update(format!(
            r#"{{"sessionId":{},"update":{update}}}"#,
            text_value(g)
        ))
    }
}

#[test]
fn generated_updates_agree() {
    fn property(update: Update) -> bool {
        agree(&update.0);
        true
    }
    QuickCheck::new()
        .tests(3_000)
        .quickcheck(property as fn(Update) -> bool);
}

/// The views accept and refuse the generated updates as the owned types do, except for a known
/// member sent twice, which only the views refuse when serde buffered its object (a tag that
/// is not the first member). When several fields are wrong the two may name different ones
/// first (serde's precise pass goes in key order), so messages are compared in
/// `view_errors.rs`, one fault at a time.
#[test]
fn generated_updates_get_the_same_verdict_from_the_views() {
    fn property(update: Update) -> bool {
        let params = &update.0;
        let raw = parse_value(params).unwrap();
        let view = acp_core::view::AgentNotificationView::decode("session/update", Some(raw));
        let owned = AgentNotification::decode("session/update", Some(params));
        match (view, owned) {
            (Ok(_), Ok(_)) => true,
            (Err(_), Err(_)) => true,
            (Err(view), Ok(_)) => {
                let view = view.to_string();
                assert!(
                    view.ends_with("must not appear twice"),
                    "view: {view}\n{params}"
                );
                true
            }
            (Ok(_), Err(owned)) => {
                panic!(
                    "views accept what the owned types refuse ({}): {params}",
                    owned.message()
                )
            }
        }
    }
    QuickCheck::new()
        .tests(3_000)
        .quickcheck(property as fn(Update) -> bool);
}
