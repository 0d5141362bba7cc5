//! `acp-cli client --url` and `acp-cli bridge --connect` against test servers on loopback
//! (`remote_support`): a prompt turn with a permission request over WebSocket and over
//! Streamable HTTP, the same as over stdio; the bridge's byte-exact relay; and every
//! connection failure's one line.

mod remote_support;

use remote_support::{
    Finished, canned_server, closed_port, eager_server, http_agent_server, run, scratch_dir,
    ws_agent_server, ws_scripted_server,
};

/// The prompt of the turn: the demo's tool call, which asks for permission.
const PROMPT: &str = "/tool execute Deploy it";

/// `acp-cli client --approve ask --prompt PROMPT` with `1` typed for the question, against
/// `agent` (`--url URL [--token-file F]` or `-- acp-cli --acp --stdio`).
fn client(cwd: &std::path::Path, agent: &[&str], env: &[(&str, &str)]) -> Finished {
    let mut args = vec![
        "client",
        "--approve",
        "ask",
        "--timeout",
        "60",
        "--prompt",
        PROMPT,
    ];
    args.extend(agent);
    run(&args, cwd, "1\n", env)
}

/// The output with the agent's name (the program's, or the URL's host) made one.
fn normalized(text: &str, name: &str) -> String {
    text.replace(name, "AGENT")
}

/// The stdio run every remote run is compared with.
fn over_stdio(cwd: &std::path::Path) -> Finished {
    let acp_cli = remote_support::acp_cli();
    let finished = client(cwd, &["--", acp_cli, "--acp", "--stdio"], &[]);
    assert_eq!(finished.code, Some(0), "{finished:?}");
    finished
}

/// R-NETC-3: a prompt turn with a permission request over WebSocket gives the same output,
/// question and exit status as over stdio; the token goes as `Authorization: Bearer`.
#[test]
fn a_turn_with_a_permission_request_over_websocket_is_as_over_stdio() {
    let cwd = scratch_dir("ws-turn");
    let local = over_stdio(&cwd);
    let (url, log) = ws_agent_server(&cwd, Some("s3cret"));
    let remote = client(&cwd, &["--url", &url], &[("ACP_TOKEN", "s3cret")]);
    assert_eq!(remote.code, Some(0), "{remote:?}");
    assert_eq!(remote.stdout, local.stdout);
    assert_eq!(
        normalized(&remote.stderr, "127.0.0.1"),
        normalized(&local.stderr, "acp-cli")
    );
    assert!(remote.stderr.contains("Allow"), "{}", remote.stderr);
    assert_eq!(
        log.authorizations.lock().unwrap().as_slice(),
        [Some("Bearer s3cret".to_owned())]
    );
    let frames = log.frames.lock().unwrap();
    assert!(frames[0].contains("\"initialize\""), "{frames:?}");
    assert!(
        frames.iter().any(|f| f.contains("\"optionId\"")),
        "{frames:?}"
    );
    assert!(!remote.stderr.contains("s3cret"));
}

/// R-NETC-5, R-NETC-6: the same turn over Streamable HTTP: initialize without a connection
/// id, then every request with `Acp-Connection-Id` and the cookie the server set; the
/// session's requests and our answer to its permission request with `Acp-Session-Id`; a
/// DELETE at the end.
#[test]
fn a_turn_with_a_permission_request_over_streamable_http_is_as_over_stdio() {
    let cwd = scratch_dir("http-turn");
    let local = over_stdio(&cwd);
    let (url, seen) = http_agent_server(&cwd, Some("t0ken"));
    let token_file = cwd.join("token");
    std::fs::write(&token_file, "t0ken\n").unwrap();
    let remote = client(
        &cwd,
        &["--url", &url, "--token-file", token_file.to_str().unwrap()],
        &[],
    );
    assert_eq!(remote.code, Some(0), "{remote:?}");
    assert_eq!(remote.stdout, local.stdout);
    assert_eq!(
        normalized(&remote.stderr, "127.0.0.1"),
        normalized(&local.stderr, "acp-cli")
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].method, "POST");
    assert!(seen[0].body.contains("\"initialize\""));
    assert_eq!(seen[0].connection, None);
    for request in &seen[1..] {
        assert_eq!(request.connection.as_deref(), Some("c1"), "{request:?}");
        assert_eq!(request.cookie.as_deref(), Some("route=r1"), "{request:?}");
    }
    for request in seen.iter() {
        assert_eq!(request.authorization.as_deref(), Some("Bearer t0ken"));
    }
    let session = seen
        .iter()
        .find(|r| r.body.contains("session/prompt"))
        .and_then(|r| r.session.clone())
        .expect("the prompt is session-scoped");
    assert!(
        seen.iter()
            .any(|r| r.method == "GET" && r.session.is_none()),
        "the connection's stream was opened: {seen:?}"
    );
    assert!(
        seen.iter()
            .any(|r| r.method == "GET" && r.session.as_deref() == Some(&session)),
        "the session's stream was opened: {seen:?}"
    );
    let answer = seen
        .iter()
        .find(|r| r.body.contains("\"optionId\""))
        .expect("the permission answer was posted");
    assert_eq!(answer.session.as_deref(), Some(session.as_str()));
    assert_eq!(seen.last().unwrap().method, "DELETE");
}

/// `acp-cli bridge --connect URL` with stdin and stdout in the test's hands.
struct Bridge {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Bridge {
    fn start(url: &str) -> Bridge {
        let mut child = std::process::Command::new(remote_support::acp_cli())
            .args(["bridge", "--connect", url])
            .env_remove("ACP_TOKEN")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        Bridge {
            child,
            stdin,
            stdout,
        }
    }

    fn write(&mut self, text: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    fn read_line(&mut self) -> String {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut self.stdout, &mut line).unwrap();
        line
    }

    /// Closes stdin (unless `keep_stdin`) and waits: the exit code, the rest of stdout, and
    /// stderr.
    fn finish(mut self, keep_stdin: bool) -> Finished {
        use std::io::Read;
        let stdin = self.stdin.take();
        if !keep_stdin {
            drop(stdin);
        }
        let mut stdout = String::new();
        self.stdout.read_to_string(&mut stdout).unwrap();
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let code = self.child.wait().unwrap().code();
        Finished {
            code,
            stdout,
            stderr,
        }
    }
}

/// R-NETC-7: the bridge relays stdin lines and the remote agent's frames byte for byte,
/// skips blank lines, writes a frame's raw line breaks as spaces, and at stdin's end closes
/// the WebSocket and exits 0; binary frames and pings pass nothing on (R-NETC-3).
#[test]
fn the_bridge_relays_byte_for_byte() {
    let sent =
        r#"{"jsonrpc":"2.0", "id":1,"method":"initialize","params":{"a":"\u00e9 é","b":[1, 2]}}"#;
    let second = r#"{"jsonrpc":"2.0","method":"x/y"}"#;
    let replies = vec![
        r#"{"jsonrpc":"2.0",  "id":1,"result":{"t":"\u00e9 é \n"}}"#.to_owned(),
        "{\"jsonrpc\":\"2.0\",\r\n\"method\":\"n\"}".to_owned(),
    ];
    let (url, log) = ws_scripted_server(replies.clone(), None);
    let mut bridge = Bridge::start(&url);
    bridge.write(&format!("{sent}\n\n   \n"));
    assert_eq!(bridge.read_line(), format!("{}\n", replies[0]));
    assert_eq!(
        bridge.read_line(),
        "{\"jsonrpc\":\"2.0\",  \"method\":\"n\"}\n"
    );
    bridge.write(&format!("{second}\n"));
    let finished = bridge.finish(false);
    assert_eq!(finished.code, Some(0), "{finished:?}");
    assert_eq!(finished.stdout, "");
    log.wait_closed();
    assert_eq!(
        log.frames.lock().unwrap().as_slice(),
        [sent.to_owned(), second.to_owned()]
    );
    assert_eq!(*log.closes.lock().unwrap(), 1);
}

/// R-NETC-7: a stdin line that is not UTF-8 is answered by the bridge itself, and the
/// relay goes on.
#[test]
fn the_bridge_answers_a_line_that_is_not_utf8() {
    let (url, log) = ws_scripted_server(vec!["{\"id\":2,\"result\":{}}".to_owned()], None);
    let mut bridge = Bridge::start(&url);
    {
        use std::io::Write;
        let stdin = bridge.stdin.as_mut().unwrap();
        stdin.write_all(b"{\"id\":\xff}\n").unwrap();
        stdin.flush().unwrap();
    }
    assert_eq!(
        bridge.read_line(),
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: invalid UTF-8 at byte 6\"}}\n"
    );
    bridge.write("{\"id\":2}\n");
    assert_eq!(bridge.read_line(), "{\"id\":2,\"result\":{}}\n");
    let finished = bridge.finish(false);
    assert_eq!(finished.code, Some(0), "{finished:?}");
    assert_eq!(
        log.frames.lock().unwrap().as_slice(),
        ["{\"id\":2}".to_owned()]
    );
}

/// R-NETC-7: a stdin line over 16 MiB is answered by the bridge itself (R-FRAME-5), never
/// sent, and the relay goes on.
#[test]
fn the_bridge_answers_an_oversized_line() {
    let (url, log) = ws_scripted_server(vec!["{\"id\":3,\"result\":{}}".to_owned()], None);
    let mut bridge = Bridge::start(&url);
    let huge = format!("{{\"pad\":\"{}\"}}\n", "x".repeat((16 << 20) + 1));
    bridge.write(&huge);
    assert_eq!(
        bridge.read_line(),
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: line exceeds the maximum length of 16777216 bytes\"}}\n"
    );
    bridge.write("{\"id\":3}\n");
    assert_eq!(bridge.read_line(), "{\"id\":3,\"result\":{}}\n");
    let finished = bridge.finish(false);
    assert_eq!(finished.code, Some(0), "{finished:?}");
    assert_eq!(
        log.frames.lock().unwrap().as_slice(),
        ["{\"id\":3}".to_owned()]
    );
}

/// R-NETC-7: when the remote agent closes the connection, the bridge says so and exits 1.
#[test]
fn the_bridge_ends_when_the_remote_agent_does() {
    let (url, _) = ws_scripted_server(Vec::new(), Some(1));
    let mut bridge = Bridge::start(&url);
    bridge.write("{\"id\":1}\n");
    let finished = bridge.finish(true);
    assert_eq!(finished.code, Some(1), "{finished:?}");
    assert_eq!(
        finished.stderr,
        "acp-cli bridge: the remote agent closed the connection\n"
    );
}

/// A URL, the environment, and the message `client --url` gives.
type FailureCase = (String, Vec<(&'static str, &'static str)>, String);

/// R-NETC-4: each failure to reach a remote agent is one line, exit 1, from `client --url`.
#[test]
fn connection_failures_are_one_line_each() {
    let cwd = scratch_dir("failures");
    let refused = closed_port();
    let unauthorized = canned_server("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
    let forbidden = canned_server("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    let missing = canned_server("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    let html = canned_server(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 4\r\n\r\n<p/>",
    );
    let not_http = canned_server("SSH-2.0-OpenSSH_9.6\r\n\r\n");
    let cases: Vec<FailureCase> = vec![
        (
            format!("ws://127.0.0.1:{refused}/acp"),
            vec![],
            format!("cannot connect to 127.0.0.1:{refused}: connection refused"),
        ),
        (
            format!("http://127.0.0.1:{refused}/acp"),
            vec![],
            format!("cannot connect to 127.0.0.1:{refused}: connection refused"),
        ),
        (
            format!("ws://{unauthorized}/acp"),
            vec![],
            "the server requires a token (401 Unauthorized): give --token-file FILE or set ACP_TOKEN".to_owned(),
        ),
        (
            format!("http://{unauthorized}/acp"),
            vec![("ACP_TOKEN", "wrong")],
            "the server refused the token (401 Unauthorized): check --token-file or ACP_TOKEN".to_owned(),
        ),
        (
            format!("ws://{forbidden}/acp"),
            vec![],
            "the server refused the connection (403 Forbidden)".to_owned(),
        ),
        (
            format!("http://{forbidden}/acp"),
            vec![],
            "the server refused the connection (403 Forbidden)".to_owned(),
        ),
        (
            format!("ws://{missing}/nope?token=x"),
            vec![],
            format!("no ACP endpoint at ws://{missing}/nope (404 Not Found)"),
        ),
        (
            format!("http://{missing}/nope"),
            vec![],
            format!("no ACP endpoint at http://{missing}/nope (404 Not Found)"),
        ),
        (
            format!("ws://{html}/acp"),
            vec![],
            format!("ws://{html}/acp is not an ACP server: it answered the WebSocket upgrade with 200 OK"),
        ),
        (
            format!("http://{html}/acp"),
            vec![],
            format!("http://{html}/acp is not an ACP server: it answered initialize with text/html, not JSON"),
        ),
        (
            format!("http://{not_http}/acp"),
            vec![],
            format!("http://{not_http}/acp is not an ACP server: the response is not HTTP/1.1 (invalid HTTP version)"),
        ),
    ];
    for (url, env, message) in cases {
        let finished = run(
            &["client", "--prompt", "hi", "--timeout", "60", "--url", &url],
            &cwd,
            "",
            &env,
        );
        assert_eq!(
            (finished.code, finished.stderr.as_str()),
            (Some(1), format!("acp-cli client: {message}\n").as_str()),
            "{url}: {finished:?}"
        );
        assert!(finished.stdout.is_empty());
    }
}

/// R-NETC-4: a TLS handshake that fails (here: a server that does not speak TLS) is named as
/// such, for wss:// and https://.
#[test]
fn a_failed_tls_handshake_is_one_line() {
    let cwd = scratch_dir("tls");
    let plain = eager_server("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    for scheme in ["wss", "https"] {
        let url = format!("{scheme}://{plain}/acp");
        let finished = run(&["client", "--prompt", "hi", "--url", &url], &cwd, "", &[]);
        let prefix = format!("acp-cli client: TLS handshake with {plain} failed: ");
        assert_eq!(finished.code, Some(1), "{finished:?}");
        assert!(
            finished.stderr.starts_with(&prefix) && finished.stderr.lines().count() == 1,
            "{finished:?}"
        );
    }
}

/// R-NETC-1, R-NETC-2: a bad URL or token file is refused before anything starts.
#[test]
fn bad_urls_and_token_files_are_refused_at_once() {
    let cwd = scratch_dir("args");
    let empty = cwd.join("empty-token");
    std::fs::write(&empty, "\n").unwrap();
    let cases = [
        (
            vec!["client", "--prompt", "hi", "--url", "ftp://h/acp"],
            1,
            "acp-cli client: --url 'ftp://h/acp' is not a ws://, wss://, http:// or https:// URL\n".to_owned(),
        ),
        (
            vec![
                "client",
                "--prompt",
                "hi",
                "--url",
                "ws://h/acp",
                "--token-file",
                empty.to_str().unwrap(),
            ],
            1,
            format!("acp-cli client: --token-file {} is empty\n", empty.display()),
        ),
        (
            vec!["repl", "--url", "ws://u:p@h/acp"],
            1,
            "acp-cli repl: --url 'ws://u:p@h/acp' must not carry credentials (use --token-file or ACP_TOKEN)\n".to_owned(),
        ),
        (
            vec!["bridge", "--connect", "localhost:80"],
            2,
            "acp-cli bridge: --connect 'localhost:80' is not a ws://, wss://, http:// or https:// URL\n".to_owned(),
        ),
        (
            vec!["bridge"],
            2,
            "acp-cli bridge: nothing to do; give --listen ADDR -- AGENT [ARGS...] or --connect URL\n".to_owned(),
        ),
    ];
    for (args, code, message) in cases {
        let finished = run(&args, &cwd, "", &[]);
        assert_eq!(
            (finished.code, finished.stderr.as_str()),
            (Some(code), message.as_str()),
            "{args:?}"
        );
    }
}

/// R-NETC-8: `conform --url` runs the suite against a remote agent: the cases that need the
/// agent's own process are skipped as not applicable, with the reason; the others run and
/// the verdict counts them only.
#[test]
fn conform_runs_against_a_remote_agent() {
    let cwd = scratch_dir("conform");
    let (url, log) = ws_agent_server(&cwd, None);
    let finished = run(
        &["conform", "--url", &url, "--only", "process/,initialize/"],
        &cwd,
        "",
        &[],
    );
    assert_eq!(finished.code, Some(0), "{finished:?}");
    let lines: Vec<&str> = finished.stdout.lines().collect();
    for (id, tier, why) in [
        (
            "process/stdin-eof-exits",
            "ADVISORY",
            "it needs the agent's own process (stdin EOF, exit)",
        ),
        (
            "process/sigterm-exits",
            "ADVISORY",
            "it needs the agent's own process (signals)",
        ),
        (
            "process/no-orphaned-children",
            "ADVISORY",
            "it needs the agent's own process group",
        ),
    ] {
        let line = format!("SKIP {id} [{tier}] — not applicable over --url: {why}");
        assert!(
            lines.contains(&line.as_str()),
            "{line}\n{}",
            finished.stdout
        );
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("PASS process/stdout-only-jsonrpc [MANDATORY]")),
        "{}",
        finished.stdout
    );
    assert!(
        lines.iter().any(|l| l.starts_with("PASS initialize/")),
        "{}",
        finished.stdout
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("FAIL")),
        "{}",
        finished.stdout
    );
    assert!(
        lines.last().unwrap().starts_with("verdict: conformant"),
        "{}",
        finished.stdout
    );
    assert!(log.frames.lock().unwrap().len() > 3);
}

/// R-NETC-5: over Streamable HTTP the suite runs too; a notification sent before
/// `initialize` waits for the connection (`initialize/notification-before-initialize-ignored`),
/// and every connection gets its own id.
#[test]
fn conform_runs_against_a_remote_agent_over_streamable_http() {
    let cwd = scratch_dir("conform-http");
    let (url, seen) = http_agent_server(&cwd, None);
    let finished = run(
        &["conform", "--url", &url, "--only", "initialize/,sessions/"],
        &cwd,
        "",
        &[],
    );
    assert_eq!(finished.code, Some(0), "{finished:?}");
    assert!(
        finished
            .stdout
            .lines()
            .any(|l| l.starts_with("PASS initialize/notification-before-initialize-ignored")),
        "{}",
        finished.stdout
    );
    assert!(!finished.stdout.contains("FAIL"), "{}", finished.stdout);
    let seen = seen.lock().unwrap();
    let opened = seen.iter().filter(|r| r.connection.is_none()).count();
    assert!(opened > 10, "{opened}");
    assert!(
        seen.iter()
            .filter(|r| r.connection.is_none())
            .all(|r| r.method == "POST" && !r.body.contains("\"id\":null")),
        "only requests open a connection"
    );
}

/// R-NETC-8: `repl --url` drives a remote main agent as it drives a local one.
#[test]
fn the_repl_drives_a_remote_main_agent() {
    let cwd = scratch_dir("repl");
    let (url, log) = ws_agent_server(&cwd, None);
    let finished = run(
        &["repl", "--url", &url],
        &cwd,
        "hello over the network\n",
        &[],
    );
    assert_eq!(finished.code, Some(0), "{finished:?}");
    assert!(
        finished
            .stdout
            .contains("hello over the network\n  · usage:"),
        "{finished:?}"
    );
    assert!(
        finished.stdout.contains("turn finished (end_turn)"),
        "{finished:?}"
    );
    assert!(
        log.frames
            .lock()
            .unwrap()
            .iter()
            .any(|f| f.contains("session/prompt") && f.contains("hello over the network"))
    );
}
