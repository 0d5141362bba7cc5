//! The handshake and `session/new` of `acp-cli --acp --stdio` over real pipes: the exact
//! answers, the cwd checks, unique ids, the log file, and stdout carrying protocol only.

mod agent_support;

use agent_support::{Agent, s, session_id};

const MODES: &str = r#""modes":{"currentModeId":"workspace-write","availableModes":[{"id":"read-only","name":"Read-only","description":"No writes or shell."},{"id":"workspace-write","name":"Workspace write","description":"Writes + safe shell; asks for web."},{"id":"full-access","name":"Full access","description":"All tools, no prompts."},{"id":"plan","name":"Plan","description":"Plans only; does not execute."}]}"#;

const CONFIG: &str = r#""configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"demo/demo","options":[{"value":"demo/demo","name":"demo"}]}]"#;

#[test]
fn initialize_answers_the_agent_and_its_extensions() {
    let mut agent = Agent::start("init", &[]);
    let answer = agent.call(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        0,
    );
    assert_eq!(
        answer,
        [format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":1,"agentCapabilities":{{"loadSession":true,"promptCapabilities":{{"image":false,"audio":false,"embeddedContext":false}},"mcpCapabilities":{{"http":true,"sse":false}},"sessionCapabilities":{{"list":{{}},"resume":{{}},"close":{{}},"delete":{{}},"additionalDirectories":{{}},"systemPrompt":{{}}}}}},"authMethods":[],"agentInfo":{{"name":"acp-cli","title":"acp-cli (demo agent)","version":"{}"}},"_meta":{{"_agentao.cn/extensions":[{{"method":"_agentao.cn/ask_user","description":"Request free-form text input from the user."}},{{"method":"_agentao.cn/set_model","description":"Switch the session's model (model-only, secret-free)."}}]}}}}}}"#,
            env!("CARGO_PKG_VERSION")
        )]
    );
    let (rest, status, _) = agent.finish();
    assert!(rest.is_empty());
    assert!(status.success());
}

#[test]
fn session_new_answers_an_id_modes_and_config_options_as_agentao_does() {
    let mut agent = Agent::start("new", &[]);
    agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        1,
    );
    let cwd = agent.cwd.clone();
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#,
        s(&cwd)
    );
    let answer = agent.call(&line, 2);
    let id = session_id(&answer[0]).expect("sessionId");
    assert!(id.starts_with("sess_") && id.len() == 37, "{id}");
    assert_eq!(
        answer,
        [format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"sessionId":"{id}",{MODES},{CONFIG}}}}}"#
        )]
    );
    // Right after the answer: the commands an editor offers when the user types `/`.
    agent.expect_commands(&id);
    // A second session gets another id.
    let other = agent.new_session(3);
    assert_ne!(other, id);
}

#[test]
fn a_cwd_that_does_not_exist_or_is_not_a_directory_is_refused() {
    let mut agent = Agent::start("cwd", &[]);
    agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        1,
    );
    let missing = agent.cwd.join("no-such-dir");
    let answer = agent.call(
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#,
            s(&missing)
        ),
        2,
    );
    assert_eq!(
        answer,
        [format!(
            r#"{{"jsonrpc":"2.0","id":2,"error":{{"code":-32602,"message":"Invalid params: session/new.cwd does not exist: '{}'"}}}}"#,
            s(&missing)
        )]
    );
    let file = agent.cwd.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let answer = agent.call(
        &format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#,
            s(&file)
        ),
        3,
    );
    assert_eq!(
        answer,
        [format!(
            r#"{{"jsonrpc":"2.0","id":3,"error":{{"code":-32602,"message":"Invalid params: session/new.cwd is not a directory: '{}'"}}}}"#,
            s(&file)
        )]
    );
    // The session that was refused does not exist.
    let answer = agent.prompt(4, "sess_nope", "hi");
    assert_eq!(
        answer,
        [
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"unknown sessionId: sess_nope"}}"#
        ]
    );
}

/// R-PROC-1: stdout carries protocol bytes only.
#[test]
fn logs_go_to_stderr_and_the_first_session_cwd_never_to_stdout() {
    let mut agent = Agent::start("logs", &["--log-level", "info"]);
    let session = agent.handshake();
    let reply = agent.prompt(3, &session, "/echo hi");
    assert_eq!(reply.len(), 4, "title, message, usage, answer: {reply:?}");
    let log_path = agent.cwd.join("acp-cli.log");
    let (rest, status, stderr) = agent.finish();
    assert!(status.success());
    assert!(rest.is_empty(), "nothing but answers on stdout: {rest:?}");
    assert!(stderr.contains("agent started"), "{stderr}");
    assert!(
        stderr.contains(&format!("session opened session=\"{session}\"")),
        "{stderr}"
    );
    let log = std::fs::read_to_string(&log_path).expect("acp-cli.log in the session cwd");
    assert!(
        log.contains(&format!("session opened session=\"{session}\"")),
        "{log}"
    );
    assert!(log.contains("turn ended"), "{log}");
    // Prompt text is not logged.
    assert!(!stderr.contains("/echo hi") && !log.contains("/echo hi"));
}

#[test]
fn mcp_server_secrets_are_not_logged() {
    let mut agent = Agent::start("secrets", &["--log-level", "trace"]);
    agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        1,
    );
    let cwd = agent.cwd.clone();
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}","mcpServers":[{{"name":"gh","command":"gh-mcp","args":[],"env":[{{"name":"GITHUB_TOKEN","value":"s3cr3t-t0ken"}}]}}]}}}}"#,
        s(&cwd)
    );
    let answer = agent.call(&line, 2);
    assert!(session_id(&answer[0]).is_some(), "{answer:?}");
    let log_path = agent.cwd.join("acp-cli.log");
    let (_, status, stderr) = agent.finish();
    assert!(status.success());
    let log = std::fs::read_to_string(log_path).unwrap_or_default();
    assert!(!stderr.contains("s3cr3t-t0ken"), "{stderr}");
    assert!(!log.contains("s3cr3t-t0ken"), "{log}");
}

#[test]
fn the_log_level_comes_from_rust_log_unless_the_flag_says_otherwise() {
    let mut quiet = Agent::start_with_log_env("log-env-warn", &[], Some("warn"));
    quiet.handshake();
    let (_, status, stderr) = quiet.finish();
    assert!(status.success());
    assert!(!stderr.contains("session opened"), "{stderr}");

    let mut loud =
        Agent::start_with_log_env("log-env-flag", &["--log-level", "info"], Some("warn"));
    loud.handshake();
    let (_, status, stderr) = loud.finish();
    assert!(status.success());
    assert!(stderr.contains("session opened"), "{stderr}");
}
