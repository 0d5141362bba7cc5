//! Prompt turns (R-TURN-*, R-RPC-1): one answer per prompt, updates before it, one turn at a
//! time per session. Spec: "In v1 the response ends the turn."

use serde_json::{Value, json};

use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::{Cx, Kind, kind, result_of};
use crate::verdict::{Outcome, Verdict, fail, skip};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "prompt",
            "answered-exactly-once",
            "R-RPC-1",
            Mandatory,
            "A text prompt gets exactly one answer (a stopReason or an error).",
            answered_once
        ),
        case!(
            "prompt",
            "stop-reason-valid",
            "R-TURN-1",
            Mandatory,
            "A prompt's result has a stopReason from the schema's enum.",
            stop_reason_valid
        ),
        case!(
            "prompt",
            "updates-well-formed",
            "R-TURN-6",
            Capability,
            "Every session/update of a turn names the session and has a string sessionUpdate.",
            updates_well_formed
        ),
        case!(
            "prompt",
            "no-update-after-response",
            "R-TURN-3",
            Capability,
            "No message chunk, thought, tool call or plan for a turn comes after its answer.",
            no_update_after
        ),
        case!(
            "prompt",
            "echo-message-chunk",
            "R-DEMO-1",
            Advisory,
            "/echo TEXT sends an agent_message_chunk with TEXT and ends end_turn.",
            echo_chunk
        ),
        case!(
            "prompt",
            "second-turn-after-first",
            "R-TURN-2",
            Mandatory,
            "A second prompt after the first one's answer runs normally.",
            second_turn
        ),
        case!(
            "prompt",
            "one-turn-at-a-time",
            "R-TURN-2",
            Advisory,
            "A prompt while the session's turn runs is rejected or queued; both get exactly one answer.",
            one_turn_at_a_time
        ),
        case!(
            "prompt",
            "sessions-run-independently",
            "R-TURN-2",
            Advisory,
            "Turns of two sessions both finish.",
            two_sessions
        ),
        case!(
            "prompt",
            "resource-link-accepted",
            "R-TURN-1",
            Mandatory,
            "A resource_link block is always allowed: not answered -32602.",
            resource_link
        ),
        case!(
            "prompt",
            "requested-stop-reason",
            "R-TURN-1",
            Advisory,
            "/stop max_tokens ends the turn with stopReason max_tokens.",
            requested_stop
        ),
        case!(
            "prompt",
            "failed-turn-session-usable",
            "R-RPC-10",
            Advisory,
            "/error TEXT fails the prompt with an error; the session takes the next prompt.",
            failed_turn
        ),
    ]
}

pub(super) const STOP_REASONS: [&str; 5] = [
    "end_turn",
    "max_tokens",
    "max_turn_requests",
    "refusal",
    "cancelled",
];

/// The text of a turn that makes the agent say something: `/echo` when advertised, else
/// plain text.
pub(super) fn chatty(cx: &Cx) -> String {
    cx.command("echo", "conform-hello")
        .unwrap_or_else(|_| String::from("Say hello in one short sentence."))
}

/// Runs one turn of `text` in a new session; returns the session and the answer's index.
pub(super) async fn turn(cx: &mut Cx, text: &str) -> Result<(String, usize), Outcome> {
    let session = cx.open().await?;
    let id = cx.prompt(&session, text).await?;
    let end = cx.turn_end(&id).await?;
    Ok((session, end))
}

/// The turn-content kinds that must not follow the turn's answer.
pub(super) const TURN_KINDS: [&str; 6] = [
    "agent_message_chunk",
    "agent_thought_chunk",
    "user_message_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
];

async fn answered_once(cx: &mut Cx) -> Verdict {
    let text = chatty(cx);
    let (_, end) = turn(cx, &text).await?;
    // After the barrier, a second answer would have been read: the exchange monitor fails
    // the case on it (R-RPC-1).
    cx.settle().await?;
    let message = cx.message(end);
    Ok(match message.get("error") {
        Some(error) => format!("answered once, with error {}", error["code"]),
        None => format!("answered once: {}", message["result"]["stopReason"]),
    })
}

async fn stop_reason_valid(cx: &mut Cx) -> Verdict {
    let text = chatty(cx);
    let (_, end) = turn(cx, &text).await?;
    if let Some(error) = cx.message(end).get("error") {
        return Err(skip(format!(
            "the prompt was answered with error {} ({})",
            error["code"], error["message"]
        )));
    }
    let reason = cx.stop_reason(end)?;
    ensure!(
        STOP_REASONS.contains(&reason.as_str()),
        "stopReason {reason:?} is not in the schema's enum"
    );
    Ok(format!("stopReason {reason}"))
}

async fn updates_well_formed(cx: &mut Cx) -> Verdict {
    let text = chatty(cx);
    let (session, _) = turn(cx, &text).await?;
    cx.settle().await?;
    let all: Vec<Value> = cx
        .messages()
        .filter(|&i| cx.message(i)["method"] == "session/update")
        .map(|i| cx.message(i).clone())
        .collect();
    if all.is_empty() {
        return Err(skip("the agent sent no session/update"));
    }
    for update in &all {
        ensure!(
            kind(update) == Kind::Notification,
            "session/update sent as a request: {update}"
        );
        ensure!(
            update["params"]["sessionId"] == json!(session),
            "an update for another session: {}",
            update["params"]["sessionId"]
        );
        ensure!(
            update["params"]["update"]["sessionUpdate"].is_string(),
            "an update without a string sessionUpdate: {update}"
        );
    }
    Ok(format!("{} updates well formed", all.len()))
}

async fn no_update_after(cx: &mut Cx) -> Verdict {
    let text = chatty(cx);
    let (session, end) = turn(cx, &text).await?;
    cx.settle().await?;
    let during = cx
        .updates(&session)
        .into_iter()
        .filter(|(i, u)| {
            *i < end
                && u["sessionUpdate"]
                    .as_str()
                    .is_some_and(|k| TURN_KINDS.contains(&k))
        })
        .count();
    // Content after the answer (read by the barrier) is R-TURN-3 for the exchange monitor.
    if during == 0 {
        return Err(skip(
            "the turn sent no content updates, so there was no order to check",
        ));
    }
    Ok(format!("{during} content update(s), all before the answer"))
}

async fn echo_chunk(cx: &mut Cx) -> Verdict {
    let line = cx.command("echo", "conform-echo-42")?;
    let (session, end) = turn(cx, &line).await?;
    let said = cx.updates(&session).into_iter().any(|(i, u)| {
        i < end
            && u["sessionUpdate"] == "agent_message_chunk"
            && u["content"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("conform-echo-42"))
    });
    ensure!(
        said,
        "no agent_message_chunk with the echoed text before the answer"
    );
    let reason = cx.stop_reason(end)?;
    ensure!(
        reason == "end_turn",
        "stopReason {reason}, expected end_turn"
    );
    Ok(String::from("echoed in an agent_message_chunk; end_turn"))
}

async fn second_turn(cx: &mut Cx) -> Verdict {
    let text = chatty(cx);
    let (session, _) = turn(cx, &text).await?;
    let id = cx.prompt(&session, &text).await?;
    let end = cx.turn_end(&id).await?;
    let message = cx.message(end);
    Ok(match message.get("error") {
        Some(error) => format!("second turn answered with error {}", error["code"]),
        None => format!("second turn: {}", message["result"]["stopReason"]),
    })
}

async fn one_turn_at_a_time(cx: &mut Cx) -> Verdict {
    let sleep = cx.command("sleep", "1000")?;
    let session = cx.open().await?;
    let first = cx.prompt(&session, &sleep).await?;
    let second = cx.prompt(&session, "/echo second").await?;
    let second_end = cx.turn_end(&second).await?;
    let first_end = cx.turn_end(&first).await?;
    cx.settle().await?;
    ensure!(
        cx.responses_to(&first) == 1 && cx.responses_to(&second) == 1,
        "answers: {} to the first, {} to the second",
        cx.responses_to(&first),
        cx.responses_to(&second)
    );
    let first_result =
        result_of(cx.message(first_end)).map_err(|o| o.context("the running turn"))?;
    Ok(match cx.message(second_end).get("error") {
        Some(error) => format!(
            "the second prompt was rejected ({}); the first ended {}",
            error["code"], first_result["stopReason"]
        ),
        None if second_end > first_end => String::from("the second prompt ran after the first"),
        None => format!(
            "the second prompt ran alongside; the first ended {}",
            first_result["stopReason"]
        ),
    })
}

async fn two_sessions(cx: &mut Cx) -> Verdict {
    let sleep = cx.command("sleep", "300")?;
    let a = cx.open().await?;
    let b = cx.new_session().await?;
    let first = cx.prompt(&a, &sleep).await?;
    let second = cx.prompt(&b, &sleep).await?;
    let ends = [cx.turn_end(&first).await?, cx.turn_end(&second).await?];
    for end in ends {
        let reason = cx.stop_reason(end)?;
        ensure!(reason == "end_turn", "a session's turn ended {reason}");
    }
    Ok(String::from("both sessions' turns ended end_turn"))
}

async fn resource_link(cx: &mut Cx) -> Verdict {
    let session = cx.open().await?;
    let file = cx.cwd().join("linked.txt");
    std::fs::write(&file, "conform\n")
        .map_err(|e| fail(format!("cannot write {}: {e}", file.display())))?;
    let uri = format!("file://{}", file.display());
    let id = cx
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [
            {"type": "text", "text": chatty(cx)},
            {"type": "resource_link", "uri": uri, "name": "linked.txt"}]}),
        )
        .await?;
    let end = cx.turn_end(&id).await?;
    if let Some(error) = cx.message(end).get("error") {
        ensure!(
            error["code"] != -32602,
            "a resource_link prompt was refused as invalid params: {error}"
        );
        return Ok(format!(
            "answered with error {} (not -32602)",
            error["code"]
        ));
    }
    Ok(format!(
        "answered {}",
        cx.message(end)["result"]["stopReason"]
    ))
}

async fn requested_stop(cx: &mut Cx) -> Verdict {
    let line = cx.command("stop", "max_tokens")?;
    let (_, end) = turn(cx, &line).await?;
    let reason = cx.stop_reason(end)?;
    ensure!(
        reason == "max_tokens",
        "stopReason {reason}, expected max_tokens"
    );
    Ok(String::from("stopReason max_tokens"))
}

async fn failed_turn(cx: &mut Cx) -> Verdict {
    let line = cx.command("error", "conform failure")?;
    let (session, end) = turn(cx, &line).await?;
    let (code, message) = crate::cx::error_of(cx.message(end))?;
    let echo = cx
        .command("echo", "after")
        .unwrap_or_else(|_| String::from("hello"));
    let id = cx.prompt(&session, &echo).await?;
    let next = cx.turn_end(&id).await?;
    result_of(cx.message(next)).map_err(|o| o.context("the prompt after the failed one"))?;
    Ok(format!(
        "failed with {code} ({message}); the next prompt ran"
    ))
}
