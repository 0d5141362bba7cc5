//! Every decode error a peer can trigger, with its exact message: the method, the path of the
//! bad field, and what was expected (Agentao's wording where it has one).
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

use acp_core::schema::*;
use pretty_assertions::assert_eq;

fn client_request_error(method: &str, params: Option<&str>) -> DecodeError {
    match ClientRequest::decode(method, params) {
        Ok(decoded) => panic!("{method} {params:?} decoded: {decoded:?}"),
        Err(err) => err,
    }
}

#[track_caller]
fn assert_params_error(method: &str, params: &str, expected: &str) {
    let err = client_request_error(method, Some(params));
    assert_eq!(err.message(), expected, "params: {params}");
    assert_eq!(err.to_string(), expected);
    assert_eq!(err.kind(), DecodeErrorKind::InvalidParams);
    assert_eq!(err.code().0, -32602);
    assert_eq!(err.method(), method);
}

#[test]
fn mcp_server_env_value_error_names_the_full_path() {
    let params = r#"{"cwd":"/w","mcpServers":[
        {"name":"a","command":"x"},
        {"name":"b","command":"y","args":[],"env":[]},
        {"name":"c","command":"z","args":[],"env":[{"name":"K","value":5}]}]}"#;
    let err = client_request_error("session/new", Some(params));
    assert_eq!(
        err.message(),
        "session/new.mcpServers[2].env[0].value must be a string"
    );
    assert_eq!(err.path(), "mcpServers[2].env[0].value");
}

#[test]
fn mcp_server_shape_errors() {
    let cases = [
        (
            r#"{"cwd":"/w","mcpServers":{"a":1}}"#,
            "session/new.mcpServers must be a JSON array",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[5]}"#,
            "session/new.mcpServers[0] must be a JSON object",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"a","type":"ws","url":"u"}]}"#,
            "session/new.mcpServers[0].type must be one of 'stdio', 'sse', 'http', got 'ws'",
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
            r#"{"cwd":"/w","mcpServers":[{"command":"x"}]}"#,
            "session/new.mcpServers[0].name is required",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"a","command":"x"},{"name":"b","command":"y","args":["ok",1]}]}"#,
            "session/new.mcpServers[1].args[1] must be a string",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"a","command":"x","env":{"K":"V"}}]}"#,
            "session/new.mcpServers[0].env must be a JSON array",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"a","command":"x","env":[7]}]}"#,
            "session/new.mcpServers[0].env[0] must be a JSON object",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"a","command":"x","env":[{"name":1,"value":"v"}]}]}"#,
            "session/new.mcpServers[0].env[0].name must be a string",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"type":"sse","name":"a","url":"u","headers":[{"name":"h","value":null}]}]}"#,
            "session/new.mcpServers[0].headers[0].value must be a string",
        ),
    ];
    for (params, expected) in cases {
        assert_params_error("session/new", params, expected);
    }
    assert_params_error(
        "session/load",
        r#"{"sessionId":"s","cwd":"/w","mcpServers":[{"name":3}]}"#,
        "session/load.mcpServers[0].name must be a string",
    );
}

#[test]
fn initialize_errors_match_agentao() {
    for bad in ["\"1\"", "true", "1.5", "null"] {
        assert_params_error(
            "initialize",
            &format!(r#"{{"protocolVersion":{bad}}}"#),
            "initialize.protocolVersion must be an integer",
        );
    }
    assert_params_error(
        "initialize",
        r#"{"protocolVersion":70000}"#,
        "initialize.protocolVersion must be an integer from 0 to 65535, got integer `70000`",
    );
    assert_params_error(
        "initialize",
        r#"{"protocolVersion":-1}"#,
        "initialize.protocolVersion must be an integer from 0 to 65535, got integer `-1`",
    );
    assert_params_error(
        "initialize",
        r#"{}"#,
        "initialize.protocolVersion is required",
    );
    assert_params_error(
        "initialize",
        r#"{"protocolVersion":1,"clientCapabilities":5}"#,
        "initialize.clientCapabilities must be a JSON object",
    );
    assert_params_error(
        "initialize",
        r#"{"protocolVersion":1,"clientCapabilities":null}"#,
        "initialize.clientCapabilities must be a JSON object",
    );
    assert_params_error(
        "initialize",
        r#"{"protocolVersion":1,"clientInfo":"zed"}"#,
        "initialize.clientInfo must be a JSON object",
    );
    assert_params_error(
        "initialize",
        r#"{"protocolVersion":1,"clientInfo":{"name":"zed"}}"#,
        "initialize.clientInfo.version is required",
    );
    // In range: any u16 decodes (the connection answers 1).
    for ok in ["0", "1", "7", "65535"] {
        let params = format!(r#"{{"protocolVersion":{ok}}}"#);
        assert!(
            ClientRequest::decode("initialize", Some(&params)).is_ok(),
            "{ok}"
        );
    }
}

#[test]
fn params_that_are_not_an_object() {
    for params in ["[1]", "5", "\"x\"", "true"] {
        assert_params_error(
            "session/new",
            params,
            "session/new params must be a JSON object",
        );
    }
    let err = client_request_error("session/new", None);
    assert_eq!(err.message(), "session/new params must be a JSON object");
    let err = client_request_error("session/prompt", Some("null"));
    assert_eq!(err.message(), "session/prompt params must be a JSON object");
}

#[test]
fn params_that_are_not_json() {
    let err = client_request_error("session/new", Some(r#"{"cwd":}"#));
    assert!(
        err.message()
            .starts_with("session/new params is not valid JSON: "),
        "{}",
        err.message()
    );
    assert_eq!(err.code().0, -32602);
}

#[test]
fn session_field_errors() {
    assert_params_error(
        "session/new",
        r#"{"cwd":5}"#,
        "session/new.cwd must be a string",
    );
    assert_params_error(
        "session/new",
        r#"{"mcpServers":[]}"#,
        "session/new.cwd is required",
    );
    assert_params_error(
        "session/load",
        r#"{"cwd":"/w"}"#,
        "session/load.sessionId is required",
    );
    assert_params_error(
        "session/set_mode",
        r#"{"sessionId":"s","modeId":1}"#,
        "session/set_mode.modeId must be a string",
    );
    assert_params_error(
        "session/cancel",
        r#"{"sessionId":false}"#,
        "session/cancel.sessionId must be a string",
    );
    assert_params_error(
        "session/set_config_option",
        r#"{"sessionId":"s","configId":"model","value":[1]}"#,
        "session/set_config_option.value must be a string or a boolean",
    );
    assert_params_error(
        "session/set_config_option",
        r#"{"sessionId":"s","configId":"model"}"#,
        "session/set_config_option.value is required",
    );
    assert_params_error(
        "_agentao.cn/set_model",
        r#"{"sessionId":"s","model":1}"#,
        "_agentao.cn/set_model.model must be a string",
    );
    assert_params_error("authenticate", r#"{}"#, "authenticate.methodId is required");
    assert_params_error(
        "session/list",
        r#"{"cursor":5}"#,
        "session/list.cursor must be a string",
    );
}

#[test]
fn prompt_errors_match_agentao() {
    assert_params_error(
        "session/prompt",
        r#"{"sessionId":"s","prompt":"hello"}"#,
        "session/prompt.prompt must be a JSON array of ContentBlocks",
    );
    assert_params_error(
        "session/prompt",
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"a"},"b"]}"#,
        "session/prompt.prompt[1] must be a JSON object",
    );
    assert_params_error(
        "session/prompt",
        r#"{"sessionId":"s","prompt":[{"type":"text","text":5}]}"#,
        "session/prompt.prompt[0].text must be a string",
    );
    // The tag does not need to come first for the path to be exact.
    assert_params_error(
        "session/prompt",
        r#"{"sessionId":"s","prompt":[{"text":5,"type":"text"}]}"#,
        "session/prompt.prompt[0].text must be a string",
    );
    assert_params_error(
        "session/prompt",
        r#"{"sessionId":"s","prompt":[{"text":"x"}]}"#,
        "session/prompt.prompt[0].type is required",
    );
    assert_params_error(
        "session/prompt",
        r#"{"sessionId":"s","prompt":[{"type":7}]}"#,
        "session/prompt.prompt[0].type must be a string",
    );
    assert_params_error(
        "session/prompt",
        r#"{"sessionId":"s","prompt":[{"type":"image","data":"AAAA"}]}"#,
        "session/prompt.prompt[0].mimeType is required",
    );
    assert_params_error(
        "session/prompt",
        r#"{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"u"}}]}"#,
        "session/prompt.prompt[0].resource.text is required",
    );
}

#[test]
fn agent_side_errors() {
    let err = AgentRequest::decode(
        "session/request_permission",
        Some(r#"{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"a","name":"A","kind":"maybe"}]}"#),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "session/request_permission.options[0].kind must be one of 'allow_once', 'allow_always', 'reject_once', 'reject_always', got 'maybe'"
    );
    let err = AgentRequest::decode(
        "session/request_permission",
        Some(r#"{"sessionId":"s","toolCall":{},"options":[]}"#),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "session/request_permission.toolCall.toolCallId is required"
    );
    let err = AgentRequest::decode(
        "fs/write_text_file",
        Some(r#"{"sessionId":"s","path":"/a"}"#),
    )
    .unwrap_err();
    assert_eq!(err.message(), "fs/write_text_file.content is required");
    let err = AgentRequest::decode("terminal/create", Some(r#"{"sessionId":"s"}"#)).unwrap_err();
    assert_eq!(err.message(), "terminal/create.command is required");
    let err = AgentRequest::decode(
        "elicitation/create",
        Some(r#"{"message":"m","mode":"url","sessionId":"s","url":"u"}"#),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "elicitation/create.elicitationId is required"
    );
    let err = AgentRequest::decode(
        "elicitation/create",
        Some(r#"{"message":"m","mode":"chat","sessionId":"s"}"#),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "elicitation/create.mode must be one of 'form', 'url', got 'chat'"
    );
    let err =
        AgentRequest::decode("_agentao.cn/ask_user", Some(r#"{"sessionId":"s"}"#)).unwrap_err();
    assert_eq!(err.message(), "_agentao.cn/ask_user.question is required");
}

#[test]
fn session_update_errors_name_the_nested_path() {
    let err = AgentNotification::decode(
        "session/update",
        Some(r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":5}}}"#),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "session/update.update.content.text must be a string"
    );
    let err = AgentNotification::decode(
        "session/update",
        Some(r#"{"sessionId":"s","update":{"content":{"text":"x","type":"text"}}}"#),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "session/update.update.sessionUpdate is required"
    );
    let err = AgentNotification::decode(
        "session/update",
        Some(r#"{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":-1,"size":10}}"#),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "session/update.update.used is out of range for u64, got integer `-1`"
    );
    let err = ClientNotification::decode("$/cancel_request", Some(r#"{"requestId":{"a":1}}"#))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "$/cancel_request.requestId must be a string, an integer or null"
    );
}

#[test]
fn result_errors_name_the_method_and_result() {
    let err = AgentResponse::decode("session/prompt", r#"{"stopReason":"weird"}"#).unwrap_err();
    assert_eq!(
        err.message(),
        "session/prompt result.stopReason must be one of 'end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled', got 'weird'"
    );
    let err = AgentResponse::decode("session/new", "[]").unwrap_err();
    assert_eq!(err.message(), "session/new result must be a JSON object");
    let err = AgentResponse::decode("session/new", "{}").unwrap_err();
    assert_eq!(err.message(), "session/new result.sessionId is required");
    let err = ClientResponse::decode("fs/read_text_file", r#"{"content":null}"#).unwrap_err();
    assert_eq!(
        err.message(),
        "fs/read_text_file result.content must be a string"
    );
    let err = ClientResponse::decode("terminal/output", r#"{"output":"x"}"#).unwrap_err();
    assert_eq!(
        err.message(),
        "terminal/output result.truncated is required"
    );
    let err = ClientResponse::decode("elicitation/create", r#"{}"#).unwrap_err();
    assert_eq!(
        err.message(),
        "elicitation/create result.action is required"
    );
    let err = ClientResponse::decode(
        "session/request_permission",
        r#"{"outcome":{"outcome":"maybe"}}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "session/request_permission result.outcome must be one of 'cancelled', 'selected', got 'maybe'"
    );
    assert_eq!(err.code().0, -32602);
}

#[test]
fn whitelisted_methods_refuse_extra_fields_with_agentao_messages() {
    assert_params_error(
        "session/set_config_option",
        r#"{"sessionId":"s","configId":"model","value":"openai/gpt","apiKey":"sk-1"}"#,
        "session/set_config_option: unexpected field(s) ['apiKey']; only ['configId', 'sessionId', 'value'] are accepted (credentials resolve server-side and never travel on the wire)",
    );
    assert_params_error(
        "_agentao.cn/set_model",
        r#"{"sessionId":"s","model":"m","provider":"x","apiKey":"k"}"#,
        "_agentao.cn/set_model: unexpected field(s) ['apiKey', 'provider']; only ['model', 'sessionId'] are accepted (model-only, secret-free)",
    );
    // `_meta` and the schema's boolean `type` are not extras.
    assert!(
        ClientRequest::decode(
            "session/set_config_option",
            Some(r#"{"sessionId":"s","configId":"f","type":"boolean","value":true,"_meta":{}}"#)
        )
        .is_ok()
    );
    assert!(
        ClientRequest::decode(
            "_agentao.cn/set_model",
            Some(r#"{"sessionId":"s","model":"m","_meta":{}}"#)
        )
        .is_ok()
    );
    // Other methods ignore unknown fields.
    assert!(
        ClientRequest::decode(
            "session/set_mode",
            Some(r#"{"sessionId":"s","modeId":"plan","apiKey":"k"}"#)
        )
        .is_ok()
    );
}

#[test]
fn error_paths_survive_lenient_fields_next_to_the_error() {
    // `locations`, `content` and `kind` are read through the lenient (raw-capturing) helpers in
    // both passes; the precise pass must still get to the missing title.
    let params = r#"{"sessionId":"s","update":{"locations":[{"path":"/a"},5],"content":[{"type":"diff","path":"/a","newText":"x"}],"kind":"read","toolCallId":"c","sessionUpdate":"tool_call","_meta":{"a":1}}}"#;
    let err = AgentNotification::decode("session/update", Some(params)).unwrap_err();
    assert_eq!(err.message(), "session/update.update.title is required");
    let params = r#"{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}],"_meta":{}},"_meta":7,"extra":{"deep":[1,2]}}"#;
    assert!(AgentNotification::decode("session/update", Some(params)).is_ok());
    let params = r#"{"sessionId":5,"update":{"sessionUpdate":"plan","entries":[]}}"#;
    let err = AgentNotification::decode("session/update", Some(params)).unwrap_err();
    assert_eq!(err.message(), "session/update.sessionId must be a string");
}

#[test]
fn agentao_value_rules() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "session/prompt",
            r#"{"sessionId":"","prompt":[{"type":"text","text":"x"}]}"#,
            "session/prompt.sessionId must be a non-empty string",
        ),
        (
            "session/prompt",
            r#"{"sessionId":"s","prompt":[]}"#,
            "session/prompt.prompt must not be empty",
        ),
        (
            "session/cancel",
            r#"{"sessionId":""}"#,
            "session/cancel.sessionId must be a non-empty string",
        ),
        (
            "session/load",
            r#"{"sessionId":"","cwd":"/w"}"#,
            "session/load.sessionId must be a non-empty string",
        ),
        (
            "session/set_mode",
            r#"{"sessionId":"s","modeId":""}"#,
            "session/set_mode.modeId must be a non-empty string",
        ),
        (
            "session/set_config_option",
            r#"{"sessionId":"s","configId":"model","value":"  "}"#,
            "session/set_config_option.value must be a non-empty string",
        ),
        (
            "_agentao.cn/set_model",
            r#"{"sessionId":"s","model":" "}"#,
            "_agentao.cn/set_model.model must be a non-empty string",
        ),
        (
            "session/new",
            r#"{"cwd":"","mcpServers":[]}"#,
            "session/new.cwd must not be empty",
        ),
        (
            "session/new",
            r#"{"cwd":"work/dir","mcpServers":[]}"#,
            "session/new.cwd must be an absolute path, got 'work/dir'",
        ),
        (
            "session/resume",
            r#"{"sessionId":"s","cwd":"."}"#,
            "session/resume.cwd must be an absolute path, got '.'",
        ),
        (
            "session/new",
            r#"{"cwd":"/w","mcpServers":[{"name":"","command":"x"}]}"#,
            "session/new.mcpServers[0].name must be a non-empty string",
        ),
        (
            "session/new",
            r#"{"cwd":"/w","mcpServers":[{"name":"a","command":"x"},{"name":"b","command":""}]}"#,
            "session/new.mcpServers[1].command must be a non-empty string",
        ),
        (
            "session/new",
            r#"{"cwd":"/w","mcpServers":[{"type":"sse","name":"a","url":""}]}"#,
            "session/new.mcpServers[0].url must be a non-empty string",
        ),
    ];
    for (method, params, expected) in cases {
        assert_params_error(method, params, expected);
    }
    for cwd in [
        "/",
        "/home/u",
        r"C:\\Users\\u",
        "C:/Users/u",
        r"\\\\server\\share",
    ] {
        let params = format!(r#"{{"cwd":"{cwd}","mcpServers":[]}}"#);
        assert!(
            ClientRequest::decode("session/new", Some(&params)).is_ok(),
            "{cwd}"
        );
    }
    // A boolean config value is not a string, so the non-empty rule does not apply.
    assert!(
        ClientRequest::decode(
            "session/set_config_option",
            Some(r#"{"sessionId":"s","configId":"f","type":"boolean","value":false}"#)
        )
        .is_ok()
    );
}
