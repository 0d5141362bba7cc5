//! The official schema crate (`agent-client-protocol-schema` =1.20.0, stable surface) as the
//! oracle for acp-core's types.
//!
//! - **Official → ours → official**: every sample of `samples/` is read into its official
//!   type, written by the official crate, decoded by ours (owned, the owned fast path, and the
//!   borrowed view where one exists), re-encoded by ours, and read back by the official crate:
//!   the value must be unchanged, and our JSON valid by the JSON Schema the crate generates.
//! - **Ours → official**: every line our encoder writes in `vectors/` is read by the official
//!   crate as the type its method names, and so is our re-encoding of each of acp-core's
//!   sample messages (`acp-core/tests/messages/`).
//! - **Coverage**: every stable method, `sessionUpdate` kind, content block, tool call content
//!   and string enum value the crate knows has a sample.

mod common;
mod samples;

use std::collections::{BTreeMap, BTreeSet};

use acp_core::schema as ours;
use acp_core::wire::encode::to_vec;
use acp_testkit::vectors::{self, Step};
use agent_client_protocol_schema::v1 as o;
use common::{
    Tier, official_reads, official_schema, schema_errors, strings,
    variant_names,
};
use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Every stable method of 1.20.0, from the crate's own method-name tables.
fn official_methods() -> BTreeSet<String> {
    let mut methods = BTreeSet::new();
    for table in [
        serde_json::to_value(o::AGENT_METHOD_NAMES).unwrap(),
        serde_json::to_value(o::CLIENT_METHOD_NAMES).unwrap(),
        serde_json::to_value(o::PROTOCOL_LEVEL_METHOD_NAMES).unwrap(),
    ] {
        for name in table.as_object().expect("a table").values() {
            methods.insert(name.as_str().expect("a method name").to_owned());
        }
    }
    methods
}

#[test]
fn official_values_come_back_unchanged_through_ours() {
    let mut viewed = 0;
    let all = samples::all();
    for sample in &all {
        if (sample.run)(sample.tier, sample.method, sample.json) {
            viewed += 1;
        }
    }
    // The views cover initialize, session/new, prompt, cancel, permission and every
    // session/update sample (its unviewed kinds pass through as `Other`).
    let updates = all.iter().filter(|s| s.method == "session/update").count();
    eprintln!("{} samples, {viewed} also read by a view", all.len());
    assert!(
        viewed > updates,
        "{viewed} samples viewed, {updates} of them updates"
    );
}

#[test]
fn the_generated_schema_rejects_what_it_forbids() {
    let updates = official_schema::<o::SessionNotification>();
    let update = |update: Value| serde_json::json!({"sessionId": "s", "update": update});
    for bad in [
        serde_json::json!({"sessionUpdate": "plan_update"}),
        serde_json::json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "entries": []}}),
        serde_json::json!({"sessionUpdate": "notice", "severity": "info"}),
        serde_json::json!({"sessionUpdate": "usage_update", "used": -1, "size": 2}),
        serde_json::json!({"sessionUpdate": "nope"}),
    ] {
        assert!(
            !schema_errors(&updates, &update(bad.clone())).is_empty(),
            "{bad}"
        );
    }
    let good = serde_json::json!({"sessionUpdate": "plan_removed", "planId": "p"});
    assert_eq!(schema_errors(&updates, &update(good)), Vec::<String>::new());
    let prompt = official_schema::<o::PromptResponse>();
    assert!(!schema_errors(&prompt, &serde_json::json!({"stopReason": "weird"})).is_empty());
}

#[test]
fn every_stable_method_has_params_and_result_samples() {
    let all = samples::all();
    let mut missing = Vec::new();
    for method in official_methods() {
        let ours = ours::Method::from_name(&method)
            .unwrap_or_else(|| panic!("{method} is stable in 1.20.0 but not in our table"));
        let params = all.iter().any(|s| {
            s.method == method && !matches!(s.tier, Tier::AgentResponse | Tier::ClientResponse)
        });
        let result = all.iter().any(|s| {
            s.method == method && matches!(s.tier, Tier::AgentResponse | Tier::ClientResponse)
        });
        if !params {
            missing.push(format!("{method} params"));
        }
        if !ours.is_notification() && !result {
            missing.push(format!("{method} result"));
        }
    }
    assert!(missing.is_empty(), "no sample for {missing:?}");
}

/// The `sessionUpdate` kinds, block and content types the samples use.
fn sampled(tag_path: &[&str]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for sample in samples::all() {
        let value: Value = serde_json::from_str(sample.json).unwrap();
        collect_at(&value, tag_path, &mut found);
    }
    found
}

/// The strings at `path` below any object of `value` whose first key is `path[0]` …: a
/// small matcher, `*` for any array item.
fn collect_at(value: &Value, path: &[&str], out: &mut BTreeSet<String>) {
    fn walk(value: &Value, path: &[&str], out: &mut BTreeSet<String>) {
        match (path.first(), value) {
            (None, Value::String(s)) => {
                out.insert(s.clone());
            }
            (Some(&"*"), Value::Array(items)) => {
                items.iter().for_each(|v| walk(v, &path[1..], out))
            }
            (Some(key), Value::Object(map)) => {
                if let Some(v) = map.get(*key) {
                    walk(v, &path[1..], out);
                }
            }
            _ => {}
        }
    }
    walk(value, path, out);
    match value {
        Value::Array(items) => items.iter().for_each(|v| collect_at(v, path, out)),
        Value::Object(map) => map.values().for_each(|v| collect_at(v, path, out)),
        _ => {}
    }
}

#[test]
fn every_update_kind_block_and_tool_content_has_a_sample() {
    let kinds = variant_names(
        &official_schema::<o::SessionUpdate>(),
        Some("sessionUpdate"),
    );
    assert!(kinds.contains("plan_update") && kinds.contains("session_message_chunk"));
    assert_eq!(sampled(&["update", "sessionUpdate"]), kinds);
    // Our owned types know every stable kind, in a typed variant.
    let ours: BTreeSet<String> = ours::SessionUpdate::KNOWN
        .iter()
        .map(|k| k.to_string())
        .collect();
    assert_eq!(ours, kinds);

    let blocks = variant_names(&official_schema::<o::ContentBlock>(), Some("type"));
    let mut sampled_blocks = sampled(&["prompt", "*", "type"]);
    sampled_blocks.extend(sampled(&["content", "type"]));
    assert!(
        blocks.is_subset(&sampled_blocks),
        "{blocks:?} not all in {sampled_blocks:?}"
    );

    let contents = variant_names(&official_schema::<o::ToolCallContent>(), Some("type"));
    let mut sampled_contents = sampled(&["update", "content", "*", "type"]);
    sampled_contents.extend(sampled(&["toolCall", "content", "*", "type"]));
    assert!(
        contents.is_subset(&sampled_contents),
        "{contents:?} not all in {sampled_contents:?}"
    );
}

#[test]
fn every_string_enum_value_has_a_sample() {
    let mut used = BTreeSet::new();
    for sample in samples::all() {
        strings(&serde_json::from_str(sample.json).unwrap(), &mut used);
    }
    let enums: [(&str, BTreeSet<String>); 12] = [
        (
            "StopReason",
            variant_names(&official_schema::<o::StopReason>(), None),
        ),
        (
            "ToolKind",
            variant_names(&official_schema::<o::ToolKind>(), None),
        ),
        (
            "ToolCallStatus",
            variant_names(&official_schema::<o::ToolCallStatus>(), None),
        ),
        (
            "PlanEntryPriority",
            variant_names(&official_schema::<o::PlanEntryPriority>(), None),
        ),
        (
            "PlanEntryStatus",
            variant_names(&official_schema::<o::PlanEntryStatus>(), None),
        ),
        (
            "PermissionOptionKind",
            variant_names(&official_schema::<o::PermissionOptionKind>(), None),
        ),
        (
            "SessionConfigOptionCategory",
            variant_names(&official_schema::<o::SessionConfigOptionCategory>(), None),
        ),
        (
            "NoticeSeverity",
            variant_names(&official_schema::<o::NoticeSeverity>(), None),
        ),
        (
            "CompactionStatus",
            variant_names(&official_schema::<o::CompactionStatus>(), None),
        ),
        (
            "SystemPromptMode",
            variant_names(&official_schema::<o::SystemPromptMode>(), None),
        ),
        ("Role", variant_names(&official_schema::<o::Role>(), None)),
        (
            "StringFormat",
            variant_names(&official_schema::<o::StringFormat>(), None),
        ),
    ];
    for (name, values) in enums {
        assert!(!values.is_empty(), "{name}: no values found in its schema");
        let missing: Vec<_> = values.difference(&used).collect();
        assert!(missing.is_empty(), "{name}: no sample uses {missing:?}");
    }
    // Tool kinds: `other` is the default, written only when absent; the rest are sampled.
    let states = variant_names(&official_schema::<o::StateUpdate>(), Some("state"));
    assert!(states.is_subset(&used), "{states:?}");
}

// ---- ours → official

/// Decodes one of acp-core's sample messages (`acp-core/tests/messages/`) with our type `T`,
/// re-encodes it with our encoder, and requires the official `O` to read that as the same value
/// it reads from the message itself.
fn message_through_ours<T, O>(name: &str)
where
    T: DeserializeOwned + Serialize,
    O: DeserializeOwned + PartialEq + std::fmt::Debug + schemars::JsonSchema,
{
    let path = common::messages_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let decoded: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: ours: {e}"));
    let encoded = String::from_utf8(to_vec(&decoded).unwrap()).unwrap();
    let from_ours: O = official_reads(name, &encoded);
    let from_message: O = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(from_ours, from_message, "{name}: {encoded}");
}

/// A sample message and the check of its types.
type GoldenCheck = (&'static str, fn(&str));

#[test]
fn our_encoding_of_every_sample_message_reads_as_official() {
    let table: &[GoldenCheck] = &[
        (
            "cancel_notification.json",
            message_through_ours::<ours::CancelNotification, o::CancelNotification>,
        ),
        (
            "content_audio.json",
            message_through_ours::<ours::ContentBlock, o::ContentBlock>,
        ),
        (
            "content_image.json",
            message_through_ours::<ours::ContentBlock, o::ContentBlock>,
        ),
        (
            "content_resource_blob.json",
            message_through_ours::<ours::ContentBlock, o::ContentBlock>,
        ),
        (
            "content_resource_link.json",
            message_through_ours::<ours::ContentBlock, o::ContentBlock>,
        ),
        (
            "content_resource_text.json",
            message_through_ours::<ours::ContentBlock, o::ContentBlock>,
        ),
        (
            "content_text.json",
            message_through_ours::<ours::ContentBlock, o::ContentBlock>,
        ),
        (
            "fs_read_text_file_request.json",
            message_through_ours::<ours::ReadTextFileRequest, o::ReadTextFileRequest>,
        ),
        (
            "fs_read_text_file_response.json",
            message_through_ours::<ours::ReadTextFileResponse, o::ReadTextFileResponse>,
        ),
        (
            "fs_write_text_file_request.json",
            message_through_ours::<ours::WriteTextFileRequest, o::WriteTextFileRequest>,
        ),
        (
            "initialize_request.json",
            message_through_ours::<ours::InitializeRequest, o::InitializeRequest>,
        ),
        (
            "initialize_response.json",
            message_through_ours::<ours::InitializeResponse, o::InitializeResponse>,
        ),
        (
            "new_session_request.json",
            message_through_ours::<ours::NewSessionRequest, o::NewSessionRequest>,
        ),
        (
            "new_session_response.json",
            message_through_ours::<ours::NewSessionResponse, o::NewSessionResponse>,
        ),
        (
            "permission_outcome_cancelled.json",
            message_through_ours::<ours::RequestPermissionOutcome, o::RequestPermissionOutcome>,
        ),
        (
            "permission_outcome_selected.json",
            message_through_ours::<ours::RequestPermissionOutcome, o::RequestPermissionOutcome>,
        ),
        (
            "prompt_request.json",
            message_through_ours::<ours::PromptRequest, o::PromptRequest>,
        ),
        (
            "prompt_response_usage.json",
            message_through_ours::<ours::PromptResponse, o::PromptResponse>,
        ),
        (
            "request_permission_request.json",
            message_through_ours::<ours::RequestPermissionRequest, o::RequestPermissionRequest>,
        ),
        (
            "request_permission_response_selected.json",
            message_through_ours::<ours::RequestPermissionResponse, o::RequestPermissionResponse>,
        ),
        (
            "session_update_agent_message_chunk.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "session_update_agent_thought_chunk.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "session_update_config_option_update.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "session_update_plan.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "session_update_tool_call.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "session_update_tool_call_edit.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "session_update_tool_call_locations_rawinput.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "session_update_tool_call_read.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "session_update_tool_call_update_content.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "session_update_tool_call_update_more_fields.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "session_update_user_message_chunk.json",
            message_through_ours::<ours::SessionUpdate, o::SessionUpdate>,
        ),
        (
            "set_session_config_option_request.json",
            message_through_ours::<
                ours::SetSessionConfigOptionRequest,
                o::SetSessionConfigOptionRequest,
            >,
        ),
        (
            "set_session_config_option_response.json",
            message_through_ours::<
                ours::SetSessionConfigOptionResponse,
                o::SetSessionConfigOptionResponse,
            >,
        ),
        (
            "tool_content_content_text.json",
            message_through_ours::<ours::ToolCallContent, o::ToolCallContent>,
        ),
        (
            "tool_content_diff.json",
            message_through_ours::<ours::ToolCallContent, o::ToolCallContent>,
        ),
        (
            "tool_content_diff_no_old.json",
            message_through_ours::<ours::ToolCallContent, o::ToolCallContent>,
        ),
        (
            "tool_content_terminal.json",
            message_through_ours::<ours::ToolCallContent, o::ToolCallContent>,
        ),
    ];
    for (name, check) in table {
        check(name);
    }
    // Every message is in the table.
    let dir = common::messages_dir();
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    on_disk.sort();
    let listed: Vec<String> = table.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(listed, on_disk);
}

/// How the official crate read the lines of one direction: counts by outcome.
#[derive(Default, Debug)]
struct Tally {
    /// Read as the official type of their method.
    typed: usize,
    /// Error responses read as the official `Error`.
    errors: usize,
    /// Extension methods (`_…`) and Agentao's `session/cancel` request, which have no
    /// official type.
    skipped: BTreeMap<String, usize>,
}

/// Reads one line our encoder wrote with the official types: a request or notification by
/// its method, a result by the method of the request it answers (`pending`), an error as
/// `Error`. Lines that are no JSON-RPC message (garbage replies are errors, so there are none)
/// fail the test.
fn read_as_official(file: &str, line: &str, pending: &BTreeMap<String, String>, tally: &mut Tally) {
    let message: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{file}: not JSON ({e}): {line}"));
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let fail = |e: agent_client_protocol_schema::MethodDispatchError| -> ! {
        panic!("{file}: the official crate refuses our line: {e}\n{line}")
    };
    if let Some(method) = message.get("method").and_then(Value::as_str) {
        if method.starts_with('_') || (method == "session/cancel" && message.get("id").is_some()) {
            *tally.skipped.entry(method.to_owned()).or_default() += 1;
            return;
        }
        let is_request = message.get("id").is_some();
        match (is_request, method) {
            (false, "$/cancel_request") => {
                o::ProtocolLevelNotification::from_method_and_params(method, &params)
                    .unwrap_or_else(|e| fail(e));
            }
            (true, m) if o::ClientRequest::supports_method(m) => {
                o::ClientRequest::from_method_and_params(m, &params).unwrap_or_else(|e| fail(e));
            }
            (true, m) if o::AgentRequest::supports_method(m) => {
                o::AgentRequest::from_method_and_params(m, &params).unwrap_or_else(|e| fail(e));
            }
            (false, m) if o::ClientNotification::supports_method(m) => {
                o::ClientNotification::from_method_and_params(m, &params)
                    .unwrap_or_else(|e| fail(e));
            }
            (false, m) if o::AgentNotification::supports_method(m) => {
                o::AgentNotification::from_method_and_params(m, &params)
                    .unwrap_or_else(|e| fail(e));
            }
            _ => panic!("{file}: {method} is no stable method of 1.20.0: {line}"),
        }
        tally.typed += 1;
        return;
    }
    if let Some(error) = message.get("error") {
        serde_json::from_value::<o::Error>(error.clone())
            .unwrap_or_else(|e| panic!("{file}: the official Error refuses ours ({e}): {line}"));
        tally.errors += 1;
        return;
    }
    let result = message
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{file}: no JSON-RPC message: {line}"));
    let id = message.get("id").map(Value::to_string).unwrap_or_default();
    let Some(method) = pending.get(&id) else {
        panic!("{file}: a result for id {id}, which no request of the peer had: {line}");
    };
    if method.starts_with('_') || method == "session/cancel" {
        *tally.skipped.entry(format!("{method} result")).or_default() += 1;
        return;
    }
    if o::ClientRequest::supports_method(method) {
        o::AgentResponse::from_method_and_result(method, result).unwrap_or_else(|e| fail(e));
    } else {
        o::ClientResponse::from_method_and_result(method, result).unwrap_or_else(|e| fail(e));
    }
    tally.typed += 1;
}

#[test]
fn every_line_our_encoder_writes_in_the_vectors_reads_as_official() {
    let mut tally = Tally::default();
    let mut files = 0;
    for dir in ["agent", "client", "wire"] {
        for vector in vectors::load_dir(&vectors::vectors_dir().join(dir)).unwrap() {
            files += 1;
            // The peer's requests, by raw id: what our results answer.
            let mut pending = BTreeMap::new();
            for step in &vector.steps {
                match step {
                    Step::In(input) => {
                        let bytes = input.to_bytes();
                        for line in bytes.split(|b| *b == b'\n') {
                            let Ok(message) = serde_json::from_slice::<Value>(line) else {
                                continue;
                            };
                            if let (Some(id), Some(method)) = (
                                message.get("id"),
                                message.get("method").and_then(Value::as_str),
                            ) {
                                pending.insert(id.to_string(), method.to_owned());
                            }
                        }
                    }
                    // A whole message of a message transport (R-MSG-1).
                    Step::Message(bytes) => {
                        if let Ok(message) = serde_json::from_slice::<Value>(bytes)
                            && let (Some(id), Some(method)) = (
                                message.get("id"),
                                message.get("method").and_then(Value::as_str),
                            )
                        {
                            pending.insert(id.to_string(), method.to_owned());
                        }
                    }
                    Step::Out(line) => read_as_official(&vector.name, line, &pending, &mut tally),
                    _ => {}
                }
            }
        }
    }
    eprintln!("{files} vector files: {tally:?}");
    assert!(files > 50, "{files} vector files");
    assert!(tally.typed > 100, "{tally:?}");
    assert!(tally.errors > 20, "{tally:?}");
    // Only Agentao's extensions and its request form of session/cancel have no official type.
    for method in tally.skipped.keys() {
        assert!(
            method.starts_with("_agentao.cn/") || method.starts_with("session/cancel"),
            "{method}"
        );
    }
}
