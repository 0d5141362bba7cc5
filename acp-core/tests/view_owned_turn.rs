//! The owned decode's fast paths for the rest of a prompt turn (`ClientRequest::decode_raw` for
//! `session/prompt`, `AgentRequest::decode_raw` for `session/request_permission`, and the
//! results that answer them) give exactly what the serde paths give: the same value, or the
//! same error message, on fixtures, hand-picked edge cases and generated messages.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

#[path = "schema_common/mod.rs"]
mod schema_common;

#[path = "owned_common/mod.rs"]
mod owned_common;

use acp_core::schema::{AgentRequest, AgentResponse, ClientRequest, ClientResponse};
use owned_common::{
    agree_on, block, list, object, pick, reordered, string_value, text_value, tool_call_members,
    valid_block, valid_list, valid_tool_call_members,
};
use quickcheck::{Arbitrary, Gen, QuickCheck};

fn agree_prompt(params: &str) {
    agree_on(params, |raw| {
        let fast = ClientRequest::decode_raw("session/prompt", raw);
        (fast, ClientRequest::decode("session/prompt", Some(params)))
    });
}

fn agree_permission(params: &str) {
    agree_on(params, |raw| {
        let fast = AgentRequest::decode_raw("session/request_permission", raw);
        (
            fast,
            AgentRequest::decode("session/request_permission", Some(params)),
        )
    });
}

fn agree_prompt_result(result: &str) {
    agree_on(result, |raw| {
        let fast = AgentResponse::decode_raw("session/prompt", raw.unwrap());
        (fast, AgentResponse::decode("session/prompt", result))
    });
}

fn agree_permission_result(result: &str) {
    agree_on(result, |raw| {
        let fast = ClientResponse::decode_raw("session/request_permission", raw.unwrap());
        (
            fast,
            ClientResponse::decode("session/request_permission", result),
        )
    });
}

#[test]
fn fixtures_agree() {
    let message = schema_common::message;
    agree_prompt(&message("prompt_request.json"));
    agree_permission(&message("request_permission_request.json"));
    agree_permission_result(&message("request_permission_response_selected.json"));
    agree_permission_result(&message("permission_outcome_cancelled.json"));
    agree_permission_result(&message("permission_outcome_selected.json"));
    for name in schema_common::message_names() {
        if name.starts_with("content_") {
            let block = message(&name);
            agree_prompt(&format!(r#"{{"sessionId":"s","prompt":[{block}]}}"#));
        }
        if name.starts_with("tool_content_") {
            let item = message(&name);
            agree_permission(&format!(
                r#"{{"sessionId":"s","toolCall":{{"toolCallId":"c","content":[{item}]}},"options":[]}}"#
            ));
        }
        // A tool call update as the permission request's tool call (the tag is one more
        // member the tool call does not know).
        if name.starts_with("session_update_tool_call_update") {
            let update = message(&name);
            agree_permission(&format!(
                r#"{{"sessionId":"s","toolCall":{update},"options":[{{"optionId":"a","name":"A","kind":"allow_once"}}]}}"#
            ));
        }
    }
}

#[test]
fn prompt_edge_cases_agree() {
    let blocks = [
        // Escapes everywhere, non-ASCII, surrogate pairs.
        r#"{"type":"text","text":"a\"b\\c\n\u00e9\ud83d\ude80 中文"}"#,
        r#"{"type":"text","text":"x","annotations":{"priority":0.5,"audience":["user",7]},"_meta":{"k":[1,{"z":null}]}}"#,
        r#"{"type":"text","text":"x","annotations":[1],"_meta":5}"#,
        // The tag not first: serde buffers the object, so the fast path declines.
        r#"{"text":"x","type":"text"}"#,
        // An escaped tag value, and an escaped tag key.
        r#"{"type":"te\u0078t","text":"x"}"#,
        r#"{"\u0074ype":"text","text":"x"}"#,
        // A type this version does not know is kept whole.
        r#"{"type":"mystery","x":1}"#,
        r#"{"type":"mystery","type":"text","text":"x"}"#,
        // Duplicate known members are refused; unknown ones are ignored.
        r#"{"type":"text","text":"a","text":"b"}"#,
        r#"{"type":"text","text":"a","x":1,"x":2}"#,
        r#"{"type":"text","text":"a","type":"image"}"#,
        // Required fields missing or of the wrong kind.
        r#"{"type":"text"}"#,
        r#"{"type":"text","text":5}"#,
        r#"{"type":7}"#,
        r#"{"text":"x"}"#,
        r#""just text""#,
        r#"[]"#,
        r#"{"type":"image","data":"AA","mimeType":"image/png","uri":"file:///i.png"}"#,
        r#"{"type":"image","data":"AA","mimeType":"image/png","uri":5}"#,
        r#"{"type":"image","data":"AA"}"#,
        r#"{"type":"audio","data":"AA","mimeType":"audio/wav","uri":"dropped"}"#,
        r#"{"type":"audio","data":"AA","mimeType":"audio/wav","uri":1,"uri":2}"#,
        r#"{"type":"resource_link","uri":"file:///a","name":"a","title":"T","description":7,"mimeType":null,"size":12}"#,
        r#"{"type":"resource_link","uri":"file:///a","name":"a","size":0}"#,
        r#"{"type":"resource_link","uri":"file:///a","name":"a","size":-0}"#,
        r#"{"type":"resource_link","uri":"file:///a","name":"a","size":9223372036854775808}"#,
        r#"{"type":"resource_link","uri":"file:///a","name":"a","size":1.0}"#,
        r#"{"type":"resource_link","uri":"file:///a","name":"a","size":1e3}"#,
        r#"{"type":"resource_link","uri":"file:///a","size":1}"#,
        r#"{"type":"resource","resource":{"uri":"u","text":"t","mimeType":"text/plain","_meta":{"a":1}},"_meta":{"b":2}}"#,
        r#"{"type":"resource","resource":{"uri":"u","blob":"QQ==","_meta":7}}"#,
        r#"{"type":"resource","resource":{"uri":"u","text":"t","blob":"QQ=="}}"#,
        r#"{"type":"resource","resource":{"uri":"u","text":null,"blob":"QQ=="}}"#,
        r#"{"type":"resource","resource":{"uri":"u","text":5}}"#,
        r#"{"type":"resource","resource":{"uri":"u"}}"#,
        r#"{"type":"resource","resource":{"uri":"u","text":"a","text":"b"}}"#,
        r#"{"type":"resource","resource":["u","t"]}"#,
        r#"{"type":"resource"}"#,
        // Numbers serde_json cannot hold fail its read even in lenient fields.
        r#"{"type":"text","text":"x","_meta":1e400}"#,
        r#"{"type":"resource_link","uri":"u","name":"n","size":1e400}"#,
        r#"{"type":"text","text":"x","unknown":-2E+999}"#,
        r#"{"type":"text","text":"x","_meta":[1e400]}"#,
        r#"{"type":"image","data":"AA","mimeType":"image/png","uri":1e400}"#,
        r#"{"type":"resource","resource":{"uri":"u","text":"t","_meta":[1e400]}}"#,
        r#"{"type":"resource","resource":{"uri":"u","text":"t","mimeType":1e400}}"#,
        // A `:` and an exponent inside a string only make the fast path decline.
        r#"{"type":"text","text":"see a:1e5 and b: 2.5"}"#,
    ];
    for block in blocks {
        agree_prompt(&format!(r#"{{"sessionId":"s","prompt":[{block}]}}"#));
        agree_prompt(&format!(
            r#"{{"sessionId":"s","prompt":[{{"type":"text","text":"first"}},{block}]}}"#
        ));
    }
    for params in [
        r#"{"sessionId":"","prompt":[{"type":"text","text":"x"}]}"#,
        r#"{"sessionId":"s","prompt":[]}"#,
        r#"{"sessionId":"","prompt":[]}"#,
        r#"{"sessionId":"s","prompt":{}}"#,
        r#"{"sessionId":"s","prompt":null}"#,
        r#"{"sessionId":"s"}"#,
        r#"{"prompt":[{"type":"text","text":"x"}]}"#,
        r#"{"sessionId":5,"prompt":[{"type":"text","text":"x"}]}"#,
        r#"{"sessionId":"s","sessionId":"t","prompt":[{"type":"text","text":"x"}]}"#,
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"x"}],"prompt":[]}"#,
        r#"{"sessionId":"s\u0021","prompt":[{"type":"text","text":"x"}],"_meta":{"a":1}}"#,
        r#"{"prompt":[{"type":"text","text":"x"}],"_meta":[],"sessionId":"s"}"#,
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"x"}],"_meta":-1e999}"#,
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"x"}],"_meta":[true,-1e999]}"#,
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"x"}],"_meta":[true,-1e99]}"#,
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"x"}],"_meta":"m"}"#,
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"x"}],"x":[1e400]}"#,
        r#"{ "sessionId" : "s" , "prompt" : [ { "type" : "text" , "text" : "x" } ] }"#,
        r#"{}"#,
        r#"[]"#,
        r#"null"#,
        r#""s""#,
    ] {
        agree_prompt(params);
    }
}

#[test]
fn permission_edge_cases_agree() {
    let option = r#"{"optionId":"a","name":"Allow","kind":"allow_once"}"#;
    let tool_calls = [
        r#"{"toolCallId":"c"}"#,
        r#"{"toolCallId":"c","title":"Edit a.rs","kind":"edit","status":"pending","content":[{"type":"diff","path":"/a.rs","oldText":"x\n\t\"y\"","newText":"\u00e9\ud83d\ude80"}],"locations":[{"path":"/a.rs","line":3}],"rawInput":{"file_path":"/a.rs"}}"#,
        r#"{"toolCallId":"c","kind":"teleport","status":"exploded","title":7,"content":"nope","locations":{}}"#,
        r#"{"toolCallId":"c","kind":"re\u0061d","content":[{"type":"content","content":{"type":"text","text":"o"}},{"type":"terminal","terminalId":"t"},{"type":"bogus"},5]}"#,
        r#"{"toolCallId":"c","content":[{"path":"/a","newText":"n","type":"diff"}]}"#,
        r#"{"toolCallId":"c","content":[{"type":"diff","path":"/a","newText":"x","path":"/b"}]}"#,
        r#"{"toolCallId":"c","content":[{"type":"content","content":{"type":"image","data":"AA","mimeType":"image/png"}}]}"#,
        r#"{"toolCallId":"c","locations":[{"path":"/a","line":-0},{"path":"/b","line":1.5}]}"#,
        r#"{"toolCallId":"c","content":null,"locations":null,"rawInput":null,"rawOutput":{"ok":true},"_meta":{"m":1}}"#,
        r#"{"toolCallId":"c","title":1e400}"#,
        r#"{"toolCallId":"c","toolCallId":"d"}"#,
        r#"{"toolCallId":7}"#,
        r#"{"title":"t"}"#,
        r#"["c"]"#,
        r#""c""#,
    ];
    for tool_call in tool_calls {
        agree_permission(&format!(
            r#"{{"sessionId":"s","toolCall":{tool_call},"options":[{option}]}}"#
        ));
    }
    let options = [
        r#"[]"#,
        r#"[{"optionId":"a","name":"Allow","kind":"allow_once","_meta":{"x":1}},{"optionId":"r","name":"Reject","kind":"reject_always","_meta":5}]"#,
        r#"[{"kind":"allow\u005fonce","name":"N\u00e9","optionId":"a"}]"#,
        r#"[{"optionId":"a","name":"Allow","kind":"maybe"}]"#,
        r#"[{"optionId":"a","name":"Allow"}]"#,
        r#"[{"optionId":"a","name":"Allow","kind":"allow_once","kind":"reject_once"}]"#,
        r#"[{"optionId":5,"name":"Allow","kind":"allow_once"}]"#,
        r#"[["a","Allow","allow_once"]]"#,
        r#"[5]"#,
        r#"{}"#,
        r#"null"#,
    ];
    for options in options {
        agree_permission(&format!(
            r#"{{"sessionId":"s","toolCall":{{"toolCallId":"c"}},"options":{options}}}"#
        ));
    }
    for params in [
        r#"{"sessionId":"","toolCall":{"toolCallId":"c"},"options":[]}"#,
        r#"{"toolCall":{"toolCallId":"c"},"options":[],"sessionId":"s","_meta":{"a":[1]}}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[],"_meta":1e400}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[],"extra":1e400}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[],"_meta":[1e400]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","_meta":[1e400]},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","kind":1e400},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","status":[1e400]},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","content":1e400},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","content":[{"type":"diff","path":"/a","newText":"n","oldText":1e400}]},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","content":[{"type":"terminal","terminalId":"t","_meta":[1e400]}]},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","content":[{"type":"content","content":{"type":"text","text":"t","_meta":[1e400]}}]},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","content":[{"type":"content","content":{"type":"text","text":"t"},"content":{"type":"text","text":"u"}}]},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","content":[{"type":"content"}]},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","content":[{"type":"content","content":"x"}]},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c","locations":[{"path":"/a","line":1e400}]},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"a","name":"A","kind":"allow_once","_meta":[1e400]}]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c"}}"#,
        r#"{"sessionId":"s","options":[]}"#,
        r#"{"toolCall":{"toolCallId":"c"},"options":[]}"#,
        r#"{"sessionId":"s","sessionId":"s","toolCall":{"toolCallId":"c"},"options":[]}"#,
        r#"{"sessionId":"s","toolCall":{"toolCallId":"c"},"toolCall":{"toolCallId":"c"},"options":[]}"#,
        r#"{}"#,
        r#"[]"#,
        r#"null"#,
    ] {
        agree_permission(params);
    }
}

#[test]
fn result_edge_cases_agree() {
    for result in [
        r#"{"stopReason":"end_turn"}"#,
        r#"{"stopReason":"cancelled","_meta":{"a":1}}"#,
        r#"{"_meta":7,"stopReason":"max_tokens"}"#,
        r#"{"stopReason":"max\u005ftokens"}"#,
        r#"{"stopReason":"bored"}"#,
        r#"{"stopReason":1}"#,
        r#"{"stopReason":"end_turn","stopReason":"refusal"}"#,
        r#"{"stopReason":"end_turn","_meta":1e400}"#,
        r#"{}"#,
        r#"[]"#,
        r#"["end_turn"]"#,
        r#"null"#,
    ] {
        agree_prompt_result(result);
    }
    for result in [
        r#"{"outcome":{"outcome":"selected","optionId":"a"}}"#,
        r#"{"outcome":{"outcome":"selected","optionId":"a","_meta":{"m":1}},"_meta":{"n":2}}"#,
        r#"{"outcome":{"outcome":"selected","optionId":"a","_meta":3}}"#,
        r#"{"outcome":{"optionId":"a","outcome":"selected"}}"#,
        r#"{"outcome":{"outcome":"selected","optionId":"a","optionId":"b"}}"#,
        r#"{"outcome":{"outcome":"selected","outcome":"cancelled","optionId":"a"}}"#,
        r#"{"outcome":{"outcome":"selected"}}"#,
        r#"{"outcome":{"outcome":"cancelled"}}"#,
        r#"{"outcome":{"outcome":"cancelled","optionId":5,"x":[1]}}"#,
        r#"{"outcome":{"outcome":"maybe"}}"#,
        r#"{"outcome":{"outcome":7}}"#,
        r#"{"outcome":{}}"#,
        r#"{"outcome":"selected","optionId":"a"}"#,
        r#"{"outcome":"selected","optionId":"a","_meta":{"k":true}}"#,
        r#"{"outcome":"sel\u0065cted","optionId":"a\u0021"}"#,
        r#"{"outcome":"selected"}"#,
        r#"{"outcome":"selected","optionId":null}"#,
        r#"{"outcome":"selected","optionId":5}"#,
        r#"{"outcome":{"outcome":"selected","optionId":"a"},"optionId":5}"#,
        r#"{"outcome":"cancelled"}"#,
        r#"{"outcome":"maybe"}"#,
        r#"{"outcome":5}"#,
        r#"{"outcome":null}"#,
        r#"{"outcome":"cancelled","outcome":"cancelled"}"#,
        r#"{"outcome":"cancelled","_meta":1e400}"#,
        r#"{"outcome":"cancelled","_meta":[1e400]}"#,
        r#"{"outcome":{"outcome":"selected","optionId":"a","_meta":[1e400]}}"#,
        r#"{}"#,
        r#"[]"#,
        r#"null"#,
    ] {
        agree_permission_result(result);
    }
}

/// A generated `session/prompt`: blocks of every type, fields valid, lenient-invalid or
/// strictly invalid, in any order, sometimes duplicated; half of them well formed (every
/// required field decodes), so the fast path is taken often.
#[derive(Clone, Debug)]
struct Prompt(String);

impl Arbitrary for Prompt {
    fn arbitrary(g: &mut Gen) -> Self {
        if bool::arbitrary(g) {
            let meta = pick(g, &["{}", r#"{"a":1}"#, "3"]).to_owned();
            return Prompt(reordered(
                vec![
                    ("sessionId", string_value(g)),
                    ("prompt", valid_list(g, valid_block)),
                    ("_meta", meta),
                ],
                g,
            ));
        }
        let prompt = list(g, block);
        let meta = pick(g, &["{}", r#"{"a":1}"#, "3", "1e400"]).to_owned();
        Prompt(object(
            vec![
                ("sessionId", text_value(g)),
                ("prompt", prompt),
                ("_meta", meta),
            ],
            g,
        ))
    }
}

fn valid_permission_option(g: &mut Gen) -> String {
    let kind = pick(
        g,
        &[r#""allow_once""#, r#""allow_always""#, r#""reject_once""#],
    );
    let meta = pick(g, &["{}", r#"{"o":[1]}"#, "false"]).to_owned();
    reordered(
        vec![
            ("optionId", string_value(g)),
            ("name", string_value(g)),
            ("kind", kind.to_owned()),
            ("_meta", meta),
        ],
        g,
    )
}

fn permission_option(g: &mut Gen) -> String {
    let kind = pick(
        g,
        &[
            r#""allow_once""#,
            r#""reject_always""#,
            r#""allow\u005falways""#,
            r#""never""#,
            "1",
        ],
    )
    .to_owned();
    let meta = pick(g, &["{}", r#"{"o":[1]}"#, "false"]).to_owned();
    object(
        vec![
            ("optionId", text_value(g)),
            ("name", text_value(g)),
            ("kind", kind),
            ("_meta", meta),
        ],
        g,
    )
}

/// A generated `session/request_permission`, half of them well formed.
#[derive(Clone, Debug)]
struct Permission(String);

impl Arbitrary for Permission {
    fn arbitrary(g: &mut Gen) -> Self {
        if bool::arbitrary(g) {
            let mut tool_call = valid_tool_call_members(g);
            tool_call.push(("_meta", pick(g, &["{}", "[]"]).to_owned()));
            let tool_call = reordered(tool_call, g);
            return Permission(reordered(
                vec![
                    ("sessionId", string_value(g)),
                    ("toolCall", tool_call),
                    ("options", valid_list(g, valid_permission_option)),
                ],
                g,
            ));
        }
        let mut tool_call = tool_call_members(g);
        let meta = pick(g, &["{}", "[]", r#"{"t":"u"}"#]).to_owned();
        tool_call.push(("_meta", meta));
        let tool_call = if u8::arbitrary(g) % 10 == 0 {
            pick(g, &["null", "[]", r#""c""#]).to_owned()
        } else {
            object(tool_call, g)
        };
        let meta = pick(g, &["{}", r#"{"a":1}"#, "3", "-2E400"]).to_owned();
        Permission(object(
            vec![
                ("sessionId", text_value(g)),
                ("toolCall", tool_call),
                ("options", list(g, permission_option)),
                ("_meta", meta),
            ],
            g,
        ))
    }
}

/// A generated result: a prompt's stop reason, or a permission outcome in either shape.
#[derive(Clone, Debug)]
enum TurnResult {
    Prompt(String),
    Permission(String),
}

impl Arbitrary for TurnResult {
    fn arbitrary(g: &mut Gen) -> Self {
        let meta = pick(g, &["{}", r#"{"a":1}"#, "3", "1e400"]).to_owned();
        if bool::arbitrary(g) {
            let reason = pick(
                g,
                &[
                    r#""end_turn""#,
                    r#""refusal""#,
                    r#""end\u005fturn""#,
                    r#""x""#,
                    "0",
                ],
            )
            .to_owned();
            return TurnResult::Prompt(object(vec![("stopReason", reason), ("_meta", meta)], g));
        }
        let name = pick(
            g,
            &[
                r#""selected""#,
                r#""cancelled""#,
                r#""sel\u0065cted""#,
                r#""x""#,
            ],
        )
        .to_owned();
        let outcome = if bool::arbitrary(g) {
            let inner_meta = pick(g, &["{}", r#"{"i":1}"#, "2"]).to_owned();
            object(
                vec![
                    ("outcome", name),
                    ("optionId", text_value(g)),
                    ("_meta", inner_meta),
                ],
                g,
            )
        } else {
            name
        };
        TurnResult::Permission(object(
            vec![
                ("outcome", outcome),
                ("optionId", text_value(g)),
                ("_meta", meta),
            ],
            g,
        ))
    }
}

#[test]
fn generated_prompts_agree() {
    fn property(prompt: Prompt) -> bool {
        agree_prompt(&prompt.0);
        true
    }
    QuickCheck::new()
        .tests(3_000)
        .quickcheck(property as fn(Prompt) -> bool);
}

#[test]
fn generated_permission_requests_agree() {
    fn property(permission: Permission) -> bool {
        agree_permission(&permission.0);
        true
    }
    QuickCheck::new()
        .tests(3_000)
        .quickcheck(property as fn(Permission) -> bool);
}

#[test]
fn generated_results_agree() {
    fn property(result: TurnResult) -> bool {
        match result {
            TurnResult::Prompt(result) => agree_prompt_result(&result),
            TurnResult::Permission(result) => agree_permission_result(&result),
        }
        true
    }
    QuickCheck::new()
        .tests(3_000)
        .quickcheck(property as fn(TurnResult) -> bool);
}
