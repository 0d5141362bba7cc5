//! The method table, and one sample per method and per union variant: each decodes by method,
//! re-encodes to an equal JSON value, and what we encode validates against the matching `$defs`
//! type of the official schema (generated from the pinned official crate: `schema_common`).
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

mod schema_common;

use acp_core::schema::methods::{self, Direction, Method};
use acp_core::schema::*;
use pretty_assertions::assert_eq;
use schema_common::{json, schema};
use serde_json::Value;

/// Validates `instance` against `$defs/<type_name>` of the official schema (nothing to check when
/// the schema could not be generated here: `schema_common` said so).
fn assert_valid(type_name: &str, instance: &Value) {
    let Some(root) = schema() else { return };
    let errors = schema_errors(root, type_name, instance);
    assert!(
        errors.is_empty(),
        "{type_name} rejects {instance}: {errors:?}"
    );
}

/// What the official schema says is wrong with `instance` as a `type_name`.
fn schema_errors(root: &Value, type_name: &str, instance: &Value) -> Vec<String> {
    let wrapper = serde_json::json!({
        "$schema": root["$schema"],
        "$defs": root["$defs"],
        "$ref": format!("#/$defs/{type_name}"),
    });
    let validator = jsonschema::validator_for(&wrapper).expect("the official schema compiles");
    validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let Some(root) = schema() else { return };
    let schema_errors = |type_name, instance: &str| schema_errors(root, type_name, &json(instance));
    assert!(!schema_errors("PromptRequest", r#"{"sessionId":"s"}"#).is_empty());
    assert!(!schema_errors("PromptResponse", r#"{"stopReason":"weird"}"#).is_empty());
    assert!(!schema_errors("SessionUpdate", r#"{"sessionUpdate":"nope"}"#).is_empty());
    assert!(schema_errors("PromptResponse", r#"{"stopReason":"end_turn"}"#).is_empty());
}

/// (method, params, result) for every request; result is `None` for notifications.
const SAMPLES: &[(&str, &str, Option<&str>)] = &[
    (
        "initialize",
        r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true},"terminal":true,"session":{"configOptions":{"boolean":{}},"notices":{},"compaction":{}},"subagents":{},"plan":{},"auth":{"terminal":true},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"zed","title":"Zed","version":"1.0"}}"#,
        Some(
            r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true},"mcpCapabilities":{"http":true,"sse":true},"sessionCapabilities":{"list":{},"delete":{},"additionalDirectories":{},"resume":{},"close":{},"systemPrompt":{"mode":{"override":{}}}},"auth":{"logout":{}}},"authMethods":[{"id":"key","name":"API key","description":"Paste a key"},{"type":"terminal","id":"login","name":"Log in","args":["--login"],"env":{"MODE":"1"}}],"agentInfo":{"name":"agentao","title":"Agentao","version":"0.4.20"},"_meta":{"_agentao.cn/extensions":[{"method":"_agentao.cn/ask_user","description":"Request free-form text input from the user."}]}}"#,
        ),
    ),
    ("authenticate", r#"{"methodId":"key"}"#, Some("{}")),
    ("logout", "{}", Some("{}")),
    (
        "session/new",
        r#"{"cwd":"/home/user/p","additionalDirectories":["/lib"],"mcpServers":[{"name":"fs","command":"/bin/mcp","args":["-v"],"env":[{"name":"A","value":"1"}]},{"type":"http","name":"web","url":"https://example.invalid/mcp","headers":[{"name":"X","value":"y"}]},{"type":"sse","name":"events","url":"https://example.invalid/sse","headers":[]}],"systemPrompt":{"mode":"append","content":[{"type":"text","text":"Be terse."}]}}"#,
        Some(
            r#"{"sessionId":"sess_1","modes":{"currentModeId":"workspace-write","availableModes":[{"id":"read-only","name":"Read-only","description":"No writes or shell."},{"id":"workspace-write","name":"Workspace write"}]},"configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"openai/gpt","options":[{"value":"openai/gpt","name":"gpt"}]},{"id":"fast","name":"Fast","type":"boolean","currentValue":false}]}"#,
        ),
    ),
    (
        "session/load",
        r#"{"sessionId":"sess_1","cwd":"/home/user/p","mcpServers":[]}"#,
        Some(r#"{"configOptions":[],"modes":{"currentModeId":"plan","availableModes":[]}}"#),
    ),
    (
        "session/list",
        r#"{"cwd":"/home/user/p","cursor":"c1"}"#,
        Some(
            r#"{"sessions":[{"sessionId":"sess_1","cwd":"/home/user/p","additionalDirectories":["/lib"],"title":"Fix bug","updatedAt":"2026-01-01T00:00:00Z"}],"nextCursor":"c2"}"#,
        ),
    ),
    (
        "session/resume",
        r#"{"sessionId":"sess_1","cwd":"/home/user/p"}"#,
        Some("{}"),
    ),
    ("session/close", r#"{"sessionId":"sess_1"}"#, Some("{}")),
    ("session/delete", r#"{"sessionId":"sess_1"}"#, Some("{}")),
    (
        "session/set_mode",
        r#"{"sessionId":"sess_1","modeId":"plan"}"#,
        Some("{}"),
    ),
    (
        "session/set_config_option",
        r#"{"sessionId":"sess_1","configId":"fast","type":"boolean","value":true}"#,
        Some(
            r#"{"configOptions":[{"id":"fast","name":"Fast","type":"boolean","currentValue":true}]}"#,
        ),
    ),
    (
        "session/prompt",
        r#"{"sessionId":"sess_1","prompt":[{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5,"lastModified":"2026-01-01"}},{"type":"image","data":"AAAA","mimeType":"image/png","uri":"file:///a.png"},{"type":"audio","data":"AAAA","mimeType":"audio/wav"},{"type":"resource_link","uri":"file:///a","name":"a","title":"A","description":"d","mimeType":"text/plain","size":3},{"type":"resource","resource":{"uri":"file:///b","blob":"AAAA","mimeType":"application/octet-stream"}}]}"#,
        Some(r#"{"stopReason":"max_turn_requests"}"#),
    ),
    ("session/cancel", r#"{"sessionId":"sess_1"}"#, None),
    (
        "session/request_permission",
        r#"{"sessionId":"sess_1","toolCall":{"toolCallId":"call_1","title":"Write a.txt","kind":"edit","status":"pending"},"options":[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"},{"optionId":"allow_always","name":"Always","kind":"allow_always"},{"optionId":"reject_once","name":"Reject","kind":"reject_once"},{"optionId":"reject_always","name":"Never","kind":"reject_always"}]}"#,
        Some(r#"{"outcome":{"outcome":"cancelled"}}"#),
    ),
    (
        "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"},"messageId":"m1"}}"#,
        None,
    ),
    (
        "fs/read_text_file",
        r#"{"sessionId":"sess_1","path":"/home/user/p/a.txt","line":3,"limit":10}"#,
        Some(r#"{"content":"abc"}"#),
    ),
    (
        "fs/write_text_file",
        r#"{"sessionId":"sess_1","path":"/home/user/p/a.txt","content":"abc"}"#,
        Some("{}"),
    ),
    (
        "terminal/create",
        r#"{"sessionId":"sess_1","command":"ls","args":["-l"],"env":[{"name":"A","value":"1"}],"cwd":"/home/user/p","outputByteLimit":1024}"#,
        Some(r#"{"terminalId":"term_1"}"#),
    ),
    (
        "terminal/output",
        r#"{"sessionId":"sess_1","terminalId":"term_1"}"#,
        Some(r#"{"output":"x","truncated":false,"exitStatus":{"exitCode":0}}"#),
    ),
    (
        "terminal/wait_for_exit",
        r#"{"sessionId":"sess_1","terminalId":"term_1"}"#,
        Some(r#"{"exitCode":1,"signal":"SIGTERM"}"#),
    ),
    (
        "terminal/kill",
        r#"{"sessionId":"sess_1","terminalId":"term_1"}"#,
        Some("{}"),
    ),
    (
        "terminal/release",
        r#"{"sessionId":"sess_1","terminalId":"term_1"}"#,
        Some("{}"),
    ),
    (
        "elicitation/create",
        r#"{"message":"Details?","mode":"form","requestedSchema":{"type":"object","title":"T","properties":{"name":{"type":"string","title":"Name","minLength":1,"format":"email"},"age":{"type":"integer","minimum":0},"score":{"type":"number","maximum":1.5},"ok":{"type":"boolean","default":true},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"default":["a"]},"pick":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}}},"required":["name"]},"sessionId":"sess_1","toolCallId":"call_1"}"#,
        Some(r#"{"action":"accept","content":{"name":"a@b.c","age":3,"ok":true,"tags":["a"]}}"#),
    ),
    ("elicitation/complete", r#"{"elicitationId":"el_1"}"#, None),
    ("$/cancel_request", r#"{"requestId":7}"#, None),
    (
        "_agentao.cn/ask_user",
        r#"{"sessionId":"sess_1","question":"Which one?","header":"Pick","options":["a","b"],"multiple":true,"allowCustom":false}"#,
        Some(r#"{"outcome":"answered","text":"a"}"#),
    ),
    (
        "_agentao.cn/set_model",
        r#"{"sessionId":"sess_1","model":"fake-model"}"#,
        Some(r#"{"model":"fake-model"}"#),
    ),
];

/// Decodes params by method in the direction the table gives, and re-encodes them.
fn decode_params(method: Method, params: &str) -> Value {
    let encoded = match (method.direction(), method.is_notification()) {
        (Direction::ClientToAgent, false) => {
            serde_json::to_value(ClientRequest::decode(method.name(), Some(params)).unwrap())
        }
        (Direction::AgentToClient, false) => {
            serde_json::to_value(AgentRequest::decode(method.name(), Some(params)).unwrap())
        }
        (Direction::ClientToAgent, true) => {
            serde_json::to_value(ClientNotification::decode(method.name(), Some(params)).unwrap())
        }
        (Direction::AgentToClient, true) => {
            serde_json::to_value(AgentNotification::decode(method.name(), Some(params)).unwrap())
        }
        (Direction::Both, _) => {
            let a = serde_json::to_value(
                ClientNotification::decode(method.name(), Some(params)).unwrap(),
            )
            .unwrap();
            let b = serde_json::to_value(
                AgentNotification::decode(method.name(), Some(params)).unwrap(),
            )
            .unwrap();
            assert_eq!(a, b);
            Ok(a)
        }
    };
    encoded.unwrap()
}

fn decode_result(method: Method, result: &str) -> Value {
    let encoded = match method.direction() {
        Direction::ClientToAgent => {
            serde_json::to_value(AgentResponse::decode(method.name(), result).unwrap())
        }
        _ => serde_json::to_value(ClientResponse::decode(method.name(), result).unwrap()),
    };
    encoded.unwrap()
}

#[test]
fn every_method_has_a_sample_that_round_trips_and_validates() {
    let sampled: Vec<&str> = SAMPLES.iter().map(|(m, _, _)| *m).collect();
    let all: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(sampled, all, "one sample per method, in table order");

    for (name, params, result) in SAMPLES {
        let method = Method::from_name(name).unwrap();
        let encoded = decode_params(method, params);
        assert_eq!(encoded, json(params), "{name} params re-encode differently");
        if !method.is_agentao_extension() {
            assert_valid(method.params_type(), &encoded);
        }
        assert_eq!(method.result_type().is_some(), result.is_some(), "{name}");
        if let (Some(result), Some(result_type)) = (result, method.result_type()) {
            let encoded = decode_result(method, result);
            assert_eq!(
                encoded,
                json(result),
                "{name} result re-encodes differently"
            );
            if !method.is_agentao_extension() {
                assert_valid(result_type, &encoded);
            }
        }
    }
}

#[test]
fn method_table_matches_meta_json() {
    let Some(meta) = schema_common::meta() else {
        return;
    };
    let mut official: Vec<(String, Direction)> = Vec::new();
    for (group, direction) in [
        ("agentMethods", Direction::ClientToAgent),
        ("clientMethods", Direction::AgentToClient),
        ("protocolMethods", Direction::Both),
    ] {
        for name in meta[group].as_object().unwrap().values() {
            official.push((name.as_str().unwrap().to_owned(), direction));
        }
    }
    official.sort_by(|a, b| a.0.cmp(&b.0));
    let mut ours: Vec<(String, Direction)> = Method::ALL
        .iter()
        .filter(|m| !m.is_agentao_extension())
        .map(|m| (m.name().to_owned(), m.direction()))
        .collect();
    ours.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(ours, official);
}

#[test]
fn method_table_types_match_schema_annotations() {
    let Some(root) = schema() else { return };
    for (def_name, def) in root["$defs"].as_object().unwrap() {
        let Some(method) = def.get("x-method").and_then(Value::as_str) else {
            continue;
        };
        let method =
            Method::from_name(method).unwrap_or_else(|| panic!("{method} missing from the table"));
        let is_request_side = def_name.ends_with("Request") || def_name.ends_with("Notification");
        if is_request_side {
            assert_eq!(method.params_type(), def_name, "{}", method.name());
        } else {
            assert_eq!(
                method.result_type(),
                Some(def_name.as_str()),
                "{}",
                method.name()
            );
        }
    }
}

#[test]
fn method_consts_and_lookup_agree() {
    assert_eq!(methods::SESSION_PROMPT, "session/prompt");
    assert_eq!(methods::CANCEL_REQUEST, "$/cancel_request");
    assert_eq!(methods::AGENTAO_ASK_USER, "_agentao.cn/ask_user");
    assert_eq!(methods::AGENTAO_SET_MODEL, "_agentao.cn/set_model");
    for method in Method::ALL {
        assert_eq!(Method::from_name(method.name()), Some(*method));
    }
    assert_eq!(Method::from_name("session/set_model"), None);
    assert!(Method::CancelRequest.sent_by(Direction::ClientToAgent));
    assert!(Method::CancelRequest.sent_by(Direction::AgentToClient));
    assert!(!Method::SessionUpdate.sent_by(Direction::ClientToAgent));
}

#[test]
fn unknown_and_wrong_direction_methods_are_method_not_found() {
    for (method, err) in [
        (
            "_vendor/thing",
            ClientRequest::decode("_vendor/thing", Some("{}")).unwrap_err(),
        ),
        (
            "session/update",
            ClientRequest::decode("session/update", Some("{}")).unwrap_err(),
        ),
        (
            "session/prompt",
            AgentRequest::decode("session/prompt", Some("{}")).unwrap_err(),
        ),
    ] {
        assert_eq!(err.kind(), DecodeErrorKind::UnknownMethod, "{method}");
        assert_eq!(err.code().0, -32601);
        assert_eq!(err.message(), "Method not found");
    }
    assert_eq!(
        AgentNotification::decode("_x/y", None).unwrap_err().kind(),
        DecodeErrorKind::UnknownMethod
    );
}

/// One sample per `SessionUpdate` variant, wrapped in `session/update`.
const UPDATES: &[&str] = &[
    r#"{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}"#,
    r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m1"}"#,
    r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}"#,
    r#"{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Run","name":"shell","kind":"execute","status":"in_progress","content":[{"type":"terminal","terminalId":"t1"},{"type":"diff","path":"/a","oldText":"x","newText":"y"}],"locations":[{"path":"/a","line":3}],"rawInput":{"cmd":"ls"},"rawOutput":[1,2]}"#,
    r#"{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","kind":"switch_mode","title":"t","name":"mode","content":[{"type":"content","content":{"type":"text","text":"Error: x"}}],"locations":[]}"#,
    r#"{"sessionUpdate":"plan","entries":[{"content":"a","priority":"low","status":"completed"},{"content":"b","priority":"medium","status":"in_progress"}]}"#,
    r#"{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"echo","description":"Echo text","input":{"hint":"text"}},{"name":"plan","description":"Plan"}]}"#,
    r#"{"sessionUpdate":"current_mode_update","currentModeId":"plan"}"#,
    r#"{"sessionUpdate":"config_option_update","configOptions":[{"id":"think","name":"Thinking","category":"thought_level","type":"select","currentValue":"high","options":[{"value":"high","name":"High"}]},{"id":"x","name":"X","category":"_vendor_cat","type":"boolean","currentValue":true}]}"#,
    r#"{"sessionUpdate":"session_info_update","title":"New title","updatedAt":null}"#,
    r#"{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.25,"currency":"USD"}}"#,
    r#"{"sessionUpdate":"notice","severity":"warning","title":"Rate limited","description":"Retrying"}"#,
    r#"{"sessionUpdate":"compaction_update","compactionId":"k1","status":"completed","summary":[{"type":"text","text":"sum"}],"error":null}"#,
    r#"{"sessionUpdate":"compaction_summary_chunk","compactionId":"k1","content":{"type":"text","text":"s"}}"#,
    r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"high","status":"pending"}]}}"#,
    r#"{"sessionUpdate":"plan_removed","planId":"p1"}"#,
    r#"{"sessionUpdate":"subagent_update","sessionId":"sub_1","title":"Researcher","description":null,"capabilities":{"cancel":{}},"state":{"state":"idle","stopReason":"error","error":{"code":-32603,"message":"boom"}},"cwd":"/home/user/p","additionalDirectories":["/lib"]}"#,
    r#"{"sessionUpdate":"session_message","messageId":"m2","senderSessionId":"sub_1","recipientSessionId":null,"content":[{"type":"text","text":"found it"}]}"#,
    r#"{"sessionUpdate":"session_message_chunk","messageId":"m2","content":{"type":"text","text":"fo"}}"#,
];

#[test]
fn every_session_update_variant_round_trips_and_validates() {
    let kinds: Vec<String> = UPDATES
        .iter()
        .map(|u| json(u)["sessionUpdate"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        kinds,
        SessionUpdate::KNOWN,
        "one sample per known variant, in order"
    );
    for update in UPDATES {
        let params = format!(r#"{{"sessionId":"sess_1","update":{update}}}"#);
        let AgentNotification::SessionUpdate(notification) =
            AgentNotification::decode("session/update", Some(&params)).unwrap()
        else {
            panic!("not a session/update")
        };
        let kind = notification.update.kind().to_owned();
        assert!(
            !matches!(notification.update, SessionUpdate::Unknown(_)),
            "{kind} decoded as Unknown"
        );
        let encoded = serde_json::to_value(&notification).unwrap();
        assert_eq!(encoded, json(&params), "{kind} re-encodes differently");
        assert_valid("SessionNotification", &encoded);
    }
}

#[test]
fn every_tool_kind_and_enum_value_round_trips() {
    for name in ToolKind::NAMES {
        let kind: ToolKind = serde_json::from_value(Value::from(*name)).unwrap();
        assert!(!matches!(kind, ToolKind::Unknown(_)), "{name}");
        assert_eq!(serde_json::to_value(&kind).unwrap(), Value::from(*name));
    }
    for name in StopReason::NAMES {
        let reason: StopReason = serde_json::from_value(Value::from(*name)).unwrap();
        assert_eq!(reason.as_str(), *name);
        assert_valid("StopReason", &serde_json::to_value(reason).unwrap());
    }
    for name in ToolCallStatus::NAMES {
        let status: ToolCallStatus = serde_json::from_value(Value::from(*name)).unwrap();
        assert_valid("ToolCallStatus", &serde_json::to_value(status).unwrap());
    }
    for name in PermissionOptionKind::NAMES {
        let kind: PermissionOptionKind = serde_json::from_value(Value::from(*name)).unwrap();
        assert_valid("PermissionOptionKind", &serde_json::to_value(kind).unwrap());
    }
    for name in PlanEntryPriority::NAMES {
        let p: PlanEntryPriority = serde_json::from_value(Value::from(*name)).unwrap();
        assert_valid("PlanEntryPriority", &serde_json::to_value(p).unwrap());
    }
    for name in PlanEntryStatus::NAMES {
        let s: PlanEntryStatus = serde_json::from_value(Value::from(*name)).unwrap();
        assert_valid("PlanEntryStatus", &serde_json::to_value(s).unwrap());
    }
    for name in Role::NAMES {
        let r: Role = serde_json::from_value(Value::from(*name)).unwrap();
        assert_valid("Role", &serde_json::to_value(r).unwrap());
    }
    assert_eq!(ToolKind::NAMES.len(), 10);
    assert_eq!(StopReason::NAMES.len(), 5);
}

#[test]
fn empty_results_are_the_schemas_objects_with_only_optional_members() {
    // R-RPC-5: where `{}` is a whole answer, `null` reads as `{}`.
    let Some(root) = schema() else { return };
    for method in Method::ALL {
        let Some(result) = method.result_type() else {
            continue;
        };
        let expected = match root["$defs"].get(result) {
            Some(def) => {
                def["type"] == "object"
                    && def.get("required").is_none()
                    && ["anyOf", "oneOf", "allOf"]
                        .iter()
                        .all(|k| def.get(k).is_none())
            }
            // Agentao's extensions: their results have required members.
            None => false,
        };
        assert_eq!(method.empty_result(), expected, "{}", method.name());
        if expected {
            assert_valid(result, &json("{}"));
        }
    }
}

/// The constructors of the update kinds an agent sends write the wire shape the samples above
/// decode from.
#[test]
fn update_constructors_write_the_wire_shape() {
    let cases: Vec<(SessionUpdate, &str)> = vec![
        (
            SessionUpdate::UsageUpdate(UsageUpdate::new(5, 10).with_cost(Cost::new(0.5, "USD"))),
            r#"{"sessionUpdate":"usage_update","used":5,"size":10,"cost":{"amount":0.5,"currency":"USD"}}"#,
        ),
        (
            SessionUpdate::Notice(Notice::new(NoticeSeverity::Warning, "Slow")),
            r#"{"sessionUpdate":"notice","severity":"warning","title":"Slow"}"#,
        ),
        (
            SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::title("Fix it")),
            r#"{"sessionUpdate":"session_info_update","title":"Fix it"}"#,
        ),
        (
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(vec![
                AvailableCommand::new("echo", "Echo text").with_input_hint("text"),
                AvailableCommand::new("help", "List commands"),
            ])),
            r#"{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"echo","description":"Echo text","input":{"hint":"text"}},{"name":"help","description":"List commands"}]}"#,
        ),
        (
            SessionUpdate::PlanUpdate(PlanUpdate::new(PlanUpdateContent::Items(PlanItems::new(
                "p1",
                vec![PlanEntry::new(
                    "a",
                    PlanEntryPriority::High,
                    PlanEntryStatus::Pending,
                )],
            )))),
            r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"high","status":"pending"}]}}"#,
        ),
        (
            SessionUpdate::PlanUpdate(PlanUpdate::new(PlanUpdateContent::Markdown(
                PlanMarkdown::new("p2", "- a"),
            ))),
            r#"{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p2","content":"- a"}}"#,
        ),
        (
            SessionUpdate::PlanRemoved(PlanRemoved::new("p1")),
            r#"{"sessionUpdate":"plan_removed","planId":"p1"}"#,
        ),
        (
            SessionUpdate::SubagentUpdate({
                let mut update = SubagentUpdate::new("sub_1");
                update.title = Some(Some("Researcher".into()));
                update.capabilities = Some(Some(SubagentSessionCapabilities::cancellable()));
                update.state = Some(Some(StateUpdate::Running(StateDetails::default())));
                update
            }),
            r#"{"sessionUpdate":"subagent_update","sessionId":"sub_1","title":"Researcher","capabilities":{"cancel":{}},"state":{"state":"running"}}"#,
        ),
        (
            SessionUpdate::SessionMessage({
                let mut message = SessionMessage::new("m1");
                message.sender_session_id = Some(Some("sub_1".into()));
                message.content = Some(Some(vec![ContentBlock::text("done")]));
                message
            }),
            r#"{"sessionUpdate":"session_message","messageId":"m1","senderSessionId":"sub_1","content":[{"type":"text","text":"done"}]}"#,
        ),
        (
            SessionUpdate::SessionMessageChunk(SessionMessageChunk::new(
                "m1",
                ContentBlock::text("do"),
            )),
            r#"{"sessionUpdate":"session_message_chunk","messageId":"m1","content":{"type":"text","text":"do"}}"#,
        ),
        (
            SessionUpdate::CompactionUpdate(CompactionUpdate::new(
                "k1",
                CompactionStatus::InProgress,
            )),
            r#"{"sessionUpdate":"compaction_update","compactionId":"k1","status":"in_progress"}"#,
        ),
    ];
    for (update, wire) in cases {
        assert_eq!(serde_json::to_value(&update).unwrap(), json(wire), "{wire}");
        let decoded: SessionUpdate = serde_json::from_str(wire).unwrap();
        assert_eq!(decoded, update, "{wire}");
    }
}
