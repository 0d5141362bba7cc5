//! Cancellation (R-CANCEL-*): `session/cancel` and `$/cancel_request` settle a running
//! prompt. Spec: "The agent flushes its updates, then answers the prompt with
//! stopReason: cancelled. The agent must not turn cancellation into an error"; a
//! `$/cancel_request` receiver "must still answer the original request".

use std::time::Duration;

use serde_json::{Value, json};

use super::prompt::TURN_KINDS;
use super::still_serving;
use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::{Cx, PermissionReply, result_of};
use crate::verdict::{Outcome, Verdict, fail, skip};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "cancel",
            "session-cancel-ends-turn-cancelled",
            "R-CANCEL-3",
            Mandatory,
            "session/cancel during a turn: the prompt is answered with a result whose stopReason is cancelled (not an error, not null).",
            cancel_running
        ),
        case!(
            "cancel",
            "no-update-after-cancelled-answer",
            "R-CANCEL-3, R-TURN-3",
            Mandatory,
            "After a cancelled turn's answer no content update for it follows.",
            no_late_updates
        ),
        case!(
            "cancel",
            "cancel-request-answers-prompt",
            "R-CANCEL-4",
            Advisory,
            "$/cancel_request for a running prompt: it is still answered (cancelled, -32800, or its normal result).",
            cancel_request
        ),
        case!(
            "cancel",
            "cancel-request-unknown-id-ignored",
            "R-CANCEL-4",
            Advisory,
            "$/cancel_request for an id never sent gets no answer; the connection goes on.",
            cancel_request_unknown
        ),
        case!(
            "cancel",
            "cancel-idle-session-silent",
            "R-CANCEL-2",
            Mandatory,
            "session/cancel with no running turn gets no answer; the next prompt runs.",
            cancel_idle
        ),
        case!(
            "cancel",
            "cancel-unknown-session-silent",
            "R-CANCEL-2",
            Mandatory,
            "session/cancel for an unknown session gets no answer.",
            cancel_unknown
        ),
        case!(
            "cancel",
            "cancel-twice",
            "R-CANCEL-1",
            Mandatory,
            "Two session/cancel for one turn: one cancelled answer, nothing else answered.",
            cancel_twice
        ),
        case!(
            "cancel",
            "prompt-after-cancel",
            "R-CANCEL-3",
            Advisory,
            "After a cancelled turn the session takes a new prompt that ends normally.",
            prompt_after_cancel
        ),
        case!(
            "cancel",
            "cancel-with-pending-permission",
            "R-CANCEL-3",
            Capability,
            "session/cancel while a permission request waits: answering it cancelled (as the spec asks of clients) ends the turn cancelled.",
            cancel_with_permission
        ),
        case!(
            "cancel",
            "cancel-request-with-pending-permission",
            "R-CANCEL-4",
            Advisory,
            "$/cancel_request for a prompt waiting on permission: the prompt is still answered.",
            cancel_request_with_permission
        ),
    ]
}

/// Starts a turn that is still running when this returns: `/sleep` (after an `/echo` that
/// shows it started) when advertised, else a chatty prompt whose first update shows it runs.
/// Skips when nothing shows a running turn.
pub(super) async fn running_turn(cx: &mut Cx) -> Result<(String, Value), Outcome> {
    let session = cx.open().await?;
    let (echo, sleep) = (
        cx.command("echo", "conform-started"),
        cx.command("sleep", "10000"),
    );
    let text = match (&echo, &sleep) {
        (Ok(echo), Ok(sleep)) => format!("{echo}\n{sleep}"),
        (Err(_), Ok(sleep)) => sleep.clone(),
        _ => String::from("Write a long, detailed essay on the history of computing."),
    };
    let id = cx.prompt(&session, &text).await?;
    if echo.is_err() && sleep.is_ok() {
        // A sleep that says nothing: give the agent a moment to start it.
        cx.drain_for(Duration::from_millis(200)).await;
        return Ok((session, id));
    }
    let (first, answer) = (session.clone(), id.clone());
    let index = cx
        .wait_for("a sign the turn runs", crate::cx::TURN, move |m| {
            m["id"] == answer && m.get("method").is_none()
                || m["method"] == "session/update"
                    && m["params"]["sessionId"] == json!(first)
                    && m["params"]["update"]["sessionUpdate"]
                        .as_str()
                        .is_some_and(|k| TURN_KINDS.contains(&k))
        })
        .await?;
    if cx.message(index).get("method").is_none() {
        if sleep.is_err() {
            return Err(skip(
                "the turn ended before anything showed it running; the agent advertises no /sleep",
            ));
        }
        return Err(fail("/sleep 10000 ended at once"));
    }
    Ok((session, id))
}

/// Without `/sleep` nothing kept the turn running: an answer other than cancelled may have
/// been on its way before the cancel arrived, so it is a skip, not a failure.
fn raced(cx: &Cx, message: &Value) -> Option<Outcome> {
    if cx.profile.has_command("sleep") {
        return None;
    }
    let ended = match message.get("error") {
        Some(error) => format!("with error {}", error["code"]),
        None if message["result"]["stopReason"] == "cancelled" => return None,
        None => message["result"]["stopReason"].to_string(),
    };
    Some(skip(format!(
        "the turn ended {ended} before the cancel could take effect (the agent advertises no /sleep to keep a turn running)"
    )))
}

pub(super) async fn cancelled_answer(cx: &mut Cx, id: &Value) -> Result<usize, Outcome> {
    let end = cx.turn_end(id).await?;
    if let Some(skipped) = raced(cx, cx.message(end)) {
        return Err(skipped);
    }
    let result = result_of(cx.message(end)).map_err(|o| o.context("the cancelled prompt"))?;
    ensure!(
        result.is_object(),
        "the cancelled prompt was answered {result}, not an object with stopReason"
    );
    ensure!(
        result["stopReason"] == "cancelled",
        "the cancelled prompt ended {}",
        result["stopReason"]
    );
    Ok(end)
}

async fn cancel_running(cx: &mut Cx) -> Verdict {
    let (session, id) = running_turn(cx).await?;
    cx.notify("session/cancel", json!({"sessionId": session}))
        .await?;
    cancelled_answer(cx, &id).await?;
    Ok(String::from("stopReason cancelled"))
}

async fn no_late_updates(cx: &mut Cx) -> Verdict {
    let (session, id) = running_turn(cx).await?;
    cx.notify("session/cancel", json!({"sessionId": session}))
        .await?;
    cancelled_answer(cx, &id).await?;
    // Content after the answer (read by the barrier) is R-TURN-3 for the exchange monitor.
    cx.settle().await?;
    Ok(String::from(
        "nothing for the turn after its cancelled answer",
    ))
}

async fn cancel_request(cx: &mut Cx) -> Verdict {
    let (_, id) = running_turn(cx).await?;
    cx.notify("$/cancel_request", json!({"requestId": id}))
        .await?;
    let end = cx.turn_end(&id).await?;
    let message = cx.message(end).clone();
    if let Some(error) = message.get("error") {
        if let Some(skipped) = raced(cx, &message).filter(|_| error["code"] != -32800) {
            return Err(skipped);
        }
        ensure!(
            error["code"] == -32800,
            "answered error {error}, expected -32800 or a result"
        );
        return Ok(String::from("answered -32800"));
    }
    Ok(format!("answered {}", message["result"]["stopReason"]))
}

async fn cancel_request_unknown(cx: &mut Cx) -> Verdict {
    cx.open().await?;
    cx.notify("$/cancel_request", json!({"requestId": 987654}))
        .await?;
    // An answer to the notification would answer an id nobody sent (R-ID-6): the exchange
    // monitor's check.
    cx.settle().await?;
    still_serving(cx).await?;
    Ok(String::from("not answered; the connection went on"))
}

async fn cancel_idle(cx: &mut Cx) -> Verdict {
    let session = cx.open().await?;
    let before = cx.responses.values().sum::<usize>();
    cx.notify("session/cancel", json!({"sessionId": session}))
        .await?;
    cx.settle().await?;
    let after = cx.responses.values().sum::<usize>();
    ensure!(after == before + 1, "the cancel notification was answered");
    let text = super::prompt::chatty(cx);
    let id = cx.prompt(&session, &text).await?;
    let end = cx.turn_end(&id).await?;
    if let Ok(result) = result_of(cx.message(end)) {
        ensure!(
            result["stopReason"] != "cancelled",
            "the next prompt ended cancelled: the idle cancel stuck"
        );
    }
    Ok(String::from(
        "not answered; the next prompt was not cancelled",
    ))
}

async fn cancel_unknown(cx: &mut Cx) -> Verdict {
    cx.open().await?;
    let before = cx.responses.values().sum::<usize>();
    cx.notify(
        "session/cancel",
        json!({"sessionId": "conform-no-such-session"}),
    )
    .await?;
    cx.settle().await?;
    ensure!(
        cx.responses.values().sum::<usize>() == before + 1,
        "the cancel notification was answered"
    );
    Ok(String::from("not answered"))
}

async fn cancel_twice(cx: &mut Cx) -> Verdict {
    let (session, id) = running_turn(cx).await?;
    cx.notify("session/cancel", json!({"sessionId": session}))
        .await?;
    cx.notify("session/cancel", json!({"sessionId": session}))
        .await?;
    cancelled_answer(cx, &id).await?;
    // A second answer, read by the barrier, is R-RPC-1 for the exchange monitor.
    cx.settle().await?;
    Ok(String::from("one cancelled answer"))
}

async fn prompt_after_cancel(cx: &mut Cx) -> Verdict {
    let (session, id) = running_turn(cx).await?;
    cx.notify("session/cancel", json!({"sessionId": session}))
        .await?;
    cancelled_answer(cx, &id).await?;
    let text = super::prompt::chatty(cx);
    let next = cx.prompt(&session, &text).await?;
    let end = cx.turn_end(&next).await?;
    let reason = cx.stop_reason(end)?;
    ensure!(reason != "cancelled", "the next prompt ended cancelled too");
    Ok(format!("the next prompt ended {reason}"))
}

/// Opens a session and starts `/tool` with its permission request held; returns the session,
/// the prompt's id and the permission request's id.
pub(super) async fn held_permission(cx: &mut Cx) -> Result<(String, Value, Value), Outcome> {
    let tool = cx.command("tool", "edit conform-tool")?;
    cx.permission = PermissionReply::Hold;
    let session = cx.open().await?;
    let id = cx.prompt(&session, &tool).await?;
    let index = cx
        .wait_for("a session/request_permission", crate::cx::TURN, |m| {
            m["method"] == "session/request_permission"
        })
        .await?;
    let request = cx.message(index)["id"].clone();
    Ok((session, id, request))
}

async fn cancel_with_permission(cx: &mut Cx) -> Verdict {
    let (session, id, request) = held_permission(cx).await?;
    cx.notify("session/cancel", json!({"sessionId": session}))
        .await?;
    cx.answer_held(&request, json!({"outcome": {"outcome": "cancelled"}}))
        .await?;
    cancelled_answer(cx, &id).await?;
    Ok(String::from(
        "permission answered cancelled; the turn ended cancelled",
    ))
}

async fn cancel_request_with_permission(cx: &mut Cx) -> Verdict {
    let (_, id, request) = held_permission(cx).await?;
    cx.notify("$/cancel_request", json!({"requestId": id}))
        .await?;
    // An agent that does not act on it still needs the permission answered to finish.
    let answered = cx
        .wait_for("the prompt's answer", Duration::from_millis(500), {
            let id = id.clone();
            move |m| m["id"] == id && m.get("method").is_none()
        })
        .await;
    if answered.is_err() {
        cx.answer_held(&request, json!({"outcome": {"outcome": "cancelled"}}))
            .await?;
    }
    let end = cx.turn_end(&id).await?;
    let message = cx.message(end).clone();
    if let Some(error) = message.get("error") {
        ensure!(
            error["code"] == -32800,
            "answered error {error}, expected -32800 or a result"
        );
        return Ok(String::from("answered -32800"));
    }
    Ok(format!("answered {}", message["result"]["stopReason"]))
}
