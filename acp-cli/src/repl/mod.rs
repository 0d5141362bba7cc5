//! `acp-cli repl`: an interactive loop over a main agent and the project's ACP servers.
//!
//! - Plain text goes to the main agent (`acp-cli repl -- AGENT …`), whose answer streams to
//!   the screen.
//! - `/acp …` manages the servers of `.agentao/acp.json` in the current directory
//!   ([`crate::host::Host`], texts of agentao-behaviour.md §8.8).
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

pub mod editor;
pub mod slash;

use std::collections::VecDeque;
use std::io::IsTerminal as _;
use std::path::PathBuf;

use acp_core::conn::client::TurnOutcome;
use acp_core::sanitize::sanitize;
use acp_core::supervisor::answer::Decision;
use acp_core::supervisor::inbox::{InboxMessage, MessageKind};
use acp_core::supervisor::interaction::InteractionId;
use acp_core::supervisor::lifecycle::{Input, Notice, ServerState};
use acp_core::supervisor::recovery::Verdict;
use acp_core::supervisor::routing::{detect_route, empty_task_message};
use smol::future::FutureExt as _;

use crate::client::command::{DEFAULT_TIMEOUT_SECS, agent_name, host_env, single_agent_config};
use crate::client::glue::{AgentEvent, Answer, Ask, Glue, Question};
use crate::client::render;
use crate::client::terminal::{Interrupts, RawMode, StdinLines};
use crate::client::updates::{self, AgentCommand};
use crate::host::commands::{self, AcpCommand, ClientView};
use crate::host::runner::{AgentRunner, RunnerEvent, StopTimings};
use crate::host::{CommandOutput, Host};
use editor::{Keyboard, Typed};
use slash::Slash;

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
    /// The main agent's command line (plain text goes to it).
    #[arg(last = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// The prompt shown when the REPL waits for a line.
pub const PROMPT: &str = "> ";

/// `/help`.
pub const HELP: &str = "Commands:\n  \
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
pub fn run(args: ReplArgs) -> i32 {
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
            let name = agent_name(&args.agent);
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

    /// Shows what waits: the inbox, then the next question, then the prompt.
    fn idle_point(&mut self) {
        self.flush_inbox();
        if self.asking.is_none() {
            self.show_next_question();
        }
        // The line editor draws its own prompt.
        if self.foreground.is_none()
            && self.asking.is_none()
            && !self.prompt_shown
            && self.keyboard.is_none()
        {
            self.end_line();
            crate::stdout::print(format_args!("{PROMPT}"));
            self.prompt_shown = true;
        }
    }

    /// Renders every queued server message: consecutive answer chunks of one server are
    /// joined, everything else is one `[server] text` line.
    fn flush_inbox(&mut self) {
        let messages = self.host.runner().update(|s, _| s.inbox().drain());
        if messages.is_empty() {
            return;
        }
        self.interrupt_prompt();
        let mut chunks: Option<(String, String)> = None;
        for message in messages {
            let is_chunk = message.update_kind.as_deref() == Some("agent_message_chunk");
            match (&mut chunks, is_chunk) {
                (Some((server, text)), true) if *server == message.server => {
                    text.push_str(&message.text);
                    continue;
                }
                _ => {}
            }
            if let Some((server, text)) = chunks.take() {
                self.say(&format!("[{server}] {text}"));
            }
            if is_chunk {
                chunks = Some((message.server, message.text));
            } else {
                self.say(&format!("[{}] {}", message.server, message.text));
            }
        }
        if let Some((server, text)) = chunks {
            self.say(&format!("[{server}] {text}"));
        }
    }

    /// Queues a server's message for the next idle point.
    fn queue(&mut self, server: &str, kind: MessageKind, update_kind: &str, text: String) {
        let session = self
            .glue
            .link(server)
            .and_then(|l| l.session().map(str::to_owned));
        let server = sanitize(server);
        self.host.runner().update(|s, now| {
            s.inbox().push(InboxMessage {
                server,
                session_id: session,
                kind,
                update_kind: Some(update_kind.to_owned()),
                text,
                at: now,
            })
        });
    }

    /// Shows the oldest waiting question (servers first, then the main agent).
    fn show_next_question(&mut self) {
        let from_server = self
            .host
            .runner()
            .supervisor()
            .interactions()
            .iter()
            .next()
            .map(|i| (Target::Server(i.server.clone()), i.id, i.ticket.clone()));
        let from_main = || {
            let main = self.main.as_ref()?;
            let i = main.runner.supervisor().interactions().iter().next()?;
            Some((Target::Main, i.id, i.ticket.clone()))
        };
        let Some((target, id, question)) = from_server.or_else(from_main) else {
            return;
        };
        let name = self.target_name(&target);
        self.interrupt_prompt();
        match &question.ask {
            Ask::Permission(params) => {
                // Single keys from before the prompt appears, so a quick key is not echoed
                // and left waiting for Enter (unless the line editor holds the terminal:
                // then once it gives it back).
                if self.terminal && !self.editing() {
                    self.raw = RawMode::enter();
                }
                self.say(&render::permission_prompt(&name, params));
            }
            Ask::Input(q) => {
                self.say(&render::input_prompt(&name, q));
                // The line editor's prompt, when it is on screen, takes the answer.
                if !self.editing() {
                    crate::stdout::print(format_args!("{PROMPT}"));
                }
            }
        }
        self.asking = Some((target, id));
    }

    /// A permission question shown while the line editor held the terminal gets its
    /// single keys once the editor gave the terminal back.
    fn keys_for_question(&mut self) {
        if !self.terminal || self.raw.is_some() || self.editing() {
            return;
        }
        let Some((target, id)) = self.asking.clone() else {
            return;
        };
        if let Some(Ask::Permission(_)) = self.question(&target, id).map(|q| q.ask) {
            self.raw = RawMode::enter();
        }
    }

    /// Whether the line editor is on screen.
    fn editing(&self) -> bool {
        self.keyboard.as_ref().is_some_and(Keyboard::editing)
    }

    fn question(&mut self, target: &Target, id: InteractionId) -> Option<Question> {
        let runner = match target {
            Target::Server(_) => self.host.runner(),
            Target::Main => &mut self.main.as_mut()?.runner,
        };
        runner
            .supervisor()
            .interactions()
            .get(id)
            .map(|i| i.ticket.clone())
    }

    /// A line (or the end of input) typed while a question is on screen.
    async fn answer_line(&mut self, line: Option<&str>) {
        let Some((target, id)) = self.asking.clone() else {
            return;
        };
        let Some(question) = self.question(&target, id) else {
            self.asking = None;
            return;
        };
        let answer = match Answer::typed(&question.ask, line) {
            Ok((answer, note)) => {
                if let Some(note) = note {
                    self.say(note);
                }
                answer
            }
            Err(hint) => {
                self.say(hint);
                return;
            }
        };
        self.answer(&target, id, answer).await;
    }

    /// A key pressed while a permission question is on screen at a terminal.
    async fn answer_key(&mut self, key: &[u8]) {
        let Some((target, id)) = self.asking.clone() else {
            return;
        };
        match render::permission_key(key) {
            Some(decision) => {
                self.say(render::permission_confirmation(decision));
                self.answer(&target, id, Answer::Decision(decision)).await;
            }
            None => self.say(render::PERMISSION_HINT),
        }
    }

    async fn answer(&mut self, target: &Target, id: InteractionId, answer: Answer<'_>) {
        self.asking = None;
        self.raw = None;
        match target {
            Target::Server(name) => {
                let runner = self.host.runner();
                self.glue.answer(runner, name, id, answer).await;
            }
            Target::Main => {
                if let Some(main) = self.main.as_mut() {
                    let name = main.name.clone();
                    main.glue.answer(&mut main.runner, &name, id, answer).await;
                }
            }
        }
    }

    async fn on_interrupt(&mut self) {
        self.prompt_shown = false;
        if let Some((target, id)) = self.asking.clone() {
            self.end_line();
            let answer = match self.question(&target, id).map(|q| q.ask) {
                Some(Ask::Input(_)) => {
                    self.say(render::EMPTY_REPLY);
                    Answer::Text(None)
                }
                _ => {
                    self.say(render::permission_confirmation(Decision::Cancel));
                    Answer::Decision(Decision::Cancel)
                }
            };
            self.answer(&target, id, answer).await;
            return;
        }
        let Some(foreground) = self.foreground.as_mut() else {
            self.end_line();
            self.say("(Ctrl-C: type /quit or press Ctrl-D to leave)");
            return;
        };
        foreground.cancelled = true;
        let target = foreground.target.clone();
        if foreground.unsent.is_some() {
            self.foreground = None;
            self.say(&format!(
                "Cancelled prompt to '{}'.",
                self.target_name(&target)
            ));
            return;
        }
        match &target {
            Target::Server(name) => {
                let _ = self.host.runner().handle(name, Input::CancelTurn);
            }
            Target::Main => {
                if let Some(main) = self.main.as_mut() {
                    let _ = main.runner.handle(&main.name, Input::CancelTurn);
                }
            }
        }
    }

    /// Runs one typed line; `false` to leave.
    async fn on_line(&mut self, line: &str) -> bool {
        self.prompt_shown = false;
        let trimmed = line.trim();
        match trimmed {
            "" => return true,
            "/quit" | "/exit" => return false,
            "/help" => {
                let main = self
                    .main
                    .as_ref()
                    .map(|m| m.name.clone())
                    .unwrap_or_default();
                let help = format!("{HELP}{}", slash::agent_help(&main, &self.agent_commands));
                self.say(&help);
                return true;
            }
            "/status" => {
                let status = self.status();
                self.say(&status);
                return true;
            }
            _ => {}
        }
        if let Some(parsed) = commands::parse(trimmed) {
            match parsed {
                Err(error) => self.say(&error.to_string()),
                Ok(_) if self.load_error.is_some() => {
                    let error = self.load_error.clone().unwrap_or_default();
                    self.say(&error);
                }
                Ok(command) => match self.host.execute(command).await {
                    CommandOutput::Text(text) => self.say(&text),
                    CommandOutput::Send { server, message } => {
                        self.send_to_server(&server, &message).await;
                    }
                },
            }
            return true;
        }
        match slash::classify(trimmed, &self.agent_commands) {
            Slash::No => {}
            Slash::Agent(text) => {
                let text = text.to_owned();
                self.send_to_main(&text).await;
                return true;
            }
            // A REPL command with words it does not take (`/status x`) is not one.
            Slash::Repl | Slash::Unknown(_) => {
                let word = trimmed.split_whitespace().next().unwrap_or(trimmed);
                self.say(&format!("Unknown command: {} (try /help)", sanitize(word)));
                return true;
            }
        }
        let names: Vec<String> = self
            .host
            .runner()
            .supervisor()
            .servers()
            .map(|(c, _)| c.name.clone())
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        if let Some(route) = detect_route(trimmed, &names) {
            if route.task.is_empty() {
                self.say(&empty_task_message(route.server));
            } else {
                let (server, task) = (route.server.to_owned(), route.task.to_owned());
                self.say(&format!(
                    "ACP Delegation → {server} ({})",
                    route.syntax.as_str()
                ));
                self.send_to_server(&server, &task).await;
            }
            return true;
        }
        self.send_to_main(trimmed).await;
        true
    }

    /// `/acp send` and delegation: connect if needed, then send.
    async fn send_to_server(&mut self, server: &str, message: &str) {
        let runner = self.host.runner();
        if let Err(error) = runner.handle(server, Input::Connect) {
            self.say(&format!("Send failed: {error}"));
            return;
        }
        if let Some(error) = failed(self.host.runner(), server) {
            self.say(&format!("Send failed: {}", sanitize(&error)));
            return;
        }
        self.say(&format!("Sending to {server}..."));
        self.foreground = Some(Foreground {
            target: Target::Server(server.to_owned()),
            unsent: Some(message.to_owned()),
            cancelled: false,
        });
        if self.state(&Target::Server(server.to_owned())) == Some(ServerState::Ready) {
            self.send_unsent().await;
        }
    }

    async fn send_to_main(&mut self, text: &str) {
        let Some(main) = &self.main else {
            self.say(
                "No main agent (start with `acp-cli repl -- AGENT …`). \
                 Use /acp send <name> <message> or @name <task>.",
            );
            return;
        };
        if let Some(error) = failed(&main.runner, &main.name) {
            self.say(&format!("Main agent unavailable: {}", sanitize(&error)));
            return;
        }
        self.foreground = Some(Foreground {
            target: Target::Main,
            unsent: Some(text.to_owned()),
            cancelled: false,
        });
        if self.state(&Target::Main) == Some(ServerState::Ready) {
            self.send_unsent().await;
        }
    }

    /// Sends the foreground's prompt now that its agent is ready.
    async fn send_unsent(&mut self) {
        let Some(foreground) = self.foreground.as_mut() else {
            return;
        };
        let Some(text) = foreground.unsent.take() else {
            return;
        };
        let target = foreground.target.clone();
        let sent = match &target {
            Target::Server(name) => {
                let runner = self.host.runner();
                self.glue.prompt(runner, name, &text).await
            }
            Target::Main => match self.main.as_mut() {
                Some(main) => {
                    let name = main.name.clone();
                    main.glue.prompt(&mut main.runner, &name, &text).await
                }
                None => Err(String::from("no main agent")),
            },
        };
        if let Err(error) = sent {
            self.foreground = None;
            self.say(&format!("Send failed: {}", sanitize(&error)));
        }
    }

    fn is_foreground(&self, target: &Target) -> bool {
        self.foreground
            .as_ref()
            .is_some_and(|f| f.target == *target)
    }

    async fn on_agent_event(&mut self, target: Target, event: AgentEvent) {
        let name = self.target_name(&target);
        match event {
            AgentEvent::Ready => {
                if let Target::Server(server) = &target {
                    let session = self
                        .glue
                        .link(server)
                        .and_then(|l| l.session().map(str::to_owned));
                    self.host.set_client(
                        server,
                        Some(ClientView {
                            session_id: session,
                            protocol_version: 1,
                        }),
                    );
                }
                if self.is_foreground(&target) {
                    self.send_unsent().await;
                }
            }
            AgentEvent::HandshakeFailed(failure) => {
                let on_purpose = matches!(
                    self.state(&target),
                    Some(ServerState::Stopping | ServerState::Stopped)
                );
                if self.is_foreground(&target) {
                    self.foreground = None;
                    self.say(&format!("Send failed: {name}: handshake failed: {failure}"));
                } else if !on_purpose {
                    self.note(&target, &format!("handshake failed: {failure}"));
                }
            }
            AgentEvent::Text(text) => match &target {
                // A late chunk while the line editor is on screen goes above it.
                Target::Main if self.editing() => self.say(text.trim_end_matches('\n')),
                Target::Main => {
                    self.interrupt_prompt();
                    crate::stdout::print(format_args!("{text}"));
                    if !text.is_empty() {
                        self.open_line = !text.ends_with('\n');
                    }
                }
                Target::Server(server) => {
                    let server = server.clone();
                    self.queue(&server, MessageKind::Response, "agent_message_chunk", text);
                }
            },
            AgentEvent::Aside(text) => match &target {
                Target::Main => {
                    self.interrupt_prompt();
                    self.say(&format!("  · {text}"));
                }
                Target::Server(server) => {
                    let server = server.clone();
                    self.queue(&server, MessageKind::Response, "aside", text);
                }
            },
            AgentEvent::UnknownUpdate(tag) => {
                let line = updates::unknown_line(&tag);
                match &target {
                    Target::Main => {
                        self.interrupt_prompt();
                        let styled = std::io::stdout().is_terminal();
                        self.say(&render::dim(&format!("  · {line}"), styled));
                    }
                    Target::Server(server) => {
                        let server = server.clone();
                        self.queue(&server, MessageKind::Response, "unknown", line);
                    }
                }
            }
            // Only the main agent's commands are typed bare; a server's are reached with
            // `/acp send` or delegation, as text.
            AgentEvent::Commands(commands) => {
                if target == Target::Main {
                    if let Some(keyboard) = &self.keyboard {
                        keyboard
                            .set_agent_commands(commands.iter().map(|c| c.name.clone()).collect());
                    }
                    self.agent_commands = commands;
                }
            }
            AgentEvent::Asked(_) => {}
            AgentEvent::QuestionGone(id) => {
                if self
                    .asking
                    .as_ref()
                    .is_some_and(|(t, i)| *t == target && *i == id)
                {
                    self.asking = None;
                    self.raw = None;
                    self.say("(question withdrawn)");
                }
            }
            AgentEvent::TurnEnded(outcome) => {
                if !self.is_foreground(&target) {
                    if let Target::Server(server) = &target {
                        let text = format!("turn finished ({})", outcome_text(&outcome));
                        let server = server.clone();
                        self.queue(&server, MessageKind::Notification, "turn_end", text);
                    }
                    return;
                }
                let cancelled = self.foreground.as_ref().is_some_and(|f| f.cancelled);
                self.foreground = None;
                self.flush_inbox();
                self.end_line();
                let line = match (&outcome, cancelled) {
                    (TurnOutcome::Stopped { .. }, true) => format!("Cancelled prompt to '{name}'."),
                    (TurnOutcome::Stopped { stop, .. }, false) => {
                        format!("{name}: turn finished ({stop})")
                    }
                    (TurnOutcome::Disconnected, _) => {
                        let why = self
                            .last_error(&target)
                            .unwrap_or_else(|| outcome_text(&outcome));
                        format!("Prompt failed: {}", sanitize(&why))
                    }
                    (other, _) => format!("Prompt failed: {}", outcome_text(other)),
                };
                self.say(&line);
            }
            AgentEvent::Exited(_) => {
                if let Target::Server(server) = &target {
                    self.host.set_client(server, None);
                }
            }
            AgentEvent::Notice(Notice::Died { status, verdict }) => {
                let how = match status {
                    Some(status) => format!("process died ({status})"),
                    None => String::from("its pipes broke"),
                };
                let next = match verdict {
                    Verdict::Recoverable => "it starts again when next needed",
                    Verdict::Fatal(_) => "it stays failed until /acp start or /acp restart",
                };
                self.note(&target, &format!("{how}; {next}"));
            }
            AgentEvent::Notice(Notice::TurnTimedOut) => {
                if self.is_foreground(&target) {
                    self.foreground = None;
                    self.flush_inbox();
                    self.end_line();
                    self.say(&format!("Timeout waiting for response from '{name}'"));
                }
            }
            AgentEvent::Notice(Notice::StartupTimedOut) => {
                if self.is_foreground(&target) {
                    self.foreground = None;
                    self.say(&format!("Send failed: '{name}' did not start in time"));
                }
            }
            AgentEvent::Notice(Notice::StateChanged {
                to: ServerState::Failed,
                ..
            }) => {
                if self.is_foreground(&target)
                    && self.foreground.as_ref().is_some_and(|f| f.unsent.is_some())
                {
                    self.foreground = None;
                    self.say(&format!("Send failed: '{name}' failed to start"));
                }
            }
            AgentEvent::Notice(_) => {}
        }
    }

    /// A line about an agent: queued for a server, shown at once for the main agent.
    fn note(&mut self, target: &Target, text: &str) {
        match target {
            Target::Server(server) => {
                let server = server.clone();
                self.queue(&server, MessageKind::Error, "error", sanitize(text));
            }
            Target::Main => {
                self.interrupt_prompt();
                self.end_line();
                self.say(&format!("[main] {}", sanitize(text)));
            }
        }
    }

    fn state(&mut self, target: &Target) -> Option<ServerState> {
        match target {
            Target::Server(name) => self
                .host
                .runner()
                .supervisor()
                .server(name)
                .map(|l| l.state()),
            Target::Main => {
                let main = self.main.as_ref()?;
                main.runner
                    .supervisor()
                    .server(&main.name)
                    .map(|l| l.state())
            }
        }
    }

    fn last_error(&mut self, target: &Target) -> Option<String> {
        let name = self.target_name(target);
        let runner = match target {
            Target::Server(_) => self.host.runner(),
            Target::Main => &mut self.main.as_mut()?.runner,
        };
        runner
            .supervisor()
            .server(&name)?
            .last_error()
            .map(str::to_owned)
    }

    fn target_name(&self, target: &Target) -> String {
        match target {
            Target::Server(name) => name.clone(),
            Target::Main => self
                .main
                .as_ref()
                .map(|m| m.name.clone())
                .unwrap_or_default(),
        }
    }

    /// `/status`: the main agent, then the ACP summary (§8.8 idle points).
    fn status(&mut self) -> String {
        let mut out = match &self.main {
            Some(main) => match main.runner.supervisor().server(&main.name) {
                Some(l) => {
                    let pid = l.pid().map(|p| format!(", pid={p}")).unwrap_or_default();
                    format!("Main agent: {} ({}{pid})", sanitize(&main.name), l.state())
                }
                None => String::from("Main agent: none"),
            },
            None => String::from("Main agent: none"),
        };
        if let Some(error) = &self.load_error {
            out.push('\n');
            out.push_str(error);
        }
        let runner = self.host.runner();
        let (running, total) = runner.supervisor().running_count();
        let pending = runner.supervisor().interactions().len();
        let queued = runner.update(|s, _| s.inbox().len());
        out.push_str(&format!(
            "\nACP servers: {running}/{total} running\nACP inbox: {queued} queued\n\
             ACP interactions: {pending} pending"
        ));
        out
    }

    /// Moves off a shown prompt so output starts on a fresh line.
    fn interrupt_prompt(&mut self) {
        if self.prompt_shown && !self.editing() {
            crate::stdout::print(format_args!("\n"));
            self.prompt_shown = false;
        }
    }

    fn end_line(&mut self) {
        if self.open_line {
            crate::stdout::print(format_args!("\n"));
            self.open_line = false;
        }
    }

    fn say(&mut self, text: &str) {
        self.end_line();
        if self.editing()
            && let Some(keyboard) = self.keyboard.as_mut()
            && keyboard.print(format!("{text}\n"))
        {
            return;
        }
        crate::stdout::print(format_args!("{text}\n"));
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

fn outcome_text(outcome: &TurnOutcome) -> String {
    match outcome {
        TurnOutcome::Stopped { stop, .. } => stop.to_string(),
        TurnOutcome::Failed(failure) => sanitize(&failure.to_string()),
        TurnOutcome::TimedOut => String::from("timed out"),
        TurnOutcome::Disconnected => String::from("the agent's output ended during the turn"),
    }
}
