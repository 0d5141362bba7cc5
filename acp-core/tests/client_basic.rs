//! The client connection, command by command, against a scripted agent: exact lines out,
//! exact events in.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

mod client_support;

use acp_core::Instant;
use acp_core::conn::client::{
    ClientEvent, ClientMethod, Failure, HandshakeError, NO_MCP_SERVERS, PermissionAnswer, Serves,
    Shows, TurnOutcome, UpdateContext,
};
use acp_core::machine::UsageError;
use acp_core::machine::handshake::Capabilities;
use acp_core::machine::turn::StopReason;
use client_support::Host;
use pretty_assertions::assert_eq;

#[test]
fn initialize_sends_client_info_and_the_served_capabilities() {
    let mut host = Host::new(Serves::NOTHING);
    assert_eq!(
        host.conn.initialize(Instant(0)),
        Ok(acp_core::machine::RequestId(0))
    );
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"acp-test","version":"0.1.0"}}}"#
        ]
    );

    let mut host = Host::new(Serves::EVERYTHING);
    host.conn.initialize(Instant(0)).unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,"elicitation":{"form":{}},"_meta":{"_agentao.cn/extensions":[{"method":"_agentao.cn/ask_user"}]}},"clientInfo":{"name":"acp-test","version":"0.1.0"}}}"#
        ]
    );
}

#[test]
fn initialize_advertises_the_update_kinds_the_application_shows() {
    let mut config = client_support::config(Serves::NOTHING);
    config.shows = Shows::EVERYTHING;
    let mut host: Host = Host::with_config(config);
    host.conn.initialize(Instant(0)).unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"notices":{},"compaction":{}},"subagents":{},"plan":{}},"clientInfo":{"name":"acp-test","version":"0.1.0"}}}"#
        ]
    );

    // Each one alone, and `session` only when one of its members is on.
    let mut config = client_support::config(Serves::NOTHING);
    config.shows = Shows {
        compaction: true,
        ..Shows::NOTHING
    };
    let mut host: Host = Host::with_config(config);
    host.conn.initialize(Instant(0)).unwrap();
    let sent = host.sent();
    assert!(
        sent[0].contains(r#""terminal":false,"session":{"compaction":{}}},"#),
        "{sent:?}"
    );
}

#[test]
fn initialize_records_the_agents_capabilities() {
    let mut host = Host::new(Serves::NOTHING);
    host.conn.initialize(Instant(0)).unwrap();
    host.sent();
    host.agent(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true},"sessionCapabilities":{"resume":{}}},"_meta":{"_agentao.cn/extensions":[{"method":"_agentao.cn/ask_user","description":"x"},"_agentao.cn/set_model"]}}}"#);
    let events = host.events();
    let [
        ClientEvent::Initialized {
            request,
            agent,
            features,
            result,
            decoded,
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(request.0, 0);
    assert_eq!(
        *agent,
        Capabilities::LOAD_SESSION
            .union(Capabilities::PROMPT_IMAGE)
            .union(Capabilities::ASK_USER)
            .union(Capabilities::SET_MODEL)
    );
    assert!(features.resume && !features.list && !features.close);
    assert!(
        result
            .as_json()
            .unwrap()
            .starts_with(r#"{"protocolVersion":1"#)
    );
    assert!(decoded.as_ref().unwrap().agent_capabilities.load_session);
    assert!(host.conn.is_initialized());
    assert_eq!(host.conn.agent_capabilities(), *agent);
}

#[test]
fn nothing_is_sent_before_the_initialize_answer() {
    let mut host = Host::new(Serves::NOTHING);
    assert_eq!(
        host.conn.new_session(Instant(0), "/tmp", NO_MCP_SERVERS),
        Err(UsageError::NotInitialized)
    );
    host.conn.initialize(Instant(0)).unwrap();
    assert_eq!(
        host.conn.initialize(Instant(0)),
        Err(UsageError::TooManyInFlight)
    );
    assert_eq!(
        host.conn.new_session(Instant(0), "/tmp", NO_MCP_SERVERS),
        Err(UsageError::NotInitialized)
    );
    assert_eq!(
        host.conn.prompt_text(Instant(0), "s1", "hi"),
        Err(UsageError::NotInitialized)
    );
    assert_eq!(host.sent().len(), 1, "only initialize went out");
}

#[test]
fn an_unsupported_protocol_version_fails_the_handshake_clearly() {
    let mut host = Host::new(Serves::NOTHING);
    host.conn.initialize(Instant(0)).unwrap();
    host.sent();
    host.agent(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"agentCapabilities":{}}}"#);
    let events = host.events();
    let [ClientEvent::HandshakeFailed { error, .. }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(*error, HandshakeError::UnsupportedVersion(2));
    assert_eq!(
        error.to_string(),
        "the agent answered initialize with protocolVersion 2; this client speaks only protocolVersion 1"
    );
    assert!(host.conn.handshake_failed());
    assert_eq!(
        host.conn.new_session(Instant(1), "/tmp", NO_MCP_SERVERS),
        Err(UsageError::HandshakeFailed)
    );
    assert_eq!(
        UsageError::HandshakeFailed.to_string(),
        "the initialize handshake failed"
    );
}

#[test]
fn a_missing_protocol_version_or_an_error_fails_the_handshake() {
    let mut host = Host::new(Serves::NOTHING);
    host.conn.initialize(Instant(0)).unwrap();
    host.agent(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"1"}}"#);
    let events = host.events();
    assert!(matches!(
        events.as_slice(),
        [ClientEvent::HandshakeFailed {
            error: HandshakeError::MissingVersion,
            ..
        }]
    ));
    assert_eq!(
        HandshakeError::MissingVersion.to_string(),
        "the agent's initialize result has no integer protocolVersion"
    );

    let mut host = Host::new(Serves::NOTHING);
    host.conn.initialize(Instant(0)).unwrap();
    host.agent(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"boom"}}"#);
    let events = host.events();
    let [ClientEvent::HandshakeFailed { error, .. }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(
        error.to_string(),
        "initialize failed: JSON-RPC error -32603: boom"
    );
}

#[test]
fn new_session_always_sends_mcp_servers_and_opens_the_session() {
    let mut host = Host::ready(Serves::NOTHING, "{}");
    let id = host
        .conn
        .new_session(Instant(0), "/home/user/p", NO_MCP_SERVERS)
        .unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/user/p","mcpServers":[]}}"#
        ]
    );
    host.agent(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1","modes":null}}"#);
    let events = host.events();
    let [
        ClientEvent::SessionOpened {
            request,
            method,
            session,
            result,
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(
        (*request, *method, session.as_str()),
        (id, ClientMethod::NewSession, "s-1")
    );
    assert_eq!(
        result.as_json(),
        Some(r#"{"sessionId":"s-1","modes":null}"#)
    );
    assert!(host.conn.session_state("s-1").is_some());
}

#[test]
fn a_failed_session_new_opens_nothing() {
    let mut host = Host::ready(Serves::NOTHING, "{}");
    host.conn
        .new_session(Instant(0), "/home/user/p", NO_MCP_SERVERS)
        .unwrap();
    host.agent(
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"cwd must be absolute"}}"#,
    );
    let events = host.events();
    let [
        ClientEvent::Failed {
            method: ClientMethod::NewSession,
            failure,
            ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(
        failure.to_string(),
        "JSON-RPC error -32602: cwd must be absolute"
    );
    assert_eq!(host.conn.sessions().count(), 0);

    // A result without sessionId is a bad result.
    host.conn
        .new_session(Instant(0), "/home/user/p", NO_MCP_SERVERS)
        .unwrap();
    host.agent(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    let events = host.events();
    assert!(matches!(
        events.as_slice(),
        [ClientEvent::Failed {
            failure: Failure::BadResult,
            ..
        }]
    ));
}

#[test]
fn load_and_resume_are_gated_on_the_agents_capabilities() {
    let mut host = Host::ready(Serves::NOTHING, "{}");
    assert_eq!(
        host.conn
            .load_session(Instant(0), "old", "/w", NO_MCP_SERVERS),
        Err(UsageError::NotAdvertised {
            method: "session/load",
            needs: "agentCapabilities.loadSession"
        })
    );
    assert_eq!(
        host.conn
            .resume_session(Instant(0), "old", "/w", NO_MCP_SERVERS),
        Err(UsageError::NotAdvertised {
            method: "session/resume",
            needs: "agentCapabilities.sessionCapabilities.resume"
        })
    );
    assert!(host.sent().is_empty());

    let mut host = Host::ready(
        Serves::NOTHING,
        r#"{"loadSession":true,"sessionCapabilities":{"resume":{}}}"#,
    );
    let id = host
        .conn
        .load_session(Instant(0), "old", "/w", NO_MCP_SERVERS)
        .unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"old","cwd":"/w","mcpServers":[]}}"#
        ]
    );
    host.agent(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"old","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}}}"#);
    host.agent(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
        id.0
    ));
    let events = host.events();
    assert!(
        matches!(
            events.as_slice(),
            [
                ClientEvent::Update {
                    context: UpdateContext::Replay,
                    ..
                },
                ClientEvent::SessionOpened {
                    method: ClientMethod::LoadSession,
                    ..
                }
            ]
        ),
        "{events:?}"
    );

    host.conn
        .resume_session(Instant(0), "other", "/w", NO_MCP_SERVERS)
        .unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":"other","cwd":"/w","mcpServers":[]}}"#
        ]
    );
    host.agent(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    let events = host.events();
    let [
        ClientEvent::SessionOpened {
            session,
            method: ClientMethod::ResumeSession,
            ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(session.as_str(), "other");
}

#[test]
fn a_prompt_streams_updates_and_ends_with_the_stop_reason() {
    let mut host = Host::with_session(Serves::NOTHING);
    let id = host.conn.prompt_text(Instant(0), "s1", "hello").unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hello"}]}}"#
        ]
    );
    assert_eq!(
        host.conn.prompt_text(Instant(0), "s1", "again"),
        Err(UsageError::TurnInProgress)
    );
    host.agent(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}}"#);
    host.agent(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#);
    let events = host.events();
    let [
        ClientEvent::Update {
            session,
            context,
            kind,
            params,
            decoded,
        },
        ClientEvent::TurnEnded {
            request, outcome, ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(
        (session.as_str(), *context, kind.as_str()),
        ("s1", UpdateContext::Turn, "agent_message_chunk")
    );
    assert!(params.as_json().unwrap().contains(r#""text":"Hi""#));
    assert_eq!(decoded.as_ref().unwrap().session_id, "s1");
    assert_eq!(*request, id);
    assert_eq!(
        *outcome,
        TurnOutcome::Stopped {
            stop: StopReason::EndTurn,
            rewritten: false
        }
    );
    // The session takes another prompt.
    host.conn.prompt_text(Instant(0), "s1", "again").unwrap();
}

#[test]
fn updates_out_of_place_are_delivered_flagged() {
    let mut host = Host::with_session(Serves::NOTHING);
    let update = |sid: &str, kind: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{sid}","update":{{"sessionUpdate":"{kind}"}}}}}}"#
        )
    };
    host.agent(&update("s1", "agent_message_chunk"));
    host.agent(&update("s1", "available_commands_update"));
    host.agent(&update("nope", "agent_message_chunk"));
    host.agent(r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{}}}"#);
    let contexts: Vec<_> = host
        .events()
        .into_iter()
        .map(|e| match e {
            ClientEvent::Update { context, .. } => (context, context.is_flagged()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        contexts,
        [
            (UpdateContext::AfterTurn, true),
            (UpdateContext::Idle, false),
            (UpdateContext::UnknownSession, true),
            (UpdateContext::UnknownSession, true)
        ]
    );
}

#[test]
fn a_permission_request_is_an_event_answered_once() {
    let mut host = Host::with_session(Serves::NOTHING);
    host.conn.prompt_text(Instant(0), "s1", "go").unwrap();
    host.sent();
    host.agent(r#"{"jsonrpc":"2.0","id":"srv_1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":[{"optionId":"allow_once","name":"Allow","kind":"allow_once"}]}}"#);
    let events = host.events();
    let [ClientEvent::Request(request)] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(request.name.as_str(), "session/request_permission");
    assert_eq!(request.session.as_ref().unwrap().as_str(), "s1");
    assert!(request.decoded.is_some());
    host.conn
        .respond_permission(
            Instant(1),
            request.ticket,
            PermissionAnswer::Selected("allow_once"),
        )
        .unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":"srv_1","result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}"#
        ]
    );
    assert_eq!(
        host.conn
            .respond_permission(Instant(1), request.ticket, PermissionAnswer::Cancelled),
        Err(UsageError::AlreadySettled)
    );
    assert!(host.sent().is_empty());
}

#[test]
fn set_mode_and_config_options_pass_the_busy_gate() {
    let mut host = Host::with_session(Serves::NOTHING);
    let id = host.conn.set_mode(Instant(0), "s1", "plan").unwrap();
    host.conn
        .set_config_option(Instant(0), "s1", "model", "gpt")
        .unwrap();
    assert_eq!(
        host.sent(),
        [
            r#"{"jsonrpc":"2.0","id":2,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"plan"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/set_config_option","params":{"sessionId":"s1","configId":"model","value":"gpt"}}"#
        ]
    );
    host.agent(r#"{"jsonrpc":"2.0","id":2,"result":{"modeId":"plan"}}"#);
    let events = host.events();
    let [
        ClientEvent::Answered {
            request,
            method: ClientMethod::SetMode,
            result,
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(
        (*request, result.as_json()),
        (id, Some(r#"{"modeId":"plan"}"#))
    );

    host.conn.prompt_text(Instant(0), "s1", "x").unwrap();
    assert_eq!(
        host.conn.set_mode(Instant(0), "s1", "plan"),
        Err(UsageError::TurnInProgress)
    );
    assert_eq!(
        host.conn.set_config_option(Instant(0), "s1", "model", "x"),
        Err(UsageError::TurnInProgress)
    );
    assert_eq!(
        host.conn.set_mode(Instant(0), "nope", "plan"),
        Err(UsageError::UnknownSession)
    );
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "drain poll_event() until None before the next handle_* call")]
fn debug_builds_catch_an_input_while_events_are_queued() {
    let mut host = Host::ready(Serves::NOTHING, "{}");
    host.conn
        .new_session(Instant(0), "/w", NO_MCP_SERVERS)
        .unwrap();
    // An id too long to track: one line, two events (the violation, then the failure).
    host.agent(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"sessionId":"{}"}}}}"#,
        "x".repeat(200)
    ));
    assert_eq!(
        host.conn.poll_event(),
        Some(ClientEvent::PeerViolation(
            acp_core::conn::client::AgentViolation::BadSessionId
        ))
    );
    host.conn.handle_timeout(Instant(1));
}

#[test]
fn a_session_id_too_long_to_track_fails_the_session_new() {
    let mut host = Host::ready(Serves::NOTHING, "{}");
    host.conn
        .new_session(Instant(0), "/w", NO_MCP_SERVERS)
        .unwrap();
    host.sent();
    host.agent(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"sessionId":"{}"}}}}"#,
        "x".repeat(200)
    ));
    assert_eq!(
        host.events(),
        [
            ClientEvent::PeerViolation(acp_core::conn::client::AgentViolation::BadSessionId),
            ClientEvent::Failed {
                request: acp_core::machine::RequestId(1),
                method: ClientMethod::NewSession,
                failure: Failure::BadResult
            }
        ]
    );
    assert_eq!(host.conn.sessions().count(), 0);

    // The agent names a second session with the id of an open one.
    host.open("s1");
    host.conn
        .new_session(Instant(0), "/w", NO_MCP_SERVERS)
        .unwrap();
    host.agent(r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s1"}}"#);
    let events = host.events();
    assert!(
        matches!(
            events.as_slice(),
            [
                ClientEvent::PeerViolation(acp_core::conn::client::AgentViolation::BadSessionId),
                ClientEvent::Failed {
                    failure: Failure::BadResult,
                    ..
                }
            ]
        ),
        "{events:?}"
    );
    assert_eq!(host.conn.sessions().count(), 1);
}

#[test]
fn a_null_result_reads_as_empty_where_every_member_is_optional() {
    // R-RPC-5: some SDKs answer `null` where the schema has `{}`.
    let mut host = Host::ready(
        Serves::NOTHING,
        r#"{"loadSession":true,"sessionCapabilities":{"list":{},"resume":{},"close":{},"delete":{}},"auth":{"logout":{}}}"#,
    );
    host.open("s1");
    let answer_null = |host: &mut Host, id: acp_core::machine::RequestId| {
        host.sent();
        host.agent(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":null}}"#,
            id.0
        ));
        let events = host.events();
        match events.as_slice() {
            [
                ClientEvent::Answered {
                    request, result, ..
                },
            ] => {
                assert_eq!(*request, id);
                result.as_json().map(str::to_owned)
            }
            other => panic!("{other:?}"),
        }
    };
    let id = host.conn.set_mode(Instant(0), "s1", "plan").unwrap();
    assert_eq!(answer_null(&mut host, id).as_deref(), Some("{}"));
    for (method, params) in [
        ("session/close", r#"{"sessionId":"s1"}"#),
        ("session/delete", r#"{"sessionId":"old"}"#),
        ("logout", "{}"),
    ] {
        let params: serde_json::Value = serde_json::from_str(params).unwrap();
        let id = host.conn.request(Instant(0), method, &params).unwrap();
        assert_eq!(
            answer_null(&mut host, id).as_deref(),
            Some("{}"),
            "{method}"
        );
    }
    // `session/list` needs `sessions`: its `null` stays as sent, for the application to refuse.
    let id = host
        .conn
        .request(Instant(0), "session/list", &serde_json::json!({}))
        .unwrap();
    assert_eq!(answer_null(&mut host, id).as_deref(), Some("null"));

    // A session opened by `session/load` answered `null` opens with `{}` as its result.
    let id = host
        .conn
        .load_session(Instant(0), "old", "/w", NO_MCP_SERVERS)
        .unwrap();
    host.sent();
    host.agent(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":null}}"#,
        id.0
    ));
    let events = host.events();
    let [
        ClientEvent::SessionOpened {
            session, result, ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!((session.as_str(), result.as_json()), ("old", Some("{}")));
}

#[test]
fn empty_result_methods_match_the_method_table() {
    use acp_core::schema::methods::{Direction, Method};
    for method in Method::ALL {
        if method.sent_by(Direction::ClientToAgent) && !method.is_notification() {
            assert_eq!(
                acp_core::conn::client::empty_result(method.name()),
                method.empty_result(),
                "{}",
                method.name()
            );
        }
    }
}
