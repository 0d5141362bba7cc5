//! MCP servers from `session/new` through the whole agent (demo backend, `/mcp`): the
//! scripted stdio server of tests/fixtures/mcp_scripted.py, a server that cannot start, a
//! server that crashes mid-call, and secrets that must not leak (R-MCP-*).

mod agent_support;
mod llm_support;
mod mcp_http_support;

use agent_support::*;
use llm_support::{MockModel, Reply, done, finish, text, tool_call};

const SECRET: &str = "mcp-secret-5f2b9c";

fn script() -> String {
    format!(
        "{}/tests/fixtures/mcp_scripted.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `session/new` with the scripted server (its env holding the secret) and a broken one.
fn new_session_with_servers(agent: &mut Agent, id: u64) -> (String, Vec<String>) {
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"{}","mcpServers":[{{"name":"scripted","command":"python3","args":["{}"],"env":[{{"name":"MCP_TEST_SECRET","value":"{SECRET}"}}]}},{{"name":"broken","command":"/nonexistent/mcp-server","args":[],"env":[{{"name":"OTHER_SECRET","value":"{SECRET}"}}]}}]}}}}"#,
        s(&agent.cwd.clone()),
        script()
    );
    let answer = agent.call(&line, id);
    let session = session_id(answer.last().unwrap()).unwrap();
    agent.expect_commands(&session);
    (session, answer)
}

fn tool_updates<'a>(lines: &'a [String], id: &str) -> Vec<&'a String> {
    let needle = format!("\"toolCallId\":\"{id}\"");
    lines.iter().filter(|l| l.contains(&needle)).collect()
}

/// R-DEMO-5, R-MCP-6, R-MCP-7: `/mcp` calls a session's tool (read-only without asking,
/// others with permission); a crash fails only that call.
#[test]
fn mcp_tools_are_called_through_slash_mcp_and_a_crash_fails_only_that_call() {
    let mut agent = Agent::start_with_log_env("mcp-demo", &[], Some("trace"));
    agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        1,
    );
    let (session, _) = new_session_with_servers(&mut agent, 2);

    // The prompt waits for the servers; the broken one is reported first, as a message
    // (this client does not show notices).
    let lines = agent.prompt(3, &session, r#"/mcp scripted echo {"text":"hi there"}"#);
    assert_eq!(
        lines[0],
        message(
            &session,
            "MCP server 'broken' did not start: cannot start '/nonexistent/mcp-server': No such file or directory (os error 2)"
        )
    );
    let echo = tool_updates(&lines, "tool-1");
    assert_eq!(echo.len(), 3, "{lines:?}");
    assert!(
        echo[0].contains(r#""sessionUpdate":"tool_call""#),
        "{}",
        echo[0]
    );
    assert!(
        echo[0].contains(r#""title":"MCP scripted: echo""#),
        "{}",
        echo[0]
    );
    // Annotated read-only: kind read, no permission asked.
    assert!(echo[0].contains(r#""kind":"read""#), "{}", echo[0]);
    assert!(echo[1].contains(r#""status":"in_progress""#), "{}", echo[1]);
    assert!(echo[2].contains(r#""status":"completed""#), "{}", echo[2]);
    assert!(
        echo[2].contains(
            r#""content":[{"type":"content","content":{"type":"text","text":"hi there"}}]"#
        ),
        "{}",
        echo[2]
    );
    assert_eq!(lines.last().unwrap(), &stop(3, "end_turn"));

    // Not read-only: kind other, permission first; the image comes back as an image block.
    agent.send(&Agent::prompt_line(4, &session, "/mcp scripted picture"));
    let ask = permission_request(&mut agent);
    assert!(ask.contains(r#""kind":"other""#), "{ask}");
    assert!(ask.contains(r#""title":"MCP scripted: picture""#), "{ask}");
    agent.send(&choose(&request_id(&ask), "allow_once"));
    let lines = agent.until_response(4);
    let picture = tool_updates(&lines, "tool-2");
    assert!(
        picture.last().unwrap().contains(
            r#""content":[{"type":"content","content":{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}}]"#
        ),
        "{lines:?}"
    );

    // An error result fails the tool call with its content.
    agent.send(&Agent::prompt_line(5, &session, "/mcp scripted oops"));
    let ask = permission_request(&mut agent);
    agent.send(&choose(&request_id(&ask), "allow_once"));
    let lines = agent.until_response(5);
    let oops = tool_updates(&lines, "tool-3");
    assert!(
        oops.last().unwrap().contains(r#""status":"failed""#),
        "{lines:?}"
    );
    assert!(oops.last().unwrap().contains("it went wrong"), "{lines:?}");

    // A tool or server the session does not have is answered with a message.
    let lines = agent.prompt(6, &session, "/mcp nobody echo");
    assert!(
        lines[0].contains("/mcp: no tool 'echo' on an MCP server 'nobody' of this session; its tools: scripted echo, scripted picture"),
        "{lines:?}"
    );

    // The server crashes mid-call: that call fails, the session goes on.
    agent.send(&Agent::prompt_line(7, &session, "/mcp scripted crash"));
    let ask = permission_request(&mut agent);
    agent.send(&choose(&request_id(&ask), "allow_once"));
    let lines = agent.until_response(7);
    let crash = tool_updates(&lines, "tool-4");
    assert!(
        crash.last().unwrap().contains(r#""status":"failed""#),
        "{lines:?}"
    );
    assert!(
        crash
            .last()
            .unwrap()
            .contains("Error: MCP server 'scripted': the server exited (its output closed)"),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), &stop(7, "end_turn"));
    let lines = agent.prompt(8, &session, "/echo still here");
    assert_eq!(lines[0], message(&session, "still here"));

    let cwd = agent.cwd.clone();
    let (rest, status, stderr) = agent.finish();
    assert!(status.success(), "{rest:?}");
    // Secrets from `env` are in no log and no session file (R-MCP-9).
    assert!(!stderr.contains(SECRET), "the secret is in stderr");
    assert!(stderr.contains("MCP server started"), "{stderr}");
    for entry in walk(&cwd) {
        let text = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains(SECRET),
            "the secret is in {}",
            entry.display()
        );
    }
    assert!(cwd.join("acp-cli.log").exists());
}

/// R-MCP-3: a server that did not start is a notice (or a message), not a failed session.
#[test]
fn a_client_that_shows_notices_gets_a_notice_for_a_server_that_did_not_start() {
    let mut agent = Agent::start("mcp-notice", &[]);
    agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"session":{"notices":{}}}}}"#,
        1,
    );
    let (session, _) = new_session_with_servers(&mut agent, 2);
    let lines = agent.prompt(3, &session, "/echo ok");
    assert_eq!(
        lines[0],
        update(
            &session,
            r#"{"sessionUpdate":"notice","severity":"warning","title":"MCP server 'broken' did not start: cannot start '/nonexistent/mcp-server': No such file or directory (os error 2)"}"#
        )
    );
}

/// R-MCP-8: the server's process group ends with the agent.
#[test]
fn the_servers_process_group_ends_with_the_agent() {
    let mut agent = Agent::start("mcp-exit", &[]);
    agent.handshake();
    let (session, _) = new_session_with_servers(&mut agent, 3);
    let lines = agent.prompt(4, &session, r#"/mcp scripted echo {"text":"x"}"#);
    assert_eq!(lines.last().unwrap(), &stop(4, "end_turn"));
    let pids = server_pids(agent.pid());
    assert!(!pids.is_empty(), "the scripted server runs");
    let _ = agent.finish();
    // The SIGKILL went to the group before the agent exited; on a loaded machine its
    // delivery may take a moment, so wait for it (bounded) rather than look once.
    let alive = |pid: u32| {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    };
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(30);
    for pid in pids {
        while alive(pid) {
            assert!(
                std::time::Instant::now() < give_up,
                "server {pid} outlived the agent"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Reads lines up to the agent's permission request and returns it.
fn permission_request(agent: &mut Agent) -> String {
    loop {
        let line = agent.recv();
        if line.contains("session/request_permission") {
            return line;
        }
    }
}

/// The pids of the scripted servers the agent `parent` started.
fn server_pids(parent: u32) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid …`: the fields after the command's closing parenthesis.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        if String::from_utf8_lossy(&cmdline).contains("mcp_scripted.py") && ppid == Some(parent) {
            pids.push(pid);
        }
    }
    pids
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The llm backend against the mock model: `session/new` without the broken server.
fn llm_agent(name: &str, mock: &MockModel, cancel_file: &str) -> (Agent, String) {
    let base = mock.base_url();
    let mut agent = Agent::start_with_env(
        name,
        &["--backend", "llm", "--model", "mock-model"],
        None,
        &[
            ("OPENAI_API_KEY", "sk-mcp-test"),
            ("OPENAI_BASE_URL", base.as_str()),
        ],
    );
    agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        1,
    );
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}","mcpServers":[{{"name":"scripted","command":"python3","args":["{}"],"env":[{{"name":"MCP_CANCEL_FILE","value":"{cancel_file}"}}]}}]}}}}"#,
        s(&agent.cwd.clone()),
        script()
    );
    let answer = agent.call(&line, 2);
    let session = session_id(answer.last().unwrap()).unwrap();
    (agent, session)
}

/// A streamed answer calling one tool.
fn model_calls(id: &str, name: &str, arguments: &str) -> Reply {
    Reply::sse(&[
        tool_call(0, Some(id), Some(name), arguments),
        finish("tool_calls"),
        done(),
    ])
}

#[test]
fn the_model_is_offered_mcp_tools_and_their_results_come_back_to_it() {
    let mock = MockModel::start(vec![
        model_calls("c1", "mcp__scripted__echo", r#"{"text":"from the model"}"#),
        Reply::sse(&[text("Done."), finish("stop"), done()]),
    ]);
    let (mut agent, session) = llm_agent("mcp-llm", &mock, "/dev/null");
    let lines = agent.prompt(3, &session, "echo something");
    let echo = tool_updates(&lines, "tool-1");
    assert!(
        echo[0].contains(r#""title":"MCP scripted: echo""#),
        "{lines:?}"
    );
    assert!(echo[0].contains(r#""kind":"read""#), "{lines:?}");
    assert!(
        echo.last().unwrap().contains(r#""status":"completed""#)
            && echo
                .last()
                .unwrap()
                .contains(r#"{"type":"text","text":"from the model"}"#),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), &stop(3, "end_turn"));
    let requests = mock.requests();
    let tools = requests[0].json()["tools"].clone();
    let echo_spec = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__scripted__echo")
        .cloned()
        .expect("mcp__scripted__echo offered");
    assert_eq!(echo_spec["function"]["description"], "Echo the text back");
    assert_eq!(
        echo_spec["function"]["parameters"]["required"],
        serde_json::json!(["text"])
    );
    let results = requests[1].tool_messages();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_call_id"], "c1");
    assert_eq!(results[0]["content"], "from the model");
}

#[test]
fn cancelling_a_turn_cancels_the_mcp_call_on_the_server() {
    let dir = scratch("mcp-llm-cancel-file");
    let file = dir.join("cancelled");
    let mock = MockModel::start(vec![model_calls("c1", "mcp__scripted__slow", "{}")]);
    let (mut agent, session) = llm_agent("mcp-llm-cancel", &mock, s(&file));
    agent.send(&Agent::prompt_line(3, &session, "be slow"));
    let ask = permission_request(&mut agent);
    assert!(ask.contains(r#""kind":"other""#), "{ask}");
    agent.send(&choose(&request_id(&ask), "allow_once"));
    // Cancel once the server has the call.
    wait_until(|| std::fs::read_to_string(&file).is_ok_and(|t| t.contains("waiting")));
    agent.send(&format!(
        r#"{{"jsonrpc":"2.0","method":"session/cancel","params":{{"sessionId":"{session}"}}}}"#
    ));
    let lines = agent.until_response(3);
    assert_eq!(lines.last().unwrap(), &stop(3, "cancelled"));
    // initialize is 1, the two tools/list pages 2 and 3, the call 4.
    wait_until(|| std::fs::read_to_string(&file).is_ok_and(|t| t.contains("cancelled")));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "waiting 4\ncancelled 4\n"
    );
}

#[test]
fn a_changed_tool_list_is_read_again_before_the_next_model_request() {
    let mock = MockModel::start(vec![
        model_calls("c1", "mcp__scripted__change", "{}"),
        Reply::sse(&[text("Done."), finish("stop"), done()]),
    ]);
    let (mut agent, session) = llm_agent("mcp-llm-changed", &mock, "/dev/null");
    agent.send(&Agent::prompt_line(3, &session, "change your tools"));
    let ask = permission_request(&mut agent);
    agent.send(&choose(&request_id(&ask), "allow_once"));
    let lines = agent.until_response(3);
    assert_eq!(lines.last().unwrap(), &stop(3, "end_turn"), "{lines:?}");
    let offered = |request: &llm_support::Recorded| -> Vec<String> {
        request.json()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .filter(|name| name.starts_with("mcp__"))
            .map(str::to_owned)
            .collect()
    };
    let requests = mock.requests();
    assert!(!offered(&requests[0]).contains(&"mcp__scripted__added".to_owned()));
    // The server said list_changed before answering: the next request has the new tool
    // (R-MCP-5).
    assert!(
        offered(&requests[1]).contains(&"mcp__scripted__added".to_owned()),
        "{:?}",
        offered(&requests[1])
    );
}

#[test]
fn a_call_past_the_timeout_fails_with_why_and_is_cancelled_on_the_server() {
    let dir = scratch("mcp-timeout-file");
    let file = dir.join("cancelled");
    let mut agent = Agent::start_with_env(
        "mcp-timeout",
        &[],
        None,
        &[("ACP_CLI_MCP_CALL_TIMEOUT_MS", "300")],
    );
    agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        1,
    );
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}","mcpServers":[{{"name":"scripted","command":"python3","args":["{}"],"env":[{{"name":"MCP_CANCEL_FILE","value":"{}"}}]}}]}}}}"#,
        s(&agent.cwd.clone()),
        script(),
        s(&file)
    );
    let answer = agent.call(&line, 2);
    let session = session_id(answer.last().unwrap()).unwrap();
    agent.expect_commands(&session);
    agent.send(&Agent::prompt_line(3, &session, "/mcp scripted slow"));
    let ask = permission_request(&mut agent);
    agent.send(&choose(&request_id(&ask), "allow_once"));
    let lines = agent.until_response(3);
    let slow = tool_updates(&lines, "tool-1");
    let last = slow.last().unwrap();
    assert!(last.contains(r#""status":"failed""#), "{lines:?}");
    assert!(
        last.contains(
            "Error: MCP server 'scripted': the call of 'slow' got no answer within 300 ms (R-MCP-11)"
        ),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), &stop(3, "end_turn"));
    // The dropped call was cancelled on the server (R-MCP-7).
    wait_until(|| std::fs::read_to_string(&file).is_ok_and(|t| t.contains("cancelled")));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "waiting 4\ncancelled 4\n"
    );
    // The session goes on.
    let lines = agent.prompt(4, &session, "/echo still here");
    assert_eq!(lines[0], message(&session, "still here"));
}

#[test]
fn an_http_server_is_called_through_slash_mcp_and_its_headers_are_never_written_down() {
    let server = mcp_http_support::McpHttpServer::start();
    let mut agent = Agent::start_with_log_env("mcp-http", &[], Some("trace"));
    let answer = agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        1,
    );
    assert!(
        answer[0].contains(r#""mcpCapabilities":{"http":true,"sse":false}"#),
        "{answer:?}"
    );
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}","mcpServers":[{{"type":"http","name":"web","url":"{}","headers":[{{"name":"Authorization","value":"Bearer {SECRET}"}}]}}]}}}}"#,
        s(&agent.cwd.clone()),
        server.url()
    );
    let answer = agent.call(&line, 2);
    let session = session_id(answer.last().unwrap()).unwrap();
    agent.expect_commands(&session);

    let lines = agent.prompt(3, &session, r#"/mcp web echo {"text":"over http"}"#);
    let echo = tool_updates(&lines, "tool-1");
    assert!(echo[0].contains(r#""title":"MCP web: echo""#), "{lines:?}");
    assert!(echo[0].contains(r#""kind":"read""#), "{lines:?}");
    let last = echo.last().unwrap();
    assert!(
        last.contains(r#""status":"completed""#)
            && last.contains(
                r#""content":[{"type":"content","content":{"type":"text","text":"over http"}}]"#
            ),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), &stop(3, "end_turn"));
    let bearer = format!("Bearer {SECRET}");
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.header("authorization") == Some(bearer.as_str())),
        "{:?}",
        server.requests()
    );

    let cwd = agent.cwd.clone();
    let (rest, status, stderr) = agent.finish();
    assert!(status.success(), "{rest:?}");
    // Header values are in no log and no session file (R-MCP-9).
    assert!(stderr.contains("MCP server started"), "{stderr}");
    assert!(!stderr.contains(SECRET), "the secret is in stderr");
    for entry in walk(&cwd) {
        let text = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains(SECRET),
            "the secret is in {}",
            entry.display()
        );
    }
    assert!(cwd.join("acp-cli.log").exists());
}

/// Waits (bounded) until `ready` holds; what follows asserts, not the time it took.
fn wait_until(mut ready: impl FnMut() -> bool) {
    // Up to a minute on a loaded machine; a pass returns at once.
    for _ in 0..6000 {
        if ready() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("condition never held");
}
