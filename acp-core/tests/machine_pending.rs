//! The tables of requests in flight, both directions: each request settled exactly once
//! (R-RPC-1, R-RPC-2, R-ID-6, R-RPC-4, R-CANCEL-3, R-CANCEL-4).

use core::time::Duration;

use acp_core::machine::pending::{
    CancelRequestVerdict, FixedOwing, FixedPending, MethodKind, Outgoing, OutgoingState, Owed,
    OwedState, Owing, Pending, Received, ReplyKind, ResponseVerdict, Settle, Settled,
    SettledOutcome,
};
use acp_core::machine::{Instant, Rejection, RequestId, Table, Ticket, UsageError};
use acp_core::wire::ErrorCode;

type Ours = FixedPending<4>;
type Theirs = FixedOwing<4>;

const T0: Instant = Instant(1_000);

fn ms(n: u64) -> Option<Duration> {
    Some(Duration::from_millis(n))
}

fn drain<S: Table<Outgoing>>(p: &mut Pending<S>) -> Vec<Settled> {
    let mut out = Vec::new();
    for _ in 0..100 {
        match p.poll_settled() {
            Some(s) => out.push(s),
            None => return out,
        }
    }
    panic!("poll_settled never ran dry");
}

// ---- requests we send ----

/// R-ID-5: our request ids are integers counting up from 0.
#[test]
fn ids_count_up_from_zero() {
    let mut p = Ours::default();
    for n in 0..3 {
        assert_eq!(p.send(T0, MethodKind::Other, None, None), Ok(RequestId(n)));
    }
}

#[test]
fn an_answer_settles_once_and_a_second_is_unknown() {
    let mut p = Ours::default();
    let id = p
        .send(T0, MethodKind::Permission, Some("s1"), None)
        .unwrap();
    let verdict = p.handle_response(T0, Some(id.0), ReplyKind::Result);
    let ResponseVerdict::Settled(s) = verdict else {
        panic!("{verdict:?}")
    };
    assert_eq!(
        (s.id, s.kind, s.outcome),
        (id, MethodKind::Permission, SettledOutcome::Answered)
    );
    assert_eq!(s.session.unwrap().as_str(), "s1");
    assert_eq!(
        p.handle_response(T0, Some(id.0), ReplyKind::Result),
        ResponseVerdict::Unknown
    );
    assert!(p.rows().is_empty());
}

#[test]
fn errors_and_malformed_answers_settle_too() {
    let mut p = Ours::default();
    let a = p.send(T0, MethodKind::Other, None, None).unwrap();
    let b = p.send(T0, MethodKind::Other, None, None).unwrap();
    let ResponseVerdict::Settled(sa) =
        p.handle_response(T0, Some(a.0), ReplyKind::Error(ErrorCode::METHOD_NOT_FOUND))
    else {
        panic!()
    };
    assert_eq!(sa.outcome, SettledOutcome::Error(ErrorCode(-32601)));
    // Agentao hangs on `{"code":"bad"}`; we settle (R-RPC-4).
    let ResponseVerdict::Settled(sb) = p.handle_response(T0, Some(b.0), ReplyKind::Malformed)
    else {
        panic!()
    };
    assert_eq!(sb.outcome, SettledOutcome::Malformed);
}

#[test]
fn responses_to_ids_we_never_used_are_unknown() {
    let mut p = Ours::default();
    p.send(T0, MethodKind::Other, None, None).unwrap();
    assert_eq!(
        p.handle_response(T0, Some(99), ReplyKind::Result),
        ResponseVerdict::Unknown
    );
    assert_eq!(
        p.handle_response(T0, None, ReplyKind::Result),
        ResponseVerdict::Unknown
    );
    assert_eq!(p.in_flight(), 1);
}

#[test]
fn timeouts_settle_every_expired_request_and_move_the_deadline() {
    let mut p = Ours::default();
    let a = p
        .send(T0, MethodKind::Permission, Some("s1"), ms(100))
        .unwrap();
    let b = p
        .send(T0, MethodKind::AskUser, Some("s1"), ms(300))
        .unwrap();
    let c = p.send(T0, MethodKind::Other, None, ms(100)).unwrap();
    p.send(T0, MethodKind::Other, None, None).unwrap();
    assert_eq!(p.poll_timeout(), Some(Instant(1_100)));

    p.handle_timeout(Instant(1_099));
    assert!(drain(&mut p).is_empty());

    p.handle_timeout(Instant(1_100));
    let settled: Vec<_> = drain(&mut p)
        .into_iter()
        .map(|s| (s.id, s.outcome))
        .collect();
    assert_eq!(
        settled,
        [(a, SettledOutcome::TimedOut), (c, SettledOutcome::TimedOut)]
    );
    assert_eq!(p.poll_timeout(), Some(Instant(1_300)));

    // A late answer is ignored and reported, once.
    assert_eq!(
        p.handle_response(T0, Some(a.0), ReplyKind::Result),
        ResponseVerdict::Late {
            id: a,
            kind: MethodKind::Permission
        }
    );
    assert_eq!(
        p.handle_response(T0, Some(a.0), ReplyKind::Result),
        ResponseVerdict::Unknown
    );
    assert_eq!(
        p.get(b).unwrap().state,
        OutgoingState::Waiting {
            deadline: Some(Instant(1_300)),
            cancel_sent: false
        }
    );
}

#[test]
fn an_earlier_now_is_ignored() {
    let mut p = Ours::default();
    p.send(Instant(500), MethodKind::Other, None, ms(100))
        .unwrap();
    p.handle_timeout(Instant(700));
    assert_eq!(drain(&mut p).len(), 1);
    // The clock went backwards: the deadline is counted from the latest time seen.
    p.send(Instant(10), MethodKind::Other, None, ms(100))
        .unwrap();
    assert_eq!(p.poll_timeout(), Some(Instant(800)));
}

#[test]
fn cancelling_a_session_settles_its_permission_and_ask_user_requests_only() {
    let mut p = FixedPending::<8>::default();
    let perm = p
        .send(T0, MethodKind::Permission, Some("s1"), None)
        .unwrap();
    let ask = p.send(T0, MethodKind::AskUser, Some("s1"), None).unwrap();
    let fs = p.send(T0, MethodKind::Fs, Some("s1"), None).unwrap();
    let other = p
        .send(T0, MethodKind::Permission, Some("s2"), None)
        .unwrap();
    assert_eq!(p.cancel_session("s1"), 2);
    let settled: Vec<_> = drain(&mut p)
        .into_iter()
        .map(|s| (s.id, s.outcome))
        .collect();
    assert_eq!(
        settled,
        [
            (perm, SettledOutcome::Cancelled),
            (ask, SettledOutcome::Cancelled)
        ]
    );
    assert!(matches!(
        p.get(fs).unwrap().state,
        OutgoingState::Waiting { .. }
    ));
    assert!(matches!(
        p.get(other).unwrap().state,
        OutgoingState::Waiting { .. }
    ));
    // Cancelling again settles nothing more.
    assert_eq!(p.cancel_session("s1"), 0);
    // The client's late answer is ignored and reported.
    assert_eq!(
        p.handle_response(T0, Some(perm.0), ReplyKind::Result),
        ResponseVerdict::Late {
            id: perm,
            kind: MethodKind::Permission
        }
    );
}

#[test]
fn cancel_request_keeps_waiting_for_the_answer() {
    let mut p = Ours::default();
    let id = p.send(T0, MethodKind::Terminal, None, None).unwrap();
    assert_eq!(p.request_cancel(id), Ok(()));
    assert_eq!(
        p.get(id).unwrap().state,
        OutgoingState::Waiting {
            deadline: None,
            cancel_sent: true
        }
    );
    let ResponseVerdict::Settled(s) = p.handle_response(
        T0,
        Some(id.0),
        ReplyKind::Error(ErrorCode::REQUEST_CANCELLED),
    ) else {
        panic!()
    };
    assert_eq!(s.outcome, SettledOutcome::Error(ErrorCode(-32800)));
    assert_eq!(p.request_cancel(id), Err(UsageError::AlreadySettled));
}

#[test]
fn a_request_never_written_can_be_withdrawn_once() {
    let mut p = Ours::default();
    let id = p.send(T0, MethodKind::Prompt, Some("s1"), ms(5)).unwrap();
    assert_eq!(p.withdraw(id), Ok(()));
    assert!(p.rows().is_empty());
    assert_eq!(p.poll_timeout(), None);
    assert_eq!(p.withdraw(id), Err(UsageError::AlreadySettled));
    // Its id is not reused.
    assert_eq!(p.send(T0, MethodKind::Other, None, None), Ok(RequestId(1)));
}

#[test]
fn eof_settles_everything_and_leaves_nothing() {
    let mut p = Ours::default();
    let a = p.send(T0, MethodKind::Prompt, Some("s1"), ms(10)).unwrap();
    let b = p
        .send(T0, MethodKind::Permission, Some("s1"), None)
        .unwrap();
    let c = p.send(T0, MethodKind::Other, None, ms(10)).unwrap();
    p.handle_timeout(Instant(2_000)); // a and c time out, b waits
    let first = p.poll_settled().unwrap();
    assert_eq!(first.id, a);
    p.handle_eof(Instant(2_001));
    let rest: Vec<_> = drain(&mut p)
        .into_iter()
        .map(|s| (s.id, s.outcome))
        .collect();
    assert_eq!(
        rest,
        [
            (b, SettledOutcome::Disconnected),
            (c, SettledOutcome::TimedOut)
        ]
    );
    assert!(p.rows().is_empty());
    assert_eq!(p.poll_timeout(), None);
    assert_eq!(
        p.send(T0, MethodKind::Other, None, None),
        Err(UsageError::Closed)
    );
}

#[test]
fn the_in_flight_limit_is_enforced_and_abandoned_rows_make_room() {
    let mut p = Ours::default();
    for _ in 0..4 {
        p.send(T0, MethodKind::Other, None, ms(1)).unwrap();
    }
    assert_eq!(
        p.send(T0, MethodKind::Other, None, None),
        Err(UsageError::TooManyInFlight)
    );
    p.handle_timeout(Instant(5_000));
    assert_eq!(drain(&mut p).len(), 4);
    // All four are abandoned (kept for late answers) but no longer in flight.
    assert_eq!(p.in_flight(), 0);
    let id = p.send(T0, MethodKind::Other, None, None).unwrap();
    assert_eq!(id, RequestId(4));
    // The oldest abandoned row was forgotten to make room.
    assert_eq!(
        p.handle_response(T0, Some(0), ReplyKind::Result),
        ResponseVerdict::Unknown
    );
    assert!(matches!(
        p.handle_response(T0, Some(1), ReplyKind::Result),
        ResponseVerdict::Late { .. }
    ));
}

#[test]
fn overlong_session_ids_are_refused_locally() {
    let mut p = Ours::default();
    let id = "s".repeat(500);
    assert_eq!(
        p.send(T0, MethodKind::Permission, Some(&id), None),
        Err(UsageError::IdTooLong)
    );
    assert_eq!(
        UsageError::IdTooLong.to_string(),
        "id longer than its fixed capacity"
    );
}

// ---- requests the peer sent us ----

fn owed<S: Table<Owed>>(
    t: &mut Owing<S>,
    raw: &str,
    kind: MethodKind,
    session: Option<&str>,
) -> Ticket {
    match t.receive(raw, kind, session) {
        Received::Owed(ticket) => ticket,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_app_answers_each_request_once() {
    let mut t = Theirs::default();
    let ticket = owed(&mut t, "\"x\"", MethodKind::NewSession, None);
    let row = t.answer(ticket).unwrap();
    assert_eq!(row.id.as_raw(), "\"x\"");
    assert_eq!(row.kind, MethodKind::NewSession);
    assert_eq!(t.answer(ticket).unwrap_err(), UsageError::AlreadySettled);
    assert_eq!(
        UsageError::AlreadySettled.to_string(),
        "request already settled"
    );
}

#[test]
fn ids_are_kept_exactly_even_when_repeated() {
    let mut t = Theirs::default();
    let a = owed(&mut t, "18446744073709551616", MethodKind::Other, None);
    let b = owed(&mut t, "18446744073709551616", MethodKind::Other, None);
    assert_ne!(a, b);
    assert_eq!(t.answer(b).unwrap().id.as_raw(), "18446744073709551616");
    assert_eq!(t.answer(a).unwrap().id.as_raw(), "18446744073709551616");
}

#[test]
fn cancel_request_answers_32800_and_refuses_the_later_app_answer() {
    let mut t = Theirs::default();
    let ticket = owed(&mut t, "7", MethodKind::Fs, None);
    assert_eq!(
        t.handle_cancel_request("7"),
        CancelRequestVerdict::Settling(ticket)
    );
    let (row, how) = t.poll_settled().unwrap();
    assert_eq!((row.ticket, how), (ticket, Settle::CancelRequested));
    let rejection = how.rejection(row.kind).unwrap();
    assert_eq!(rejection, Rejection::RequestCancelled);
    assert_eq!(rejection.code(), ErrorCode(-32800));
    assert_eq!(rejection.to_string(), "Request cancelled");
    assert_eq!(t.answer(ticket), Err(UsageError::AlreadySettled));
    // Already answered: the cancel is ignored.
    assert_eq!(t.handle_cancel_request("7"), CancelRequestVerdict::Unknown);
    assert_eq!(t.poll_settled(), None);
}

#[test]
fn cancel_request_of_a_prompt_cancels_the_turn_instead() {
    let mut t = Theirs::default();
    let ticket = owed(&mut t, "1", MethodKind::Prompt, Some("s1"));
    assert_eq!(
        t.handle_cancel_request("1"),
        CancelRequestVerdict::CancelTurn { ticket }
    );
    assert_eq!(t.get(ticket).unwrap().state, OwedState::Open);
    assert!(t.answer(ticket).is_ok());
}

#[test]
fn cancelling_a_session_answers_its_permission_and_ask_user_requests_as_cancelled() {
    let mut t = FixedOwing::<8>::default();
    let perm = owed(&mut t, "1", MethodKind::Permission, Some("s1"));
    let ask = owed(&mut t, "2", MethodKind::AskUser, Some("s1"));
    let fs = owed(&mut t, "3", MethodKind::Fs, Some("s1"));
    let other = owed(&mut t, "4", MethodKind::Permission, Some("s2"));
    assert_eq!(t.cancel_session("s1"), 2);
    let mut settled = Vec::new();
    while let Some((row, how)) = t.poll_settled() {
        assert_eq!(how, Settle::SessionCancelled);
        assert_eq!(
            how.rejection(row.kind),
            None,
            "answered with a cancelled result"
        );
        settled.push(row.ticket);
    }
    assert_eq!(settled, [perm, ask]);
    assert!(t.answer(fs).is_ok());
    assert!(t.answer(other).is_ok());
}

#[test]
fn eof_answers_everything_still_owed() {
    let mut t = Theirs::default();
    let prompt = owed(&mut t, "1", MethodKind::Prompt, Some("s1"));
    let fs = owed(&mut t, "\"two\"", MethodKind::Fs, Some("s1"));
    t.handle_eof();
    let (row, how) = t.poll_settled().unwrap();
    assert_eq!((row.ticket, how), (prompt, Settle::ConnectionClosed));
    assert_eq!(
        how.rejection(row.kind),
        None,
        "prompts end with stopReason cancelled"
    );
    let (row, how) = t.poll_settled().unwrap();
    assert_eq!(row.ticket, fs);
    let rejection = how.rejection(row.kind).unwrap();
    assert_eq!(rejection.code(), ErrorCode(-32800));
    assert_eq!(
        rejection.to_string(),
        "Request cancelled: connection closed"
    );
    assert_eq!(t.poll_settled(), None);
    assert!(t.rows().is_empty());
    assert_eq!(
        t.receive("9", MethodKind::Other, None),
        Received::Reject(Rejection::ConnectionClosed)
    );
}

/// R-RPC-6: a request past the table's room is `-32603` at once.
#[test]
fn too_many_peer_requests_are_refused_at_once() {
    let mut t = Theirs::default();
    for n in 0..4 {
        owed(&mut t, &n.to_string(), MethodKind::Other, None);
    }
    let Received::Reject(r) = t.receive("5", MethodKind::Other, None) else {
        panic!()
    };
    assert_eq!(r.code(), ErrorCode(-32603));
    assert_eq!(
        r.to_string(),
        "Internal error: too many requests in flight (limit 4)"
    );
}

#[test]
fn overlong_peer_ids_are_refused_at_once() {
    let mut t = Theirs::default();
    let raw = format!("\"{}\"", "i".repeat(300));
    let Received::Reject(r) = t.receive(&raw, MethodKind::Other, None) else {
        panic!()
    };
    assert_eq!(r.code(), ErrorCode(-32600));
    assert_eq!(r.to_string(), "Invalid Request: id longer than 128 bytes");
}

#[test]
fn method_kinds_are_recognised() {
    assert_eq!(
        MethodKind::of("session/request_permission"),
        MethodKind::Permission
    );
    assert_eq!(MethodKind::of("_agentao.cn/ask_user"), MethodKind::AskUser);
    assert_eq!(MethodKind::of("fs/read_text_file"), MethodKind::Fs);
    assert_eq!(MethodKind::of("terminal/create"), MethodKind::Terminal);
    assert_eq!(MethodKind::of("session/prompt"), MethodKind::Prompt);
    assert_eq!(MethodKind::of("session/promptx"), MethodKind::Other);
}

// ---- the per-row transition tables, h11 style ----

use acp_core::machine::pending::{
    OutgoingEffect, OutgoingInput, OwedEffect, OwedInput, step_outgoing, step_owed,
};

fn outgoing_states() -> Vec<OutgoingState> {
    let mut v = vec![OutgoingState::Abandoned];
    for deadline in [None, Some(Instant(10))] {
        for cancel_sent in [false, true] {
            v.push(OutgoingState::Waiting {
                deadline,
                cancel_sent,
            });
        }
    }
    for o in [
        SettledOutcome::TimedOut,
        SettledOutcome::Cancelled,
        SettledOutcome::Disconnected,
    ] {
        v.push(OutgoingState::Settled(o));
    }
    v
}

fn outgoing_inputs() -> Vec<OutgoingInput> {
    vec![
        OutgoingInput::Reply(ReplyKind::Result),
        OutgoingInput::Reply(ReplyKind::Malformed),
        OutgoingInput::Reply(ReplyKind::Error(ErrorCode(-1))),
        OutgoingInput::Timeout(Instant(9)),
        OutgoingInput::Timeout(Instant(10)),
        OutgoingInput::SessionCancelled,
        OutgoingInput::CancelRequestSent,
        OutgoingInput::Withdrawn,
        OutgoingInput::Eof,
        OutgoingInput::Reported { eof: false },
        OutgoingInput::Reported { eof: true },
    ]
}

#[test]
fn outgoing_table_settles_each_request_once() {
    for state in outgoing_states() {
        for input in outgoing_inputs() {
            let (next, effect) = step_outgoing(state, input);
            let waiting = matches!(state, OutgoingState::Waiting { .. });
            // An answer or a report is only ever produced once: the row leaves or becomes
            // abandoned, which reports nothing more.
            if let OutgoingEffect::Answered(_) = effect {
                assert!(waiting && next.is_none(), "{state:?} {input:?}");
            }
            if let OutgoingEffect::Report(o) = effect {
                assert_eq!(state, OutgoingState::Settled(o));
                assert!(matches!(next, None | Some(OutgoingState::Abandoned)));
            }
            if effect == OutgoingEffect::Queued {
                assert!(
                    waiting,
                    "only a waiting request can be settled: {state:?} {input:?}"
                );
                assert!(matches!(next, Some(OutgoingState::Settled(_))));
            }
            // EOF leaves nothing waiting.
            if input == OutgoingInput::Eof {
                assert!(!matches!(next, Some(OutgoingState::Waiting { .. })));
                assert_ne!(next, Some(OutgoingState::Abandoned));
            }
            // After EOF a reported settlement leaves the table.
            if input == (OutgoingInput::Reported { eof: true })
                && matches!(state, OutgoingState::Settled(_))
            {
                assert_eq!(next, None);
            }
        }
    }
}

#[test]
fn owed_table_answers_each_request_once() {
    let states = [
        OwedState::Open,
        OwedState::Settling(Settle::CancelRequested),
        OwedState::Settling(Settle::SessionCancelled),
        OwedState::Settling(Settle::ConnectionClosed),
    ];
    let inputs = [
        OwedInput::AppAnswer,
        OwedInput::CancelRequest,
        OwedInput::SessionCancelled,
        OwedInput::Eof,
        OwedInput::Reported,
    ];
    for kind in [MethodKind::Prompt, MethodKind::Permission, MethodKind::Fs] {
        for state in states {
            for input in inputs {
                let (next, effect) = step_owed(kind, state, input);
                let answers = matches!(effect, OwedEffect::Answered | OwedEffect::Report(_));
                // Answering removes the row; nothing else does.
                assert_eq!(answers, next.is_none(), "{kind:?} {state:?} {input:?}");
                if state != OwedState::Open {
                    assert_ne!(
                        effect,
                        OwedEffect::Answered,
                        "settled requests refuse the app"
                    );
                }
                if input == OwedInput::Eof {
                    assert_ne!(next, Some(OwedState::Open));
                }
            }
        }
    }
}
