//! Authentication on the client side (R-AUTH-6): the agent's `authMethods` read from the
//! `initialize` answer, and the `authenticate` / `logout` commands, refused locally when the
//! agent did not offer them.
#![cfg(feature = "alloc")]

mod client_support;

use acp_core::Instant;
use acp_core::conn::agent::AuthKind;
use acp_core::conn::client::{ClientEvent, ClientMethod, Serves};
use acp_core::machine::UsageError;
use client_support::Host;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A ready host whose `initialize` answer is `result` (with `protocolVersion: 1` added).
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
    host
}

fn offered() -> Value {
    json!({
        "agentCapabilities": {"auth": {"logout": {}}},
        "authMethods": [
            {"id": "key", "name": "API key", "description": "From the environment"},
            {"type": "agent", "id": "sso", "name": "SSO"},
            {"type": "terminal", "id": "tui", "name": "Log in", "args": ["--login"], "env": {"MODE": "tui"}},
            {"type": "oauth", "id": "future", "name": "Later"},
            {"id": 7, "name": "bad id"},
            {"id": "no-name"}
        ]
    })
}

/// R-AUTH-6: readable methods of both forms, in order; unknown types and broken entries are
/// skipped.
#[test]
fn auth_methods_are_read_from_the_initialize_answer() {
    let host = ready(offered());
    let methods: Vec<_> = host.conn.auth_methods().iter().collect();
    let ids: Vec<_> = methods.iter().map(|m| (m.id, m.kind)).collect();
    assert_eq!(
        ids,
        [
            ("key", AuthKind::Agent),
            ("sso", AuthKind::Agent),
            ("tui", AuthKind::Terminal)
        ]
    );
    assert_eq!(methods[0].description, Some("From the environment"));
    assert_eq!(methods[0].name, "API key");
    assert_eq!(methods[2].args().collect::<Vec<_>>(), ["--login"]);
    assert_eq!(methods[2].env().collect::<Vec<_>>(), [("MODE", "tui")]);
    assert!(host.conn.agent_features().logout);
    assert!(host.conn.agent_features().authenticate);
}

/// R-AUTH-6: `authenticate` sends exactly `{"methodId":…}` for an offered agent method and
/// its `{}` answer is `Answered`.
#[test]
fn authenticate_sends_the_method_id() {
    let mut host = ready(offered());
    let id = host.conn.authenticate(Instant(0), "sso").unwrap();
    assert_eq!(
        host.sent(),
        [format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"authenticate","params":{{"methodId":"sso"}}}}"#,
            id.0
        )]
    );
    host.agent(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":null}}"#,
        id.0
    ));
    match host.events().as_slice() {
        [
            ClientEvent::Answered {
                request, method, ..
            },
        ] => {
            assert_eq!(*request, id);
            assert_eq!(*method, ClientMethod::Other);
        }
        other => panic!("{other:?}"),
    }
}

/// R-AUTH-6: a terminal method, an id not offered, or no `authMethods` at all: refused
/// locally, nothing written.
#[test]
fn authenticate_refuses_what_was_not_offered() {
    let mut host = ready(offered());
    for id in ["tui", "nope", "future"] {
        let refused = host.conn.authenticate(Instant(0), id).unwrap_err();
        assert_eq!(
            refused,
            UsageError::NotAdvertised {
                method: "authenticate",
                needs: "an authMethods entry of type agent with this id"
            },
            "{id}"
        );
        assert_eq!(
            refused.to_string(),
            "authenticate needs an authMethods entry of type agent with this id, which the agent did not advertise; nothing was sent"
        );
    }
    assert!(host.sent().is_empty());
    let mut host = ready(json!({"agentCapabilities": {}, "authMethods": []}));
    assert_eq!(
        host.conn.authenticate(Instant(0), "key"),
        Err(UsageError::NotAdvertised {
            method: "authenticate",
            needs: "a non-empty authMethods"
        })
    );
    assert!(host.sent().is_empty());
}

/// R-AUTH-6: `logout` sends `{}` when `auth.logout` is advertised, and is refused locally
/// otherwise.
#[test]
fn logout_needs_auth_logout() {
    let mut host = ready(offered());
    let id = host.conn.logout(Instant(0)).unwrap();
    assert_eq!(
        host.sent(),
        [format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"logout","params":{{}}}}"#,
            id.0
        )]
    );
    let mut host = ready(json!({"agentCapabilities": {"auth": {}}, "authMethods": []}));
    let refused = host.conn.logout(Instant(0)).unwrap_err();
    assert_eq!(
        refused,
        UsageError::NotAdvertised {
            method: "logout",
            needs: "agentCapabilities.auth.logout"
        }
    );
    assert!(host.sent().is_empty());
}

/// R-AUTH-6: methods that do not fit the fixed list are dropped, and then an id that is
/// not stored is sent anyway (the agent decides).
#[test]
fn methods_beyond_the_fixed_list_are_dropped_but_not_refused() {
    let methods: Vec<Value> = (0..6)
        .map(|i| json!({"id": format!("m{i}"), "name": "x"}))
        .collect();
    let mut host = ready(json!({"authMethods": methods}));
    assert_eq!(host.conn.auth_methods().len(), 4);
    assert!(host.conn.authenticate(Instant(0), "m5").is_ok());
}

/// R-AUTH-7: `clientCapabilities.auth.terminal: true` goes out exactly when the application
/// says it runs terminal auth methods; without it there is no `auth` member at all.
#[test]
fn initialize_advertises_terminal_auth_only_when_the_application_runs_it() {
    let sent = |serves: Serves| {
        let mut host = Host::new(serves);
        host.conn.initialize(Instant(0)).unwrap();
        let line: Value = serde_json::from_str(&host.sent()[0]).unwrap();
        line["params"]["clientCapabilities"].clone()
    };
    let with = sent(Serves {
        terminal_auth: true,
        ..Serves::NOTHING
    });
    assert_eq!(with["auth"], json!({"terminal": true}));
    assert_eq!(with["terminal"], json!(false));
    for serves in [Serves::NOTHING, Serves::EVERYTHING] {
        let without = sent(serves);
        assert_eq!(without.get("auth"), None, "{without}");
    }
}
