//! Updates and turn endings (R-CLIENT-6, R-CLIENT-7, R-CLIENT-8): every update kind, kinds
//! and sessions the client does not know, an update after the turn's answer, every stop
//! reason, a failed turn, many and large updates.

use serde_json::{Value, json};

use super::{ends_without_crash, settle_output, tolerated};
use crate::client::case::{ClientCase, client_case as case};
use crate::client::cx::Cx;
use crate::conform_ensure as ensure;
use crate::verdict::{Verdict, skip};

pub(super) fn cases() -> Vec<ClientCase> {
    vec![
        case!(
            "turn",
            "every-update-kind",
            "R-CLIENT-6",
            Mandatory,
            "Every stable `session/update` kind during a turn: none answered, the turn goes on and the client ends as after a clean turn.",
            every_kind
        ),
        case!(
            "turn",
            "unknown-update-kind",
            "R-TURN-6",
            Advisory,
            "An update kind the client cannot know (`conform_future_kind`) is tolerated.",
            unknown_kind
        ),
        case!(
            "turn",
            "unknown-session-ignored",
            "R-CLIENT-6",
            Mandatory,
            "A `session/update` for a session the agent never created is not answered and does not upset the turn.",
            unknown_session
        ),
        case!(
            "turn",
            "unknown-session-not-shown",
            "R-CLIENT-6",
            Advisory,
            "The text of an update for an unknown session does not appear on the client's stdout (where the session's own text does).",
            unknown_session_not_shown
        ),
        case!(
            "turn",
            "late-update-tolerated",
            "R-CLIENT-7",
            Mandatory,
            "A `session/update` right after the turn's answer: not answered, and the client ends as after a clean turn.",
            late_update
        ),
        case!(
            "turn",
            "stop-max-tokens",
            "R-CLIENT-8",
            Advisory,
            "A turn ended `max_tokens` ends without a crash.",
            stop_max_tokens
        ),
        case!(
            "turn",
            "stop-refusal",
            "R-CLIENT-8",
            Advisory,
            "A turn ended `refusal` ends without a crash.",
            stop_refusal
        ),
        case!(
            "turn",
            "stop-max-turn-requests",
            "R-CLIENT-8",
            Advisory,
            "A turn ended `max_turn_requests` ends without a crash.",
            stop_max_turn_requests
        ),
        case!(
            "turn",
            "prompt-error-handled",
            "R-CLIENT-8",
            Advisory,
            "An error answer to `session/prompt` ends the turn without a crash or a hang.",
            prompt_error
        ),
        case!(
            "turn",
            "many-updates",
            "R-TURN-8",
            Advisory,
            "3000 message chunks in one write: the client keeps up and ends as after a clean turn.",
            many_updates
        ),
        case!(
            "turn",
            "large-update",
            "R-FRAME-5",
            Advisory,
            "One 1 MiB message chunk (well under the 16 MiB line limit): the client ends as after a clean turn.",
            large_update
        ),
        case!(
            "turn",
            "text-shown-in-order",
            "R-TURN-6",
            Informational,
            "Whether the agent's message chunks appear on stdout, in order.",
            text_in_order
        ),
    ]
}

/// One update of every stable kind for `session`.
pub(crate) fn every_update(session: &str) -> Vec<Value> {
    let _ = session;
    vec![
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "conform text "}}),
        json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "conform thought"}}),
        json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "conform user text"}}),
        json!({"sessionUpdate": "plan", "entries": [{"content": "conform step", "priority": "medium", "status": "pending"}]}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "conform-tool-1", "title": "Conform tool", "kind": "read", "status": "pending"}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "conform-tool-1", "status": "in_progress"}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "conform-tool-1", "status": "completed",
               "content": [{"type": "content", "content": {"type": "text", "text": "conform tool output"}}]}),
        json!({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "conform", "description": "a command"}]}),
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "conform-mode"}),
        json!({"sessionUpdate": "session_info_update", "title": "Conform session"}),
        json!({"sessionUpdate": "usage_update", "used": 10, "size": 1000}),
    ]
}

async fn every_kind(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    for update in every_update(&opened.session) {
        cx.update(&opened.session, update).await;
    }
    tolerated(cx, &opened, "11 update kinds").await
}

async fn unknown_kind(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.update(
        &opened.session,
        json!({"sessionUpdate": "conform_future_kind", "detail": {"x": 1}}),
    )
    .await;
    tolerated(cx, &opened, "an update of kind conform_future_kind").await
}

/// The session id no agent created.
const STRAY_SESSION: &str = "conform-no-such-session";
const STRAY_TEXT: &str = "conform-stray-text";
const OWN_TEXT: &str = "conform-own-text";

async fn unknown_session(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.say(STRAY_SESSION, STRAY_TEXT).await;
    tolerated(cx, &opened, "an update for an unknown session").await
}

async fn unknown_session_not_shown(cx: &mut Cx) -> Verdict {
    if !cx.baseline.prints_text {
        return Err(skip("the client prints no agent text on stdout"));
    }
    let opened = cx.open().await?;
    cx.say(STRAY_SESSION, STRAY_TEXT).await;
    cx.say(&opened.session, OWN_TEXT).await;
    cx.barrier().await?;
    cx.end_turn(&opened, "end_turn").await;
    settle_output(cx).await;
    let stdout = cx.stdout_text();
    ensure!(
        !stdout.contains(STRAY_TEXT),
        "the text of an update for session {STRAY_SESSION} appeared on stdout"
    );
    ensure!(
        stdout.contains(OWN_TEXT),
        "the session's own text never appeared on stdout"
    );
    Ok(String::from("only the session's own text was shown"))
}

async fn late_update(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    let answer =
        json!({"jsonrpc": "2.0", "id": opened.prompt_id, "result": {"stopReason": "end_turn"}});
    let late = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": opened.session,
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "conform-late"}}}});
    // The answer and the late update in one write, so the client reads both.
    cx.send_raw(format!("{answer}\n{late}\n").as_bytes()).await;
    let verdict = cx
        .ends_like_baseline("an update after the turn's answer")
        .await;
    super::no_stray_answers(cx, "a late update")?;
    verdict
}

async fn ended_with(cx: &mut Cx, stop: &str) -> Verdict {
    let opened = cx.open().await?;
    cx.end_turn(&opened, stop).await;
    ends_without_crash(cx, &format!("stopReason {stop}")).await
}

async fn stop_max_tokens(cx: &mut Cx) -> Verdict {
    ended_with(cx, "max_tokens").await
}

async fn stop_refusal(cx: &mut Cx) -> Verdict {
    ended_with(cx, "refusal").await
}

async fn stop_max_turn_requests(cx: &mut Cx) -> Verdict {
    ended_with(cx, "max_turn_requests").await
}

async fn prompt_error(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.respond_error(
        &opened.prompt_id,
        -32603,
        "Internal error: conform fails this turn",
    )
    .await;
    ends_without_crash(cx, "the prompt answered -32603").await
}

async fn many_updates(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    let mut bytes = Vec::new();
    for i in 0..3000 {
        let update = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": opened.session,
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": format!("c{i} ")}}}});
        bytes.extend_from_slice(update.to_string().as_bytes());
        bytes.push(b'\n');
    }
    cx.send_raw(&bytes).await;
    cx.barrier().await?;
    cx.end_turn(&opened, "end_turn").await;
    cx.ends_like_baseline("3000 chunks").await
}

async fn large_update(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    let text = "conform ".repeat(128 * 1024);
    cx.say(&opened.session, &text).await;
    cx.barrier().await?;
    cx.end_turn(&opened, "end_turn").await;
    cx.ends_like_baseline("a 1 MiB chunk").await
}

async fn text_in_order(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    for part in ["conform-a ", "conform-b ", "conform-c"] {
        cx.say(&opened.session, part).await;
    }
    cx.barrier().await?;
    cx.end_turn(&opened, "end_turn").await;
    settle_output(cx).await;
    let stdout = cx.stdout_text();
    let at = |s: &str| stdout.find(s);
    match (at("conform-a"), at("conform-b"), at("conform-c")) {
        (Some(a), Some(b), Some(c)) if a < b && b < c => {
            Ok(String::from("the chunks appeared on stdout in order"))
        }
        (None, None, None) => Err(skip("the client shows no agent text on stdout")),
        _ => Err(crate::verdict::fail(String::from(
            "the chunks appeared on stdout out of order or in part",
        ))),
    }
}
