//! Latency: how long the agent takes to answer, reported and never failed (issue 15).
//! A case here fails only when the answer never comes.

use std::time::Instant;

use crate::case::Case;
use crate::conform_case as case;
use crate::cx::Cx;
use crate::verdict::Verdict;

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "latency",
            "initialize",
            "R-INIT-5",
            Informational,
            "Milliseconds from the process start to the initialize answer.",
            initialize
        ),
        case!(
            "latency",
            "session-new",
            "R-SESSION-1",
            Informational,
            "Milliseconds from session/new to its answer.",
            session_new
        ),
        case!(
            "latency",
            "first-update",
            "R-TURN-3",
            Informational,
            "Milliseconds from a prompt to its first session/update, and to its answer.",
            first_update
        ),
    ]
}

async fn initialize(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    Ok(format!(
        "{} ms from spawn to the initialize answer",
        cx.subject.started.elapsed().as_millis()
    ))
}

async fn session_new(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    let started = Instant::now();
    cx.new_session().await?;
    Ok(format!("{} ms", started.elapsed().as_millis()))
}

async fn first_update(cx: &mut Cx) -> Verdict {
    let session = cx.open().await?;
    let text = super::prompt::chatty(cx);
    let started = Instant::now();
    let id = cx.prompt(&session, &text).await?;
    let end = cx.turn_end(&id).await?;
    let sent = cx.subject.lines[end].at;
    let first = cx
        .updates(&session)
        .into_iter()
        .map(|(i, _)| cx.subject.lines[i].at)
        .find(|at| *at >= started);
    let answer = sent.duration_since(started).as_millis();
    Ok(match first {
        Some(at) => format!(
            "first update after {} ms, answer after {answer} ms",
            at.duration_since(started).as_millis()
        ),
        None => format!("no update; answer after {answer} ms"),
    })
}
