//! The client methods the harness serves (R-FS-*): `fs/*` only when advertised, and the
//! agent copes with their errors; `terminal/*` is never advertised, so never called.

use serde_json::json;

use super::prompt::turn;
use crate::case::Case;
use crate::conform_case as case;
use crate::conform_ensure as ensure;
use crate::cx::{Cx, result_of};
use crate::verdict::{Outcome, Verdict, fail, skip};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "client",
            "no-fs-read-when-unadvertised",
            "R-FS-1",
            Capability,
            "Without fs.readTextFile, /read never calls fs/read_text_file (or any fs/* or terminal/*).",
            no_read_unadvertised
        ),
        case!(
            "client",
            "fs-read-served",
            "R-FS-1",
            Capability,
            "With fs.readTextFile, /read calls fs/read_text_file for the file's absolute path in the session, and reports it.",
            read_served
        ),
        case!(
            "client",
            "fs-read-error-handled",
            "R-FS-2",
            Advisory,
            "An error answer to fs/read_text_file fails the tool call, not the connection: the prompt is answered.",
            read_error
        ),
        case!(
            "client",
            "no-fs-write-when-unadvertised",
            "R-FS-1",
            Capability,
            "Without fs.writeTextFile, /write never calls fs/write_text_file.",
            no_write_unadvertised
        ),
        case!(
            "client",
            "fs-write-served",
            "R-FS-1",
            Capability,
            "With fs.writeTextFile, an allowed /write calls fs/write_text_file with exactly the text.",
            write_served
        ),
        case!(
            "client",
            "no-terminal-calls",
            "R-FS-1",
            Capability,
            "The harness never advertises terminal: no terminal/* call during a tool turn.",
            no_terminal
        ),
        case!(
            "client",
            "ask-user-answered",
            "R-ASK-1",
            Capability,
            "When _agentao.cn/ask_user is advertised, /ask sends it with the session and question, and uses the answer.",
            ask_answered
        ),
        case!(
            "client",
            "ask-user-error-survived",
            "R-ASK-1",
            Advisory,
            "An error answer to _agentao.cn/ask_user does not abort the turn.",
            ask_error
        ),
    ]
}

fn hello(cx: &Cx) -> Result<String, Outcome> {
    let path = cx.cwd().join("hello.txt");
    std::fs::write(&path, "hello from acp-cli conform\n")
        .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
    Ok(path.to_string_lossy().into_owned())
}

async fn no_read_unadvertised(cx: &mut Cx) -> Verdict {
    let path = hello(cx)?;
    let read = cx.command("read", &path)?;
    let (_, end) = turn(cx, &read).await?;
    result_of(cx.message(end))?;
    // An fs/* call without the capability is R-FS-1 for the exchange monitor.
    Ok(String::from("read without calling fs/*"))
}

async fn read_served(cx: &mut Cx) -> Verdict {
    let path = hello(cx)?;
    let read = cx.command("read", &path)?;
    cx.offer_read = true;
    let (session, end) = turn(cx, &read).await?;
    let calls = cx.calls_of("fs/read_text_file");
    ensure!(
        !calls.is_empty(),
        "the agent read the file without fs/read_text_file although offered"
    );
    let params = &calls[0].1["params"];
    ensure!(
        params["path"] == json!(path),
        "fs/read_text_file for {}, expected {path}",
        params["path"]
    );
    ensure!(
        params["sessionId"] == json!(session),
        "fs/read_text_file names session {}",
        params["sessionId"]
    );
    result_of(cx.message(end))?;
    Ok(format!("fs/read_text_file {path}"))
}

async fn read_error(cx: &mut Cx) -> Verdict {
    let path = cx.cwd().join("missing.txt").to_string_lossy().into_owned();
    let read = cx.command("read", &path)?;
    cx.offer_read = true;
    let (_, end) = turn(cx, &read).await?;
    ensure!(
        !cx.calls_of("fs/read_text_file").is_empty(),
        "no fs/read_text_file call although offered"
    );
    let message = cx.message(end);
    Ok(match message.get("error") {
        Some(error) => format!("the prompt was answered with error {}", error["code"]),
        None => format!("the prompt ended {}", message["result"]["stopReason"]),
    })
}

async fn no_write_unadvertised(cx: &mut Cx) -> Verdict {
    let path = cx.cwd().join("written.txt");
    let write = cx.command("write", &format!("{} conform", path.display()))?;
    let (_, end) = turn(cx, &write).await?;
    result_of(cx.message(end))?;
    // An fs/* call without the capability is R-FS-1 for the exchange monitor.
    Ok(String::from("wrote without calling fs/*"))
}

async fn write_served(cx: &mut Cx) -> Verdict {
    let path = cx.cwd().join("written.txt");
    let write = cx.command("write", &format!("{} conform-text", path.display()))?;
    cx.offer_write = true;
    let (_, end) = turn(cx, &write).await?;
    result_of(cx.message(end))?;
    let calls = cx.calls_of("fs/write_text_file");
    ensure!(
        !calls.is_empty(),
        "no fs/write_text_file call although offered"
    );
    let content = &calls[0].1["params"]["content"];
    ensure!(
        content == "conform-text",
        "fs/write_text_file content {content}, expected \"conform-text\""
    );
    Ok(String::from("fs/write_text_file with exactly the text"))
}

async fn no_terminal(cx: &mut Cx) -> Verdict {
    let tool = cx.command("tool", "execute conform-run")?;
    let (_, end) = turn(cx, &tool).await?;
    result_of(cx.message(end))?;
    // A terminal/* call without the capability is R-FS-1 for the exchange monitor.
    Ok(String::from(
        "an execute tool turn without terminal/* calls",
    ))
}

async fn ask_answered(cx: &mut Cx) -> Verdict {
    if !cx.profile.has_extension("_agentao.cn/ask_user") {
        return Err(skip(
            "the agent does not list _agentao.cn/ask_user in _meta",
        ));
    }
    let ask = cx.command("ask", "Your name?")?;
    cx.ask_answer = String::from("Conform-Ada");
    let (session, end) = turn(cx, &ask).await?;
    let calls = cx.calls_of("_agentao.cn/ask_user");
    ensure!(
        calls.len() == 1,
        "{} ask_user requests, expected 1",
        calls.len()
    );
    ensure!(
        calls[0].1["params"]["sessionId"] == json!(session),
        "ask_user names another session"
    );
    ensure!(
        calls[0].1["params"]["question"] == "Your name?",
        "ask_user question {}",
        calls[0].1["params"]["question"]
    );
    let used = cx
        .updates(&session)
        .into_iter()
        .any(|(i, u)| i < end && u.to_string().contains("Conform-Ada"));
    ensure!(used, "the answer never appeared in an update");
    Ok(String::from("asked and used the answer"))
}

async fn ask_error(cx: &mut Cx) -> Verdict {
    if !cx.profile.has_extension("_agentao.cn/ask_user") {
        return Err(skip(
            "the agent does not list _agentao.cn/ask_user in _meta",
        ));
    }
    let ask = cx.command("ask", "Your name?")?;
    cx.ask_answer = String::new();
    let (_, end) = turn(cx, &ask).await?;
    let reason = cx.stop_reason(end)?;
    Ok(format!("the turn ended {reason}"))
}
