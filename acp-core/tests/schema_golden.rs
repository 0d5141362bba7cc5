//! Every sample message of `tests/messages/` (one per shape: content blocks, tool call contents,
//! update kinds, the main requests and results) decodes into its schema type and re-encodes to an
//! equal JSON value.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

mod schema_common;

use acp_core::schema::*;
use pretty_assertions::assert_eq;
use schema_common::{json, message, message_names};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Decodes `text` as `T` (fast path), re-encodes, and compares as JSON values.
fn round_trip<T: DeserializeOwned + Serialize>(name: &str) -> T {
    let text = message(name);
    let decoded: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let encoded = serde_json::to_value(&decoded).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(encoded, json(&text), "{name} re-encodes differently");
    decoded
}

/// Decodes one message and checks what it decoded to.
type Check = fn(&'static str);

/// The message → type table; returns the messages it covered.
fn check_all() -> Vec<&'static str> {
    let table: &[(&str, Check)] = &[
        ("cancel_notification.json", |n| {
            drop(round_trip::<CancelNotification>(n))
        }),
        ("content_audio.json", |n| {
            assert!(matches!(
                round_trip::<ContentBlock>(n),
                ContentBlock::Audio(_)
            ))
        }),
        ("content_image.json", |n| {
            assert!(matches!(
                round_trip::<ContentBlock>(n),
                ContentBlock::Image(_)
            ))
        }),
        ("content_resource_blob.json", |n| {
            let ContentBlock::Resource(r) = round_trip::<ContentBlock>(n) else {
                panic!("{n}")
            };
            assert!(matches!(r.resource, EmbeddedResourceResource::Blob(_)));
        }),
        ("content_resource_link.json", |n| {
            let ContentBlock::ResourceLink(link) = round_trip::<ContentBlock>(n) else {
                panic!("{n}")
            };
            assert_eq!(link.size, Some(2048));
        }),
        ("content_resource_text.json", |n| {
            let ContentBlock::Resource(r) = round_trip::<ContentBlock>(n) else {
                panic!("{n}")
            };
            assert!(matches!(r.resource, EmbeddedResourceResource::Text(_)));
        }),
        ("content_text.json", |n| {
            assert!(matches!(
                round_trip::<ContentBlock>(n),
                ContentBlock::Text(_)
            ))
        }),
        ("fs_read_text_file_request.json", |n| {
            let req = round_trip::<ReadTextFileRequest>(n);
            assert_eq!((req.line, req.limit), (Some(2), Some(20)));
        }),
        ("fs_read_text_file_response.json", |n| {
            drop(round_trip::<ReadTextFileResponse>(n))
        }),
        ("fs_write_text_file_request.json", |n| {
            drop(round_trip::<WriteTextFileRequest>(n))
        }),
        ("initialize_request.json", |n| {
            let req = round_trip::<InitializeRequest>(n);
            assert_eq!(req.protocol_version, ProtocolVersion::V1);
            assert!(req.client_capabilities.can_read_text_file());
            assert!(req.client_capabilities.terminal);
        }),
        ("initialize_response.json", |n| {
            let res = round_trip::<InitializeResponse>(n);
            assert!(!res.agent_capabilities.load_session);
            assert!(res.agent_capabilities.prompt().embedded_context);
        }),
        ("new_session_request.json", |n| {
            let req = round_trip::<NewSessionRequest>(n);
            assert!(matches!(&req.mcp_servers[..], [McpServer::Stdio(s)] if s.args[0] == "--root"));
        }),
        ("new_session_response.json", |n| {
            drop(round_trip::<NewSessionResponse>(n))
        }),
        ("permission_outcome_cancelled.json", |n| {
            assert_eq!(
                round_trip::<RequestPermissionOutcome>(n),
                RequestPermissionOutcome::Cancelled
            );
        }),
        ("permission_outcome_selected.json", |n| {
            assert_eq!(
                round_trip::<RequestPermissionOutcome>(n),
                RequestPermissionOutcome::selected("yes-once")
            );
        }),
        ("prompt_request.json", |n| {
            assert_eq!(round_trip::<PromptRequest>(n).prompt.len(), 2)
        }),
        // R-LLM-USAGE-3: the turn's usage (unstable in schema 1.20.0) round-trips.
        ("prompt_response_usage.json", |n| {
            let usage = round_trip::<PromptResponse>(n).usage.expect("usage");
            assert_eq!(
                (
                    usage.total_tokens,
                    usage.thought_tokens,
                    usage.cached_write_tokens
                ),
                (1246, Some(10), None)
            );
        }),
        ("request_permission_request.json", |n| {
            let req = round_trip::<RequestPermissionRequest>(n);
            assert_eq!(req.options[2].kind, PermissionOptionKind::RejectOnce);
        }),
        ("request_permission_response_selected.json", |n| {
            let res = round_trip::<RequestPermissionResponse>(n);
            assert_eq!(res.outcome, RequestPermissionOutcome::selected("yes-once"));
        }),
        ("session_update_agent_message_chunk.json", |n| {
            assert!(matches!(
                round_trip::<SessionUpdate>(n),
                SessionUpdate::AgentMessageChunk(_)
            ));
        }),
        ("session_update_agent_thought_chunk.json", |n| {
            assert!(matches!(
                round_trip::<SessionUpdate>(n),
                SessionUpdate::AgentThoughtChunk(_)
            ));
        }),
        ("session_update_config_option_update.json", |n| {
            let SessionUpdate::ConfigOptionUpdate(update) = round_trip::<SessionUpdate>(n) else {
                panic!("{n}")
            };
            assert!(matches!(
                &update.config_options[1].kind,
                SessionConfigKind::Select { options: SessionConfigSelectOptions::Grouped(groups), .. } if groups.len() == 2
            ));
        }),
        ("session_update_plan.json", |n| {
            let SessionUpdate::Plan(plan) = round_trip::<SessionUpdate>(n) else {
                panic!("{n}")
            };
            assert_eq!(plan.entries[0].priority, PlanEntryPriority::High);
        }),
        ("session_update_tool_call.json", |n| {
            let SessionUpdate::ToolCall(call) = round_trip::<SessionUpdate>(n) else {
                panic!("{n}")
            };
            assert_eq!(call.kind(), ToolKind::Read);
        }),
        ("session_update_tool_call_edit.json", |n| {
            let SessionUpdate::ToolCall(call) = round_trip::<SessionUpdate>(n) else {
                panic!("{n}")
            };
            assert_eq!(call.kind(), ToolKind::Edit);
        }),
        ("session_update_tool_call_locations_rawinput.json", |n| {
            let SessionUpdate::ToolCall(call) = round_trip::<SessionUpdate>(n) else {
                panic!("{n}")
            };
            assert_eq!(
                (call.kind(), call.status()),
                (ToolKind::Other, ToolCallStatus::Pending)
            );
        }),
        ("session_update_tool_call_read.json", |n| {
            let SessionUpdate::ToolCall(call) = round_trip::<SessionUpdate>(n) else {
                panic!("{n}")
            };
            assert_eq!(call.locations.len(), 1);
        }),
        ("session_update_tool_call_update_content.json", |n| {
            let SessionUpdate::ToolCallUpdate(update) = round_trip::<SessionUpdate>(n) else {
                panic!("{n}")
            };
            assert_eq!(update.status, Some(ToolCallStatus::InProgress));
        }),
        ("session_update_tool_call_update_more_fields.json", |n| {
            let SessionUpdate::ToolCallUpdate(update) = round_trip::<SessionUpdate>(n) else {
                panic!("{n}")
            };
            assert!(update.raw_output.is_some());
        }),
        ("session_update_user_message_chunk.json", |n| {
            assert!(matches!(
                round_trip::<SessionUpdate>(n),
                SessionUpdate::UserMessageChunk(_)
            ));
        }),
        ("set_session_config_option_request.json", |n| {
            let req = round_trip::<SetSessionConfigOptionRequest>(n);
            assert_eq!(req.value, SessionConfigValue::Id("large".into()));
        }),
        ("set_session_config_option_response.json", |n| {
            drop(round_trip::<SetSessionConfigOptionResponse>(n))
        }),
        ("tool_content_content_text.json", |n| {
            assert!(matches!(
                round_trip::<ToolCallContent>(n),
                ToolCallContent::Content(_)
            ));
        }),
        ("tool_content_diff.json", |n| {
            let ToolCallContent::Diff(diff) = round_trip::<ToolCallContent>(n) else {
                panic!("{n}")
            };
            assert!(diff.old_text.is_some());
        }),
        ("tool_content_diff_no_old.json", |n| {
            let ToolCallContent::Diff(diff) = round_trip::<ToolCallContent>(n) else {
                panic!("{n}")
            };
            assert_eq!(diff.old_text, None);
        }),
        ("tool_content_terminal.json", |n| {
            assert!(matches!(
                round_trip::<ToolCallContent>(n),
                ToolCallContent::Terminal(_)
            ));
        }),
    ];
    for (name, check) in table {
        check(name);
    }
    table.iter().map(|(name, _)| *name).collect()
}

#[test]
fn every_sample_message_decodes_and_re_encodes_equal() {
    let covered = check_all();
    assert_eq!(
        covered,
        message_names(),
        "the table must name every message, in order"
    );
}

/// Request/notification messages also decode through the by-method entry points.
#[test]
fn message_params_decode_by_method() {
    let cases: &[(&str, &str)] = &[
        ("initialize", "initialize_request.json"),
        ("session/new", "new_session_request.json"),
        ("session/prompt", "prompt_request.json"),
        (
            "session/set_config_option",
            "set_session_config_option_request.json",
        ),
    ];
    for (method, file) in cases {
        let text = message(file);
        let request =
            ClientRequest::decode(method, Some(&text)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(request.method().name(), *method);
        assert_eq!(serde_json::to_value(&request).unwrap(), json(&text));
    }
    let agent_requests: &[(&str, &str)] = &[
        ("fs/read_text_file", "fs_read_text_file_request.json"),
        ("fs/write_text_file", "fs_write_text_file_request.json"),
        (
            "session/request_permission",
            "request_permission_request.json",
        ),
    ];
    for (method, file) in agent_requests {
        let text = message(file);
        let request =
            AgentRequest::decode(method, Some(&text)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(request.method().name(), *method);
    }
    let cancel =
        ClientNotification::decode("session/cancel", Some(&message("cancel_notification.json")))
            .unwrap();
    assert!(matches!(cancel, ClientNotification::Cancel(c) if c.session_id == "sess_7f3a"));

    let results: &[(&str, &str)] = &[
        ("initialize", "initialize_response.json"),
        ("session/new", "new_session_response.json"),
        ("session/prompt", "prompt_response_usage.json"),
        (
            "session/set_config_option",
            "set_session_config_option_response.json",
        ),
    ];
    for (method, file) in results {
        let text = message(file);
        let response =
            AgentResponse::decode(method, &text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(serde_json::to_value(&response).unwrap(), json(&text));
    }
    for (method, file) in [
        ("fs/read_text_file", "fs_read_text_file_response.json"),
        (
            "session/request_permission",
            "request_permission_response_selected.json",
        ),
    ] {
        let text = message(file);
        let response =
            ClientResponse::decode(method, &text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(serde_json::to_value(&response).unwrap(), json(&text));
    }
}
