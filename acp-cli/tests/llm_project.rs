//! `acp-cli --acp --stdio --backend llm` with the scripted mock model on loopback: the
//! project's instruction files in the system prompt, `todo_write` shown as a plan, and
//! images advertised and passed only when the setting says the model takes them.

mod client_support;
mod llm_support;

use std::path::Path;

use client_support::{acp_cli, scratch_dir};
use llm_support::{MockModel, Reply, done, finish, text, tool_call};
use serde_json::{Value, json};

/// A 1×1 PNG, base64.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The agent on stdio, its model the mock, `HOME` the scratch directory (so nothing of
/// the machine's home is read).
struct RawAgent {
    child: std::process::Child,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl RawAgent {
    fn start(mock: &MockModel, home: &Path, env: &[(&str, &str)]) -> Self {
        let mut child = std::process::Command::new(acp_cli())
            .args([
                "--acp",
                "--stdio",
                "--backend",
                "llm",
                "--model",
                "mock-model",
            ])
            .env("OPENAI_API_KEY", "sk-project-test")
            .env("OPENAI_BASE_URL", mock.base_url())
            .env("HOME", home)
            .env_remove("LLM_PROVIDER")
            .env_remove("LLM_IMAGES")
            .env_remove("OPENAI_IMAGES")
            .envs(env.iter().copied())
            .current_dir(home)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start acp-cli");
        let stdout = child.stdout.take().expect("stdout");
        Self {
            child,
            lines: std::io::BufRead::lines(std::io::BufReader::new(stdout)),
        }
    }

    /// Sends one message and reads until the answer to `id`; returns every message read.
    fn call(&mut self, id: u64, message: Value) -> Vec<Value> {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{message}").expect("write");
        let mut read = Vec::new();
        for line in self.lines.by_ref() {
            let value: Value = serde_json::from_str(&line.expect("a line")).expect("JSON");
            let done = value["id"] == id && value.get("method").is_none();
            read.push(value);
            if done {
                return read;
            }
        }
        panic!("the agent ended before answering {id}: {read:?}");
    }

    /// `initialize` with `capabilities` (its answer), then `session/new` in `cwd` (its id).
    fn open(&mut self, capabilities: Value, cwd: &Path) -> (Value, String) {
        let init = self.call(
            1,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": 1, "clientCapabilities": capabilities}}),
        );
        let opened = self.call(
            2,
            json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                   "params": {"cwd": cwd, "mcpServers": []}}),
        );
        let session = opened.last().unwrap()["result"]["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned();
        (init.last().unwrap().clone(), session)
    }

    /// One `session/prompt` with these blocks: every message up to its answer.
    fn prompt(&mut self, id: u64, session: &str, blocks: Value) -> Vec<Value> {
        self.call(
            id,
            json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
                   "params": {"sessionId": session, "prompt": blocks}}),
        )
    }
}

impl Drop for RawAgent {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// The `session/update`s among `messages`, only those of `kind`.
fn updates<'a>(messages: &'a [Value], kind: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| &m["params"]["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// R-LLM-7: the system prompt the model receives is the built-in text, then the instruction
/// files from the repository root down to the cwd (`AGENTS.md` before `AGENTAO.md` in a
/// directory, nothing above the root), then the client's `systemPrompt`.
#[test]
fn the_system_prompt_has_the_instruction_files_in_order_then_the_clients_text() {
    let home = scratch_dir("llm-project-instructions");
    let repo = home.join("repo");
    let cwd = repo.join("crates").join("app");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(&home.join("AGENTS.md"), "OUTSIDE the repository");
    write(&repo.join("AGENTS.md"), "ROOT rules");
    write(&repo.join("AGENTAO.md"), "ROOT agentao rules");
    write(&repo.join("crates").join("AGENTS.md"), "CRATES rules");
    write(&cwd.join("AGENTAO.md"), "APP rules");
    let mock = MockModel::start(vec![Reply::text(&["ok"])]);
    let mut agent = RawAgent::start(&mock, &home, &[]);
    agent.call(
        1,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
    );
    let opened = agent.call(
        2,
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
               "params": {"cwd": cwd, "mcpServers": [],
                          "systemPrompt": {"mode": "append",
                                           "content": [{"type": "text", "text": "CLIENT text"}]}}}),
    );
    let session = opened.last().unwrap()["result"]["sessionId"]
        .as_str()
        .expect("a session id")
        .to_owned();
    let turn = agent.prompt(3, &session, json!([{"type": "text", "text": "hi"}]));
    assert_eq!(turn.last().unwrap()["result"]["stopReason"], "end_turn");
    let body = mock.requests()[0].json();
    assert_eq!(body["messages"][0]["role"], "system");
    let system = body["messages"][0]["content"].as_str().expect("text");
    assert!(!system.contains("OUTSIDE"), "{system}");
    let at = |needle: &str| {
        system
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} missing: {system}"))
    };
    let order = [
        at("You are acp-cli"),
        at("# Project instructions"),
        at(&format!("## {}", repo.join("AGENTS.md").display())),
        at("ROOT rules"),
        at(&format!("## {}", repo.join("AGENTAO.md").display())),
        at("ROOT agentao rules"),
        at("CRATES rules"),
        at("APP rules"),
        at("CLIENT text"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}: {system}");
    assert!(system.ends_with("\n\nCLIENT text"), "{system}");
}

/// A streamed answer calling `todo_write` with `arguments`.
fn todo_call(arguments: &str) -> Reply {
    Reply::sse(&[
        tool_call(0, Some("t1"), Some("todo_write"), arguments),
        finish("tool_calls"),
        done(),
    ])
}

const TODOS: &str = r#"{"todos":[{"content":"Read the code","status":"completed"},{"content":"Fix the bug","status":"in_progress"}]}"#;

/// R-LLM-8: a client without `clientCapabilities.plan` gets the `plan` update (entries,
/// priority medium), no tool call; the model is told the list was updated.
#[test]
fn todo_write_is_shown_as_a_plan_to_a_plain_client() {
    let home = scratch_dir("llm-project-plan");
    let mock = MockModel::start(vec![todo_call(TODOS), Reply::text(&["Working."])]);
    let mut agent = RawAgent::start(&mock, &home, &[]);
    let (_, session) = agent.open(json!({}), &home);
    let turn = agent.prompt(3, &session, json!([{"type": "text", "text": "fix it"}]));
    assert_eq!(turn.last().unwrap()["result"]["stopReason"], "end_turn");
    assert!(updates(&turn, "tool_call").is_empty(), "{turn:?}");
    assert!(updates(&turn, "plan_update").is_empty(), "{turn:?}");
    assert_eq!(
        updates(&turn, "plan"),
        [&json!({"sessionUpdate": "plan", "entries": [
            {"content": "Read the code", "priority": "medium", "status": "completed"},
            {"content": "Fix the bug", "priority": "medium", "status": "in_progress"}
        ]})]
    );
    let second = mock.requests()[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "tool", "tool_call_id": "t1", "content": "Todo list updated."})
    );
}

/// R-LLM-8: a client that advertised `clientCapabilities.plan` gets `plan_update` in the
/// items form, the same `planId` every time so each replaces the last; and the next turn's
/// conversation carries the plan as the model's `todo_write` call.
#[test]
fn todo_write_is_a_plan_update_with_a_stable_id_to_a_client_that_renders_them() {
    let home = scratch_dir("llm-project-plan-update");
    let later = r#"{"todos":[{"content":"Read the code","status":"completed"},{"content":"Fix the bug","status":"completed"}]}"#;
    let mock = MockModel::start(vec![
        todo_call(TODOS),
        Reply::text(&["Working."]),
        todo_call(later),
        Reply::text(&["Done."]),
    ]);
    let mut agent = RawAgent::start(&mock, &home, &[]);
    let (_, session) = agent.open(json!({"plan": {}}), &home);
    let first = agent.prompt(3, &session, json!([{"type": "text", "text": "fix it"}]));
    let second = agent.prompt(4, &session, json!([{"type": "text", "text": "go on"}]));
    assert!(updates(&first, "plan").is_empty(), "{first:?}");
    let shown: Vec<&Value> = updates(&first, "plan_update")
        .into_iter()
        .chain(updates(&second, "plan_update"))
        .collect();
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert_eq!(
        shown[0],
        &json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "todos",
        "entries": [
            {"content": "Read the code", "priority": "medium", "status": "completed"},
            {"content": "Fix the bug", "priority": "medium", "status": "in_progress"}
        ]}})
    );
    assert_eq!(shown[1]["plan"]["planId"], "todos");
    assert_eq!(shown[1]["plan"]["entries"][1]["status"], "completed");
    // Turn 2's first request: the first turn's todo_write and its result are in it.
    let body = mock.requests()[2].json();
    let calls: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(calls.len(), 1, "{body}");
    assert_eq!(calls[0]["function"]["name"], "todo_write");
    let arguments: Value =
        serde_json::from_str(calls[0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, serde_json::from_str::<Value>(TODOS).unwrap());
}

/// R-LLM-9: without the setting `promptCapabilities.image` is not advertised and an image
/// block is refused before it reaches the model.
#[test]
fn images_are_not_advertised_or_taken_without_the_setting() {
    let home = scratch_dir("llm-project-no-images");
    let mock = MockModel::start(vec![]);
    let mut agent = RawAgent::start(&mock, &home, &[]);
    let (init, session) = agent.open(json!({}), &home);
    assert_ne!(
        init["result"]["agentCapabilities"]["promptCapabilities"]["image"], true,
        "{init}"
    );
    let turn = agent.prompt(
        3,
        &session,
        json!([{"type": "image", "mimeType": "image/png", "data": PIXEL}]),
    );
    assert_eq!(
        turn.last().unwrap()["error"],
        json!({"code": -32602, "message": "Invalid params: session/prompt.prompt[0]: block type 'image' is not \
                yet supported (v1 supports 'text' and 'resource_link')"}),
        "{turn:?}"
    );
    assert!(mock.requests().is_empty());
}

/// R-LLM-9: with `LLM_IMAGES=1` `promptCapabilities.image` is advertised and the prompt's
/// blocks reach the model in order, the image as an `image_url` data URL.
#[test]
fn with_the_setting_images_are_advertised_and_sent_as_data_urls() {
    let home = scratch_dir("llm-project-images");
    let mock = MockModel::start(vec![Reply::sse(&[text("A dot."), finish("stop"), done()])]);
    let mut agent = RawAgent::start(&mock, &home, &[("LLM_IMAGES", "1")]);
    let (init, session) = agent.open(json!({}), &home);
    assert_eq!(
        init["result"]["agentCapabilities"]["promptCapabilities"]["image"], true,
        "{init}"
    );
    let turn = agent.prompt(
        3,
        &session,
        json!([
            {"type": "text", "text": "What is this?"},
            {"type": "image", "mimeType": "image/png", "data": PIXEL}
        ]),
    );
    assert_eq!(turn.last().unwrap()["result"]["stopReason"], "end_turn");
    let body = mock.requests()[0].json();
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PIXEL}")}}
        ]})
    );
}

/// R-LLM-9: a value of the setting that is not a switch stops the agent at start with a
/// usage error naming the variable.
#[test]
fn a_bad_images_setting_is_a_usage_error() {
    let home = scratch_dir("llm-project-bad-images");
    let out = std::process::Command::new(acp_cli())
        .args(["--acp", "--stdio", "--backend", "llm"])
        .env("OPENAI_API_KEY", "sk-project-test")
        .env("OPENAI_IMAGES", "sometimes")
        .env_remove("LLM_PROVIDER")
        .env_remove("LLM_IMAGES")
        .current_dir(&home)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run acp-cli");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "OPENAI_IMAGES: expected 1 or 0 (true/false, yes/no, on/off), got 'sometimes'"
        ),
        "{stderr}"
    );
}
