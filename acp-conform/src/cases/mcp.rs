//! The agent's stdio MCP servers (R-MCP-12..R-MCP-14). `session/new` names a small server the
//! suite carries (`mcp_server.py`, embedded, written into the case's directory and run with
//! `python3`, so an installed `acp-cli conform` needs nothing from the repository); the server
//! writes down its pid, its environment and whether `initialize` came. Stdio is the baseline
//! transport, so every agent gets it. An agent that never starts it (or a machine without
//! `python3`) makes the cases not applicable. A server the agent leaves running is killed by
//! the case.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::{ANSWER, Cx, TURN};
use crate::verdict::{Outcome, Verdict, fail, skip};

/// The server, embedded so the suite needs no file of the repository at run time.
const SERVER: &str = include_str!("mcp_server.py");
/// The variable the case gives the server, and its value: spaces, `=` and non-ASCII, so a
/// value passed on anything but as given shows.
const TOKEN: (&str, &str) = ("ACP_CONFORM_MCP_TOKEN", "conform token=é 7f3a");

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "mcp",
            "stdio-server-env",
            "R-MCP-12",
            Capability,
            "A stdio server of session/new is started with the env entries given, as given.",
            stdio_server_env
        ),
        case!(
            "mcp",
            "server-gone-after-close",
            "R-MCP-13",
            Advisory,
            "After session/close (or, without it, after the agent exits at stdin EOF) the server's process is gone.",
            server_gone_after_close
        ),
        case!(
            "mcp",
            "crashed-server-survived",
            "R-MCP-14",
            Advisory,
            "A server that exits right after initialize: the agent lives on and the session still answers a prompt.",
            crashed_server_survived
        ),
    ]
}

/// The server as one case runs it.
struct Server {
    /// The `mcpServers` entry.
    entry: Value,
    /// Where it writes what it saw.
    record: PathBuf,
}

/// `python3` on `PATH`, as an absolute path (the schema wants one for `command`).
fn python() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("python3"))
        .find(|p| p.is_file() && p.is_absolute())
}

/// Writes the server into the case's directory and describes it; `mode` is `serve` or
/// `crash`.
fn install(cx: &Cx, mode: &str) -> Result<Server, Outcome> {
    let Some(python) = python() else {
        return Err(skip("no python3 on PATH to run the suite's MCP server"));
    };
    let dir = cx.cwd().join(".acp-conform-mcp");
    let script = dir.join("server.py");
    let record = dir.join(format!("{mode}.json"));
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&script, SERVER))
        .map_err(|e| fail(format!("cannot write the MCP server: {e}")))?;
    let entry = json!({
        "name": "conform",
        "command": python.to_string_lossy(),
        "args": [script.to_string_lossy(), record.to_string_lossy(), mode],
        "env": [{"name": TOKEN.0, "value": TOKEN.1}],
    });
    Ok(Server { entry, record })
}

/// `initialize`, then `session/new` with `server`; returns the session id.
async fn open_with(cx: &mut Cx, server: &Server) -> Result<String, Outcome> {
    cx.initialize().await?;
    let cwd = cx.cwd().to_string_lossy().into_owned();
    let result = cx
        .call(
            "session/new",
            json!({"cwd": cwd, "mcpServers": [server.entry.clone()]}),
        )
        .await
        .map_err(|o| o.context("session/new with an MCP server"))?;
    match result.get("sessionId").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => Ok(id.to_string()),
        _ => Err(fail(format!(
            "session/new answered without a sessionId: {result}"
        ))),
    }
}

/// What the server wrote, once `ready` accepts it, reading the agent meanwhile; `None` after
/// [`ANSWER`] (scaled).
async fn wait_record(cx: &mut Cx, path: &Path, ready: fn(&Value) -> bool) -> Option<Value> {
    let deadline = Instant::now() + cx.time(ANSWER);
    loop {
        let seen = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
        if let Some(seen) = seen.filter(ready) {
            return Some(seen);
        }
        if Instant::now() >= deadline {
            return None;
        }
        cx.drain_for(Duration::from_millis(20)).await;
    }
}

/// The server's record once it started, or the skip of an agent that did not start it.
async fn started(cx: &mut Cx, server: &Server) -> Result<Value, Outcome> {
    wait_record(cx, &server.record, |_| true)
        .await
        .ok_or_else(|| {
            skip(format!(
                "the agent did not start the stdio MCP server of session/new within {:?}",
                cx.time(ANSWER)
            ))
        })
}

/// The pid a record names.
fn pid_of(record: &Value) -> Option<u32> {
    record.get("pid").and_then(Value::as_u64).map(|p| p as u32)
}

/// Whether process `pid` still runs (a zombie, dead but not yet reaped, does not).
fn alive(pid: u32) -> bool {
    let Some(id) = rustix::process::Pid::from_raw(pid as i32) else {
        return false;
    };
    if rustix::process::test_kill_process(id).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_none_or(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

/// Kills a server the agent left behind (the case's own hygiene, not a verdict).
fn reap(record: &Value) {
    let pid = pid_of(record).filter(|&p| alive(p));
    if let Some(id) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
        let _ = rustix::process::kill_process(id, rustix::process::Signal::KILL);
    }
}

async fn stdio_server_env(cx: &mut Cx) -> Verdict {
    let server = install(cx, "serve")?;
    open_with(cx, &server).await?;
    let record = started(cx, &server).await?;
    reap(&record);
    let seen = record["env"].get(TOKEN.0).cloned().unwrap_or(Value::Null);
    ensure!(
        seen == TOKEN.1,
        "the server ran with {}={seen}, but session/new gave {:?}",
        TOKEN.0,
        TOKEN.1
    );
    Ok(format!(
        "the server (pid {}) ran with {}={:?}, as given",
        record["pid"], TOKEN.0, TOKEN.1
    ))
}

async fn server_gone_after_close(cx: &mut Cx) -> Verdict {
    let server = install(cx, "serve")?;
    let session = open_with(cx, &server).await?;
    let record = started(cx, &server).await?;
    let Some(pid) = pid_of(&record) else {
        return Err(fail(format!("the server's record has no pid: {record}")));
    };
    let how = if cx.profile.advertises(&["sessionCapabilities", "close"]) {
        cx.call("session/close", json!({"sessionId": session}))
            .await
            .map_err(|o| o.context("session/close"))?;
        "session/close"
    } else {
        cx.close_stdin();
        let deadline = Instant::now() + cx.time(ANSWER);
        if cx.subject.wait_exit(deadline).await.is_none() {
            reap(&record);
            return Err(skip(
                "the agent advertises no session/close and did not exit at stdin EOF",
            ));
        }
        "the agent's exit at stdin EOF"
    };
    let deadline = Instant::now() + cx.time(ANSWER);
    while alive(pid) && Instant::now() < deadline {
        cx.drain_for(Duration::from_millis(20)).await;
    }
    let leaked = alive(pid);
    reap(&record);
    ensure!(
        !leaked,
        "the MCP server (pid {pid}) still ran {:?} after {how}",
        cx.time(ANSWER)
    );
    Ok(format!("the MCP server (pid {pid}) was gone after {how}"))
}

async fn crashed_server_survived(cx: &mut Cx) -> Verdict {
    let server = install(cx, "crash")?;
    let session = open_with(cx, &server).await?;
    let initialized = |r: &Value| r["initialized"] == true;
    let Some(record) = wait_record(cx, &server.record, initialized).await else {
        return Err(skip(format!(
            "the agent did not start and initialize the stdio MCP server of session/new within {:?}",
            cx.time(ANSWER)
        )));
    };
    reap(&record);
    let text = match cx.profile.has_command("echo") {
        true => "/echo conform",
        false => "Say hello.",
    };
    let id = cx.prompt(&session, text).await?;
    let end = cx
        .response_within(&id, TURN)
        .await
        .map_err(|o| o.context("a prompt after the MCP server crashed"))?;
    let answer = cx.message(end).clone();
    super::still_serving(cx)
        .await
        .map_err(|o| o.context("after the MCP server crashed"))?;
    ensure!(
        cx.subject.exit.is_none(),
        "the agent exited after its MCP server crashed"
    );
    let how = match (answer.get("result"), answer.get("error")) {
        (Some(result), _) => format!("stopReason {}", result["stopReason"]),
        (None, Some(error)) => format!("error {}", error["code"]),
        _ => String::from("a malformed response"),
    };
    Ok(format!(
        "the server exited after initialize; the agent lived on and answered a prompt ({how})"
    ))
}
