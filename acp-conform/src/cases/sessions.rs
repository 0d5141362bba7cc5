//! Sessions (R-SESSION-*, R-RPC-7): `session/new` and its params, unknown ids, and the
//! optional methods — used only when advertised, `-32601` otherwise.

use serde_json::{Value, json};

use super::still_serving;
use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::{Cx, result_of};
use crate::verdict::{Verdict, fail, skip};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "sessions",
            "new-returns-session-id",
            "R-SESSION-1",
            Mandatory,
            "session/new with an absolute cwd answers a non-empty string sessionId.",
            new_session_id
        ),
        case!(
            "sessions",
            "new-twice-distinct-ids",
            "R-SESSION-1",
            Mandatory,
            "Two session/new calls give two different sessionIds.",
            distinct_ids
        ),
        case!(
            "sessions",
            "new-missing-cwd",
            "R-SESSION-1",
            Mandatory,
            "session/new without cwd gets -32602.",
            missing_cwd
        ),
        case!(
            "sessions",
            "new-relative-cwd",
            "R-SESSION-1",
            Advisory,
            "session/new with a relative cwd gets an error (spec: all paths are absolute).",
            relative_cwd
        ),
        case!(
            "sessions",
            "new-malformed-mcp-server",
            "R-SESSION-2",
            Mandatory,
            "An mcpServers entry with a numeric name gets -32602.",
            malformed_mcp
        ),
        case!(
            "sessions",
            "modes-well-formed",
            "R-MODE-1",
            Capability,
            "When session/new reports modes, currentModeId is one of availableModes (each with id and name).",
            modes_shape
        ),
        case!(
            "sessions",
            "config-options-well-formed",
            "R-CONFIG-1",
            Capability,
            "When session/new reports configOptions, each has id, name and type; a select's currentValue is one of its options.",
            config_shape
        ),
        case!(
            "sessions",
            "prompt-unknown-session",
            "R-SESSION-3",
            Mandatory,
            "session/prompt for an unknown sessionId gets an error.",
            prompt_unknown
        ),
        case!(
            "sessions",
            "set-mode-unknown-session",
            "R-SESSION-3",
            Mandatory,
            "session/set_mode for an unknown sessionId gets an error.",
            set_mode_unknown
        ),
        case!(
            "sessions",
            "set-mode-current",
            "R-MODE-1",
            Capability,
            "When modes are reported, setting the current mode is answered with a result.",
            set_mode_current
        ),
        case!(
            "sessions",
            "set-config-option-current",
            "R-CONFIG-1",
            Capability,
            "When a select config option is reported, setting its current value answers the full configOptions.",
            set_config_current
        ),
        case!(
            "sessions",
            "load-gated",
            "R-RPC-7, R-SESSION-6",
            Mandatory,
            "session/load: -32601 unless loadSession is advertised; then an unknown id gets an error.",
            load_gated
        ),
        case!(
            "sessions",
            "list-gated",
            "R-RPC-7",
            Mandatory,
            "session/list: -32601 unless advertised; then a result with a sessions array.",
            list_gated
        ),
        case!(
            "sessions",
            "resume-gated",
            "R-RPC-7",
            Mandatory,
            "session/resume: -32601 unless advertised; then an unknown id gets an error.",
            resume_gated
        ),
        case!(
            "sessions",
            "close-gated",
            "R-RPC-7, R-SESSION-9",
            Mandatory,
            "session/close: -32601 unless advertised; then {} and the closed session takes no prompt.",
            close_gated
        ),
        case!(
            "sessions",
            "delete-gated",
            "R-RPC-7, R-SESSION-7",
            Mandatory,
            "session/delete: -32601 unless advertised; then deleting an unknown id is answered once.",
            delete_gated
        ),
        case!(
            "sessions",
            "logout-gated",
            "R-AUTH-5, R-RPC-7",
            Capability,
            "logout: -32601 unless auth.logout is advertised (an agent that advertises it is not logged out: not applicable).",
            logout_gated
        ),
        case!(
            "sessions",
            "authenticate-unknown-method",
            "R-RPC-7",
            Mandatory,
            "authenticate with a methodId the agent never offered gets an error.",
            authenticate_unknown
        ),
        case!(
            "sessions",
            "available-commands-well-formed",
            "R-SESSION-8",
            Capability,
            "available_commands_update entries have a string name and description.",
            commands_shape
        ),
        case!(
            "sessions",
            "no-update-before-session-known",
            "R-TURN-4",
            Advisory,
            "No session/update names a session before the session/new answer that made it known.",
            no_early_update
        ),
        case!(
            "sessions",
            "additional-directories",
            "R-SESSION-4",
            Capability,
            "When advertised, an absolute additional directory is accepted and a relative one gets an error.",
            additional_directories
        ),
    ]
}

fn cwd(cx: &Cx) -> String {
    cx.cwd().to_string_lossy().into_owned()
}

async fn new_session_id(cx: &mut Cx) -> Verdict {
    let id = cx.open().await?;
    Ok(format!("sessionId {id:?}"))
}

async fn distinct_ids(cx: &mut Cx) -> Verdict {
    let a = cx.open().await?;
    let b = cx.new_session().await?;
    ensure!(a != b, "both sessions got the id {a:?}");
    Ok(String::from("two different sessionIds"))
}

async fn missing_cwd(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    let message = cx
        .expect_error("session/new", json!({"mcpServers": []}), -32602)
        .await?;
    Ok(format!("-32602 {message}"))
}

async fn relative_cwd(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    let id = cx
        .request(
            "session/new",
            json!({"cwd": "relative/dir", "mcpServers": []}),
        )
        .await?;
    let (code, message) = cx.error(&id).await?;
    Ok(format!("{code} {message}"))
}

async fn malformed_mcp(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    let params =
        json!({"cwd": cwd(cx), "mcpServers": [{"name": 5, "command": "x", "args": [], "env": []}]});
    let message = cx.expect_error("session/new", params, -32602).await?;
    Ok(format!("-32602 {message}"))
}

async fn new_result(cx: &mut Cx) -> Result<(String, Value), crate::verdict::Outcome> {
    cx.initialize().await?;
    let result = cx
        .call("session/new", json!({"cwd": cwd(cx), "mcpServers": []}))
        .await?;
    let id = result["sessionId"].as_str().unwrap_or_default().to_string();
    Ok((id, result))
}

async fn modes_shape(cx: &mut Cx) -> Verdict {
    let (_, result) = new_result(cx).await?;
    let Some(modes) = result.get("modes").filter(|m| !m.is_null()) else {
        return Err(skip("session/new reported no modes"));
    };
    let available = modes["availableModes"]
        .as_array()
        .ok_or_else(|| fail("modes.availableModes is not an array"))?;
    for mode in available {
        ensure!(
            mode["id"].is_string() && mode["name"].is_string(),
            "a mode without string id and name: {mode}"
        );
    }
    let current = &modes["currentModeId"];
    ensure!(
        available.iter().any(|m| &m["id"] == current),
        "currentModeId {current} is not among availableModes"
    );
    Ok(format!("{} modes, current {current}", available.len()))
}

async fn config_shape(cx: &mut Cx) -> Verdict {
    let (_, result) = new_result(cx).await?;
    let Some(options) = result.get("configOptions").and_then(Value::as_array) else {
        return Err(skip("session/new reported no configOptions"));
    };
    for option in options {
        ensure!(
            option["id"].is_string() && option["name"].is_string() && option["type"].is_string(),
            "a config option without string id, name and type: {option}"
        );
        if option["type"] == "select" {
            let values: Vec<&Value> = option["options"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|o| match o.get("options") {
                    Some(Value::Array(group)) => {
                        group.iter().map(|g| &g["value"]).collect::<Vec<_>>()
                    }
                    _ => vec![&o["value"]],
                })
                .collect();
            ensure!(
                values.contains(&&option["currentValue"]),
                "select {} has currentValue {} outside its options",
                option["id"],
                option["currentValue"]
            );
        }
    }
    Ok(format!("{} config options well formed", options.len()))
}

async fn errors_for_unknown(cx: &mut Cx, method: &str, params: Value) -> Verdict {
    cx.open().await?;
    let id = cx.request(method, params).await?;
    let (code, message) = cx.error(&id).await?;
    still_serving(cx).await?;
    Ok(format!("{code} {message}"))
}

async fn prompt_unknown(cx: &mut Cx) -> Verdict {
    errors_for_unknown(
        cx,
        "session/prompt",
        json!({"sessionId": "conform-no-such-session", "prompt": [{"type": "text", "text": "hi"}]}),
    )
    .await
}

async fn set_mode_unknown(cx: &mut Cx) -> Verdict {
    errors_for_unknown(
        cx,
        "session/set_mode",
        json!({"sessionId": "conform-no-such-session", "modeId": "x"}),
    )
    .await
}

async fn set_mode_current(cx: &mut Cx) -> Verdict {
    let (session, result) = new_result(cx).await?;
    let Some(current) = result.pointer("/modes/currentModeId").cloned() else {
        return Err(skip("session/new reported no modes"));
    };
    let answer = cx
        .call(
            "session/set_mode",
            json!({"sessionId": session, "modeId": current}),
        )
        .await?;
    ensure!(
        answer.is_object() || answer.is_null(),
        "set_mode answered {answer}"
    );
    Ok(format!("set_mode {current} answered"))
}

async fn set_config_current(cx: &mut Cx) -> Verdict {
    let (session, result) = new_result(cx).await?;
    let option = result["configOptions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["type"] == "select" && o["currentValue"].is_string())
        .cloned();
    let Some(option) = option else {
        return Err(skip("session/new reported no select config option"));
    };
    let answer = cx
        .call("session/set_config_option", json!({"sessionId": session, "configId": option["id"], "value": option["currentValue"]}))
        .await?;
    ensure!(
        answer["configOptions"].is_array(),
        "set_config_option answered without configOptions: {answer}"
    );
    Ok(format!(
        "set {} to {} answered the full configOptions",
        option["id"], option["currentValue"]
    ))
}

/// An optional method: `-32601` unless `advertised`; when advertised, `check` runs.
async fn gated(
    cx: &mut Cx,
    method: &str,
    advertised: bool,
    params: Value,
) -> Result<Option<Value>, crate::verdict::Outcome> {
    cx.open().await?;
    let id = cx.request(method, params).await?;
    let index = cx.response(&id).await?;
    let message = cx.message(index).clone();
    if !advertised {
        let (code, text) = crate::cx::error_of(&message)
            .map_err(|o| o.context(&format!("{method} is not advertised")))?;
        ensure!(
            code == -32601,
            "{method} is not advertised but answered {code} ({text}), expected -32601"
        );
        return Ok(None);
    }
    Ok(Some(message))
}

async fn load_gated(cx: &mut Cx) -> Verdict {
    let advertised = cx.profile.advertises(&["loadSession"]);
    let params = json!({"sessionId": "conform-no-such-session", "cwd": cwd(cx), "mcpServers": []});
    match gated(cx, "session/load", advertised, params).await? {
        None => Ok(String::from("not advertised: -32601")),
        Some(message) => {
            let (code, _) = crate::cx::error_of(&message)
                .map_err(|o| o.context("loading an unknown session"))?;
            Ok(format!("advertised; an unknown id got {code}"))
        }
    }
}

async fn list_gated(cx: &mut Cx) -> Verdict {
    let advertised = cx.profile.advertises(&["sessionCapabilities", "list"]);
    let params = json!({"cwd": cwd(cx)});
    match gated(cx, "session/list", advertised, params).await? {
        None => Ok(String::from("not advertised: -32601")),
        Some(message) => {
            let result = result_of(&message)?;
            ensure!(
                result["sessions"].is_array(),
                "session/list answered without a sessions array: {result}"
            );
            Ok(format!(
                "advertised; {} sessions listed",
                result["sessions"].as_array().map_or(0, Vec::len)
            ))
        }
    }
}

async fn resume_gated(cx: &mut Cx) -> Verdict {
    let advertised = cx.profile.advertises(&["sessionCapabilities", "resume"]);
    let params = json!({"sessionId": "conform-no-such-session", "cwd": cwd(cx), "mcpServers": []});
    match gated(cx, "session/resume", advertised, params).await? {
        None => Ok(String::from("not advertised: -32601")),
        Some(message) => {
            let (code, _) = crate::cx::error_of(&message)
                .map_err(|o| o.context("resuming an unknown session"))?;
            Ok(format!("advertised; an unknown id got {code}"))
        }
    }
}

async fn close_gated(cx: &mut Cx) -> Verdict {
    let advertised = cx.profile.advertises(&["sessionCapabilities", "close"]);
    if !advertised {
        gated(
            cx,
            "session/close",
            false,
            json!({"sessionId": "conform-no-such-session"}),
        )
        .await?;
        return Ok(String::from("not advertised: -32601"));
    }
    let session = cx.open().await?;
    let answer = cx
        .call("session/close", json!({"sessionId": session}))
        .await?;
    ensure!(
        answer.is_object(),
        "session/close answered {answer}, expected {{}}"
    );
    let id = cx.prompt(&session, "hello").await?;
    let (code, _) = cx
        .error(&id)
        .await
        .map_err(|o| o.context("a prompt to the closed session"))?;
    Ok(format!("advertised; closed, then a prompt got {code}"))
}

async fn delete_gated(cx: &mut Cx) -> Verdict {
    let advertised = cx.profile.advertises(&["sessionCapabilities", "delete"]);
    match gated(
        cx,
        "session/delete",
        advertised,
        json!({"sessionId": "conform-no-such-session"}),
    )
    .await?
    {
        None => Ok(String::from("not advertised: -32601")),
        Some(message) => {
            let what = if message.get("error").is_some() {
                "an error"
            } else {
                "a result"
            };
            cx.settle().await?;
            Ok(format!("advertised; deleting an unknown id got {what}"))
        }
    }
}

/// The gate's MUST binds only an agent that does not advertise `auth.logout`, hence
/// CAPABILITY: for one that does, the case does not apply (a skip, not an untested
/// MANDATORY case). Logging such an agent out to see `logout` served is not done: the agent
/// runs with the user's environment, and logging out ends the user's own login (ours
/// removes the stored credentials, R-AUTH-8).
async fn logout_gated(cx: &mut Cx) -> Verdict {
    let advertised = cx.profile.advertises(&["auth", "logout"]);
    if advertised {
        return Err(skip(
            "not applicable: auth.logout is advertised, so logout is served; the suite does \
             not log an agent out (that would end the user's own login)",
        ));
    }
    gated(cx, "logout", false, json!({})).await?;
    Ok(String::from("not advertised: -32601"))
}

async fn authenticate_unknown(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    let id = cx
        .request(
            "authenticate",
            json!({"methodId": "conform-no-such-method"}),
        )
        .await?;
    let (code, message) = cx.error(&id).await?;
    Ok(format!("{code} {message}"))
}

async fn commands_shape(cx: &mut Cx) -> Verdict {
    let session = cx.open().await?;
    cx.settle().await?;
    let lists: Vec<Value> = cx
        .updates(&session)
        .into_iter()
        .filter(|(_, u)| u["sessionUpdate"] == "available_commands_update")
        .map(|(_, u)| u["availableCommands"].clone())
        .collect();
    if lists.is_empty() {
        return Err(skip("the agent sent no available_commands_update"));
    }
    let mut count = 0;
    for list in &lists {
        let list = list
            .as_array()
            .ok_or_else(|| fail(format!("availableCommands is not an array: {list}")))?;
        for command in list {
            ensure!(
                command["name"].is_string() && command["description"].is_string(),
                "a command without string name and description: {command}"
            );
            count += 1;
        }
    }
    Ok(format!("{count} commands well formed"))
}

async fn no_early_update(cx: &mut Cx) -> Verdict {
    cx.initialize().await?;
    let id = cx
        .request("session/new", json!({"cwd": cwd(cx), "mcpServers": []}))
        .await?;
    let answer = cx.response(&id).await?;
    let session = result_of(cx.message(answer))?["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    cx.settle().await?;
    let updates = cx.updates(&session);
    if let Some((index, update)) = updates.iter().find(|(i, _)| *i < answer) {
        return Err(fail(format!(
            "update {} (line {index}) came before the session/new answer",
            update["sessionUpdate"]
        )));
    }
    if updates.is_empty() {
        return Ok(String::from("no updates at all around session/new"));
    }
    Ok(format!(
        "{} update(s), all after the session/new answer",
        updates.len()
    ))
}

async fn additional_directories(cx: &mut Cx) -> Verdict {
    if !cx
        .profile
        .advertises(&["sessionCapabilities", "additionalDirectories"])
    {
        return Err(skip(
            "sessionCapabilities.additionalDirectories is not advertised",
        ));
    }
    cx.initialize().await?;
    let extra = cx.cwd().join("extra");
    std::fs::create_dir_all(&extra)
        .map_err(|e| fail(format!("cannot make {}: {e}", extra.display())))?;
    let extra = extra.to_string_lossy().into_owned();
    cx.call(
        "session/new",
        json!({"cwd": cwd(cx), "mcpServers": [], "additionalDirectories": [extra]}),
    )
    .await?;
    let id = cx
        .request(
            "session/new",
            json!({"cwd": cwd(cx), "mcpServers": [], "additionalDirectories": ["relative/extra"]}),
        )
        .await?;
    let (code, _) = cx
        .error(&id)
        .await
        .map_err(|o| o.context("a relative additional directory"))?;
    Ok(format!("absolute accepted; relative got {code}"))
}
