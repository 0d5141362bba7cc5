//! `acp-cli repl`: an interactive loop over a main agent and the project's ACP servers.
//!
//! - Plain text goes to the main agent (`acp-cli repl -- AGENT …`), whose answer streams to
//!   the screen.
//! - `/acp …` manages the servers of `.agentao/acp.json` in the current directory
//!   ([`crate::host::Host`], texts of R-HOST-12).
//! - `@name task`, `name: task`, `让 name task`, `请 name task` delegate to a configured
//!   server (`ACP Delegation → <name> (<syntax>)`), run like `/acp send`.
//! - Questions are asked inline, one at a time. Permission: at a terminal a single key
//!   (`1`–`4`, Esc rejects); from piped input a line (`1`–`4`, Esc or an empty line
//!   rejects). Input: a line; an empty one cancels.
//! - What servers say goes through the supervisor's inbox and is shown at idle points:
//!   before each prompt, after each command, and while a turn the person waits for runs.
//! - `/status` summarises; `/quit`, `/exit`, end of input (Ctrl-D) or a closed stdout stop
//!   every agent started (the stop sequence) and leave.
//!
//! - A `/name` the main agent advertised (`available_commands_update`) goes to it as
//!   prompt text; `//text` sends `/text` as it is; the REPL's own commands win on a clash
//!   ([`slash`]).
//! - At a terminal the prompt is a line editor with history (per project) and Tab
//!   completion of both sets of commands ([`editor`]).
//!
//! While a turn runs, typed lines wait until it ends, except `/acp cancel <name>`, which
//! runs at once; Ctrl-C cancels the turn (or rejects the question on screen).
//!
//! This module holds the state (`Repl`) and the main loop; each concept of the loop has its
//! own file, all `impl Repl`: `typed` (a typed line: commands, delegation, prompts),
//! `events` (what agents say), `questions` (the question on screen and its answer),
//! `idle` (idle points: the inbox, `/status`), `screen` (where output starts), with the
//! line [`editor`] and the [`slash`] command table beside them.

pub(crate) mod editor;
mod events;
mod idle;
mod questions;
mod screen;
pub(crate) mod slash;
mod typed;

use std::collections::VecDeque;
use std::io::IsTerminal as _;
use std::path::PathBuf;

use acp_host::sanitize::sanitize;
use acp_host::supervisor::interaction::InteractionId;
use acp_host::supervisor::lifecycle::{Input, ServerState};
use smol::future::FutureExt as _;

use crate::client::command::{DEFAULT_TIMEOUT_SECS, agent_name, host_env, single_agent_config};
use crate::client::glue::{AgentEvent, Glue, Question};
use crate::client::terminal::{Interrupts, RawMode, StdinLines};
use crate::client::updates::AgentCommand;
use crate::host::Host;
use crate::host::commands::{self, AcpCommand};
use crate::host::runner::{AgentRunner, RunnerEvent, StopTimings};
use editor::{Keyboard, Typed};

/// The arguments of `acp-cli repl`.
#[derive(Clone, Debug, clap::Args)]
#[command(
    about = "An interactive loop: a main agent, the project's ACP servers, delegation",
    after_help = "Examples:\n  \
        acp-cli repl -- my-agent --stdio\n  \
        acp-cli repl            (only the servers of .agentao/acp.json)\n\n\
        Commands: /acp [list|start|stop|restart|send|cancel|status|logs], /status, /help, /quit.\n\
        The main agent's own /commands go to it; //text sends /text as it is.\n\
        Delegate with '@name task', 'name: task', '让 name task' or '请 name task'."
)]
pub struct ReplArgs {
    /// The main agent is the remote one at URL: ws:// or wss:// (WebSocket), http:// or
    /// https:// (Streamable HTTP).
    #[arg(long, value_name = "URL", conflicts_with = "agent")]
    pub url: Option<String>,
    /// With --url: the bearer token is in FILE [default: the ACP_TOKEN environment
    /// variable].
    #[arg(long, value_name = "FILE", requires = "url")]
    pub token_file: Option<PathBuf>,
    /// The main agent's command line (plain text goes to it).
    #[arg(last = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// The prompt shown when the REPL waits for a line.
pub(crate) const PROMPT: &str = "> ";

/// `/help`.
pub(crate) const HELP: &str = "Commands:\n  \
    /acp, /acp list            servers of .agentao/acp.json\n  \
    /acp start|stop|restart <name>\n  \
    /acp send <name> <message>\n  \
    /acp cancel <name>\n  \
    /acp status [<name>]\n  \
    /acp logs <name> [lines]\n  \
    /status                    summary\n  \
    /quit                      stop every agent and leave\n  \
    //text                     send /text to the main agent as it is\n\
    Delegate: @name task · name: task · 让 name task · 请 name task\n\
    Anything else goes to the main agent.";

/// Whose turn or question it is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Main,
    Server(String),
}

/// A turn the person waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Foreground {
    target: Target,
    /// The prompt, until it is sent (the agent is still starting).
    unsent: Option<String>,
    /// Ctrl-C was pressed for it.
    cancelled: bool,
}

/// Runs the REPL; returns the exit status.
pub fn run(mut args: ReplArgs) -> i32 {
    if let Some(url) = &args.url {
        // R-NETC-8: the remote main agent is the bridge's process.
        match crate::remote::agent::bridge_command(url, args.token_file.as_deref()) {
            Ok(argv) => args.agent = argv,
            Err(message) => {
                eprintln!("acp-cli repl: {message}");
                return 1;
            }
        }
    }
    smol::block_on(async {
        let mut repl = Repl::new(args);
        repl.run().await;
        repl.stop_all().await;
        0
    })
}

struct Main {
    name: String,
    runner: AgentRunner<Question>,
    glue: Glue,
}

struct Repl {
    host: Host<Question>,
    load_error: Option<String>,
    glue: Glue,
    main: Option<Main>,
    foreground: Option<Foreground>,
    /// The question on screen.
    asking: Option<(Target, InteractionId)>,
    /// Lines typed during a turn, run when it ends.
    held: VecDeque<String>,
    prompt_shown: bool,
    /// stdin ended: leave when idle.
    eof: bool,
    /// stdin is a terminal.
    terminal: bool,
    /// Single keys are read (a permission question is on screen at a terminal).
    raw: Option<RawMode>,
    /// The main agent's answer ended without a newline.
    open_line: bool,
    /// The slash commands the main agent advertised (sent to it as prompt text).
    agent_commands: Vec<AgentCommand>,
    /// The line editor, when stdin and stdout are a terminal.
    keyboard: Option<Keyboard>,
}

impl Repl {
    fn new(args: ReplArgs) -> Repl {
        let root = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let (host, load_error) = match Host::load(&root, StopTimings::default()) {
            Ok(host) => (host, None),
            Err(error) => (
                Host::new(
                    &Default::default(),
                    &root,
                    host_env(),
                    StopTimings::default(),
                ),
                Some(commands::load_failed(&error)),
            ),
        };
        let main = (!args.agent.is_empty()).then(|| {
            let name = match &args.url {
                Some(url) => crate::remote::agent::remote_name(url),
                None => agent_name(&args.agent),
            };
            let timeout_ms = (DEFAULT_TIMEOUT_SECS * 1000.0) as u64;
            let config = single_agent_config(&name, &args.agent, &root, timeout_ms);
            let mut runner =
                AgentRunner::new(&config, &root, host_env(), StopTimings::default(), 1);
            let _ = runner.handle(&name, Input::Start);
            Main {
                name,
                runner,
                glue: Glue::new(),
            }
        });
        Repl {
            host,
            load_error,
            glue: Glue::new(),
            main,
            foreground: None,
            asking: None,
            held: VecDeque::new(),
            prompt_shown: false,
            eof: false,
            terminal: std::io::IsTerminal::is_terminal(&std::io::stdin()),
            raw: None,
            open_line: false,
            agent_commands: Vec::new(),
            keyboard: None,
        }
    }

    async fn run(&mut self) {
        if let Some(main) = &self.main
            && let Some(error) = failed(&main.runner, &main.name)
        {
            self.say(&format!("Main agent failed to start: {}", sanitize(&error)));
        }
        let mut stdin = StdinLines::new();
        if self.terminal && std::io::stdout().is_terminal() {
            let root = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            self.keyboard = Keyboard::start(&root);
        }
        let mut interrupts = Interrupts::new();
        // Each pass handles one event, one line or one Ctrl-C; it ends on /quit or EOF.
        loop {
            self.drain_glue_events().await;
            self.idle_point();
            // Nobody reads the screen any more: leave as at /quit (see `crate::stdout`).
            if !crate::stdout::is_open() {
                return;
            }
            let busy = self.foreground.is_some() && self.asking.is_none();
            if !busy && let Some(line) = self.held.pop_front() {
                if !self.on_line(&line).await {
                    return;
                }
                continue;
            }
            if self.eof && !busy {
                return;
            }
            // During a turn only a question's answer is read, or, at a terminal, lines
            // typed ahead (held until the turn ends, `/acp cancel` excepted); piped input
            // stays unread so a script runs in order.
            let reading = !self.eof
                && match &self.foreground {
                    None => true,
                    Some(_) if self.asking.is_some() => true,
                    Some(f) => self.terminal && f.unsent.is_none(),
                };
            enum Wake {
                Host(Option<RunnerEvent<Question>>),
                Main(Option<RunnerEvent<Question>>),
                Line(Option<String>),
                Key(Option<Vec<u8>>),
                Interrupt,
            }
            self.keys_for_question();
            let keys = self.raw.is_some();
            let at_prompt = self.foreground.is_none() && self.asking.is_none();
            let keyboard = self.keyboard.as_mut();
            let host = self.host.runner();
            let main = self.main.as_mut().map(|m| &mut m.runner);
            let wake = async {
                match host.next_event().await {
                    Some(event) => Wake::Host(Some(event)),
                    None => std::future::pending().await,
                }
            }
            .or(async {
                match main {
                    Some(runner) => match runner.next_event().await {
                        Some(event) => Wake::Main(Some(event)),
                        None => std::future::pending().await,
                    },
                    None => std::future::pending().await,
                }
            })
            .or(async {
                match keyboard {
                    _ if !reading => std::future::pending().await,
                    Some(keyboard) => {
                        let typed = if keys {
                            keyboard.key().await
                        } else if at_prompt {
                            keyboard.edit(PROMPT).await
                        } else {
                            keyboard.line().await
                        };
                        match typed {
                            Typed::Line(line) => Wake::Line(Some(line)),
                            Typed::Key(key) => Wake::Key(Some(key)),
                            Typed::End => Wake::Line(None),
                            Typed::Interrupt => Wake::Interrupt,
                        }
                    }
                    None if keys => Wake::Key(stdin.next_key().await),
                    None => Wake::Line(stdin.next().await),
                }
            })
            .or(async {
                interrupts.next().await;
                Wake::Interrupt
            })
            .await;
            match wake {
                Wake::Host(Some(event)) => {
                    let events = self.glue.on_runner_event(self.host.runner(), event).await;
                    for (server, event) in events {
                        self.on_agent_event(Target::Server(server), event).await;
                    }
                }
                Wake::Main(Some(event)) => {
                    let Some(main) = self.main.as_mut() else {
                        continue;
                    };
                    let events = main.glue.on_runner_event(&mut main.runner, event).await;
                    for (_, event) in events {
                        self.on_agent_event(Target::Main, event).await;
                    }
                }
                Wake::Host(None) | Wake::Main(None) => {}
                Wake::Key(Some(key)) => self.answer_key(&key).await,
                Wake::Line(None) | Wake::Key(None) => {
                    self.end_line();
                    if self.asking.is_some() {
                        self.answer_line(None).await;
                    }
                    // Leave once the turn under way (if any) has ended.
                    self.eof = true;
                }
                Wake::Line(Some(line)) => {
                    self.prompt_shown = false;
                    if self.asking.is_some() {
                        self.answer_line(Some(&line)).await;
                    } else if self.foreground.is_some() {
                        let cancel =
                            matches!(commands::parse(&line), Some(Ok(AcpCommand::Cancel(_))));
                        if cancel {
                            self.on_line(&line).await;
                        } else {
                            self.held.push_back(line);
                        }
                    } else if !self.on_line(&line).await {
                        return;
                    }
                }
                Wake::Interrupt => self.on_interrupt().await,
            }
        }
    }

    /// Handles the events that came up while prompts and answers were carried out (which
    /// may carry out more; each round takes events the agents already sent, which are
    /// finite).
    async fn drain_glue_events(&mut self) {
        loop {
            let mut events: Vec<(Target, AgentEvent)> = self
                .glue
                .take_events()
                .into_iter()
                .map(|(server, event)| (Target::Server(server), event))
                .collect();
            if let Some(main) = self.main.as_mut() {
                events.extend(
                    main.glue
                        .take_events()
                        .into_iter()
                        .map(|(_, e)| (Target::Main, e)),
                );
            }
            if events.is_empty() {
                return;
            }
            for (target, event) in events {
                self.on_agent_event(target, event).await;
            }
        }
    }

    /// Stops every agent the REPL started.
    async fn stop_all(&mut self) {
        self.raw = None;
        self.end_line();
        self.host.stop_all().await;
        if let Some(main) = self.main.as_mut() {
            main.runner.stop_all().await;
        }
    }
}

/// The spawn of `name` failed: the lifecycle's error.
fn failed(runner: &AgentRunner<Question>, name: &str) -> Option<String> {
    let lifecycle = runner.supervisor().server(name)?;
    (lifecycle.state() == ServerState::Failed).then(|| {
        lifecycle
            .last_error()
            .unwrap_or("the agent failed")
            .to_owned()
    })
}
