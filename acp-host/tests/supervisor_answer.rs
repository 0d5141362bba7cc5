//! Answers to permission and input requests (R-HOST-9 option selection, non-interactive policy,
//! and the fix for answering `ask_user` with `cancelled`).

use acp_host::supervisor::answer::{
    Decision, NO_USER_CODE, NO_USER_MESSAGE, ask_user_result, permission_result,
    policy_permission_result, select_option,
};
use acp_host::supervisor::config::InteractionPolicy;
use serde_json::{Value, json};

fn standard() -> Value {
    json!([
        {"optionId": "a1", "kind": "allow_once", "name": "Allow"},
        {"optionId": "a2", "kind": "allow_always", "name": "Always allow"},
        {"optionId": "r1", "kind": "reject_once", "name": "Reject"},
        {"optionId": "r2", "kind": "reject_always", "name": "Always reject"},
    ])
}

#[test]
fn canonical_kinds_win() {
    let o = standard();
    assert_eq!(
        select_option(&o, Decision::AllowOnce).as_deref(),
        Some("a1")
    );
    assert_eq!(
        select_option(&o, Decision::AllowAlways).as_deref(),
        Some("a2")
    );
    assert_eq!(
        select_option(&o, Decision::RejectOnce).as_deref(),
        Some("r1")
    );
    assert_eq!(
        select_option(&o, Decision::RejectAlways).as_deref(),
        Some("r2")
    );
    assert_eq!(select_option(&o, Decision::Cancel), None);
}

#[test]
fn always_falls_back_to_once() {
    let o = json!([{"optionId": "ok", "kind": "allow_once"}, {"optionId": "no", "kind": "reject_once"}]);
    assert_eq!(
        select_option(&o, Decision::AllowAlways).as_deref(),
        Some("ok")
    );
    assert_eq!(
        select_option(&o, Decision::RejectAlways).as_deref(),
        Some("no")
    );
}

#[test]
fn canonical_beats_a_variant_listed_first() {
    let o = json!([{"optionId": "v", "kind": "reject_forever"}, {"optionId": "c", "kind": "reject_once"}]);
    assert_eq!(
        select_option(&o, Decision::RejectOnce).as_deref(),
        Some("c")
    );
}

#[test]
fn a_kind_variant_is_used_when_no_canonical_kind_exists() {
    let o =
        json!([{"optionId": "x", "kind": "other"}, {"optionId": "v", "kind": "reject_forever"}]);
    assert_eq!(
        select_option(&o, Decision::RejectOnce).as_deref(),
        Some("v")
    );
}

#[test]
fn id_and_label_hints_come_last() {
    let o = json!([{"optionId": "yes-APPROVE"}, {"id": "Deny-it"}]);
    assert_eq!(
        select_option(&o, Decision::AllowOnce).as_deref(),
        Some("yes-APPROVE")
    );
    assert_eq!(
        select_option(&o, Decision::RejectOnce).as_deref(),
        Some("Deny-it")
    );
    let o =
        json!([{"optionId": "o1", "label": "Cancel"}, {"optionId": "o2", "name": "Accept edit"}]);
    assert_eq!(
        select_option(&o, Decision::RejectOnce).as_deref(),
        Some("o1")
    );
    assert_eq!(
        select_option(&o, Decision::AllowOnce).as_deref(),
        Some("o2")
    );
}

#[test]
fn nothing_fits_means_none() {
    assert_eq!(select_option(&json!([]), Decision::RejectOnce), None);
    assert_eq!(
        select_option(
            &json!([{"optionId": "maybe", "kind": "other"}]),
            Decision::RejectOnce
        ),
        None
    );
    assert_eq!(select_option(&json!(null), Decision::AllowOnce), None);
    // An option without an id cannot be selected.
    assert_eq!(
        select_option(&json!([{"kind": "allow_once"}]), Decision::AllowOnce),
        None
    );
}

#[test]
fn permission_results() {
    assert_eq!(
        permission_result(&standard(), Decision::AllowAlways),
        json!({"outcome": {"outcome": "selected", "optionId": "a2"}})
    );
    assert_eq!(
        permission_result(&standard(), Decision::Cancel),
        json!({"outcome": {"outcome": "cancelled"}})
    );
    // No offered option fits: cancelled, never an invented id.
    assert_eq!(
        permission_result(
            &json!([{"optionId": "r", "kind": "reject_once"}]),
            Decision::AllowOnce
        ),
        json!({"outcome": {"outcome": "cancelled"}})
    );
}

#[test]
fn non_interactive_policy_results() {
    let selected = |id: &str| json!({"outcome": {"outcome": "selected", "optionId": id}});
    let cancelled = json!({"outcome": {"outcome": "cancelled"}});
    assert_eq!(
        policy_permission_result(&standard(), InteractionPolicy::RejectAll),
        selected("r1")
    );
    assert_eq!(
        policy_permission_result(&standard(), InteractionPolicy::AcceptAll),
        selected("a1")
    );
    let only_reject = json!([{"optionId": "r", "kind": "reject_once"}]);
    assert_eq!(
        policy_permission_result(&only_reject, InteractionPolicy::AcceptAll),
        selected("r")
    );
    let only_allow = json!([{"optionId": "a", "kind": "allow_once"}]);
    assert_eq!(
        policy_permission_result(&only_allow, InteractionPolicy::RejectAll),
        cancelled
    );
    assert_eq!(
        policy_permission_result(&json!([]), InteractionPolicy::AcceptAll),
        cancelled
    );
}

#[test]
fn ask_user_results() {
    assert_eq!(
        ask_user_result(Some("feature/x")),
        json!({"outcome": "answered", "text": "feature/x"})
    );
    for declined in [None, Some(""), Some("  \n")] {
        assert_eq!(
            ask_user_result(declined),
            json!({"outcome": "cancelled"}),
            "{declined:?}"
        );
    }
    assert_eq!(
        (NO_USER_CODE, NO_USER_MESSAGE),
        (-32001, "non-interactive turn; no user available")
    );
}
