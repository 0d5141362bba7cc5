//! `acp-cli client`: run one agent, send one prompt, stream the answer.
//!
//! The agent runs under the same supervisor machinery as the REPL's servers (a one-server
//! config made from the command line), so it gets its own process group, the startup and
//! turn deadlines, and the stop sequence (close stdin, SIGTERM, SIGKILL of the group) when
//! the command ends.
//!
//! Output: the agent's answer on stdout as it arrives; thoughts, plans, tool calls, the
//! questions and the stop reason on stderr. Exit status: 0 when the turn ended, 1 when the
//! agent could not be started, failed its handshake, failed the prompt, died or timed out,
//! 130 after Ctrl-C. A closed stdout ends the command early, as [`crate::stdout`] says.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use acp_core::conn::client::TurnOutcome;
use acp_host::supervisor::answer::Decision;
use acp_host::supervisor::config::AcpConfig;
use acp_host::supervisor::env::SCRUBBED_KEYS;
use acp_host::supervisor::interaction::InteractionId;
use acp_host::supervisor::lifecycle::{Input, Notice, ServerState};
use acp_host::supervisor::recovery::ExitStatus;
use smol::future::FutureExt as _;

use super::glue::{AgentEvent, Answer, Ask, Glue, Question};
use super::render;
use super::terminal::{Interrupts, RawMode, StdinLines};
use super::updates;
use crate::host::runner::{AgentRunner, StopTimings};

/// How the client answers permission requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Approve {
    /// Pick an allow option for every request.
    Allow,
    /// Pick a reject option for every request.
    Reject,
    /// Ask: a single key at a terminal, one line each from piped stdin.
    Ask,
}

/// Default turn deadline without `--timeout`.
pub(crate) const DEFAULT_TIMEOUT_SECS: f64 = 600.0;

/// How many of the agent's last stderr lines a failure message shows.
pub(crate) const FAILURE_STDERR_LINES: usize = 5;

/// Exit status after Ctrl-C.
pub(crate) const EXIT_INTERRUPTED: i32 = 130;

/// The arguments of `acp-cli client`.
#[derive(Clone, Debug, clap::Args)]
#[command(
    about = "Run an ACP agent, send it one prompt and stream its answer",
    override_usage = "acp-cli client [OPTIONS] -- <AGENT>...\n       acp-cli client [OPTIONS] --url <URL> [--token-file <FILE>]",
    after_help = "Examples:\n  \
        acp-cli client --prompt 'list the files' -- my-agent --stdio\n  \
        echo 'review main.rs' | acp-cli client --approve allow --cwd ./proj -- python agent.py\n  \
        ACP_TOKEN=... acp-cli client --prompt hi --url wss://devbox.example/acp\n\n\
        The answer goes to stdout; thoughts, plans, tool calls and the stop reason to stderr.\n\
        Through the client the agent may read and write files inside --cwd only; with --no-fs\n\
        it works on files itself. Ctrl-C cancels the turn; a second Ctrl-C stops the agent.\n\
        Exit status: 0 when the turn ended, 1 on failure, 130 after Ctrl-C."
)]
pub struct ClientArgs {
    /// The session's working directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// How to answer permission requests [default: ask when stdin is a terminal, else
    /// reject]. Without `ask`, questions for text are answered `cancelled`.
    #[arg(long, value_enum)]
    pub approve: Option<Approve>,
    /// Seconds the turn may take (decimals allowed); then `session/cancel` is sent and the
    /// command fails. The deadline pauses while a question waits for you.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TIMEOUT_SECS)]
    pub timeout: f64,
    /// The prompt (default: all of stdin).
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    /// Do not offer `fs/read_text_file` and `fs/write_text_file` to the agent (no `fs`
    /// client capability): the agent then reads and writes files itself.
    #[arg(long)]
    pub no_fs: bool,
    /// Drive the remote agent at URL instead of a command: ws:// or wss:// (WebSocket),
    /// http:// or https:// (Streamable HTTP).
    #[arg(long, value_name = "URL", conflicts_with = "agent")]
    pub url: Option<String>,
    /// With --url: the bearer token is in FILE [default: the ACP_TOKEN environment
    /// variable].
    #[arg(long, value_name = "FILE", requires = "url")]
    pub token_file: Option<PathBuf>,
    /// The agent's command line. It runs in --cwd; a program path with a slash is taken
    /// from the current directory.
    #[arg(last = true, required_unless_present = "url", value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// Where the command stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Handshake,
    Turn,
    Cancelling,
}

/// Runs the command; returns the exit status.
pub fn run(mut args: ClientArgs) -> i32 {
    if let Some(url) = &args.url {
        // R-NETC-8: the remote agent is the bridge's process.
        match crate::remote::agent::bridge_command(url, args.token_file.as_deref()) {
            Ok(argv) => args.agent = argv,
            Err(message) => {
                eprintln!("acp-cli client: {message}");
                return 1;
            }
        }
    }
    match prepare(&args) {
        Ok((cwd, prompt, approve)) => smol::block_on(Client::new(args, cwd, prompt, approve).run()),
        Err(message) => {
            eprintln!("acp-cli client: {message}");
            1
        }
    }
}

/// The absolute cwd, the prompt and the policy, or why not.
fn prepare(args: &ClientArgs) -> Result<(PathBuf, String, Approve), String> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    let cwd = std::path::absolute(&cwd).map_err(|e| format!("bad --cwd: {e}"))?;
    if !cwd.is_dir() {
        return Err(format!("--cwd {} is not a directory", cwd.display()));
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(format!(
            "--timeout must be a positive number of seconds, got {}",
            args.timeout
        ));
    }
    let stdin_is_terminal = std::io::stdin().is_terminal();
    let prompt = match &args.prompt {
        Some(text) => text.clone(),
        None => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
            text
        }
    };
    if prompt.trim().is_empty() {
        return Err(String::from(
            "the prompt is empty (give --prompt TEXT or write it to stdin)",
        ));
    }
    let approve = args.approve.unwrap_or(if stdin_is_terminal {
        Approve::Ask
    } else {
        Approve::Reject
    });
    Ok((cwd, prompt, approve))
}

/// A one-server config for an agent named on the command line: `argv` run in `cwd`, turns
/// limited to `timeout_ms`, no automatic restarts. The person named this agent, so it gets
/// the provider keys the host scrubs for project agents (handed over as `env` references).
pub(crate) fn single_agent_config(
    name: &str,
    argv: &[String],
    cwd: &Path,
    timeout_ms: u64,
) -> AcpConfig {
    let keys: serde_json::Map<String, serde_json::Value> = SCRUBBED_KEYS
        .iter()
        .filter(|k| std::env::var_os(k).is_some())
        .map(|k| {
            (
                k.to_string(),
                serde_json::Value::String(format!("${{{k}}}")),
            )
        })
        .collect();
    // A program path with a slash is meant from where the person is, not from `cwd`, where
    // the agent runs.
    let program = argv.first().map(String::as_str).unwrap_or("");
    let program = if program.contains('/') {
        std::path::absolute(program)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| program.to_owned())
    } else {
        program.to_owned()
    };
    let config = serde_json::json!({"servers": {name: {
        "command": program,
        "args": argv.get(1..).unwrap_or(&[]),
        "env": keys,
        "cwd": cwd.to_string_lossy(),
        "requestTimeoutMs": timeout_ms.max(1),
        "startupTimeoutMs": timeout_ms.max(30_000),
        "maxRecoverableRestarts": 0,
    }}});
    let lookup = |var: &str| std::env::var(var).ok();
    AcpConfig::parse(&config.to_string(), "command line", lookup).unwrap_or_default()
}

/// Runs a `terminal` auth method: the agent's command line with the method's `args` and
/// `env`, in `cwd`, on this process's terminal; waits for it (R-AUTH-8). A program path with
/// a slash is taken from the current directory, as for the agent itself.
pub(crate) async fn run_login(
    agent: &[String],
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
) -> Result<(), String> {
    let Some(program) = agent.first() else {
        return Err("no agent command".to_owned());
    };
    let program = if program.contains('/') {
        std::path::absolute(program).unwrap_or_else(|_| PathBuf::from(program))
    } else {
        PathBuf::from(program)
    };
    eprintln!("Running {}", render::command_line(agent, args));
    let mut command = std::process::Command::new(program);
    command
        .args(&agent[1..])
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd);
    let status = smol::unblock(move || command.status())
        .await
        .map_err(|e| format!("cannot start it: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("it ended with {status}"))
    }
}

/// The name an agent's command line goes by: its program's file name.
pub(crate) fn agent_name(argv: &[String]) -> String {
    argv.first()
        .and_then(|program| Path::new(program).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| String::from("agent"))
}

/// This process's environment, as the runner takes it.
pub(crate) fn host_env() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

struct Client {
    runner: AgentRunner<Question>,
    glue: Glue,
    name: String,
    prompt: String,
    approve: Approve,
    timeout: f64,
    phase: Phase,
    /// Questions shown or waiting to be shown, oldest first (the first is on screen).
    asking: Vec<InteractionId>,
    exit: Option<ExitStatus>,
    /// The answer so far ended without a newline.
    open_line: bool,
    /// Single keys are read (a permission question is on screen at a terminal).
    raw: Option<RawMode>,
    /// The agent's command line, for a `terminal` auth method (R-AUTH-8).
    agent: Vec<String>,
    /// Where the agent runs.
    cwd: PathBuf,
    /// stdin is a terminal: a `terminal` auth method can run there (R-AUTH-7).
    terminal_auth: bool,
    /// The agent is a remote one behind the bridge (`--url`): its failures are the
    /// bridge's one line (R-NETC-4).
    remote: bool,
}

impl Client {
    fn new(args: ClientArgs, cwd: PathBuf, prompt: String, approve: Approve) -> Client {
        let name = match &args.url {
            Some(url) => crate::remote::agent::remote_name(url),
            None => agent_name(&args.agent),
        };
        let timeout_ms = (args.timeout * 1000.0).ceil() as u64;
        let config = single_agent_config(&name, &args.agent, &cwd, timeout_ms);
        let host_env = host_env();
        let runner = AgentRunner::new(
            &config,
            &cwd,
            host_env,
            StopTimings::default(),
            std::process::id(),
        );
        let mut glue = Glue::new();
        glue.offer_fs(!args.no_fs);
        let terminal_auth = std::io::stdin().is_terminal();
        glue.offer_terminal_auth(terminal_auth);
        Client {
            agent: args.agent.clone(),
            cwd,
            terminal_auth,
            remote: args.url.is_some(),
            runner,
            glue,
            name,
            prompt,
            approve,
            timeout: args.timeout,
            phase: Phase::Handshake,
            asking: Vec::new(),
            exit: None,
            open_line: false,
            raw: None,
        }
    }

    async fn run(mut self) -> i32 {
        let code = self.drive().await;
        self.raw = None;
        self.end_line();
        self.runner.stop_all().await;
        code
    }

    async fn drive(&mut self) -> i32 {
        let name = self.name.clone();
        let _ = self.runner.handle(&name, Input::Start);
        if let Some(error) = self.failed_start() {
            eprintln!("acp-cli client: {error}");
            return 1;
        }
        let mut interrupts = Interrupts::new();
        let mut stdin = StdinLines::new();
        // Each pass handles one runner event, one answer line or one Ctrl-C; the runner
        // reports `None` once nothing can happen any more.
        loop {
            // Handling an event may carry out a command that brings more; each round takes
            // events the agent already sent, which are finite.
            loop {
                let events = self.glue.take_events();
                if events.is_empty() {
                    break;
                }
                for (_, event) in events {
                    if let Some(code) = self.on_event(event).await {
                        return code;
                    }
                }
            }
            enum Wake {
                Runner(Option<crate::host::runner::RunnerEvent<Question>>),
                Line(Option<String>),
                Key(Option<Vec<u8>>),
                Interrupt,
            }
            let reading = !self.asking.is_empty();
            let keys = self.raw.is_some();
            let wake = async { Wake::Runner(self.runner.next_event().await) }
                .or(async {
                    if reading && keys {
                        Wake::Key(stdin.next_key().await)
                    } else if reading {
                        Wake::Line(stdin.next().await)
                    } else {
                        std::future::pending().await
                    }
                })
                .or(async {
                    interrupts.next().await;
                    Wake::Interrupt
                })
                .await;
            let step = match wake {
                Wake::Runner(None) => Some(self.gone()),
                Wake::Runner(Some(event)) => {
                    let events = self.glue.on_runner_event(&mut self.runner, event).await;
                    let mut result = None;
                    for (_, event) in events {
                        if let Some(code) = self.on_event(event).await {
                            result = Some(code);
                            break;
                        }
                    }
                    result
                }
                Wake::Line(line) => {
                    self.on_answer(line).await;
                    None
                }
                Wake::Key(Some(key)) => {
                    match render::permission_key(&key) {
                        Some(decision) => self.decide(decision).await,
                        None => eprintln!("{}", render::PERMISSION_HINT),
                    }
                    None
                }
                Wake::Key(None) => {
                    self.on_answer(None).await;
                    None
                }
                Wake::Interrupt => self.on_interrupt(),
            };
            if let Some(code) = step {
                return code;
            }
        }
    }

    /// The spawn failed: the lifecycle's error.
    fn failed_start(&self) -> Option<String> {
        let lifecycle = self.runner.supervisor().server(&self.name)?;
        (lifecycle.state() == ServerState::Failed).then(|| {
            lifecycle
                .last_error()
                .unwrap_or("cannot start the agent")
                .to_owned()
        })
    }

    async fn on_event(&mut self, event: AgentEvent) -> Option<i32> {
        match event {
            AgentEvent::Ready => {
                let (name, prompt) = (self.name.clone(), self.prompt.clone());
                if let Err(error) = self.glue.prompt(&mut self.runner, &name, &prompt).await {
                    eprintln!("acp-cli client: cannot send the prompt: {error}");
                    return Some(1);
                }
                self.phase = Phase::Turn;
                eprintln!("Sending to {}...", acp_host::sanitize::sanitize(&name));
                None
            }
            AgentEvent::AuthRequired { failure, methods } => {
                let terminal = methods.iter().find_map(|m| m.terminal.clone());
                if terminal.is_some() && self.terminal_auth {
                    eprintln!("acp-cli client: {failure}");
                } else {
                    eprintln!("acp-cli client: handshake failed: {failure}");
                }
                if !methods.is_empty() {
                    eprint!("{}", render::auth_methods(&methods, &self.agent));
                }
                match terminal {
                    Some(login) if self.terminal_auth => {
                        match run_login(&self.agent, &login.args, &login.env, &self.cwd).await {
                            Ok(()) => {
                                let name = self.name.clone();
                                self.glue.retry_session(&mut self.runner, &name).await;
                                None
                            }
                            Err(why) => {
                                eprintln!("acp-cli client: the login failed: {why}");
                                Some(1)
                            }
                        }
                    }
                    Some(login) => {
                        eprintln!(
                            "acp-cli client: log in at a terminal first: {}",
                            render::command_line(&self.agent, &login.args)
                        );
                        Some(1)
                    }
                    None => Some(1),
                }
            }
            AgentEvent::HandshakeFailed(failure) => {
                // An error answer is the remote agent's own; no answer means the bridge
                // ended, with its line.
                if failure.code.is_none()
                    && let Some(code) = self.remote_failure().await
                {
                    return Some(code);
                }
                let mut message = format!("acp-cli client: handshake failed: {failure}");
                if let Some(status) = self.exit {
                    message.push_str(&format!(" (the agent ended: {status})"));
                }
                eprintln!("{message}");
                self.print_stderr_tail();
                Some(1)
            }
            AgentEvent::Text(text) => {
                if !crate::stdout::print(format_args!("{text}")) {
                    // Nobody reads the answer any more: stop (the status is then
                    // `crate::stdout::exit_code`'s).
                    return Some(0);
                }
                self.open_line = !text.is_empty() && !text.ends_with('\n')
                    || (self.open_line && text.is_empty());
                None
            }
            AgentEvent::Aside(text) => {
                eprintln!("{text}");
                None
            }
            AgentEvent::UnknownUpdate(tag) => {
                let styled = std::io::stderr().is_terminal();
                eprintln!("{}", render::dim(&updates::unknown_line(&tag), styled));
                None
            }
            AgentEvent::Commands(commands) => {
                eprintln!("{}", updates::commands_line(&commands));
                None
            }
            AgentEvent::Asked(id) => self.on_question(id).await,
            AgentEvent::QuestionGone(id) => {
                if self.asking.first() == Some(&id) {
                    self.raw = None;
                    eprintln!("(question withdrawn by the agent)");
                }
                self.asking.retain(|q| *q != id);
                self.show_question();
                None
            }
            AgentEvent::TurnEnded(outcome) => Some(self.on_turn_end(outcome)),
            AgentEvent::Exited(status) => {
                self.exit = Some(status);
                None
            }
            AgentEvent::Notice(Notice::TurnTimedOut) => {
                self.end_line();
                eprintln!(
                    "acp-cli client: no answer within {} s; sent session/cancel",
                    self.timeout
                );
                Some(1)
            }
            AgentEvent::Notice(Notice::StartupTimedOut) => {
                eprintln!("acp-cli client: the agent did not finish the handshake in time");
                self.print_stderr_tail();
                Some(1)
            }
            AgentEvent::Notice(_) => None,
        }
    }

    async fn on_question(&mut self, id: InteractionId) -> Option<i32> {
        let answer = match self.approve {
            Approve::Ask => {
                self.asking.push(id);
                if self.asking.len() == 1 {
                    self.show_question();
                }
                return None;
            }
            Approve::Allow => Decision::AllowOnce,
            Approve::Reject => Decision::RejectOnce,
        };
        let question = self.question(id)?;
        let (answer, said) = match question.ask {
            Ask::Permission(_) => (
                Answer::Decision(answer),
                render::permission_confirmation(answer).to_owned(),
            ),
            Ask::Input(q) => (
                Answer::Text(None),
                format!(
                    "(no one to ask: \"{}\" answered cancelled)",
                    acp_host::sanitize::sanitize(&q)
                ),
            ),
        };
        eprintln!("{said}");
        let name = self.name.clone();
        self.glue.answer(&mut self.runner, &name, id, answer).await;
        None
    }

    fn question(&self, id: InteractionId) -> Option<Question> {
        self.runner
            .supervisor()
            .interactions()
            .get(id)
            .map(|i| i.ticket.clone())
    }

    /// Shows the oldest question waiting, if any.
    fn show_question(&mut self) {
        let Some(&id) = self.asking.first() else {
            return;
        };
        let Some(question) = self.question(id) else {
            return;
        };
        self.end_line();
        match &question.ask {
            Ask::Permission(params) => {
                // Single keys from before the prompt appears, so a quick key is not echoed
                // and left waiting for Enter.
                if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                    self.raw = RawMode::enter();
                }
                eprintln!("{}", render::permission_prompt(&self.name, params));
            }
            Ask::Input(q) => {
                eprintln!("{}", render::input_prompt(&self.name, q));
                eprint!("> ");
            }
        }
    }

    /// A line typed while a question is shown; `None` is stdin's end (answered as Esc).
    async fn on_answer(&mut self, line: Option<String>) {
        let Some(&id) = self.asking.first() else {
            return;
        };
        let Some(question) = self.question(id) else {
            self.asking.remove(0);
            return;
        };
        let name = self.name.clone();
        match Answer::typed(&question.ask, line.as_deref()) {
            Ok((answer, note)) => {
                self.raw = None;
                if let Some(note) = note {
                    eprintln!("{note}");
                }
                self.glue.answer(&mut self.runner, &name, id, answer).await;
            }
            Err(hint) => {
                eprintln!("{hint}");
                return;
            }
        }
        self.asking.retain(|q| *q != id);
        self.show_question();
    }

    /// Answers the permission question on screen with `decision` (a key at a terminal).
    async fn decide(&mut self, decision: Decision) {
        let Some(&id) = self.asking.first() else {
            return;
        };
        self.raw = None;
        eprintln!("{}", render::permission_confirmation(decision));
        let name = self.name.clone();
        self.glue
            .answer(&mut self.runner, &name, id, Answer::Decision(decision))
            .await;
        self.asking.retain(|q| *q != id);
        self.show_question();
    }

    fn on_interrupt(&mut self) -> Option<i32> {
        self.end_line();
        match self.phase {
            Phase::Turn => {
                eprintln!("Cancelling the turn… (Ctrl-C again stops the agent)");
                let name = self.name.clone();
                let _ = self.runner.handle(&name, Input::CancelTurn);
                self.phase = Phase::Cancelling;
                None
            }
            Phase::Handshake | Phase::Cancelling => {
                eprintln!("acp-cli client: interrupted; stopping the agent");
                Some(EXIT_INTERRUPTED)
            }
        }
    }

    fn on_turn_end(&mut self, outcome: TurnOutcome) -> i32 {
        self.end_line();
        match outcome {
            TurnOutcome::Stopped { stop, .. } => {
                eprintln!("stop reason: {stop}");
                if self.phase == Phase::Cancelling {
                    EXIT_INTERRUPTED
                } else {
                    0
                }
            }
            TurnOutcome::Failed(failure) => {
                eprintln!(
                    "acp-cli client: the prompt failed: {}",
                    acp_host::sanitize::sanitize(&failure.to_string())
                );
                1
            }
            TurnOutcome::TimedOut => {
                eprintln!(
                    "acp-cli client: no answer within {} s; sent session/cancel",
                    self.timeout
                );
                1
            }
            TurnOutcome::Disconnected => {
                if let Some(code) = self.remote_failure_now() {
                    return code;
                }
                let how = match self.exit {
                    Some(status) => format!("the agent exited ({status}) before the turn ended"),
                    None => String::from("the agent closed its output before the turn ended"),
                };
                eprintln!("acp-cli client: {how}");
                self.print_stderr_tail();
                1
            }
        }
    }

    /// Nothing can happen any more (no process, no deadline) and no outcome was reported.
    fn gone(&mut self) -> i32 {
        self.end_line();
        if let Some(code) = self.remote_failure_now() {
            return code;
        }
        match self.exit {
            Some(status) => eprintln!("acp-cli client: the agent exited ({status})"),
            None => eprintln!("acp-cli client: the agent is gone"),
        }
        self.print_stderr_tail();
        1
    }

    /// With `--url`: the bridge's failure as this command's one line, once the bridge has
    /// written it (its stderr may still be on the way when its output closes). Returns the
    /// exit status.
    async fn remote_failure(&mut self) -> Option<i32> {
        if !self.remote {
            return None;
        }
        let name = self.name.clone();
        // The bridge writes its line before it exits; only a crash leaves none.
        let said = |s: &acp_host::supervisor::Supervisor<Question>| {
            s.server(&name)
                .is_some_and(|l| crate::remote::agent::bridge_failure(l.stderr().tail(1)).is_some())
        };
        smol::future::or(
            async {
                self.runner.run_until(said).await;
            },
            async {
                smol::Timer::after(crate::remote::CLOSE_TIMEOUT).await;
            },
        )
        .await;
        self.remote_failure_now()
    }

    /// With `--url`: the bridge's failure line already read, printed as this command's.
    fn remote_failure_now(&mut self) -> Option<i32> {
        if !self.remote {
            return None;
        }
        let lifecycle = self.runner.supervisor().server(&self.name)?;
        let line = crate::remote::agent::bridge_failure(lifecycle.stderr().tail(1))?;
        eprintln!("acp-cli client: {}", acp_host::sanitize::sanitize(line));
        Some(1)
    }

    fn print_stderr_tail(&self) {
        let Some(lifecycle) = self.runner.supervisor().server(&self.name) else {
            return;
        };
        let lines: Vec<&str> = lifecycle.stderr().tail(FAILURE_STDERR_LINES).collect();
        if lines.is_empty() {
            return;
        }
        eprintln!("last lines the agent wrote to stderr:");
        for line in lines {
            eprintln!("  {}", acp_host::sanitize::sanitize(line));
        }
    }

    /// Ends the answer's last line so what follows on the terminal starts on its own.
    fn end_line(&mut self) {
        if self.open_line {
            crate::stdout::print(format_args!("\n"));
            self.open_line = false;
        }
    }
}
