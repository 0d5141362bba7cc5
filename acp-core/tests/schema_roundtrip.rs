//! Property tests: generated values of the main types survive encode → decode unchanged, and
//! what we encode validates against the official schema.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

mod schema_common;

use std::sync::OnceLock;

use acp_core::schema::*;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn text(g: &mut Gen) -> String {
    String::arbitrary(g)
}

fn maybe<T>(g: &mut Gen, make: impl FnOnce(&mut Gen) -> T) -> Option<T> {
    if bool::arbitrary(g) {
        Some(make(g))
    } else {
        None
    }
}

fn list<T>(g: &mut Gen, max: usize, mut make: impl FnMut(&mut Gen) -> T) -> Vec<T> {
    let len = usize::arbitrary(g) % (max + 1);
    (0..len).map(|_| make(g)).collect()
}

fn pick<T: Clone>(g: &mut Gen, items: &[T]) -> T {
    g.choose(items).expect("non-empty").clone()
}

/// A finite number (NaN and infinities are not JSON).
fn number(g: &mut Gen) -> f64 {
    f64::from(i32::arbitrary(g)) / 4.0
}

fn json_value(g: &mut Gen, depth: usize) -> Value {
    match u8::arbitrary(g) % if depth == 0 { 4 } else { 6 } {
        0 => Value::Bool(bool::arbitrary(g)),
        1 => Value::from(i64::arbitrary(g)),
        2 => Value::String(text(g)),
        3 => Value::from(number(g)),
        4 => Value::Array(list(g, 3, |g| json_value(g, depth - 1))),
        _ => Value::Object(meta_map(g, depth - 1)),
    }
}

fn meta_map(g: &mut Gen, depth: usize) -> Meta {
    list(g, 3, |g| (text(g), json_value(g, depth)))
        .into_iter()
        .collect()
}

fn meta(g: &mut Gen) -> Option<Meta> {
    maybe(g, |g| meta_map(g, 1))
}

fn annotations(g: &mut Gen) -> Option<Annotations> {
    maybe(g, |g| {
        let mut a = Annotations::default();
        a.audience = maybe(g, |g| {
            list(g, 2, |g| pick(g, &[Role::User, Role::Assistant]))
        });
        a.last_modified = maybe(g, text);
        a.priority = maybe(g, number);
        a.meta = meta(g);
        a
    })
}

fn content_block(g: &mut Gen) -> ContentBlock {
    match u8::arbitrary(g) % 7 {
        0 => {
            let mut t = TextContent::new(text(g));
            t.annotations = annotations(g);
            t.meta = meta(g);
            ContentBlock::Text(t)
        }
        1 => {
            let mut i = ImageContent::default();
            (i.data, i.mime_type, i.uri) = (text(g), text(g), maybe(g, text));
            i.annotations = annotations(g);
            ContentBlock::Image(i)
        }
        2 => {
            let mut a = AudioContent::default();
            (a.data, a.mime_type) = (text(g), text(g));
            a.meta = meta(g);
            ContentBlock::Audio(a)
        }
        3 => {
            let mut l = ResourceLink::default();
            (l.uri, l.name, l.title, l.description) =
                (text(g), text(g), maybe(g, text), maybe(g, text));
            (l.mime_type, l.size) = (maybe(g, text), maybe(g, i64::arbitrary));
            ContentBlock::ResourceLink(l)
        }
        4 | 5 => {
            let resource = if bool::arbitrary(g) {
                let mut t = TextResourceContents::default();
                (t.uri, t.text, t.mime_type) = (text(g), text(g), maybe(g, text));
                EmbeddedResourceResource::Text(t)
            } else {
                let mut b = BlobResourceContents::default();
                (b.uri, b.blob, b.mime_type) = (text(g), text(g), maybe(g, text));
                EmbeddedResourceResource::Blob(b)
            };
            let block: ContentBlock = serde_json::from_value(
                serde_json::json!({"type": "resource", "resource": resource}),
            )
            .unwrap();
            block
        }
        _ => {
            let mut object = meta_map(g, 1);
            object.insert(
                "type".into(),
                Value::String(format!("_x_{}", u8::arbitrary(g))),
            );
            ContentBlock::Unknown(object)
        }
    }
}

fn tool_kind(g: &mut Gen) -> ToolKind {
    if u8::arbitrary(g) % 8 == 0 {
        return ToolKind::Unknown(format!("_kind_{}", text(g)));
    }
    let name = pick(g, ToolKind::NAMES);
    serde_json::from_value(Value::from(name)).unwrap()
}

fn status(g: &mut Gen) -> ToolCallStatus {
    pick(
        g,
        &[
            ToolCallStatus::Pending,
            ToolCallStatus::InProgress,
            ToolCallStatus::Completed,
            ToolCallStatus::Failed,
        ],
    )
}

fn tool_content(g: &mut Gen) -> ToolCallContent {
    match u8::arbitrary(g) % 3 {
        0 => ToolCallContent::Content(ToolContent::new(content_block(g))),
        1 => {
            let mut d = Diff::default();
            (d.path, d.old_text, d.new_text) = (text(g), maybe(g, text), text(g));
            ToolCallContent::Diff(d)
        }
        _ => {
            let mut t = TerminalContent::default();
            t.terminal_id = text(g);
            ToolCallContent::Terminal(t)
        }
    }
}

fn location(g: &mut Gen) -> ToolCallLocation {
    let mut l = ToolCallLocation::default();
    (l.path, l.line) = (text(g), maybe(g, u32::arbitrary));
    l
}

/// Raw input/output: any JSON but `null` (which reads back as absent).
fn raw(g: &mut Gen) -> Option<Value> {
    maybe(g, |g| json_value(g, 2))
}

fn tool_call(g: &mut Gen) -> ToolCall {
    let mut c = ToolCall::new(text(g), text(g));
    c.kind = maybe(g, tool_kind);
    c.status = maybe(g, status);
    c.content = list(g, 3, tool_content);
    c.locations = list(g, 2, location);
    (c.raw_input, c.raw_output) = (raw(g), raw(g));
    c.meta = meta(g);
    c
}

fn tool_call_update(g: &mut Gen) -> ToolCallUpdate {
    let mut u = ToolCallUpdate::new(text(g));
    u.kind = maybe(g, tool_kind);
    u.status = maybe(g, status);
    u.title = maybe(g, text);
    u.content = maybe(g, |g| list(g, 3, tool_content));
    u.locations = maybe(g, |g| list(g, 2, location));
    (u.raw_input, u.raw_output) = (raw(g), raw(g));
    u
}

fn config_option(g: &mut Gen) -> SessionConfigOption {
    let mut option = SessionConfigOption::select(text(g), text(g), text(g), Vec::new());
    option.description = maybe(g, text);
    option.category = maybe(g, |g| {
        pick(
            g,
            &[
                SessionConfigOptionCategory::Mode,
                SessionConfigOptionCategory::Model,
                SessionConfigOptionCategory::Unknown("_vendor".into()),
            ],
        )
    });
    let choice = |g: &mut Gen| {
        let mut o = SessionConfigSelectOption::new(text(g), text(g));
        o.description = maybe(g, text);
        o
    };
    option.kind = match u8::arbitrary(g) % 3 {
        0 => SessionConfigKind::Boolean {
            current_value: bool::arbitrary(g),
        },
        1 => SessionConfigKind::Select {
            current_value: text(g),
            options: SessionConfigSelectOptions::Ungrouped(list(g, 3, choice)),
        },
        _ => {
            let mut groups = Vec::new();
            for _ in 0..1 + usize::arbitrary(g) % 2 {
                let mut group = SessionConfigSelectGroup::default();
                (group.group, group.name, group.options) = (text(g), text(g), list(g, 2, choice));
                groups.push(group);
            }
            SessionConfigKind::Select {
                current_value: text(g),
                options: SessionConfigSelectOptions::Grouped(groups),
            }
        }
    };
    option
}

fn session_update(g: &mut Gen) -> SessionUpdate {
    let chunk = |g: &mut Gen| {
        let mut c = ContentChunk::new(content_block(g));
        c.message_id = maybe(g, text);
        c
    };
    match u8::arbitrary(g) % 12 {
        0 => SessionUpdate::UserMessageChunk(chunk(g)),
        1 => SessionUpdate::AgentMessageChunk(chunk(g)),
        2 => SessionUpdate::AgentThoughtChunk(chunk(g)),
        3 => SessionUpdate::ToolCall(tool_call(g)),
        4 => SessionUpdate::ToolCallUpdate(tool_call_update(g)),
        5 => {
            let mut plan = Plan::default();
            plan.entries = list(g, 3, |g| {
                PlanEntry::new(
                    text(g),
                    pick(
                        g,
                        &[
                            PlanEntryPriority::High,
                            PlanEntryPriority::Medium,
                            PlanEntryPriority::Low,
                        ],
                    ),
                    pick(
                        g,
                        &[
                            PlanEntryStatus::Pending,
                            PlanEntryStatus::InProgress,
                            PlanEntryStatus::Completed,
                        ],
                    ),
                )
            });
            SessionUpdate::Plan(plan)
        }
        6 => {
            let mut u = AvailableCommandsUpdate::default();
            u.available_commands = list(g, 3, |g| {
                let mut c = AvailableCommand::default();
                (c.name, c.description) = (text(g), text(g));
                c.input = maybe(g, |g| {
                    let mut i = AvailableCommandInput::default();
                    i.hint = text(g);
                    i
                });
                c
            });
            SessionUpdate::AvailableCommandsUpdate(u)
        }
        7 => SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(text(g))),
        8 => {
            let mut u = ConfigOptionUpdate::default();
            u.config_options = list(g, 3, config_option);
            SessionUpdate::ConfigOptionUpdate(u)
        }
        9 => {
            let mut u = SessionInfoUpdate::default();
            u.title = maybe(g, |g| maybe(g, text));
            u.updated_at = maybe(g, |g| maybe(g, text));
            SessionUpdate::SessionInfoUpdate(u)
        }
        10 => {
            let mut u = UsageUpdate::default();
            (u.used, u.size) = (u64::arbitrary(g), u64::arbitrary(g));
            u.cost = maybe(g, |g| {
                let mut c = Cost::default();
                (c.amount, c.currency) = (number(g), text(g));
                c
            });
            SessionUpdate::UsageUpdate(u)
        }
        _ => {
            let mut object = meta_map(g, 1);
            object.insert(
                "sessionUpdate".into(),
                Value::String(format!("_future_{}", u8::arbitrary(g))),
            );
            SessionUpdate::Unknown(object)
        }
    }
}

fn mcp_server(g: &mut Gen) -> McpServer {
    let pair = |g: &mut Gen| EnvVariable::new(text(g), text(g));
    match u8::arbitrary(g) % 3 {
        0 => {
            let mut s = McpServerStdio::new(text(g), text(g));
            s.args = list(g, 3, text);
            s.env = list(g, 2, pair);
            McpServer::Stdio(s)
        }
        n => {
            let mut s = McpServerHttp::default();
            (s.name, s.url, s.headers) = (text(g), text(g), list(g, 2, pair));
            if n == 1 {
                McpServer::Http(s)
            } else {
                McpServer::Sse(s)
            }
        }
    }
}

/// Wraps a generated value for quickcheck.
#[derive(Clone, Debug)]
struct Arb<T>(T);

macro_rules! arbitrary_via {
    ($($ty:ty => $make:expr;)*) => {$(
        impl Arbitrary for Arb<$ty> {
            fn arbitrary(g: &mut Gen) -> Self {
                Arb($make(g))
            }
        }
    )*};
}

arbitrary_via! {
    ContentBlock => content_block;
    SessionUpdate => session_update;
    ToolCallUpdate => tool_call_update;
    McpServer => mcp_server;
    SessionConfigOption => config_option;
}

fn round_trips<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T) -> bool {
    let text = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    if &back != value {
        eprintln!("differs after a round trip: {text}\n{value:?}\n{back:?}");
    }
    &back == value
}

/// The official schema's validator for `type_name`; `None` when the schema could not be
/// generated here (`schema_common` said so), and then nothing is validated.
fn validator(type_name: &str) -> Option<jsonschema::Validator> {
    let root = schema_common::schema()?;
    let validator = jsonschema::validator_for(&serde_json::json!({
        "$schema": root["$schema"], "$defs": root["$defs"], "$ref": format!("#/$defs/{type_name}"),
    }));
    Some(validator.expect("the official schema compiles"))
}

fn valid(
    cell: &'static OnceLock<Option<jsonschema::Validator>>,
    type_name: &str,
    value: &impl Serialize,
) -> bool {
    let Some(v) = cell.get_or_init(|| validator(type_name)) else {
        return true;
    };
    let instance = serde_json::to_value(value).unwrap();
    if carries_unknown_values(&instance) {
        // Forward-compatible values are outside the (closed) official schema by design.
        return true;
    }
    let ok = v.is_valid(&instance);
    if !ok {
        eprintln!("{type_name} rejects {instance}");
    }
    ok
}

/// Whether a generated forward-compatible (unknown) tag or kind is in there.
fn carries_unknown_values(value: &Value) -> bool {
    match value {
        Value::String(s) => ["_x_", "_kind_", "_future_"]
            .iter()
            .any(|marker| s.starts_with(marker)),
        Value::Array(items) => items.iter().any(carries_unknown_values),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k != "_meta" && carries_unknown_values(v)),
        _ => false,
    }
}

fn quickcheck() -> QuickCheck {
    QuickCheck::new().tests(300).rng(Gen::new(8))
}

#[test]
fn content_blocks_round_trip_and_validate() {
    static V: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    fn prop(b: Arb<ContentBlock>) -> bool {
        round_trips(&b.0) && valid(&V, "ContentBlock", &b.0)
    }
    quickcheck().quickcheck(prop as fn(Arb<ContentBlock>) -> bool);
}

#[test]
fn session_updates_round_trip_and_validate() {
    static V: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    fn prop(u: Arb<SessionUpdate>) -> bool {
        let notification = SessionNotification::new("sess", u.0);
        round_trips(&notification) && valid(&V, "SessionNotification", &notification)
    }
    quickcheck().quickcheck(prop as fn(Arb<SessionUpdate>) -> bool);
}

#[test]
fn permission_requests_round_trip_and_validate() {
    static V: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    fn prop(u: Arb<ToolCallUpdate>, kinds: Vec<u8>) -> bool {
        let mut request = RequestPermissionRequest::default();
        request.session_id = "sess".into();
        request.tool_call = u.0;
        let all = [
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ];
        request.options = kinds
            .iter()
            .map(|k| PermissionOption::of_kind(all[usize::from(*k) % 4], "label"))
            .collect();
        round_trips(&request) && valid(&V, "RequestPermissionRequest", &request)
    }
    quickcheck().quickcheck(prop as fn(Arb<ToolCallUpdate>, Vec<u8>) -> bool);
}

#[test]
fn new_session_requests_round_trip_and_validate() {
    static V: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    fn prop(servers: Vec<Arb<McpServer>>, cwd: String, dirs: Vec<String>) -> bool {
        let mut request = NewSessionRequest::new(cwd);
        request.additional_directories = dirs;
        request.mcp_servers = servers.into_iter().map(|s| s.0).collect();
        round_trips(&request) && valid(&V, "NewSessionRequest", &request)
    }
    quickcheck().quickcheck(prop as fn(Vec<Arb<McpServer>>, String, Vec<String>) -> bool);
}

#[test]
fn config_option_responses_round_trip_and_validate() {
    static V: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    fn prop(options: Vec<Arb<SessionConfigOption>>) -> bool {
        let mut response = SetSessionConfigOptionResponse::default();
        response.config_options = options.into_iter().map(|o| o.0).collect();
        round_trips(&response) && valid(&V, "SetSessionConfigOptionResponse", &response)
    }
    quickcheck().quickcheck(prop as fn(Vec<Arb<SessionConfigOption>>) -> bool);
}

#[test]
fn prompts_round_trip_through_the_method_decoder() {
    fn prop(blocks: Vec<Arb<ContentBlock>>, session: String) -> bool {
        let request = PromptRequest::new(session, blocks.into_iter().map(|b| b.0).collect());
        let text = serde_json::to_string(&request).unwrap();
        let decoded = ClientRequest::decode("session/prompt", Some(&text));
        if request.session_id.is_empty() || request.prompt.is_empty() {
            // Agentao's value rules: both must be non-empty.
            return decoded.is_err();
        }
        decoded.unwrap() == ClientRequest::Prompt(request)
    }
    quickcheck().quickcheck(prop as fn(Vec<Arb<ContentBlock>>, String) -> bool);
}

#[test]
fn buffered_and_streamed_decoding_agree() {
    // Same object, tag first vs tag last: the two decoding paths must give the same value.
    fn prop(u: Arb<SessionUpdate>) -> bool {
        let Value::Object(map) = serde_json::to_value(&u.0).unwrap() else {
            return false;
        };
        let tag = map.get("sessionUpdate").cloned().unwrap();
        let mut last = String::from("{");
        for (k, v) in map.iter().filter(|(k, _)| *k != "sessionUpdate") {
            last.push_str(&format!("{}:{},", Value::from(k.as_str()), v));
        }
        last.push_str(&format!("\"sessionUpdate\":{tag}}}"));
        let decoded: SessionUpdate =
            serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}"));
        decoded == u.0
    }
    quickcheck().quickcheck(prop as fn(Arb<SessionUpdate>) -> bool);
}
