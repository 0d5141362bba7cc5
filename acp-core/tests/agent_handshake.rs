//! The `initialize` gate and handshake rules (R-INIT-1 … R-INIT-5).
#![cfg(feature = "std")]

mod agent_support;

use acp_core::conn::agent::{AgentEvent, ClientViolation};
use acp_core::machine::handshake::Capabilities;
use acp_core::wire::ErrorCode;
use agent_support::Harness;

const AGENTAO_RESULT: &str = r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":true,"sse":true}},"authMethods":[],"agentInfo":{"name":"agentao","title":"Agentao","version":"0.4.20"},"_meta":{"_agentao.cn/extensions":[{"method":"_agentao.cn/ask_user","description":"Request free-form text input from the user."},{"method":"_agentao.cn/set_model","description":"Switch the session's model (model-only, secret-free)."}]}}"#;

#[test]
fn every_request_before_initialize_gets_32002_naming_its_method() {
    let mut h = Harness::new();
    h.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
    );
    h.send(r#"{"jsonrpc":"2.0","id":"x","method":"no/such","params":{}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt"}"#);
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"session/new called before initialize handshake"}}"#,
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32002,"message":"no/such called before initialize handshake"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"session/prompt called before initialize handshake"}}"#,
        ]
    );
    assert_eq!(h.agent.requests_owed(), 0, "refused requests are not owed");
}

#[test]
fn notifications_before_initialize_are_ignored() {
    let mut h = Harness::new();
    h.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#);
    h.send(r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1}}"#);
    assert!(h.take_lines().is_empty());
    assert!(h.take_events().is_empty());
    assert!(!h.agent.handshake().is_initialized());
}

#[test]
fn initialize_answers_the_configured_capabilities_info_and_extensions() {
    let mut h = Harness::new();
    h.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":true},"clientInfo":{"name":"zed","version":"1"}}}"#);
    assert_eq!(
        h.take_lines(),
        [format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{AGENTAO_RESULT}}}"#
        )]
    );
    match h.take_events().as_slice() {
        [AgentEvent::Initialized { client, params }] => {
            assert_eq!(*client, Capabilities::FS_READ.union(Capabilities::TERMINAL));
            let request = h.agent.initialize_request(*params).unwrap();
            assert_eq!(request.client_info.as_ref().unwrap().name, "zed");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn any_integer_version_in_u16_is_answered_with_1_and_initialize_may_repeat() {
    let mut h = Harness::new();
    for (id, version) in [(1, "0"), (2, "7"), (3, "65535"), (4, "1")] {
        h.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":{version},"clientCapabilities":{{}}}}}}"#
        ));
        assert_eq!(
            h.take_lines(),
            [format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{AGENTAO_RESULT}}}"#
            )]
        );
    }
}

#[test]
fn bad_versions_and_params_get_32602_with_agentao_texts() {
    let mut h = Harness::new();
    let cases = [
        (
            r#"{"protocolVersion":true}"#,
            "Invalid params: initialize.protocolVersion must be an integer",
        ),
        (
            r#"{"protocolVersion":"1"}"#,
            "Invalid params: initialize.protocolVersion must be an integer",
        ),
        (
            r#"{"protocolVersion":1.5}"#,
            "Invalid params: initialize.protocolVersion must be an integer",
        ),
        (
            r#"{}"#,
            "Invalid params: initialize.protocolVersion must be an integer",
        ),
        (
            r#"{"protocolVersion":65536}"#,
            "Invalid params: initialize.protocolVersion must be an integer from 0 to 65535",
        ),
        (
            r#"{"protocolVersion":-1}"#,
            "Invalid params: initialize.protocolVersion must be an integer from 0 to 65535",
        ),
        (
            r#"{"protocolVersion":123456789012345678901234567890}"#,
            "Invalid params: initialize.protocolVersion must be an integer from 0 to 65535",
        ),
        (
            r#"{"protocolVersion":1,"clientCapabilities":[]}"#,
            "Invalid params: initialize.clientCapabilities must be a JSON object",
        ),
        (
            r#"{"protocolVersion":1,"clientCapabilities":{},"clientInfo":"zed"}"#,
            "Invalid params: initialize.clientInfo must be a JSON object when present",
        ),
        (
            r#"[1]"#,
            "Invalid params: initialize params must be a JSON object",
        ),
    ];
    for (i, (params, message)) in cases.iter().enumerate() {
        h.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"initialize","params":{params}}}"#
        ));
        assert_eq!(
            h.take_lines(),
            [format!(
                r#"{{"jsonrpc":"2.0","id":{i},"error":{{"code":-32602,"message":"{message}"}}}}"#
            )],
            "params {params}"
        );
    }
    assert!(
        !h.agent.handshake().is_initialized(),
        "no failed initialize counts"
    );
    assert!(
        h.take_events().iter().all(|e| *e
            == AgentEvent::PeerViolation(ClientViolation::Refused(ErrorCode::INVALID_PARAMS)))
    );
}

#[test]
fn missing_client_capabilities_means_empty() {
    let mut h = Harness::new();
    h.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#);
    assert_eq!(h.take_lines().len(), 1);
    assert_eq!(h.agent.handshake().peer(), Capabilities::empty());
    assert!(h.agent.handshake().is_initialized());
}

#[test]
fn garbage_lines_are_answered_by_the_transport_and_reported() {
    let mut h = Harness::new();
    h.send("not json");
    h.send("[1,2]");
    let lines = h.take_lines();
    assert!(lines[0].starts_with(
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: "#
    ));
    assert_eq!(
        lines[1],
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected JSON object"}}"#
    );
    assert_eq!(
        h.take_events(),
        [
            AgentEvent::PeerViolation(ClientViolation::Rejected(ErrorCode::PARSE_ERROR)),
            AgentEvent::PeerViolation(ClientViolation::Rejected(ErrorCode::INVALID_REQUEST)),
        ]
    );
}

/// R-INIT-8: in plain ACP the gate answers `-32600` (same text), and the peer violation
/// carries that code; `AgentConfig::new` speaks plain ACP, `AgentConfig::agentao` Agentao's
/// dialect.
#[test]
fn before_initialize_plain_acp_answers_32600() {
    use acp_core::conn::agent::{AgentConfig, AgentInfo, Dialect};
    assert_eq!(
        AgentConfig::new(AgentInfo::new("a", "A", "1")).dialect,
        Dialect::Acp
    );
    assert_eq!(
        AgentConfig::agentao(AgentInfo::new("a", "A", "1")).dialect,
        Dialect::Agentao
    );
    let mut h: Harness = Harness::with_config(agent_support::config().with_dialect(Dialect::Acp));
    h.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
    );
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"session/new called before initialize handshake"}}"#
        ]
    );
    assert_eq!(
        h.take_events(),
        [AgentEvent::PeerViolation(ClientViolation::Refused(
            ErrorCode::INVALID_REQUEST
        ))]
    );
}
