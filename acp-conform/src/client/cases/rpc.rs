//! JSON-RPC duties of a client (R-RPC-9, R-ID-1, R-ID-6, R-RPC-10, R-CANCEL-4): unknown
//! requests are `-32601`, notifications are never answered, ids are echoed exactly, stray
//! responses are ignored, malformed requests get an error.

use serde_json::{Value, json};

use super::{no_stray_answers, short, tolerated};
use crate::client::case::{ClientCase, client_case as case};
use crate::client::cx::{Cx, error_code};
use crate::conform_ensure as ensure;
use crate::verdict::{Verdict, fail};

pub(super) fn cases() -> Vec<ClientCase> {
    vec![
        case!(
            "rpc",
            "unknown-request-32601",
            "R-RPC-9",
            Mandatory,
            "A request for a method nobody knows (`conform/unknown_method`) is answered `-32601`.",
            unknown_request
        ),
        case!(
            "rpc",
            "unknown-extension-request-32601",
            "R-RPC-9",
            Mandatory,
            "An extension request the client does not serve (`_conform/unknown_method`) is answered `-32601`.",
            unknown_extension
        ),
        case!(
            "rpc",
            "unknown-notification-ignored",
            "R-RPC-9",
            Mandatory,
            "A notification nobody knows (`conform/notice`) is not answered; the turn goes on.",
            unknown_notification
        ),
        case!(
            "rpc",
            "extension-notification-ignored",
            "R-RPC-9",
            Mandatory,
            "An extension notification (`_conform/notice`) is not answered; the turn goes on.",
            extension_notification
        ),
        case!(
            "rpc",
            "invalid-notification-not-answered",
            "R-CLIENT-6",
            Mandatory,
            "A `session/update` with no `update` member is a notification still: never answered, not even with an error.",
            invalid_notification
        ),
        case!(
            "rpc",
            "unknown-response-ignored",
            "R-ID-6",
            Mandatory,
            "A response to an id the client never used is ignored: not answered, the turn goes on.",
            unknown_response
        ),
        case!(
            "rpc",
            "malformed-request-error",
            "R-RPC-10",
            Mandatory,
            "`session/request_permission` without `toolCall` and `options` is answered with an error, never a result or silence.",
            malformed_request
        ),
        case!(
            "rpc",
            "cancel-request-settles-once",
            "R-CANCEL-4",
            Advisory,
            "`$/cancel_request` right after a permission request: that request is answered exactly once (its outcome or `-32800`).",
            cancel_request
        ),
        case!(
            "ids",
            "string-id",
            "R-ID-1",
            Mandatory,
            "A request with the string id \"conform-ß-1\" is answered with exactly that id.",
            id_string
        ),
        case!(
            "ids",
            "zero-id",
            "R-ID-1",
            Mandatory,
            "A request with id 0 is answered with id 0.",
            id_zero
        ),
        case!(
            "ids",
            "negative-id",
            "R-ID-1",
            Mandatory,
            "A request with id -7 is answered with id -7.",
            id_negative
        ),
        case!(
            "ids",
            "id-past-2-53",
            "R-ID-1",
            Mandatory,
            "A request with id 9007199254740993 (past 2^53) is answered with exactly that id, not a rounded one.",
            id_big
        ),
        case!(
            "ids",
            "empty-string-id",
            "R-ID-1",
            Mandatory,
            "A request with the id \"\" is answered with id \"\".",
            id_empty
        ),
    ]
}

/// Sends `method` as a request and expects `-32601`.
async fn expect_32601(cx: &mut Cx, method: &str) -> Verdict {
    let opened = cx.open().await?;
    let id = cx
        .request(method, json!({"sessionId": opened.session}))
        .await;
    let answer = cx.response(&id, method).await?;
    cx.end_turn(&opened, "end_turn").await;
    match error_code(&answer) {
        Some(-32601) => Ok(format!("{method} answered -32601")),
        Some(code) => Err(fail(format!(
            "{method} answered error {code}, expected -32601"
        ))),
        None => Err(fail(format!(
            "{method} answered with a result, expected error -32601: {}",
            short(&answer)
        ))),
    }
}

async fn unknown_request(cx: &mut Cx) -> Verdict {
    expect_32601(cx, "conform/unknown_method").await
}

async fn unknown_extension(cx: &mut Cx) -> Verdict {
    expect_32601(cx, "_conform/unknown_method").await
}

async fn unknown_notification(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.notify("conform/notice", json!({"sessionId": opened.session}))
        .await;
    tolerated(cx, &opened, "the notification conform/notice").await
}

async fn extension_notification(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.notify("_conform/notice", json!({"sessionId": opened.session}))
        .await;
    tolerated(cx, &opened, "the notification _conform/notice").await
}

async fn invalid_notification(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.notify("session/update", json!({"sessionId": opened.session}))
        .await;
    tolerated(cx, &opened, "a session/update without update").await
}

async fn unknown_response(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.send(&json!({"jsonrpc": "2.0", "id": 987_654, "result": {}}))
        .await;
    tolerated(cx, &opened, "a response to id 987654").await
}

async fn malformed_request(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    let id = cx
        .request(
            "session/request_permission",
            json!({"sessionId": opened.session}),
        )
        .await;
    let answer = cx
        .response(&id, "a malformed session/request_permission")
        .await?;
    cx.end_turn(&opened, "end_turn").await;
    match error_code(&answer) {
        Some(code) => Ok(format!("answered error {code}")),
        None => Err(fail(format!(
            "a malformed session/request_permission answered with a result: {}",
            short(&answer)
        ))),
    }
}

async fn cancel_request(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    cx.update(
        &opened.session,
        super::permission::tool_call("conform-tool-c"),
    )
    .await;
    let id = cx
        .request(
            "session/request_permission",
            super::permission::permission_params(
                &opened.session,
                "conform-tool-c",
                &super::permission::standard_options(),
            ),
        )
        .await;
    cx.notify("$/cancel_request", json!({"requestId": id}))
        .await;
    let answer = cx.response(&id, "the cancelled permission request").await?;
    cx.barrier().await?;
    no_stray_answers(cx, "$/cancel_request")?;
    cx.end_turn(&opened, "end_turn").await;
    Ok(match error_code(&answer) {
        Some(code) => format!("answered once, error {code}"),
        None => format!("answered once, {}", short(&answer["result"])),
    })
}

/// A request with `id`: the answer must carry it exactly.
async fn id_echo(cx: &mut Cx, id: Value) -> Verdict {
    let opened = cx.open().await?;
    cx.request_with(id.clone(), "_conform/echo_id", json!({}))
        .await;
    let (_, answer) = cx
        .wait_for(&format!("an answer to the request with id {id}"), |m| {
            m.get("method").is_none()
        })
        .await?;
    cx.end_turn(&opened, "end_turn").await;
    ensure!(
        answer["id"] == id,
        "sent id {id}, the answer carries id {}",
        answer["id"]
    );
    Ok(format!("id {id} echoed"))
}

async fn id_string(cx: &mut Cx) -> Verdict {
    id_echo(cx, json!("conform-ß-1")).await
}

async fn id_zero(cx: &mut Cx) -> Verdict {
    id_echo(cx, json!(0)).await
}

async fn id_negative(cx: &mut Cx) -> Verdict {
    id_echo(cx, json!(-7)).await
}

async fn id_big(cx: &mut Cx) -> Verdict {
    id_echo(cx, json!(9_007_199_254_740_993u64)).await
}

async fn id_empty(cx: &mut Cx) -> Verdict {
    id_echo(cx, json!("")).await
}
