//! Runs the client cases: a first clean exchange (the baseline: does the client exit after
//! a turn, with which status, does it print the agent's text), then every selected case
//! against its own fresh client process in its own temporary directory, a few at a time,
//! results in the suite's order.
//!
//! Each case binds a loopback port and starts the client with `{agent}` replaced by the
//! scripted agent's command line ([`super::relay`]) pointing at that port; the case plays
//! the agent on the connection the relay opens.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use acp_host::supervisor::recovery::ExitStatus;
use serde_json::json;
use smol::io::AsyncReadExt;
use smol::net::{TcpListener, TcpStream};

use super::case::{ClientCase, Tier};
use super::cx::{ANSWER, Client, Cx, Incoming};
use super::relay::HELLO;
use crate::process::{AgentCommand, AgentProcess, ProcessKey};
use crate::runner::{absolute_argv, judged, selected};
use crate::subject::scaled;
use crate::verdict::{Status, Verdict, fail};

/// The placeholder in the client's command line for the scripted agent's command.
pub const PLACEHOLDER: &str = "{agent}";

/// How a client run is made.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The client's command line, with [`PLACEHOLDER`] where its agent's command goes.
    pub client: Vec<String>,
    /// The command that starts the scripted agent, before its `TOKEN@ADDR` argument:
    /// `acp-cli conform --scripted-agent`.
    pub relay: Vec<String>,
    /// Which cases ([`crate::runner::Options::only`]).
    pub only: Option<String>,
    /// Every timeout is multiplied by this.
    pub timeout_scale: f64,
    /// Cases run at the same time (1 when the command has no placeholder).
    pub jobs: usize,
}

impl ClientOptions {
    /// Defaults: all cases, scale 1, up to four at a time.
    pub fn new(client: Vec<String>, relay: Vec<String>) -> ClientOptions {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        ClientOptions {
            client,
            relay,
            only: None,
            timeout_scale: 1.0,
            jobs: cores.clamp(1, 4),
        }
    }
}

/// The result of one client case.
#[derive(Clone, Debug)]
pub struct ClientCaseReport {
    /// `group/name`.
    pub id: String,
    /// Its group.
    pub group: &'static str,
    /// The rule it checks.
    pub rule: &'static str,
    /// How much the rule weighs.
    pub tier: Tier,
    /// Passed, failed or skipped.
    pub status: Status,
    /// What was observed, or why it failed or was skipped.
    pub detail: String,
    /// How long it took, in milliseconds.
    pub ms: u128,
}

/// A whole client run.
#[derive(Clone, Debug)]
pub struct ClientReport {
    /// The client's command line as given.
    pub client: Vec<String>,
    /// Every case run, in the suite's order.
    pub cases: Vec<ClientCaseReport>,
}

impl ClientReport {
    /// How many cases ended with `status`.
    pub fn count(&self, status: Status) -> usize {
        self.cases.iter().filter(|c| c.status == status).count()
    }

    /// The case with this id.
    pub fn case(&self, id: &str) -> Option<&ClientCaseReport> {
        self.cases.iter().find(|c| c.id == id)
    }

    /// Failed cases whose tier fails the run.
    pub fn failing(&self) -> impl Iterator<Item = &ClientCaseReport> {
        self.cases
            .iter()
            .filter(|c| c.status == Status::Fail && c.tier.fails_run())
    }

    /// 0 when no MANDATORY or CAPABILITY case failed, else 1.
    pub fn exit_code(&self) -> i32 {
        if self.failing().next().is_none() {
            0
        } else {
            1
        }
    }
}

/// Why a client run could not happen (exit status 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientRunError {
    /// The first exchange failed: the client did not start, never started the agent, or
    /// never finished a plain turn.
    Start(String),
    /// `--only` matched no case.
    NoCases(String),
}

impl std::fmt::Display for ClientRunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientRunError::Start(why) => write!(f, "the client's first turn failed: {why}"),
            ClientRunError::NoCases(pattern) => write!(f, "--only {pattern} matches no case"),
        }
    }
}

/// What the run's first, clean turn showed about the client.
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    /// How it ended after a clean turn; `None` when it kept running (an interactive client).
    pub exit: Option<ExitStatus>,
    /// Whether the agent's text of that turn appeared on its stdout.
    pub prints_text: bool,
}

/// The text the baseline turn sends.
pub(crate) const BASELINE_TEXT: &str = "conform-baseline-text";

/// Where the scripted agent connects: a port of the case's own, or, when the client's
/// command has no placeholder, the run's one port (cases then run one at a time).
enum Port<'a> {
    Own,
    Shared(&'a std::net::TcpListener, &'a str),
}

/// The scripted agent's command line for a connection to `addr` with `token`.
pub fn agent_command(relay: &[String], token: &str, addr: &str) -> Vec<String> {
    let mut argv = relay.to_vec();
    argv.push(format!("{token}@{addr}"));
    argv
}

/// `argv` with the placeholder replaced: an argument that is exactly `{agent}` becomes the
/// agent's words; inside a longer argument it becomes them quoted for a shell.
pub fn substitute(argv: &[String], agent: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for arg in argv {
        if arg == PLACEHOLDER {
            out.extend(agent.iter().cloned());
        } else if arg.contains(PLACEHOLDER) {
            let quoted: Vec<String> = agent.iter().map(|w| shell_quote(w)).collect();
            out.push(arg.replace(PLACEHOLDER, &quoted.join(" ")));
        } else {
            out.push(arg.clone());
        }
    }
    out
}

/// `word` quoted for a POSIX shell.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./-_".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Whether the client's command line names its agent with the placeholder.
pub fn has_placeholder(argv: &[String]) -> bool {
    argv.iter().any(|a| a.contains(PLACEHOLDER))
}

/// A fresh empty directory for one client process.
fn scratch_dir() -> std::io::Result<PathBuf> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("acp-conform-client-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    dir.canonicalize()
}

fn token() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("c{}x{n}x{nanos}", std::process::id())
}

/// The token of the one agent command printed for a client without a placeholder.
pub const SHARED_TOKEN: &str = "shared";

/// The shared listener and the agent command printed for a client without a placeholder.
pub fn shared_port() -> std::io::Result<(std::net::TcpListener, String)> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?.to_string();
    Ok((listener, addr))
}

/// Runs the selected cases of `cases` against the client; `each` sees every result in the
/// suite's order as soon as it and all before it are done. `shared` is the listener (and
/// its address) a client without the placeholder was pointed at.
pub fn run(
    cases: &[ClientCase],
    options: &ClientOptions,
    shared: Option<(&std::net::TcpListener, &str)>,
    mut each: impl FnMut(&ClientCaseReport),
) -> Result<ClientReport, ClientRunError> {
    let chosen: Vec<ClientCase> = cases
        .iter()
        .filter(|c| selected(&c.id(), options.only.as_deref()))
        .copied()
        .collect();
    if chosen.is_empty() {
        return Err(ClientRunError::NoCases(
            options.only.clone().unwrap_or_default(),
        ));
    }
    let port = match shared {
        Some((listener, _)) => Port::Shared(listener, SHARED_TOKEN),
        None => Port::Own,
    };
    let jobs = if shared.is_some() {
        1
    } else {
        options.jobs.max(1)
    };
    let baseline = Arc::new(probe(options, &port)?);
    let next = AtomicUsize::new(0);
    let (sender, receiver) = std::sync::mpsc::channel();
    let mut reports = Vec::with_capacity(chosen.len());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let sender = sender.clone();
            let (chosen, next, baseline, port) = (&chosen, &next, &baseline, &port);
            scope.spawn(move || {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = chosen.get(n) else { break };
                    let report = run_case(case, baseline, options, port);
                    if sender.send((n, report)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut waiting = BTreeMap::new();
        for (n, report) in receiver {
            waiting.insert(n, report);
            while let Some(report) = waiting.remove(&reports.len()) {
                each(&report);
                reports.push(report);
            }
        }
    });
    Ok(ClientReport {
        client: options.client.clone(),
        cases: reports,
    })
}

/// The first exchange: a plain turn with one text chunk, then how the client ends.
fn probe(options: &ClientOptions, port: &Port<'_>) -> Result<Baseline, ClientRunError> {
    let dir = scratch_dir().map_err(|e| ClientRunError::Start(e.to_string()))?;
    let placeholder = Arc::new(Baseline::default());
    let result = smol::block_on(async {
        let mut cx = connect(options, port, &dir, placeholder)
            .await
            .map_err(|o| ClientRunError::Start(o.detail))?;
        let outcome = async {
            let opened = cx.open().await?;
            cx.say(&opened.session, BASELINE_TEXT).await;
            cx.end_turn(&opened, "end_turn").await;
            let exit = cx.wait_exit().await;
            Ok::<_, crate::verdict::Outcome>(exit)
        }
        .await;
        let exit = outcome.map_err(|o| ClientRunError::Start(o.detail));
        let prints_text = cx.stdout_text().contains(BASELINE_TEXT);
        close(&mut cx).await;
        Ok(Baseline {
            exit: exit?,
            prints_text,
        })
    });
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Starts the client in `dir` and waits for its agent to connect.
async fn connect(
    options: &ClientOptions,
    port: &Port<'_>,
    dir: &std::path::Path,
    baseline: Arc<Baseline>,
) -> Result<Cx, crate::verdict::Outcome> {
    let own;
    let (listener_addr, token) = match port {
        Port::Own => {
            own = TcpListener::bind("127.0.0.1:0")
                .await
                .map_err(|e| fail(format!("cannot bind a loopback port: {e}")))?;
            let addr = own
                .local_addr()
                .map_err(|e| fail(e.to_string()))?
                .to_string();
            (Some((&own, addr)), token())
        }
        Port::Shared(_, token) => (None, token.to_string()),
    };
    let argv = match &listener_addr {
        Some((_, addr)) => substitute(
            &absolute_argv(&options.client),
            &agent_command(&options.relay, &token, addr),
        ),
        None => absolute_argv(&options.client),
    };
    let Some((program, args)) = argv.split_first() else {
        return Err(fail("no client command"));
    };
    let command = AgentCommand {
        program: program.clone(),
        args: args.to_vec(),
        env: std::env::vars().collect(),
        cwd: dir.to_path_buf(),
    };
    let (sender, events) = smol::channel::unbounded();
    let process = AgentProcess::spawn(&command, ProcessKey(0), sender)
        .map_err(|e| fail(format!("cannot start the client {program}: {e}")))?;
    let mut client = Client {
        process,
        events,
        stdout: Vec::new(),
        stderr: Vec::new(),
        exit: None,
    };
    let limit = scaled(ANSWER + ANSWER, options.timeout_scale);
    let deadline = Instant::now() + limit;
    let accepted = loop {
        let accept = async {
            match (&listener_addr, port) {
                (Some((listener, _)), _) => listener.accept().await.map(|(s, _)| s),
                (None, Port::Shared(listener, _)) => match listener.try_clone() {
                    Ok(listener) => smol::unblock(move || listener.accept().map(|(s, _)| s))
                        .await
                        .and_then(TcpStream::try_from),
                    Err(e) => Err(e),
                },
                (None, Port::Own) => unreachable!("an own port has a listener"),
            }
        };
        let events = client.events.clone();
        let event = async move { events.recv().await.ok().map(|(_, e)| Err(e)) };
        let timer = async {
            smol::Timer::at(deadline).await;
            None
        };
        match smol::future::or(
            async { Some(Ok(accept.await)) },
            smol::future::or(event, timer),
        )
        .await
        {
            Some(Ok(Ok(stream))) => break stream,
            Some(Ok(Err(e))) => {
                return Err(fail(format!(
                    "accepting the agent's connection failed: {e}"
                )));
            }
            Some(Err(event)) => {
                client.take(event);
                if let Some(status) = client.exit {
                    let _ = client.process.kill_group();
                    return Err(fail(format!(
                        "the client exited ({status}) without starting its agent{}",
                        client.stderr_tail()
                    )));
                }
            }
            None => {
                let _ = client.process.kill_group();
                return Err(fail(format!(
                    "the client did not start its agent within {limit:?}{}",
                    client.stderr_tail()
                )));
            }
        }
    };
    let _ = accepted.set_nodelay(true);
    let (lines, incoming) = smol::channel::unbounded();
    let mut reader = accepted.clone();
    // The hello line first: the right token, or the connection is not ours.
    let mut hello = Vec::new();
    let mut byte = [0u8; 1];
    while hello.len() < 256 {
        match reader.read(&mut byte).await {
            Ok(1) if byte[0] == b'\n' => break,
            Ok(1) => hello.push(byte[0]),
            _ => break,
        }
    }
    if hello != format!("{HELLO} {token}").into_bytes() {
        let _ = client.process.kill_group();
        return Err(fail(format!(
            "the agent's connection did not say the case's token (got {:?})",
            String::from_utf8_lossy(&hello)
        )));
    }
    smol::spawn(async move {
        let mut buffer = vec![0u8; 64 * 1024];
        let mut line = Vec::new();
        loop {
            match reader.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    for &b in &buffer[..n] {
                        if b == b'\n' {
                            let mut done = std::mem::take(&mut line);
                            if done.last() == Some(&b'\r') {
                                done.pop();
                            }
                            if !done.iter().all(u8::is_ascii_whitespace) {
                                let _ = lines.send(Incoming::Line(done)).await;
                            }
                        } else {
                            line.push(b);
                        }
                    }
                }
            }
        }
        if !line.is_empty() {
            let _ = lines.send(Incoming::Line(line)).await;
        }
        let _ = lines.send(Incoming::Eof).await;
    })
    .detach();
    Ok(Cx::new(
        client,
        accepted,
        incoming,
        options.timeout_scale,
        baseline,
    ))
}

/// The end of a case: the client gets a moment to end by itself (its stdin is closed
/// first), then its whole process group is killed; what it sent meanwhile still counts.
async fn close(cx: &mut Cx) {
    if cx.client.exit.is_none() && cx.baseline.exit.is_some() {
        let _ = cx.wait_exit().await;
    }
    cx.client.process.close_stdin();
    if cx.client.exit.is_none() {
        let deadline = Instant::now() + Duration::from_millis(300);
        while cx.client.exit.is_none() && cx.pull(deadline).await {}
    }
    let _ = cx.client.process.kill_group();
    cx.hang_up().await;
    let deadline = Instant::now() + Duration::from_secs(2);
    while (!cx.eof || cx.client.exit.is_none()) && cx.pull(deadline).await {}
    cx.finish_monitor();
}

/// One case against a fresh client; always cleans up its process group and directory.
fn run_case(
    case: &ClientCase,
    baseline: &Arc<Baseline>,
    options: &ClientOptions,
    port: &Port<'_>,
) -> ClientCaseReport {
    let started = Instant::now();
    let verdict: Verdict = match scratch_dir() {
        Err(e) => Err(fail(format!("cannot make a scratch directory: {e}"))),
        Ok(dir) => {
            let verdict = smol::block_on(async {
                let mut cx = connect(options, port, &dir, baseline.clone()).await?;
                let limit = scaled(ANSWER * 6, options.timeout_scale);
                let timeout = async {
                    smol::Timer::after(limit).await;
                    Err(fail(format!("the case did not finish within {limit:?}")))
                };
                let verdict = smol::future::or((case.run)(&mut cx), timeout).await;
                close(&mut cx).await;
                judged(verdict, &cx.findings)
            });
            let _ = std::fs::remove_dir_all(&dir);
            verdict
        }
    };
    let (mut status, detail) = match verdict {
        Ok(detail) => (Status::Pass, detail),
        Err(outcome) => (outcome.status, outcome.detail),
    };
    // Informational cases report; they never fail.
    if case.tier == Tier::Informational && status == Status::Fail {
        status = Status::Skip;
    }
    ClientCaseReport {
        id: case.id(),
        group: case.group,
        rule: case.rule,
        tier: case.tier,
        status,
        detail,
        ms: started.elapsed().as_millis(),
    }
}

/// The `--json` document of a client run.
pub fn to_json(report: &ClientReport) -> serde_json::Value {
    let cases: Vec<_> = report
        .cases
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "group": c.group,
                "rule": c.rule,
                "tier": c.tier.word(),
                "status": c.status.json(),
                "detail": c.detail,
                "ms": c.ms as u64,
            })
        })
        .collect();
    json!({
        "client": report.client,
        "cases": cases,
        "passed": report.count(Status::Pass),
        "failed": report.count(Status::Fail),
        "skipped": report.count(Status::Skip),
        "conformant": report.exit_code() == 0,
    })
}

/// The `--junit` file of a client run: the agent suite's writer
/// ([`crate::report::junit`]), one `testsuite` per group.
pub fn to_junit(report: &ClientReport) -> String {
    let cases: Vec<crate::report::JunitCase<'_>> = report
        .cases
        .iter()
        .map(|c| crate::report::JunitCase {
            group: c.group,
            id: &c.id,
            rule: c.rule,
            tier: c.tier,
            status: c.status,
            detail: &c.detail,
            ms: c.ms,
        })
        .collect();
    crate::report::junit("acp-cli conform --client", &cases)
}

/// `PASS [MANDATORY] handshake/initialize-first — <detail>`.
pub fn case_line(case: &ClientCaseReport) -> String {
    format!(
        "{} [{}] {} — {}",
        case.status.word(),
        case.tier.word(),
        case.id,
        case.detail
    )
}

/// The summary after the case lines: one line per group, the totals, and the verdict.
pub fn summary(report: &ClientReport) -> String {
    let mut groups: Vec<&'static str> = Vec::new();
    for case in &report.cases {
        if !groups.contains(&case.group) {
            groups.push(case.group);
        }
    }
    let mut out = String::new();
    for group in groups {
        let count = |status| {
            report
                .cases
                .iter()
                .filter(|c| c.group == group && c.status == status)
                .count()
        };
        out.push_str(&format!(
            "{group}: {} passed, {} failed, {} skipped\n",
            count(Status::Pass),
            count(Status::Fail),
            count(Status::Skip)
        ));
    }
    out.push_str(&format!(
        "{} passed, {} failed, {} skipped\n",
        report.count(Status::Pass),
        report.count(Status::Fail),
        report.count(Status::Skip)
    ));
    let failing = report.failing().count();
    let advisory = report.count(Status::Fail) - failing;
    out.push_str(&match (failing, advisory) {
        (0, 0) => String::from("verdict: conformant\n"),
        (0, n) => format!("verdict: conformant, with {n} advisory failure(s)\n"),
        (n, _) => format!("verdict: not conformant: {n} MANDATORY or CAPABILITY failure(s)\n"),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// R-CLIENT-1: `{agent}` as an argument becomes the agent's words; inside one, a
    /// shell-quoted command line.
    #[test]
    fn the_placeholder_is_replaced() {
        let agent = words(&[
            "/bin/acp cli",
            "conform",
            "--scripted-agent",
            "t@127.0.0.1:9",
        ]);
        assert_eq!(
            substitute(&words(&["client", "--", "{agent}"]), &agent),
            words(&[
                "client",
                "--",
                "/bin/acp cli",
                "conform",
                "--scripted-agent",
                "t@127.0.0.1:9"
            ])
        );
        assert_eq!(
            substitute(&words(&["client", "--agent={agent}"]), &agent),
            words(&[
                "client",
                "--agent='/bin/acp cli' conform --scripted-agent t@127.0.0.1:9"
            ])
        );
        assert!(has_placeholder(&words(&["x", "--agent={agent}"])));
        assert!(!has_placeholder(&words(&["x"])));
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
