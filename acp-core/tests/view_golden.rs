//! The sample messages of `tests/messages/` the views cover decode into views whose fields equal
//! the owned types'.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

#[path = "schema_common/mod.rs"]
mod schema_common;

use acp_core::schema::{
    self, AgentNotification, AgentRequest, AgentResponse, ClientRequest, ClientResponse,
    ContentBlock, RequestPermissionOutcome, SessionUpdate, ToolCallContent,
};
use acp_core::view::{
    AgentNotificationView, AgentRequestView, AgentResponseView, ClientRequestView,
    ClientResponseView, ContentBlockView, KnownToolKind, PermissionOutcomeView, ResourceContents,
    SessionUpdateView, ToolCallContentView, ToolKindView,
};
use acp_core::wire::JsonStr;
use acp_core::wire::json::parse_value;
use pretty_assertions::assert_eq;
use schema_common::message;

/// The decoded text of a wire string.
fn text(s: JsonStr<'_>) -> String {
    s.to_cow().into_owned()
}

fn update_params(fixture: &str) -> String {
    format!(r#"{{"sessionId":"sess_1","update":{}}}"#, message(fixture))
}

#[test]
fn initialize_request_and_response() {
    let params = message("initialize_request.json");
    let raw = parse_value(&params).unwrap();
    let Ok(ClientRequestView::Initialize(view)) =
        ClientRequestView::decode("initialize", Some(raw))
    else {
        panic!("initialize did not decode");
    };
    let Ok(ClientRequest::Initialize(owned)) = ClientRequest::decode("initialize", Some(&params))
    else {
        panic!()
    };
    assert_eq!(view.protocol_version, owned.protocol_version.0);
    let caps = &owned.client_capabilities;
    assert_eq!(
        view.client_capabilities.can_read_text_file(),
        caps.can_read_text_file()
    );
    assert_eq!(
        view.client_capabilities.can_write_text_file(),
        caps.can_write_text_file()
    );
    assert_eq!(view.client_capabilities.terminal(), caps.terminal);
    assert!(view.client_capabilities.can_read_text_file());
    assert!(view.client_info.is_some() && owned.client_info.is_some());

    let result = message("initialize_response.json");
    let raw = parse_value(&result).unwrap();
    let Ok(AgentResponseView::Initialize(view)) = AgentResponseView::decode("initialize", raw)
    else {
        panic!("initialize result did not decode");
    };
    let Ok(AgentResponse::Initialize(owned)) = AgentResponse::decode("initialize", &result) else {
        panic!()
    };
    let caps = &owned.agent_capabilities;
    let view_caps = view.agent_capabilities;
    assert_eq!(view_caps.load_session(), caps.load_session);
    assert_eq!(view_caps.prompt_image(), caps.prompt().image);
    assert_eq!(view_caps.prompt_audio(), caps.prompt().audio);
    assert_eq!(
        view_caps.prompt_embedded_context(),
        caps.prompt().embedded_context
    );
    assert_eq!(view_caps.mcp_http(), caps.mcp().http);
    assert_eq!(view_caps.session("list"), caps.session().list.is_some());
    assert_eq!(view.auth_methods.iter().count(), owned.auth_methods.len());
    assert!(!view_caps.load_session() && view_caps.prompt_image());
}

#[test]
fn new_session_request_and_response() {
    let params = message("new_session_request.json");
    let raw = parse_value(&params).unwrap();
    let Ok(ClientRequestView::NewSession(view)) =
        ClientRequestView::decode("session/new", Some(raw))
    else {
        panic!("session/new did not decode");
    };
    let Ok(ClientRequest::NewSession(owned)) = ClientRequest::decode("session/new", Some(&params))
    else {
        panic!()
    };
    assert_eq!(text(view.cwd), owned.cwd);
    assert_eq!(view.mcp_servers.len(), owned.mcp_servers.len());
    let server = view.mcp_servers.iter().next().unwrap();
    assert_eq!(text(server.name), owned.mcp_servers[0].name());
    assert_eq!(text(server.target), "/usr/local/bin/search-mcp");
    assert_eq!(
        server.args().map(text).collect::<Vec<_>>(),
        ["--root", "/home/user/p"]
    );

    let result = message("new_session_response.json");
    let Ok(AgentResponseView::NewSession(view)) =
        AgentResponseView::decode("session/new", parse_value(&result).unwrap())
    else {
        panic!()
    };
    let Ok(AgentResponse::NewSession(owned)) = AgentResponse::decode("session/new", &result) else {
        panic!()
    };
    assert_eq!(text(view.session_id), owned.session_id);
}

#[test]
fn prompt_request_blocks() {
    let params = message("prompt_request.json");
    let Ok(ClientRequestView::Prompt(view)) =
        ClientRequestView::decode("session/prompt", Some(parse_value(&params).unwrap()))
    else {
        panic!("session/prompt did not decode");
    };
    let Ok(ClientRequest::Prompt(owned)) = ClientRequest::decode("session/prompt", Some(&params))
    else {
        panic!()
    };
    assert_eq!(text(view.session_id), owned.session_id);
    assert_eq!(view.prompt.len(), owned.prompt.len());
    let blocks: Vec<_> = view.prompt.iter().collect();
    assert_eq!(blocks.len(), 2);
    for (view, owned) in blocks.iter().zip(&owned.prompt) {
        assert_same_block(view, owned);
    }
}

/// Every content fixture, as the only block of a prompt.
#[test]
fn content_fixtures_as_prompt_blocks() {
    for fixture in [
        "content_text.json",
        "content_image.json",
        "content_audio.json",
        "content_resource_link.json",
        "content_resource_text.json",
        "content_resource_blob.json",
    ] {
        let params = format!(r#"{{"sessionId":"s","prompt":[{}]}}"#, message(fixture));
        let Ok(ClientRequestView::Prompt(view)) =
            ClientRequestView::decode("session/prompt", Some(parse_value(&params).unwrap()))
        else {
            panic!("{fixture} did not decode");
        };
        let Ok(ClientRequest::Prompt(owned)) =
            ClientRequest::decode("session/prompt", Some(&params))
        else {
            panic!()
        };
        let block = view.prompt.iter().next().unwrap();
        assert_same_block(&block, &owned.prompt[0]);
    }
}

fn assert_same_block(view: &ContentBlockView<'_>, owned: &ContentBlock) {
    assert_eq!(view.type_name(), owned.type_name());
    match (view, owned) {
        (ContentBlockView::Text(v), ContentBlock::Text(o)) => assert_eq!(text(v.text), o.text),
        (ContentBlockView::Image(v), ContentBlock::Image(o)) => {
            assert_eq!(text(v.data), o.data);
            assert_eq!(text(v.mime_type), o.mime_type);
            assert_eq!(v.uri.map(text), o.uri);
        }
        (ContentBlockView::Audio(v), ContentBlock::Audio(o)) => {
            assert_eq!(text(v.data), o.data);
            assert_eq!(text(v.mime_type), o.mime_type);
        }
        (ContentBlockView::ResourceLink(v), ContentBlock::ResourceLink(o)) => {
            assert_eq!(text(v.uri), o.uri);
            assert_eq!(text(v.name), o.name);
            assert_eq!(v.title.map(text), o.title);
            assert_eq!(v.description.map(text), o.description);
            assert_eq!(v.mime_type.map(text), o.mime_type);
            assert_eq!(v.size, o.size);
        }
        (ContentBlockView::Resource(v), ContentBlock::Resource(o)) => {
            match (&v.contents, &o.resource) {
                (ResourceContents::Text(t), schema::EmbeddedResourceResource::Text(o)) => {
                    assert_eq!(text(v.uri), o.uri);
                    assert_eq!(text(*t), o.text);
                    assert_eq!(v.mime_type.map(text), o.mime_type);
                }
                (ResourceContents::Blob(b), schema::EmbeddedResourceResource::Blob(o)) => {
                    assert_eq!(text(v.uri), o.uri);
                    assert_eq!(text(*b), o.blob);
                }
                other => panic!("resource shapes differ: {other:?}"),
            }
        }
        other => panic!("blocks differ: {other:?}"),
    }
}

fn decode_update(params: &str) -> (SessionUpdateView<'_>, SessionUpdate) {
    let Ok(AgentNotificationView::SessionUpdate(view)) =
        AgentNotificationView::decode("session/update", Some(parse_value(params).unwrap()))
    else {
        panic!("session/update did not decode: {params}");
    };
    let Ok(AgentNotification::SessionUpdate(owned)) =
        AgentNotification::decode("session/update", Some(params))
    else {
        panic!()
    };
    assert_eq!(text(view.session_id), owned.session_id);
    assert_eq!(view.update.kind(), owned.update.kind());
    (view.update, owned.update)
}

#[test]
fn chunk_fixtures() {
    for fixture in [
        "session_update_agent_message_chunk.json",
        "session_update_agent_thought_chunk.json",
        "session_update_user_message_chunk.json",
    ] {
        let params = update_params(fixture);
        let (view, owned) = decode_update(&params);
        let (SessionUpdateView::AgentMessageChunk(v)
        | SessionUpdateView::AgentThoughtChunk(v)
        | SessionUpdateView::UserMessageChunk(v)) = view
        else {
            panic!("{fixture}: not a chunk view")
        };
        let (SessionUpdate::AgentMessageChunk(o)
        | SessionUpdate::AgentThoughtChunk(o)
        | SessionUpdate::UserMessageChunk(o)) = &owned
        else {
            panic!()
        };
        assert_same_block(&v.content, &o.content);
        assert_eq!(v.message_id.map(text), o.message_id);
    }
}

#[test]
fn tool_call_fixtures() {
    for fixture in [
        "session_update_tool_call.json",
        "session_update_tool_call_edit.json",
        "session_update_tool_call_locations_rawinput.json",
        "session_update_tool_call_read.json",
    ] {
        let params = update_params(fixture);
        let (SessionUpdateView::ToolCall(v), SessionUpdate::ToolCall(o)) = decode_update(&params)
        else {
            panic!("{fixture}: not a tool call")
        };
        assert_eq!(text(v.tool_call_id), o.tool_call_id);
        assert_eq!(text(v.title), o.title);
        assert_eq!(kind_name(v.kind()), o.kind().as_str());
        assert_eq!(v.status().as_str(), o.status().as_str());
        assert_same_contents(v.content.iter().collect(), &o.content);
        let locations: Vec<_> = v.locations.iter().map(|l| (text(l.path), l.line)).collect();
        let owned: Vec<_> = o
            .locations
            .iter()
            .map(|l| (l.path.clone(), l.line))
            .collect();
        assert_eq!(locations, owned);
        assert_eq!(
            v.raw_input.map(|r| schema_common::json(r.get())),
            o.raw_input
        );
    }
}

fn kind_name(kind: ToolKindView<'_>) -> String {
    match kind {
        ToolKindView::Known(known) => known.as_str().to_owned(),
        ToolKindView::Unknown(name) => text(name),
    }
}

fn assert_same_contents(view: Vec<ToolCallContentView<'_>>, owned: &[ToolCallContent]) {
    assert_eq!(view.len(), owned.len());
    for (v, o) in view.iter().zip(owned) {
        match (v, o) {
            (ToolCallContentView::Content { content, .. }, ToolCallContent::Content(o)) => {
                assert_same_block(content, &o.content)
            }
            (
                ToolCallContentView::Diff {
                    path,
                    old_text,
                    new_text,
                    ..
                },
                ToolCallContent::Diff(o),
            ) => {
                assert_eq!(text(*path), o.path);
                assert_eq!(old_text.map(text), o.old_text);
                assert_eq!(text(*new_text), o.new_text);
            }
            (ToolCallContentView::Terminal { terminal_id, .. }, ToolCallContent::Terminal(o)) => {
                assert_eq!(text(*terminal_id), o.terminal_id)
            }
            other => panic!("contents differ: {other:?}"),
        }
    }
}

#[test]
fn tool_call_update_fixtures() {
    for fixture in [
        "session_update_tool_call_update_content.json",
        "session_update_tool_call_update_more_fields.json",
    ] {
        let params = update_params(fixture);
        let (SessionUpdateView::ToolCallUpdate(v), SessionUpdate::ToolCallUpdate(o)) =
            decode_update(&params)
        else {
            panic!("{fixture}: not a tool call update")
        };
        assert_eq!(text(v.tool_call_id), o.tool_call_id);
        assert_eq!(v.title.map(text), o.title);
        assert_eq!(
            v.kind.map(kind_name),
            o.kind.as_ref().map(|k| k.as_str().to_owned())
        );
        assert_eq!(v.status.map(|s| s.as_str()), o.status.map(|s| s.as_str()));
        assert_eq!(v.content.is_some(), o.content.is_some());
        if let (Some(v), Some(o)) = (v.content, &o.content) {
            assert_same_contents(v.iter().collect(), o);
        }
        assert_eq!(
            v.raw_output.map(|r| schema_common::json(r.get())),
            o.raw_output
        );
    }
}

/// Tool call content fixtures, inside a `tool_call_update`.
#[test]
fn tool_content_fixtures() {
    for fixture in [
        "tool_content_content_text.json",
        "tool_content_diff.json",
        "tool_content_diff_no_old.json",
        "tool_content_terminal.json",
    ] {
        let params = format!(
            r#"{{"sessionId":"s","update":{{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{}]}}}}"#,
            message(fixture)
        );
        let (SessionUpdateView::ToolCallUpdate(v), SessionUpdate::ToolCallUpdate(o)) =
            decode_update(&params)
        else {
            panic!()
        };
        let contents: Vec<_> = v.content.unwrap().iter().collect();
        assert_eq!(contents.len(), 1, "{fixture}");
        assert_same_contents(contents, o.content.as_ref().unwrap());
    }
}

#[test]
fn plan_fixture() {
    let params = update_params("session_update_plan.json");
    let (SessionUpdateView::Plan(v), SessionUpdate::Plan(o)) = decode_update(&params) else {
        panic!()
    };
    let entries: Vec<_> = v
        .entries()
        .map(|e| (text(e.content), e.priority.as_str(), e.status.as_str()))
        .collect();
    let owned: Vec<_> = o
        .entries
        .iter()
        .map(|e| (e.content.clone(), e.priority.as_str(), e.status.as_str()))
        .collect();
    assert_eq!(entries, owned);
    assert_eq!(entries.len(), 3);
}

#[test]
fn config_option_update_passes_through_as_other() {
    let params = update_params("session_update_config_option_update.json");
    let (view, owned) = decode_update(&params);
    assert!(matches!(owned, SessionUpdate::ConfigOptionUpdate(_)));
    let SessionUpdateView::Other { kind, raw } = view else {
        panic!("{view:?}")
    };
    assert_eq!(kind, "config_option_update");
    assert_eq!(
        schema_common::json(raw.get()),
        schema_common::json(&message("session_update_config_option_update.json"))
    );
}

#[test]
fn permission_request_and_both_outcome_shapes() {
    let params = message("request_permission_request.json");
    let Ok(AgentRequestView::RequestPermission(v)) = AgentRequestView::decode(
        "session/request_permission",
        Some(parse_value(&params).unwrap()),
    ) else {
        panic!()
    };
    let Ok(AgentRequest::RequestPermission(o)) =
        AgentRequest::decode("session/request_permission", Some(&params))
    else {
        panic!()
    };
    assert_eq!(text(v.session_id), o.session_id);
    assert_eq!(text(v.tool_call.tool_call_id), o.tool_call.tool_call_id);
    let options: Vec<_> = v
        .options
        .iter()
        .map(|opt| (text(opt.option_id), text(opt.name), opt.kind.as_str()))
        .collect();
    let owned: Vec<_> = o
        .options
        .iter()
        .map(|opt| (opt.option_id.clone(), opt.name.clone(), opt.kind.as_str()))
        .collect();
    assert_eq!(options, owned);

    // Nested (the standard shape) and flat (`permission_outcome_selected.json` read as a whole
    // result, the shape Agentao's clients send).
    for fixture in [
        "request_permission_response_selected.json",
        "permission_outcome_selected.json",
    ] {
        let result = message(fixture);
        let Ok(ClientResponseView::RequestPermission(v)) =
            ClientResponseView::decode("session/request_permission", parse_value(&result).unwrap())
        else {
            panic!("{fixture}")
        };
        let Ok(ClientResponse::RequestPermission(o)) =
            ClientResponse::decode("session/request_permission", &result)
        else {
            panic!()
        };
        let (
            PermissionOutcomeView::Selected { option_id },
            RequestPermissionOutcome::Selected(selected),
        ) = (v.outcome, &o.outcome)
        else {
            panic!("{fixture}: {v:?} / {o:?}")
        };
        assert_eq!(text(option_id), selected.option_id);
        assert_eq!(text(option_id), "yes-once");
    }
    let cancelled = message("permission_outcome_cancelled.json");
    let Ok(ClientResponseView::RequestPermission(v)) = ClientResponseView::decode(
        "session/request_permission",
        parse_value(&cancelled).unwrap(),
    ) else {
        panic!()
    };
    assert_eq!(v.outcome, PermissionOutcomeView::Cancelled);
}

#[test]
fn cancel_notification_fixture() {
    let params = message("cancel_notification.json");
    let raw = parse_value(&params).unwrap();
    let Ok(acp_core::view::ClientNotificationView::Cancel(v)) =
        acp_core::view::ClientNotificationView::decode("session/cancel", Some(raw))
    else {
        panic!()
    };
    let Ok(schema::ClientNotification::Cancel(o)) =
        schema::ClientNotification::decode("session/cancel", Some(&params))
    else {
        panic!()
    };
    assert_eq!(text(v.session_id), o.session_id);
}

/// The view enums name the same values as the owned ones.
#[test]
fn view_enums_match_the_owned_enums() {
    use acp_core::view as v;
    assert_eq!(v::StopReasonView::NAMES, schema::StopReason::NAMES);
    assert_eq!(v::ToolCallStatusView::NAMES, schema::ToolCallStatus::NAMES);
    assert_eq!(
        v::PermissionOptionKindView::NAMES,
        schema::PermissionOptionKind::NAMES
    );
    assert_eq!(
        v::PlanEntryPriorityView::NAMES,
        schema::PlanEntryPriority::NAMES
    );
    assert_eq!(
        v::PlanEntryStatusView::NAMES,
        schema::PlanEntryStatus::NAMES
    );
    assert_eq!(KnownToolKind::NAMES, schema::ToolKind::NAMES);
    assert_eq!(&SessionUpdateView::KNOWN[..], SessionUpdate::KNOWN);
}
