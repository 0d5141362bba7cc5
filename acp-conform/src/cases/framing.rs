//! Framing and envelopes: how lines are cut and what a line must be (R-FRAME-*, R-ENV-*).
//! The ACP transport is newline-delimited JSON-RPC 2.0 over stdio.

use serde_json::{Value, json};

use super::{expect_error_for, init_line, null_id_errors, still_serving};
use crate::case::Case;
use crate::conform_case as case;
use crate::cx::Cx;
use crate::verdict::{Verdict, skip};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "framing",
            "crlf-line-endings",
            "R-FRAME-1",
            Mandatory,
            "A message ending in \\r\\n is read like one ending in \\n.",
            crlf
        ),
        case!(
            "framing",
            "blank-lines-skipped",
            "R-FRAME-2",
            Advisory,
            "Blank and whitespace-only lines before a message do not stop it being answered.",
            blank_lines
        ),
        case!(
            "framing",
            "byte-by-byte-writes",
            "R-FRAME-4",
            Mandatory,
            "A message written one byte at a time is answered.",
            byte_by_byte
        ),
        case!(
            "framing",
            "two-messages-one-write",
            "R-FRAME-4",
            Mandatory,
            "Two messages in one write are both answered.",
            two_in_one
        ),
        case!(
            "framing",
            "last-line-without-newline",
            "R-FRAME-3",
            Advisory,
            "A last request without a newline, then EOF, is still answered.",
            no_final_newline
        ),
        case!(
            "framing",
            "line-over-a-megabyte",
            "R-FRAME-5",
            Advisory,
            "An initialize of 1.5 MB (a large _meta) is answered: limits are not that small.",
            megabyte_line
        ),
        case!(
            "framing",
            "oversized-line-bounded",
            "R-FRAME-5",
            Advisory,
            "A 64 MiB line without JSON does not grow the agent by 48 MiB or more, and the next request is answered.",
            oversized_line
        ),
        case!(
            "framing",
            "invalid-json-parse-error",
            "R-ENV-1",
            Mandatory,
            "A line that is not JSON is answered -32700 with id null (JSON-RPC 2.0 §5.1).",
            invalid_json_error
        ),
        case!(
            "framing",
            "invalid-json-survived",
            "R-ENV-1, R-RPC-3",
            Advisory,
            "After a line that is not JSON the connection goes on.",
            invalid_json_survived
        ),
        case!(
            "framing",
            "invalid-utf8-parse-error",
            "R-FRAME-6",
            Mandatory,
            "A line that is not UTF-8 is answered -32700 with id null.",
            invalid_utf8_error
        ),
        case!(
            "framing",
            "invalid-utf8-survived",
            "R-FRAME-6",
            Advisory,
            "After a line that is not UTF-8 the agent is alive and answers.",
            invalid_utf8_survived
        ),
        case!(
            "framing",
            "batch-array-rejected",
            "R-ENV-2",
            Advisory,
            "A batch array gets one -32600 (id null); its request is not run (ACP v1 has no batches).",
            batch_array
        ),
        case!(
            "framing",
            "empty-array-rejected",
            "R-ENV-2",
            Mandatory,
            "`[]` gets -32600 with id null.",
            empty_array
        ),
        case!(
            "framing",
            "number-rejected",
            "R-ENV-2",
            Mandatory,
            "A JSON number as a message gets -32600 with id null.",
            number_message
        ),
        case!(
            "framing",
            "string-rejected",
            "R-ENV-2",
            Mandatory,
            "A JSON string as a message gets -32600 with id null.",
            string_message
        ),
        case!(
            "framing",
            "null-rejected",
            "R-ENV-2",
            Mandatory,
            "A JSON null as a message gets -32600 with id null.",
            null_message
        ),
        case!(
            "framing",
            "missing-jsonrpc",
            "R-ENV-3",
            Mandatory,
            "A request without `jsonrpc` gets -32600 (with its id or null).",
            missing_jsonrpc
        ),
        case!(
            "framing",
            "wrong-jsonrpc-version",
            "R-ENV-3",
            Mandatory,
            "A request with `jsonrpc: \"1.0\"` gets -32600.",
            wrong_jsonrpc
        ),
        case!(
            "framing",
            "jsonrpc-not-a-string",
            "R-ENV-3",
            Mandatory,
            "A request with `jsonrpc: 2.0` (a number) gets -32600.",
            jsonrpc_number
        ),
        case!(
            "framing",
            "missing-method",
            "R-ENV-6",
            Mandatory,
            "An object with an id but no method, result or error gets -32600.",
            missing_method
        ),
        case!(
            "framing",
            "method-not-a-string",
            "R-ENV-6",
            Mandatory,
            "A request whose method is a number gets -32600.",
            method_number
        ),
        case!(
            "framing",
            "escaped-member-names",
            "R-ENV-7",
            Mandatory,
            "Member names and the method compare after unescaping (`jso\\u006erpc`, `initi\\u0061lize`).",
            escaped_names
        ),
        case!(
            "framing",
            "members-in-any-order",
            "R-ENV-8",
            Mandatory,
            "Envelope members in another order (params first, jsonrpc last) are fine.",
            any_order
        ),
        case!(
            "framing",
            "unknown-members-ignored",
            "R-ENV-8",
            Advisory,
            "An unknown envelope member is ignored.",
            unknown_members
        ),
        case!(
            "framing",
            "whitespace-around-message",
            "R-FRAME-1",
            Mandatory,
            "Spaces and tabs around the JSON of a line are JSON whitespace.",
            whitespace_around
        ),
    ]
}

async fn initialized(cx: &mut Cx) -> Result<(), crate::verdict::Outcome> {
    cx.initialize().await.map(|_| ())
}

async fn answered_init(cx: &mut Cx, bytes: &[u8], id: Value) -> Verdict {
    cx.send_raw(bytes).await?;
    let result = cx.result(&id).await?;
    crate::conform_ensure!(
        result.get("protocolVersion").is_some(),
        "initialize answered without protocolVersion: {result}"
    );
    Ok(String::from("initialize answered"))
}

async fn crlf(cx: &mut Cx) -> Verdict {
    let line = init_line("1").replace('\n', "\r\n");
    answered_init(cx, line.as_bytes(), json!(1)).await
}

async fn blank_lines(cx: &mut Cx) -> Verdict {
    let line = format!("\n  \n\t\n\r\n{}", init_line("1"));
    answered_init(cx, line.as_bytes(), json!(1)).await?;
    cx.settle().await?;
    Ok(match null_id_errors(cx) {
        0 => String::from("initialize answered; blank lines skipped silently"),
        n => format!("initialize answered; {n} blank line(s) got an error reply (tolerated)"),
    })
}

async fn byte_by_byte(cx: &mut Cx) -> Verdict {
    for byte in init_line("1").bytes() {
        cx.send_raw(&[byte]).await?;
    }
    cx.result(&json!(1)).await?;
    Ok(String::from("initialize written byte by byte was answered"))
}

async fn two_in_one(cx: &mut Cx) -> Verdict {
    let both = format!("{}{}", init_line("1"), init_line("2"));
    cx.send_raw(both.as_bytes()).await?;
    cx.response(&json!(1)).await?;
    cx.response(&json!(2)).await?;
    Ok(String::from("both requests of one write answered"))
}

async fn no_final_newline(cx: &mut Cx) -> Verdict {
    initialized(cx).await?;
    cx.send_raw(br#"{"jsonrpc":"2.0","id":"last","method":"conform/ping","params":{}}"#)
        .await?;
    cx.close_stdin();
    cx.response(&json!("last")).await?;
    Ok(String::from(
        "the unterminated last request was answered at EOF",
    ))
}

async fn megabyte_line(cx: &mut Cx) -> Verdict {
    let padding = "x".repeat(1_500_000);
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}, "_meta": {"conform/padding": padding}}});
    let mut line = serde_json::to_vec(&message).unwrap_or_default();
    line.push(b'\n');
    answered_init(cx, &line, json!(1)).await?;
    Ok(format!("a {} byte initialize was answered", line.len()))
}

async fn oversized_line(cx: &mut Cx) -> Verdict {
    initialized(cx).await?;
    let Some(before) = cx.subject.peak_rss_kib() else {
        return Err(skip(
            "cannot read the agent's memory use (/proc/PID/status)",
        ));
    };
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..64 {
        cx.send_raw(&chunk).await?;
    }
    cx.send_raw(b"\n").await?;
    still_serving(cx).await?;
    let after = cx.subject.peak_rss_kib().unwrap_or(before);
    let grew_mib = after.saturating_sub(before) / 1024;
    crate::conform_ensure!(
        grew_mib < 48,
        "a 64 MiB line grew the agent's peak memory by {grew_mib} MiB: the line buffer is unbounded"
    );
    Ok(format!(
        "peak memory grew {grew_mib} MiB for a 64 MiB line; next request answered"
    ))
}

async fn invalid_json_error(cx: &mut Cx) -> Verdict {
    initialized(cx).await?;
    expect_error_for(
        cx,
        b"{\"jsonrpc\":\"2.0\",\"id\":7,\n",
        -32700,
        &[Value::Null],
    )
    .await
}

async fn invalid_json_survived(cx: &mut Cx) -> Verdict {
    initialized(cx).await?;
    cx.send_raw(b"this is not json\n{\"jsonrpc\":\n").await?;
    still_serving(cx).await?;
    Ok(String::from(
        "answered a request after two lines that are not JSON",
    ))
}

async fn invalid_utf8_error(cx: &mut Cx) -> Verdict {
    initialized(cx).await?;
    expect_error_for(cx, b"\xff\xfe\xfd\n", -32700, &[Value::Null]).await
}

async fn invalid_utf8_survived(cx: &mut Cx) -> Verdict {
    initialized(cx).await?;
    cx.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"conform/\xff\xfe\",\"params\":{}}\n")
        .await?;
    still_serving(cx).await?;
    Ok(String::from(
        "answered a request after a line that is not UTF-8",
    ))
}

async fn batch_array(cx: &mut Cx) -> Verdict {
    initialized(cx).await?;
    let inner = r#"{"jsonrpc":"2.0","id":"in-batch","method":"conform/ping","params":{}}"#;
    let detail = expect_error_for(
        cx,
        format!("[{inner}]\n").as_bytes(),
        -32600,
        &[Value::Null],
    )
    .await?;
    // An answer to the request inside the batch, read by the barrier, answers an id nobody
    // sent (R-ID-6) for the exchange monitor.
    cx.settle().await?;
    let arrays = cx
        .subject
        .lines
        .iter()
        .filter(|l| l.raw.trim_start().starts_with('['))
        .count();
    crate::conform_ensure!(arrays == 0, "the agent wrote a batch (array) response");
    Ok(detail)
}

async fn non_object(cx: &mut Cx, line: &[u8]) -> Verdict {
    initialized(cx).await?;
    expect_error_for(cx, line, -32600, &[Value::Null]).await
}

async fn empty_array(cx: &mut Cx) -> Verdict {
    non_object(cx, b"[]\n").await
}

async fn number_message(cx: &mut Cx) -> Verdict {
    non_object(cx, b"42\n").await
}

async fn string_message(cx: &mut Cx) -> Verdict {
    non_object(cx, b"\"initialize\"\n").await
}

async fn null_message(cx: &mut Cx) -> Verdict {
    non_object(cx, b"null\n").await
}

async fn bad_envelope(cx: &mut Cx, line: &str, id: Value) -> Verdict {
    initialized(cx).await?;
    let detail = expect_error_for(
        cx,
        format!("{line}\n").as_bytes(),
        -32600,
        &[id.clone(), Value::Null],
    )
    .await?;
    // A second answer, read by the barrier, is R-RPC-1 for the exchange monitor.
    cx.settle().await?;
    Ok(detail)
}

async fn missing_jsonrpc(cx: &mut Cx) -> Verdict {
    bad_envelope(
        cx,
        r#"{"id":"no-version","method":"conform/ping","params":{}}"#,
        json!("no-version"),
    )
    .await
}

async fn wrong_jsonrpc(cx: &mut Cx) -> Verdict {
    bad_envelope(
        cx,
        r#"{"jsonrpc":"1.0","id":"v1","method":"conform/ping","params":{}}"#,
        json!("v1"),
    )
    .await
}

async fn jsonrpc_number(cx: &mut Cx) -> Verdict {
    bad_envelope(
        cx,
        r#"{"jsonrpc":2.0,"id":"v-number","method":"conform/ping","params":{}}"#,
        json!("v-number"),
    )
    .await
}

async fn missing_method(cx: &mut Cx) -> Verdict {
    bad_envelope(
        cx,
        r#"{"jsonrpc":"2.0","id":"no-method","params":{}}"#,
        json!("no-method"),
    )
    .await
}

async fn method_number(cx: &mut Cx) -> Verdict {
    bad_envelope(
        cx,
        r#"{"jsonrpc":"2.0","id":"method-number","method":5,"params":{}}"#,
        json!("method-number"),
    )
    .await
}

async fn escaped_names(cx: &mut Cx) -> Verdict {
    let line = format!(
        "{{\"jso\\u006erpc\":\"\\u0032.0\",\"id\":1,\"method\":\"initi\\u0061lize\",\"params\":{}}}\n",
        super::init_params()
    );
    answered_init(cx, line.as_bytes(), json!(1)).await
}

async fn any_order(cx: &mut Cx) -> Verdict {
    let line = format!(
        "{{\"params\":{},\"id\":1,\"method\":\"initialize\",\"jsonrpc\":\"2.0\"}}\n",
        super::init_params()
    );
    answered_init(cx, line.as_bytes(), json!(1)).await
}

async fn unknown_members(cx: &mut Cx) -> Verdict {
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"conform\":{{\"x\":[1]}},\"method\":\"initialize\",\"params\":{}}}\n",
        super::init_params()
    );
    answered_init(cx, line.as_bytes(), json!(1)).await
}

async fn whitespace_around(cx: &mut Cx) -> Verdict {
    let line = format!(" \t {} \t\n", init_line("1").trim_end());
    answered_init(cx, line.as_bytes(), json!(1)).await
}
