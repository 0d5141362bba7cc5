//! The MCP client's streamable HTTP transport against a loopback server
//! (tests/mcp_http_support): JSON and event-stream answers, the session id and protocol
//! version headers, the entry's headers, the server's ping, failures per call, and the
//! closing `DELETE` (R-MCP-10).

mod mcp_http_support;

use acp_cli::mcp::{McpClient, McpError};
use acp_core::schema::{McpServer, McpServerHttp};
use mcp_http_support::{McpHttpServer, SESSION};
use serde_json::json;

fn entry(url: &str, headers: &[(&str, &str)]) -> McpServerHttp {
    let headers: Vec<_> = headers
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    let server = json!({"type": "http", "name": "web", "url": url, "headers": headers});
    match serde_json::from_value(server).unwrap() {
        McpServer::Http(http) => http,
        other => panic!("not http: {other:?}"),
    }
}

fn connect(server: &McpHttpServer) -> McpClient {
    smol::block_on(McpClient::http(&entry(
        &server.url(),
        &[("Authorization", "Bearer tok-1")],
    )))
    .expect("the loopback server initializes")
}

fn call_text(client: &McpClient, tool: &str) -> Result<String, McpError> {
    smol::block_on(client.call_tool(tool, json!({"text": "hi"}))).map(|r| r.model_text())
}

#[test]
fn the_handshake_gives_a_session_whose_id_and_version_go_on_every_later_request() {
    let server = McpHttpServer::start();
    let client = connect(&server);
    assert_eq!(client.version(), "2025-11-25");
    assert_eq!(call_text(&client, "echo").unwrap(), "hi");

    let requests = server.requests();
    let initialize = &requests[0];
    assert_eq!(initialize.method, "POST");
    assert_eq!(initialize.path, "/mcp");
    assert_eq!(initialize.rpc_method(), Some("initialize"));
    assert_eq!(initialize.header("mcp-session-id"), None);
    assert_eq!(
        initialize.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(initialize.header("content-type"), Some("application/json"));
    // The entry's headers go as given, on every request.
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer tok-1"))
    );
    for later in &requests[1..] {
        assert_eq!(later.header("mcp-session-id"), Some(SESSION), "{later:?}");
        assert_eq!(
            later.header("mcp-protocol-version"),
            Some("2025-11-25"),
            "{later:?}"
        );
    }
    assert_eq!(requests[1].rpc_method(), Some("notifications/initialized"));
}

#[test]
fn an_event_stream_answer_is_read_and_the_servers_ping_in_it_is_answered() {
    let server = McpHttpServer::start();
    let client = connect(&server);
    let tools = smol::block_on(client.list_tools()).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "stream"]);
    assert!(tools[0].is_read_only());
    // Our answer to the ping the stream carried is posted back.
    let pong = server.wait_for(|r| r.body.get("id") == Some(&json!("srv-ping")));
    assert_eq!(
        pong.body,
        json!({"jsonrpc": "2.0", "id": "srv-ping", "result": {}})
    );
    // An answer cut across chunks, after a comment and with CRLF lines.
    assert_eq!(call_text(&client, "stream").unwrap(), "streamed hi");
}

#[test]
fn a_call_whose_exchange_fails_fails_alone_with_why() {
    let server = McpHttpServer::start();
    let client = connect(&server);
    assert_eq!(
        call_text(&client, "lost"),
        Err(McpError::Closed(
            "the MCP server's response ended without an answer".into()
        ))
    );
    assert_eq!(
        call_text(&client, "boom"),
        Err(McpError::Closed(
            "the MCP server answered HTTP 500: boom".into()
        ))
    );
    assert_eq!(
        call_text(&client, "expire"),
        Err(McpError::Closed(
            "the MCP server ended the session (HTTP 404)".into()
        ))
    );
    // The connection is per request: the next call still works.
    assert_eq!(call_text(&client, "echo").unwrap(), "hi");
}

#[test]
fn dropping_the_client_deletes_its_session() {
    let server = McpHttpServer::start();
    let client = connect(&server);
    drop(client);
    // The DELETE runs on the executor; drive it until it arrived.
    let delete = smol::block_on(async {
        for _ in 0..1000 {
            if let Some(found) = server.requests().into_iter().find(|r| r.method == "DELETE") {
                return found;
            }
            smol::Timer::after(std::time::Duration::from_millis(10)).await;
        }
        panic!("no DELETE: {:?}", server.requests());
    });
    assert_eq!(delete.header("mcp-session-id"), Some(SESSION));
    assert_eq!(delete.header("authorization"), Some("Bearer tok-1"));
    assert_eq!(delete.path, "/mcp");
}

#[test]
fn a_server_that_is_not_there_fails_the_start_with_why() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let error = smol::block_on(McpClient::http(&entry(
        &format!("http://127.0.0.1:{port}/mcp"),
        &[],
    )))
    .unwrap_err();
    assert!(
        error.starts_with(&format!(
            "initialize failed: cannot reach the MCP server: 127.0.0.1:{port}: "
        )),
        "{error}"
    );
}

#[test]
fn a_header_with_a_line_break_is_refused_before_anything_is_sent() {
    let server = McpHttpServer::start();
    let error = smol::block_on(McpClient::http(&entry(
        &server.url(),
        &[("X-Token", "a\r\nX-Injected: 1")],
    )))
    .unwrap_err();
    assert_eq!(error, "header 'X-Token' has a line break in its value");
    assert!(server.requests().is_empty());
}
