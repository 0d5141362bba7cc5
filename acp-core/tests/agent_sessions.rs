//! Sessions: session/new validation, unknown sessions, load with replay, set_mode /
//! set_config_option / set_model with the busy gate, other v1 methods (R-SESSION-1 …
//! R-SESSION-6, R-CONFIG-1 … R-CONFIG-3, R-MODE-1, R-RPC-7).
#![cfg(feature = "std")]

mod agent_support;

use acp_core::conn::agent::{AgentEvent, RawUpdate};
use acp_core::machine::UsageError;
use acp_core::machine::session::SessionState;
use acp_core::machine::turn::StopReason;
use acp_core::schema::{ClientRequest, McpServer, NewSessionResponse};
use acp_core::wire::ErrorCode;
use agent_support::Harness;

fn ready() -> Harness {
    let mut h = Harness::new();
    h.initialize("{}");
    h
}

fn error_line(id: &str, code: i32, message: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"{message}"}}}}"#)
}

#[test]
fn session_new_checks_cwd_and_mcp_servers() {
    let mut h = ready();
    let cases = [
        (
            r#"{"cwd":"relative/dir","mcpServers":[]}"#,
            "Invalid params: session/new.cwd must be an absolute path, got 'relative/dir'",
        ),
        (
            r#"{"cwd":"","mcpServers":[]}"#,
            "Invalid params: session/new.cwd must not be empty",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"a","command":"x","args":[],"env":{"K":"V"}}]}"#,
            "Invalid params: session/new.mcpServers[0].env must be a JSON array",
        ),
        (
            r#"{"cwd":"/w","mcpServers":[{"name":"","command":"x","args":[],"env":[]}]}"#,
            "Invalid params: session/new.mcpServers[0].name must be a non-empty string",
        ),
    ];
    for (i, (params, message)) in cases.iter().enumerate() {
        h.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"session/new","params":{params}}}"#
        ));
        assert_eq!(
            h.take_lines(),
            [error_line(&i.to_string(), -32602, message)],
            "{params}"
        );
    }
    assert!(h.agent.requests_owed() == 0);
}

#[test]
fn mcp_http_and_sse_need_the_advertised_capability() {
    let mut config = agent_support::config();
    config.features.mcp_http = false;
    let mut h: Harness = Harness::with_config(config);
    h.initialize("{}");
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"http","name":"h","url":"http://x","headers":[]}]}}"#);
    assert_eq!(
        h.take_lines(),
        [error_line(
            "1",
            -32602,
            "Invalid params: session/new.mcpServers[0].type 'http' is not supported (mcpCapabilities.http is not advertised)"
        )]
    );
    h.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"sse","name":"s","url":"http://x","headers":[]}]}}"#);
    match h.take_events().as_slice() {
        [
            AgentEvent::PeerViolation(_),
            AgentEvent::NewSession { params, .. },
        ] => {
            let request = h.agent.new_session_request(*params).unwrap();
            assert!(matches!(request.mcp_servers[0], McpServer::Sse(_)))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_mcp_servers_is_an_empty_list_and_the_full_answer_is_written() {
    let mut h = ready();
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w"}}"#);
    let ticket = match h.take_events().as_slice() {
        [AgentEvent::NewSession { ticket, params }] => {
            let request = h.agent.new_session_request(*params).unwrap();
            assert!(request.mcp_servers.is_empty());
            *ticket
        }
        other => panic!("{other:?}"),
    };
    let result: NewSessionResponse = serde_json::from_str(r#"{"sessionId":"sess_1","modes":{"currentModeId":"workspace-write","availableModes":[{"id":"workspace-write","name":"Workspace write"}]}}"#).unwrap();
    h.agent.accept_new_session(ticket, &result).unwrap();
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess_1","modes":{"currentModeId":"workspace-write","availableModes":[{"id":"workspace-write","name":"Workspace write"}]}}}"#
        ]
    );
    assert_eq!(
        h.agent.accept_new_session_id(ticket, "again"),
        Err(UsageError::AlreadySettled)
    );
}

#[test]
fn a_rejected_session_new_answers_the_apps_error_and_leaves_nothing() {
    let mut h = ready();
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/missing","mcpServers":[]}}"#);
    let ticket = h.new_session_ticket();
    h.agent
        .respond_error(
            ticket,
            ErrorCode::INVALID_PARAMS,
            "Invalid params: session/new.cwd does not exist: '/missing'",
        )
        .unwrap();
    assert_eq!(
        h.take_lines(),
        [error_line(
            "1",
            -32602,
            "Invalid params: session/new.cwd does not exist: '/missing'"
        )]
    );
    assert!(h.agent.session_state("").is_none());
    assert_eq!(h.agent.requests_owed(), 0);
}

#[test]
fn session_ids_must_be_unique() {
    let mut h = ready();
    h.open_session("s1");
    h.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#,
    );
    let ticket = h.new_session_ticket();
    assert_eq!(
        h.agent.accept_new_session_id(ticket, "s1"),
        Err(UsageError::SessionExists)
    );
    h.agent.accept_new_session_id(ticket, "s2").unwrap();
}

#[test]
fn load_replays_history_before_its_answer_and_then_serves_prompts() {
    let mut h = ready();
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"old","cwd":"/w","mcpServers":[]}}"#);
    let ticket = match h.take_events().as_slice() {
        [
            AgentEvent::LoadSession {
                ticket,
                session,
                resume: false,
                ..
            },
        ] => {
            assert_eq!(session.as_str(), "old");
            *ticket
        }
        other => panic!("{other:?}"),
    };
    let past = RawUpdate::new(
        r#"{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}"#,
    )
    .unwrap();
    h.agent.send_update("old", &past).unwrap();
    // A prompt pipelined behind the load: the session is not usable yet.
    h.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"old","prompt":[{"type":"text","text":"x"}]}}"#);
    h.take_events();
    h.agent
        .accept_load(ticket, &serde_json::json!({"configOptions":[]}))
        .unwrap();
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"old","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}}}"#.to_string(),
            error_line("2", -32600, "session old is not active"),
            r#"{"jsonrpc":"2.0","id":1,"result":{"configOptions":[]}}"#.to_string(),
        ]
    );
    h.prompt(3, "old");
}

#[test]
fn load_not_found_uses_agentaos_text_and_load_needs_the_capability() {
    let mut h = ready();
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"gone","cwd":"/w","mcpServers":[]}}"#);
    let ticket = match h.take_events().as_slice() {
        [AgentEvent::LoadSession { ticket, .. }] => *ticket,
        other => panic!("{other:?}"),
    };
    h.agent.load_not_found(ticket).unwrap();
    assert_eq!(
        h.take_lines(),
        [error_line(
            "1",
            -32600,
            "session/load: Session 'gone' not found"
        )]
    );
    assert!(h.agent.session_state("gone").is_none());

    let mut config = agent_support::config();
    config.features.load_session = false;
    let mut h: Harness = Harness::with_config(config);
    h.initialize("{}");
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"gone","cwd":"/w","mcpServers":[]}}"#);
    assert_eq!(
        h.take_lines(),
        [error_line("1", -32601, "Method not found")]
    );
}

#[test]
fn set_mode_emits_current_mode_update_then_mode_id() {
    let mut h = ready();
    h.open_session("s1");
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"read-only"}}"#);
    let ticket = match h.take_events().as_slice() {
        [
            AgentEvent::Request {
                ticket,
                method,
                params,
                ..
            },
        ] => {
            let Some(ClientRequest::SetSessionMode(r)) = h.agent.request(method, *params) else {
                panic!("a set_mode request")
            };
            assert_eq!(method, "session/set_mode");
            assert_eq!(r.mode_id, "read-only");
            *ticket
        }
        other => panic!("{other:?}"),
    };
    h.agent.accept_mode(ticket, "read-only").unwrap();
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"current_mode_update","currentModeId":"read-only"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"modeId":"read-only"}}"#,
        ]
    );
}

#[test]
fn set_config_option_whitelist_and_config_id_rules() {
    let mut h = ready();
    h.open_session("s1");
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/set_config_option","params":{"sessionId":"s1","configId":"model","value":"openai/gpt","apiKey":"sk"}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/set_config_option","params":{"sessionId":"s1","configId":"temperature","value":"1"}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":3,"method":"_agentao.cn/set_model","params":{"sessionId":"s1","model":"m","provider":"p"}}"#);
    assert_eq!(
        h.take_lines(),
        [
            error_line(
                "1",
                -32602,
                "Invalid params: session/set_config_option: unexpected field(s) ['apiKey']; only ['configId', 'sessionId', 'value'] are accepted (credentials resolve server-side and never travel on the wire)"
            ),
            error_line(
                "2",
                -32600,
                "unknown configId 'temperature'; only 'model' is supported"
            ),
            error_line(
                "3",
                -32602,
                "Invalid params: _agentao.cn/set_model: unexpected field(s) ['provider']; only ['model', 'sessionId'] are accepted (model-only, secret-free)"
            ),
        ]
    );
    h.send(r#"{"jsonrpc":"2.0","id":4,"method":"_agentao.cn/set_model","params":{"sessionId":"s1","model":"fake-model"}}"#);
    let ticket = match h.take_events().last() {
        Some(AgentEvent::Request { ticket, .. }) => *ticket,
        other => panic!("{other:?}"),
    };
    h.agent
        .respond(ticket, &serde_json::json!({"model":"fake-model"}))
        .unwrap();
    assert_eq!(
        h.take_lines(),
        [r#"{"jsonrpc":"2.0","id":4,"result":{"model":"fake-model"}}"#]
    );
}

#[test]
fn the_busy_gate_refuses_configuration_during_a_turn() {
    let mut h = ready();
    h.open_session("s1");
    h.prompt(1, "s1");
    h.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"plan"}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":3,"method":"session/set_config_option","params":{"sessionId":"s1","configId":"model","value":"m"}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":4,"method":"_agentao.cn/set_model","params":{"sessionId":"s1","model":"m"}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":5,"method":"session/set_mode","params":{"sessionId":"zz","modeId":"plan"}}"#);
    assert_eq!(
        h.take_lines(),
        [
            error_line(
                "2",
                -32600,
                "session/set_mode rejected: session s1 has an active turn; retry after it completes"
            ),
            error_line(
                "3",
                -32600,
                "session/set_config_option rejected: session s1 has an active turn; retry after it completes"
            ),
            error_line(
                "4",
                -32600,
                "_agentao.cn/set_model rejected: session s1 has an active turn; retry after it completes"
            ),
            error_line("5", -32600, "unknown sessionId: zz"),
        ]
    );
    h.agent.end_turn("s1", StopReason::EndTurn).unwrap();
}

#[test]
fn unadvertised_v1_methods_and_unknown_methods_are_32601() {
    let mut h = ready();
    for (i, method) in [
        "authenticate",
        "logout",
        "session/list",
        "session/resume",
        "session/close",
        "session/delete",
        "nope",
        "_vendor/x",
    ]
    .iter()
    .enumerate()
    {
        h.send(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"{method}","params":{{"sessionId":"s","cwd":"/w","methodId":"m"}}}}"#));
        assert_eq!(
            h.take_lines(),
            [error_line(&i.to_string(), -32601, "Method not found")],
            "{method}"
        );
    }
    h.send(r#"{"jsonrpc":"2.0","method":"_vendor/notify","params":{}}"#);
    assert!(
        h.take_lines().is_empty(),
        "unknown notifications are ignored"
    );
}

#[test]
fn advertised_close_and_registered_extensions_reach_the_app() {
    let mut config = agent_support::config();
    config.features.session_close = true;
    assert!(config.serve_extension("_vendor/echo", "Echo params back."));
    let mut h: Harness = Harness::with_config(config);
    h.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#);
    let init = h.take_lines().remove(0);
    assert!(
        init.contains(r#""sessionCapabilities":{"close":{}}"#),
        "{init}"
    );
    assert!(
        init.contains(r#"{"method":"_vendor/echo","description":"Echo params back."}"#),
        "{init}"
    );
    h.take_events();
    h.open_session("s1");
    h.prompt(1, "s1");
    h.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/close","params":{"sessionId":"s1"}}"#);
    let events = h.take_events();
    let ticket = match events.as_slice() {
        [
            AgentEvent::Cancelled { .. },
            AgentEvent::Request { ticket, method, .. },
        ] => {
            assert_eq!(method, "session/close");
            *ticket
        }
        other => panic!("{other:?}"),
    };
    h.agent.respond(ticket, &serde_json::json!({})).unwrap();
    assert_eq!(h.agent.session_state("s1"), Some(SessionState::Closed));
    h.send(r#"{"jsonrpc":"2.0","id":3,"method":"_vendor/echo","params":{"a":1}}"#);
    let ticket = match h.take_events().as_slice() {
        [
            AgentEvent::Request {
                ticket,
                method,
                params,
                ..
            },
        ] => {
            assert!(
                h.agent.request(method, *params).is_none(),
                "an extension is not typed"
            );
            assert_eq!(
                (method.as_str(), h.agent.params(*params).unwrap()),
                ("_vendor/echo", r#"{"a":1}"#)
            );
            *ticket
        }
        other => panic!("{other:?}"),
    };
    h.agent
        .respond_error(
            ticket,
            ErrorCode::INTERNAL_ERROR,
            "Internal error: echo failed",
        )
        .unwrap();
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}"#.to_string(),
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#.to_string(),
            error_line("3", -32603, "Internal error: echo failed"),
        ]
    );
    h.send(r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"x"}]}}"#);
    assert_eq!(
        h.take_lines(),
        [error_line("4", -32600, "session s1 is not active")]
    );
}

#[test]
fn an_advertised_resume_opens_the_session_when_answered() {
    let mut config = agent_support::config();
    config.features.session_resume = true;
    let mut h: Harness = Harness::with_config(config);
    h.initialize("{}");
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"old","cwd":"/w","mcpServers":[]}}"#);
    let ticket = match h.take_events().as_slice() {
        [
            AgentEvent::LoadSession {
                ticket,
                resume: true,
                session,
                ..
            },
        ] => {
            assert_eq!(session.as_str(), "old");
            *ticket
        }
        other => panic!("{other:?}"),
    };
    h.agent.respond(ticket, &serde_json::json!({})).unwrap();
    assert_eq!(h.take_lines(), [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]);
    h.prompt(2, "old");
}

/// R-RPC-10: a handed-over request the application fails is answered `-32603 Internal
/// error: <its message>` through `fail_request`; a prompt is refused there (`fail_turn`).
#[test]
fn fail_request_answers_internal_error_with_the_applications_message() {
    let mut config = agent_support::config();
    assert!(config.serve_extension("_vendor/fails", "Always fails."));
    let mut h: Harness = Harness::with_config(config);
    h.initialize("{}");
    h.open_session("s1");
    h.send(r#"{"jsonrpc":"2.0","id":7,"method":"_vendor/fails","params":{}}"#);
    let ticket = match h.take_events().as_slice() {
        [AgentEvent::Request { ticket, .. }] => *ticket,
        other => panic!("{other:?}"),
    };
    h.agent.fail_request(ticket, "disk full").unwrap();
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error: disk full"}}"#
        ]
    );
    assert_eq!(
        h.agent.fail_request(ticket, "again"),
        Err(UsageError::AlreadySettled)
    );
    let prompt = h.prompt(8, "s1");
    assert_eq!(
        h.agent.fail_request(prompt, "no"),
        Err(UsageError::TurnInProgress)
    );
}
