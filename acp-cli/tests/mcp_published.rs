//! Our agent against published MCP servers, installed by `tests/interop/setup.sh` from the
//! registries (tests/interop/mcp): the reference "everything" and "filesystem" servers from
//! npm and a server written with the official Python SDK (`tests/interop/mcp/server.py`).
//! Each is a session's server; `/mcp` calls one of its tools and the result shows in the
//! tool call. "everything" and the Python server also run in streamable HTTP mode on
//! loopback, for our HTTP transport (R-MCP-6, R-MCP-10).
//!
//! Without the setup these tests say so and pass locally; under `CI=true` they fail.

mod agent_support;

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use agent_support::*;

/// What setup.sh installs, or `None` (with the reason printed) when it was not run here.
struct Installed {
    everything: String,
    filesystem: String,
    python: String,
    python_server: String,
}

fn installed() -> Option<Installed> {
    let mcp = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/interop");
    let path = |p: &str| mcp.join(p).to_string_lossy().into_owned();
    let found = Installed {
        everything: path("mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        filesystem: path("mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
        python: path(".venv/bin/python"),
        python_server: path("mcp/server.py"),
    };
    let missing: Vec<&String> = [&found.everything, &found.filesystem, &found.python]
        .into_iter()
        .filter(|p| !std::path::Path::new(p).exists())
        .collect();
    let has_sdk = missing.is_empty()
        && Command::new(&found.python)
            .args(["-c", "import mcp.server.mcpserver"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if missing.is_empty() && has_sdk {
        return Some(found);
    }
    let why = if missing.is_empty() {
        "the Python MCP SDK is not in tests/interop/.venv".to_owned()
    } else {
        format!("{missing:?} missing")
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the published MCP servers are not installed ({why}): CI runs `bash tests/interop/setup.sh` first"
    );
    eprintln!(
        "skipped: the published MCP servers are not installed ({why}); run `bash tests/interop/setup.sh`"
    );
    None
}

/// An agent with one session whose MCP servers are `servers` (JSON entries).
fn session_with(name: &str, servers: &str) -> (Agent, String) {
    let mut agent = Agent::start(name, &[]);
    agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        1,
    );
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}","mcpServers":[{servers}]}}}}"#,
        s(&agent.cwd.clone())
    );
    let answer = agent.call(&line, 2);
    let session = session_id(answer.last().unwrap()).expect("a session");
    agent.expect_commands(&session);
    (agent, session)
}

fn stdio_entry(name: &str, command: &str, args: &[&str]) -> String {
    let args: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
    format!(
        r#"{{"name":"{name}","command":"{command}","args":[{}],"env":[]}}"#,
        args.join(",")
    )
}

/// `/mcp SERVER TOOL JSON`: the tool call's last update, after checking it completed and
/// nothing was reported as not starting.
fn call(agent: &mut Agent, id: u64, session: &str, command: &str) -> String {
    let lines = agent.prompt(id, session, command);
    assert!(
        !lines.iter().any(|l| l.contains("did not start")),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), &stop(id, "end_turn"), "{lines:?}");
    let last = lines
        .iter()
        .rev()
        .find(|l| l.contains(r#""sessionUpdate":"tool_call_update""#))
        .unwrap_or_else(|| panic!("no tool call: {lines:?}"))
        .clone();
    assert!(last.contains(r#""status":"completed""#), "{lines:?}");
    last
}

fn text_block(text: &str) -> String {
    format!(
        r#"{{"type":"content","content":{{"type":"text","text":{}}}}}"#,
        json_string(text)
    )
}

#[test]
fn the_everything_server_echoes_over_stdio() {
    let Some(servers) = installed() else { return };
    let entry = stdio_entry("everything", "node", &[&servers.everything, "stdio"]);
    let (mut agent, session) = session_with("mcp-everything", &entry);
    let result = call(
        &mut agent,
        3,
        &session,
        r#"/mcp everything echo {"message":"hello from acp-cli"}"#,
    );
    assert!(
        result.contains(&text_block("Echo: hello from acp-cli")),
        "{result}"
    );
    let (_, status, _) = agent.finish();
    assert!(status.success());
}

#[test]
fn the_filesystem_server_lists_and_reads_the_session_cwd() {
    let Some(servers) = installed() else { return };
    // The agent's own scratch dir is its cwd; the server is allowed that directory.
    let mut agent = Agent::start("mcp-filesystem-agent", &[]);
    std::fs::write(agent.cwd.join("note.txt"), "a note for the model\n").unwrap();
    std::fs::create_dir(agent.cwd.join("sub")).unwrap();
    agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        1,
    );
    let dir = s(&agent.cwd.clone()).to_owned();
    let entry = stdio_entry("files", "node", &[&servers.filesystem, &dir]);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{dir}","mcpServers":[{entry}]}}}}"#
    );
    let answer = agent.call(&line, 2);
    let session = session_id(answer.last().unwrap()).unwrap();
    agent.expect_commands(&session);

    let listing = call(
        &mut agent,
        3,
        &session,
        &format!(r#"/mcp files list_directory {{"path":"{dir}"}}"#),
    );
    assert!(listing.contains("[FILE] note.txt"), "{listing}");
    assert!(listing.contains("[DIR] sub"), "{listing}");
    let read = call(
        &mut agent,
        4,
        &session,
        &format!(r#"/mcp files read_text_file {{"path":"{dir}/note.txt"}}"#),
    );
    assert!(
        read.contains(&text_block("a note for the model\n")),
        "{read}"
    );
}

#[test]
fn a_python_sdk_server_answers_over_stdio() {
    let Some(servers) = installed() else { return };
    let entry = stdio_entry("py", &servers.python, &[&servers.python_server]);
    let (mut agent, session) = session_with("mcp-python", &entry);
    let result = call(
        &mut agent,
        3,
        &session,
        r#"/mcp py count_words {"text":"one two three"}"#,
    );
    assert!(result.contains(&text_block("3 words")), "{result}");
}

/// A server process on a free loopback port, ended when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` with the port, and waits (bounded) until it accepts connections.
fn serve_http(mut command: Command, port: u16) -> Running {
    let mut running = Running(
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts"),
    );
    for _ in 0..600 {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return running;
        }
        // A server that exited (the port taken since `free_port` looked) fails at once, and
        // is never mistaken for another test's server on that port.
        if let Ok(Some(status)) = running.0.try_wait() {
            panic!("the MCP server exited ({status}) before listening on port {port}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the MCP server never listened on port {port}");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn http_entry(name: &str, url: &str) -> String {
    format!(
        r#"{{"type":"http","name":"{name}","url":"{url}","headers":[{{"name":"X-Test","value":"1"}}]}}"#
    )
}

#[test]
fn the_everything_server_echoes_over_streamable_http() {
    let Some(servers) = installed() else { return };
    let port = free_port();
    let mut command = Command::new("node");
    command
        .args([&servers.everything, "streamableHttp"])
        .env("PORT", port.to_string());
    let _server = serve_http(command, port);
    let entry = http_entry("everything", &format!("http://127.0.0.1:{port}/mcp"));
    let (mut agent, session) = session_with("mcp-everything-http", &entry);
    let result = call(
        &mut agent,
        3,
        &session,
        r#"/mcp everything echo {"message":"over http"}"#,
    );
    assert!(result.contains(&text_block("Echo: over http")), "{result}");
    let (_, status, _) = agent.finish();
    assert!(status.success());
}

#[test]
fn a_python_sdk_server_answers_over_streamable_http() {
    let Some(servers) = installed() else { return };
    let port = free_port();
    let mut command = Command::new(&servers.python);
    command.args([&servers.python_server, "http", &port.to_string()]);
    let _server = serve_http(command, port);
    let entry = http_entry("py", &format!("http://127.0.0.1:{port}/mcp"));
    let (mut agent, session) = session_with("mcp-python-http", &entry);
    let result = call(
        &mut agent,
        3,
        &session,
        r#"/mcp py count_words {"text":"four words over http"}"#,
    );
    assert!(result.contains(&text_block("4 words")), "{result}");
}
