//! The agent process seen from the client (R-CLIENT-11): an agent that goes away mid-turn
//! does not leave the client hanging; how the client lets its agent go.

use serde_json::json;

use super::ends_without_crash;
use crate::client::case::{ClientCase, client_case as case};
use crate::client::cx::Cx;
use crate::verdict::{Verdict, skip};

pub(super) fn cases() -> Vec<ClientCase> {
    vec![
        case!(
            "lifecycle",
            "agent-exit-mid-turn",
            "R-CLIENT-11",
            Advisory,
            "The agent's connection ends during a turn (with a permission request pending): the client does not hang or crash.",
            agent_exit
        ),
        case!(
            "lifecycle",
            "closes-agent-stdin",
            "R-CLIENT-11",
            Informational,
            "Whether the client, once done, closes its agent's stdin (the polite stop) before it ends.",
            closes_stdin
        ),
        case!(
            "lifecycle",
            "ask-user-answered",
            "R-ASK-1",
            Capability,
            "When the client lists `_agentao.cn/ask_user` in `initialize`'s `_meta`, `_agentao.cn/ask_user` is answered `answered` or `cancelled`.",
            ask_user
        ),
    ]
}

async fn agent_exit(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.all_answered = false;
    cx.update(
        &opened.session,
        super::permission::tool_call("conform-tool-1"),
    )
    .await;
    cx.request(
        "session/request_permission",
        super::permission::permission_params(
            &opened.session,
            "conform-tool-1",
            &super::permission::standard_options(),
        ),
    )
    .await;
    cx.hang_up().await;
    ends_without_crash(cx, "the agent went away mid-turn").await
}

async fn closes_stdin(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.end_turn(&opened, "end_turn").await;
    if cx.baseline.exit.is_none() {
        return Err(skip("the client keeps running after a turn"));
    }
    let deadline = cx.answer_deadline();
    while !cx.eof && cx.client.exit.is_none() && cx.pull(deadline).await {}
    Ok(if cx.eof {
        String::from("the client closed its agent's stdin")
    } else {
        String::from("the client ended without closing its agent's stdin first")
    })
}

/// Whether `initialize` lists `_agentao.cn/ask_user` (in `_meta` or `clientCapabilities._meta`).
fn lists_ask_user(init: &serde_json::Value) -> bool {
    [&init["_meta"], &init["clientCapabilities"]["_meta"]]
        .into_iter()
        .filter_map(|meta| meta["_agentao.cn/extensions"].as_array())
        .flatten()
        .any(|e| e == "_agentao.cn/ask_user" || e["method"] == "_agentao.cn/ask_user")
}

async fn ask_user(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    if !lists_ask_user(&opened.init) {
        cx.end_turn(&opened, "end_turn").await;
        return Err(skip("the client does not list _agentao.cn/ask_user"));
    }
    let id = cx
        .request(
            "_agentao.cn/ask_user",
            json!({"sessionId": opened.session, "question": "Conform: your name?"}),
        )
        .await;
    let answer = cx.response(&id, "_agentao.cn/ask_user").await?;
    cx.end_turn(&opened, "end_turn").await;
    match answer["result"]["outcome"].as_str() {
        Some(outcome @ ("answered" | "cancelled")) => Ok(format!("answered {outcome}")),
        _ => Err(crate::verdict::fail(format!(
            "_agentao.cn/ask_user answered {}",
            super::short(&answer)
        ))),
    }
}
