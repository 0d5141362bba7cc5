//! Sessions and prompts (R-CLIENT-3): `session/new` with an absolute cwd, prompts that name
//! the session exactly as the agent gave it, content within `promptCapabilities`, one prompt
//! at a time.

use std::time::Duration;

use serde_json::json;

use super::{ends_without_crash, short};
use crate::client::case::{ClientCase, client_case as case};
use crate::client::cx::{Cx, init_result};
use crate::conform_ensure as ensure;
use crate::verdict::Verdict;

pub(super) fn cases() -> Vec<ClientCase> {
    vec![
        case!(
            "session",
            "new-session-params",
            "R-CLIENT-3",
            Mandatory,
            "`session/new` has an absolute `cwd` and an `mcpServers` array.",
            new_session_params
        ),
        case!(
            "session",
            "prompt-names-session",
            "R-CLIENT-3",
            Mandatory,
            "With an odd session id (quotes, a slash, non-ASCII), `session/prompt` names exactly that id.",
            prompt_names_session
        ),
        case!(
            "session",
            "prompt-content-advertised",
            "R-CLIENT-3",
            Mandatory,
            "The prompt is a non-empty array of content blocks; with no `promptCapabilities`, only `text` and `resource_link`.",
            prompt_content
        ),
        case!(
            "session",
            "one-prompt-at-a-time",
            "R-TURN-2",
            Mandatory,
            "While a turn runs (500 ms of updates), the client sends no second `session/prompt` for the session.",
            one_prompt
        ),
        case!(
            "session",
            "failed-session-new-handled",
            "R-CLIENT-8",
            Advisory,
            "An error answer to `session/new`: no prompt follows and the client does not crash or hang.",
            failed_new
        ),
    ]
}

async fn new_session_params(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.end_turn(&opened, "end_turn").await;
    let cwd = &opened.new["cwd"];
    ensure!(
        cwd.as_str().is_some_and(|c| c.starts_with('/')),
        "session/new.cwd is {cwd}, not an absolute path"
    );
    ensure!(
        opened.new["mcpServers"].is_array(),
        "session/new.mcpServers is {}, not an array",
        opened.new["mcpServers"]
    );
    Ok(format!("cwd {cwd}"))
}

async fn prompt_names_session(cx: &mut Cx) -> Verdict {
    let session = "conform/séance \"1\"";
    let opened = cx.open_with(init_result(), session).await?;
    cx.end_turn(&opened, "end_turn").await;
    let named = &opened.prompt["sessionId"];
    ensure!(
        named == session,
        "session/prompt names session {named}, expected {}",
        json!(session)
    );
    Ok(String::from("the prompt named the odd session id exactly"))
}

async fn prompt_content(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.end_turn(&opened, "end_turn").await;
    let blocks = opened.prompt["prompt"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    ensure!(
        !blocks.is_empty(),
        "session/prompt.prompt is {}, not a non-empty array",
        short(&opened.prompt["prompt"])
    );
    for block in &blocks {
        let kind = block["type"].as_str().unwrap_or("(none)");
        ensure!(
            matches!(kind, "text" | "resource_link"),
            "a prompt block of type {kind}, which promptCapabilities does not advertise"
        );
    }
    Ok(format!(
        "{} block(s) of text or resource links",
        blocks.len()
    ))
}

async fn one_prompt(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    for i in 0..5 {
        cx.say(&opened.session, &format!("conform-{i} ")).await;
        cx.drain_for(Duration::from_millis(100)).await;
    }
    let second = cx
        .queued()
        .find(|m| m["method"] == "session/prompt")
        .cloned();
    cx.end_turn(&opened, "end_turn").await;
    if let Some(second) = second {
        cx.respond(&second["id"], json!({"stopReason": "end_turn"}))
            .await;
        return Err(crate::verdict::fail(format!(
            "a second session/prompt during the turn: {}",
            short(&second)
        )));
    }
    Ok(String::from("one prompt during a 500 ms turn"))
}

async fn failed_new(cx: &mut Cx) -> Verdict {
    cx.initialize_with(init_result()).await?;
    let (_, new) = cx.request_of("session/new").await?;
    cx.respond_error(
        &new["id"],
        -32603,
        "Internal error: conform refuses this session",
    )
    .await;
    cx.drain_for(cx.scaled(Duration::from_millis(500))).await;
    let prompt = cx
        .queued()
        .find(|m| m["method"] == "session/prompt")
        .cloned();
    if let Some(prompt) = prompt {
        cx.respond_error(&prompt["id"], -32600, "unknown sessionId")
            .await;
        return Err(crate::verdict::fail(format!(
            "a prompt after session/new failed: {}",
            short(&prompt)
        )));
    }
    ends_without_crash(cx, "no prompt after session/new failed").await
}
