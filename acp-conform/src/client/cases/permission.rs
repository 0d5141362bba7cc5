//! Permission requests and cancelling (R-CLIENT-4, R-CLIENT-5): an answer picks one of the
//! options that request offered, or says `cancelled` only after the client's own
//! `session/cancel`; after that cancel, pending requests are answered `cancelled`, late
//! updates are accepted and a `cancelled` stop reason ends the turn.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{ends_without_crash, short};
use crate::client::case::{ClientCase, client_case as case};
use crate::client::cx::{Cx, error_code};
use crate::verdict::{Verdict, fail, skip};

pub(super) fn cases() -> Vec<ClientCase> {
    vec![
        case!(
            "permission",
            "offered-option-selected",
            "R-CLIENT-4",
            Mandatory,
            "A permission request with the four standard options is answered `selected` with one of them (or `cancelled` only after the client's `session/cancel`).",
            offered_option
        ),
        case!(
            "permission",
            "custom-option-ids",
            "R-CLIENT-4",
            Mandatory,
            "Options with ids of the agent's own (`conform-yes-7`…) are answered with one of those ids, not a guessed `allow_once`.",
            custom_options
        ),
        case!(
            "permission",
            "two-pending-requests",
            "R-RPC-1",
            Mandatory,
            "Two permission requests pending together are both answered, each with an option it offered.",
            two_pending
        ),
        case!(
            "cancel",
            "interrupt-sends-cancel",
            "R-CANCEL-6",
            Informational,
            "On SIGINT during a turn, whether the client sends `session/cancel` for it.",
            interrupt_cancels
        ),
        case!(
            "cancel",
            "pending-permission-cancelled",
            "R-CLIENT-5",
            Mandatory,
            "A permission request still pending when the client sends `session/cancel` (after SIGINT) is answered `cancelled`; skipped when SIGINT does not cancel.",
            pending_cancelled
        ),
        case!(
            "cancel",
            "updates-after-cancel-accepted",
            "R-CLIENT-5",
            Advisory,
            "After the client's `session/cancel`, updates that still come and the `cancelled` stop reason end the turn without a crash; skipped when SIGINT does not cancel.",
            updates_after_cancel
        ),
    ]
}

/// A `tool_call` update announcing `id`.
pub(crate) fn tool_call(id: &str) -> Value {
    json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": "Conform: edit a file", "kind": "edit", "status": "pending"})
}

/// The four standard options.
pub(crate) fn standard_options() -> Vec<Value> {
    ["allow_once", "allow_always", "reject_once", "reject_always"]
        .iter()
        .map(|kind| json!({"optionId": kind, "name": kind.replace('_', " "), "kind": kind}))
        .collect()
}

/// `session/request_permission` params for the tool call `tool`.
pub(crate) fn permission_params(session: &str, tool: &str, options: &[Value]) -> Value {
    json!({
        "sessionId": session,
        "toolCall": {"toolCallId": tool, "title": "Conform: edit a file", "kind": "edit", "status": "pending"},
        "options": options,
    })
}

/// Judges a permission answer `answer` (at line `line`) against the options offered.
fn judge(
    cx: &Cx,
    answer: &Value,
    line: usize,
    options: &[Value],
) -> Result<String, crate::verdict::Outcome> {
    if let Some(code) = error_code(answer) {
        return Err(fail(format!(
            "the permission request was answered with error {code}"
        )));
    }
    let outcome = &answer["result"]["outcome"];
    match outcome["outcome"].as_str() {
        Some("selected") => {
            let chosen = &outcome["optionId"];
            if options.iter().any(|o| &o["optionId"] == chosen) {
                Ok(format!("selected {chosen}"))
            } else {
                Err(fail(format!(
                    "selected optionId {chosen}, which the request did not offer"
                )))
            }
        }
        Some("cancelled") => match cx.cancel_line {
            Some(cancel) if cancel < line => {
                Ok(String::from("cancelled after the client's session/cancel"))
            }
            _ => Err(fail(String::from(
                "answered cancelled without having sent session/cancel",
            ))),
        },
        _ => Err(fail(format!(
            "the permission answer has no valid outcome: {}",
            short(answer)
        ))),
    }
}

/// One tool call and its permission request with `options`; the answer judged.
async fn ask(cx: &mut Cx, options: Vec<Value>) -> Verdict {
    let opened = cx.open().await?;
    cx.update(&opened.session, tool_call("conform-tool-1"))
        .await;
    let id = cx
        .request(
            "session/request_permission",
            permission_params(&opened.session, "conform-tool-1", &options),
        )
        .await;
    let id2 = id.clone();
    let (line, answer) = cx
        .wait_for("an answer to session/request_permission", move |m| {
            m.get("method").is_none() && m.get("id") == Some(&id2)
        })
        .await?;
    let verdict = judge(cx, &answer, line, &options);
    cx.update(&opened.session, json!({"sessionUpdate": "tool_call_update", "toolCallId": "conform-tool-1", "status": "completed"}))
        .await;
    let stop = if cx.cancel_line.is_some() {
        "cancelled"
    } else {
        "end_turn"
    };
    cx.end_turn(&opened, stop).await;
    verdict
}

async fn offered_option(cx: &mut Cx) -> Verdict {
    ask(cx, standard_options()).await
}

async fn custom_options(cx: &mut Cx) -> Verdict {
    let options = vec![
        json!({"optionId": "conform-yes-7", "name": "Yes, this time", "kind": "allow_once"}),
        json!({"optionId": "conform-always-8", "name": "Always", "kind": "allow_always"}),
        json!({"optionId": "conform-no-9", "name": "No", "kind": "reject_once"}),
        json!({"optionId": "conform-never-10", "name": "Never", "kind": "reject_always"}),
    ];
    ask(cx, options).await
}

async fn two_pending(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    let first = vec![
        json!({"optionId": "conform-a-yes", "name": "Yes", "kind": "allow_once"}),
        json!({"optionId": "conform-a-no", "name": "No", "kind": "reject_once"}),
    ];
    let second = vec![
        json!({"optionId": "conform-b-yes", "name": "Yes", "kind": "allow_once"}),
        json!({"optionId": "conform-b-no", "name": "No", "kind": "reject_once"}),
    ];
    cx.update(&opened.session, tool_call("conform-tool-a"))
        .await;
    cx.update(&opened.session, tool_call("conform-tool-b"))
        .await;
    let a = cx
        .request(
            "session/request_permission",
            permission_params(&opened.session, "conform-tool-a", &first),
        )
        .await;
    let b = cx
        .request(
            "session/request_permission",
            permission_params(&opened.session, "conform-tool-b", &second),
        )
        .await;
    let mut seen = Vec::new();
    for (id, options) in [(a, first), (b, second)] {
        let id2 = id.clone();
        let (line, answer) = cx
            .wait_for(
                &format!("an answer to the permission request {id}"),
                move |m| m.get("method").is_none() && m.get("id") == Some(&id2),
            )
            .await?;
        seen.push(judge(cx, &answer, line, &options)?);
    }
    let stop = if cx.cancel_line.is_some() {
        "cancelled"
    } else {
        "end_turn"
    };
    cx.end_turn(&opened, stop).await;
    Ok(format!("both answered: {}", seen.join(", ")))
}

/// SIGINT during the turn; the line of the client's `session/cancel`, or a skip.
async fn interrupted(cx: &mut Cx) -> Result<(), crate::verdict::Outcome> {
    cx.interrupt();
    let deadline = Instant::now() + cx.scaled(Duration::from_secs(2));
    match cx
        .wait_until("session/cancel after SIGINT", deadline, |m| {
            m["method"] == "session/cancel"
        })
        .await
    {
        Ok(_) => Ok(()),
        Err(outcome) => Err(skip(format!(
            "the client does not cancel on SIGINT ({})",
            outcome.detail
        ))),
    }
}

async fn interrupt_cancels(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.all_answered = false;
    let result = interrupted(cx).await;
    cx.end_turn(&opened, "cancelled").await;
    result?;
    Ok(String::from("SIGINT sent session/cancel"))
}

async fn pending_cancelled(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.update(&opened.session, tool_call("conform-tool-1"))
        .await;
    let options = standard_options();
    let id = cx
        .request(
            "session/request_permission",
            permission_params(&opened.session, "conform-tool-1", &options),
        )
        .await;
    let result = interrupted(cx).await;
    if let Err(outcome) = result {
        cx.all_answered = false;
        cx.end_turn(&opened, "cancelled").await;
        return Err(outcome);
    }
    let id2 = id.clone();
    let (line, answer) = cx
        .wait_for("an answer to the pending permission request", move |m| {
            m.get("method").is_none() && m.get("id") == Some(&id2)
        })
        .await?;
    cx.end_turn(&opened, "cancelled").await;
    let detail = judge(cx, &answer, line, &options)?;
    // Answered before the cancel (the client had decided already): an offered option.
    Ok(format!("the pending request: {detail}"))
}

async fn updates_after_cancel(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    if let Err(outcome) = interrupted(cx).await {
        cx.all_answered = false;
        cx.end_turn(&opened, "cancelled").await;
        return Err(outcome);
    }
    cx.update(&opened.session, tool_call("conform-tool-late"))
        .await;
    cx.update(&opened.session, json!({"sessionUpdate": "tool_call_update", "toolCallId": "conform-tool-late", "status": "failed"}))
        .await;
    cx.say(&opened.session, "conform after cancel").await;
    cx.end_turn(&opened, "cancelled").await;
    ends_without_crash(cx, "updates after session/cancel, then cancelled").await
}
