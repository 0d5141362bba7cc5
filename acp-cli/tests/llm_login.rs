//! The llm backend's login end to end (R-AUTH-8): `initialize` offers the `api-key` and
//! `login` methods, `session/new` is answered auth-required without credentials, `acp-cli
//! --login` (piped stdin, and at a pseudo-terminal) checks the key against the scripted
//! OpenAI-compatible mock on loopback and stores it with mode 0600, `authenticate` then
//! opens sessions that use it, and `logout` removes it. The key appears in no log, session
//! file, error message or argv.

mod client_support;
mod llm_support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

use client_support::{acp_cli, scratch_dir};
use llm_support::{MockModel, Reply};
use serde_json::{Value, json};

/// The key: it must appear in no output and no file but the credentials file.
const KEY: &str = "sk-test-SECRET123";

/// The mock's answer to `GET /v1/models`.
fn models() -> Reply {
    Reply::Status {
        status: 200,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: r#"{"object":"list","data":[{"id":"mock-model","object":"model"}]}"#.into(),
    }
}

/// `acp-cli` with a clean model environment: no key, the config directory `config`.
fn command(config: &Path) -> Command {
    let mut command = Command::new(acp_cli());
    command
        .env("XDG_CONFIG_HOME", config)
        .env_remove("LLM_PROVIDER")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_MODEL")
        .env_remove("LLM_CONNECT_TIMEOUT")
        .env_remove("LLM_IDLE_TIMEOUT");
    command
}

/// The credentials file under `config`.
fn credentials(config: &Path) -> PathBuf {
    config.join("acp-cli/credentials.json")
}

/// Runs `acp-cli --login` with `input` on a pipe; returns (exit code, stderr).
fn login_piped(config: &Path, input: &str) -> (Option<i32>, String) {
    let mut child = command(config)
        .arg("--login")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start acp-cli --login");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.stdout, b"", "stdout stays clean");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The agent on pipes, its stderr (trace-level logs) into a file.
struct Agent {
    child: Child,
    lines: std::io::Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Agent {
    fn start(config: &Path, cwd: &Path, stderr: &Path, env: &[(&str, &str)]) -> Agent {
        let mut child = command(config)
            .args([
                "--acp",
                "--stdio",
                "--backend",
                "llm",
                "--log-level",
                "trace",
            ])
            .envs(env.iter().copied())
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(stderr).unwrap())
            .spawn()
            .expect("start the agent");
        let stdout = child.stdout.take().unwrap();
        Agent {
            child,
            lines: BufReader::new(stdout).lines(),
            next_id: 0,
        }
    }

    /// Sends a request and returns its answer (notifications before it are skipped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        for line in self.lines.by_ref() {
            let value: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if value["id"] == id && value.get("method").is_none() {
                return value;
            }
        }
        panic!("the agent ended before answering {method}");
    }

    fn initialize(&mut self) -> Value {
        self.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": true}}}),
        )
    }

    fn new_session(&mut self, cwd: &Path) -> Value {
        self.call("session/new", json!({"cwd": cwd, "mcpServers": []}))
    }

    fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Every file under `dir`, read as text (lossy).
fn all_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(all_files(&path));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            found.push((path, text));
        }
    }
    found
}

/// R-AUTH-8: without credentials the llm agent offers both methods (the terminal one to a
/// client that runs it), answers `session/new` auth-required, and refuses `authenticate`
/// with what to do.
#[test]
fn without_credentials_sessions_need_auth_and_both_methods_are_offered() {
    let dir = scratch_dir("login-none");
    let config = dir.join("config");
    let mock = MockModel::start(vec![]);
    let mut agent = Agent::start(
        &config,
        &dir,
        &dir.join("stderr.log"),
        &[("OPENAI_BASE_URL", &mock.base_url())],
    );
    let init = agent.initialize();
    assert_eq!(
        init["result"]["authMethods"],
        json!([
            {"id": "api-key", "name": "API key", "description": "Use <PROVIDER>_API_KEY from the agent's environment, else the login stored by `acp-cli --login`"},
            {"type": "terminal", "id": "login", "name": "Log in at the terminal", "description": "Choose the provider, base URL, model and key; the key is checked and stored", "args": ["--login"]}
        ])
    );
    assert_eq!(
        init["result"]["agentCapabilities"]["auth"],
        json!({"logout": {}})
    );
    let refused = agent.new_session(&dir);
    assert_eq!(
        refused["error"],
        json!({"code": -32000, "message": "Authentication required"})
    );
    let refused = agent.call("authenticate", json!({"methodId": "api-key"}));
    assert_eq!(
        refused["error"],
        json!({"code": -32000, "message": "Authentication required: set OPENAI_API_KEY or run `acp-cli --login`"})
    );
    agent.stop();
    assert_eq!(mock.requests().len(), 0, "nothing reached the model");

    // With a key in the environment the agent starts logged in.
    let mut agent = Agent::start(
        &config,
        &dir,
        &dir.join("stderr2.log"),
        &[("OPENAI_API_KEY", KEY)],
    );
    agent.initialize();
    assert!(agent.new_session(&dir)["result"]["sessionId"].is_string());
    agent.stop();
}

/// R-AUTH-8: the demo backend needs no key: no methods, sessions at once.
#[test]
fn the_demo_backend_offers_no_auth_and_opens_sessions() {
    let dir = scratch_dir("login-demo");
    let mut child = command(&dir.join("config"))
        .args(["--acp", "--stdio"])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut agent = Agent {
        lines: BufReader::new(child.stdout.take().unwrap()).lines(),
        child,
        next_id: 0,
    };
    assert_eq!(agent.initialize()["result"]["authMethods"], json!([]));
    assert!(agent.new_session(&dir)["result"]["sessionId"].is_string());
    agent.stop();
}

/// R-AUTH-8: a login on piped stdin checks the key with `GET /models`, writes a 0600 file;
/// the running agent's `authenticate` then succeeds, its sessions use the stored key and
/// model; `logout` removes the file and sessions need auth again. The key is in no log, no
/// session file, no message.
#[test]
fn a_piped_login_is_used_by_the_running_agent_until_logout() {
    let dir = scratch_dir("login-piped");
    let config = dir.join("config");
    let mock = MockModel::start(vec![models(), Reply::text(&["Hello", " there"])]);
    let stderr = dir.join("agent-stderr.log");
    let mut agent = Agent::start(&config, &dir, &stderr, &[]);
    agent.initialize();
    assert_eq!(agent.new_session(&dir)["error"]["code"], -32000);

    let (code, said) = login_piped(
        &config,
        &format!("openai\n{}\nmock-model\n{KEY}\n", mock.base_url()),
    );
    let file = credentials(&config);
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(
        said,
        format!(
            "Provider (openai, ollama, llamacpp, or another) [openai]: Base URL [https://api.openai.com/v1]: \
             Model [gpt-4o-mini]: API key (not shown): Checking the key: GET {base}/models\n\
             Logged in: openai/mock-model saved to {file}\n",
            base = mock.base_url(),
            file = file.display()
        )
    );
    let check = &mock.requests()[0];
    assert_eq!(check.request_line, "GET /v1/models HTTP/1.1");
    assert_eq!(
        check.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        stored,
        json!({"provider": "openai", "base_url": mock.base_url(), "model": "mock-model", "api_key": KEY})
    );
    // No temporary file is left beside it.
    assert_eq!(
        std::fs::read_dir(file.parent().unwrap()).unwrap().count(),
        1
    );

    assert_eq!(
        agent.call("authenticate", json!({"methodId": "api-key"})),
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
    let opened = agent.new_session(&dir);
    let session = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let answer = agent.call(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let chat = &mock.requests()[1];
    assert_eq!(chat.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(
        chat.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(chat.json()["model"], "mock-model");

    assert_eq!(agent.call("logout", json!({}))["result"], json!({}));
    assert!(!file.exists(), "logout removed the credentials");
    assert_eq!(agent.new_session(&dir)["error"]["code"], -32000);
    let refused = agent.call("authenticate", json!({"methodId": "api-key"}));
    assert_eq!(refused["error"]["code"], -32000);
    agent.stop();

    for (path, text) in all_files(&dir) {
        assert!(
            !text.contains(KEY),
            "the key leaked into {}",
            path.display()
        );
    }
    let log = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        log.contains("authenticated"),
        "trace logs were written: {log}"
    );
}

/// R-AUTH-8: a login is the agent's start configuration too, and the environment wins over
/// it variable by variable.
#[test]
fn a_stored_login_opens_sessions_at_start_and_the_environment_wins() {
    let dir = scratch_dir("login-start");
    let config = dir.join("config");
    let mock = MockModel::start(vec![models(), Reply::text(&["a"]), Reply::text(&["b"])]);
    let (code, said) = login_piped(
        &config,
        &format!("openai\n{}\nmock-model\n{KEY}\n", mock.base_url()),
    );
    assert_eq!(code, Some(0), "{said}");
    let prompt = |agent: &mut Agent| {
        let session = agent.new_session(&dir)["result"]["sessionId"]
            .as_str()
            .unwrap()
            .to_owned();
        agent.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
        );
    };
    let mut agent = Agent::start(&config, &dir, &dir.join("e1.log"), &[]);
    agent.initialize();
    prompt(&mut agent);
    agent.stop();
    let mut agent = Agent::start(
        &config,
        &dir,
        &dir.join("e2.log"),
        &[
            ("OPENAI_API_KEY", "sk-from-env"),
            ("OPENAI_MODEL", "env-model"),
        ],
    );
    agent.initialize();
    prompt(&mut agent);
    agent.stop();
    let requests = mock.requests();
    assert_eq!(
        requests[1].header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(requests[1].json()["model"], "mock-model");
    assert_eq!(
        requests[2].header("authorization"),
        Some("Bearer sk-from-env")
    );
    assert_eq!(requests[2].json()["model"], "env-model");
}

/// R-AUTH-8: a key the server refuses fails the login with exit 1 and writes nothing; the
/// message names the request, never the key.
#[test]
fn a_refused_key_fails_the_login_and_stores_nothing() {
    let dir = scratch_dir("login-refused");
    let config = dir.join("config");
    let mock = MockModel::start(vec![Reply::error(401, &format!("Incorrect API key {KEY}"))]);
    let (code, said) = login_piped(&config, &format!("openai\n{}\n\n{KEY}\n", mock.base_url()));
    assert_eq!(code, Some(1));
    assert!(
        said.ends_with(&format!(
            "acp-cli: login failed: the server refused the key: GET {}/models answered HTTP 401\n",
            mock.base_url()
        )),
        "{said}"
    );
    assert!(!said.contains(KEY), "{said}");
    assert!(!credentials(&config).exists());

    // Input that ends early: nothing is asked of the server.
    let (code, said) = login_piped(&config, "openai\n");
    assert_eq!(code, Some(1));
    assert!(
        said.ends_with("acp-cli: login failed: login cancelled: the input ended\n"),
        "{said}"
    );
}

/// R-AUTH-8: `acp-cli --logout` removes the file, and says when there was none.
#[test]
fn logout_on_the_command_line_removes_the_file() {
    let dir = scratch_dir("login-logout");
    let config = dir.join("config");
    let file = credentials(&config);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{}").unwrap();
    let run = |args: &[&str]| {
        let out = command(&config).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(
        run(&["--logout"]),
        (Some(0), format!("Logged out: removed {}\n", file.display()))
    );
    assert_eq!(
        run(&["--acp", "--stdio", "--backend", "llm", "--logout"]),
        (Some(0), format!("Not logged in: no {}\n", file.display()))
    );
    assert_eq!(
        run(&["--acp", "--stdio", "--backend", "demo", "--login"]),
        (
            Some(2),
            "acp-cli: --login is for --backend llm (the demo backend needs no login)\n".to_owned()
        )
    );
    assert_eq!(
        run(&["--login", "--resume"]),
        (
            Some(2),
            "acp-cli: --login runs alone or after the agent's own arguments (`acp-cli --acp --stdio --backend llm --login`)\n".to_owned()
        )
    );
}

/// R-AUTH-8: at a terminal the key is read with echo off: the screen shows every answer but
/// the key.
#[test]
fn at_a_terminal_the_key_is_not_echoed() {
    let dir = scratch_dir("login-pty");
    let config = dir.join("config");
    let mock = MockModel::start(vec![models()]);
    let steps = json!([
        ["expect", "[openai]: "],
        ["send", "openai\r"],
        ["expect", "]: "],
        ["send", format!("{}\r", mock.base_url())],
        ["expect", "[gpt-4o-mini]: "],
        ["send", "mock-model\r"],
        ["expect", "API key (not shown): "],
        ["send", format!("{KEY}\r")],
        ["expect", "Logged in: openai/mock-model saved to "],
        ["wait_exit"]
    ]);
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pty_drive.py");
    let mut run = Command::new("python3");
    run.arg(driver).arg(steps.to_string()).arg("--");
    let out = {
        let mut inner = command(&config);
        inner.arg("--login");
        // The pty driver starts the program itself: pass the same environment through.
        for (name, value) in inner.get_envs() {
            match value {
                Some(value) => run.env(name, value),
                None => run.env_remove(name),
            };
        }
        run.arg(acp_cli()).arg("--login").output().unwrap()
    };
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("mock-model\n"),
        "answers are echoed: {screen}"
    );
    assert!(!screen.contains(KEY), "the key was echoed: {screen}");
    assert!(screen.ends_with("EXIT 0\n"), "{screen}");
    assert!(credentials(&config).exists());
}

/// R-AUTH-8: `acp-cli client` at a terminal meets an agent without credentials: it lists
/// the methods, runs the `terminal` one (the agent's command with `--login`) on the same
/// terminal, then authenticates, opens the session and sends the prompt.
#[test]
fn the_client_at_a_terminal_runs_the_login_and_goes_on() {
    let dir = scratch_dir("login-client");
    let config = dir.join("config");
    let mock = MockModel::start(vec![models(), Reply::text(&["Hello", " after login"])]);
    let steps = json!([
        ["expect", "login: Log in at the terminal"],
        ["expect", "[openai]: "],
        ["send", "openai\r"],
        ["expect", "]: "],
        ["send", format!("{}\r", mock.base_url())],
        ["expect", "[gpt-4o-mini]: "],
        ["send", "mock-model\r"],
        ["expect", "API key (not shown): "],
        ["send", format!("{KEY}\r")],
        ["expect", "Hello after login"],
        ["wait_exit"]
    ]);
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pty_drive.py");
    let out = Command::new("python3")
        .arg(driver)
        .arg(steps.to_string())
        .arg("--")
        .args([acp_cli(), "client", "--prompt", "hi", "--"])
        .args([acp_cli(), "--acp", "--stdio", "--backend", "llm"])
        .env("XDG_CONFIG_HOME", &config)
        .env_remove("LLM_PROVIDER")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_MODEL")
        .current_dir(&dir)
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains(
            "acp-cli client: the agent requires authentication (session/new answered -32000: Authentication required)\n"
        ),
        "{screen}"
    );
    assert!(
        screen.contains(&format!(
            "  login: Log in at the terminal — Choose the provider, base URL, model and key; the key is checked and stored (in a terminal: {} --acp --stdio --backend llm --login)\n",
            acp_cli()
        )),
        "{screen}"
    );
    assert!(!screen.contains(KEY), "the key was echoed: {screen}");
    assert!(screen.ends_with("EXIT 0\n"), "{screen}");
    assert_eq!(mock.requests().len(), 2);
    assert!(credentials(&config).exists());
}

/// R-AUTH-8: `acp-cli trace` of our llm agent with a stored login: neither the trace nor
/// the agent's trace-level stderr (passed through by the proxy) holds the key.
#[test]
fn a_trace_of_the_logged_in_agent_holds_no_key() {
    let dir = scratch_dir("login-trace");
    let config = dir.join("config");
    let mock = MockModel::start(vec![models(), Reply::text(&["traced"])]);
    let (code, said) = login_piped(
        &config,
        &format!("openai\n{}\nmock-model\n{KEY}\n", mock.base_url()),
    );
    assert_eq!(code, Some(0), "{said}");
    let trace = dir.join("t.jsonl");
    let mut child = command(&config)
        .args(["trace", "--out"])
        .arg(&trace)
        .args(["--", acp_cli(), "--acp", "--stdio", "--backend", "llm"])
        .args(["--log-level", "trace"])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut call = |id: u64, method: &str, params: Value| -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{line}").unwrap();
        for line in lines.by_ref() {
            let value: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if value["id"] == id && value.get("method").is_none() {
                return value;
            }
        }
        panic!("no answer to {method}");
    };
    call(1, "initialize", json!({"protocolVersion": 1}));
    let opened = call(2, "session/new", json!({"cwd": dir, "mcpServers": []}));
    let session = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let answer = call(
        3,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains("model request"), "trace logs: {stderr}");
    assert!(!stderr.contains(KEY), "the key leaked into stderr");
    let traced = std::fs::read_to_string(&trace).unwrap();
    assert!(traced.contains("traced"), "{traced}");
    assert!(!traced.contains(KEY), "the key leaked into the trace");
}
