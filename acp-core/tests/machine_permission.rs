//! Reading permission and ask_user answers, and the `*_always` memory (R-PERM-3, R-PERM-4,
//! R-ASK-1).

use acp_core::machine::ask_user::{
    self, AskUserReply, AskUserResolution, UNAVAILABLE, Unavailable,
};
use acp_core::machine::pending::SettledOutcome;
use acp_core::machine::permission::{
    FixedPermissionMemory, PermissionChoice as Opt, PermissionDecision as D, PermissionReply as R,
    RejectReason, decide,
};
use acp_core::wire::ErrorCode;

#[test]
fn the_four_options_use_their_kind_as_id() {
    let ids: Vec<_> = Opt::ALL.iter().map(|o| o.id()).collect();
    assert_eq!(
        ids,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    let labels: Vec<_> = Opt::ALL.iter().map(|o| o.label()).collect();
    assert_eq!(
        labels,
        ["Allow once", "Always allow", "Reject once", "Always reject"]
    );
    for o in Opt::ALL {
        assert_eq!(Opt::from_id(o.id()), Some(o));
    }
}

#[test]
fn nested_and_flat_shapes_read_the_same() {
    for option in Opt::ALL {
        let expected = if option.allows() {
            D::Allowed(option)
        } else {
            D::Rejected(RejectReason::Chosen(option))
        };
        let nested = R::Nested {
            outcome: Some("selected"),
            option_id: Some(option.id()),
        };
        let flat = R::Flat {
            outcome: "selected",
            option_id: Some(option.id()),
        };
        assert_eq!(decide(nested), expected, "{option}");
        assert_eq!(decide(flat), expected, "{option}");
    }
}

#[test]
fn cancelled_outcomes_cancel() {
    assert_eq!(
        decide(R::Nested {
            outcome: Some("cancelled"),
            option_id: None
        }),
        D::Cancelled
    );
    assert_eq!(
        decide(R::Flat {
            outcome: "cancelled",
            option_id: None
        }),
        D::Cancelled
    );
    assert_eq!(decide(R::Settled(SettledOutcome::Cancelled)), D::Cancelled);
    assert_eq!(
        decide(R::Settled(SettledOutcome::Disconnected)),
        D::Cancelled
    );
}

#[test]
fn anything_unreadable_is_rejected() {
    let cases = [
        (
            R::Nested {
                outcome: Some("selected"),
                option_id: Some("yes"),
            },
            RejectReason::UnknownOption,
        ),
        (
            R::Flat {
                outcome: "selected",
                option_id: Some("ALLOW_ONCE"),
            },
            RejectReason::UnknownOption,
        ),
        (
            R::Nested {
                outcome: Some("selected"),
                option_id: None,
            },
            RejectReason::Malformed,
        ),
        (
            R::Nested {
                outcome: None,
                option_id: Some("allow_once"),
            },
            RejectReason::Malformed,
        ),
        (
            R::Nested {
                outcome: Some("approved"),
                option_id: Some("allow_once"),
            },
            RejectReason::UnknownOutcome,
        ),
        (R::Malformed, RejectReason::Malformed),
        (
            R::Settled(SettledOutcome::Malformed),
            RejectReason::Malformed,
        ),
        (
            R::Settled(SettledOutcome::Error(ErrorCode::METHOD_NOT_FOUND)),
            RejectReason::Error(ErrorCode(-32601)),
        ),
        (R::Settled(SettledOutcome::TimedOut), RejectReason::TimedOut),
    ];
    for (reply, reason) in cases {
        let decision = decide(reply);
        assert_eq!(decision, D::Rejected(reason), "{reply:?}");
        assert!(!decision.is_allowed());
        assert_eq!(decision.remembered(), None);
    }
}

#[test]
fn only_always_answers_are_remembered_per_session_per_tool() {
    let mut memory = FixedPermissionMemory::<4>::default();
    assert!(!memory.record("s1", "execute:ls", D::Allowed(Opt::AllowOnce)));
    assert!(!memory.record("s1", "execute:ls", D::Cancelled));
    assert_eq!(memory.recall("s1", "execute:ls"), None);

    assert!(memory.record("s1", "execute:ls", D::Allowed(Opt::AllowAlways)));
    assert!(memory.record(
        "s1",
        "edit:write",
        D::Rejected(RejectReason::Chosen(Opt::RejectAlways))
    ));
    assert_eq!(memory.recall("s1", "execute:ls"), Some(true));
    assert_eq!(memory.recall("s1", "edit:write"), Some(false));
    // Never shared between sessions.
    assert_eq!(memory.recall("s2", "execute:ls"), None);
    // A later always answer replaces the earlier one.
    assert!(memory.record(
        "s1",
        "execute:ls",
        D::Rejected(RejectReason::Chosen(Opt::RejectAlways))
    ));
    assert_eq!(memory.recall("s1", "execute:ls"), Some(false));
    assert_eq!(memory.rows().len(), 2);

    memory.forget_session("s1");
    assert_eq!(memory.recall("s1", "edit:write"), None);
    assert!(memory.rows().is_empty());
}

#[test]
fn a_full_memory_forgets_the_oldest_answer() {
    let mut memory = FixedPermissionMemory::<2>::default();
    let always = D::Allowed(Opt::AllowAlways);
    assert!(memory.record("s", "a", always));
    assert!(memory.record("s", "b", always));
    assert!(memory.record("s", "c", always));
    assert_eq!(memory.recall("s", "a"), None);
    assert_eq!(memory.recall("s", "b"), Some(true));
    assert_eq!(memory.recall("s", "c"), Some(true));
}

#[test]
fn overlong_tool_keys_are_not_remembered() {
    let mut memory = FixedPermissionMemory::<2>::default();
    let tool = "t".repeat(1_000);
    assert!(!memory.record("s", &tool, D::Allowed(Opt::AllowAlways)));
    assert_eq!(memory.recall("s", &tool), None);
}

// ---- ask_user ----

#[test]
fn an_answered_text_is_passed_on() {
    let answer = ask_user::read_reply(AskUserReply::Result {
        outcome: Some("answered"),
        text: Some("blue"),
    });
    assert_eq!(answer, AskUserResolution::Answered("blue"));
    assert_eq!(answer.text(), "blue");
}

#[test]
fn everything_else_is_the_sentinel() {
    assert_eq!(UNAVAILABLE, "(user unavailable)");
    let cases = [
        (
            AskUserReply::Result {
                outcome: Some("answered"),
                text: Some(""),
            },
            Unavailable::EmptyText,
        ),
        (
            AskUserReply::Result {
                outcome: Some("answered"),
                text: None,
            },
            Unavailable::EmptyText,
        ),
        (
            AskUserReply::Result {
                outcome: Some("cancelled"),
                text: Some("x"),
            },
            Unavailable::Cancelled,
        ),
        (
            AskUserReply::Result {
                outcome: Some("selected"),
                text: Some("x"),
            },
            Unavailable::UnknownOutcome,
        ),
        (
            AskUserReply::Result {
                outcome: None,
                text: Some("x"),
            },
            Unavailable::UnknownOutcome,
        ),
        (AskUserReply::Malformed, Unavailable::Malformed),
        (
            AskUserReply::Settled(SettledOutcome::Error(ErrorCode(-32601))),
            Unavailable::Error(ErrorCode(-32601)),
        ),
        (
            AskUserReply::Settled(SettledOutcome::TimedOut),
            Unavailable::TimedOut,
        ),
        (
            AskUserReply::Settled(SettledOutcome::Cancelled),
            Unavailable::Cancelled,
        ),
        (
            AskUserReply::Settled(SettledOutcome::Disconnected),
            Unavailable::Disconnected,
        ),
    ];
    for (reply, why) in cases {
        let answer = ask_user::read_reply(reply);
        assert_eq!(answer, AskUserResolution::Unavailable(why), "{reply:?}");
        assert_eq!(answer.text(), "(user unavailable)");
    }
}
