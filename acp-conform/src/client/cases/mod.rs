//! The client cases, one module per group, and the helpers they share.

use std::time::Duration;

use serde_json::{Value, json};

use super::case::ClientCase;
use super::cx::{Cx, Opened};
use crate::verdict::{Outcome, Verdict, fail};

mod framing;
mod fs;
mod handshake;
mod lifecycle;
mod permission;
mod rpc;
mod session;
mod terminal;
mod turn;

/// Every client case, in the order they run and are reported.
pub fn all() -> Vec<ClientCase> {
    [
        handshake::cases(),
        session::cases(),
        turn::cases(),
        rpc::cases(),
        framing::cases(),
        permission::cases(),
        fs::cases(),
        terminal::cases(),
        lifecycle::cases(),
    ]
    .concat()
}

/// A message cut short for a failure detail.
pub(crate) fn short(m: &Value) -> String {
    let text = m.to_string();
    if text.len() > 160 {
        let mut end = 160;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &text[..end])
    } else {
        text
    }
}

/// The rest of a plain exchange after `initialize` was answered: `session/new`, the prompt,
/// `end_turn`.
pub(crate) async fn plain_after_init(cx: &mut Cx) -> Result<Opened, Outcome> {
    let (_, new) = cx.request_of("session/new").await?;
    cx.respond(&new["id"], json!({"sessionId": super::cx::SESSION}))
        .await;
    let (_, prompt) = cx.request_of("session/prompt").await?;
    let opened = Opened {
        init: Value::Null,
        session: super::cx::SESSION.to_owned(),
        new: new.get("params").cloned().unwrap_or(Value::Null),
        prompt_id: prompt["id"].clone(),
        prompt: prompt.get("params").cloned().unwrap_or(Value::Null),
    };
    cx.end_turn(&opened, "end_turn").await;
    Ok(opened)
}

/// Fails when the client sent an answer to nothing the suite asked.
pub(crate) fn no_stray_answers(cx: &Cx, after: &str) -> Result<(), Outcome> {
    match cx.stray_answers().first() {
        Some(answer) => Err(fail(format!(
            "after {after}, the client sent an answer to nothing asked: {}",
            short(answer)
        ))),
        None => Ok(()),
    }
}

/// Sends `what` (by `send`) during the turn, proves with a barrier that the client went on
/// without answering it, ends the turn and checks the client ends as after a clean turn.
pub(crate) async fn tolerated(cx: &mut Cx, opened: &Opened, what: &str) -> Verdict {
    cx.barrier().await?;
    no_stray_answers(cx, what)?;
    cx.end_turn(opened, "end_turn").await;
    cx.ends_like_baseline(&format!("{what}: not answered, the turn went on"))
        .await
}

/// Passes when the client ends without a crash: an exit by itself (any status but a
/// signal) if it ends after a clean turn, else still running.
pub(crate) async fn ends_without_crash(cx: &mut Cx, what: &str) -> Verdict {
    match cx.baseline.exit {
        Some(_) => match cx.wait_exit().await {
            Some(acp_host::supervisor::recovery::ExitStatus::Signal(signal)) => Err(fail(format!(
                "{what}; the client was killed by signal {signal}{}",
                cx.client.stderr_tail()
            ))),
            Some(status) => Ok(format!("{what}; the client ended with {status}")),
            None => Err(fail(format!(
                "{what}; the client did not end within {:?} (it does after a clean turn)",
                cx.scaled(super::cx::ANSWER)
            ))),
        },
        None => {
            cx.drain_for(Duration::from_millis(300)).await;
            match cx.client.exit {
                None => Ok(format!("{what}; the client is still running")),
                Some(status) => Err(fail(format!(
                    "{what}; the client ended with {status}, but keeps running after a clean turn{}",
                    cx.client.stderr_tail()
                ))),
            }
        }
    }
}

/// Waits for the client's exit (if it ends by itself) and a moment more for its last output.
pub(crate) async fn settle_output(cx: &mut Cx) {
    if cx.baseline.exit.is_some() {
        cx.wait_exit().await;
    }
    cx.drain_for(Duration::from_millis(200)).await;
}
