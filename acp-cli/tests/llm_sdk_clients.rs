//! `acp-cli --acp --stdio --backend llm` under the client peers built on the official ACP SDKs
//! (tests/interop/: Python, TypeScript, Rust), installed by `tests/interop/setup.sh`, in their
//! one-prompt mode (`--prompt TEXT`, tests/interop/README.md "One prompt"). The model is the
//! scripted mock server on loopback: it calls `write_file`, then answers in text. Each SDK
//! client must see the streamed text, answer the permission request, and end on `end_turn`;
//! the file must be written and its result must reach the model as a `tool` message. A
//! provider's 401 must reach each SDK client as an error answer carrying the provider's message.

mod client_support;
mod llm_support;

use std::process::{Command, Output, Stdio};

use client_support::{acp_cli, scratch_dir, sdk_peers};
use llm_support::{MockModel, Reply, done, finish, text, tool_call};

/// The key; it must appear in no output.
const KEY: &str = "sk-sdk-SECRET-93e0f1a2b4";

/// The three SDK client peers' command lines; a missing install fails the test with the fix
/// (the policy of client_interop.rs).
fn sdk_clients() -> Vec<(&'static str, Vec<String>)> {
    sdk_peers("client")
}

/// The agent's command line: `env` sets the model's variables for it alone, whatever the SDK
/// passes on to the child.
fn agent(mock: &MockModel) -> Vec<String> {
    [
        "env",
        "-u",
        "LLM_PROVIDER",
        "-u",
        "OPENAI_MODEL",
        &format!("OPENAI_API_KEY={KEY}"),
        &format!("OPENAI_BASE_URL={}", mock.base_url()),
        acp_cli(),
        "--acp",
        "--stdio",
        "--backend",
        "llm",
        "--model",
        "mock-model",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// The model's first answer: a little text, then `write_file` with its arguments split across
/// two chunks.
fn write_call() -> Reply {
    let arguments = r#"{"path":"out.txt","content":"made"}"#;
    let (head, tail) = arguments.split_at(arguments.len() / 2);
    Reply::sse(&[
        text("On it."),
        tool_call(0, Some("c1"), Some("write_file"), head),
        tool_call(0, None, None, tail),
        finish("tool_calls"),
        done(),
    ])
}

/// Runs an SDK client's one-prompt mode in `dir` against the llm agent, to its end (the peers
/// give up on their own after 30 s).
fn run(client: &[String], prompt: &str, mock: &MockModel, dir: &std::path::Path) -> Output {
    Command::new(&client[0])
        .args(&client[1..])
        .args(["--prompt", prompt, "--"])
        .args(agent(mock))
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("the SDK client starts")
}

#[test]
fn every_sdk_client_sees_the_streamed_answer_and_the_write_file_tool_runs() {
    for (sdk, client) in sdk_clients() {
        let dir = scratch_dir(&format!("llm-sdk-{sdk}"));
        let mock = MockModel::start(vec![write_call(), Reply::text(&["Writ", "ten."])]);
        let output = run(&client, "make out.txt", &mock, &dir);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{sdk}: stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        // Every chunk of both answers, in order, then the stop reason.
        assert_eq!(stdout, "On it.Written.\nstop reason: end_turn\n", "{sdk}");
        // The client was asked before the write, and allowed it once.
        assert!(
            stderr.contains("permission: Write out.txt -> allow_once\n"),
            "{sdk}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("out.txt")).ok().as_deref(),
            Some("made"),
            "{sdk}"
        );
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{sdk}");
        assert_eq!(requests[0].json()["messages"][1]["content"], "make out.txt");
        let results: Vec<(String, String)> = requests[1]
            .tool_messages()
            .iter()
            .map(|m| {
                (
                    m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                    m["content"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            results,
            [(
                "c1".to_owned(),
                format!("Wrote 4 bytes to {}", dir.join("out.txt").display())
            )],
            "{sdk}"
        );
        assert!(
            !stdout.contains(KEY) && !stderr.contains(KEY),
            "{sdk}: the key was shown"
        );
    }
}

#[test]
fn every_sdk_client_hears_the_providers_401_as_an_error_answer() {
    for (sdk, client) in sdk_clients() {
        let dir = scratch_dir(&format!("llm-sdk-401-{sdk}"));
        let mock = MockModel::start(vec![Reply::error(401, "Incorrect API key provided.")]);
        let output = run(&client, "hi", &mock, &dir);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{sdk}: stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        // Each SDK words its error line its own way; the agent's message is in it.
        let last = stdout.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("FAIL prompt: ")
                && last.ends_with("Authentication failed: HTTP 401: Incorrect API key provided."),
            "{sdk}: {stdout}"
        );
        assert_eq!(mock.requests().len(), 1, "{sdk}");
    }
}
