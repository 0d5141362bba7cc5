//! The owned decode's fast paths (`decode_raw`, built on the views) give exactly what the serde
//! paths (`decode`) give: the same value, or the same error message, on fixtures, hand-picked
//! edge cases and generated messages: `session/update` notifications here, prompt and
//! permission requests and their results in `view_owned_turn.rs`.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

#[path = "schema_common/mod.rs"]
mod schema_common;

#[path = "owned_common/mod.rs"]
mod owned_common;

use acp_core::schema::AgentNotification;
use acp_core::wire::json::parse_value;
use owned_common::{agree_on, block, list, object, pick, text_value, tool_call_members};
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// Both paths on `params`; they must agree.
fn agree(params: &str) {
    agree_on(params, |raw| {
        let fast = AgentNotification::decode_raw("session/update", raw);
        let slow = AgentNotification::decode("session/update", Some(params));
        (fast, slow)
    });
}

#[test]
fn fixtures_agree() {
    for name in schema_common::message_names() {
        if name.starts_with("session_update_") {
            agree(&format!(
                r#"{{"sessionId":"s","update":{}}}"#,
                schema_common::message(&name)
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
        // Numbers serde_json cannot hold fail its read even where the field is lenient.
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","title":1e400}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","status":-1E+999}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","zzz":1e400}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","rawInput":{"n":1e400}}"#,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a:1e5","_meta":1e400}}"#,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a:1e5 b:2"}}"#,
        // Also in arrays, where `_meta` (any JSON to serde) holds one.
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","_meta":[1e400]},"_meta":[1,2]}"#,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"messageId":[1E999]}"#,
        // Each member of a text chunk serde_json reads as a number: `messageId` and `_meta`.
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"messageId":1E999}"#,
        r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"x"},"_meta":-1e400}"#,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","zzz":1e400},"zzz":[1e400]}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","_meta":[0,[-1e400]]}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","_meta":[0,[-1e300]]}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"path":"/a","_meta":[1e400]}]}"#,
        r#"{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","content":[{"type":"diff","path":"/a","newText":"n","_meta":[1e400]}]}"#,
        r#"{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending","_meta":[1e400]}]}"#,
        // `-0` is a float to serde_json, so no line number.
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"path":"/a","line":-0},{"path":"/b","line":0}]}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"path":"/b","line":0}]}"#,
        // Blocks of every type in chunks and tool content.
        r#"{"sessionUpdate":"user_message_chunk","content":{"type":"audio","data":"AA","mimeType":"audio/wav","uri":5}}"#,
        r#"{"sessionUpdate":"user_message_chunk","content":{"type":"resource_link","uri":"file:///a","name":"a","size":-0}}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"content","content":{"type":"resource","resource":{"uri":"u","blob":"QQ==","_meta":{"m":1}},"_meta":{"n":2}}}]}"#,
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
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}},"_meta":[1e400]}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}},"_meta":{"n":1e400}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}},"zzz":1e400}"#,
    ] {
        agree(params);
    }
}

/// Text chunks in the form SDKs write them (read by matching their bytes) and one change
/// away from it (read by the member walk or serde): the same value either way.
#[test]
fn canonical_text_chunks_and_near_misses_agree() {
    let texts = [
        r#""""#,
        r#""plain""#,
        r#""esc\"aped\\ \n\t \u00e9\ud83d\ude80 \"}}}""#,
        r#""中文 — ü""#,
        r#""\\""#,
    ];
    let sessions = [r#""s""#, r#""sess_01""#, r#""s\"\u0021""#, r#""""#, "5"];
    let kinds = [
        "agent_message_chunk",
        "agent_thought_chunk",
        "user_message_chunk",
        "agent_message_chunkX",
        "plan",
    ];
    for text in texts {
        for session in sessions {
            for kind in kinds {
                let update = format!(
                    r#"{{"sessionUpdate":"{kind}","content":{{"type":"text","text":{text}}}}}"#
                );
                agree(&format!(r#"{{"sessionId":{session},"update":{update}}}"#));
            }
        }
        for params in [
            format!(
                r#"{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":{text}}}}} }}"#
            ),
            format!(
                r#"{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type": "text","text":{text}}}}}}}"#
            ),
            format!(
                r#"{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":{text},"_meta":{{}}}}}}}}"#
            ),
            format!(
                r#"{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":{text}}},"messageId":"m"}}}}"#
            ),
            format!(
                r#"{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":{text}}}}},"_meta":{{"a":1}}}}"#
            ),
            format!(
                r#"{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"image","text":{text}}}}}}}"#
            ),
            format!(
                r#"{{"session\u0049d":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":{text}}}}}}}"#
            ),
        ] {
            agree(&params);
        }
    }
}

/// A generated `session/update`: the hot kinds with fields drawn from valid, lenient-invalid
/// and strictly invalid values, in any order, sometimes duplicated.
#[derive(Clone, Debug)]
struct Update(String);

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
            "tool_call" | "tool_call_update" => members.extend(tool_call_members(g)),
            "plan" => members.push(("entries", list(g, plan_entry))),
            _ => {
                let message_id = text_value(g);
                members.extend([("content", block(g)), ("messageId", message_id)]);
            }
        }
        let meta = pick(g, &["{}", "3", r#"{"x":"y"}"#, "-1.5E+400", "[2,1e400]"]).to_owned();
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
            // The views do not convert numbers (their magnitude is not limited), so a lenient
            // field holding one beyond `f64` reads as absent where serde_json fails.
            (Ok(_), Err(owned)) if owned.message().contains("number out of range") => true,
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

/// JSON string contents for the canonical forms: escapes of every kind, non-ASCII, and runs
/// that look like the literal parts around them (an escaped quote before `}}`, `","newText":"`).
fn string_contents(g: &mut Gen) -> String {
    string_pieces(g, true)
}

/// [`string_contents`], with or without `\u` escapes (which the one-pass line reader leaves
/// to the general path).
fn string_pieces(g: &mut Gen, unicode_escapes: bool) -> String {
    const PIECES: [&str; 18] = [
        "a",
        "plain text ",
        "é",
        "中文",
        "😀",
        r"\n",
        r#"\""#,
        r"\\",
        r"\/",
        r"\t\r\b\f",
        r"\u00e9",
        r"\u0000",
        r"\ud83d\ude80",
        r#"\"}}]}}"#,
        r#"\",\"newText\":\""#,
        r#"\"},{\"type\":\"diff\""#,
        "0123456789abcdef",
        r"\\\\",
    ];
    let len = usize::arbitrary(g) % 40;
    (0..len)
        .map(|_| pick(g, &PIECES))
        .filter(|piece| unicode_escapes || !piece.contains("\\u"))
        .collect()
}

/// A `tool_call_update` in the form SDKs write it, or one change away from it: another member
/// order, whitespace, an extra member, `_meta`, an escaped key, an unknown status or item.
#[derive(Clone, Debug)]
struct CanonicalToolUpdate(String);

impl Arbitrary for CanonicalToolUpdate {
    fn arbitrary(g: &mut Gen) -> Self {
        let s = |g: &mut Gen| format!(r#""{}""#, string_contents(g));
        let mut items = Vec::new();
        for _ in 0..usize::arbitrary(g) % 4 {
            let item = if bool::arbitrary(g) {
                format!(
                    r#"{{"type":"content","content":{{"type":"text","text":{}}}}}"#,
                    s(g)
                )
            } else {
                format!(
                    r#"{{"type":"diff","path":{},"oldText":{},"newText":{}}}"#,
                    s(g),
                    s(g),
                    s(g)
                )
            };
            items.push(item);
        }
        let status = pick(g, &["pending", "in_progress", "completed", "failed"]);
        let id = if u8::arbitrary(g) % 8 == 0 {
            r#""""#.to_owned()
        } else {
            s(g)
        };
        let session = if u8::arbitrary(g) % 8 == 0 {
            r#""""#.to_owned()
        } else {
            s(g)
        };
        let mut update = format!(r#"{{"sessionUpdate":"tool_call_update","toolCallId":{id}"#);
        if u8::arbitrary(g) % 4 != 0 {
            update.push_str(&format!(r#","status":"{status}""#));
        }
        if u8::arbitrary(g) % 4 != 0 {
            update.push_str(&format!(r#","content":[{}]"#, items.join(",")));
        }
        update.push('}');
        let mut params = format!(r#"{{"sessionId":{session},"update":{update}}}"#);
        // One change in two: what the byte matcher must leave to the general path.
        if bool::arbitrary(g) {
            let changes: [(&str, &str); 22] = [
                (r#""toolCallId":"#, r#""toolCallId": "#),
                (r#""status":"#, r#""_meta":{"a":[1]},"status":"#),
                (r#"[{"#, r#"[ {"#),
                (r#"}]"#, r#"} ]"#),
                (r#""status":"completed""#, r#""status":"compl\u0065ted""#),
                (r#""status":"failed""#, r#""status":"exploded""#),
                (r#""status":"pending""#, r#""status":5"#),
                (r#""content":["#, r#""content":[5,"#),
                (r#""content":["#, r#""title":"t","content":["#),
                (r#""content":[]"#, r#""content":null"#),
                (r#""type":"diff""#, r#""type":"terminal""#),
                (
                    r#""type":"text","text""#,
                    r#""type":"text","_meta":{},"text""#,
                ),
                (r#""newText":"#, r#""_meta":{"b":1},"newText":"#),
                (r#","oldText":"#, r#","oldText":null,"oldTextX":"#),
                (r#""oldText":"#, r#""old\u0054ext":"#),
                (
                    r#"{"type":"content","#,
                    r#"{"content":{"type":"text","text":"x"},"type":"content","#,
                ),
                (
                    r#""sessionUpdate":"tool_call_update","#,
                    r#""sessionUpdate":"tool_call","title":"t","#,
                ),
                (r#"{"sessionId":"#, r#"{"_meta":{"c":2},"sessionId":"#),
                (r#""toolCallId":"#, r#""kind":"edit","toolCallId":"#),
                (r#"}}"#, r#"},"locations":[{"path":"/a"}]}"#),
                (r#"]}"#, r#"],"rawOutput":{"ok":true}}"#),
                (r#""path":"#, r#""path":"/p","path":"#),
            ];
            let (from, to) = changes[usize::arbitrary(g) % changes.len()];
            // The first occurrence may be inside a string; kept only when still JSON.
            if let Some(at) = params.find(from) {
                let mut changed = params.clone();
                changed.replace_range(at..at + from.len(), to);
                if parse_value(&changed).is_ok() {
                    params = changed;
                }
            }
        }
        if u8::arbitrary(g) % 8 == 0 {
            params.push(' ');
        }
        CanonicalToolUpdate(params)
    }
}

/// Tool call updates in the form SDKs write them (read by matching their bytes) and one change
/// away from it: the same value or error as serde gives.
#[test]
fn canonical_tool_call_updates_and_near_misses_agree() {
    fn property(update: CanonicalToolUpdate) -> bool {
        agree(&update.0);
        true
    }
    QuickCheck::new()
        .tests(5_000)
        .quickcheck(property as fn(CanonicalToolUpdate) -> bool);
}

/// Text chunks with generated text (escapes, non-ASCII, runs that look like the end of the
/// params): the byte-matched path and serde agree.
#[test]
fn canonical_text_chunks_with_generated_text_agree() {
    fn property(text: CanonicalText) -> bool {
        agree(&format!(
            r#"{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{}"}}}}}}"#,
            text.0
        ));
        true
    }
    QuickCheck::new()
        .tests(3_000)
        .quickcheck(property as fn(CanonicalText) -> bool);
}

#[derive(Clone, Debug)]
struct CanonicalText(String);

impl Arbitrary for CanonicalText {
    fn arbitrary(g: &mut Gen) -> Self {
        CanonicalText(string_contents(g))
    }
}

/// A line for the one-pass text chunk reader: the form SDKs write, with generated strings
/// (sometimes not valid JSON: a raw control character, a bad escape, bytes that are not
/// UTF-8) and sometimes one change to the envelope.
#[derive(Clone, Debug)]
struct ChunkLine(Vec<u8>);

impl Arbitrary for ChunkLine {
    fn arbitrary(g: &mut Gen) -> Self {
        let kind = pick(
            g,
            &[
                "agent_message_chunk",
                "agent_thought_chunk",
                "user_message_chunk",
                "plan",
            ],
        );
        let string = |g: &mut Gen| -> Vec<u8> {
            let unicode_escapes = u8::arbitrary(g) % 8 == 0;
            let mut text = string_pieces(g, unicode_escapes).into_bytes();
            if u8::arbitrary(g) % 6 == 0 && !text.is_empty() {
                let at = usize::arbitrary(g) % text.len();
                let bad: &[u8] = match u8::arbitrary(g) % 7 {
                    0 => b"\x01",
                    1 => b"\\x",
                    2 => b"\\u12",
                    3 => b"\xff",
                    4 => b"\xc3",
                    5 => b"\xed\xa0\x80",
                    _ => b"\"",
                };
                text.splice(at..at, bad.iter().copied());
            }
            text
        };
        let session = if u8::arbitrary(g) % 10 == 0 {
            Vec::new()
        } else {
            string(g)
        };
        let mut line =
            br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":""#.to_vec();
        line.extend(session);
        line.extend_from_slice(br#"","update":{"sessionUpdate":""#);
        line.extend_from_slice(kind.as_bytes());
        line.extend_from_slice(br#"","content":{"type":"text","text":""#);
        line.extend(string(g));
        line.extend_from_slice(br#""}}}}"#);
        if u8::arbitrary(g) % 4 == 0 {
            let changes: [(&[u8], &[u8]); 8] = [
                (br#""2.0""#, br#""2.1""#),
                (br#"{"jsonrpc""#, br#"{"id":1,"jsonrpc""#),
                (br#""method""#, br#""meth\u006fd""#),
                (br#""params":"#, br#""params" :"#),
                (br#"session/update"#, br#"session/updat\u0065"#),
                (br#""type":"text""#, br#""type":"image""#),
                (br#""}}}}"#, br#""}}}} "#),
                (br#""}}}}"#, br#""}},"_meta":{}}}"#),
            ];
            let (from, to) = changes[usize::arbitrary(g) % changes.len()];
            if let Some(at) = line.windows(from.len()).position(|w| w == from) {
                line.splice(at..at + from.len(), to.iter().copied());
            }
        }
        ChunkLine(line)
    }
}

/// The one-pass reader of a text chunk line gives a value exactly when the envelope scan
/// accepts the line as a `session/update` notification whose params `decode_raw` decodes to
/// that value; the canonical lines are read (they are not all left to the general path).
#[test]
fn text_chunk_lines_read_in_one_pass_agree_with_scan_and_decode() {
    use acp_core::wire::envelope::{Message, scan_bytes};
    use std::sync::atomic::{AtomicUsize, Ordering};
    static READ: AtomicUsize = AtomicUsize::new(0);
    static REFUSED: AtomicUsize = AtomicUsize::new(0);
    fn property(line: ChunkLine) -> bool {
        let line = &line.0;
        let general = match scan_bytes(line) {
            Ok(Message::Notification(n)) if n.method.raw() == "session/update" => Some((
                AgentNotification::decode_raw("session/update", n.params),
                n.params.map(|p| p.get().len()),
            )),
            _ => None,
        };
        match AgentNotification::decode_text_chunk_line(line) {
            None => {
                REFUSED.fetch_add(1, Ordering::Relaxed);
                true
            }
            Some(fast) => {
                let Some((Ok(slow), Some(params_len))) = general else {
                    panic!(
                        "read a line the general path refuses: {:?}",
                        String::from_utf8_lossy(line)
                    );
                };
                assert_eq!(fast, slow, "{:?}", String::from_utf8_lossy(line));
                assert_eq!(
                    params_len,
                    line.len() - 1 - AgentNotification::TEXT_CHUNK_LINE_PARAMS_AT
                );
                READ.fetch_add(1, Ordering::Relaxed);
                true
            }
        }
    }
    QuickCheck::new()
        .tests(5_000)
        .quickcheck(property as fn(ChunkLine) -> bool);
    let (read, refused) = (
        READ.load(Ordering::Relaxed),
        REFUSED.load(Ordering::Relaxed),
    );
    assert!(read > 1_000 && refused > 500, "read {read}, left {refused}");
    let canonical = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\"1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"a\\b \u00e9x"}}}}"#;
    assert_eq!(
        AgentNotification::decode_text_chunk_line(canonical),
        None,
        "\\u is left alone"
    );
    let canonical = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\"1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"a\\b é\n"}}}}"#;
    let read = AgentNotification::decode_text_chunk_line(canonical.as_bytes());
    let params = &canonical[AgentNotification::TEXT_CHUNK_LINE_PARAMS_AT..canonical.len() - 1];
    assert_eq!(
        read,
        Some(AgentNotification::decode("session/update", Some(params)).unwrap())
    );
}
