//! Network measurements of an ACP server (issue 27 item 6), for any server that serves the demo
//! commands `/echo` and `/flood N` on one endpoint: `acp-cli --acp --listen` or the peers
//! `net-agent` (Rust `agent-client-protocol-http`) and `ts-http/agent.mjs`.
//!
//! Usage: `net-bench --url http://HOST:PORT/acp [--token-file FILE] [--server-pid PID]
//!                   [--only rate|latency|idle|stalled] [--transport ws|http]
//!                   [--count N] [--turns K] [--connections C] [--stall-count N]
//!                   [--stall-seconds S] [--stall-cap-mib M]`
//!
//! - `rate`: one turn `/flood N` (default 100 000) after a warm-up turn; the client counts the
//!   `session/update` notifications that arrive before the prompt's answer and prints
//!   notifications per second.
//! - `latency`: K (default 200) turns `/echo x` after 20 warm-up turns; each is timed from the
//!   `session/prompt` request to its answer (the one chunk comes before it); median and p99.
//! - `idle` (needs `--server-pid`): C (default 100) connections, each after `initialize` and
//!   `session/new`, held open; the server's VmRSS before and after (from `/proc/PID/status`).
//! - `stalled` (needs `--server-pid`, Streamable HTTP only, by hand on HTTP/1.1 so nothing
//!   reads for us): opens the session's SSE stream and never reads it, starts `/flood N`
//!   (default 1 000 000) and samples the server's VmRSS and VmHWM every 100 ms until the server
//!   goes quiet (no CPU used for 2 s: the flood is done, or held back by a bounded queue), S
//!   seconds pass (default 120), or the server is resident beyond M MiB (default 4096); prints
//!   the peak and the server's CPU seconds. A server whose per-stream queue is bounded stays
//!   flat.
//!
//! The clients are the official crate's `HttpClient` (WebSocket for `ws`, POST + SSE for `http`)
//! so every server is measured through the same client. Each mode runs over both transports
//! unless `--transport` picks one (`stalled` is SSE only). Every result is one line:
//! `MODE TRANSPORT: …`. It exits 1 if a turn fails or a count comes out wrong.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest,
    SessionId, SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{Agent, Client};
use agent_client_protocol_http::HttpClient;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Notify;

const USAGE: &str = "usage: net-bench --url URL [--token-file FILE] [--server-pid PID] \
[--only rate|latency|idle|stalled] [--transport ws|http] [--count N] [--turns K] \
[--connections C] [--stall-count N] [--stall-seconds S] [--stall-cap-mib M]";
/// A turn longer than this is a failure, not a figure.
const TURN_TIMEOUT: Duration = Duration::from_secs(120);

struct Opts {
    url: String,
    token: Option<String>,
    server_pid: Option<u32>,
    only: Option<String>,
    transports: Vec<&'static str>,
    count: u64,
    turns: usize,
    connections: usize,
    stall_count: u64,
    stall_seconds: u64,
    stall_cap_mib: u64,
}

fn parse_args(args: &[String]) -> Result<Opts, String> {
    let mut opts = Opts {
        url: String::new(),
        token: None,
        server_pid: None,
        only: None,
        transports: vec!["ws", "http"],
        count: 100_000,
        turns: 200,
        connections: 100,
        stall_count: 1_000_000,
        stall_seconds: 120,
        stall_cap_mib: 4096,
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(USAGE)?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag}: not a number: {value}"))
        };
        match flag.as_str() {
            "--url" => opts.url = value.clone(),
            "--token-file" => {
                let token = std::fs::read_to_string(value).map_err(|e| format!("{value}: {e}"))?;
                opts.token = Some(token.trim().to_owned());
            }
            "--server-pid" => opts.server_pid = Some(number()? as u32),
            "--only" if ["rate", "latency", "idle", "stalled"].contains(&value.as_str()) => {
                opts.only = Some(value.clone());
            }
            "--transport" if value == "ws" => opts.transports = vec!["ws"],
            "--transport" if value == "http" => opts.transports = vec!["http"],
            "--count" => opts.count = number()?,
            "--turns" => opts.turns = number()?.max(1) as usize,
            "--connections" => opts.connections = number()? as usize,
            "--stall-count" => opts.stall_count = number()?,
            "--stall-seconds" => opts.stall_seconds = number()?,
            "--stall-cap-mib" => opts.stall_cap_mib = number()?,
            _ => return Err(USAGE.to_owned()),
        }
    }
    if opts.url.is_empty() {
        return Err(USAGE.to_owned());
    }
    Ok(opts)
}

/// The endpoint with the scheme of `transport` (`ws` <-> `http`, `wss` <-> `https`).
fn endpoint(url: &str, transport: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let secure = scheme == "https" || scheme == "wss";
    let scheme = match (transport, secure) {
        ("ws", false) => "ws",
        ("ws", true) => "wss",
        (_, false) => "http",
        (_, true) => "https",
    };
    format!("{scheme}://{rest}")
}

fn client(opts: &Opts, transport: &str) -> Result<HttpClient, String> {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(token) = &opts.token {
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| "the token is not a valid header value".to_owned())?;
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    HttpClient::builder_with_endpoint(endpoint(&opts.url, transport))
        .configure_http(|http| http.no_proxy().default_headers(headers))
        .build()
        .map_err(|e| e.to_string())
}

/// `initialize` then `session/new` in the current directory.
async fn open_session(cx: &ConnectionTo<Agent>) -> agent_client_protocol::Result<SessionId> {
    cx.send_request(
        InitializeRequest::new(ProtocolVersion::V1).client_capabilities(ClientCapabilities::new()),
    )
    .block_task()
    .await?;
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .unwrap_or_else(|_| std::env::temp_dir());
    Ok(cx
        .send_request(NewSessionRequest::new(cwd))
        .block_task()
        .await?
        .session_id)
}

async fn turn(
    cx: &ConnectionTo<Agent>,
    session: &SessionId,
    text: &str,
) -> agent_client_protocol::Result<StopReason> {
    let request = PromptRequest::new(
        session.clone(),
        vec![ContentBlock::Text(TextContent::new(text))],
    );
    let answer = tokio::time::timeout(TURN_TIMEOUT, cx.send_request(request).block_task())
        .await
        .map_err(|_| agent_client_protocol::Error::internal_error().data("turn timed out"))??;
    Ok(answer.stop_reason)
}

fn ended(stop: StopReason) -> Result<(), String> {
    if stop == StopReason::EndTurn {
        Ok(())
    } else {
        Err(format!("stopReason {stop:?}"))
    }
}

/// Runs `body` on one connection whose agent message chunks are counted in `chunks`.
async fn with_connection<T: Send + 'static>(
    transport: HttpClient,
    chunks: Arc<AtomicU64>,
    body: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let outcome = Client
        .v1()
        .name("net-bench")
        .on_receive_notification(
            async move |notification: SessionNotification, _cx: ConnectionTo<Agent>| {
                if matches!(notification.update, SessionUpdate::AgentMessageChunk(_)) {
                    chunks.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            Ok(body(cx).await)
        })
        .await;
    match outcome {
        Ok(result) => result,
        Err(e) => Err(format!("connection failed: {e}")),
    }
}

async fn rate(opts: &Opts, transport: &str) -> Result<(), String> {
    let chunks = Arc::new(AtomicU64::new(0));
    let count = opts.count;
    let seen = chunks.clone();
    let (elapsed, got) = with_connection(client(opts, transport)?, chunks, async move |cx| {
        let session = open_session(&cx).await.map_err(|e| e.to_string())?;
        ended(
            turn(&cx, &session, "/flood 1000")
                .await
                .map_err(|e| e.to_string())?,
        )?;
        let before = seen.load(Ordering::Relaxed);
        let start = Instant::now();
        ended(
            turn(&cx, &session, &format!("/flood {count}"))
                .await
                .map_err(|e| e.to_string())?,
        )?;
        Ok((start.elapsed(), seen.load(Ordering::Relaxed) - before))
    })
    .await?;
    if got != count {
        return Err(format!(
            "{got} notifications arrived before the answer, expected {count}"
        ));
    }
    let per_second = got as f64 / elapsed.as_secs_f64();
    println!(
        "rate {transport}: {got} notifications in {:.3} s = {per_second:.0}/s",
        elapsed.as_secs_f64()
    );
    Ok(())
}

async fn latency(opts: &Opts, transport: &str) -> Result<(), String> {
    let turns = opts.turns;
    let chunks = Arc::new(AtomicU64::new(0));
    let mut times = with_connection(client(opts, transport)?, chunks, async move |cx| {
        let session = open_session(&cx).await.map_err(|e| e.to_string())?;
        for _ in 0..20 {
            ended(
                turn(&cx, &session, "/echo x")
                    .await
                    .map_err(|e| e.to_string())?,
            )?;
        }
        let mut times = Vec::with_capacity(turns);
        for _ in 0..turns {
            let start = Instant::now();
            ended(
                turn(&cx, &session, "/echo x")
                    .await
                    .map_err(|e| e.to_string())?,
            )?;
            times.push(start.elapsed());
        }
        Ok(times)
    })
    .await?;
    times.sort();
    let median = times[times.len() / 2];
    let p99 = times[(times.len() * 99).div_ceil(100) - 1];
    println!(
        "latency {transport}: {} turns, median {:.0} us, p99 {:.0} us",
        times.len(),
        median.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6
    );
    Ok(())
}

/// `(VmRSS, VmHWM)` of `pid` in KiB.
fn memory(pid: u32) -> Result<(u64, u64), String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("/proc/{pid}/status: {e}"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| format!("/proc/{pid}/status has no {name}"))
    };
    Ok((field("VmRSS:")?, field("VmHWM:")?))
}

/// CPU seconds `pid` has used (user + system), from `/proc/PID/stat`.
fn cpu_seconds(pid: u32) -> Result<f64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("/proc/{pid}/stat: {e}"))?;
    // The fields after the command's closing parenthesis; utime and stime are the 12th and
    // 13th of them, in clock ticks (100 per second on Linux).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok((ticks(11) + ticks(12)) as f64 / 100.0)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

async fn idle(opts: &Opts, transport: &str, pid: u32) -> Result<(), String> {
    let (before, _) = memory(pid)?;
    let release = Arc::new(Notify::new());
    let (ready_tx, mut ready_rx) =
        tokio::sync::mpsc::channel::<Result<(), String>>(opts.connections);
    let mut tasks = Vec::new();
    for _ in 0..opts.connections {
        let transport = client(opts, transport)?;
        let release = release.clone();
        let ready = ready_tx.clone();
        tasks.push(tokio::spawn(async move {
            let failed = ready.clone();
            let result = with_connection(transport, Arc::new(AtomicU64::new(0)), async move |cx| {
                let session = open_session(&cx).await.map_err(|e| e.to_string());
                let opened = session.is_ok();
                let _ = ready.send(session.map(|_| ())).await;
                if opened {
                    release.notified().await;
                }
                Ok(())
            })
            .await;
            if let Err(why) = result {
                let _ = failed.send(Err(why)).await;
            }
        }));
    }
    drop(ready_tx);
    for _ in 0..opts.connections {
        match ready_rx.recv().await {
            Some(Ok(())) => {}
            Some(Err(why)) => return Err(format!("a connection failed: {why}")),
            None => return Err("the connections ended early".to_owned()),
        }
    }
    // Let the server settle (buffers, lazily started tasks) before reading its memory.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (after, hwm) = memory(pid)?;
    println!(
        "idle {transport}: {} connections with a session each: server VmRSS {:.1} -> {:.1} MiB \
         (+{:.1} KiB per connection), VmHWM {:.1} MiB",
        opts.connections,
        mib(before),
        mib(after),
        after.saturating_sub(before) as f64 / opts.connections as f64,
        mib(hwm)
    );
    release.notify_waiters();
    for task in tasks {
        task.abort();
    }
    Ok(())
}

/// A bare HTTP/1.1 request on its own TCP connection, for the stalled reader.
struct Http {
    addr: String,
    host: String,
    path: String,
    token: Option<String>,
}

impl Http {
    fn new(url: &str, token: Option<String>) -> Result<Self, String> {
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("ws://"))
            .ok_or("stalled: only plain http:// URLs")?;
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        Ok(Self {
            addr: host.to_owned(),
            host: host.to_owned(),
            path: format!("/{path}"),
            token,
        })
    }

    /// Sends one request; answers the stream positioned after the response head, the
    /// status, and the head's lines.
    async fn send(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<(BufReader<TcpStream>, u16, Vec<String>), String> {
        let mut stream = TcpStream::connect(&self.addr)
            .await
            .map_err(|e| format!("connect {}: {e}", self.addr))?;
        let mut head = format!(
            "{method} {} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            self.path,
            self.host,
            body.len()
        );
        if let Some(token) = &self.token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream
            .write_all(format!("{head}{body}").as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let mut reader = BufReader::new(stream);
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            if reader
                .read_line(&mut line)
                .await
                .map_err(|e| e.to_string())?
                == 0
            {
                return Err(format!("{method}: the server closed before the head ended"));
            }
            let line = line.trim_end().to_owned();
            if line.is_empty() {
                break;
            }
            lines.push(line);
        }
        let status = lines
            .first()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{method}: no status line"))?;
        Ok((reader, status, lines))
    }

    /// A POST whose answer is read whole (`Connection: close`).
    async fn post(
        &self,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<(u16, Vec<String>, String), String> {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Connection", "close"),
        ];
        all.extend_from_slice(headers);
        let (mut reader, status, lines) = self.send("POST", &all, body).await?;
        let mut rest = String::new();
        let _ = reader.read_to_string(&mut rest).await;
        Ok((status, lines, rest))
    }
}

fn header<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    lines.iter().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Reads SSE events from `reader` until one is the answer to request `id`.
async fn answer_on_stream(
    reader: &mut BufReader<TcpStream>,
    id: u64,
) -> Result<serde_json::Value, String> {
    loop {
        let mut line = String::new();
        if reader
            .read_line(&mut line)
            .await
            .map_err(|e| e.to_string())?
            == 0
        {
            return Err(format!("the stream ended before the answer to {id}"));
        }
        let Some(data) = line.trim_end().strip_prefix("data:") else {
            continue;
        };
        let Ok(message) = serde_json::from_str::<serde_json::Value>(data.trim()) else {
            continue;
        };
        if message["id"] == id {
            return Ok(message);
        }
    }
}

async fn stalled(opts: &Opts, pid: u32) -> Result<(), String> {
    let http = Http::new(&endpoint(&opts.url, "http"), opts.token.clone())?;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#;
    let (status, lines, body) = http.post(&[], init).await?;
    let connection = header(&lines, "acp-connection-id")
        .ok_or_else(|| format!("initialize: {status} without Acp-Connection-Id: {body}"))?
        .to_owned();
    let sse = [
        ("Accept", "text/event-stream"),
        ("Acp-Connection-Id", connection.as_str()),
    ];
    let (mut connection_stream, status, _) = http.send("GET", &sse, "").await?;
    if status != 200 {
        return Err(format!("the connection's SSE stream: status {status}"));
    }
    let cwd = std::env::temp_dir();
    let new = serde_json::json!({"jsonrpc":"2.0","id":2,"method":"session/new",
        "params":{"cwd": cwd, "mcpServers": []}});
    let (status, _, body) = http
        .post(&[("Acp-Connection-Id", &connection)], &new.to_string())
        .await?;
    if status != 202 && status != 200 {
        return Err(format!("session/new: status {status}: {body}"));
    }
    let answer = if status == 200 && !body.trim().is_empty() {
        serde_json::from_str(body.trim()).map_err(|e| e.to_string())?
    } else {
        answer_on_stream(&mut connection_stream, 2).await?
    };
    let session = answer["result"]["sessionId"]
        .as_str()
        .ok_or_else(|| format!("session/new answered {answer}"))?
        .to_owned();
    let scoped = [
        ("Accept", "text/event-stream"),
        ("Acp-Connection-Id", connection.as_str()),
        ("Acp-Session-Id", session.as_str()),
    ];
    // The session's stream: its head is read, its body never.
    let (_stalled_stream, status, _) = http.send("GET", &scoped, "").await?;
    if status != 200 {
        return Err(format!("the session's SSE stream: status {status}"));
    }
    let (rss_before, _) = memory(pid)?;
    let cpu_before = cpu_seconds(pid)?;
    let prompt = serde_json::json!({"jsonrpc":"2.0","id":3,"method":"session/prompt",
        "params":{"sessionId": session, "prompt":[{"type":"text","text": format!("/flood {}", opts.stall_count)}]}});
    let (status, _, body) = http
        .post(
            &[
                ("Acp-Connection-Id", &connection),
                ("Acp-Session-Id", &session),
            ],
            &prompt.to_string(),
        )
        .await?;
    if status != 202 && status != 200 {
        return Err(format!("session/prompt: status {status}: {body}"));
    }
    let start = Instant::now();
    let mut peak_rss = rss_before;
    let mut hwm = 0;
    let mut alive = true;
    let mut capped = false;
    // CPU seconds at each sample, to see the server go quiet.
    let mut cpu_samples = std::collections::VecDeque::new();
    let quiet_samples = 20; // 2 s of 100 ms samples
    while start.elapsed() < Duration::from_secs(opts.stall_seconds) {
        if peak_rss > opts.stall_cap_mib * 1024 {
            capped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        match (memory(pid), cpu_seconds(pid)) {
            (Ok((rss, high)), Ok(cpu)) => {
                peak_rss = peak_rss.max(rss);
                hwm = high;
                cpu_samples.push_back(cpu);
                if cpu_samples.len() > quiet_samples {
                    cpu_samples.pop_front();
                    let used = cpu - cpu_samples.front().copied().unwrap_or(cpu);
                    if used < 0.02 {
                        break;
                    }
                }
            }
            _ => {
                alive = false;
                break;
            }
        }
    }
    let cpu = cpu_seconds(pid).map_or(0.0, |after| after - cpu_before);
    println!(
        "stalled http: /flood {} with the session's SSE stream unread for {:.1} s: server VmRSS \
         {:.1} MiB before, peak {:.1} MiB, VmHWM {:.1} MiB, {cpu:.1} CPU s{}",
        opts.stall_count,
        start.elapsed().as_secs_f64(),
        mib(rss_before),
        mib(peak_rss),
        mib(hwm),
        match (alive, capped) {
            (false, _) => " (the server exited)",
            (true, true) => " (stopped at the --stall-cap-mib cap)",
            (true, false) => "",
        }
    );
    // End the connection and its sessions, so the flood stops.
    let _ = http
        .send(
            "DELETE",
            &[("Acp-Connection-Id", &connection), ("Connection", "close")],
            "",
        )
        .await;
    Ok(())
}

async fn run(opts: &Opts) -> Result<(), String> {
    let wanted = |mode: &str| opts.only.as_deref().is_none_or(|only| only == mode);
    for transport in &opts.transports {
        if wanted("rate") {
            rate(opts, transport).await?;
        }
    }
    for transport in &opts.transports {
        if wanted("latency") {
            latency(opts, transport).await?;
        }
    }
    let needs_pid = |mode: &str| {
        if opts.server_pid.is_none() && opts.only.as_deref() == Some(mode) {
            println!("{mode}: skipped: needs --server-pid");
        }
        opts.server_pid
    };
    if wanted("idle")
        && let Some(pid) = needs_pid("idle")
    {
        for transport in &opts.transports {
            idle(opts, transport, pid).await?;
        }
    }
    if wanted("stalled")
        && let Some(pid) = needs_pid("stalled")
    {
        stalled(opts, pid).await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse_args(&args) {
        Ok(opts) => opts,
        Err(why) => {
            eprintln!("{why}");
            return ExitCode::from(2);
        }
    };
    match run(&opts).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            println!("FAIL {why}");
            ExitCode::FAILURE
        }
    }
}
