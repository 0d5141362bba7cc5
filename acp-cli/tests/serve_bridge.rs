//! `acp-cli bridge --listen ADDR -- AGENT…`: a stdio agent on the network, one child per
//! connection, messages relayed byte for byte (R-NET-10).

mod serve_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serve_support::*;

/// What `acp-cli --acp --stdio` answers to `lines`, line by line (the reference the bridge's
/// frames must equal byte for byte).
fn direct(cwd: &std::path::Path, lines: &[&str], answers: usize) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_acp-cli"))
        .args(["--acp", "--stdio"])
        .current_dir(cwd)
        .env("HOME", cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    let out: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .take(answers)
        .map(Result::unwrap)
        .collect();
    drop(stdin);
    let _ = child.wait();
    out
}

/// R-NET-10: the bridge relays `acp-cli --acp --stdio` over a WebSocket: the frames are the
/// child's lines byte for byte, and a prompt turn with a permission request completes.
#[test]
fn bridge_relays_a_stdio_agent_byte_exact() {
    let cwd = scratch("bridge");
    let agent = env!("CARGO_BIN_EXE_acp-cli");
    let server = Server::command_in(
        cwd.clone(),
        &[
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--",
            agent,
            "--acp",
            "--stdio",
        ],
    );
    let mut ws = Ws::connect(server.addr, &[]).expect("upgrade");
    ws.send(INITIALIZE);
    let frame = match ws.socket.read().unwrap() {
        tungstenite::Message::Text(text) => text.as_str().to_owned(),
        other => panic!("a text frame, got {other:?}"),
    };
    assert_eq!(frame, direct(&cwd, &[INITIALIZE], 1)[0]);

    ws.send(&new_session(2, &cwd));
    let sid = ws.until_answer(2).last().unwrap()["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    ws.send(&prompt(3, &sid, "/tool execute Run tests"));
    let ask = ws.until_method("session/request_permission").pop().unwrap();
    ws.send(&choose(&ask["id"], "allow_once"));
    assert_eq!(
        ws.until_answer(3).last().unwrap()["result"]["stopReason"],
        "end_turn"
    );
}

/// R-NET-10: the child's exit ends the connection.
#[test]
fn bridge_child_exit_ends_the_connection() {
    let cwd = scratch("bridge-exit");
    let server = Server::command_in(cwd, &["bridge", "--listen", "127.0.0.1:0", "--", "true"]);
    let mut ws = Ws::connect(server.addr, &[]).expect("upgrade");
    loop {
        match ws.socket.read() {
            Ok(tungstenite::Message::Close(_)) => continue,
            Ok(other) => panic!("nothing but the close, got {other:?}"),
            Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => break,
            Err(tungstenite::Error::Protocol(_) | tungstenite::Error::Io(_)) => break,
            Err(other) => panic!("{other:?}"),
        }
    }
}

/// R-NET-10: `bridge` needs --listen and an agent.
#[test]
fn bridge_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-cli"))
        .args(["bridge", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "acp-cli bridge: nothing to do; give --listen ADDR -- AGENT [ARGS...] or --connect URL\n"
    );
}
