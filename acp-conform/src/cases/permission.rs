//! Permission requests (R-PERM-*), driven by the agent's `/tool` command: the request's
//! shape, its `toolCallId`, and what every answer shape does to the tool call.

use serde_json::{Value, json};

use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::{Cx, PermissionReply};
use crate::verdict::{Outcome, Verdict, fail};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "permission",
            "options-well-formed",
            "R-PERM-1",
            Capability,
            "The request's options each have a string optionId and name and a kind from the schema.",
            options_shape
        ),
        case!(
            "permission",
            "tool-call-id-announced",
            "R-PERM-2",
            Capability,
            "toolCall.toolCallId is the id of a tool_call update sent before the request.",
            tool_call_announced
        ),
        case!(
            "permission",
            "session-id-matches",
            "R-PERM-2",
            Capability,
            "The request names the session of the turn.",
            session_matches
        ),
        case!(
            "permission",
            "allow-once-completes",
            "R-PERM-3",
            Advisory,
            "Selecting allow_once: the tool call completes and the turn ends end_turn.",
            allow_once
        ),
        case!(
            "permission",
            "allow-always-completes",
            "R-PERM-3",
            Advisory,
            "Selecting allow_always: the tool call completes.",
            allow_always
        ),
        case!(
            "permission",
            "reject-once-fails-tool",
            "R-PERM-3",
            Advisory,
            "Selecting reject_once: the tool call does not complete; the turn still ends.",
            reject_once
        ),
        case!(
            "permission",
            "reject-always-fails-tool",
            "R-PERM-3",
            Advisory,
            "Selecting reject_always: the tool call does not complete.",
            reject_always
        ),
        case!(
            "permission",
            "cancelled-outcome",
            "R-PERM-3",
            Advisory,
            "Answering {outcome: cancelled}: the tool call does not complete; the prompt is answered once.",
            cancelled
        ),
        case!(
            "permission",
            "error-answer",
            "R-PERM-3",
            Advisory,
            "Answering the request with a JSON-RPC error: the tool does not run; the prompt is answered once.",
            error_answer
        ),
        case!(
            "permission",
            "unknown-option-id",
            "R-PERM-3",
            Advisory,
            "Selecting an optionId never offered: the tool does not run; the prompt is answered once.",
            unknown_option
        ),
    ]
}

const KINDS: [&str; 4] = ["allow_once", "allow_always", "reject_once", "reject_always"];

/// What one `/tool` turn showed.
struct ToolTurn {
    session: String,
    request: Value,
    statuses: Vec<String>,
    end: usize,
}

async fn tool_turn(cx: &mut Cx, reply: PermissionReply) -> Result<ToolTurn, Outcome> {
    let tool = cx.command("tool", "edit conform-tool")?;
    cx.permission = reply;
    let session = cx.open().await?;
    let id = cx.prompt(&session, &tool).await?;
    let end = cx.turn_end(&id).await?;
    cx.settle().await?;
    let requests = cx.calls_of("session/request_permission");
    ensure!(
        requests.len() == 1,
        "{} permission requests for one /tool, expected 1",
        requests.len()
    );
    // Answered at most once (R-RPC-1): the exchange monitor's check.
    let request = requests[0].1.clone();
    let call_id = request["params"]["toolCall"]["toolCallId"].clone();
    let statuses = cx
        .updates(&session)
        .into_iter()
        .filter(|(_, u)| u["toolCallId"] == call_id && u["status"].is_string())
        .map(|(_, u)| u["status"].as_str().unwrap_or_default().to_string())
        .collect();
    Ok(ToolTurn {
        session,
        request,
        statuses,
        end,
    })
}

async fn options_shape(cx: &mut Cx) -> Verdict {
    let turn = tool_turn(cx, PermissionReply::Select("allow_once")).await?;
    let options = turn.request["params"]["options"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    ensure!(!options.is_empty(), "no options in the permission request");
    for option in &options {
        ensure!(
            option["optionId"].is_string() && option["name"].is_string(),
            "an option without string optionId and name: {option}"
        );
        ensure!(
            option["kind"].as_str().is_some_and(|k| KINDS.contains(&k)),
            "an option kind outside the schema: {option}"
        );
    }
    Ok(format!("{} options well formed", options.len()))
}

async fn tool_call_announced(cx: &mut Cx) -> Verdict {
    let turn = tool_turn(cx, PermissionReply::Select("allow_once")).await?;
    let call_id = &turn.request["params"]["toolCall"]["toolCallId"];
    ensure!(
        call_id.is_string(),
        "the request has no toolCall.toolCallId"
    );
    // That a tool_call update announced it first is R-PERM-2 for the exchange monitor.
    Ok(format!("a permission request for toolCallId {call_id}"))
}

async fn session_matches(cx: &mut Cx) -> Verdict {
    let turn = tool_turn(cx, PermissionReply::Select("allow_once")).await?;
    let named = &turn.request["params"]["sessionId"];
    ensure!(
        named == &json!(turn.session),
        "the request names session {named}, the turn is {}",
        turn.session
    );
    Ok(String::from("the request names the turn's session"))
}

async fn completes(cx: &mut Cx, kind: &'static str) -> Verdict {
    let turn = tool_turn(cx, PermissionReply::Select(kind)).await?;
    ensure!(
        turn.statuses.iter().any(|s| s == "completed"),
        "after {kind} the tool call went {:?}, never completed",
        turn.statuses
    );
    let reason = cx.stop_reason(turn.end)?;
    ensure!(reason == "end_turn", "the turn ended {reason}");
    Ok(format!(
        "{kind}: tool call {}; end_turn",
        turn.statuses.join(" → ")
    ))
}

async fn allow_once(cx: &mut Cx) -> Verdict {
    completes(cx, "allow_once").await
}
async fn allow_always(cx: &mut Cx) -> Verdict {
    completes(cx, "allow_always").await
}

async fn not_run(cx: &mut Cx, reply: PermissionReply) -> Verdict {
    let turn = tool_turn(cx, reply).await?;
    ensure!(
        !turn.statuses.iter().any(|s| s == "completed"),
        "{reply:?}: the tool call completed anyway ({:?})",
        turn.statuses
    );
    let ended = match cx.message(turn.end).get("error") {
        Some(error) => format!("error {}", error["code"]),
        None => cx.message(turn.end)["result"]["stopReason"].to_string(),
    };
    if turn.statuses.is_empty() {
        return Err(fail(format!(
            "{reply:?}: no status for the tool call at all"
        )));
    }
    Ok(format!(
        "tool call {}; the turn ended {ended}",
        turn.statuses.join(" → ")
    ))
}

async fn reject_once(cx: &mut Cx) -> Verdict {
    not_run(cx, PermissionReply::Select("reject_once")).await
}
async fn reject_always(cx: &mut Cx) -> Verdict {
    not_run(cx, PermissionReply::Select("reject_always")).await
}
async fn cancelled(cx: &mut Cx) -> Verdict {
    not_run(cx, PermissionReply::Cancelled).await
}
async fn error_answer(cx: &mut Cx) -> Verdict {
    not_run(cx, PermissionReply::Error).await
}
async fn unknown_option(cx: &mut Cx) -> Verdict {
    not_run(cx, PermissionReply::UnknownOption).await
}
