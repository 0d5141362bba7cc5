//! `acp-cli --acp --listen`: the agent over WebSocket and Streamable HTTP on loopback, driven
//! by a real client speaking raw HTTP/1.1 and WebSocket (docs/network.md, R-NET-*).

mod serve_support;

use serde_json::Value;
use serve_support::*;

/// The method of every message in `events`, or `answer` for answers.
fn shapes(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e.get("method") {
            Some(m) => match e["params"]["update"]["sessionUpdate"].as_str() {
                Some(kind) => format!("{}:{kind}", m.as_str().unwrap()),
                None => m.as_str().unwrap().to_owned(),
            },
            None => "answer".to_owned(),
        })
        .collect()
}

/// R-NET-2: a prompt turn with a permission request over one WebSocket: text frames both
/// ways, the 101 names the connection.
#[test]
fn websocket_prompt_turn_with_permission() {
    let server = Server::start("ws-turn", &[]);
    let mut ws = Ws::connect(server.addr, &[]).expect("upgrade");
    assert_eq!(ws.connection_id.len(), 32);
    let sid = ws.handshake(&server.cwd);
    ws.send(&prompt(3, &sid, "/tool execute Run tests"));
    let before = ws.until_method("session/request_permission");
    let ask = before.last().unwrap();
    assert_eq!(ask["params"]["sessionId"], sid.as_str());
    assert_eq!(ask["params"]["toolCall"]["title"], "Run tests");
    ws.send(&choose(&ask["id"], "allow_once"));
    let after = ws.until_answer(3);
    assert_eq!(after.last().unwrap()["result"]["stopReason"], "end_turn");
    assert!(
        after
            .iter()
            .any(|e| e["params"]["update"]["status"] == "completed"),
        "{after:?}"
    );
}

/// R-NET-2: a binary frame is ignored and a malformed text frame is an error for that
/// message only (R-MSG-1): the connection goes on.
#[test]
fn websocket_binary_ignored_malformed_answered() {
    let server = Server::start("ws-malformed", &[]);
    let mut ws = Ws::connect(server.addr, &[]).expect("upgrade");
    ws.socket
        .send(tungstenite::Message::binary(
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\"}".to_vec(),
        ))
        .unwrap();
    ws.send("{not json");
    let error = ws.recv();
    assert_eq!(error["error"]["code"], -32700);
    assert_eq!(error["id"], Value::Null);
    // A message over two lines is one message (R-MSG-1).
    ws.send("{\"jsonrpc\":\"2.0\",\n\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}");
    let answer = ws.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["protocolVersion"], 1);
}

/// R-NET-3: the same turn over Streamable HTTP: `initialize` answered in the POST's body
/// with the connection id, the `session/new` answer on the connection stream, the turn's
/// updates, the permission request and the prompt's answer on the session stream.
#[test]
fn streamable_http_prompt_turn_with_permission() {
    let server = Server::start("http-turn", &[]);
    let init = post(server.addr, &[], INITIALIZE);
    assert_eq!(init.status, 200, "{}", init.text());
    assert_eq!(init.header("content-type"), Some("application/json"));
    let id = init
        .header("acp-connection-id")
        .expect("a connection id")
        .to_owned();
    let answer: Value = serde_json::from_slice(&init.body).unwrap();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["protocolVersion"], 1);

    let connection = Sse::open(server.addr, &id, None);
    assert_eq!(connection.status, 200);
    let conn = [("Acp-Connection-Id", id.as_str())];
    let posted = post(server.addr, &conn, &new_session(2, &server.cwd));
    assert_eq!((posted.status, posted.body.len()), (202, 0));
    let opened = connection.until_answer(2);
    assert_eq!(opened.len(), 1, "{opened:?}");
    let sid = opened[0]["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();

    let session = Sse::open(server.addr, &id, Some(&sid));
    assert_eq!(session.status, 200);
    assert_eq!(
        shapes(&session.until_method("session/update")),
        ["session/update:available_commands_update"]
    );
    let scoped = [
        ("Acp-Connection-Id", id.as_str()),
        ("Acp-Session-Id", sid.as_str()),
    ];
    let posted = post(
        server.addr,
        &scoped,
        &prompt(3, &sid, "/tool execute Run tests"),
    );
    assert_eq!(posted.status, 202);
    let before = session.until_method("session/request_permission");
    let ask = before.last().unwrap();
    assert_eq!(ask["params"]["toolCall"]["title"], "Run tests");
    let answered = post(server.addr, &conn, &choose(&ask["id"], "allow_once"));
    assert_eq!(answered.status, 202);
    let after = session.until_answer(3);
    assert_eq!(after.last().unwrap()["result"]["stopReason"], "end_turn");

    // DELETE ends the connection: its streams end, the id is gone.
    let deleted = request(
        server.addr,
        format!("DELETE /acp HTTP/1.1\r\nHost: x\r\nAcp-Connection-Id: {id}\r\n\r\n").as_bytes(),
    );
    assert_eq!(deleted.status, 202);
    let gone = post(server.addr, &conn, &prompt(4, &sid, "/echo x"));
    assert_eq!(
        (gone.status, gone.text()),
        (404, refusal("unknown Acp-Connection-Id"))
    );
}

/// R-NET-3: `params.sessionId` stands in for a missing `Acp-Session-Id`; a mismatch, or
/// neither, is 400.
#[test]
fn session_id_from_header_or_params() {
    let server = Server::start("http-session-id", &[]);
    let init = post(server.addr, &[], INITIALIZE);
    let id = init.header("acp-connection-id").unwrap().to_owned();
    let connection = Sse::open(server.addr, &id, None);
    let conn = [("Acp-Connection-Id", id.as_str())];
    post(server.addr, &conn, &new_session(2, &server.cwd));
    let sid = connection.until_answer(2)[0]["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let session = Sse::open(server.addr, &id, Some(&sid));

    let mismatch = [
        ("Acp-Connection-Id", id.as_str()),
        ("Acp-Session-Id", "other"),
    ];
    let refused = post(server.addr, &mismatch, &prompt(3, &sid, "/echo hi"));
    assert_eq!(
        (refused.status, refused.text()),
        (
            400,
            refusal("Acp-Session-Id does not match params.sessionId")
        )
    );
    let neither = post(
        server.addr,
        &conn,
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"prompt":[]}}"#,
    );
    assert_eq!(
        (neither.status, neither.text()),
        (
            400,
            refusal("session/prompt needs Acp-Session-Id (or params.sessionId)")
        )
    );
    // params alone: taken, answered on the session stream.
    let taken = post(server.addr, &conn, &prompt(4, &sid, "/echo hi"));
    assert_eq!(taken.status, 202);
    let events = session.until_answer(4);
    assert_eq!(events.last().unwrap()["result"]["stopReason"], "end_turn");
}

/// R-NET-2, R-NET-4: every refusal of the table, with its exact body.
#[test]
fn error_statuses_and_bodies() {
    let server = Server::start("http-errors", &[]);
    let addr = server.addr;
    let cases: Vec<(Response, u16, &str)> = vec![
        (
            request(addr, b"POST /acp HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}"),
            415,
            "Content-Type must be application/json",
        ),
        (
            request(addr, b"GET /acp HTTP/1.1\r\nHost: x\r\nAcp-Connection-Id: a\r\n\r\n"),
            406,
            "Accept must include text/event-stream",
        ),
        (
            post(addr, &[], r#"{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}"#),
            400,
            "Acp-Connection-Id header required",
        ),
        (
            post(addr, &[("Acp-Connection-Id", "nope")], r#"{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}"#),
            404,
            "unknown Acp-Connection-Id",
        ),
        (
            request(addr, b"GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"),
            400,
            "Acp-Connection-Id header required",
        ),
        (
            request(addr, b"DELETE /acp HTTP/1.1\r\nHost: x\r\nAcp-Connection-Id: nope\r\n\r\n"),
            404,
            "unknown Acp-Connection-Id",
        ),
        (post(addr, &[], "[{},{}]"), 501, "batches are not supported"),
        (
            request(addr, b"GET /other HTTP/1.1\r\nHost: x\r\n\r\n"),
            404,
            "not found: the endpoint is /acp",
        ),
        (
            request(addr, b"PUT /acp HTTP/1.1\r\nHost: x\r\n\r\n"),
            405,
            "the methods of /acp are GET, POST and DELETE",
        ),
        (
            request(addr, b"POST /acp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
            411,
            "a POST needs Content-Length (chunked bodies are not taken)",
        ),
        (request(addr, b"NOT HTTP\r\n\r\n"), 400, "not an HTTP/1.1 request"),
    ];
    for (response, status, message) in cases {
        assert_eq!(
            (response.status, response.text()),
            (status, refusal(message))
        );
        assert_eq!(response.header("content-type"), Some("application/json"));
    }

    // 409: a second listener on one stream; 404 past the unconfirmed session streams.
    let init = post(addr, &[], INITIALIZE);
    let id = init.header("acp-connection-id").unwrap().to_owned();
    let first = Sse::open(addr, &id, None);
    assert_eq!(first.status, 200);
    let get = |session: Option<&str>| {
        let mut raw = format!(
            "GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {id}\r\n"
        );
        if let Some(session) = session {
            raw.push_str(&format!("Acp-Session-Id: {session}\r\n"));
        }
        raw.push_str("\r\n");
        raw
    };
    let second = request(addr, get(None).as_bytes());
    assert_eq!(
        (second.status, second.text()),
        (409, refusal("this stream already has a listener"))
    );
    let ahead: Vec<Sse> = (0..4)
        .map(|i| Sse::open(addr, &id, Some(&format!("ahead-{i}"))))
        .collect();
    assert!(ahead.iter().all(|s| s.status == 200));
    let unknown = request(addr, get(Some("ahead-4")).as_bytes());
    assert_eq!(
        (unknown.status, unknown.text()),
        (404, refusal("unknown Acp-Session-Id"))
    );
}

/// R-NET-9: two connections at once, each with its own agent and sessions.
#[test]
fn two_connections_at_once() {
    let server = Server::start("two", &[]);
    let mut a = Ws::connect(server.addr, &[]).unwrap();
    let mut b = Ws::connect(server.addr, &[]).unwrap();
    assert_ne!(a.connection_id, b.connection_id);
    let sa = a.handshake(&server.cwd);
    let sb = b.handshake(&server.cwd);
    assert_ne!(sa, sb);
    a.send(&prompt(3, &sa, "/sleep 100000"));
    b.send(&prompt(3, &sb, "/echo from b"));
    let answer = b.until_answer(3);
    assert_eq!(answer.last().unwrap()["result"]["stopReason"], "end_turn");
    // b cannot see a's session: it is not open on b's connection.
    b.send(&prompt(4, &sa, "/echo x"));
    let refused = b.until_answer(4);
    assert!(
        refused.last().unwrap().get("error").is_some(),
        "{refused:?}"
    );
    a.send(&format!(
        r#"{{"jsonrpc":"2.0","method":"session/cancel","params":{{"sessionId":"{sa}"}}}}"#
    ));
    let cancelled = a.until_answer(3);
    assert_eq!(
        cancelled.last().unwrap()["result"]["stopReason"],
        "cancelled"
    );
}

/// R-NET-9: a session outlives its connection: a new connection loads it, history replayed.
#[test]
fn session_survives_its_connection() {
    let server = Server::start("survive", &[]);
    let mut first = Ws::connect(server.addr, &[]).unwrap();
    let sid = first.handshake(&server.cwd);
    first.send(&prompt(3, &sid, "/echo remembered words"));
    first.until_answer(3);
    first.socket.close(None).unwrap();
    drop(first);

    let mut second = Ws::connect(server.addr, &[]).unwrap();
    second.send(INITIALIZE);
    second.until_answer(1);
    second.send(&load_session(2, &sid, &server.cwd));
    let replay = second.until_answer(2);
    assert!(replay.last().unwrap().get("result").is_some(), "{replay:?}");
    let text = serde_json::to_string(&replay).unwrap();
    assert!(text.contains("remembered words"), "{text}");
}

/// R-NET-5: with --token-file, no token or a wrong one is 401 (either form); the right one
/// in `Authorization` or in the subprotocol passes. Nothing of the token is logged.
#[test]
fn token_required_and_checked() {
    let cwd = scratch("token");
    std::fs::write(cwd.join("token"), "s3cret-token\n").unwrap();
    let server = Server::start_in(
        cwd.clone(),
        &[
            "--token-file",
            s(&cwd.join("token")),
            "--log-level",
            "trace",
        ],
    );
    let none = post(server.addr, &[], INITIALIZE);
    assert_eq!(
        (none.status, none.text()),
        (401, refusal("missing or wrong token"))
    );
    let wrong = post(
        server.addr,
        &[("Authorization", "Bearer s3cret-toke")],
        INITIALIZE,
    );
    assert_eq!(
        (wrong.status, wrong.text()),
        (401, refusal("missing or wrong token"))
    );
    let right = post(
        server.addr,
        &[("Authorization", "Bearer s3cret-token")],
        INITIALIZE,
    );
    assert_eq!(right.status, 200);
    match Ws::connect(server.addr, &[]) {
        Err(tungstenite::Error::Http(response)) => assert_eq!(response.status(), 401),
        other => panic!("expected 401, got {:?}", other.map(|w| w.connection_id)),
    }
    let mut ws = Ws::connect(
        server.addr,
        &[("Sec-WebSocket-Protocol", "acp, acp.bearer.s3cret-token")],
    )
    .expect("the subprotocol token passes");
    ws.send(INITIALIZE);
    assert_eq!(
        ws.until_answer(1).last().unwrap()["result"]["protocolVersion"],
        1
    );
    drop(ws);
    let logged = server.logged();
    assert!(
        logged.contains("TRACE") || logged.contains("DEBUG"),
        "{logged}"
    );
    assert!(!logged.contains("s3cret"), "the token was logged: {logged}");
}

/// R-NET-5: a WebSocket from an Origin not allowed is 403; a loopback one passes by default;
/// --allow-origin lists others.
#[test]
fn foreign_origin_forbidden() {
    let server = Server::start("origin", &[]);
    match Ws::connect(server.addr, &[("Origin", "https://evil.example")]) {
        Err(tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 403);
            let body = response.body().as_deref().map(String::from_utf8_lossy);
            assert_eq!(
                body.as_deref(),
                Some(refusal("Origin not allowed").as_str())
            );
        }
        other => panic!("expected 403, got {:?}", other.map(|w| w.connection_id)),
    }
    Ws::connect(server.addr, &[("Origin", "http://localhost:5173")]).expect("loopback origin");
    let listed = Server::start("origin-listed", &["--allow-origin", "https://app.example"]);
    Ws::connect(listed.addr, &[("Origin", "https://app.example")]).expect("listed origin");
}

/// R-NET-7: a body over --max-body is 413, before it is read.
#[test]
fn oversized_body_refused() {
    let server = Server::start("max-body", &["--max-body", "100"]);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1,"x":"{}"}}}}"#,
        "a".repeat(200)
    );
    let refused = post(server.addr, &[], &big);
    assert_eq!(
        (refused.status, refused.text()),
        (413, refusal("the body is larger than 100 bytes"))
    );
}

/// R-NET-5: a non-loopback bind without a token refuses to start, exit 2.
#[test]
fn non_loopback_without_token_refuses() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_acp-cli"))
        .args(["--acp", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "acp-cli: --listen 0.0.0.0:0 is not a loopback address: it needs --token-file FILE (clients then send Authorization: Bearer TOKEN)\n"
    );
    assert!(out.stdout.is_empty());
}

/// R-NET-1: the flags of --listen refuse the wrong company, exit 2 with the message.
#[test]
fn listen_flag_combinations() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--listen", "127.0.0.1:0"],
            "acp-cli: --listen requires --acp (`acp-cli --acp --listen ADDR`)\n",
        ),
        (
            &["--acp", "--stdio", "--listen", "127.0.0.1:0"],
            "acp-cli: --stdio and --listen are two transports: choose one\n",
        ),
        (
            &["--acp"],
            "acp-cli: --acp requires --stdio or --listen ADDR\n",
        ),
        (
            &["--acp", "--stdio", "--token-file", "t"],
            "acp-cli: --token-file requires --acp --listen ADDR\n",
        ),
        (
            &["--acp", "--listen", "127.0.0.1:0", "--resume"],
            "acp-cli: --resume requires --acp --stdio (each network connection starts fresh)\n",
        ),
    ];
    for (args, message) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_acp-cli"))
            .args(*args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), *message, "{args:?}");
    }
}

/// R-NET-9: SIGTERM ends the server with exit 0.
#[test]
fn sigterm_exits_zero() {
    let mut server = Server::start("sigterm", &[]);
    let mut ws = Ws::connect(server.addr, &[]).unwrap();
    ws.handshake(&server.cwd);
    let pid = server.child.id();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = server.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

/// R-NET-8: a WebSocket with nothing either way for --idle-timeout is closed by the server;
/// an idle HTTP connection is ended (its id is then unknown).
#[test]
fn idle_connections_are_closed() {
    let server = Server::start("idle", &["--idle-timeout", "1"]);
    let mut ws = Ws::connect(server.addr, &[]).unwrap();
    let init = post(server.addr, &[], INITIALIZE);
    let id = init.header("acp-connection-id").unwrap().to_owned();
    // The server closes the WebSocket: the read ends (the guard only bounds a broken server).
    loop {
        match ws.socket.read() {
            Ok(tungstenite::Message::Close(_)) => continue,
            Ok(other) => panic!("nothing but the close, got {other:?}"),
            Err(_) => break,
        }
    }
    // The HTTP connection goes the same way. The probe is refused before it reaches the
    // connection (400 while it lives), so it does not keep it alive.
    let probe = [
        ("Acp-Connection-Id", id.as_str()),
        ("Acp-Session-Id", "other"),
    ];
    let start = std::time::Instant::now();
    loop {
        let gone = post(server.addr, &probe, &prompt(2, "s", "/echo"));
        if gone.status == 404 {
            assert_eq!(gone.text(), refusal("unknown Acp-Connection-Id"));
            break;
        }
        assert_eq!(gone.status, 400, "{}", gone.text());
        assert!(
            start.elapsed() < GUARD,
            "the idle HTTP connection was never closed"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
