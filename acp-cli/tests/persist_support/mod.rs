//! Helpers of the `persist_*` tests: the agent over pipes (from `agent_support`), restarted
//! in the same cwd, and the session methods' request lines.

#![allow(dead_code)]

#[path = "../agent_support/mod.rs"]
pub mod agent;

use std::path::{Path, PathBuf};

pub use agent::{Agent, json_string, s, scratch};
use serde_json::Value;

/// An agent started with `extra` arguments whose sessions open in `cwd` (which is kept: a
/// restart sees what the previous process saved).
pub fn agent_in(name: &str, cwd: &Path, extra: &[&str]) -> Agent {
    let mut agent = Agent::start(name, extra);
    agent.cwd = cwd.to_path_buf();
    agent
}

/// `initialize` with no client capabilities; returns its answer.
pub fn initialize(agent: &mut Agent) -> Value {
    let answer = agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        1,
    );
    assert_eq!(answer.len(), 1, "{answer:?}");
    json(&answer[0])
}

/// A line parsed as JSON.
pub fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// `session/load` of `session` in `cwd`.
pub fn load_line(id: u64, session: &str, cwd: &Path) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/load","params":{{"sessionId":{},"cwd":"{}","mcpServers":[]}}}}"#,
        json_string(session),
        s(cwd)
    )
}

/// `session/resume` of `session` in `cwd`.
pub fn resume_line(id: u64, session: &str, cwd: &Path) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/resume","params":{{"sessionId":{},"cwd":"{}","mcpServers":[]}}}}"#,
        json_string(session),
        s(cwd)
    )
}

/// A request of `method` whose only param is `sessionId`.
pub fn by_id_line(id: u64, method: &str, session: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"sessionId":{}}}}}"#,
        json_string(session)
    )
}

/// `session/list` with these params (a JSON object).
pub fn list_line(id: u64, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/list","params":{params}}}"#)
}

/// The `update` objects of the `session/update` lines among `lines`, checking they are all
/// for `session`.
pub fn updates(lines: &[String], session: &str) -> Vec<Value> {
    lines
        .iter()
        .map(|line| json(line))
        .filter(|v| v["method"] == "session/update")
        .map(|v| {
            assert_eq!(v["params"]["sessionId"], session, "{v}");
            v["params"]["update"].clone()
        })
        .collect()
}

/// The text of the message chunks among `lines`.
pub fn messages(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|line| json(line))
        .filter(|v| v["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|v| {
            v["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// What `/history` answers in `session` (a prompt with request id `id`).
pub fn history_answer(agent: &mut Agent, id: u64, session: &str) -> String {
    let lines = agent.prompt(id, session, "/history");
    let said = messages(&lines);
    assert_eq!(said.len(), 1, "{lines:?}");
    said[0].clone()
}

/// Every `*.json` file in `<cwd>/.agentao/sessions`, sorted.
pub fn session_files(cwd: &Path) -> Vec<PathBuf> {
    let dir = cwd.join(".agentao/sessions");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// The error object of a response line, as (code, message).
pub fn error_of(line: &str) -> (i64, String) {
    let v = json(line);
    let error = &v["error"];
    assert!(error.is_object(), "not an error: {line}");
    (
        error["code"].as_i64().expect("code"),
        error["message"].as_str().expect("message").to_owned(),
    )
}

/// The result object of a response line.
pub fn result_of(line: &str) -> Value {
    let v = json(line);
    assert!(v["result"].is_object(), "not a result: {line}");
    v["result"].clone()
}
