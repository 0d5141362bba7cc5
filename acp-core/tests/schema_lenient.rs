//! One test per leniency rule: forward-compatible unions, default-on-error fields,
//! skip-invalid arrays, and the places that deliberately stay strict.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

mod schema_common;

use acp_core::schema::agentao::{self, USER_UNAVAILABLE};
use acp_core::schema::*;
use pretty_assertions::assert_eq;
use schema_common::json;
use serde_json::Value;

fn update(text: &str) -> SessionUpdate {
    let params = format!(r#"{{"sessionId":"s","update":{text}}}"#);
    match AgentNotification::decode("session/update", Some(&params))
        .unwrap_or_else(|e| panic!("{e}"))
    {
        AgentNotification::SessionUpdate(n) => n.update,
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_session_update_is_kept_and_re_encodes_unchanged() {
    for text in [
        r#"{"sessionUpdate":"future_thing","x":[1,{"y":null}],"_meta":{"k":1}}"#,
        r#"{"x":[1,{"y":null}],"sessionUpdate":"future_thing"}"#,
    ] {
        let decoded = update(text);
        assert!(matches!(decoded, SessionUpdate::Unknown(_)));
        assert_eq!(decoded.kind(), "future_thing");
        assert_eq!(serde_json::to_value(&decoded).unwrap(), json(text));
    }
}

#[test]
fn unknown_content_block_type_is_kept_and_re_encodes_unchanged() {
    for text in [
        r#"{"type":"video","url":"x","frames":3}"#,
        r#"{"url":"x","type":"video"}"#,
    ] {
        let block: ContentBlock = serde_json::from_str(text).unwrap();
        assert!(matches!(block, ContentBlock::Unknown(_)));
        assert_eq!(block.type_name(), "video");
        assert_eq!(serde_json::to_value(&block).unwrap(), json(text));
    }
    // Inside a prompt too: unknown blocks are passed on, not refused, by the decoder.
    let request = ClientRequest::decode(
        "session/prompt",
        Some(r#"{"sessionId":"s","prompt":[{"type":"video"}]}"#),
    )
    .unwrap();
    assert!(
        matches!(request, ClientRequest::Prompt(p) if matches!(p.prompt[0], ContentBlock::Unknown(_)))
    );
}

#[test]
fn unknown_tool_kind_is_kept_and_re_encodes_unchanged() {
    let decoded =
        update(r#"{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","kind":"teleport"}"#);
    let SessionUpdate::ToolCall(call) = &decoded else {
        panic!("{decoded:?}")
    };
    assert_eq!(call.kind(), ToolKind::Unknown("teleport".into()));
    assert_eq!(serde_json::to_value(&decoded).unwrap()["kind"], "teleport");
}

#[test]
fn tag_after_other_fields_decodes_the_same() {
    let first = update(
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m"}"#,
    );
    let last = update(
        r#"{"messageId":"m","content":{"text":"hi","type":"text"},"sessionUpdate":"agent_message_chunk"}"#,
    );
    assert_eq!(first, last);
    let SessionUpdate::AgentMessageChunk(chunk) = last else {
        panic!()
    };
    assert_eq!(chunk.content, ContentBlock::text("hi"));
}

#[test]
fn malformed_optional_fields_fall_back_to_their_default() {
    let decoded = update(
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","title":5,"kind":7,"status":"exploded","content":"no","locations":{},"_meta":"x"}"#,
    );
    let SessionUpdate::ToolCallUpdate(u) = decoded else {
        panic!()
    };
    assert_eq!(u, ToolCallUpdate::new("c"));

    let decoded = update(
        r#"{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","kind":["read"],"status":3}"#,
    );
    let SessionUpdate::ToolCall(call) = decoded else {
        panic!()
    };
    assert_eq!((&call.kind, &call.status), (&None, &None));
    assert_eq!(
        (call.kind(), call.status()),
        (ToolKind::Other, ToolCallStatus::Pending)
    );

    let chunk = update(
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","annotations":{"priority":"high","audience":["user",3,"robot"]}},"messageId":{"a":1}}"#,
    );
    let SessionUpdate::AgentMessageChunk(chunk) = chunk else {
        panic!()
    };
    assert_eq!(chunk.message_id, None);
    let ContentBlock::Text(text) = chunk.content else {
        panic!()
    };
    let annotations = text.annotations.unwrap();
    assert_eq!(annotations.priority, None);
    assert_eq!(annotations.audience, Some(vec![Role::User]));

    let link: ContentBlock = serde_json::from_str(
        r#"{"type":"resource_link","uri":"u","name":"n","size":"big","title":false}"#,
    )
    .unwrap();
    let ContentBlock::ResourceLink(link) = link else {
        panic!()
    };
    assert_eq!((link.size, link.title), (None, None));
}

#[test]
fn malformed_capabilities_fall_back_to_unsupported() {
    let ClientRequest::Initialize(init) = ClientRequest::decode(
        "initialize",
        Some(r#"{"protocolVersion":1,"clientCapabilities":{"fs":5,"terminal":"yes","elicitation":[],"session":{"notices":true}}}"#),
    )
    .unwrap() else {
        panic!()
    };
    let caps = init.client_capabilities;
    assert_eq!(caps.fs, None);
    assert!(!caps.terminal);
    assert_eq!(caps.elicitation, None);
    assert_eq!(caps.session.unwrap().notices, None);

    let AgentResponse::Initialize(res) =
        AgentResponse::decode("initialize", r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":1,"promptCapabilities":{"image":true,"audio":"x"}},"agentInfo":7}"#).unwrap()
    else {
        panic!()
    };
    assert!(!res.agent_capabilities.load_session);
    assert!(res.agent_capabilities.prompt().image);
    assert!(!res.agent_capabilities.prompt().audio);
    assert_eq!(res.agent_info, None);
    assert!(res.auth_methods.is_empty());
}

#[test]
fn missing_client_capabilities_and_mcp_servers_read_as_empty() {
    let ClientRequest::Initialize(init) =
        ClientRequest::decode("initialize", Some(r#"{"protocolVersion":1}"#)).unwrap()
    else {
        panic!()
    };
    assert_eq!(init.client_capabilities, ClientCapabilities::default());
    let ClientRequest::NewSession(new) =
        ClientRequest::decode("session/new", Some(r#"{"cwd":"/w"}"#)).unwrap()
    else {
        panic!()
    };
    assert!(new.mcp_servers.is_empty());
    assert_eq!(
        serde_json::to_value(&new).unwrap(),
        json(r#"{"cwd":"/w","mcpServers":[]}"#)
    );
}

#[test]
fn invalid_items_are_skipped_from_marked_arrays() {
    let SessionUpdate::Plan(plan) = update(
        r#"{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"},{"content":"b","priority":"urgent","status":"pending"},7]}"#,
    ) else {
        panic!()
    };
    assert_eq!(plan.entries.len(), 1);

    let SessionUpdate::ToolCall(call) = update(
        r#"{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","content":[{"type":"diff","path":"/a","newText":"x"},{"type":"hologram"},{"type":"terminal"}],"locations":[{"path":"/a"},{"line":2}]}"#,
    ) else {
        panic!()
    };
    assert_eq!(call.content.len(), 1);
    assert_eq!(call.locations.len(), 1);

    let SessionUpdate::AvailableCommandsUpdate(cmds) = update(
        r#"{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"a","description":"d"},{"name":"b"}]}"#,
    ) else {
        panic!()
    };
    assert_eq!(cmds.available_commands.len(), 1);

    // Options of a type this version does not know are ignored (the spec says clients should).
    let SessionUpdate::ConfigOptionUpdate(cfg) = update(
        r#"{"sessionUpdate":"config_option_update","configOptions":[{"id":"a","name":"A","type":"slider","currentValue":3},{"id":"b","name":"B","type":"boolean","currentValue":true}]}"#,
    ) else {
        panic!()
    };
    assert_eq!(cfg.config_options.len(), 1);
    assert_eq!(cfg.config_options[0].id, "b");

    let AgentResponse::ListSessions(list) = AgentResponse::decode(
        "session/list",
        r#"{"sessions":[{"sessionId":"a","cwd":"/"},{"sessionId":1}]}"#,
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(list.sessions.len(), 1);
}

#[test]
fn required_fields_stay_strict() {
    assert!(AgentResponse::decode("session/prompt", r#"{"stopReason":"weird"}"#).is_err());
    assert!(AgentResponse::decode("session/prompt", "{}").is_err());
    let params = r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","title":"t"}}"#;
    assert!(AgentNotification::decode("session/update", Some(params)).is_err());
    // A required array is strict about being an array, even when its items are lenient.
    let params = r#"{"sessionId":"s","update":{"sessionUpdate":"plan","entries":{}}}"#;
    assert!(AgentNotification::decode("session/update", Some(params)).is_err());
}

#[test]
fn unknown_fields_are_ignored_and_meta_is_kept() {
    let ClientRequest::Prompt(prompt) = ClientRequest::decode(
        "session/prompt",
        Some(r#"{"sessionId":"s","prompt":[{"type":"text","text":"x","extra":1}],"future":true,"_meta":{"traceparent":"00-1"}}"#),
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(prompt.meta.as_ref().unwrap()["traceparent"], "00-1");
    assert_eq!(
        serde_json::to_value(&prompt).unwrap(),
        json(
            r#"{"sessionId":"s","prompt":[{"type":"text","text":"x"}],"_meta":{"traceparent":"00-1"}}"#
        )
    );
}

#[test]
fn session_info_update_distinguishes_absent_from_null() {
    let SessionUpdate::SessionInfoUpdate(info) =
        update(r#"{"sessionUpdate":"session_info_update","title":null}"#)
    else {
        panic!()
    };
    assert_eq!(info.title, Some(None));
    assert_eq!(info.updated_at, None);
    let SessionUpdate::SessionInfoUpdate(info) =
        update(r#"{"sessionUpdate":"session_info_update","title":"T"}"#)
    else {
        panic!()
    };
    assert_eq!(info.title, Some(Some("T".into())));
}

#[test]
fn permission_response_accepts_the_flat_shape_and_writes_the_nested_one() {
    let ClientResponse::RequestPermission(res) = ClientResponse::decode(
        "session/request_permission",
        r#"{"outcome":"selected","optionId":"allow_once"}"#,
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(
        res.outcome,
        RequestPermissionOutcome::selected("allow_once")
    );
    assert_eq!(
        serde_json::to_value(&res).unwrap(),
        json(r#"{"outcome":{"outcome":"selected","optionId":"allow_once"}}"#)
    );
    let ClientResponse::RequestPermission(res) =
        ClientResponse::decode("session/request_permission", r#"{"outcome":"cancelled"}"#).unwrap()
    else {
        panic!()
    };
    assert_eq!(res.outcome, RequestPermissionOutcome::Cancelled);
    let err = ClientResponse::decode("session/request_permission", r#"{"outcome":"selected"}"#)
        .unwrap_err();
    assert_eq!(
        err.message(),
        "session/request_permission result.optionId is required"
    );
}

#[test]
fn ask_user_answers_and_the_sentinel() {
    assert_eq!(USER_UNAVAILABLE, "(user unavailable)");
    let decode =
        |result: &str| match ClientResponse::decode("_agentao.cn/ask_user", result).unwrap() {
            ClientResponse::AskUser(answer) => answer,
            other => panic!("{other:?}"),
        };
    assert_eq!(
        decode(r#"{"outcome":"answered","text":"blue"}"#).text(),
        "blue"
    );
    assert_eq!(
        decode(r#"{"outcome":"answered","text":""}"#).text(),
        USER_UNAVAILABLE
    );
    assert_eq!(
        decode(r#"{"outcome":"cancelled"}"#),
        AskUserResponse::Cancelled
    );
    assert_eq!(
        decode(r#"{"outcome":"cancelled"}"#).text(),
        USER_UNAVAILABLE
    );
    for odd in [
        r#"{"answer":"x"}"#,
        r#"{"outcome":{"outcome":"selected","optionId":"a"}}"#,
        "null",
        "[1]",
        r#""text""#,
    ] {
        let answer = decode(odd);
        assert!(matches!(answer, AskUserResponse::Unusable(_)), "{odd}");
        assert_eq!(answer.text(), USER_UNAVAILABLE);
        assert_eq!(serde_json::to_value(&answer).unwrap(), json(odd));
    }
}

#[test]
fn agentao_extension_list_in_initialize_meta() {
    let mut meta = Meta::new();
    agentao::set_extensions(
        &mut meta,
        &[
            agentao::ExtensionInfo::new(
                "_agentao.cn/ask_user",
                "Request free-form text input from the user.",
            ),
            agentao::ExtensionInfo::new("_agentao.cn/set_model", "Switch the model."),
        ],
    );
    assert_eq!(
        Value::Object(meta.clone()),
        json(
            r#"{"_agentao.cn/extensions":[{"method":"_agentao.cn/ask_user","description":"Request free-form text input from the user."},{"method":"_agentao.cn/set_model","description":"Switch the model."}]}"#
        )
    );
    let listed = agentao::extensions(&meta);
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1].method, "_agentao.cn/set_model");
    let odd: Meta =
        serde_json::from_str(r#"{"_agentao.cn/extensions":[{"method":"a"},5,{"nope":1}]}"#)
            .unwrap();
    let listed = agentao::extensions(&odd);
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].method.as_str(), listed[0].description.as_deref()),
        ("a", None)
    );
}

#[test]
fn cancel_as_a_request_answers_empty_or_null() {
    assert!(matches!(
        ClientRequest::decode("session/cancel", Some(r#"{"sessionId":"s"}"#)).unwrap(),
        ClientRequest::Cancel(_)
    ));
    for result in ["{}", "null"] {
        let res = AgentResponse::decode("session/cancel", result).unwrap();
        assert_eq!(serde_json::to_value(&res).unwrap(), json("{}"));
    }
}

#[test]
fn absent_params_read_as_an_empty_object() {
    assert!(matches!(
        ClientRequest::decode("logout", None).unwrap(),
        ClientRequest::Logout(_)
    ));
    assert!(matches!(
        ClientRequest::decode("session/list", Some("null")).unwrap(),
        ClientRequest::ListSessions(_)
    ));
}

#[test]
fn embedded_resource_with_both_text_and_blob_is_text() {
    let block: ContentBlock =
        serde_json::from_str(r#"{"type":"resource","resource":{"uri":"u","text":"t","blob":"b"}}"#)
            .unwrap();
    let ContentBlock::Resource(r) = block else {
        panic!()
    };
    assert!(matches!(r.resource, EmbeddedResourceResource::Text(_)));
}

#[test]
fn auth_methods_of_unknown_type_are_kept_and_malformed_ones_skipped() {
    let text = r#"{"protocolVersion":1,"authMethods":[{"id":"a","name":"A"},{"type":"oauth","id":"o","scopes":["x"]},{"type":"terminal","id":"t"},{"type":5,"id":"z","name":"Z"}]}"#;
    let AgentResponse::Initialize(res) = AgentResponse::decode("initialize", text).unwrap() else {
        panic!()
    };
    assert_eq!(res.auth_methods.len(), 2, "{:?}", res.auth_methods);
    assert!(matches!(&res.auth_methods[0], AuthMethod::Agent(a) if a.id == "a"));
    let AuthMethod::Unknown(object) = &res.auth_methods[1] else {
        panic!("{:?}", res.auth_methods[1])
    };
    assert_eq!(
        serde_json::to_value(object).unwrap(),
        json(r#"{"type":"oauth","id":"o","scopes":["x"]}"#)
    );
}
