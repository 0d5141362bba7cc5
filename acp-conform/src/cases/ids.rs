//! Request ids (R-ID-*): integers and strings come back exactly as sent (JSON-RPC 2.0 §4:
//! "The Server MUST reply with the same value"); other JSON types are not ids.

use serde_json::{Value, json};

use super::{expect_error_for, init_line, still_serving};
use crate::case::Case;
use crate::conform_case as case;
use crate::cx::{Cx, Kind, kind};
use crate::verdict::{Verdict, fail};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "ids",
            "integer-one",
            "R-ID-1",
            Mandatory,
            "Id 1 is echoed as the number 1 (not \"1\").",
            one
        ),
        case!(
            "ids",
            "integer-zero",
            "R-ID-1",
            Mandatory,
            "Id 0 is echoed exactly.",
            zero
        ),
        case!(
            "ids",
            "negative-integer",
            "R-ID-1",
            Mandatory,
            "Id -7 is echoed exactly.",
            negative
        ),
        case!(
            "ids",
            "integer-past-2-53",
            "R-ID-1",
            Mandatory,
            "Id 9007199254740993 (2^53+1) is echoed exactly, not rounded.",
            past_2_53
        ),
        case!(
            "ids",
            "largest-i64",
            "R-ID-1",
            Mandatory,
            "Id 9223372036854775807 is echoed exactly.",
            largest_i64
        ),
        case!(
            "ids",
            "string",
            "R-ID-1",
            Mandatory,
            "A string id is echoed exactly.",
            string
        ),
        case!(
            "ids",
            "empty-string",
            "R-ID-1",
            Mandatory,
            "The empty string id is echoed exactly.",
            empty_string
        ),
        case!(
            "ids",
            "numeric-string",
            "R-ID-1",
            Mandatory,
            "The string id \"42\" comes back a string.",
            numeric_string
        ),
        case!(
            "ids",
            "escaped-string",
            "R-ID-1, R-ENV-7",
            Mandatory,
            "A string id with escapes and non-ASCII is echoed as the same string.",
            escaped_string
        ),
        case!(
            "ids",
            "echoed-on-errors",
            "R-ID-1",
            Mandatory,
            "An error response carries the request's id.",
            echoed_on_errors
        ),
        case!(
            "ids",
            "number-and-string-distinct",
            "R-ID-1",
            Mandatory,
            "Ids 5 and \"5\" in flight together are two requests, each answered with its own id.",
            distinct
        ),
        case!(
            "ids",
            "reused-after-answer",
            "R-ID-1, R-RPC-1",
            Mandatory,
            "An id used again after its answer is answered again.",
            reused
        ),
        case!(
            "ids",
            "fractional-number",
            "R-ID-2",
            Advisory,
            "Id 1.5: one answer, with that id or (rejected) null; the connection goes on.",
            fractional
        ),
        case!(
            "ids",
            "boolean-rejected",
            "R-ID-2",
            Mandatory,
            "Id true gets -32600 (id null).",
            boolean
        ),
        case!(
            "ids",
            "object-rejected",
            "R-ID-2",
            Mandatory,
            "An object id gets -32600 (id null).",
            object
        ),
        case!(
            "ids",
            "array-rejected",
            "R-ID-2",
            Mandatory,
            "An array id gets -32600 (id null).",
            array
        ),
    ]
}

/// Sends `initialize` with the id spelled `raw`, expects exactly `expected` back.
async fn echo(cx: &mut Cx, raw: &str, expected: Value) -> Verdict {
    cx.send_raw(init_line(raw).as_bytes()).await?;
    let index = cx
        .wait_for("an answer to initialize", crate::cx::ANSWER, |m| {
            kind(m) == Kind::Response
        })
        .await?;
    let got = cx.message(index).get("id").cloned().unwrap_or(Value::Null);
    crate::conform_ensure!(
        got == expected,
        "sent id {raw}, the answer carries id {got}"
    );
    Ok(format!("id {raw} echoed exactly"))
}

async fn one(cx: &mut Cx) -> Verdict {
    echo(cx, "1", json!(1)).await
}
async fn zero(cx: &mut Cx) -> Verdict {
    echo(cx, "0", json!(0)).await
}
async fn negative(cx: &mut Cx) -> Verdict {
    echo(cx, "-7", json!(-7)).await
}
async fn past_2_53(cx: &mut Cx) -> Verdict {
    echo(cx, "9007199254740993", json!(9_007_199_254_740_993u64)).await
}
async fn largest_i64(cx: &mut Cx) -> Verdict {
    echo(cx, "9223372036854775807", json!(i64::MAX)).await
}
async fn string(cx: &mut Cx) -> Verdict {
    echo(cx, "\"conform-id\"", json!("conform-id")).await
}
async fn empty_string(cx: &mut Cx) -> Verdict {
    echo(cx, "\"\"", json!("")).await
}
async fn numeric_string(cx: &mut Cx) -> Verdict {
    echo(cx, "\"42\"", json!("42")).await
}
async fn escaped_string(cx: &mut Cx) -> Verdict {
    echo(cx, r#""a\"b\\c\/\u00e9\ud83d\ude00""#, json!("a\"b\\c/é😀")).await
}

async fn echoed_on_errors(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    cx.request_with_id(json!("error-id"), "conform/ping", json!({}))
        .await?;
    let (code, _) = cx.error(&json!("error-id")).await?;
    Ok(format!("error {code} carried the id \"error-id\""))
}

async fn distinct(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    let both = concat!(
        r#"{"jsonrpc":"2.0","id":5,"method":"conform/ping","params":{}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"5","method":"conform/ping","params":{}}"#,
        "\n"
    );
    cx.send_raw(both.as_bytes()).await?;
    cx.response(&json!(5)).await?;
    cx.response(&json!("5")).await?;
    // A second answer to either, read by the barrier, is R-RPC-1 for the exchange monitor.
    cx.settle().await?;
    Ok(String::from("ids 5 and \"5\" each answered once"))
}

async fn reused(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    for _ in 0..2 {
        cx.request_with_id(json!("again"), "conform/ping", json!({}))
            .await?;
        let wanted = cx.responses_to(&json!("again")) + 1;
        cx.wait_for("a second answer to id \"again\"", crate::cx::ANSWER, |m| {
            kind(m) == Kind::Response && m.get("id") == Some(&json!("again"))
        })
        .await?;
        crate::conform_ensure!(
            cx.responses_to(&json!("again")) == wanted,
            "wrong number of answers"
        );
    }
    Ok(String::from(
        "the same id, used after its answer, was answered again",
    ))
}

async fn fractional(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    cx.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"conform/ping\",\"params\":{}}\n")
        .await?;
    let index = cx
        .wait_for("an answer to id 1.5", crate::cx::ANSWER, |m| {
            kind(m) == Kind::Response
        })
        .await?;
    let id = cx.message(index)["id"].clone();
    let ok = id == json!(1.5) || id.is_null();
    if !ok {
        return Err(fail(format!("id 1.5 answered with id {id}")));
    }
    still_serving(cx).await?;
    Ok(format!("answered with id {id}; the connection went on"))
}

async fn invalid_id(cx: &mut Cx, raw: &str) -> Verdict {
    cx.initialize().await?;
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{raw},\"method\":\"conform/ping\",\"params\":{{}}}}\n"
    );
    let bad: Value = serde_json::from_str(raw).unwrap_or(Value::Null);
    expect_error_for(cx, line.as_bytes(), -32600, &[Value::Null, bad]).await
}

async fn boolean(cx: &mut Cx) -> Verdict {
    invalid_id(cx, "true").await
}
async fn object(cx: &mut Cx) -> Verdict {
    invalid_id(cx, "{\"n\":1}").await
}
async fn array(cx: &mut Cx) -> Verdict {
    invalid_id(cx, "[1]").await
}
