//! Reading the agent's lines (R-FRAME-*, R-ENV-1): CRLF, writes cut anywhere, blank lines,
//! several messages in one write, lines that are not JSON or not UTF-8, a last line without
//! a newline.

use serde_json::json;

use super::{ends_without_crash, no_stray_answers};
use crate::client::case::{ClientCase, client_case as case};
use crate::client::cx::{Cx, SESSION, init_result};
use crate::verdict::{Verdict, fail};

pub(super) fn cases() -> Vec<ClientCase> {
    vec![
        case!(
            "framing",
            "crlf-lines",
            "R-FRAME-1",
            Mandatory,
            "Every agent line ends with `\\r\\n`: the client reads them all and finishes the turn.",
            crlf
        ),
        case!(
            "framing",
            "split-writes",
            "R-FRAME-4",
            Mandatory,
            "The agent's answers arrive in 3-byte writes: the client finishes the turn.",
            split_writes
        ),
        case!(
            "framing",
            "blank-lines",
            "R-FRAME-2",
            Mandatory,
            "Blank and whitespace-only lines between messages are skipped without an answer.",
            blank_lines
        ),
        case!(
            "framing",
            "many-messages-one-write",
            "R-FRAME-1",
            Mandatory,
            "Three updates and the turn's answer in one write: all are read.",
            one_write
        ),
        case!(
            "framing",
            "garbage-line-survived",
            "R-ENV-1",
            Advisory,
            "A line that is not JSON: the client goes on (an answer, if any, is `-32700` with id null).",
            garbage
        ),
        case!(
            "framing",
            "invalid-utf8-survived",
            "R-FRAME-6",
            Advisory,
            "A line that is not UTF-8: the client goes on.",
            invalid_utf8
        ),
        case!(
            "framing",
            "last-line-without-newline",
            "R-FRAME-3",
            Advisory,
            "The turn's answer as the last line without a newline, then EOF: the turn still ends (as after a clean turn).",
            last_line
        ),
    ]
}

fn line(value: serde_json::Value, end: &str) -> String {
    format!("{value}{end}")
}

async fn crlf(cx: &mut Cx) -> Verdict {
    let (_, init) = cx.request_of("initialize").await?;
    cx.send_raw(
        line(
            json!({"jsonrpc": "2.0", "id": init["id"], "result": init_result()}),
            "\r\n",
        )
        .as_bytes(),
    )
    .await;
    let (_, new) = cx.request_of("session/new").await?;
    cx.send_raw(
        line(
            json!({"jsonrpc": "2.0", "id": new["id"], "result": {"sessionId": SESSION}}),
            "\r\n",
        )
        .as_bytes(),
    )
    .await;
    let (_, prompt) = cx.request_of("session/prompt").await?;
    cx.send_raw(
        line(
            json!({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": "end_turn"}}),
            "\r\n",
        )
        .as_bytes(),
    )
    .await;
    cx.ends_like_baseline("CRLF lines").await
}

async fn split_writes(cx: &mut Cx) -> Verdict {
    let (_, init) = cx.request_of("initialize").await?;
    let bytes = line(
        json!({"jsonrpc": "2.0", "id": init["id"], "result": init_result()}),
        "\n",
    );
    cx.send_split(bytes.as_bytes(), 3).await;
    let (_, new) = cx.request_of("session/new").await?;
    let bytes = line(
        json!({"jsonrpc": "2.0", "id": new["id"], "result": {"sessionId": SESSION}}),
        "\n",
    );
    cx.send_split(bytes.as_bytes(), 3).await;
    let (_, prompt) = cx.request_of("session/prompt").await?;
    let bytes = line(
        json!({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": "end_turn"}}),
        "\n",
    );
    cx.send_split(bytes.as_bytes(), 3).await;
    cx.ends_like_baseline("answers in 3-byte writes").await
}

async fn blank_lines(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.send_raw(b"\n   \n\t\n\r\n").await;
    cx.say(&opened.session, "conform ").await;
    cx.send_raw(b"\n\n").await;
    cx.barrier().await?;
    no_stray_answers(cx, "blank lines")?;
    cx.end_turn(&opened, "end_turn").await;
    cx.ends_like_baseline("blank lines skipped").await
}

async fn one_write(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    let mut bytes = String::new();
    for i in 0..3 {
        bytes.push_str(&line(json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": opened.session,
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": format!("conform-{i} ")}}}}), "\n"));
    }
    bytes.push_str(&line(
        json!({"jsonrpc": "2.0", "id": opened.prompt_id, "result": {"stopReason": "end_turn"}}),
        "\n",
    ));
    cx.send_raw(bytes.as_bytes()).await;
    cx.ends_like_baseline("four messages in one write").await
}

/// After `bytes`, the turn goes on; an answer to them must be a null-id error (the
/// exchange monitor checks that).
async fn survived(cx: &mut Cx, bytes: &[u8], what: &str) -> Verdict {
    let opened = cx.open().await?;
    cx.send_raw(bytes).await;
    cx.barrier().await?;
    for answer in cx.stray_answers() {
        if answer["id"].is_null() && answer.get("error").is_some() {
            continue;
        }
        return Err(fail(format!(
            "after {what}, the client sent {}",
            super::short(&answer)
        )));
    }
    cx.end_turn(&opened, "end_turn").await;
    cx.ends_like_baseline(&format!("{what}: the turn went on"))
        .await
}

async fn garbage(cx: &mut Cx) -> Verdict {
    survived(
        cx,
        b"conform: this line is not JSON\n",
        "a line that is not JSON",
    )
    .await
}

async fn invalid_utf8(cx: &mut Cx) -> Verdict {
    survived(
        cx,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"conform/\xff\xfe\"}\n",
        "a line that is not UTF-8",
    )
    .await
}

async fn last_line(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.all_answered = false;
    let answer =
        json!({"jsonrpc": "2.0", "id": opened.prompt_id, "result": {"stopReason": "end_turn"}});
    cx.send_raw(answer.to_string().as_bytes()).await;
    cx.hang_up().await;
    ends_without_crash(cx, "the last line had no newline").await
}
