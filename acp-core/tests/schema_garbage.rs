//! Peer garbage is never a panic: arbitrary JSON (and arbitrary text) as the params or result
//! of every method decodes or fails with an error, in both directions.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

use acp_core::schema::*;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use serde_json::Value;

/// Arbitrary JSON, biased towards the keys and tags the schema uses so that decoding gets deep.
#[derive(Clone, Debug)]
struct AnyJson(Value);

const KEYS: &[&str] = &[
    "sessionId",
    "sessionUpdate",
    "type",
    "content",
    "text",
    "toolCallId",
    "title",
    "kind",
    "status",
    "entries",
    "prompt",
    "mcpServers",
    "env",
    "name",
    "value",
    "command",
    "args",
    "url",
    "headers",
    "outcome",
    "optionId",
    "options",
    "configOptions",
    "currentValue",
    "group",
    "protocolVersion",
    "clientCapabilities",
    "fs",
    "_meta",
    "resource",
    "uri",
    "locations",
    "update",
    "mode",
    "action",
];
const STRINGS: &[&str] = &[
    "text",
    "image",
    "resource",
    "agent_message_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "select",
    "boolean",
    "http",
    "sse",
    "stdio",
    "selected",
    "cancelled",
    "form",
    "url",
    "read",
    "",
];

fn any(g: &mut Gen, depth: usize) -> Value {
    match u8::arbitrary(g) % if depth == 0 { 5 } else { 7 } {
        0 => Value::Null,
        1 => Value::Bool(bool::arbitrary(g)),
        2 => Value::from(i64::arbitrary(g)),
        3 => Value::String((*g.choose(STRINGS).unwrap()).to_owned()),
        4 => Value::String(String::arbitrary(g)),
        5 => Value::Array(
            (0..usize::arbitrary(g) % 4)
                .map(|_| any(g, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..usize::arbitrary(g) % 6)
                .map(|_| ((*g.choose(KEYS).unwrap()).to_owned(), any(g, depth - 1)))
                .collect(),
        ),
    }
}

impl Arbitrary for AnyJson {
    fn arbitrary(g: &mut Gen) -> Self {
        AnyJson(any(g, 5))
    }
}

fn decode_everything(text: &str) {
    for method in Method::ALL {
        let name = method.name();
        let _ = ClientRequest::decode(name, Some(text));
        let _ = AgentRequest::decode(name, Some(text));
        let _ = ClientNotification::decode(name, Some(text));
        let _ = AgentNotification::decode(name, Some(text));
        let _ = AgentResponse::decode(name, text);
        let _ = ClientResponse::decode(name, text);
    }
}

#[test]
fn arbitrary_json_never_panics() {
    fn prop(value: AnyJson) -> bool {
        decode_everything(&value.0.to_string());
        true
    }
    QuickCheck::new()
        .tests(400)
        .quickcheck(prop as fn(AnyJson) -> bool);
}

#[test]
fn arbitrary_text_never_panics() {
    fn prop(text: String) -> bool {
        decode_everything(&text);
        true
    }
    QuickCheck::new()
        .tests(200)
        .quickcheck(prop as fn(String) -> bool);
}

#[test]
fn deeply_nested_input_is_an_error_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let params = format!(
        r#"{{"sessionId":"s","update":{{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","rawInput":{deep}}}}}"#
    );
    let err = AgentNotification::decode("session/update", Some(&params)).unwrap_err();
    assert!(
        err.message()
            .starts_with("session/update params is not valid JSON: recursion limit exceeded"),
        "{}",
        err.message()
    );
}
