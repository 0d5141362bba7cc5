//! The session table and turns, transition by transition, from fixtures that put sessions
//! straight into a state (R-SESSION-3, R-TURN-2 … R-TURN-4, R-CANCEL-1 … R-CANCEL-3,
//! R-CONFIG-3, R-SESSION-6).

use acp_core::machine::session::{
    Actor, CancelVia, FixedSessions, SessionInput as I, SessionOutput as O, SessionState as S,
    SessionViolation,
};
use acp_core::machine::turn::{StopReason, Turn};
use acp_core::machine::{Instant, ReqRef, RequestId, Ticket, UsageError};
use acp_core::wire::ErrorCode;

type Table = FixedSessions<4>;

const T0: Instant = Instant(100);
const PEER_PROMPT: ReqRef = ReqRef::Peer(Ticket(1));
const OUR_PROMPT: ReqRef = ReqRef::Ours(RequestId(1));

fn table_with(rows: &[(&str, S)]) -> Table {
    let mut t = Table::default();
    for (id, state) in rows {
        t.restore(id, *state).unwrap();
    }
    t
}

fn idle(id: &str) -> Table {
    table_with(&[(id, S::Active { turn: None })])
}

fn running(id: &str, prompt: ReqRef) -> Table {
    table_with(&[(
        id,
        S::Active {
            turn: Some(Turn::Running { prompt }),
        },
    )])
}

fn cancelling(id: &str, prompt: ReqRef) -> Table {
    table_with(&[(
        id,
        S::Active {
            turn: Some(Turn::Cancelling {
                prompt,
                since: Instant(50),
            }),
        },
    )])
}

fn expect_reject(out: Result<O<'_>, UsageError>, code: i32, message: &str) {
    match out {
        Ok(O::Reject(r)) => {
            assert_eq!(r.code(), ErrorCode(code));
            assert_eq!(r.to_string(), message);
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

// ---- creating sessions ----

#[test]
fn session_new_is_usable_once_answered() {
    let mut t = Table::default();
    let req = ReqRef::Peer(Ticket(0));
    assert_eq!(t.handle(T0, I::NewStarted { req }), Ok(O::Proceed));
    // R-TURN-4: never before the session/new response.
    assert_eq!(
        t.handle(
            T0,
            I::Update {
                id: "s1",
                turn: None,
                actor: Actor::Local
            }
        ),
        Err(UsageError::UnknownSession)
    );
    assert_eq!(t.handle(T0, I::Opened { req, id: "s1" }), Ok(O::Opened));
    assert_eq!(t.get("s1"), Some(S::Active { turn: None }));
    assert_eq!(
        t.handle(
            T0,
            I::Update {
                id: "s1",
                turn: None,
                actor: Actor::Local
            }
        ),
        Ok(O::Proceed)
    );
}

#[test]
fn answering_session_new_twice_is_a_usage_error() {
    let mut t = Table::default();
    let req = ReqRef::Peer(Ticket(0));
    t.handle(T0, I::NewStarted { req }).unwrap();
    t.handle(T0, I::Opened { req, id: "s1" }).unwrap();
    assert_eq!(
        t.handle(T0, I::Opened { req, id: "s2" }),
        Err(UsageError::AlreadySettled)
    );
}

#[test]
fn a_failed_session_new_leaves_nothing() {
    let mut t = Table::default();
    let req = ReqRef::Ours(RequestId(3));
    t.handle(T0, I::NewStarted { req }).unwrap();
    assert_eq!(t.handle(T0, I::OpenFailed { req }), Ok(O::Proceed));
    assert!(t.rows().is_empty());
}

#[test]
fn an_agent_reusing_an_active_id_is_a_violation_on_the_client() {
    let mut t = idle("s1");
    let req = ReqRef::Ours(RequestId(4));
    t.handle(T0, I::NewStarted { req }).unwrap();
    assert_eq!(
        t.handle(T0, I::Opened { req, id: "s1" }),
        Ok(O::Violation(SessionViolation::DuplicateSessionId))
    );
    // The untrackable session is dropped; the existing one is untouched.
    assert_eq!(t.rows().len(), 1);
    assert_eq!(t.get("s1"), Some(S::Active { turn: None }));
}

#[test]
fn an_agent_naming_a_session_with_an_overlong_id_is_a_violation() {
    let mut t = Table::default();
    let req = ReqRef::Ours(RequestId(4));
    t.handle(T0, I::NewStarted { req }).unwrap();
    let id = "z".repeat(129);
    assert_eq!(
        t.handle(T0, I::Opened { req, id: &id }),
        Ok(O::Violation(SessionViolation::SessionIdTooLong))
    );
    assert!(t.rows().is_empty());
}

#[test]
fn a_closed_session_id_can_be_reused() {
    let mut t = table_with(&[("s1", S::Closed)]);
    let req = ReqRef::Peer(Ticket(4));
    t.handle(T0, I::NewStarted { req }).unwrap();
    assert_eq!(t.handle(T0, I::Opened { req, id: "s1" }), Ok(O::Opened));
    assert_eq!(t.rows().len(), 1);
    assert_eq!(t.get("s1"), Some(S::Active { turn: None }));
}

#[test]
fn the_agent_app_reusing_an_active_id_is_a_usage_error() {
    let mut t = idle("s1");
    let req = ReqRef::Peer(Ticket(4));
    t.handle(T0, I::NewStarted { req }).unwrap();
    assert_eq!(
        t.handle(T0, I::Opened { req, id: "s1" }),
        Err(UsageError::SessionExists)
    );
}

#[test]
fn session_load_allows_replay_before_its_answer() {
    let mut t = Table::default();
    let req = ReqRef::Peer(Ticket(2));
    assert_eq!(
        t.handle(T0, I::LoadStarted { id: "old", req }),
        Ok(O::Proceed)
    );
    // R-SESSION-6: replays history, then answers.
    assert_eq!(
        t.handle(
            T0,
            I::Update {
                id: "old",
                turn: None,
                actor: Actor::Local
            }
        ),
        Ok(O::Proceed)
    );
    // Not usable for prompts until answered.
    expect_reject(
        t.handle(
            T0,
            I::Prompt {
                id: "old",
                req: ReqRef::Peer(Ticket(3)),
            },
        ),
        -32600,
        "session old is not active",
    );
    assert_eq!(t.handle(T0, I::Opened { req, id: "old" }), Ok(O::Opened));
    assert!(matches!(
        t.handle(
            T0,
            I::Prompt {
                id: "old",
                req: ReqRef::Peer(Ticket(3))
            }
        ),
        Ok(O::TurnStarted { .. })
    ));
}

/// R-SESSION-10: a reload of an idle session that fails (refused, cancelled) leaves it
/// exactly as it was: usable, and named by later requests as before.
#[test]
fn a_failed_reload_of_an_idle_session_leaves_it_active() {
    let mut t = idle("s1");
    let load = ReqRef::Peer(Ticket(5));
    assert_eq!(
        t.handle(
            T0,
            I::LoadStarted {
                id: "s1",
                req: load
            }
        ),
        Ok(O::Proceed)
    );
    assert_eq!(t.handle(T0, I::OpenFailed { req: load }), Ok(O::Proceed));
    assert_eq!(t.get("s1"), Some(S::Active { turn: None }));
    assert!(matches!(
        t.handle(
            T0,
            I::Prompt {
                id: "s1",
                req: PEER_PROMPT
            }
        ),
        Ok(O::TurnStarted { .. })
    ));
}

/// R-SESSION-10: a failed reload of a closed session leaves it closed (not unknown), and a
/// failed load of an unknown id leaves nothing.
#[test]
fn a_failed_reload_of_a_closed_session_leaves_it_closed() {
    let mut t = table_with(&[("s1", S::Closed), ("s2", S::Active { turn: None })]);
    let load = ReqRef::Ours(RequestId(8));
    t.handle(
        T0,
        I::LoadStarted {
            id: "s1",
            req: load,
        },
    )
    .unwrap();
    assert_eq!(t.handle(T0, I::OpenFailed { req: load }), Ok(O::Proceed));
    assert_eq!(t.get("s1"), Some(S::Closed));
    assert_eq!(t.get("s2"), Some(S::Active { turn: None }));
    let fresh = ReqRef::Ours(RequestId(9));
    t.handle(
        T0,
        I::LoadStarted {
            id: "s3",
            req: fresh,
        },
    )
    .unwrap();
    assert_eq!(t.handle(T0, I::OpenFailed { req: fresh }), Ok(O::Proceed));
    assert_eq!(t.get("s3"), None);
    assert_eq!(t.rows().len(), 2);
}

#[test]
fn session_load_of_a_session_with_a_turn_is_busy() {
    let mut t = running("s1", PEER_PROMPT);
    expect_reject(
        t.handle(
            T0,
            I::LoadStarted {
                id: "s1",
                req: ReqRef::Peer(Ticket(9)),
            },
        ),
        -32600,
        "session/load rejected: session s1 has an active turn; retry after it completes",
    );
}

#[test]
fn session_load_of_an_overlong_id_is_not_found() {
    let mut t = Table::default();
    let id = "x".repeat(200);
    expect_reject(
        t.handle(
            T0,
            I::LoadStarted {
                id: &id,
                req: ReqRef::Peer(Ticket(0)),
            },
        ),
        -32600,
        &format!("session/load: Session '{id}' not found"),
    );
}

#[test]
fn the_table_refuses_sessions_beyond_its_limit() {
    let mut t = table_with(&[
        ("a", S::Active { turn: None }),
        ("b", S::Active { turn: None }),
        ("c", S::Active { turn: None }),
        ("d", S::Active { turn: None }),
    ]);
    expect_reject(
        t.handle(
            T0,
            I::NewStarted {
                req: ReqRef::Peer(Ticket(0)),
            },
        ),
        -32603,
        "Internal error: too many sessions (limit 4)",
    );
    assert_eq!(
        t.handle(
            T0,
            I::NewStarted {
                req: ReqRef::Ours(RequestId(0))
            }
        ),
        Err(UsageError::TooManyInFlight)
    );
    // A closed session makes room.
    t.handle(
        T0,
        I::Close {
            id: "b",
            actor: Actor::Peer,
        },
    )
    .unwrap();
    assert_eq!(
        t.handle(
            T0,
            I::NewStarted {
                req: ReqRef::Peer(Ticket(0))
            }
        ),
        Ok(O::Proceed)
    );
    assert_eq!(t.get("b"), None);
}

// ---- prompts and turns ----

#[test]
fn prompt_on_an_unknown_session() {
    let mut t = idle("s1");
    expect_reject(
        t.handle(
            T0,
            I::Prompt {
                id: "nope",
                req: PEER_PROMPT,
            },
        ),
        -32600,
        "unknown sessionId: nope",
    );
    assert_eq!(
        t.handle(
            T0,
            I::Prompt {
                id: "nope",
                req: OUR_PROMPT
            }
        ),
        Err(UsageError::UnknownSession)
    );
}

#[test]
fn prompt_on_a_closed_session() {
    let mut t = table_with(&[("s1", S::Closed)]);
    expect_reject(
        t.handle(
            T0,
            I::Prompt {
                id: "s1",
                req: PEER_PROMPT,
            },
        ),
        -32600,
        "session s1 is not active",
    );
    assert_eq!(
        t.handle(
            T0,
            I::Prompt {
                id: "s1",
                req: OUR_PROMPT
            }
        ),
        Err(UsageError::SessionNotActive)
    );
}

#[test]
fn a_second_prompt_on_the_same_session_is_refused() {
    let mut t = running("s1", PEER_PROMPT);
    expect_reject(
        t.handle(
            T0,
            I::Prompt {
                id: "s1",
                req: ReqRef::Peer(Ticket(2)),
            },
        ),
        -32600,
        "session s1 already has an active turn",
    );
    let mut t = running("s1", OUR_PROMPT);
    assert_eq!(
        t.handle(
            T0,
            I::Prompt {
                id: "s1",
                req: ReqRef::Ours(RequestId(2))
            }
        ),
        Err(UsageError::TurnInProgress)
    );
}

#[test]
fn different_sessions_run_turns_concurrently() {
    let mut t = table_with(&[
        ("a", S::Active { turn: None }),
        ("b", S::Active { turn: None }),
    ]);
    let pa = ReqRef::Peer(Ticket(1));
    let pb = ReqRef::Peer(Ticket(2));
    assert_eq!(
        t.handle(T0, I::Prompt { id: "a", req: pa }),
        Ok(O::TurnStarted { prompt: pa })
    );
    assert_eq!(
        t.handle(T0, I::Prompt { id: "b", req: pb }),
        Ok(O::TurnStarted { prompt: pb })
    );
    let out = t.handle(
        T0,
        I::EndTurn {
            id: "b",
            prompt: pb,
            stop: StopReason::EndTurn,
        },
    );
    assert!(matches!(
        out,
        Ok(O::TurnEnded {
            stop: StopReason::EndTurn,
            ..
        })
    ));
    assert_eq!(
        t.get("a"),
        Some(S::Active {
            turn: Some(Turn::Running { prompt: pa })
        })
    );
}

#[test]
fn end_turn_answers_the_prompt_exactly_once() {
    let mut t = running("s1", PEER_PROMPT);
    let out = t.handle(
        T0,
        I::EndTurn {
            id: "s1",
            prompt: PEER_PROMPT,
            stop: StopReason::MaxTokens,
        },
    );
    let Ok(O::TurnEnded {
        session,
        prompt,
        stop,
        rewritten,
    }) = out
    else {
        panic!("{out:?}")
    };
    assert_eq!(
        (session.as_str(), prompt, stop, rewritten),
        ("s1", PEER_PROMPT, StopReason::MaxTokens, false)
    );
    assert_eq!(
        t.handle(
            T0,
            I::EndTurn {
                id: "s1",
                prompt: PEER_PROMPT,
                stop: StopReason::EndTurn
            }
        ),
        Err(UsageError::TurnAnswered)
    );
    assert_eq!(
        t.handle(
            T0,
            I::EndTurn {
                id: "zz",
                prompt: PEER_PROMPT,
                stop: StopReason::EndTurn
            }
        ),
        Err(UsageError::NoTurn)
    );
}

#[test]
fn updates_for_an_answered_turn_are_refused() {
    let mut t = running("s1", PEER_PROMPT);
    let update = I::Update {
        id: "s1",
        turn: Some(PEER_PROMPT),
        actor: Actor::Local,
    };
    assert_eq!(t.handle(T0, update), Ok(O::Proceed));
    t.handle(
        T0,
        I::EndTurn {
            id: "s1",
            prompt: PEER_PROMPT,
            stop: StopReason::EndTurn,
        },
    )
    .unwrap();
    assert_eq!(t.handle(T0, update), Err(UsageError::TurnAnswered));
    // An update outside any turn is still fine.
    assert_eq!(
        t.handle(
            T0,
            I::Update {
                id: "s1",
                turn: None,
                actor: Actor::Local
            }
        ),
        Ok(O::Proceed)
    );
    // An update tagged with another turn than the running one is refused too.
    t.handle(
        T0,
        I::Prompt {
            id: "s1",
            req: ReqRef::Peer(Ticket(8)),
        },
    )
    .unwrap();
    assert_eq!(t.handle(T0, update), Err(UsageError::TurnAnswered));
}

#[test]
fn updates_to_closed_sessions_are_refused() {
    let mut t = table_with(&[("s1", S::Closed)]);
    assert_eq!(
        t.handle(
            T0,
            I::Update {
                id: "s1",
                turn: None,
                actor: Actor::Local
            }
        ),
        Err(UsageError::SessionNotActive)
    );
}

#[test]
fn peer_updates_for_unknown_sessions_are_violations() {
    let mut t = idle("s1");
    assert_eq!(
        t.handle(
            T0,
            I::Update {
                id: "zz",
                turn: None,
                actor: Actor::Peer
            }
        ),
        Ok(O::Violation(SessionViolation::UpdateForUnknownSession))
    );
    assert_eq!(
        t.handle(
            T0,
            I::Update {
                id: "s1",
                turn: None,
                actor: Actor::Peer
            }
        ),
        Ok(O::Proceed)
    );
}

// ---- cancel ----

#[test]
fn cancel_notification_for_unknown_or_idle_sessions_is_silent() {
    let mut t = idle("s1");
    assert_eq!(
        t.handle(
            T0,
            I::Cancel {
                id: "zz",
                via: CancelVia::PeerNotification
            }
        ),
        Ok(O::Ignore)
    );
    assert_eq!(
        t.handle(
            T0,
            I::Cancel {
                id: "s1",
                via: CancelVia::PeerNotification
            }
        ),
        Ok(O::CancelNoop { answer: false })
    );
    assert_eq!(t.get("s1"), Some(S::Active { turn: None }));
}

#[test]
fn cancel_request_answers_empty_or_unknown_session() {
    let mut t = idle("s1");
    assert_eq!(
        t.handle(
            T0,
            I::Cancel {
                id: "s1",
                via: CancelVia::PeerRequest
            }
        ),
        Ok(O::CancelNoop { answer: true })
    );
    expect_reject(
        t.handle(
            T0,
            I::Cancel {
                id: "zz",
                via: CancelVia::PeerRequest,
            },
        ),
        -32600,
        "unknown sessionId: zz",
    );
    assert_eq!(
        t.handle(
            T0,
            I::Cancel {
                id: "zz",
                via: CancelVia::Local
            }
        ),
        Err(UsageError::UnknownSession)
    );
}

#[test]
fn cancel_of_a_closed_session_succeeds_quietly() {
    let mut t = table_with(&[("s1", S::Closed)]);
    assert_eq!(
        t.handle(
            T0,
            I::Cancel {
                id: "s1",
                via: CancelVia::PeerRequest
            }
        ),
        Ok(O::CancelNoop { answer: true })
    );
}

#[test]
fn cancel_moves_the_turn_to_cancelling_once() {
    let mut t = running("s1", PEER_PROMPT);
    assert_eq!(
        t.handle(
            Instant(150),
            I::Cancel {
                id: "s1",
                via: CancelVia::PeerNotification
            }
        ),
        Ok(O::CancelStarted {
            prompt: PEER_PROMPT,
            answer: false
        })
    );
    let cancelling = S::Active {
        turn: Some(Turn::Cancelling {
            prompt: PEER_PROMPT,
            since: Instant(150),
        }),
    };
    assert_eq!(t.get("s1"), Some(cancelling));
    // Idempotent.
    assert_eq!(
        t.handle(
            Instant(160),
            I::Cancel {
                id: "s1",
                via: CancelVia::PeerRequest
            }
        ),
        Ok(O::CancelNoop { answer: true })
    );
    assert_eq!(t.get("s1"), Some(cancelling));
}

#[test]
fn a_cancelled_turn_ends_cancelled_whatever_the_app_says() {
    for stop in StopReason::ALL {
        let mut t = cancelling("s1", PEER_PROMPT);
        let out = t.handle(
            T0,
            I::EndTurn {
                id: "s1",
                prompt: PEER_PROMPT,
                stop,
            },
        );
        let Ok(O::TurnEnded {
            stop: sent,
            rewritten,
            ..
        }) = out
        else {
            panic!("{out:?}")
        };
        assert_eq!(sent, StopReason::Cancelled);
        assert_eq!(rewritten, stop != StopReason::Cancelled);
        assert_eq!(t.get("s1"), Some(S::Active { turn: None }));
    }
}

#[test]
fn client_side_cancel_then_answer_reports_cancelled() {
    let mut t = running("s1", OUR_PROMPT);
    assert_eq!(
        t.handle(
            T0,
            I::Cancel {
                id: "s1",
                via: CancelVia::Local
            }
        ),
        Ok(O::CancelStarted {
            prompt: OUR_PROMPT,
            answer: false
        })
    );
    let out = t.handle(
        T0,
        I::EndTurn {
            id: "s1",
            prompt: OUR_PROMPT,
            stop: StopReason::EndTurn,
        },
    );
    assert!(matches!(
        out,
        Ok(O::TurnEnded {
            stop: StopReason::Cancelled,
            rewritten: true,
            ..
        })
    ));
}

// ---- busy gate ----

#[test]
fn configuration_changes_are_refused_during_a_turn() {
    for method in [
        "session/set_mode",
        "session/set_config_option",
        "_agentao.cn/set_model",
    ] {
        let mut t = running("s1", PEER_PROMPT);
        expect_reject(
            t.handle(
                T0,
                I::Configure {
                    id: "s1",
                    method,
                    actor: Actor::Peer,
                },
            ),
            -32600,
            &format!("{method} rejected: session s1 has an active turn; retry after it completes"),
        );
        assert_eq!(
            t.handle(
                T0,
                I::Configure {
                    id: "s1",
                    method,
                    actor: Actor::Local
                }
            ),
            Err(UsageError::TurnInProgress)
        );
    }
}

#[test]
fn configuration_changes_pass_when_idle_and_name_unknown_sessions() {
    let mut t = idle("s1");
    let method = "session/set_mode";
    assert_eq!(
        t.handle(
            T0,
            I::Configure {
                id: "s1",
                method,
                actor: Actor::Peer
            }
        ),
        Ok(O::Proceed)
    );
    expect_reject(
        t.handle(
            T0,
            I::Configure {
                id: "s9",
                method,
                actor: Actor::Peer,
            },
        ),
        -32600,
        "unknown sessionId: s9",
    );
}

// ---- close and EOF ----

#[test]
fn close_ends_a_running_turn_and_later_answers_are_refused() {
    let mut t = running("s1", PEER_PROMPT);
    assert_eq!(
        t.handle(
            T0,
            I::Close {
                id: "s1",
                actor: Actor::Peer
            }
        ),
        Ok(O::Closed {
            ended: Some(PEER_PROMPT)
        })
    );
    assert_eq!(t.get("s1"), Some(S::Closed));
    assert_eq!(
        t.handle(
            T0,
            I::EndTurn {
                id: "s1",
                prompt: PEER_PROMPT,
                stop: StopReason::EndTurn
            }
        ),
        Err(UsageError::TurnAnswered)
    );
    assert_eq!(
        t.handle(
            T0,
            I::Close {
                id: "s1",
                actor: Actor::Peer
            }
        ),
        Ok(O::Closed { ended: None })
    );
}

#[test]
fn eof_ends_every_running_turn_cancelled_and_closes_everything() {
    let mut t = table_with(&[
        (
            "a",
            S::Active {
                turn: Some(Turn::Running {
                    prompt: ReqRef::Peer(Ticket(1)),
                }),
            },
        ),
        ("b", S::Active { turn: None }),
        (
            "c",
            S::Active {
                turn: Some(Turn::Cancelling {
                    prompt: ReqRef::Peer(Ticket(2)),
                    since: T0,
                }),
            },
        ),
    ]);
    let mut ended = Vec::new();
    for _ in 0..10 {
        match t.handle_eof(T0) {
            Some(O::TurnEnded {
                session,
                prompt,
                stop,
                ..
            }) => {
                assert_eq!(stop, StopReason::Cancelled);
                ended.push((session.as_str().to_owned(), prompt));
            }
            Some(other) => panic!("{other:?}"),
            None => break,
        }
    }
    assert_eq!(
        ended,
        [
            ("a".to_owned(), ReqRef::Peer(Ticket(1))),
            ("c".to_owned(), ReqRef::Peer(Ticket(2)))
        ]
    );
    assert!(t.rows().iter().all(|r| r.state == S::Closed));
    assert_eq!(
        t.handle(
            T0,
            I::Prompt {
                id: "b",
                req: OUR_PROMPT
            }
        ),
        Err(UsageError::Closed)
    );
    assert_eq!(
        t.handle(
            T0,
            I::Prompt {
                id: "b",
                req: PEER_PROMPT
            }
        ),
        Ok(O::Ignore)
    );
}

#[test]
fn overlong_session_ids_are_unknown_not_a_panic() {
    let mut t = idle("s1");
    let id = "y".repeat(10_000);
    expect_reject(
        t.handle(
            T0,
            I::Prompt {
                id: &id,
                req: PEER_PROMPT,
            },
        ),
        -32600,
        &format!("unknown sessionId: {id}"),
    );
    assert_eq!(t.restore(&id, S::Closed), Err(UsageError::IdTooLong));
}

#[test]
fn a_failed_turn_is_reported_failed_unless_cancelled() {
    let mut t = running("s1", PEER_PROMPT);
    let out = t.handle(
        T0,
        I::FailTurn {
            id: "s1",
            prompt: PEER_PROMPT,
        },
    );
    let Ok(O::TurnFailed { session, prompt }) = out else {
        panic!("{out:?}")
    };
    assert_eq!((session.as_str(), prompt), ("s1", PEER_PROMPT));
    assert_eq!(
        t.handle(
            T0,
            I::FailTurn {
                id: "s1",
                prompt: PEER_PROMPT
            }
        ),
        Err(UsageError::TurnAnswered)
    );
    let mut t = cancelling("s1", PEER_PROMPT);
    let out = t.handle(
        T0,
        I::FailTurn {
            id: "s1",
            prompt: PEER_PROMPT,
        },
    );
    assert!(matches!(
        out,
        Ok(O::TurnEnded {
            stop: StopReason::Cancelled,
            rewritten: true,
            ..
        })
    ));
}

#[test]
#[cfg(feature = "alloc")] // `Vec` storage
fn a_growable_table_holds_as_many_sessions_as_its_limit() {
    use acp_core::machine::session::Sessions;
    let mut t = Sessions::new(Vec::new(), 50);
    for n in 0..50u64 {
        let req = ReqRef::Peer(Ticket(n));
        t.handle(T0, I::NewStarted { req }).unwrap();
        let id = format!("s{n}");
        assert_eq!(t.handle(T0, I::Opened { req, id: &id }), Ok(O::Opened));
    }
    expect_reject(
        t.handle(
            T0,
            I::NewStarted {
                req: ReqRef::Peer(Ticket(99)),
            },
        ),
        -32603,
        "Internal error: too many sessions (limit 50)",
    );
    assert_eq!(t.get("s49"), Some(S::Active { turn: None }));
}

#[test]
fn the_limit_never_exceeds_the_storage() {
    use acp_core::machine::session::{Session, Sessions};
    let mut t = Sessions::new(heapless::Vec::<Session, 2>::new(), 10);
    assert_eq!(t.capacity(), 2);
    t.handle(
        T0,
        I::NewStarted {
            req: ReqRef::Peer(Ticket(0)),
        },
    )
    .unwrap();
    t.handle(
        T0,
        I::NewStarted {
            req: ReqRef::Peer(Ticket(1)),
        },
    )
    .unwrap();
    expect_reject(
        t.handle(
            T0,
            I::NewStarted {
                req: ReqRef::Peer(Ticket(2)),
            },
        ),
        -32603,
        "Internal error: too many sessions (limit 2)",
    );
}

#[test]
fn a_cancel_with_an_earlier_now_keeps_time_monotonic() {
    let mut t = running("s1", PEER_PROMPT);
    t.handle(
        Instant(500),
        I::Configure {
            id: "zz",
            method: "m",
            actor: Actor::Peer,
        },
    )
    .unwrap();
    t.handle(
        Instant(20),
        I::Cancel {
            id: "s1",
            via: CancelVia::PeerNotification,
        },
    )
    .unwrap();
    assert_eq!(
        t.get("s1"),
        Some(S::Active {
            turn: Some(Turn::Cancelling {
                prompt: PEER_PROMPT,
                since: Instant(500)
            })
        })
    );
}

/// A transcript (rustls habit): the state names one session goes through in a whole
/// scenario, compared exactly.
#[test]
fn transcript_of_a_cancelled_turn_and_a_reload() {
    let mut t = Table::default();
    let mut names = Vec::new();
    let mut record = |t: &Table| names.push(t.get("s1").map_or("-", |s| s.name()));
    let new = ReqRef::Peer(Ticket(0));
    t.handle(T0, I::NewStarted { req: new }).unwrap();
    record(&t);
    t.handle(T0, I::Opened { req: new, id: "s1" }).unwrap();
    record(&t);
    t.handle(
        T0,
        I::Prompt {
            id: "s1",
            req: PEER_PROMPT,
        },
    )
    .unwrap();
    record(&t);
    t.handle(
        T0,
        I::Cancel {
            id: "s1",
            via: CancelVia::PeerNotification,
        },
    )
    .unwrap();
    record(&t);
    t.handle(
        T0,
        I::EndTurn {
            id: "s1",
            prompt: PEER_PROMPT,
            stop: StopReason::Refusal,
        },
    )
    .unwrap();
    record(&t);
    t.handle(
        T0,
        I::Close {
            id: "s1",
            actor: Actor::Peer,
        },
    )
    .unwrap();
    record(&t);
    let load = ReqRef::Peer(Ticket(5));
    t.handle(
        T0,
        I::LoadStarted {
            id: "s1",
            req: load,
        },
    )
    .unwrap();
    record(&t);
    t.handle(
        T0,
        I::Opened {
            req: load,
            id: "s1",
        },
    )
    .unwrap();
    record(&t);
    assert_eq!(
        names,
        [
            "-",
            "Active",
            "Active(Running)",
            "Active(Cancelling)",
            "Active",
            "Closed",
            "Creating",
            "Active"
        ]
    );
}
