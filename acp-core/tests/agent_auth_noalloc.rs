//! Authentication over fixed storage, in every build (R-AUTH-1 … R-AUTH-5): run it without an
//! allocator too (`cargo test -p acp-core --no-default-features --test agent_auth_noalloc`).
//! The refusals are the same texts as with `alloc` (R-RPC-10).

use acp_core::Instant;
use acp_core::conn::agent::{
    AgentConfig, AgentConnection, AgentEvent, AgentInfo, AuthMethodSpec, Fixed,
};

type Small = Fixed<1024, 4096, 2, 4, 8>;

fn agent() -> AgentConnection<Small> {
    let mut config = AgentConfig::new(AgentInfo::new("tiny", "Tiny", "1")).with_auth_required(true);
    config
        .offer_auth(&AuthMethodSpec::agent("key", "API key"))
        .unwrap();
    config.features.logout = true;
    AgentConnection::new(config)
}

/// Feeds one line, drains events into `events`, returns the output lines.
fn step(
    agent: &mut AgentConnection<Small>,
    line: &str,
    events: &mut Vec<AgentEvent>,
) -> Vec<String> {
    let input = format!("{line}\n");
    assert_eq!(
        agent.handle_bytes(Instant(0), input.as_bytes()),
        input.len()
    );
    while let Some(event) = agent.poll_event() {
        events.push(event);
    }
    let text = String::from_utf8(agent.poll_transmit().to_vec()).unwrap();
    agent.transmitted(text.len());
    text.lines().map(String::from).collect()
}

/// R-AUTH-1, R-AUTH-3, R-AUTH-4, R-AUTH-5: the whole cycle without an allocator: listed,
/// gated, authenticated, logged out.
#[test]
fn authenticate_and_logout_over_fixed_storage() {
    let mut agent = agent();
    let mut events = Vec::new();
    let init = step(
        &mut agent,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
        &mut events,
    );
    assert_eq!(
        init,
        [
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false},"auth":{"logout":{}}},"authMethods":[{"id":"key","name":"API key"}],"agentInfo":{"name":"tiny","title":"Tiny","version":"1"}}}"#
        ]
    );
    let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/user/p","mcpServers":[]}}"#;
    assert_eq!(
        step(&mut agent, new, &mut events),
        [r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Authentication required"}}"#]
    );
    events.clear();
    step(
        &mut agent,
        r#"{"jsonrpc":"2.0","id":2,"method":"authenticate","params":{"methodId":"key"}}"#,
        &mut events,
    );
    let [
        AgentEvent::Authenticate {
            ticket, method_id, ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(method_id.as_str(), "key");
    agent.accept_authenticate(*ticket).unwrap();
    events.clear();
    let out = step(&mut agent, new, &mut events);
    assert_eq!(out, [r#"{"jsonrpc":"2.0","id":2,"result":{}}"#]);
    let [AgentEvent::NewSession { ticket, .. }] = events.as_slice() else {
        panic!("{events:?}")
    };
    agent.accept_new_session_id(*ticket, "s1").unwrap();
    events.clear();
    assert_eq!(
        step(
            &mut agent,
            r#"{"jsonrpc":"2.0","id":3,"method":"logout"}"#,
            &mut events,
        ),
        [r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#]
    );
    let [AgentEvent::Logout { ticket, .. }] = events.as_slice() else {
        panic!("{events:?}")
    };
    agent.accept_logout(*ticket).unwrap();
    assert!(!agent.is_authenticated());
    let out = step(
        &mut agent,
        r#"{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"/home/user/p","mcpServers":[]}}"#,
        &mut events,
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"Authentication required"}}"#
        ]
    );
}

/// R-AUTH-4, R-RPC-10: malformed `authenticate` params get the same texts in every build.
#[test]
fn malformed_authenticate_params_are_32602_with_the_same_texts() {
    let mut agent = agent();
    let mut events = Vec::new();
    step(
        &mut agent,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
        &mut events,
    );
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":7}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: authenticate.methodId must be a string"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"authenticate","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: authenticate.methodId is required"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"authenticate"}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: authenticate params must be a JSON object"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"authenticate","params":{"methodId":"k\u0065y2"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: authenticate.methodId 'key2' is not one of the advertised authMethods"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"authenticate","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: authenticate params must be a JSON object"}}"#,
        ),
    ];
    for (line, expected) in cases {
        assert_eq!(step(&mut agent, line, &mut events), [expected], "{line}");
    }
    assert!(events.iter().all(|e| matches!(
        e,
        AgentEvent::Initialized { .. } | AgentEvent::PeerViolation(_)
    )));
}
