//! Authentication on the agent side (R-AUTH-1 … R-AUTH-5): `authMethods` in the `initialize`
//! answer, the `-32000` gate on sessions, `authenticate` and `logout` handed to the
//! application, and plain ACP as `AgentConfig::new`'s default.
#![cfg(feature = "std")]

mod agent_support;
mod schema_common;

use acp_core::conn::Growable;
use acp_core::conn::agent::{
    AUTH_REQUIRED_MESSAGE, AgentConfig, AgentEvent, AgentInfo, AuthKind, AuthMethodSpec,
    AuthRefused, Dialect,
};
use acp_core::machine::{Ticket, UsageError};
use acp_core::wire::ErrorCode;
use agent_support::Harness;

const NEW: &str = r#"{"jsonrpc":"2.0","id":"n","method":"session/new","params":{"cwd":"/home/user/p","mcpServers":[]}}"#;
const REFUSED: &str =
    r#"{"jsonrpc":"2.0","id":"n","error":{"code":-32000,"message":"Authentication required"}}"#;

/// A plain ACP agent offering an `agent` and a `terminal` method, requiring auth, serving
/// logout, load, list and resume.
fn config() -> AgentConfig {
    let mut config = AgentConfig::new(AgentInfo::new("a", "A", "1")).with_auth_required(true);
    config
        .offer_auth(&AuthMethodSpec::agent("key", "API key").description("From the environment"))
        .unwrap();
    config
        .offer_auth(
            &AuthMethodSpec::terminal("tui", "Log in")
                .args(&["--login"])
                .env(&[("MODE", "tui")]),
        )
        .unwrap();
    config.features.logout = true;
    config.features.load_session = true;
    config.features.session_list = true;
    config.features.session_resume = true;
    config
}

fn harness(capabilities: &str) -> Harness<Growable> {
    let mut h: Harness = Harness::with_config(config());
    h.initialize(capabilities);
    h
}

fn initialize_result(h: &mut Harness<Growable>, capabilities: &str) -> String {
    h.send(&format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{capabilities}}}}}"#
    ));
    h.take_events();
    let lines = h.take_lines();
    assert_eq!(lines.len(), 1);
    lines[0].clone()
}

fn authenticate(h: &mut Harness<Growable>, id: u32, method: &str) -> Option<Ticket> {
    h.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"authenticate","params":{{"methodId":"{method}"}}}}"#
    ));
    match h.take_events().as_slice() {
        [
            AgentEvent::Authenticate {
                ticket, method_id, ..
            },
        ] => {
            assert_eq!(method_id, method);
            Some(*ticket)
        }
        _ => None,
    }
}

fn logout(h: &mut Harness<Growable>, id: u32) -> Ticket {
    h.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"logout","params":{{}}}}"#
    ));
    match h.take_events().as_slice() {
        [AgentEvent::Logout { ticket, .. }] => *ticket,
        other => panic!("{other:?} / {:?}", h.take_lines()),
    }
}

/// R-AUTH-1: both forms in the schema's shape; R-AUTH-5: `auth.logout` advertised; R-INIT-5:
/// a plain ACP agent sends no `_meta`.
#[test]
fn initialize_lists_both_forms_to_a_terminal_capable_client() {
    let mut h: Harness = Harness::with_config(config());
    assert_eq!(
        initialize_result(&mut h, r#"{"auth":{"terminal":true}}"#),
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"list":{},"resume":{}},"auth":{"logout":{}}},"authMethods":[{"id":"key","name":"API key","description":"From the environment"},{"type":"terminal","id":"tui","name":"Log in","args":["--login"],"env":{"MODE":"tui"}}],"agentInfo":{"name":"a","title":"A","version":"1"}}}"#
    );
}

/// R-AUTH-2: the terminal method is hidden from a client without `auth.terminal`, and a
/// repeated `initialize` follows its own capabilities.
#[test]
fn terminal_method_hidden_without_the_capability() {
    let mut h: Harness = Harness::with_config(config());
    let methods = |line: &str| {
        let start = line.find("\"authMethods\":").unwrap();
        let end = line.find(",\"agentInfo\"").unwrap();
        line[start..end].to_owned()
    };
    let with = initialize_result(&mut h, r#"{"auth":{"terminal":true}}"#);
    assert!(methods(&with).contains("\"tui\""));
    for caps in [
        "{}",
        r#"{"auth":{}}"#,
        r#"{"auth":{"terminal":false}}"#,
        r#"{"auth":{"terminal":"yes"}}"#,
    ] {
        assert_eq!(
            methods(&initialize_result(&mut h, caps)),
            r#""authMethods":[{"id":"key","name":"API key","description":"From the environment"}]"#,
            "{caps}"
        );
    }
}

/// R-AUTH-3: `session/new`, `load`, `resume` and `list` get `-32000 Authentication
/// required` (exact) before authentication; no session, no event.
#[test]
fn sessions_before_authentication_are_refused_32000_exactly() {
    let mut h = harness("{}");
    assert_eq!(AUTH_REQUIRED_MESSAGE, "Authentication required");
    h.send(NEW);
    h.send(r#"{"jsonrpc":"2.0","id":"l","method":"session/load","params":{"sessionId":"s1","cwd":"/home/user/p","mcpServers":[]}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":"r","method":"session/resume","params":{"sessionId":"s1","cwd":"/home/user/p"}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":"ls","method":"session/list","params":{}}"#);
    let refused = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","error":{{"code":-32000,"message":"Authentication required"}}}}"#
        )
    };
    assert_eq!(
        h.take_lines(),
        [refused("n"), refused("l"), refused("r"), refused("ls")]
    );
    assert!(
        h.take_events()
            .iter()
            .all(|e| matches!(e, AgentEvent::PeerViolation(_)))
    );
    assert_eq!(h.agent.session_state("s1"), None);
    assert_eq!(h.agent.requests_owed(), 0);
    assert!(!h.agent.is_authenticated());
}

/// R-AUTH-3: the gate comes before params are checked (a relative cwd is still `-32000`),
/// and after the advertised check (`session/delete` not advertised stays `-32601`).
#[test]
fn the_gate_sits_between_the_advertised_check_and_params() {
    let mut h = harness("{}");
    h.send(r#"{"jsonrpc":"2.0","id":"n","method":"session/new","params":{"cwd":"relative"}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":"d","method":"session/delete","params":{"sessionId":"s"}}"#);
    assert_eq!(
        h.take_lines(),
        [
            REFUSED,
            r#"{"jsonrpc":"2.0","id":"d","error":{"code":-32601,"message":"Method not found"}}"#
        ]
    );
}

/// R-AUTH-4: a successful answer flips the connection to authenticated; sessions follow.
#[test]
fn accepted_authenticate_opens_sessions() {
    let mut h = harness("{}");
    let ticket = authenticate(&mut h, 1, "key").expect("handed over");
    assert!(!h.agent.is_authenticated(), "not before the answer");
    h.agent.accept_authenticate(ticket).unwrap();
    assert_eq!(h.take_lines(), [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]);
    assert!(h.agent.is_authenticated());
    h.open_session("s1");
}

/// R-AUTH-4: an error answer changes nothing.
#[test]
fn refused_authenticate_keeps_sessions_refused() {
    let mut h = harness("{}");
    let ticket = authenticate(&mut h, 1, "key").unwrap();
    h.agent
        .respond_error(ticket, ErrorCode::AUTH_REQUIRED, "Invalid API key")
        .unwrap();
    assert_eq!(
        h.take_lines(),
        [r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Invalid API key"}}"#]
    );
    assert!(!h.agent.is_authenticated());
    h.send(NEW);
    assert_eq!(h.take_lines(), [REFUSED]);
}

/// R-AUTH-4: authenticating twice is handed over twice; both answers succeed and the
/// connection stays authenticated. `respond` with a result counts as acceptance too.
#[test]
fn authenticate_twice() {
    let mut h = harness("{}");
    let first = authenticate(&mut h, 1, "key").unwrap();
    let second = authenticate(&mut h, 2, "key").unwrap();
    assert_ne!(first, second);
    h.agent.accept_authenticate(first).unwrap();
    assert!(h.agent.is_authenticated());
    h.agent
        .respond(second, &serde_json::json!({"_meta": {"account": "b"}}))
        .unwrap();
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"_meta":{"account":"b"}}}"#
        ]
    );
    assert!(h.agent.is_authenticated());
    assert_eq!(
        h.agent.accept_authenticate(first),
        Err(UsageError::AlreadySettled)
    );
    h.open_session("s1");
}

/// R-AUTH-4: an id not offered, and a terminal method (offered or hidden), are `-32602`
/// with exact messages; nothing reaches the application.
#[test]
fn authenticate_with_an_unknown_or_terminal_method_is_32602() {
    let mut h = harness("{}");
    assert_eq!(authenticate(&mut h, 1, "nope"), None);
    assert_eq!(authenticate(&mut h, 2, "tui"), None);
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: authenticate.methodId 'nope' is not one of the advertised authMethods"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: authenticate.methodId 'tui' is not one of the advertised authMethods"}}"#,
        ]
    );
    let mut h = harness(r#"{"auth":{"terminal":true}}"#);
    assert_eq!(authenticate(&mut h, 3, "tui"), None);
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: authenticate.methodId 'tui' is a terminal auth method: the client runs it, it is not passed to authenticate"}}"#
        ]
    );
    h.send(r#"{"jsonrpc":"2.0","id":4,"method":"authenticate","params":{"methodId":7}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":5,"method":"authenticate","params":{}}"#);
    let lines = h.take_lines();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with(
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: authenticate.methodId"#
        ),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with(
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: authenticate.methodId"#
        ),
        "{lines:?}"
    );
    assert!(
        h.take_events()
            .iter()
            .all(|e| matches!(e, AgentEvent::PeerViolation(_)))
    );
}

/// R-AUTH-5: a successful logout flips back: new sessions are refused again, the open one
/// goes on.
#[test]
fn logout_flips_back_and_open_sessions_go_on() {
    let mut h = harness("{}");
    let ticket = authenticate(&mut h, 1, "key").unwrap();
    h.agent.accept_authenticate(ticket).unwrap();
    h.take_lines();
    h.open_session("s1");
    let ticket = logout(&mut h, 2);
    assert_eq!(
        h.agent.accept_authenticate(ticket),
        Err(UsageError::WrongKind)
    );
    h.agent.accept_logout(ticket).unwrap();
    assert_eq!(h.take_lines(), [r#"{"jsonrpc":"2.0","id":2,"result":{}}"#]);
    assert!(!h.agent.is_authenticated());
    h.send(NEW);
    assert_eq!(h.take_lines(), [REFUSED]);
    h.take_events();
    h.prompt(3, "s1");
}

/// R-AUTH-5: a refused logout keeps the connection authenticated.
#[test]
fn refused_logout_changes_nothing() {
    let mut h = harness("{}");
    h.agent.set_authenticated(true);
    let ticket = logout(&mut h, 1);
    h.agent
        .respond_error(
            ticket,
            ErrorCode::INTERNAL_ERROR,
            "Internal error: keyring locked",
        )
        .unwrap();
    assert!(h.agent.is_authenticated());
    h.take_lines();
    h.open_session("s1");
}

/// R-AUTH-5, R-RPC-7: without `auth.logout` (and without auth methods, `authenticate`) the
/// methods are `-32601`, and the answer has no `auth` capability.
#[test]
fn logout_without_the_capability_is_32601() {
    let mut config = AgentConfig::new(AgentInfo::new("a", "A", "1"));
    config
        .offer_auth(&AuthMethodSpec::agent("key", "API key"))
        .unwrap();
    let mut h: Harness = Harness::with_config(config);
    let init = initialize_result(&mut h, "{}");
    assert!(!init.contains("\"auth\""), "{init}");
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"logout","params":{}}"#);
    h.send(r#"{"jsonrpc":"2.0","id":2,"method":"logout"}"#);
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}"#
        ]
    );
    // Not required: sessions are served before any authenticate.
    h.take_events();
    h.open_session("s1");

    let mut h: Harness = Harness::with_config(AgentConfig::new(AgentInfo::new("a", "A", "1")));
    h.initialize("{}");
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"key"}}"#);
    assert_eq!(
        h.take_lines(),
        [r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#]
    );
}

/// R-AUTH-5: `logout` without params (all optional) is served.
#[test]
fn logout_without_params_is_served() {
    let mut h = harness("{}");
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"logout"}"#);
    assert!(matches!(
        h.take_events().as_slice(),
        [AgentEvent::Logout { .. }]
    ));
}

/// R-AUTH-3: an agent that starts logged in serves sessions at once.
#[test]
fn set_authenticated_opens_the_gate() {
    let mut h = harness("{}");
    h.agent.set_authenticated(true);
    h.open_session("s1");
    h.agent.set_authenticated(false);
    h.send(NEW);
    assert_eq!(h.take_lines(), [REFUSED]);
}

/// R-RPC-6: more authenticate and logout requests open at once than the table holds are
/// `-32603`; settled ones free their row.
#[test]
fn too_many_open_auth_requests_are_32603() {
    let mut h = harness("{}");
    let tickets: Vec<Ticket> = (1..=4)
        .map(|id| authenticate(&mut h, id, "key").unwrap())
        .collect();
    assert_eq!(authenticate(&mut h, 5, "key"), None);
    assert_eq!(
        h.take_lines(),
        [
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"Internal error: too many requests in flight (limit 4)"}}"#
        ]
    );
    h.agent.accept_authenticate(tickets[0]).unwrap();
    assert!(authenticate(&mut h, 6, "key").is_some());
}

/// R-AUTH-1: the configuration refuses what it cannot offer, and reads back what it holds.
#[test]
fn offer_auth_refusals_and_read_back() {
    let mut config = AgentConfig::new(AgentInfo::new("a", "A", "1"));
    let long = "k".repeat(65);
    assert_eq!(
        config.offer_auth(&AuthMethodSpec::agent(&long, "x")),
        Err(AuthRefused::Invalid)
    );
    for id in ["a", "b", "c", "d"] {
        config.offer_auth(&AuthMethodSpec::agent(id, "x")).unwrap();
    }
    assert_eq!(
        config.offer_auth(&AuthMethodSpec::agent("e", "x")),
        Err(AuthRefused::Full)
    );
    let config = self::config();
    let tui = config.auth_methods.find("tui").unwrap();
    assert_eq!(tui.kind, AuthKind::Terminal);
    assert_eq!(tui.args().collect::<Vec<_>>(), ["--login"]);
    assert_eq!(tui.env().collect::<Vec<_>>(), [("MODE", "tui")]);
    assert_eq!(
        config.auth_methods.find("key").unwrap().description,
        Some("From the environment")
    );
}

/// R-INIT-5, R-INIT-8: `AgentConfig::new` is plain ACP (no `_meta`, no Agentao extension
/// served); `AgentConfig::agentao` turns Agentao's extensions and dialect on in one call.
#[test]
fn new_is_plain_acp_and_agentao_opts_in() {
    let plain = AgentConfig::new(AgentInfo::new("a", "A", "1"));
    assert_eq!(plain.dialect, Dialect::Acp);
    assert!(!plain.features.ask_user && !plain.features.set_model);
    let mut h: Harness = Harness::with_config(plain);
    let init = initialize_result(&mut h, "{}");
    assert!(!init.contains("_meta"), "{init}");
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"_agentao.cn/set_model","params":{"sessionId":"s","model":"m"}}"#);
    assert_eq!(
        h.take_lines(),
        [r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#]
    );

    let agentao = AgentConfig::agentao(AgentInfo::new("a", "A", "1"));
    assert_eq!(agentao.dialect, Dialect::Agentao);
    assert!(agentao.features.ask_user && agentao.features.set_model);
    let mut h: Harness = Harness::with_config(agentao);
    let init = initialize_result(&mut h, "{}");
    assert!(
        init.contains(r#""_meta":{"_agentao.cn/extensions":[{"method":"_agentao.cn/ask_user""#),
        "{init}"
    );
}

/// R-AUTH-1, R-AUTH-5: the `initialize` answer with both forms and `auth.logout` is a valid
/// `InitializeResponse` of the official schema, and reads back through our own types.
#[test]
fn the_initialize_answer_validates_against_the_official_schema() {
    let mut h = Harness::with_config(config());
    let line = initialize_result(&mut h, r#"{"auth":{"terminal":true}}"#);
    let message: serde_json::Value = serde_json::from_str(&line).unwrap();
    let result = &message["result"];
    let decoded: acp_core::schema::InitializeResponse =
        serde_json::from_value(result.clone()).unwrap();
    assert_eq!(decoded.auth_methods.len(), 2);
    assert!(decoded.agent_capabilities.can_logout());
    let Some(root) = schema_common::schema() else {
        return;
    };
    let validator = jsonschema::validator_for(&serde_json::json!({
        "$schema": root["$schema"], "$defs": root["$defs"], "$ref": "#/$defs/InitializeResponse",
    }))
    .expect("the official schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(result)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}
