//! The client refuses, locally, what the agent did not advertise: every optional method sent
//! through `request()` (and the typed `load_session` / `resume_session`), and prompt content
//! beyond text and resource links. The refusal is a `UsageError::NotAdvertised` naming what
//! is missing, and not one byte is written; once advertised, the same call is sent.
#![cfg(feature = "alloc")]

mod client_support;

use acp_core::Instant;
use acp_core::conn::client::{ClientEvent, NO_MCP_SERVERS, Serves};
use acp_core::machine::UsageError;
use client_support::Host;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A ready host whose `initialize` answer is `result` (with `protocolVersion: 1` added), with
/// session `s1` open.
fn ready(result: Value) -> Host {
    let mut host = Host::new(Serves::NOTHING);
    let id = host.conn.initialize(host.at()).unwrap();
    host.sent();
    let mut result = result;
    result["protocolVersion"] = json!(1);
    host.agent(&json!({"jsonrpc": "2.0", "id": id.0, "result": result}).to_string());
    assert!(matches!(
        host.events().as_slice(),
        [ClientEvent::Initialized { .. }]
    ));
    host.open("s1");
    host
}

/// Calls `request(method, params)` on a host without and then with `advertised`: the first is
/// refused with `needs` and writes nothing, the second is sent.
fn gated(method: &str, params: Value, advertised: Value, needs: &'static str, message: &str) {
    let mut host = ready(json!({"agentCapabilities": {}}));
    let refused = host.conn.request(Instant(0), method, &params).unwrap_err();
    assert_eq!(
        refused,
        UsageError::NotAdvertised {
            method: acp_core::schema::methods::Method::from_name(method)
                .map(|m| m.name())
                .unwrap_or("?"),
            needs
        }
    );
    assert_eq!(refused.to_string(), message);
    assert!(
        host.conn.outbox().pending().is_empty(),
        "{method}: bytes were written"
    );
    assert_eq!(host.conn.requests_in_flight(), 0);

    let mut host = ready(advertised);
    let id = host.conn.request(Instant(0), method, &params).unwrap();
    let sent: Vec<Value> = host
        .sent()
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        sent,
        [json!({"jsonrpc": "2.0", "id": id.0, "method": method, "params": params})]
    );
}

#[test]
fn session_list_needs_session_capabilities_list() {
    gated(
        "session/list",
        json!({}),
        json!({"agentCapabilities": {"sessionCapabilities": {"list": {}}}}),
        "agentCapabilities.sessionCapabilities.list",
        "session/list needs agentCapabilities.sessionCapabilities.list, which the agent did not advertise; nothing was sent",
    );
}

#[test]
fn session_load_needs_load_session() {
    gated(
        "session/load",
        json!({"sessionId": "old", "cwd": "/w", "mcpServers": []}),
        json!({"agentCapabilities": {"loadSession": true}}),
        "agentCapabilities.loadSession",
        "session/load needs agentCapabilities.loadSession, which the agent did not advertise; nothing was sent",
    );
}

#[test]
fn session_resume_needs_session_capabilities_resume() {
    gated(
        "session/resume",
        json!({"sessionId": "old", "cwd": "/w"}),
        json!({"agentCapabilities": {"sessionCapabilities": {"resume": {}}}}),
        "agentCapabilities.sessionCapabilities.resume",
        "session/resume needs agentCapabilities.sessionCapabilities.resume, which the agent did not advertise; nothing was sent",
    );
}

#[test]
fn session_close_needs_session_capabilities_close() {
    gated(
        "session/close",
        json!({"sessionId": "s1"}),
        json!({"agentCapabilities": {"sessionCapabilities": {"close": {}}}}),
        "agentCapabilities.sessionCapabilities.close",
        "session/close needs agentCapabilities.sessionCapabilities.close, which the agent did not advertise; nothing was sent",
    );
}

#[test]
fn session_delete_needs_session_capabilities_delete() {
    gated(
        "session/delete",
        json!({"sessionId": "old"}),
        json!({"agentCapabilities": {"sessionCapabilities": {"delete": {}}}}),
        "agentCapabilities.sessionCapabilities.delete",
        "session/delete needs agentCapabilities.sessionCapabilities.delete, which the agent did not advertise; nothing was sent",
    );
}

#[test]
fn logout_needs_auth_logout() {
    gated(
        "logout",
        json!({}),
        json!({"agentCapabilities": {"auth": {"logout": {}}}}),
        "agentCapabilities.auth.logout",
        "logout needs agentCapabilities.auth.logout, which the agent did not advertise; nothing was sent",
    );
}

#[test]
fn authenticate_needs_an_auth_method() {
    gated(
        "authenticate",
        json!({"methodId": "key"}),
        json!({"agentCapabilities": {}, "authMethods": [{"id": "key", "name": "API key"}]}),
        "a non-empty authMethods",
        "authenticate needs a non-empty authMethods, which the agent did not advertise; nothing was sent",
    );
    // An empty list is no method at all.
    let mut host = ready(json!({"agentCapabilities": {}, "authMethods": []}));
    let params = json!({"methodId": "key"});
    assert!(matches!(
        host.conn.request(Instant(0), "authenticate", &params),
        Err(UsageError::NotAdvertised { .. })
    ));
    assert!(host.sent().is_empty());
}

#[test]
fn set_model_needs_the_agentao_extension() {
    gated(
        "_agentao.cn/set_model",
        json!({"sessionId": "s1", "model": "gpt"}),
        json!({"agentCapabilities": {}, "_meta": {"_agentao.cn/extensions": [{"method": "_agentao.cn/set_model"}]}}),
        "_agentao.cn/set_model in _meta[\"_agentao.cn/extensions\"]",
        "_agentao.cn/set_model needs _agentao.cn/set_model in _meta[\"_agentao.cn/extensions\"], which the agent did not advertise; nothing was sent",
    );
}

#[test]
fn methods_without_a_capability_and_extensions_are_never_gated() {
    let mut host = ready(json!({"agentCapabilities": {}}));
    for method in ["_acme/ping", "session/set_mode"] {
        host.conn
            .request(Instant(0), method, &json!({"sessionId": "s1"}))
            .unwrap();
    }
    assert_eq!(host.sent().len(), 2);
}

#[test]
fn typed_load_and_resume_are_gated_the_same_way() {
    let mut host = ready(json!({"agentCapabilities": {}}));
    let load = host
        .conn
        .load_session(Instant(0), "old", "/w", NO_MCP_SERVERS)
        .unwrap_err();
    assert_eq!(
        load.to_string(),
        "session/load needs agentCapabilities.loadSession, which the agent did not advertise; nothing was sent"
    );
    let resume = host
        .conn
        .resume_session(Instant(0), "old", "/w", NO_MCP_SERVERS)
        .unwrap_err();
    assert_eq!(
        resume.to_string(),
        "session/resume needs agentCapabilities.sessionCapabilities.resume, which the agent did not advertise; nothing was sent"
    );
    assert!(host.conn.outbox().pending().is_empty());
}

/// Sends a prompt of `blocks` to an agent without prompt capabilities (refused, nothing
/// written, the session stays idle) and to one with `flag` (sent).
fn prompt_gated(blocks: Value, flag: &str, needs: &'static str) {
    let mut host = ready(json!({"agentCapabilities": {}}));
    let refused = host.conn.prompt(Instant(0), "s1", &blocks).unwrap_err();
    assert_eq!(
        refused,
        UsageError::NotAdvertised {
            method: "session/prompt",
            needs
        }
    );
    assert_eq!(
        refused.to_string(),
        format!(
            "session/prompt needs {needs}, which the agent did not advertise; nothing was sent"
        )
    );
    assert!(host.conn.outbox().pending().is_empty());
    assert_eq!(host.conn.requests_in_flight(), 0);
    // The same blocks through `request()` are refused the same way.
    let params = json!({"sessionId": "s1", "prompt": blocks});
    assert_eq!(
        host.conn.request(Instant(0), "session/prompt", &params),
        Err(refused)
    );
    assert!(host.conn.outbox().pending().is_empty());
    // No turn was started: a text prompt goes out right after.
    host.conn.prompt_text(Instant(0), "s1", "hi").unwrap();
    assert_eq!(host.sent().len(), 1);

    let mut host = ready(json!({"agentCapabilities": {"promptCapabilities": {flag: true}}}));
    host.conn.prompt(Instant(0), "s1", &blocks).unwrap();
    assert_eq!(host.sent().len(), 1);
}

#[test]
fn prompt_images_need_prompt_capabilities_image() {
    prompt_gated(
        json!([{"type": "text", "text": "look"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]),
        "image",
        "agentCapabilities.promptCapabilities.image",
    );
}

#[test]
fn prompt_audio_needs_prompt_capabilities_audio() {
    prompt_gated(
        json!([{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]),
        "audio",
        "agentCapabilities.promptCapabilities.audio",
    );
}

#[test]
fn prompt_resources_need_prompt_capabilities_embedded_context() {
    prompt_gated(
        json!([{"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}]),
        "embeddedContext",
        "agentCapabilities.promptCapabilities.embeddedContext",
    );
}

#[test]
fn text_and_resource_links_are_always_allowed() {
    let mut host = ready(json!({"agentCapabilities": {}}));
    let blocks = json!([{"type": "text", "text": "x"}, {"type": "resource_link", "uri": "file:///a", "name": "a"}]);
    host.conn.prompt(Instant(0), "s1", &blocks).unwrap();
    assert_eq!(host.sent().len(), 1);
}
