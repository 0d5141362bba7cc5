//! The handshake (R-INIT-*): version negotiation, capability defaults, what comes before it.
//! Spec: "If the Agent does not support the requested version, it MUST respond with the
//! latest version it supports"; `protocolVersion` is a uint16.

use serde_json::{Value, json};

use super::still_serving;
use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::{Cx, Kind, kind};
use crate::verdict::{Outcome, Verdict, fail, skip};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "initialize",
            "version-1-answered-1",
            "R-INIT-2",
            Mandatory,
            "protocolVersion 1 is answered with protocolVersion 1.",
            version_1
        ),
        case!(
            "initialize",
            "result-shape",
            "R-INIT-5",
            Mandatory,
            "The answer has an integer protocolVersion; agentCapabilities, authMethods and agentInfo, when present, have the schema's types.",
            result_shape
        ),
        case!(
            "initialize",
            "capability-types",
            "R-INIT-5",
            Capability,
            "Advertised capabilities have the schema's types (booleans, or support-marker objects).",
            capability_types
        ),
        case!(
            "initialize",
            "newer-version-negotiated",
            "R-INIT-2",
            Mandatory,
            "protocolVersion 2 is answered with a version the agent supports, at most 2.",
            newer_version
        ),
        case!(
            "initialize",
            "version-0-negotiated",
            "R-INIT-2",
            Mandatory,
            "protocolVersion 0 is answered with the agent's latest version (a result, not an error).",
            version_0
        ),
        case!(
            "initialize",
            "version-65535-negotiated",
            "R-INIT-2",
            Mandatory,
            "protocolVersion 65535 is answered with the agent's latest version.",
            version_max
        ),
        case!(
            "initialize",
            "version-string-rejected",
            "R-INIT-2",
            Mandatory,
            "protocolVersion \"1\" (a string) gets -32602.",
            version_string
        ),
        case!(
            "initialize",
            "version-missing-rejected",
            "R-INIT-2",
            Mandatory,
            "initialize without protocolVersion gets -32602.",
            version_missing
        ),
        case!(
            "initialize",
            "version-negative-rejected",
            "R-INIT-2",
            Mandatory,
            "protocolVersion -1 (not a uint16) gets -32602.",
            version_negative
        ),
        case!(
            "initialize",
            "version-too-large-rejected",
            "R-INIT-2",
            Mandatory,
            "protocolVersion 65536 (not a uint16) gets -32602.",
            version_too_large
        ),
        case!(
            "initialize",
            "client-capabilities-omitted",
            "R-INIT-3",
            Mandatory,
            "initialize without clientCapabilities is answered (omitted means unsupported).",
            caps_omitted
        ),
        case!(
            "initialize",
            "unknown-fields-ignored",
            "R-INIT-3, R-ENV-8",
            Advisory,
            "Unknown params and unknown client capabilities are ignored.",
            unknown_fields
        ),
        case!(
            "initialize",
            "client-capabilities-malformed",
            "R-INIT-3",
            Mandatory,
            "clientCapabilities: 5 gets -32602 or is read as the defaults (the schema marks it x-deserialize-default-on-error); either way one answer.",
            caps_not_object
        ),
        case!(
            "initialize",
            "params-missing",
            "R-INIT-2",
            Mandatory,
            "initialize without params gets -32602.",
            params_missing
        ),
        case!(
            "initialize",
            "meta-accepted",
            "R-ENV-8",
            Mandatory,
            "_meta with trace context members is accepted.",
            meta_accepted
        ),
        case!(
            "initialize",
            "repeated-answered-once",
            "R-INIT-4",
            Advisory,
            "A second initialize gets exactly one answer, and the connection goes on.",
            repeated
        ),
        case!(
            "initialize",
            "request-before-initialize-answered",
            "R-INIT-1",
            Mandatory,
            "session/new before initialize gets exactly one answer (an error, per R-INIT-1; the spec binds only the client).",
            request_before
        ),
        case!(
            "initialize",
            "unknown-method-before-initialize",
            "R-INIT-1, R-RPC-9",
            Mandatory,
            "An unknown method before initialize gets an error.",
            unknown_before
        ),
        case!(
            "initialize",
            "notification-before-initialize-ignored",
            "R-INIT-1",
            Mandatory,
            "A notification before initialize gets no answer; initialize then works.",
            notification_before
        ),
    ]
}

async fn init_with(cx: &mut Cx, params: Value) -> Result<Value, Outcome> {
    let id = cx.request("initialize", params).await?;
    let index = cx.response(&id).await?;
    Ok(cx.message(index).clone())
}

fn version_of(response: &Value) -> Result<i64, Outcome> {
    let result = crate::cx::result_of(response)?;
    result
        .get("protocolVersion")
        .and_then(Value::as_i64)
        .ok_or_else(|| fail(format!("no integer protocolVersion in {result}")))
}

async fn version_1(cx: &mut Cx) -> Verdict {
    let response = init_with(cx, json!({"protocolVersion": 1, "clientCapabilities": {}})).await?;
    let version = version_of(&response)?;
    ensure!(version == 1, "asked for 1, answered {version}");
    Ok(String::from("answered protocolVersion 1"))
}

async fn result_shape(cx: &mut Cx) -> Verdict {
    let result = cx.initialize().await?;
    ensure!(result.is_object(), "the result is not an object: {result}");
    ensure!(
        result["protocolVersion"].is_u64(),
        "protocolVersion is not a non-negative integer"
    );
    if let Some(caps) = result.get("agentCapabilities") {
        ensure!(
            caps.is_object() || caps.is_null(),
            "agentCapabilities is not an object: {caps}"
        );
    }
    if let Some(methods) = result.get("authMethods") {
        let list = methods
            .as_array()
            .ok_or_else(|| fail(format!("authMethods is not an array: {methods}")))?;
        for method in list {
            ensure!(
                method["id"].is_string() && method["name"].is_string(),
                "an auth method without string id and name: {method}"
            );
        }
    }
    if let Some(info) = result.get("agentInfo").filter(|i| !i.is_null()) {
        ensure!(
            info["name"].is_string() && info["version"].is_string(),
            "agentInfo needs string name and version: {info}"
        );
    }
    Ok(String::from(
        "protocolVersion, agentCapabilities, authMethods, agentInfo well typed",
    ))
}

async fn capability_types(cx: &mut Cx) -> Verdict {
    let result = cx.initialize().await?;
    let Some(caps) = result.get("agentCapabilities").filter(|c| c.is_object()) else {
        return Err(skip("the agent sent no agentCapabilities (all defaults)"));
    };
    let boolean = |v: Option<&Value>| matches!(v, None | Some(Value::Bool(_)) | Some(Value::Null));
    let marker = |v: Option<&Value>| matches!(v, None | Some(Value::Object(_)) | Some(Value::Null));
    ensure!(
        boolean(caps.get("loadSession")),
        "loadSession is not a boolean"
    );
    for key in ["image", "audio", "embeddedContext"] {
        ensure!(
            boolean(caps.pointer(&format!("/promptCapabilities/{key}"))),
            "promptCapabilities.{key} is not a boolean"
        );
    }
    for key in ["http", "sse"] {
        ensure!(
            boolean(caps.pointer(&format!("/mcpCapabilities/{key}"))),
            "mcpCapabilities.{key} is not a boolean"
        );
    }
    if let Some(session) = caps.get("sessionCapabilities").and_then(Value::as_object) {
        for (key, value) in session {
            ensure!(
                marker(Some(value)),
                "sessionCapabilities.{key} is not a support marker (object or null): {value}"
            );
        }
    }
    Ok(String::from(
        "capability flags are booleans and markers are objects",
    ))
}

async fn negotiated(cx: &mut Cx, asked: i64) -> Verdict {
    let response = init_with(
        cx,
        json!({"protocolVersion": asked, "clientCapabilities": {}}),
    )
    .await?;
    let version = version_of(&response)?;
    ensure!(
        (0..=65535).contains(&version),
        "asked for {asked}, answered {version}, not a uint16"
    );
    if asked >= 1 {
        ensure!(
            version <= asked,
            "asked for {asked}, answered the higher {version}"
        );
    }
    Ok(format!("asked for {asked}, answered {version}"))
}

async fn newer_version(cx: &mut Cx) -> Verdict {
    negotiated(cx, 2).await
}
async fn version_0(cx: &mut Cx) -> Verdict {
    negotiated(cx, 0).await
}
async fn version_max(cx: &mut Cx) -> Verdict {
    negotiated(cx, 65535).await
}

async fn rejected(cx: &mut Cx, params: Value) -> Verdict {
    let message = cx.expect_error("initialize", params, -32602).await?;
    Ok(format!("-32602 {message}"))
}

async fn version_string(cx: &mut Cx) -> Verdict {
    rejected(
        cx,
        json!({"protocolVersion": "1", "clientCapabilities": {}}),
    )
    .await
}
async fn version_missing(cx: &mut Cx) -> Verdict {
    rejected(cx, json!({"clientCapabilities": {}})).await
}
async fn version_negative(cx: &mut Cx) -> Verdict {
    rejected(cx, json!({"protocolVersion": -1, "clientCapabilities": {}})).await
}
async fn version_too_large(cx: &mut Cx) -> Verdict {
    rejected(
        cx,
        json!({"protocolVersion": 65536, "clientCapabilities": {}}),
    )
    .await
}
async fn caps_not_object(cx: &mut Cx) -> Verdict {
    let response = init_with(cx, json!({"protocolVersion": 1, "clientCapabilities": 5})).await?;
    if let Some(error) = response.get("error") {
        ensure!(
            error["code"] == -32602,
            "answered {error}, expected -32602 or a result"
        );
        return Ok(String::from("rejected with -32602"));
    }
    version_of(&response)?;
    still_serving(cx).await?;
    Ok(String::from("read as the defaults (allowed by the schema)"))
}

async fn params_missing(cx: &mut Cx) -> Verdict {
    cx.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n")
        .await?;
    let (code, message) = cx.error(&json!(1)).await?;
    ensure!(
        code == -32602,
        "answered {code} ({message}), expected -32602"
    );
    Ok(format!("-32602 {message}"))
}

async fn caps_omitted(cx: &mut Cx) -> Verdict {
    let response = init_with(cx, json!({"protocolVersion": 1})).await?;
    version_of(&response)?;
    Ok(String::from("answered without clientCapabilities"))
}

async fn unknown_fields(cx: &mut Cx) -> Verdict {
    let params = json!({"protocolVersion": 1, "conformExtra": [1, 2],
        "clientCapabilities": {"conformFuture": {"deep": true}, "fs": {"readTextFile": false, "conformX": 1}}});
    let response = init_with(cx, params).await?;
    version_of(&response)?;
    Ok(String::from("unknown members ignored"))
}

async fn meta_accepted(cx: &mut Cx) -> Verdict {
    let params = json!({"protocolVersion": 1, "clientCapabilities": {},
        "_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "conform": {}}});
    let response = init_with(cx, params).await?;
    version_of(&response)?;
    Ok(String::from("_meta accepted"))
}

async fn repeated(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    let id = cx.request("initialize", super::init_params()).await?;
    let index = cx.response(&id).await?;
    let answer = if cx.message(index).get("error").is_some() {
        "an error"
    } else {
        "a result"
    };
    // A second answer is R-RPC-1 for the exchange monitor.
    still_serving(cx).await?;
    Ok(format!(
        "the second initialize got {answer}; the connection went on"
    ))
}

async fn request_before(cx: &mut Cx) -> Verdict {
    let cwd = cx.cwd().to_string_lossy().into_owned();
    let id = cx
        .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
        .await?;
    let index = cx.response(&id).await?;
    let message = cx.message(index).clone();
    cx.initialize().await?;
    // A second answer, read by the barrier, is R-RPC-1 for the exchange monitor.
    cx.settle().await?;
    Ok(match message.get("error") {
        Some(error) => format!("rejected before initialize: {}", error["code"]),
        None => String::from("served before initialize (allowed: the spec binds only the client)"),
    })
}

async fn unknown_before(cx: &mut Cx) -> Verdict {
    let id = cx.request("conform/ping", json!({})).await?;
    let (code, message) = cx.error(&id).await?;
    Ok(format!("error {code} ({message})"))
}

async fn notification_before(cx: &mut Cx) -> Verdict {
    cx.notify("session/cancel", json!({"sessionId": "conform-none"}))
        .await?;
    cx.notify("conform/notice", json!({})).await?;
    cx.initialize().await?;
    cx.settle().await?;
    let others = cx
        .messages()
        .filter(|&i| kind(cx.message(i)) == Kind::Response)
        .count();
    // initialize and the settle ping: two answers; anything else answered a notification.
    ensure!(
        others == 2,
        "{} responses for 2 requests: a notification was answered",
        others
    );
    Ok(String::from(
        "notifications before initialize were not answered",
    ))
}
