//! Process hygiene (R-PROC-*, R-HOST-4): stdout carries only JSON-RPC lines; stdin EOF and
//! SIGTERM end the process promptly; nothing of it outlives it.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::Cx;
use crate::verdict::{Verdict, fail};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "process",
            "stdout-only-jsonrpc",
            "R-PROC-1",
            Mandatory,
            "Through initialize, session/new, a turn and an unknown method, every stdout line is one JSON-RPC 2.0 object.",
            stdout_only_jsonrpc
        ),
        case!(
            "process",
            "first-line-is-initialize-answer",
            "R-PROC-1",
            Mandatory,
            "Nothing comes on stdout before the initialize answer.",
            first_line
        ),
        case!(
            "process",
            "stdin-eof-exits",
            "R-PROC-2",
            Advisory,
            "After stdin EOF the process exits within 5 s.",
            eof_exits
        ),
        case!(
            "process",
            "stdin-eof-before-initialize-exits",
            "R-PROC-2",
            Advisory,
            "Stdin closed before any message: the process exits within 5 s.",
            eof_early
        ),
        case!(
            "process",
            "stdin-eof-during-turn-exits",
            "R-PROC-2",
            Advisory,
            "Stdin EOF while a turn runs: the process exits within 5 s.",
            eof_during_turn
        ),
        case!(
            "process",
            "sigterm-exits",
            "R-PROC-2",
            Advisory,
            "SIGTERM ends the process within 5 s.",
            sigterm_exits
        ),
        case!(
            "process",
            "no-orphaned-children",
            "R-HOST-4",
            Advisory,
            "After the process exits at stdin EOF, nothing is left in its process group.",
            no_orphans
        ),
    ]
}

/// The bound on exits (times `--timeout-scale`).
const EXIT: Duration = Duration::from_secs(5);

pub(super) async fn exits_within(cx: &mut Cx, what: &str) -> Verdict {
    let limit = cx.time(EXIT);
    let started = Instant::now();
    match cx.subject.wait_exit(started + limit).await {
        Some(status) => Ok(format!(
            "{what}: exited ({status:?}) after {} ms",
            started.elapsed().as_millis()
        )),
        None => Err(fail(format!("{what}: still running after {limit:?}"))),
    }
}

async fn stdout_only_jsonrpc(cx: &mut Cx) -> Verdict {
    let session = cx.open().await?;
    let text = super::prompt::chatty(cx);
    let id = cx.prompt(&session, &text).await?;
    cx.turn_end(&id).await?;
    cx.settle().await?;
    let bad: Vec<String> = cx
        .subject
        .lines
        .iter()
        .filter(|l| l.message.is_none())
        .map(|l| l.raw.chars().take(80).collect())
        .collect();
    ensure!(
        bad.is_empty(),
        "{} stdout line(s) are not JSON-RPC messages, first: {:?}",
        bad.len(),
        bad[0]
    );
    Ok(format!(
        "{} stdout lines, all JSON-RPC",
        cx.subject.lines.len()
    ))
}

async fn first_line(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    let first = &cx.subject.lines[0];
    let is_answer = first
        .message
        .as_ref()
        .is_some_and(|m| m["id"] == json!(1) && m.get("result").is_some());
    ensure!(
        is_answer,
        "the first stdout line is not the initialize answer: {:?}",
        first.raw.chars().take(80).collect::<String>()
    );
    Ok(String::from("the initialize answer came first"))
}

async fn eof_exits(cx: &mut Cx) -> Verdict {
    cx.open().await?;
    cx.close_stdin();
    exits_within(cx, "stdin EOF").await
}

async fn eof_early(cx: &mut Cx) -> Verdict {
    cx.close_stdin();
    exits_within(cx, "stdin EOF before initialize").await
}

async fn eof_during_turn(cx: &mut Cx) -> Verdict {
    let (_, id) = super::cancel::running_turn(cx).await?;
    cx.close_stdin();
    let verdict = exits_within(cx, "stdin EOF during a turn").await?;
    // What it wrote before exiting is in the pipe: read it to the end.
    let end = Instant::now() + cx.time(Duration::from_secs(1));
    while cx.next_message(end).await.is_some() {}
    let answered = cx.responses_to(&id) == 1;
    Ok(format!(
        "{verdict}; the running prompt was {}answered",
        if answered { "" } else { "not " }
    ))
}

async fn sigterm_exits(cx: &mut Cx) -> Verdict {
    cx.open().await?;
    cx.subject
        .terminate()
        .map_err(|e| fail(format!("cannot send SIGTERM: {e}")))?;
    exits_within(cx, "SIGTERM").await
}

async fn no_orphans(cx: &mut Cx) -> Verdict {
    let session = cx.open().await?;
    let text = super::prompt::chatty(cx);
    let id = cx.prompt(&session, &text).await?;
    cx.turn_end(&id).await?;
    cx.close_stdin();
    exits_within(cx, "stdin EOF").await?;
    let deadline = Instant::now() + cx.time(Duration::from_secs(1));
    while cx.subject.group_alive() {
        ensure!(
            Instant::now() < deadline,
            "processes of the agent's group outlived it"
        );
        smol::Timer::after(Duration::from_millis(10)).await;
    }
    Ok(String::from("the process group was empty after the exit"))
}
