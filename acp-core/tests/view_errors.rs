//! Every view decode error a peer can trigger, with its exact message, which is also the owned
//! types' message for the same input (checked side by side).
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

use acp_core::schema::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest,
    ClientResponse,
};
use acp_core::view::{
    AgentNotificationView, AgentRequestView, AgentResponseView, ClientNotificationView,
    ClientRequestView, ClientResponseView, Detail, Part, Segment, ViewErrorKind,
};
use acp_core::wire::json::parse_value;
use pretty_assertions::assert_eq;

/// Which decoder of each tier to run.
#[derive(Clone, Copy, Debug)]
enum Kind {
    ClientRequest,
    AgentRequest,
    ClientNotification,
    AgentNotification,
    AgentResponse,
    ClientResponse,
}

/// The view's error message, or `None` when it decoded.
fn view_error(kind: Kind, method: &str, json: &str) -> Option<String> {
    let raw = parse_value(json).expect("test input is JSON");
    let message = |e: acp_core::view::ViewError<'_>| e.to_string();
    match kind {
        Kind::ClientRequest => ClientRequestView::decode(method, Some(raw))
            .err()
            .map(message),
        Kind::AgentRequest => AgentRequestView::decode(method, Some(raw))
            .err()
            .map(message),
        Kind::ClientNotification => ClientNotificationView::decode(method, Some(raw))
            .err()
            .map(message),
        Kind::AgentNotification => AgentNotificationView::decode(method, Some(raw))
            .err()
            .map(message),
        Kind::AgentResponse => AgentResponseView::decode(method, raw).err().map(message),
        Kind::ClientResponse => ClientResponseView::decode(method, raw).err().map(message),
    }
}

/// The owned types' error message, or `None` when they decoded.
fn owned_error(kind: Kind, method: &str, json: &str) -> Option<String> {
    let message = |e: acp_core::schema::DecodeError| e.message().to_owned();
    match kind {
        Kind::ClientRequest => ClientRequest::decode(method, Some(json)).err().map(message),
        Kind::AgentRequest => AgentRequest::decode(method, Some(json)).err().map(message),
        Kind::ClientNotification => ClientNotification::decode(method, Some(json))
            .err()
            .map(message),
        Kind::AgentNotification => AgentNotification::decode(method, Some(json))
            .err()
            .map(message),
        Kind::AgentResponse => AgentResponse::decode(method, json).err().map(message),
        Kind::ClientResponse => ClientResponse::decode(method, json).err().map(message),
    }
}

/// Both tiers refuse `json` with exactly `expected`.
fn refused(kind: Kind, method: &str, json: &str, expected: &str) {
    assert_eq!(
        view_error(kind, method, json).as_deref(),
        Some(expected),
        "view, {method} {json}"
    );
    assert_eq!(
        owned_error(kind, method, json).as_deref(),
        Some(expected),
        "owned, {method} {json}"
    );
}

#[test]
fn initialize_errors() {
    use Kind::ClientRequest as C;
    for bad in [
        "\"1\"",
        "true",
        "1.5",
        "null",
        "1e2",
        "99999999999999999999",
    ] {
        refused(
            C,
            "initialize",
            &format!(r#"{{"protocolVersion":{bad}}}"#),
            "initialize.protocolVersion must be an integer",
        );
    }
    refused(
        C,
        "initialize",
        r#"{"protocolVersion":70000}"#,
        "initialize.protocolVersion must be an integer from 0 to 65535, got integer `70000`",
    );
    refused(
        C,
        "initialize",
        r#"{"protocolVersion":-1}"#,
        "initialize.protocolVersion must be an integer from 0 to 65535, got integer `-1`",
    );
    refused(
        C,
        "initialize",
        "{}",
        "initialize.protocolVersion is required",
    );
    for bad in ["5", "null", "\"x\""] {
        refused(
            C,
            "initialize",
            &format!(r#"{{"protocolVersion":1,"clientCapabilities":{bad}}}"#),
            "initialize.clientCapabilities must be a JSON object",
        );
    }
    refused(
        C,
        "initialize",
        r#"{"protocolVersion":1,"clientInfo":"zed"}"#,
        "initialize.clientInfo must be a JSON object",
    );
    refused(
        C,
        "initialize",
        r#"{"protocolVersion":1,"clientInfo":{"name":"zed"}}"#,
        "initialize.clientInfo.version is required",
    );
    refused(
        C,
        "initialize",
        r#"{"protocolVersion":1,"clientInfo":{"name":1,"version":"1"}}"#,
        "initialize.clientInfo.name must be a string",
    );
    refused(
        Kind::AgentResponse,
        "initialize",
        r#"{"agentCapabilities":{}}"#,
        "initialize result.protocolVersion is required",
    );
}

#[test]
fn params_and_results_that_are_not_objects() {
    for params in ["[1]", "5", "\"x\"", "true"] {
        refused(
            Kind::ClientRequest,
            "session/prompt",
            params,
            "session/prompt params must be a JSON object",
        );
        refused(
            Kind::AgentNotification,
            "session/update",
            params,
            "session/update params must be a JSON object",
        );
    }
    // Absent and `null` params read as `{}`.
    let err = ClientRequestView::decode("session/prompt", None).unwrap_err();
    assert_eq!(err.to_string(), "session/prompt.sessionId is required");
    let null = parse_value("null").unwrap();
    let err = ClientNotificationView::decode("session/cancel", Some(null)).unwrap_err();
    assert_eq!(err.to_string(), "session/cancel.sessionId is required");
    for result in ["[]", "5", "null"] {
        refused(
            Kind::AgentResponse,
            "session/new",
            result,
            "session/new result must be a JSON object",
        );
    }
    refused(
        Kind::AgentResponse,
        "session/new",
        "{}",
        "session/new result.sessionId is required",
    );
}

#[test]
fn prompt_errors() {
    use Kind::ClientRequest as C;
    let cases = [
        (
            r#"{"sessionId":"s","prompt":"hello"}"#,
            "session/prompt.prompt must be a JSON array of ContentBlocks",
        ),
        (r#"{"sessionId":"s"}"#, "session/prompt.prompt is required"),
        (
            r#"{"sessionId":"s","prompt":[{"type":"text","text":"a"},"b"]}"#,
            "session/prompt.prompt[1] must be a JSON object",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"type":"text","text":5}]}"#,
            "session/prompt.prompt[0].text must be a string",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"text":5,"type":"text"}]}"#,
            "session/prompt.prompt[0].text must be a string",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"text":"x"}]}"#,
            "session/prompt.prompt[0].type is required",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"type":7}]}"#,
            "session/prompt.prompt[0].type must be a string",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"type":"image","data":"AAAA"}]}"#,
            "session/prompt.prompt[0].mimeType is required",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"type":"audio","mimeType":"audio/wav"}]}"#,
            "session/prompt.prompt[0].data is required",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"type":"resource_link","uri":"file:///a"}]}"#,
            "session/prompt.prompt[0].name is required",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"u"}}]}"#,
            "session/prompt.prompt[0].resource.text is required",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"type":"resource","resource":{"text":"t"}}]}"#,
            "session/prompt.prompt[0].resource.uri is required",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"u","text":1}}]}"#,
            "session/prompt.prompt[0].resource.text must be a string",
        ),
        (
            r#"{"sessionId":"s","prompt":[{"type":"resource","resource":"u"}]}"#,
            "session/prompt.prompt[0].resource must be a JSON object",
        ),
        (
            r#"{"sessionId":7,"prompt":[]}"#,
            "session/prompt.sessionId must be a string",
        ),
        (
            r#"{"sessionId":"","prompt":[{"type":"text","text":"x"}]}"#,
            "session/prompt.sessionId must be a non-empty string",
        ),
        (
            r#"{"sessionId":"s","prompt":[]}"#,
            "session/prompt.prompt must not be empty",
        ),
    ];
    for (params, expected) in cases {
        refused(C, "session/prompt", params, expected);
    }
}

#[test]
fn cancel_errors() {
    refused(
        Kind::ClientRequest,
        "session/cancel",
        r#"{"sessionId":false}"#,
        "session/cancel.sessionId must be a string",
    );
    refused(
        Kind::ClientRequest,
        "session/cancel",
        r#"{"sessionId":""}"#,
        "session/cancel.sessionId must be a non-empty string",
    );
    refused(
        Kind::ClientNotification,
        "session/cancel",
        r#"{}"#,
        "session/cancel.sessionId is required",
    );
}

#[test]
fn new_session_errors() {
    use Kind::ClientRequest as C;
    let cases = [
        (r#"{"cwd":5}"#, "session/new.cwd must be a string"),
        (r#"{"mcpServers":[]}"#, "session/new.cwd is required"),
        (
            r#"{"cwd":"","mcpServers":[]}"#,
            "session/new.cwd must not be empty",
        ),
        (
            r#"{"cwd":"work/dir","mcpServers":[]}"#,
            "session/new.cwd must be an absolute path, got 'work/dir'",
        ),
        (
            r#"{"cwd":"C:x\\y","mcpServers":[]}"#,
            "session/new.cwd must be an absolute path, got 'C:x\\y'",
        ),
        (
            r#"{"cwd":"/w","mcpServers":{}}"#,
            "session/new.mcpServers must be a JSON array",
        ),
        (
            r#"{"cwd":"/w","mcpServers":null}"#,
            "session/new.mcpServers must be a JSON array",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[5]}"#,
            "session/new.mcpServers[0] must be a JSON object",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"command":"x"}]}"#,
            "session/new.mcpServers[0].name is required",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"a"}]}"#,
            "session/new.mcpServers[0].command is required",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"type":"http","name":"a"}]}"#,
            "session/new.mcpServers[0].url is required",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"type":"ws","name":"a"}]}"#,
            "session/new.mcpServers[0].type must be one of 'stdio', 'sse', 'http', got 'ws'",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"a","command":"x","args":["a",1]}]}"#,
            "session/new.mcpServers[0].args[1] must be a string",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"a","command":"x","env":[{"name":"K"}]}]}"#,
            "session/new.mcpServers[0].env[0].value is required",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"a","command":"x"},{"name":"b","command":"x","env":[{"name":"K","value":"v"},{"name":"L","value":1}]}]}"#,
            "session/new.mcpServers[1].env[1].value must be a string",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"","command":"x"}]}"#,
            "session/new.mcpServers[0].name must be a non-empty string",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"type":"sse","name":"a","url":""}]}"#,
            "session/new.mcpServers[0].url must be a non-empty string",
        ),
    ];
    for (params, expected) in cases {
        refused(C, "session/new", params, expected);
    }
    for cwd in [
        "/",
        "/home/u",
        r"C:\\Users\\u",
        "C:/Users/u",
        r"\\\\server\\share",
        r"\/x",
    ] {
        let params = format!(r#"{{"cwd":"{cwd}","mcpServers":[]}}"#);
        assert_eq!(view_error(C, "session/new", &params), None, "{cwd}");
        assert_eq!(owned_error(C, "session/new", &params), None, "{cwd}");
    }
}

#[test]
fn session_update_errors() {
    use Kind::AgentNotification as N;
    let cases = [
        (
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":5}}}"#,
            "session/update.update.content.text must be a string",
        ),
        (
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}"#,
            "session/update.update.content is required",
        ),
        (
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":[]}}"#,
            "session/update.update.content must be a JSON object",
        ),
        (
            r#"{"sessionId":"s","update":{"content":{"text":"x","type":"text"}}}"#,
            "session/update.update.sessionUpdate is required",
        ),
        (
            r#"{"sessionId":"s","update":{"sessionUpdate":1}}"#,
            "session/update.update.sessionUpdate must be a string",
        ),
        (r#"{"sessionId":"s"}"#, "session/update.update is required"),
        (
            r#"{"sessionId":"s","update":"plan"}"#,
            "session/update.update must be a JSON object",
        ),
        (
            r#"{"sessionId":5,"update":{"sessionUpdate":"plan","entries":[]}}"#,
            "session/update.sessionId must be a string",
        ),
        (
            r#"{"sessionId":"s","update":{"locations":[{"path":"/a"},5],"content":[{"type":"diff","path":"/a","newText":"x"}],"kind":"read","toolCallId":"c","sessionUpdate":"tool_call","_meta":{"a":1}}}"#,
            "session/update.update.title is required",
        ),
        (
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","title":"t"}}"#,
            "session/update.update.toolCallId is required",
        ),
        (
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":7}}"#,
            "session/update.update.toolCallId must be a string",
        ),
        (
            r#"{"sessionId":"s","update":{"sessionUpdate":"plan"}}"#,
            "session/update.update.entries is required",
        ),
        (
            r#"{"sessionId":"s","update":{"sessionUpdate":"plan","entries":{}}}"#,
            "session/update.update.entries must be a JSON array",
        ),
    ];
    for (params, expected) in cases {
        refused(N, "session/update", params, expected);
    }
}

#[test]
fn permission_errors() {
    use Kind::{AgentRequest as A, ClientResponse as R};
    let request = [
        (
            r#"{"sessionId":"s","options":[]}"#,
            "session/request_permission.toolCall is required",
        ),
        (
            r#"{"sessionId":"s","toolCall":{},"options":[]}"#,
            "session/request_permission.toolCall.toolCallId is required",
        ),
        (
            r#"{"sessionId":"s","toolCall":{"toolCallId":"c"}}"#,
            "session/request_permission.options is required",
        ),
        (
            r#"{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"a","name":"A","kind":"maybe"}]}"#,
            "session/request_permission.options[0].kind must be one of 'allow_once', 'allow_always', 'reject_once', 'reject_always', got 'maybe'",
        ),
        (
            r#"{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"a","name":"A","kind":"allow_once"},{"name":"B","kind":"reject_once"}]}"#,
            "session/request_permission.options[1].optionId is required",
        ),
    ];
    for (params, expected) in request {
        refused(A, "session/request_permission", params, expected);
    }
    let result = [
        (
            r#"{"outcome":{"outcome":"maybe"}}"#,
            "session/request_permission result.outcome must be one of 'cancelled', 'selected', got 'maybe'",
        ),
        (
            r#"{"outcome":{"outcome":"selected"}}"#,
            "session/request_permission result.outcome.optionId is required",
        ),
        (
            r#"{"outcome":{"optionId":"a"}}"#,
            "session/request_permission result.outcome.outcome is required",
        ),
        (
            r#"{"outcome":"selected"}"#,
            "session/request_permission result.optionId is required",
        ),
        (
            r#"{"outcome":"maybe"}"#,
            "session/request_permission result must be one of 'cancelled', 'selected', got 'maybe'",
        ),
        (
            r#"{"outcome":5}"#,
            "session/request_permission result.outcome must be a JSON object",
        ),
        (
            r#"{}"#,
            "session/request_permission result.outcome is required",
        ),
        (
            r#"{"outcome":"selected","optionId":5}"#,
            "session/request_permission result.optionId must be a string",
        ),
    ];
    for (json, expected) in result {
        refused(R, "session/request_permission", json, expected);
    }
}

#[test]
fn stop_reason_errors() {
    use Kind::AgentResponse as R;
    refused(
        R,
        "session/prompt",
        r#"{"stopReason":"weird"}"#,
        "session/prompt result.stopReason must be one of 'end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled', got 'weird'",
    );
    refused(
        R,
        "session/prompt",
        r#"{"stopReason":"we\u0069rd\n"}"#,
        "session/prompt result.stopReason must be one of 'end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled', got 'weird\n'",
    );
    refused(
        R,
        "session/prompt",
        r#"{}"#,
        "session/prompt result.stopReason is required",
    );
    refused(
        R,
        "session/prompt",
        r#"{"stopReason":null}"#,
        "session/prompt result.stopReason must be a string",
    );
}

/// A known member sent twice is refused by both tiers (the wording differs: serde reports the
/// position in the text, the views the path).
#[test]
fn duplicate_members_are_refused() {
    let params =
        r#"{"sessionId":"a","sessionId":"b","update":{"sessionUpdate":"plan","entries":[]}}"#;
    assert_eq!(
        view_error(Kind::AgentNotification, "session/update", params).as_deref(),
        Some("session/update.sessionId must not appear twice")
    );
    assert!(owned_error(Kind::AgentNotification, "session/update", params).is_some());
    // Unknown members may repeat.
    let params = r#"{"sessionId":"a","x":1,"x":2,"update":{"sessionUpdate":"plan","entries":[]}}"#;
    assert_eq!(
        view_error(Kind::AgentNotification, "session/update", params),
        None
    );
}

#[test]
fn methods_without_a_view() {
    let raw = parse_value("{}").unwrap();
    for (method, err) in [
        (
            "session/load",
            ClientRequestView::decode("session/load", Some(raw)).unwrap_err(),
        ),
        (
            "nope",
            ClientRequestView::decode("nope", Some(raw)).unwrap_err(),
        ),
        // The right method in the wrong direction.
        (
            "session/update",
            ClientRequestView::decode("session/update", Some(raw)).unwrap_err(),
        ),
        (
            "fs/read_text_file",
            AgentRequestView::decode("fs/read_text_file", None).unwrap_err(),
        ),
        (
            "$/cancel_request",
            ClientNotificationView::decode("$/cancel_request", None).unwrap_err(),
        ),
        (
            "elicitation/complete",
            AgentNotificationView::decode("elicitation/complete", None).unwrap_err(),
        ),
        (
            "session/list",
            AgentResponseView::decode("session/list", raw).unwrap_err(),
        ),
        (
            "terminal/output",
            ClientResponseView::decode("terminal/output", raw).unwrap_err(),
        ),
    ] {
        assert_eq!(err.kind(), ViewErrorKind::NoView, "{method}");
        assert_eq!(err.to_string(), "Method not found");
        assert_eq!(err.code().0, -32601);
        assert_eq!(err.method(), method);
        assert_eq!(err.detail(), None);
    }
}

#[test]
fn error_parts_are_exposed() {
    let raw = parse_value(
        r#"{"cwd":"/w","mcpServers":[{"name":"a","command":"x","env":[{"name":"K","value":1}]}]}"#,
    )
    .unwrap();
    let err = ClientRequestView::decode("session/new", Some(raw)).unwrap_err();
    assert_eq!(err.kind(), ViewErrorKind::InvalidParams);
    assert_eq!(err.code().0, -32602);
    assert_eq!(err.part(), Part::Params);
    assert_eq!(err.path().to_string(), "mcpServers[0].env[0].value");
    assert_eq!(
        err.path().segments().collect::<Vec<_>>(),
        [
            Segment::Key("mcpServers"),
            Segment::Index(0),
            Segment::Key("env"),
            Segment::Index(0),
            Segment::Key("value"),
        ]
    );
    assert_eq!(err.detail(), Some(Detail::MustBe("a string")));
    let err = AgentResponseView::decode("session/prompt", parse_value("{}").unwrap()).unwrap_err();
    assert_eq!(err.part(), Part::Result);
    assert_eq!(err.detail(), Some(Detail::Required));
}
