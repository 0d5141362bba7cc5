//! Terminals (R-CLIENT-10, R-FS-2): when the client advertises `terminal`, the lifecycle
//! create → output / wait_for_exit / kill → release works; when it does not, `terminal/create`
//! is refused and runs nothing.

use std::time::Duration;

use serde_json::{Value, json};

use super::short;
use crate::client::case::{ClientCase, client_case as case};
use crate::client::cx::{Cx, Opened, error_code};
use crate::conform_ensure as ensure;
use crate::verdict::{Outcome, Verdict, fail, skip};

pub(super) fn cases() -> Vec<ClientCase> {
    vec![
        case!(
            "terminal",
            "lifecycle",
            "R-CLIENT-10",
            Capability,
            "`terminal/create` (printf), `wait_for_exit` (code 0), `output` (the text, an exit status), `release`: each answered as the schema says.",
            lifecycle
        ),
        case!(
            "terminal",
            "kill",
            "R-CLIENT-10",
            Capability,
            "`terminal/kill` of a `sleep 30` makes `wait_for_exit` answer at once; then `release`.",
            kill
        ),
        case!(
            "terminal",
            "output-byte-limit",
            "R-CLIENT-10",
            Capability,
            "With `outputByteLimit: 4`, `terminal/output` holds at most 4 bytes and says `truncated: true`.",
            byte_limit
        ),
        case!(
            "terminal",
            "unknown-terminal-error",
            "R-CLIENT-10",
            Capability,
            "`terminal/output` for a terminal id never created is answered with an error.",
            unknown_terminal
        ),
        case!(
            "terminal",
            "unadvertised-create-refused",
            "R-FS-2",
            Mandatory,
            "Without `terminal`, `terminal/create` is answered with an error and runs nothing.",
            unadvertised
        ),
    ]
}

async fn open_terminal(cx: &mut Cx) -> Result<Opened, Outcome> {
    let opened = cx.open().await?;
    if !opened.offers(&["terminal"]) {
        cx.end_turn(&opened, "end_turn").await;
        return Err(skip("the client does not advertise terminal"));
    }
    Ok(opened)
}

async fn call(cx: &mut Cx, method: &str, params: Value) -> Result<Value, Outcome> {
    let id = cx.request(method, params).await;
    let answer = cx.response(&id, method).await?;
    if let Some(code) = error_code(&answer) {
        return Err(fail(format!(
            "{method} answered error {code}: {}",
            answer["error"]["message"]
        )));
    }
    Ok(answer["result"].clone())
}

async fn create(
    cx: &mut Cx,
    opened: &Opened,
    script: &str,
    extra: Value,
) -> Result<String, Outcome> {
    let mut params = json!({"sessionId": opened.session, "command": "sh", "args": ["-c", script]});
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    let result = call(cx, "terminal/create", params).await?;
    result["terminalId"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| {
            fail(format!(
                "terminal/create result has no terminalId: {}",
                short(&result)
            ))
        })
}

async fn lifecycle(cx: &mut Cx) -> Verdict {
    let opened = open_terminal(cx).await?;
    let steps = async {
        let id = create(cx, &opened, "printf conform-terminal-out", json!({})).await?;
        let ids = json!({"sessionId": opened.session, "terminalId": id});
        let exit = call(cx, "terminal/wait_for_exit", ids.clone()).await?;
        ensure!(
            exit["exitCode"] == 0,
            "wait_for_exit answered {}",
            short(&exit)
        );
        let output = call(cx, "terminal/output", ids.clone()).await?;
        ensure!(
            output["output"]
                .as_str()
                .is_some_and(|o| o.contains("conform-terminal-out")),
            "terminal/output answered {}",
            short(&output)
        );
        ensure!(
            output["truncated"].is_boolean(),
            "terminal/output has no boolean truncated"
        );
        call(cx, "terminal/release", ids).await?;
        Ok(String::from("create, wait_for_exit, output, release"))
    }
    .await;
    cx.end_turn(&opened, "end_turn").await;
    steps
}

async fn kill(cx: &mut Cx) -> Verdict {
    let opened = open_terminal(cx).await?;
    let steps = async {
        let id = create(cx, &opened, "sleep 30", json!({})).await?;
        let ids = json!({"sessionId": opened.session, "terminalId": id});
        call(cx, "terminal/kill", ids.clone()).await?;
        let exit = call(cx, "terminal/wait_for_exit", ids.clone()).await?;
        call(cx, "terminal/release", ids).await?;
        Ok(format!("killed: {}", short(&exit)))
    }
    .await;
    cx.end_turn(&opened, "end_turn").await;
    steps
}

async fn byte_limit(cx: &mut Cx) -> Verdict {
    let opened = open_terminal(cx).await?;
    let steps = async {
        let id = create(
            cx,
            &opened,
            "printf abcdefghij",
            json!({"outputByteLimit": 4}),
        )
        .await?;
        let ids = json!({"sessionId": opened.session, "terminalId": id});
        call(cx, "terminal/wait_for_exit", ids.clone()).await?;
        let output = call(cx, "terminal/output", ids.clone()).await?;
        let text = output["output"].as_str().unwrap_or_default().to_owned();
        call(cx, "terminal/release", ids).await?;
        ensure!(
            text.len() <= 4,
            "{} bytes of output with outputByteLimit 4",
            text.len()
        );
        ensure!(
            output["truncated"] == true,
            "truncated is {}",
            output["truncated"]
        );
        Ok(format!("output {text:?}, truncated"))
    }
    .await;
    cx.end_turn(&opened, "end_turn").await;
    steps
}

async fn unknown_terminal(cx: &mut Cx) -> Verdict {
    let opened = open_terminal(cx).await?;
    let id = cx
        .request(
            "terminal/output",
            json!({"sessionId": opened.session, "terminalId": "conform-no-such-terminal"}),
        )
        .await;
    let answer = cx.response(&id, "terminal/output").await?;
    cx.end_turn(&opened, "end_turn").await;
    match error_code(&answer) {
        Some(code) => Ok(format!("answered error {code}")),
        None => Err(fail(format!(
            "an unknown terminal answered {}",
            short(&answer)
        ))),
    }
}

async fn unadvertised(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    if opened.offers(&["terminal"]) {
        cx.end_turn(&opened, "end_turn").await;
        return Err(skip("the client advertises terminal"));
    }
    let marker = opened.cwd().join("conform-terminal-ran");
    let script = format!("touch '{}'", marker.display());
    let id = cx
        .request(
            "terminal/create",
            json!({"sessionId": opened.session, "command": "sh", "args": ["-c", script]}),
        )
        .await;
    let answer = cx.response(&id, "terminal/create").await?;
    cx.end_turn(&opened, "end_turn").await;
    cx.drain_for(Duration::from_millis(200)).await;
    ensure!(
        !marker.exists(),
        "an unadvertised terminal/create ran its command"
    );
    match error_code(&answer) {
        Some(code) => Ok(format!("answered error {code}, nothing ran")),
        None => Err(fail(String::from(
            "an unadvertised terminal/create answered a result",
        ))),
    }
}
