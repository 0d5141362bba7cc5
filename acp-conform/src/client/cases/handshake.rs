//! The handshake (R-CLIENT-1, R-CLIENT-2): `initialize` first, with an integer version and
//! capabilities of the right shape; then the client goes on with whatever a valid answer
//! holds, and stops after a failed one.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{plain_after_init, short};
use crate::client::case::{ClientCase, client_case as case};
use crate::client::cx::{Cx, init_result};
use crate::conform_ensure as ensure;
use crate::verdict::{Verdict, fail};

pub(super) fn cases() -> Vec<ClientCase> {
    vec![
        case!(
            "handshake",
            "initialize-first",
            "R-CLIENT-1",
            Mandatory,
            "The client's first message is an `initialize` request.",
            initialize_first
        ),
        case!(
            "handshake",
            "protocol-version-integer",
            "R-CLIENT-1",
            Mandatory,
            "`initialize.protocolVersion` is a JSON integer from 0 to 65535.",
            version_integer
        ),
        case!(
            "handshake",
            "capabilities-shape",
            "R-CLIENT-1",
            Mandatory,
            "`clientCapabilities` is an object; `fs.readTextFile`, `fs.writeTextFile` and `terminal` are booleans when present.",
            capabilities_shape
        ),
        case!(
            "handshake",
            "nothing-before-answer",
            "R-CLIENT-1",
            Mandatory,
            "With the `initialize` answer held back 300 ms, the client sends nothing else meanwhile.",
            nothing_before_answer
        ),
        case!(
            "handshake",
            "client-info",
            "R-INIT-7",
            Advisory,
            "`initialize` carries `clientInfo` with a string `name` and `version`.",
            client_info
        ),
        case!(
            "handshake",
            "minimal-answer-accepted",
            "R-CLIENT-2",
            Mandatory,
            "An `initialize` answer with only `protocolVersion` (every other member defaulted) is enough to go on to `session/new`.",
            minimal_answer
        ),
        case!(
            "handshake",
            "unknown-fields-ignored",
            "R-ENV-8",
            Mandatory,
            "Unknown members and `_meta` in the `initialize` answer are ignored: the client goes on.",
            unknown_fields
        ),
        case!(
            "handshake",
            "failed-initialize-stops",
            "R-CLIENT-2",
            Mandatory,
            "After an error answer to `initialize`, the client sends no session request.",
            failed_initialize
        ),
        case!(
            "handshake",
            "other-version-stops",
            "R-INIT-6",
            Advisory,
            "An answer with a protocol version the client did not ask for (99): the client does not go on to `session/new`.",
            other_version
        ),
        case!(
            "handshake",
            "no-unadvertised-methods",
            "R-RPC-7",
            Mandatory,
            "Without `loadSession` and auth methods advertised, the client sends neither `session/load` nor `authenticate`.",
            no_unadvertised
        ),
    ]
}

async fn initialize_first(cx: &mut Cx) -> Verdict {
    let deadline = cx.answer_deadline();
    let (_, first) = cx.wait_until("a first message", deadline, |_| true).await?;
    ensure!(
        first["method"] == "initialize" && first.get("id").is_some(),
        "the first message was not an initialize request: {}",
        short(&first)
    );
    cx.respond(&first["id"], init_result()).await;
    plain_after_init(cx).await?;
    Ok(String::from("initialize came first"))
}

async fn version_integer(cx: &mut Cx) -> Verdict {
    let init = cx.initialize_with(init_result()).await?;
    let version = &init["protocolVersion"];
    ensure!(
        version.as_u64().is_some_and(|v| v <= 65535),
        "initialize.protocolVersion is {version}, not an integer from 0 to 65535"
    );
    plain_after_init(cx).await?;
    Ok(format!("protocolVersion {version}"))
}

async fn capabilities_shape(cx: &mut Cx) -> Verdict {
    let init = cx.initialize_with(init_result()).await?;
    let caps = &init["clientCapabilities"];
    ensure!(
        caps.is_null() || caps.is_object(),
        "clientCapabilities is {caps}, not an object"
    );
    let fs = &caps["fs"];
    ensure!(
        fs.is_null() || fs.is_object(),
        "clientCapabilities.fs is {fs}, not an object"
    );
    for (path, value) in [
        ("fs.readTextFile", &fs["readTextFile"]),
        ("fs.writeTextFile", &fs["writeTextFile"]),
        ("terminal", &caps["terminal"]),
    ] {
        ensure!(
            value.is_null() || value.is_boolean(),
            "clientCapabilities.{path} is {value}, not a boolean"
        );
    }
    plain_after_init(cx).await?;
    Ok(format!("clientCapabilities {}", short(caps)))
}

async fn nothing_before_answer(cx: &mut Cx) -> Verdict {
    let (_, init) = cx.request_of("initialize").await?;
    cx.drain_for(Duration::from_millis(300)).await;
    let early: Vec<String> = cx.queued().map(short).collect();
    ensure!(
        early.is_empty(),
        "before the initialize answer the client sent {}",
        early.join(", ")
    );
    cx.respond(&init["id"], init_result()).await;
    plain_after_init(cx).await?;
    Ok(String::from("nothing was sent while initialize waited"))
}

async fn client_info(cx: &mut Cx) -> Verdict {
    let init = cx.initialize_with(init_result()).await?;
    let info = &init["clientInfo"];
    plain_after_init(cx).await?;
    ensure!(
        info["name"].is_string() && info["version"].is_string(),
        "clientInfo is {info}, without a string name and version"
    );
    Ok(format!("clientInfo {}", short(info)))
}

async fn minimal_answer(cx: &mut Cx) -> Verdict {
    cx.initialize_with(json!({"protocolVersion": 1})).await?;
    plain_after_init(cx).await?;
    Ok(String::from("went on after {\"protocolVersion\":1}"))
}

async fn unknown_fields(cx: &mut Cx) -> Verdict {
    let mut result = init_result();
    result["agentCapabilities"]["conformFuture"] = json!({"depth": [1, {"x": null}]});
    result["conformExtra"] = json!(["unknown", 1]);
    result["_meta"] = json!({"conform.example/flag": true});
    cx.initialize_with(result).await?;
    plain_after_init(cx).await?;
    Ok(String::from("went on after an answer with unknown members"))
}

/// Waits `ms` and fails if a session request came meanwhile.
async fn no_session_request(cx: &mut Cx, ms: u64, after: &str) -> Verdict {
    let deadline = Instant::now() + cx.scaled(Duration::from_millis(ms));
    while cx.pull(deadline).await {}
    let went_on: Vec<String> = cx
        .queued()
        .filter(|m| {
            m["method"]
                .as_str()
                .is_some_and(|method| method.starts_with("session/") && method != "session/cancel")
        })
        .map(short)
        .collect();
    ensure!(
        went_on.is_empty(),
        "after {after} the client sent {}",
        went_on.join(", ")
    );
    Ok(format!("no session request after {after}"))
}

async fn failed_initialize(cx: &mut Cx) -> Verdict {
    let (_, init) = cx.request_of("initialize").await?;
    cx.respond_error(
        &init["id"],
        -32603,
        "Internal error: conform refuses this handshake",
    )
    .await;
    no_session_request(cx, 1000, "an initialize error").await
}

async fn other_version(cx: &mut Cx) -> Verdict {
    let mut result = init_result();
    result["protocolVersion"] = json!(99);
    cx.initialize_with(result).await?;
    // A client that goes on anyway gets its turn, so only the version is judged.
    let verdict = no_session_request(cx, 1000, "protocolVersion 99").await;
    let new = cx.queued().find(|m| m["method"] == "session/new").cloned();
    if let Some(new) = new {
        cx.respond(&new["id"], json!({"sessionId": "conform-v99"}))
            .await;
    }
    verdict
}

async fn no_unadvertised(cx: &mut Cx) -> Verdict {
    cx.initialize_with(init_result()).await?;
    plain_after_init(cx).await?;
    cx.drain_for(Duration::from_millis(100)).await;
    let sent: Vec<Value> = cx
        .queued()
        .filter(|m| matches!(m["method"].as_str(), Some("session/load" | "authenticate")))
        .cloned()
        .collect();
    if let Some(m) = sent.first() {
        return Err(fail(format!("the client sent {}", short(m))));
    }
    Ok(String::from("neither session/load nor authenticate"))
}
