//! The agent's use of the client's terminals (R-FS-3..R-FS-5). The harness offers
//! `terminal: true` and serves `terminal/*` for real (`terminal_host`); a prompt asks for a
//! shell command. A model decides whether a tool runs, so an agent that creates no terminal
//! when asked makes the case not applicable (a skip with that reason), never a failure.

use serde_json::{Value, json};

use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::{Cx, Kind, TURN, kind};
use crate::verdict::{Outcome, Verdict, fail, skip};

/// The command of `terminal/released-by-turn-end`: quick, a little output.
pub const QUICK_COMMAND: &str = "printf 'conform-terminal-ok\\n'";
/// The command of `terminal/cancel-kills-command`: runs until it is killed.
pub const LONG_COMMAND: &str = "sleep 30";
/// The command of `terminal/output-limit-honoured`: about 190 KB of output, each line with a
/// two-byte character, more than an agent usually keeps.
pub const BIG_COMMAND: &str = "yes 'conform-é-output' | head -n 10000";

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "terminal",
            "released-by-turn-end",
            "R-FS-3",
            Capability,
            "Asked to run a command with terminal offered: every terminal it creates is waited for or read, then released before the turn's answer.",
            released_by_turn_end
        ),
        case!(
            "terminal",
            "cancel-kills-command",
            "R-FS-4",
            Advisory,
            "session/cancel while its command runs: the agent kills or releases the terminal and answers the turn cancelled.",
            cancel_kills_command
        ),
        case!(
            "terminal",
            "output-limit-honoured",
            "R-FS-5",
            Capability,
            "A command with more output than the agent keeps: outputByteLimit is a non-negative integer, the truncated output is read and the turn goes on.",
            output_limit_honoured
        ),
    ]
}

/// The prompt that asks for `command`.
fn ask(command: &str) -> String {
    format!("Run this shell command in a terminal and tell me what it printed: {command}")
}

/// The skip of an agent that created no terminal when asked to run `command`.
fn no_terminal(command: &str) -> Outcome {
    skip(format!(
        "the agent created no terminal when asked to run `{command}` (it uses none, or its model chose otherwise)"
    ))
}

/// Ids of the terminals the harness created for the agent, in order.
fn created(cx: &Cx) -> Vec<String> {
    cx.terminals
        .as_ref()
        .map(|h| h.terminals.iter().map(|t| t.id.clone()).collect())
        .unwrap_or_default()
}

/// Indexes of the agent's `method` requests naming terminal `id`.
fn calls_for(cx: &Cx, method: &str, id: &str) -> Vec<usize> {
    cx.calls_of(method)
        .into_iter()
        .filter(|(_, m)| m["params"]["terminalId"] == id)
        .map(|(i, _)| i)
        .collect()
}

/// Opens a session with `terminal: true` and runs one turn asking for `command`; returns the
/// index of the turn's answer.
async fn terminal_turn(cx: &mut Cx, command: &str) -> Result<usize, Outcome> {
    cx.offer_terminal();
    let session = cx.open().await?;
    let id = cx.prompt(&session, &ask(command)).await?;
    let end = cx.turn_end(&id).await?;
    cx.settle().await?;
    Ok(end)
}

async fn released_by_turn_end(cx: &mut Cx) -> Verdict {
    let end = terminal_turn(cx, QUICK_COMMAND).await?;
    let terminals = created(cx);
    if terminals.is_empty() {
        return Err(no_terminal(QUICK_COMMAND));
    }
    for id in &terminals {
        let release = calls_for(cx, "terminal/release", id).first().copied();
        let Some(release) = release.filter(|&r| r < end) else {
            return Err(fail(format!(
                "terminal {id} was not released before the turn's answer (no terminal/release for it{})",
                if release.is_some() {
                    " until after the answer"
                } else {
                    ""
                }
            )));
        };
        let used = ["terminal/wait_for_exit", "terminal/output"]
            .iter()
            .flat_map(|m| calls_for(cx, m, id))
            .any(|i| i < release);
        ensure!(
            used,
            "terminal {id} was released without terminal/wait_for_exit or terminal/output before it"
        );
    }
    Ok(format!(
        "{} terminal(s) created, waited for or read, and released before the turn's answer",
        terminals.len()
    ))
}

async fn cancel_kills_command(cx: &mut Cx) -> Verdict {
    cx.offer_terminal();
    let session = cx.open().await?;
    let id = cx.prompt(&session, &ask(LONG_COMMAND)).await?;
    let prompt_id = id.clone();
    let first = cx
        .wait_for("terminal/create or the turn's answer", TURN, move |m| {
            m.get("method") == Some(&json!("terminal/create"))
                || (kind(m) == Kind::Response && m.get("id") == Some(&prompt_id))
        })
        .await?;
    if kind(cx.message(first)) == Kind::Response {
        return Err(no_terminal(LONG_COMMAND));
    }
    let Some(terminal) = created(cx).pop() else {
        return Err(fail("terminal/create was not served"));
    };
    let running = cx
        .terminals
        .as_mut()
        .and_then(|h| h.get(&terminal))
        .is_some_and(|t| t.running());
    if !running {
        return Err(skip(format!(
            "the command of terminal {terminal} ended before the cancel: {}",
            cx.terminals.as_ref().map_or(Value::Null, |h| h
                .terminals
                .last()
                .map_or(Value::Null, |t| t.params.clone()))
        )));
    }
    cx.notify("session/cancel", json!({"sessionId": session}))
        .await?;
    let end = cx.turn_end(&id).await?;
    let reason = cx.stop_reason(end)?;
    ensure!(
        reason == "cancelled",
        "the turn cancelled while its command ran ended {reason:?}, expected \"cancelled\""
    );
    cx.settle().await?;
    let stopped: Vec<usize> = ["terminal/kill", "terminal/release"]
        .iter()
        .flat_map(|m| calls_for(cx, m, &terminal))
        .filter(|&i| i < end)
        .collect();
    ensure!(
        !stopped.is_empty(),
        "the turn ended cancelled without terminal/kill or terminal/release for {terminal}, whose command still ran"
    );
    Ok(format!(
        "the running command of {terminal} was killed or released, then the turn ended cancelled"
    ))
}

async fn output_limit_honoured(cx: &mut Cx) -> Verdict {
    let end = terminal_turn(cx, BIG_COMMAND).await?;
    if created(cx).is_empty() {
        return Err(no_terminal(BIG_COMMAND));
    }
    let host = cx.terminals.as_ref().expect("offered");
    let mut limits = Vec::new();
    for terminal in &host.terminals {
        match terminal.params.get("outputByteLimit") {
            None | Some(Value::Null) => limits.push(String::from("none")),
            Some(limit) if limit.is_u64() => limits.push(limit.to_string()),
            Some(limit) => {
                return Err(fail(format!(
                    "terminal/create sent outputByteLimit {limit}: not a non-negative integer (uint64)"
                )));
            }
        }
    }
    let truncated = host.terminals.iter().filter(|t| t.served_truncated).count();
    if truncated == 0 {
        return Err(skip(format!(
            "no terminal/output answer was truncated (outputByteLimit: {}), so there was nothing to check",
            limits.join(", ")
        )));
    }
    let answer = cx.message(end).clone();
    ensure!(
        answer.get("result").is_some(),
        "after a truncated terminal/output the prompt was answered with an error: {}",
        answer.get("error").unwrap_or(&Value::Null)
    );
    let reason = cx.stop_reason(end)?;
    Ok(format!(
        "outputByteLimit {}: the output was cut to it (truncated: true), read, and the turn ended {reason}",
        limits.join(", ")
    ))
}
