//! The client's files (R-CLIENT-9, R-FS-2): advertised `fs/*` methods are served — the
//! file's text, `line`/`limit` honoured, errors for what cannot be done — and unadvertised
//! ones are refused with an error, never silence and never done.

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
            "fs",
            "read-text-file",
            "R-CLIENT-9",
            Capability,
            "With `fs.readTextFile`, `fs/read_text_file` of a file in the session's cwd answers its exact text.",
            read
        ),
        case!(
            "fs",
            "read-line-limit",
            "R-CLIENT-9",
            Capability,
            "`fs/read_text_file` with `line: 2, limit: 2` answers the file's second and third lines.",
            read_line_limit
        ),
        case!(
            "fs",
            "read-missing-file-error",
            "R-CLIENT-9",
            Capability,
            "`fs/read_text_file` of a file that does not exist is answered with an error.",
            read_missing
        ),
        case!(
            "fs",
            "write-text-file",
            "R-CLIENT-9",
            Capability,
            "With `fs.writeTextFile`, `fs/write_text_file` writes exactly the content and answers a result.",
            write
        ),
        case!(
            "fs",
            "write-then-read",
            "R-CLIENT-9",
            Capability,
            "A file written with `fs/write_text_file` reads back the same through `fs/read_text_file`.",
            write_then_read
        ),
        case!(
            "fs",
            "relative-path-refused",
            "R-CLIENT-9",
            Advisory,
            "`fs/read_text_file` with a relative path (the schema wants an absolute one) is answered with an error.",
            relative_path
        ),
        case!(
            "fs",
            "unadvertised-read-refused",
            "R-FS-2",
            Mandatory,
            "Without `fs.readTextFile`, `fs/read_text_file` is answered with an error (`-32601`), never with the file.",
            unadvertised_read
        ),
        case!(
            "fs",
            "unadvertised-write-refused",
            "R-FS-2",
            Mandatory,
            "Without `fs.writeTextFile`, `fs/write_text_file` is answered with an error and writes nothing.",
            unadvertised_write
        ),
    ]
}

const TEXT: &str = "line one\nzwei ü\nthree\nfour\n";

/// Opens the session; skips unless the client offers `fs.<capability>`.
async fn open_offering(cx: &mut Cx, capability: &str) -> Result<Opened, Outcome> {
    let opened = cx.open().await?;
    if !opened.offers(&["fs", capability]) {
        cx.end_turn(&opened, "end_turn").await;
        return Err(skip(format!(
            "the client does not advertise fs.{capability}"
        )));
    }
    Ok(opened)
}

/// A file with [`TEXT`] in the session's cwd; its path.
fn fixture(opened: &Opened, name: &str) -> Result<String, Outcome> {
    let path = opened.cwd().join(name);
    std::fs::write(&path, TEXT)
        .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
    Ok(path.to_string_lossy().into_owned())
}

async fn call(cx: &mut Cx, method: &str, params: Value) -> Result<Value, Outcome> {
    let id = cx.request(method, params).await;
    cx.response(&id, method).await
}

fn content_of(answer: &Value, method: &str) -> Result<String, Outcome> {
    if let Some(code) = error_code(answer) {
        return Err(fail(format!(
            "{method} answered error {code}: {}",
            answer["error"]["message"]
        )));
    }
    answer["result"]["content"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| {
            fail(format!(
                "{method} result has no string content: {}",
                short(answer)
            ))
        })
}

async fn read(cx: &mut Cx) -> Verdict {
    let opened = open_offering(cx, "readTextFile").await?;
    let path = fixture(&opened, "conform-read.txt")?;
    let answer = call(
        cx,
        "fs/read_text_file",
        json!({"sessionId": opened.session, "path": path}),
    )
    .await?;
    cx.end_turn(&opened, "end_turn").await;
    let content = content_of(&answer, "fs/read_text_file")?;
    ensure!(content == TEXT, "read {content:?}, the file holds {TEXT:?}");
    Ok(String::from("the exact text"))
}

async fn read_line_limit(cx: &mut Cx) -> Verdict {
    let opened = open_offering(cx, "readTextFile").await?;
    let path = fixture(&opened, "conform-lines.txt")?;
    let answer = call(
        cx,
        "fs/read_text_file",
        json!({"sessionId": opened.session, "path": path, "line": 2, "limit": 2}),
    )
    .await?;
    cx.end_turn(&opened, "end_turn").await;
    let content = content_of(&answer, "fs/read_text_file")?;
    ensure!(
        content == "zwei ü\nthree\n" || content == "zwei ü\nthree",
        "line 2, limit 2 read {content:?}, expected \"zwei ü\\nthree\\n\""
    );
    Ok(String::from("lines 2 and 3"))
}

async fn read_missing(cx: &mut Cx) -> Verdict {
    let opened = open_offering(cx, "readTextFile").await?;
    let path = opened.cwd().join("conform-missing.txt");
    let answer = call(
        cx,
        "fs/read_text_file",
        json!({"sessionId": opened.session, "path": path}),
    )
    .await?;
    cx.end_turn(&opened, "end_turn").await;
    match error_code(&answer) {
        Some(code) => Ok(format!("answered error {code}")),
        None => Err(fail(format!(
            "a missing file was read as {}",
            short(&answer)
        ))),
    }
}

const WRITTEN: &str = "conform ✓\nsecond line";

async fn write(cx: &mut Cx) -> Verdict {
    let opened = open_offering(cx, "writeTextFile").await?;
    let path = opened.cwd().join("conform-written.txt");
    let answer = call(
        cx,
        "fs/write_text_file",
        json!({"sessionId": opened.session, "path": path, "content": WRITTEN}),
    )
    .await?;
    cx.end_turn(&opened, "end_turn").await;
    if let Some(code) = error_code(&answer) {
        return Err(fail(format!(
            "fs/write_text_file answered error {code}: {}",
            answer["error"]["message"]
        )));
    }
    let on_disk = std::fs::read_to_string(&path)
        .map_err(|e| fail(format!("the file was not written: {e}")))?;
    ensure!(
        on_disk == WRITTEN,
        "the file holds {on_disk:?}, expected {WRITTEN:?}"
    );
    Ok(String::from("written exactly"))
}

async fn write_then_read(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    if !(opened.offers(&["fs", "writeTextFile"]) && opened.offers(&["fs", "readTextFile"])) {
        cx.end_turn(&opened, "end_turn").await;
        return Err(skip(
            "the client does not advertise both fs.readTextFile and fs.writeTextFile",
        ));
    }
    let path = opened.cwd().join("conform-roundtrip.txt");
    let path = path.to_string_lossy().into_owned();
    let written = call(
        cx,
        "fs/write_text_file",
        json!({"sessionId": opened.session, "path": path, "content": WRITTEN}),
    )
    .await?;
    if let Some(code) = error_code(&written) {
        cx.end_turn(&opened, "end_turn").await;
        return Err(fail(format!("fs/write_text_file answered error {code}")));
    }
    let answer = call(
        cx,
        "fs/read_text_file",
        json!({"sessionId": opened.session, "path": path}),
    )
    .await?;
    cx.end_turn(&opened, "end_turn").await;
    let content = content_of(&answer, "fs/read_text_file")?;
    ensure!(
        content == WRITTEN,
        "read back {content:?}, wrote {WRITTEN:?}"
    );
    Ok(String::from("read back what was written"))
}

async fn relative_path(cx: &mut Cx) -> Verdict {
    let opened = open_offering(cx, "readTextFile").await?;
    fixture(&opened, "conform-relative.txt")?;
    let answer = call(
        cx,
        "fs/read_text_file",
        json!({"sessionId": opened.session, "path": "conform-relative.txt"}),
    )
    .await?;
    cx.end_turn(&opened, "end_turn").await;
    match error_code(&answer) {
        Some(code) => Ok(format!("answered error {code}")),
        None => Err(fail(String::from("a relative path was read"))),
    }
}

async fn unadvertised_read(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    if opened.offers(&["fs", "readTextFile"]) {
        cx.end_turn(&opened, "end_turn").await;
        return Err(skip("the client advertises fs.readTextFile"));
    }
    let path = fixture(&opened, "conform-secret.txt")?;
    let answer = call(
        cx,
        "fs/read_text_file",
        json!({"sessionId": opened.session, "path": path}),
    )
    .await?;
    cx.end_turn(&opened, "end_turn").await;
    match error_code(&answer) {
        Some(code) => Ok(format!("answered error {code}")),
        None => Err(fail(String::from(
            "an unadvertised fs/read_text_file was served",
        ))),
    }
}

async fn unadvertised_write(cx: &mut Cx) -> Verdict {
    let opened = cx.open().await?;
    if opened.offers(&["fs", "writeTextFile"]) {
        cx.end_turn(&opened, "end_turn").await;
        return Err(skip("the client advertises fs.writeTextFile"));
    }
    let path = opened.cwd().join("conform-unasked.txt");
    let answer = call(
        cx,
        "fs/write_text_file",
        json!({"sessionId": opened.session, "path": path, "content": "x"}),
    )
    .await?;
    cx.end_turn(&opened, "end_turn").await;
    cx.drain_for(Duration::from_millis(100)).await;
    ensure!(
        !path.exists(),
        "an unadvertised fs/write_text_file wrote the file"
    );
    match error_code(&answer) {
        Some(code) => Ok(format!("answered error {code}, nothing written")),
        None => Err(fail(String::from(
            "an unadvertised fs/write_text_file answered a result",
        ))),
    }
}
