//! The MCP client against a tiny scripted stdio server (tests/fixtures/mcp_scripted.py):
//! handshake, paged tools, every content kind, errors, cancel, crash, list_changed (R-MCP-*).

use std::time::Duration;

use acp_cli::mcp::{McpClient, McpError};
use acp_core::schema::{EnvVariable, McpServer, McpServerStdio};
use serde_json::json;

fn scripted(env: &[(&str, &str)]) -> McpServerStdio {
    let mut server = McpServerStdio::new("scripted", "python3");
    server.args = vec![format!(
        "{}/tests/fixtures/mcp_scripted.py",
        env!("CARGO_MANIFEST_DIR")
    )];
    server.env = env
        .iter()
        .map(|(name, value)| EnvVariable::new(*name, *value))
        .collect();
    server
}

fn start(env: &[(&str, &str)]) -> McpClient {
    smol::block_on(McpClient::stdio(&scripted(env), "/")).expect("the scripted server starts")
}

/// Waits (bounded) until `ready` holds; the assertion is on what follows, not on time.
fn wait_for(mut ready: impl FnMut() -> bool) {
    // Up to a minute: python starting on a loaded machine is slow; a pass returns at once.
    for _ in 0..6000 {
        if ready() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("condition never held");
}

/// R-MCP-2, R-MCP-5: the handshake picks our newest version, and every page of tools is read.
#[test]
fn handshake_agrees_on_our_newest_version_and_lists_every_page_of_tools() {
    let client = start(&[]);
    assert_eq!(client.version(), "2025-11-25");
    let tools = smol::block_on(client.list_tools()).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "echo", "picture", "doc", "oops", "env", "slow", "crash", "change"
        ]
    );
    assert!(tools[0].is_read_only());
    assert!(!tools[1].is_read_only());
    assert_eq!(tools[0].input_schema["required"], json!(["text"]));
}

#[test]
fn an_older_version_the_server_picks_is_accepted() {
    let client = start(&[("MCP_VERSION", "2024-11-05")]);
    assert_eq!(client.version(), "2024-11-05");
}

/// R-MCP-2: a version we do not speak fails the start, named.
#[test]
fn a_version_we_do_not_speak_fails_the_start_with_its_name() {
    let error = smol::block_on(McpClient::stdio(
        &scripted(&[("MCP_VERSION", "1999-01-01")]),
        "/",
    ))
    .unwrap_err();
    assert_eq!(
        error,
        "the server speaks MCP version '1999-01-01'; acp-cli speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"
    );
}

/// R-MCP-4: the server's `ping` is answered `{}`.
#[test]
fn the_servers_ping_is_answered() {
    let client = start(&[]);
    // A request after the handshake: the server has read our pong by then.
    smol::block_on(client.ping()).unwrap();
    wait_for(|| client.stderr_tail().contains("answer"));
    assert!(
        client
            .stderr_tail()
            .contains(r#"answer {"jsonrpc": "2.0", "id": "srv-1", "result": {}}"#),
        "{}",
        client.stderr_tail()
    );
}

/// R-MCP-6: text, image, resource and `isError` results.
#[test]
fn results_carry_text_image_resource_and_is_error() {
    let client = start(&[]);
    let echo = smol::block_on(client.call_tool("echo", json!({"text": "hi"}))).unwrap();
    assert_eq!(echo.model_text(), "hi");
    assert!(!echo.is_error);
    let picture = smol::block_on(client.call_tool("picture", json!({}))).unwrap();
    assert_eq!(
        picture.model_text(),
        "[image image/png, 12 bytes of base64]"
    );
    let doc = smol::block_on(client.call_tool("doc", json!({}))).unwrap();
    assert_eq!(doc.model_text(), "[resource file:///doc.txt]\nthe doc");
    let oops = smol::block_on(client.call_tool("oops", json!({}))).unwrap();
    assert!(oops.is_error);
    assert_eq!(oops.model_text(), "it went wrong");
}

#[test]
fn an_unknown_tool_is_the_servers_error() {
    let client = start(&[]);
    let error = smol::block_on(client.call_tool("nope", json!({}))).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the server answered -32602 Unknown tool: nope"
    );
}

#[test]
fn env_reaches_the_server_as_given() {
    let client = start(&[("MCP_TEST_SECRET", "s3cr3t-value")]);
    let result =
        smol::block_on(client.call_tool("env", json!({"name": "MCP_TEST_SECRET"}))).unwrap();
    assert_eq!(result.model_text(), "s3cr3t-value");
}

/// R-MCP-7: a dropped call is `notifications/cancelled` with its request id.
#[test]
fn dropping_a_call_sends_notifications_cancelled_with_its_id() {
    let dir = std::env::temp_dir().join(format!("mcp-cancel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cancelled");
    let _ = std::fs::remove_file(&file);
    let client = start(&[("MCP_CANCEL_FILE", file.to_str().unwrap())]);
    smol::block_on(async {
        let call = client.call_tool("slow", json!({}));
        let waited = async {
            // The call is pending on the server once it says so (bounded: a server that never
            // says so fails the assertion below instead of hanging the test).
            for _ in 0..6000 {
                if client.stderr_tail().contains("slow call") {
                    return Err(McpError::Closed("stopped waiting".into()));
                }
                smol::Timer::after(Duration::from_millis(10)).await;
            }
            Err(McpError::Closed("the server never said 'slow call'".into()))
        };
        let outcome = smol::future::or(call, waited).await;
        assert_eq!(outcome, Err(McpError::Closed("stopped waiting".into())));
    });
    wait_for(|| std::fs::read_to_string(&file).is_ok_and(|t| t.contains("cancelled")));
    // initialize is 1, the slow call 2.
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "waiting 2\ncancelled 2\n"
    );
    // The server still serves.
    let echo = smol::block_on(client.call_tool("echo", json!({"text": "after"}))).unwrap();
    assert_eq!(echo.model_text(), "after");
}

/// R-MCP-7: a crash mid-call fails that call.
#[test]
fn a_server_that_crashes_mid_call_fails_that_call_and_the_next() {
    let client = start(&[]);
    let error = smol::block_on(client.call_tool("crash", json!({}))).unwrap_err();
    assert_eq!(
        error,
        McpError::Closed("the server exited (its output closed)".into())
    );
    wait_for(|| client.stderr_tail().contains("crashing"));
    let again = smol::block_on(client.call_tool("echo", json!({"text": "x"}))).unwrap_err();
    assert_eq!(
        again,
        McpError::Closed("the server exited (its output closed)".into())
    );
}

#[test]
fn list_changed_is_signalled() {
    let client = start(&[]);
    let changes = client.tools_changed();
    assert!(changes.try_recv().is_err());
    smol::block_on(client.call_tool("change", json!({}))).unwrap();
    // The notification comes before the answer on the same pipe.
    assert!(changes.try_recv().is_ok());
}

#[test]
fn a_missing_command_fails_the_start() {
    let server = McpServer::Stdio(McpServerStdio::new("gone", "/nonexistent/mcp-server"));
    let error = smol::block_on(McpClient::start(&server, "/", Duration::from_secs(5))).unwrap_err();
    assert_eq!(
        error,
        "cannot start '/nonexistent/mcp-server': No such file or directory (os error 2)"
    );
}

/// R-MCP-3: the start is bounded by its timeout.
#[test]
fn a_server_that_never_answers_initialize_times_out() {
    let mut stdio = McpServerStdio::new("mute", "sleep");
    stdio.args = vec!["30".into()];
    let server = McpServer::Stdio(stdio);
    let error =
        smol::block_on(McpClient::start(&server, "/", Duration::from_millis(200))).unwrap_err();
    assert_eq!(error, "it did not finish starting within 200 ms");
}
