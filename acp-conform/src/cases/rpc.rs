//! Requests and responses (R-RPC-*): unknown methods, bad params, exactly one answer each.

use serde_json::{Value, json};

use super::still_serving;
use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::{Cx, Kind, error_of, kind};
use crate::verdict::Verdict;

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "rpc",
            "unknown-method-32601",
            "R-RPC-9",
            Mandatory,
            "A request for an unknown method gets -32601 Method not found.",
            unknown_method
        ),
        case!(
            "rpc",
            "unknown-extension-method-32601",
            "R-RPC-9",
            Mandatory,
            "An unknown `_` extension request gets -32601 (spec: extensibility).",
            unknown_extension
        ),
        case!(
            "rpc",
            "unknown-dollar-method-32601",
            "R-RPC-9",
            Mandatory,
            "An unknown `$/` request gets -32601.",
            unknown_dollar
        ),
        case!(
            "rpc",
            "unknown-notification-ignored",
            "R-RPC-9",
            Mandatory,
            "An unknown notification gets no answer.",
            unknown_notification
        ),
        case!(
            "rpc",
            "unknown-extension-notification-ignored",
            "R-RPC-9",
            Mandatory,
            "An unknown `_` notification gets no answer (spec: SHOULD be ignored).",
            unknown_extension_notification
        ),
        case!(
            "rpc",
            "exactly-one-response-per-request",
            "R-RPC-1",
            Mandatory,
            "Eight requests in flight at once (good and bad) are each answered exactly once.",
            exactly_one
        ),
        case!(
            "rpc",
            "error-objects-well-formed",
            "R-RPC-4",
            Mandatory,
            "Every error the agent sends has an integer code and a string message.",
            error_objects
        ),
        case!(
            "rpc",
            "stray-result-ignored",
            "R-ID-6",
            Advisory,
            "A response to a request the agent never sent is not answered.",
            stray_result
        ),
        case!(
            "rpc",
            "stray-error-ignored",
            "R-ID-6",
            Advisory,
            "An error response to a request the agent never sent is not answered.",
            stray_error
        ),
        case!(
            "rpc",
            "invalid-params-32602",
            "R-RPC-10",
            Mandatory,
            "session/new with cwd: 5 gets -32602.",
            invalid_params
        ),
        case!(
            "rpc",
            "params-array-32602",
            "R-RPC-10",
            Mandatory,
            "session/new with params [] (not an object) gets -32602.",
            params_array
        ),
        case!(
            "rpc",
            "prompt-missing-prompt-32602",
            "R-RPC-10",
            Mandatory,
            "session/prompt without prompt gets -32602.",
            prompt_missing
        ),
        case!(
            "rpc",
            "prompt-block-missing-text-32602",
            "R-RPC-10",
            Mandatory,
            "A text block without text gets -32602.",
            block_missing_text
        ),
        case!(
            "rpc",
            "prompt-missing-session-id-32602",
            "R-RPC-10",
            Mandatory,
            "session/prompt without sessionId gets -32602.",
            prompt_no_session
        ),
    ]
}

async fn method_not_found(cx: &mut Cx, method: &str) -> Verdict {
    cx.initialize().await?;
    let message = cx.expect_error(method, json!({}), -32601).await?;
    Ok(format!("-32601 {message}"))
}

async fn unknown_method(cx: &mut Cx) -> Verdict {
    method_not_found(cx, "conform/no_such_method").await
}
async fn unknown_extension(cx: &mut Cx) -> Verdict {
    method_not_found(cx, "_conform.example/no_such_method").await
}
async fn unknown_dollar(cx: &mut Cx) -> Verdict {
    method_not_found(cx, "$/conform_no_such_method").await
}

async fn notification_ignored(cx: &mut Cx, method: &str) -> Verdict {
    cx.initialize().await?;
    cx.notify(method, json!({"x": 1})).await?;
    cx.settle().await?;
    let responses = cx
        .messages()
        .filter(|&i| kind(cx.message(i)) == Kind::Response)
        .count();
    ensure!(
        responses == 2,
        "{responses} responses to 2 requests: the notification was answered"
    );
    Ok(format!("{method} notification not answered"))
}

async fn unknown_notification(cx: &mut Cx) -> Verdict {
    notification_ignored(cx, "conform/notice").await
}
async fn unknown_extension_notification(cx: &mut Cx) -> Verdict {
    notification_ignored(cx, "_conform.example/notice").await
}

async fn exactly_one(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    let cwd = cx.cwd().to_string_lossy().into_owned();
    let requests = [
        ("session/new", json!({"cwd": cwd, "mcpServers": []})),
        ("conform/ping", json!({})),
        ("session/new", json!({"cwd": 5})),
        ("initialize", super::init_params()),
        ("session/new", json!({"cwd": cwd, "mcpServers": []})),
        ("_conform/ping", json!({})),
        (
            "session/prompt",
            json!({"sessionId": "conform-none", "prompt": [{"type": "text", "text": "x"}]}),
        ),
        ("conform/ping", json!({})),
    ];
    let mut batch = Vec::new();
    let mut ids = Vec::new();
    for (method, params) in requests {
        let id = cx.fresh_id();
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        batch.extend(serde_json::to_vec(&line).unwrap_or_default());
        batch.push(b'\n');
        ids.push(id);
    }
    cx.send_raw(&batch).await?;
    for id in &ids {
        cx.response(id).await?;
    }
    // Each answered; a second answer to any, read by the barrier, is R-RPC-1 for the
    // exchange monitor.
    cx.settle().await?;
    Ok(format!(
        "{} requests in flight, each answered once",
        ids.len()
    ))
}

async fn error_objects(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    for (method, params) in [
        ("conform/ping", json!({})),
        ("session/new", json!({"cwd": 5})),
        (
            "session/prompt",
            json!({"sessionId": "conform-none", "prompt": []}),
        ),
    ] {
        let id = cx.request(method, params).await?;
        cx.response(&id).await?;
    }
    cx.send_raw(b"not json\n").await?;
    cx.settle().await?;
    let mut errors = 0;
    for i in cx.messages().collect::<Vec<_>>() {
        let message = cx.message(i);
        if message.get("error").is_some() {
            error_of(message)?;
            errors += 1;
        }
    }
    ensure!(errors >= 3, "only {errors} errors for 3 bad requests");
    Ok(format!(
        "{errors} error objects, all with integer code and string message"
    ))
}

async fn stray(cx: &mut Cx, line: &str) -> Verdict {
    cx.initialize().await?;
    cx.send_raw(line.as_bytes()).await?;
    cx.settle().await?;
    let answered = cx
        .messages()
        .any(|i| kind(cx.message(i)) == Kind::Response && cx.message(i)["id"] == json!(4242));
    ensure!(
        !answered,
        "the agent answered a response it never asked for"
    );
    still_serving(cx).await?;
    Ok(String::from("the stray response was not answered"))
}

async fn stray_result(cx: &mut Cx) -> Verdict {
    stray(cx, "{\"jsonrpc\":\"2.0\",\"id\":4242,\"result\":{}}\n").await
}
async fn stray_error(cx: &mut Cx) -> Verdict {
    stray(
        cx,
        "{\"jsonrpc\":\"2.0\",\"id\":4242,\"error\":{\"code\":-32603,\"message\":\"x\"}}\n",
    )
    .await
}

async fn invalid(cx: &mut Cx, method: &str, params: Value, open: bool) -> Verdict {
    let session = if open {
        Some(cx.open().await?)
    } else {
        cx.initialize().await.map(|_| None)?
    };
    let params = match (session, params) {
        (Some(id), Value::Object(mut map)) if map.get("sessionId") == Some(&json!("$session")) => {
            map.insert(String::from("sessionId"), json!(id));
            Value::Object(map)
        }
        (_, params) => params,
    };
    let message = cx.expect_error(method, params, -32602).await?;
    Ok(format!("-32602 {message}"))
}

async fn invalid_params(cx: &mut Cx) -> Verdict {
    invalid(
        cx,
        "session/new",
        json!({"cwd": 5, "mcpServers": []}),
        false,
    )
    .await
}
async fn params_array(cx: &mut Cx) -> Verdict {
    invalid(cx, "session/new", json!([]), false).await
}
async fn prompt_missing(cx: &mut Cx) -> Verdict {
    invalid(cx, "session/prompt", json!({"sessionId": "$session"}), true).await
}
async fn block_missing_text(cx: &mut Cx) -> Verdict {
    invalid(
        cx,
        "session/prompt",
        json!({"sessionId": "$session", "prompt": [{"type": "text"}]}),
        true,
    )
    .await
}
async fn prompt_no_session(cx: &mut Cx) -> Verdict {
    invalid(
        cx,
        "session/prompt",
        json!({"prompt": [{"type": "text", "text": "x"}]}),
        true,
    )
    .await
}
