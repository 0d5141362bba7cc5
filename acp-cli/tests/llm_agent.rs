//! `acp-cli --acp --stdio --backend llm` end to end: our client (`acp-cli client`) drives the
//! agent, whose model is the scripted mock server on loopback. Each test checks what the
//! user sees and what reached the model (the mock records every request); none asserts a
//! duration.

mod client_support;
mod llm_support;

use std::path::Path;

use client_support::{Running, acp_cli, client, scratch_dir};
use llm_support::{MockModel, Piece, Reply, done, finish, reasoning, text, tool_call};

/// The key; it must appear in no output and no file.
const KEY: &str = "sk-e2e-SECRET-5b1d0c9a77";

/// The agent's command line: `env` sets the model's variables for it alone.
fn agent(mock: &MockModel, extra: &[&str]) -> Vec<String> {
    let mut argv = vec![
        "env".to_owned(),
        "-u".to_owned(),
        "LLM_PROVIDER".to_owned(),
        "-u".to_owned(),
        "OPENAI_MODEL".to_owned(),
        format!("OPENAI_API_KEY={KEY}"),
        format!("OPENAI_BASE_URL={}", mock.base_url()),
        acp_cli().to_owned(),
        "--acp".to_owned(),
        "--stdio".to_owned(),
        "--backend".to_owned(),
        "llm".to_owned(),
        "--model".to_owned(),
        "mock-model".to_owned(),
    ];
    argv.extend(extra.iter().map(|s| (*s).to_owned()));
    argv
}

/// A streamed answer that calls tools: `(id, name, arguments)` each in two pieces.
fn calls(list: &[(&str, &str, &str)]) -> Reply {
    let mut data = vec![text("On it.")];
    for (index, (id, name, arguments)) in list.iter().enumerate() {
        let (head, tail) = arguments.split_at(arguments.len() / 2);
        data.push(tool_call(index, Some(id), Some(name), head));
        data.push(tool_call(index, None, None, tail));
    }
    data.push(finish("tool_calls"));
    data.push(done());
    Reply::sse(&data)
}

/// The `tool` messages of the mock's request `n` as `(tool_call_id, content)`.
fn tool_results(mock: &MockModel, n: usize) -> Vec<(String, String)> {
    mock.requests()[n]
        .tool_messages()
        .iter()
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Every file under `dir`, recursively, as text.
fn all_files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(all_files(&path));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            out.push((path.display().to_string(), text));
        }
    }
    out
}

/// R-LLM-5: the model is offered Agentao's nine tools by their names, and a plain answer is
/// streamed to the user, the thoughts aside.
#[test]
fn a_plain_answer_is_streamed_to_the_user_and_the_thoughts_aside() {
    let dir = scratch_dir("llm-plain");
    let mock = MockModel::start(vec![Reply::sse(&[
        reasoning("thinking"),
        text("Hel"),
        text("lo"),
        finish("stop"),
        done(),
    ])]);
    let run = client(&["--prompt", "hi"], &agent(&mock, &[]), &dir, "");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Hello\n");
    assert!(run.stderr.contains("thought: thinking"), "{}", run.stderr);
    assert!(
        run.stderr.ends_with("stop reason: end_turn\n"),
        "{}",
        run.stderr
    );
    let body = mock.requests()[0].json();
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["messages"][1],
        serde_json::json!({"role": "user", "content": "hi"})
    );
    let offered: Vec<&str> = body["tools"]
        .as_array()
        .expect("tools offered")
        .iter()
        .map(|tool| tool["function"]["name"].as_str().expect("a named function"))
        .collect();
    assert_eq!(
        offered,
        [
            "read_file",
            "list_directory",
            "glob",
            "search_file_content",
            "write_file",
            "replace",
            "run_shell_command",
            "ask_user",
            "todo_write"
        ]
    );
}

#[test]
fn write_file_asks_then_writes_when_allowed() {
    let dir = scratch_dir("llm-write-allow");
    let mock = MockModel::start(vec![
        calls(&[("c1", "write_file", r#"{"path":"out.txt","content":"made"}"#)]),
        Reply::text(&["Written."]),
    ]);
    let run = client(
        &["--approve", "allow", "--prompt", "make out.txt"],
        &agent(&mock, &[]),
        &dir,
        "",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("out.txt")).unwrap(),
        "made"
    );
    assert_eq!(
        tool_results(&mock, 1),
        [(
            "c1".to_owned(),
            format!("Wrote 4 bytes to {}", dir.join("out.txt").display())
        )]
    );
    assert!(run.stdout.ends_with("Written.\n"), "{}", run.stdout);
}

#[test]
fn write_file_rejected_writes_nothing_and_the_model_hears_why() {
    let dir = scratch_dir("llm-write-reject");
    let mock = MockModel::start(vec![
        calls(&[("c1", "write_file", r#"{"path":"out.txt","content":"made"}"#)]),
        Reply::text(&["Understood."]),
    ]);
    let run = client(
        &["--approve", "reject", "--prompt", "make out.txt"],
        &agent(&mock, &[]),
        &dir,
        "",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(!dir.join("out.txt").exists());
    assert_eq!(
        tool_results(&mock, 1),
        [(
            "c1".to_owned(),
            "Error: rejected by the user (reject_once)".to_owned()
        )]
    );
}

#[test]
fn read_file_and_search_results_reach_the_model_and_outside_paths_are_refused() {
    let dir = scratch_dir("llm-read");
    std::fs::write(dir.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let mock = MockModel::start(vec![
        calls(&[
            ("r1", "read_file", r#"{"path":"notes.txt"}"#),
            (
                "s1",
                "search_file_content",
                r#"{"pattern":"^be","include":"*.txt"}"#,
            ),
            ("o1", "read_file", r#"{"path":"../secret.txt"}"#),
        ]),
        Reply::text(&["Read."]),
    ]);
    let run = client(&["--prompt", "look"], &agent(&mock, &[]), &dir, "");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        tool_results(&mock, 1),
        [
            ("r1".to_owned(), "alpha\nbeta\n".to_owned()),
            ("s1".to_owned(), "notes.txt:2: beta".to_owned()),
            (
                "o1".to_owned(),
                format!(
                    "Error: '../secret.txt' is outside the session cwd '{}'",
                    dir.display()
                )
            ),
        ]
    );
    // The tool calls the user saw, with human titles.
    assert!(run.stderr.contains("Read notes.txt"), "{}", run.stderr);
}

#[test]
fn the_round_limit_ends_the_turn_with_max_turn_requests() {
    let dir = scratch_dir("llm-rounds");
    let list = ("l1", "list_directory", r#"{"path":"."}"#);
    let mock = MockModel::start(vec![calls(&[list]), calls(&[list])]);
    let run = client(
        &["--prompt", "loop"],
        &agent(&mock, &["--max-tool-rounds", "1"]),
        &dir,
        "",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.ends_with("stop reason: max_turn_requests\n"),
        "{}",
        run.stderr
    );
    assert_eq!(mock.requests().len(), 2);
}

/// R-LLM-4: a cancel closes the model's connection.
#[test]
fn a_cancel_during_a_slow_stream_is_answered_cancelled_and_closes_the_connection() {
    let dir = scratch_dir("llm-cancel");
    let mock = MockModel::start(vec![Reply::pieces(vec![
        Piece::Data(text("tick")),
        Piece::HoldUntilClosed,
    ])]);
    let mut args = vec![
        "client".to_owned(),
        "--prompt".to_owned(),
        "slow".to_owned(),
    ];
    args.push("--".to_owned());
    args.extend(agent(&mock, &[]));
    let run = Running::start(&args, &dir, None);
    run.wait_for("the first chunk", |out, _| out.contains("tick"));
    run.interrupt();
    let run = run.finish();
    assert!(
        run.stderr.contains("stop reason: cancelled"),
        "{}",
        run.stderr
    );
    assert_eq!(run.code, Some(130), "{run:?}");
    assert_eq!(
        mock.wait_client_closed(),
        Some(1),
        "the stream was closed, not drained"
    );
}

/// R-LLM-2, R-AUTH-8: without a key (none in the environment, no stored login) the llm
/// agent answers `session/new` auth-required; the client shows the refusal and the methods.
#[test]
fn without_a_key_the_session_needs_authentication() {
    let dir = scratch_dir("llm-nokey");
    let config = format!("XDG_CONFIG_HOME={}", dir.join("config").display());
    let argv: Vec<String> = [
        "env",
        "-u",
        "OPENAI_API_KEY",
        "-u",
        "LLM_PROVIDER",
        &config,
        acp_cli(),
        "--acp",
        "--stdio",
        "--backend",
        "llm",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let run = client(&["--prompt", "hi"], &argv, &dir, "");
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.ends_with(
            "acp-cli client: handshake failed: the agent requires authentication (session/new answered -32000: Authentication required)\n\
             The agent offers these ways to log in:\n  \
             api-key: API key — Use <PROVIDER>_API_KEY from the agent's environment, else the login stored by `acp-cli --login` (the agent checks its own credentials)\n"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn a_resumed_session_continues_the_conversation_and_the_key_is_written_nowhere() {
    let dir = scratch_dir("llm-resume");
    let mock = MockModel::start(vec![
        calls(&[
            ("c1", "list_directory", r#"{"path":"."}"#),
            (
                "c2",
                "run_shell_command",
                r#"{"command":"echo \"key=$OPENAI_API_KEY\""}"#,
            ),
        ]),
        Reply::text(&["First answer."]),
        Reply::text(&["Second answer."]),
    ]);
    let first = client(
        &["--approve", "allow", "--prompt", "first"],
        &agent(&mock, &[]),
        &dir,
        "",
    );
    assert_eq!(first.code, Some(0), "{first:?}");
    let second = client(
        &["--prompt", "second"],
        &agent(&mock, &["--resume"]),
        &dir,
        "",
    );
    assert_eq!(second.code, Some(0), "{second:?}");
    // `--resume` replays the first turn behind the session/new answer (R-STORE-3), then the
    // new turn answers.
    assert_eq!(second.stdout, "On it.First answer.Second answer.\n");
    // The third request carries the first turn: its prompt, tool call, result and answer.
    let body = mock.requests()[2].json();
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "user"
        ]
    );
    // The shell does not see the key.
    assert_eq!(body["messages"][4]["content"], "Exit code: 0\nkey=\n");
    assert_eq!(body["messages"][1]["content"], "first");
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["function"]["name"],
        "list_directory"
    );
    assert_eq!(body["messages"][5]["content"], "First answer.");
    assert_eq!(body["messages"][6]["content"], "second");

    // The key went out in the Authorization header only.
    assert_eq!(
        mock.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    for run in [&first, &second] {
        assert!(!run.stdout.contains(KEY) && !run.stderr.contains(KEY));
    }
    let files = all_files(&dir);
    assert!(files.iter().any(|(path, _)| path.ends_with("acp-cli.log")));
    assert!(
        files
            .iter()
            .any(|(path, _)| path.contains(".agentao/sessions/"))
    );
    for (path, text) in files {
        assert!(!text.contains(KEY), "the key is in {path}");
    }
}

/// The agent on raw pipes, for what `acp-cli client` cannot do (set a mode).
struct RawAgent {
    child: std::process::Child,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl RawAgent {
    fn start(mock: &MockModel, cwd: &Path) -> Self {
        Self::start_at(&mock.base_url(), cwd)
    }

    /// The agent with `OPENAI_BASE_URL=base_url` (a port where nothing listens, say).
    fn start_at(base_url: &str, cwd: &Path) -> Self {
        Self::start_with_env(base_url, cwd, &[])
    }

    /// The same with more variables (`LLM_IDLE_TIMEOUT`, say).
    fn start_with_env(base_url: &str, cwd: &Path, env: &[(&str, &str)]) -> Self {
        let mut child = std::process::Command::new(acp_cli())
            .args([
                "--acp",
                "--stdio",
                "--backend",
                "llm",
                "--model",
                "mock-model",
            ])
            .env("OPENAI_API_KEY", KEY)
            .env("OPENAI_BASE_URL", base_url)
            .env_remove("LLM_PROVIDER")
            .env_remove("LLM_CONNECT_TIMEOUT")
            .env_remove("LLM_IDLE_TIMEOUT")
            .envs(env.iter().copied())
            .current_dir(cwd)
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

    /// Sends one line and reads until the answer to `id`; returns every line read.
    fn call(&mut self, id: u64, line: &str) -> Vec<String> {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").expect("write");
        let mut read = Vec::new();
        for line in self.lines.by_ref() {
            let line = line.expect("a line");
            let done = serde_json::from_str::<serde_json::Value>(&line)
                .is_ok_and(|v| v["id"] == id && v.get("method").is_none());
            read.push(line);
            if done {
                return read;
            }
        }
        panic!("the agent ended before answering {id}: {read:?}");
    }
}

impl RawAgent {
    /// `initialize` (id 1): its answer.
    fn initialize(&mut self) -> serde_json::Value {
        let lines = self.call(
            1,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        );
        serde_json::from_str(lines.last().unwrap()).unwrap()
    }

    /// `initialize` (id 1) and `session/new` in `cwd` (id 2); returns the session id.
    fn open_session(&mut self, cwd: &Path) -> String {
        self.initialize();
        let opened = self.call(
            2,
            &serde_json::json!({
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": cwd, "mcpServers": []},
            })
            .to_string(),
        );
        let answer: serde_json::Value = serde_json::from_str(opened.last().unwrap()).unwrap();
        answer["result"]["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned()
    }

    /// One `session/prompt` with `text`: the answer and the message text streamed before it.
    /// Prompts "second" (request 4) and checks the turn ends normally saying `said`: the
    /// session went on after the failure before it.
    fn goes_on(&mut self, session: &str, said: &str) {
        let (answer, text) = self.prompt(4, session, "second");
        assert_eq!(answer, ended(4));
        assert_eq!(text, said);
    }

    fn prompt(&mut self, id: u64, session: &str, text: &str) -> (serde_json::Value, String) {
        let lines = self.call(
            id,
            &serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
            })
            .to_string(),
        );
        let mut said = String::new();
        for line in &lines {
            let message: serde_json::Value = serde_json::from_str(line).unwrap();
            let update = &message["params"]["update"];
            if message["method"] == "session/update"
                && update["sessionUpdate"] == "agent_message_chunk"
            {
                said.push_str(update["content"]["text"].as_str().unwrap_or_default());
            }
        }
        let answer = serde_json::from_str(lines.last().unwrap()).unwrap();
        (answer, said)
    }
}

impl Drop for RawAgent {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

#[test]
fn run_shell_command_is_refused_in_read_only_mode_and_the_model_hears_why() {
    let dir = scratch_dir("llm-readonly");
    let mock = MockModel::start(vec![
        calls(&[("c1", "run_shell_command", r#"{"command":"touch made"}"#)]),
        Reply::text(&["Cannot."]),
    ]);
    let mut agent = RawAgent::start(&mock, &dir);
    agent.call(
        1,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
    );
    let opened = agent.call(
        2,
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#,
            dir.display()
        ),
    );
    let answer: serde_json::Value = serde_json::from_str(opened.last().unwrap()).unwrap();
    let sid = answer["result"]["sessionId"].as_str().unwrap().to_owned();
    agent.call(
        3,
        &format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{{"sessionId":"{sid}","modeId":"read-only"}}}}"#
        ),
    );
    let turn = agent.call(
        4,
        &format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{{"sessionId":"{sid}","prompt":[{{"type":"text","text":"touch it"}}]}}}}"#
        ),
    );
    assert_eq!(
        turn.last().unwrap(),
        r#"{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}"#
    );
    assert!(
        !turn
            .iter()
            .any(|l| l.contains("session/request_permission")),
        "{turn:?}"
    );
    assert!(!dir.join("made").exists());
    let refusal = "Error: the session is in read-only mode; a tool of kind 'execute' may not run";
    assert_eq!(
        tool_results(&mock, 1),
        [("c1".to_owned(), refusal.to_owned())]
    );
}

/// R-LLM-4: a cancel kills the running shell's group.
#[test]
fn a_cancel_while_a_shell_command_runs_kills_it_and_answers_cancelled() {
    let dir = scratch_dir("llm-cancel-shell");
    let mock = MockModel::start(vec![calls(&[(
        "c1",
        "run_shell_command",
        r#"{"command":"echo $$ > pid.txt; exec sleep 3600"}"#,
    )])]);
    let mut args: Vec<String> = ["client", "--approve", "allow", "--prompt", "wait", "--"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    args.extend(agent(&mock, &[]));
    let run = Running::start(&args, &dir, None);
    let pid_file = dir.join("pid.txt");
    let give_up = std::time::Instant::now() + client_support::PATIENCE;
    let pid: u32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            std::time::Instant::now() < give_up,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    run.interrupt();
    let run = run.finish();
    assert!(
        run.stderr.contains("stop reason: cancelled"),
        "{}",
        run.stderr
    );
    assert_eq!(run.code, Some(130), "{run:?}");
    let give_up = std::time::Instant::now() + client_support::PATIENCE;
    while !client_support::is_gone(pid) {
        assert!(
            std::time::Instant::now() < give_up,
            "the command {pid} still runs"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The answer a failed prompt `id` gets: a JSON-RPC error with this code and message.
fn failed(id: u64, code: i32, message: &str) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The answer a prompt `id` gets when the model finished its answer.
fn ended(id: u64) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}})
}

#[test]
fn http_401_fails_the_prompt_with_32000_and_the_providers_message_and_the_session_goes_on() {
    let dir = scratch_dir("llm-401");
    let mock = MockModel::start(vec![
        Reply::error(401, "Incorrect API key provided."),
        Reply::text(&["Back."]),
    ]);
    let mut agent = RawAgent::start(&mock, &dir);
    let session = agent.open_session(&dir);
    let (answer, said) = agent.prompt(3, &session, "first");
    assert_eq!(
        answer,
        failed(
            3,
            -32000,
            "Authentication failed: HTTP 401: Incorrect API key provided."
        )
    );
    assert_eq!(said, "");
    assert_eq!(mock.requests().len(), 1, "401 is not retried");
    // The same session answers its next prompt from the next reply.
    agent.goes_on(&session, "Back.");
    assert_eq!(mock.requests().len(), 2);
    let messages = mock.requests()[1].json()["messages"].clone();
    assert_eq!(
        messages.as_array().and_then(|m| m.last()),
        Some(&serde_json::json!({"role": "user", "content": "second"}))
    );
}

#[test]
fn http_429_is_retried_after_its_retry_after_and_the_answer_streams() {
    let dir = scratch_dir("llm-429");
    let mock = MockModel::start(vec![
        Reply::error_with(429, "Rate limit reached", &[("Retry-After", "0")]),
        Reply::text(&["Hel", "lo"]),
    ]);
    let mut agent = RawAgent::start(&mock, &dir);
    let session = agent.open_session(&dir);
    let (answer, said) = agent.prompt(3, &session, "hi");
    assert_eq!(answer, ended(3));
    assert_eq!(said, "Hello");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body, "the same request again");
}

#[test]
fn http_500_three_times_fails_the_prompt_with_32603_naming_the_status_and_the_session_goes_on() {
    let dir = scratch_dir("llm-500");
    // `Retry-After: 0` keeps the agent from waiting its real 1 s and 2 s backoff; the backoff
    // itself is tested with a recording sleeper in llm_client.rs.
    let busy = || Reply::error_with(500, "The server had an error", &[("Retry-After", "0")]);
    let mock = MockModel::start(vec![busy(), busy(), busy(), Reply::text(&["Recovered."])]);
    let mut agent = RawAgent::start(&mock, &dir);
    let session = agent.open_session(&dir);
    let (answer, said) = agent.prompt(3, &session, "first");
    assert_eq!(
        answer,
        failed(
            3,
            -32603,
            "Internal error: the model server answered HTTP 500: The server had an error"
        )
    );
    assert_eq!(said, "");
    assert_eq!(mock.requests().len(), 3, "at most 3 tries in all");
    agent.goes_on(&session, "Recovered.");
    assert_eq!(mock.requests().len(), 4);
}

#[test]
fn a_refused_connection_fails_the_prompt_clearly_and_the_session_goes_on_once_the_server_is_up() {
    let dir = scratch_dir("llm-refused");
    let port = llm_support::dead_port();
    let mut agent = RawAgent::start_at(&format!("http://127.0.0.1:{port}/v1"), &dir);
    let session = agent.open_session(&dir);
    let (answer, said) = agent.prompt(3, &session, "first");
    assert_eq!(
        answer,
        failed(
            3,
            -32603,
            &format!(
                "Internal error: cannot reach the model server: 127.0.0.1:{port}: Connection refused (os error 111)"
            )
        )
    );
    assert_eq!(said, "");
    // The server comes up where the agent found nothing; the same session now gets answers.
    let mock = MockModel::start_on(port, vec![Reply::text(&["Up now."])]);
    agent.goes_on(&session, "Up now.");
    assert_eq!(mock.requests().len(), 1);
}

/// The agent names its backend in `agentInfo.title`, and not its key or model.
#[test]
fn initialize_names_the_llm_backend_in_agent_info() {
    let dir = scratch_dir("llm-title");
    let mock = MockModel::start(vec![]);
    let mut agent = RawAgent::start(&mock, &dir);
    let answer = agent.initialize();
    assert_eq!(
        answer["result"]["agentInfo"],
        serde_json::json!({
            "name": "acp-cli",
            "title": "acp-cli (LLM agent)",
            "version": env!("CARGO_PKG_VERSION"),
        })
    );
    assert_eq!(mock.requests().len(), 0);
}

/// R-LLM-6: a model server that takes the request and never answers fails the prompt once
/// `LLM_IDLE_TIMEOUT` passes without a byte (not retried, its connection closed); the same
/// session answers its next prompt.
#[test]
fn a_server_that_never_answers_fails_the_prompt_at_the_idle_timeout_and_the_session_goes_on() {
    let dir = scratch_dir("llm-idle-head");
    let mock = MockModel::start(vec![Reply::Silent, Reply::text(&["Back."])]);
    let mut agent = RawAgent::start_with_env(&mock.base_url(), &dir, &[("LLM_IDLE_TIMEOUT", "1")]);
    let session = agent.open_session(&dir);
    let (answer, said) = agent.prompt(3, &session, "first");
    assert_eq!(
        answer,
        failed(
            3,
            -32603,
            "Internal error: the model server timed out: idle timeout: no byte for 1 s while \
             waiting for the response head (LLM_IDLE_TIMEOUT)"
        )
    );
    assert_eq!(said, "");
    assert_eq!(
        mock.wait_client_closed(),
        Some(1),
        "the silent connection is closed"
    );
    assert_eq!(mock.requests().len(), 1, "a timeout is not retried");
    agent.goes_on(&session, "Back.");
    assert_eq!(mock.requests().len(), 2);
}

/// R-LLM-6: a stream that stalls after its head and a first piece fails the prompt at the
/// idle timeout, naming how far it got; what streamed stays shown and the session goes on.
#[test]
fn a_stream_that_stalls_fails_the_prompt_at_the_idle_timeout_and_the_session_goes_on() {
    let dir = scratch_dir("llm-idle-body");
    let mock = MockModel::start(vec![
        Reply::pieces(vec![Piece::Data(text("Hel")), Piece::HoldUntilClosed]),
        Reply::text(&["Back."]),
    ]);
    let mut agent = RawAgent::start_with_env(&mock.base_url(), &dir, &[("LLM_IDLE_TIMEOUT", "1")]);
    let session = agent.open_session(&dir);
    let (answer, said) = agent.prompt(3, &session, "first");
    assert_eq!(
        answer,
        failed(
            3,
            -32603,
            "Internal error: the model server timed out: idle timeout: no byte for 1 s after \
             1 chunk(s) of the response (LLM_IDLE_TIMEOUT)"
        )
    );
    assert_eq!(said, "Hel");
    assert_eq!(
        mock.wait_client_closed(),
        Some(1),
        "the stalled stream is closed"
    );
    agent.goes_on(&session, "Back.");
    assert_eq!(mock.requests().len(), 2);
}

/// R-LLM-6: the connect timeout covers the TLS handshake: a listener that takes the TCP
/// connection but never shakes hands fails the prompt at `LLM_CONNECT_TIMEOUT`, with one
/// connection per prompt (like a refused connection, it is not retried); the session goes on
/// and its next prompt is tried afresh.
#[test]
fn a_handshake_that_never_comes_fails_the_prompt_at_the_connect_timeout_and_is_not_retried() {
    let dir = scratch_dir("llm-connect");
    // Bound, never accepted: the kernel completes TCP, nobody speaks TLS.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let address = listener.local_addr().unwrap();
    let mut agent = RawAgent::start_with_env(
        &format!("https://{address}/v1"),
        &dir,
        &[("LLM_CONNECT_TIMEOUT", "0.5"), ("LLM_IDLE_TIMEOUT", "600")],
    );
    let session = agent.open_session(&dir);
    let expected = |id| {
        failed(
            id,
            -32603,
            &format!(
                "Internal error: the model server timed out: connect timeout: no connection to \
                 {address} within 0.5 s (LLM_CONNECT_TIMEOUT)"
            ),
        )
    };
    // Every connection the agent opened is in the listen queue once a prompt is answered.
    listener.set_nonblocking(true).unwrap();
    let queued = || std::iter::from_fn(|| listener.accept().ok()).count();
    let (answer, said) = agent.prompt(3, &session, "first");
    assert_eq!(answer, expected(3));
    assert_eq!(said, "");
    assert_eq!(queued(), 1, "a connect timeout is not retried");
    let (answer, _) = agent.prompt(4, &session, "second");
    assert_eq!(answer, expected(4));
    assert_eq!(queued(), 1);
}
