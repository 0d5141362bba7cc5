//! How the host answers a server's questions: the JSON result of a
//! `session/request_permission` or `_agentao.cn/ask_user` request.
//!
//! A permission answer names one of the options the server offered. The option is found by
//! its `kind` first and by its id or label last, because servers spell options differently
//! (Agentao's three-pass selector, R-HOST-9):
//!
//! 1. the first option whose `kind` is exactly the wanted kind (`allow_always` is tried before
//!    `allow_once` when the user chose "always"; likewise for reject);
//! 2. the first option whose `kind` starts with `allow` / `reject`;
//! 3. the first option whose `optionId`, `id`, `name` or `label` contains, ignoring case,
//!    `allow`, `accept` or `approve` (to allow) or `reject`, `deny` or `cancel` (to reject).
//!
//! Where Agentao invents an option id when nothing matches (`allow_once`), the answer here is
//! `{"outcome":{"outcome":"cancelled"}}`: an id the server never offered means nothing to it.
//! Declining an `ask_user` question answers `{"outcome":"cancelled"}`, never a permission-shaped
//! outcome (Agentao's bug, R-HOST-9).

use alloc::string::String;

use serde_json::{Value, json};

use super::config::InteractionPolicy;

/// What the user (or the policy) decided about a permission request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Allow this call.
    AllowOnce,
    /// Allow this call and later ones like it.
    AllowAlways,
    /// Reject this call.
    RejectOnce,
    /// Reject this call and later ones like it.
    RejectAlways,
    /// No decision (Esc, the turn was cancelled, the host is going away).
    Cancel,
}

/// The error code of the answer to `_agentao.cn/ask_user` in a non-interactive turn.
pub const NO_USER_CODE: i32 = -32001;
/// Its message.
pub const NO_USER_MESSAGE: &str = "non-interactive turn; no user available";

/// The option id `decision` selects among `options` (the request's `options` array), if any.
pub fn select_option(options: &Value, decision: Decision) -> Option<String> {
    let (exact, fallback_kind, prefix, hints): (Option<&str>, &str, &str, &[&str]) = match decision
    {
        Decision::AllowAlways => (
            Some("allow_always"),
            "allow_once",
            "allow",
            &["allow", "accept", "approve"],
        ),
        Decision::AllowOnce => (None, "allow_once", "allow", &["allow", "accept", "approve"]),
        Decision::RejectAlways => (
            Some("reject_always"),
            "reject_once",
            "reject",
            &["reject", "deny", "cancel"],
        ),
        Decision::RejectOnce => (None, "reject_once", "reject", &["reject", "deny", "cancel"]),
        Decision::Cancel => return None,
    };
    let options = options.as_array()?;
    let kind = |o: &Value| o.get("kind").and_then(Value::as_str).map(String::from);
    let id = |o: &Value| {
        ["optionId", "id"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str))
            .map(String::from)
    };
    let labelled = |o: &Value| {
        ["optionId", "id", "name", "label"].iter().any(|k| {
            o.get(*k).and_then(Value::as_str).is_some_and(|text| {
                let text = text.to_lowercase();
                hints.iter().any(|h| text.contains(h))
            })
        })
    };
    let first = |pred: &dyn Fn(&Value) -> bool| options.iter().filter(|o| pred(o)).find_map(id);
    exact
        .and_then(|wanted| first(&|o| kind(o).as_deref() == Some(wanted)))
        .or_else(|| first(&|o| kind(o).as_deref() == Some(fallback_kind)))
        .or_else(|| first(&|o| kind(o).is_some_and(|k| k.starts_with(prefix))))
        .or_else(|| first(&labelled))
}

/// The result for a `session/request_permission` request: the selected option, or
/// `cancelled` when the decision is [`Decision::Cancel`] or no offered option fits.
pub fn permission_result(options: &Value, decision: Decision) -> Value {
    match select_option(options, decision) {
        Some(option_id) => json!({"outcome": {"outcome": "selected", "optionId": option_id}}),
        None => json!({"outcome": {"outcome": "cancelled"}}),
    }
}

/// The result for a permission request in a non-interactive turn: `reject_all` picks a reject
/// option, `accept_all` an allow option and else a reject option; `cancelled` when nothing fits.
pub fn policy_permission_result(options: &Value, policy: InteractionPolicy) -> Value {
    let chosen = match policy {
        InteractionPolicy::RejectAll => select_option(options, Decision::RejectOnce),
        InteractionPolicy::AcceptAll => select_option(options, Decision::AllowOnce)
            .or_else(|| select_option(options, Decision::RejectOnce)),
    };
    match chosen {
        Some(option_id) => json!({"outcome": {"outcome": "selected", "optionId": option_id}}),
        None => json!({"outcome": {"outcome": "cancelled"}}),
    }
}

/// The result for an `_agentao.cn/ask_user` request: the text, or `cancelled` when the user
/// gave none (`None`, empty or only whitespace).
pub fn ask_user_result(answer: Option<&str>) -> Value {
    match answer {
        Some(text) if !text.trim().is_empty() => json!({"outcome": "answered", "text": text}),
        _ => json!({"outcome": "cancelled"}),
    }
}
