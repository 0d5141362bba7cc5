//! Chaos: what a real client's timing does to an agent, drawn from the case's seeded generator
//! (`--chaos SEED`, seed 0 without it), so every run with a seed is the same run. Lines that
//! stall half-written, a client that vanishes in the middle of a turn, and cancels sent again
//! and again, some after the turn has ended.

use std::time::{Duration, Instant};

use serde_json::json;

use super::cancel::{cancelled_answer, running_turn};
use super::process::exits_within;
use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::{Cx, Kind, kind};
use crate::verdict::Verdict;

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "chaos",
            "mid-line-delays",
            "R-FRAME-4",
            Mandatory,
            "initialize, session/new and an unknown method, each written in pieces with pauses of 10 to 120 ms inside the line: each is answered once, with its id.",
            mid_line_delays
        ),
        case!(
            "chaos",
            "client-vanishes-mid-turn",
            "R-PROC-2",
            Advisory,
            "The client disappears at a seeded moment of a running turn (stdin at EOF, stdout closed, so the agent's writes fail): the agent exits within 5 s and leaves nothing in its process group.",
            client_vanishes
        ),
        case!(
            "chaos",
            "duplicate-cancels",
            "R-CANCEL-1",
            Mandatory,
            "2 to 6 session/cancel for one running turn at seeded intervals, 1 to 3 more after its answer: one cancelled answer, no answer to any cancel, and the next prompt is not cancelled by the stale ones.",
            duplicate_cancels
        ),
    ]
}

/// Sleeps a pause drawn from `low..=high` milliseconds; returns it.
async fn pause(cx: &mut Cx, low: u64, high: u64) -> u64 {
    let ms = cx.rng.between(low, high);
    smol::Timer::after(Duration::from_millis(ms)).await;
    ms
}

async fn mid_line_delays(cx: &mut Cx) -> Verdict {
    let cwd = cx.cwd().to_string_lossy().into_owned();
    let requests = [
        ("initialize", super::init_params()),
        ("session/new", json!({"cwd": cwd, "mcpServers": []})),
        ("conform/no_such_method", json!({})),
    ];
    let (mut pieces, mut longest) = (0, 0);
    let mut ids = Vec::new();
    for (method, params) in requests {
        let id = cx.fresh_id();
        ids.push(id.clone());
        let line = format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        );
        let bytes = line.as_bytes();
        let mut cuts = cx.rng.cuts(bytes.len());
        if cuts.len() == 1 {
            // Always at least one stall inside the line.
            cuts.insert(0, bytes.len() / 2);
        }
        let mut start = 0;
        for end in cuts {
            cx.send_raw(&bytes[start..end]).await?;
            pieces += 1;
            if end < bytes.len() {
                longest = longest.max(pause(cx, 10, 120).await);
            }
            start = end;
        }
        let index = cx.response(&id).await.map_err(|o| o.context(method))?;
        let message = cx.message(index);
        ensure!(
            kind(message) == Kind::Response,
            "{method} was answered with {message}"
        );
    }
    cx.settle().await?;
    for id in &ids {
        ensure!(
            cx.responses_to(id) == 1,
            "request {id} was answered {} times",
            cx.responses_to(id)
        );
    }
    Ok(format!(
        "3 requests written in {pieces} pieces, stalls of up to {longest} ms inside lines: each answered once"
    ))
}

async fn client_vanishes(cx: &mut Cx) -> Verdict {
    running_turn(cx).await?;
    let wait = cx.rng.between(0, 300);
    cx.drain_for(Duration::from_millis(wait)).await;
    cx.subject.close_stdout();
    cx.close_stdin();
    let exited = exits_within(cx, "then").await?;
    let deadline = Instant::now() + cx.time(Duration::from_secs(1));
    while cx.subject.group_alive() {
        ensure!(
            Instant::now() < deadline,
            "{exited}, but processes of its group outlived it"
        );
        smol::Timer::after(Duration::from_millis(10)).await;
    }
    Ok(format!(
        "vanished {wait} ms into the turn, {exited}, its group empty"
    ))
}

async fn duplicate_cancels(cx: &mut Cx) -> Verdict {
    let (session, id) = running_turn(cx).await?;
    let cancel = json!({"sessionId": session});
    let during = cx.rng.between(2, 6);
    for _ in 0..during {
        cx.notify("session/cancel", cancel.clone()).await?;
        pause(cx, 0, 30).await;
    }
    cancelled_answer(cx, &id).await?;
    let after = cx.rng.between(1, 3);
    for _ in 0..after {
        cx.notify("session/cancel", cancel.clone()).await?;
        pause(cx, 0, 30).await;
    }
    // A cancel answered is an answer to no request of ours: the exchange monitor fails the
    // case on it; the barrier reads it first.
    cx.settle().await?;
    // The next turn lasts a moment (when the agent can sleep), so a stale cancel has a turn
    // to hit.
    let mut text = super::prompt::chatty(cx);
    if let Ok(sleep) = cx.command("sleep", "300") {
        text = format!("{text}\n{sleep}");
    }
    let next = cx.prompt(&session, &text).await?;
    let end = cx.turn_end(&next).await?;
    let message = cx.message(end).clone();
    if let Some(error) = message.get("error") {
        return Err(crate::verdict::fail(format!(
            "the prompt after the cancels was answered with error {error}"
        )));
    }
    let reason = cx.stop_reason(end)?;
    ensure!(
        reason != "cancelled",
        "the prompt after the cancels ended cancelled: a stale cancel reached it"
    );
    Ok(format!(
        "{during} cancels during the turn, {after} after: one cancelled answer; the next prompt ended {reason}"
    ))
}
