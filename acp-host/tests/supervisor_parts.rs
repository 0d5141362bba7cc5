//! The supervisor's small parts: recovery classification (R-HOST-7), the stderr ring
//! (R-HOST-5), the inbox (R-HOST-12), pending interactions and session reuse (R-HOST-8) and the
//! child environment (R-HOST-10).

use std::collections::BTreeMap;

use acp_host::supervisor::Instant;
use acp_host::supervisor::env::{SCRUBBED_KEYS, child_env};
use acp_host::supervisor::inbox::{INBOX_CAPACITY, Inbox, InboxMessage, MessageKind};
use acp_host::supervisor::interaction::{
    InteractionId, InteractionKind, Interactions, MAX_PENDING,
};
use acp_host::supervisor::recovery::{Death, ExitStatus, FatalCause, Verdict, classify};
use acp_host::supervisor::session::{SessionKey, SessionPlan, SessionSlot, mcp_fingerprint};
use acp_host::supervisor::stderr::{MAX_LINE_BYTES, STDERR_LINES, StderrRing};
use serde_json::json;

// ---- recovery ----

fn death(status: Option<ExitStatus>) -> Death {
    Death {
        status,
        handshake_streak: 0,
        during_turn: false,
        restart_count: 0,
        max_restarts: 3,
    }
}

#[test]
fn classification_rules_in_order() {
    use ExitStatus::*;
    let fatal = |c| Verdict::Fatal(c);
    let table: &[(Death, Verdict)] = &[
        // 1. signals, and the shell's 128+signal codes, and negative codes.
        (death(Some(Signal(9))), fatal(FatalCause::Signalled)),
        (death(Some(Code(137))), fatal(FatalCause::Signalled)),
        (death(Some(Code(139))), fatal(FatalCause::Signalled)),
        (death(Some(Code(143))), fatal(FatalCause::Signalled)),
        (death(Some(Code(-6))), fatal(FatalCause::Signalled)),
        // A signal beats everything, even a turn in progress.
        (
            Death {
                during_turn: true,
                ..death(Some(Signal(15)))
            },
            fatal(FatalCause::Signalled),
        ),
        // 2. the handshake streak beats a clean exit.
        (
            Death {
                handshake_streak: 2,
                ..death(Some(Code(0)))
            },
            fatal(FatalCause::HandshakeFailures),
        ),
        (
            Death {
                handshake_streak: 1,
                ..death(Some(Code(0)))
            },
            Verdict::Recoverable,
        ),
        // 3. no exit status: recoverable whatever the count.
        (
            Death {
                restart_count: 99,
                ..death(None)
            },
            Verdict::Recoverable,
        ),
        // 4. exit 0: recoverable whatever the count.
        (
            Death {
                restart_count: 99,
                ..death(Some(Code(0)))
            },
            Verdict::Recoverable,
        ),
        // 5. during a turn: recoverable past the cap.
        (
            Death {
                during_turn: true,
                restart_count: 3,
                ..death(Some(Code(1)))
            },
            Verdict::Recoverable,
        ),
        // 6. idle, at the cap: fatal.
        (
            Death {
                restart_count: 3,
                ..death(Some(Code(1)))
            },
            fatal(FatalCause::RestartLimit),
        ),
        (
            Death {
                restart_count: 0,
                max_restarts: 0,
                ..death(Some(Code(1)))
            },
            fatal(FatalCause::RestartLimit),
        ),
        // 7. idle, within the cap.
        (
            Death {
                restart_count: 2,
                ..death(Some(Code(1)))
            },
            Verdict::Recoverable,
        ),
        (death(Some(Code(136))), Verdict::Recoverable),
    ];
    for (d, expected) in table {
        assert_eq!(classify(*d), *expected, "{d:?}");
    }
}

#[test]
fn exit_status_display() {
    assert_eq!(ExitStatus::Code(3).to_string(), "exit code 3");
    assert_eq!(ExitStatus::Signal(9).to_string(), "signal 9");
}

// ---- stderr ring ----

#[test]
fn stderr_ring_keeps_the_last_200_non_empty_lines() {
    let mut ring = StderrRing::new();
    assert_eq!(ring.tail(50).count(), 0);
    for i in 0..250 {
        ring.push(&format!("line {i}  \r\n"));
        ring.push("   ");
    }
    assert_eq!(STDERR_LINES, 200);
    assert_eq!(ring.len(), 200);
    assert_eq!(ring.dropped(), 50);
    let tail: Vec<&str> = ring.tail(3).collect();
    assert_eq!(tail, ["line 247", "line 248", "line 249"]);
    assert_eq!(ring.tail(1000).next(), Some("line 50"));
    assert_eq!(ring.tail(0).count(), 0);
}

#[test]
fn stderr_lines_are_cut_at_a_character_boundary() {
    let mut ring = StderrRing::new();
    let long = "é".repeat(MAX_LINE_BYTES); // 2 bytes each
    ring.push(&long);
    let kept = ring.tail(1).next().unwrap();
    assert_eq!(kept.len(), MAX_LINE_BYTES);
    assert!(kept.chars().all(|c| c == 'é'));
    ring.push(&format!("x{}", "é".repeat(MAX_LINE_BYTES)));
    assert_eq!(ring.tail(1).next().unwrap().len(), MAX_LINE_BYTES - 1);
    ring.clear();
    assert!(ring.is_empty());
}

// ---- inbox ----

fn message(n: usize) -> InboxMessage {
    InboxMessage {
        server: "a".into(),
        session_id: Some(format!("s{n}")),
        kind: MessageKind::Response,
        update_kind: Some("agent_message_chunk".into()),
        text: format!("m{n}"),
        at: Instant(n as u64),
    }
}

#[test]
fn inbox_is_fifo_and_drains() {
    let mut inbox = Inbox::new();
    assert!(inbox.is_empty());
    for n in 0..3 {
        inbox.push(message(n));
    }
    assert_eq!(
        inbox.peek().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        ["m0", "m1", "m2"]
    );
    assert_eq!(inbox.len(), 3, "peek does not consume");
    let drained: Vec<String> = inbox.drain().into_iter().map(|m| m.text).collect();
    assert_eq!(drained, ["m0", "m1", "m2"]);
    assert!(inbox.is_empty());
    assert!(inbox.drain().is_empty());
}

#[test]
fn a_full_inbox_drops_the_oldest_and_counts() {
    let mut inbox = Inbox::new();
    assert_eq!(INBOX_CAPACITY, 256);
    for n in 0..300 {
        inbox.push(message(n));
    }
    assert_eq!(inbox.len(), 256);
    assert_eq!(inbox.dropped(), 44);
    assert_eq!(inbox.peek().next().unwrap().text, "m44");
    assert_eq!(inbox.peek().last().unwrap().text, "m299");

    let mut tiny = Inbox::with_capacity(0);
    tiny.push(message(1));
    tiny.push(message(2));
    assert_eq!((tiny.len(), tiny.dropped()), (1, 1));
}

#[test]
fn message_kinds_by_method() {
    assert_eq!(
        MessageKind::for_method("session/update"),
        MessageKind::Response
    );
    assert_eq!(
        MessageKind::for_method("session/request_permission"),
        MessageKind::Permission
    );
    assert_eq!(
        MessageKind::for_method("_agentao.cn/ask_user"),
        MessageKind::Input
    );
    assert_eq!(
        MessageKind::for_method("fs/read_text_file"),
        MessageKind::Notification
    );
    assert!(MessageKind::Permission.is_interaction());
    assert!(MessageKind::Input.is_interaction());
    assert!(!MessageKind::Response.is_interaction());
}

// ---- interactions ----

#[test]
fn interactions_get_distinct_eight_hex_ids() {
    let mut reg: Interactions<u32> = Interactions::new(7);
    let mut seen = std::collections::HashSet::new();
    for n in 0..200 {
        let id = reg
            .open(Instant(0), "a", None, InteractionKind::Permission, "ok?", n)
            .unwrap();
        let text = id.to_string();
        assert_eq!(text.len(), 8);
        assert!(
            text.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
        assert_eq!(InteractionId::parse(&text), Some(id));
        assert!(seen.insert(id), "duplicate id {text}");
    }
    // Consecutive ids do not look consecutive.
    let ids: Vec<u32> = reg.iter().map(|i| i.id.0).collect();
    assert!(ids.windows(2).all(|w| w[1].abs_diff(w[0]) > 1));
}

#[test]
fn ids_are_deterministic_per_seed() {
    let first = |seed| {
        Interactions::<()>::new(seed)
            .open(Instant(0), "a", None, InteractionKind::Input, "?", ())
            .unwrap()
    };
    assert_eq!(first(1), first(1));
    assert_ne!(first(1), first(2));
}

#[test]
fn interaction_id_parsing() {
    assert_eq!(InteractionId::parse("0000002a"), Some(InteractionId(42)));
    assert_eq!(
        InteractionId::parse(" DEADBEEF\n"),
        Some(InteractionId(0xdead_beef))
    );
    for bad in ["", "2a", "0000002a0", "0000002g", "+000002a", "-000002a"] {
        assert_eq!(InteractionId::parse(bad), None, "{bad:?}");
    }
    assert_eq!(InteractionId(0xab).to_string(), "000000ab");
}

#[test]
fn resolve_checks_the_server_and_happens_once() {
    let mut reg: Interactions<&str> = Interactions::new(0);
    let a = reg
        .open(
            Instant(1),
            "a",
            Some("s1"),
            InteractionKind::Permission,
            "Allow write?",
            "ticket-a",
        )
        .unwrap();
    let b = reg
        .open(
            Instant(2),
            "b",
            None,
            InteractionKind::Input,
            "Branch?",
            "ticket-b",
        )
        .unwrap();
    assert_eq!(
        reg.pending_for("a")
            .map(|i| i.prompt.as_str())
            .collect::<Vec<_>>(),
        ["Allow write?"]
    );
    assert!(reg.resolve("b", a).is_none(), "wrong server");
    assert!(
        reg.resolve("a", InteractionId(a.0 ^ 1)).is_none(),
        "unknown id"
    );
    let got = reg.resolve("a", a).unwrap();
    assert_eq!(
        (
            got.ticket,
            got.kind,
            got.session_id.as_deref(),
            got.opened_at
        ),
        (
            "ticket-a",
            InteractionKind::Permission,
            Some("s1"),
            Instant(1)
        )
    );
    assert!(reg.resolve("a", a).is_none(), "already resolved");
    assert_eq!(reg.get(b).unwrap().ticket, "ticket-b");
    assert_eq!(reg.len(), 1);
}

#[test]
fn removing_a_server_hands_back_its_tickets() {
    let mut reg: Interactions<u8> = Interactions::new(0);
    reg.open(Instant(0), "a", None, InteractionKind::Permission, "1", 1)
        .unwrap();
    reg.open(Instant(0), "b", None, InteractionKind::Permission, "2", 2)
        .unwrap();
    reg.open(Instant(0), "a", None, InteractionKind::Input, "3", 3)
        .unwrap();
    let gone: Vec<u8> = reg
        .remove_server("a")
        .into_iter()
        .map(|i| i.ticket)
        .collect();
    assert_eq!(gone, [1, 3]);
    assert_eq!(reg.iter().map(|i| i.ticket).collect::<Vec<_>>(), [2]);
}

#[test]
fn the_registry_is_bounded_and_returns_the_ticket() {
    let mut reg: Interactions<usize> = Interactions::new(0);
    for n in 0..MAX_PENDING {
        reg.open(Instant(0), "a", None, InteractionKind::Permission, "", n)
            .unwrap();
    }
    assert_eq!(
        reg.open(Instant(0), "a", None, InteractionKind::Permission, "", 999),
        Err(999)
    );
    assert_eq!(reg.len(), MAX_PENDING);
}

// ---- session reuse ----

#[test]
fn fingerprint_is_canonical() {
    assert_eq!(mcp_fingerprint(None), "[]");
    assert_eq!(mcp_fingerprint(Some(&json!(null))), "[]");
    assert_eq!(mcp_fingerprint(Some(&json!([]))), "[]");
    let a = json!([{"name": "fs", "command": "mcp-fs", "args": ["-v"], "env": [{"name": "K", "value": "ü"}]}]);
    let b = json!([{"env": [{"value": "ü", "name": "K"}], "args": ["-v"], "command": "mcp-fs", "name": "fs"}]);
    assert_eq!(
        mcp_fingerprint(Some(&a)),
        mcp_fingerprint(Some(&b)),
        "key order does not matter"
    );
    assert_eq!(
        mcp_fingerprint(Some(&a)),
        r#"[{"args":["-v"],"command":"mcp-fs","env":[{"name":"K","value":"ü"}],"name":"fs"}]"#
    );
    let one = json!([{"name": "x"}, {"name": "y"}]);
    let other = json!([{"name": "y"}, {"name": "x"}]);
    assert_ne!(
        mcp_fingerprint(Some(&one)),
        mcp_fingerprint(Some(&other)),
        "list order matters"
    );
    assert_eq!(
        mcp_fingerprint(Some(&json!([{"q": "a\"b\n", "n": 1.5, "t": true}]))),
        r#"[{"n":1.5,"q":"a\"b\n","t":true}]"#
    );
}

#[test]
fn session_reuse_by_cwd_and_fingerprint() {
    let mcp = json!([{"name": "fs"}]);
    let mut slot = SessionSlot::new();
    let key = SessionKey::for_prompt(None, "/proj", None);
    assert_eq!(
        key,
        SessionKey {
            cwd: "/proj".into(),
            mcp_fingerprint: "[]".into()
        }
    );
    assert_eq!(slot.plan(&key), SessionPlan::New, "no session yet");
    slot.created("sess_1", key.clone());
    assert_eq!(
        slot.plan(&key),
        SessionPlan::Reuse {
            session_id: "sess_1"
        }
    );
    // `[]` and no list are the same.
    assert_eq!(
        slot.plan(&SessionKey::for_prompt(
            Some("/proj"),
            "/else",
            Some(&json!([]))
        )),
        SessionPlan::Reuse {
            session_id: "sess_1"
        }
    );
    // Another cwd, or other MCP servers: a new session.
    assert_eq!(
        slot.plan(&SessionKey::for_prompt(Some("/other"), "/proj", None)),
        SessionPlan::New
    );
    assert_eq!(
        slot.plan(&SessionKey::for_prompt(None, "/proj", Some(&mcp))),
        SessionPlan::New
    );
    // cwd is compared as a string.
    assert_eq!(
        slot.plan(&SessionKey::for_prompt(Some("/proj/"), "/x", None)),
        SessionPlan::New
    );
    // After an override, no override means the config's defaults again.
    let override_key = SessionKey::for_prompt(Some("/other"), "/proj", Some(&mcp));
    slot.created("sess_2", override_key);
    assert_eq!(slot.plan(&key), SessionPlan::New);
    // A failed session/new clears the slot.
    slot.clear();
    assert_eq!(slot.session_id(), None);
}

// ---- child environment ----

#[test]
fn child_env_scrubs_provider_keys_and_layers_config_env() {
    let host = [
        ("PATH", "/bin"),
        ("OPENAI_API_KEY", "sk-1"),
        ("ANTHROPIC_API_KEY", "sk-2"),
        ("GOOGLE_API_KEY", "g"),
        ("LLM_PROVIDER", "acme"),
        ("ACME_API_KEY", "sk-3"),
        ("LLM_EXTRA_BODY", "{}"),
    ];
    let config = BTreeMap::from([
        ("ANTHROPIC_API_KEY".to_string(), "explicit".to_string()),
        ("X".to_string(), "1".to_string()),
    ]);
    let env = child_env(host, &config);
    let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "ANTHROPIC_API_KEY",
            "GOOGLE_API_KEY",
            "LLM_PROVIDER",
            "PATH",
            "X"
        ]
    );
    assert_eq!(env[0].1, "explicit", "config env re-adds a key on purpose");
    assert_eq!(SCRUBBED_KEYS.len(), 12);
}

#[test]
fn child_env_scrub_can_be_switched_off() {
    for off in ["0", "false", "NO", "Off"] {
        let host = [("OPENAI_API_KEY", "sk"), ("AGENTAO_SCRUB_CHILD_ENV", off)];
        let env = child_env(host, &BTreeMap::new());
        assert!(env.iter().any(|(k, _)| k == "OPENAI_API_KEY"), "{off}");
    }
    let env = child_env(
        [("OPENAI_API_KEY", "sk"), ("AGENTAO_SCRUB_CHILD_ENV", "1")],
        &BTreeMap::new(),
    );
    assert!(!env.iter().any(|(k, _)| k == "OPENAI_API_KEY"));
}
