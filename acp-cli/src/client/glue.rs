//! The connection glue between an [`AgentRunner`] (processes and lifecycles) and one
//! [`Link`] per server (the ACP connections, each on acp-async's pump), as the runner's docs
//! describe it: on `BeginHandshake` a link is opened and `HandshakeStarted`, then
//! `HandshakeOk` or `HandshakeFailed` reported; stdout bytes go to the link and what its
//! pump wrote to the process's stdin; turns are reported with `PromptStarted` /
//! `PromptEnded`; questions become the supervisor's interactions, so the turn deadline pauses
//! while the person thinks.
//!
//! Both `acp-cli client` (one server) and `acp-cli repl` (the project's servers and a main
//! agent) drive their runners through this.

use std::collections::BTreeMap;
use std::path::PathBuf;

use acp_core::conn::client::TurnOutcome;
use acp_core::machine::Ticket;
use acp_host::supervisor::answer::Decision;
use acp_host::supervisor::interaction::{InteractionId, InteractionKind};
use acp_host::supervisor::lifecycle::{Input, Notice};
use acp_host::supervisor::recovery::ExitStatus;
use serde_json::Value;

use crate::host::runner::{AgentRunner, RunnerEvent};

use super::link::{HandshakeFailure, Link, LinkEvent, OfferedAuth};
use super::render;
use super::updates::AgentCommand;

/// What the glue keeps for a question waiting in the supervisor's interactions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Question {
    /// The connection's handle.
    pub ticket: Ticket,
    /// What is asked: the permission request's params, or the ask_user question.
    pub ask: Ask,
}

/// The two kinds of questions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ask {
    /// `session/request_permission`, with its params (options, tool call).
    Permission(Value),
    /// `_agentao.cn/ask_user`, with its question.
    Input(String),
}

/// How a question is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer<'a> {
    /// A permission decision.
    Decision(Decision),
    /// A reply to an input request; `None` or blank: `cancelled`.
    Text(Option<&'a str>),
}

impl<'a> Answer<'a> {
    /// What a typed line answers to `ask` (`None`: the end of input, which rejects or
    /// cancels), with the line to print; `Err` with the hint to print when the line means
    /// nothing (ask again).
    pub(crate) fn typed(
        ask: &Ask,
        line: Option<&'a str>,
    ) -> Result<(Answer<'a>, Option<&'static str>), &'static str> {
        match ask {
            Ask::Permission(_) => {
                let decision = match line {
                    None => Decision::Cancel,
                    Some(line) => render::permission_choice(line).ok_or(render::PERMISSION_HINT)?,
                };
                Ok((
                    Answer::Decision(decision),
                    Some(render::permission_confirmation(decision)),
                ))
            }
            Ask::Input(_) => {
                let text = line.map(str::trim).filter(|t| !t.is_empty());
                let note = text.is_none().then_some(render::EMPTY_REPLY);
                Ok((Answer::Text(text), note))
            }
        }
    }
}

/// What the application shows or acts on, for one server.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum AgentEvent {
    /// The server has a session: prompts can be sent.
    Ready,
    /// Its handshake failed.
    HandshakeFailed(HandshakeFailure),
    /// `session/new` was answered auth-required: run a login, then [`Glue::retry_session`].
    AuthRequired {
        /// The refusal.
        failure: HandshakeFailure,
        /// The agent's auth methods.
        methods: Vec<OfferedAuth>,
    },
    /// A chunk of the agent's answer (sanitized).
    Text(String),
    /// A thought, a plan, a tool call (sanitized).
    Aside(String),
    /// An update kind the client does not know: its tag, for one dim line.
    UnknownUpdate(String),
    /// The agent's slash commands.
    Commands(Vec<AgentCommand>),
    /// A question now waits in the supervisor's interactions under this id.
    Asked(InteractionId),
    /// A question was settled without the person (cancel, disconnect).
    QuestionGone(InteractionId),
    /// The turn ended.
    TurnEnded(TurnOutcome),
    /// The process ended.
    Exited(ExitStatus),
    /// The lifecycle's notice (state changes, deaths, timeouts).
    Notice(Notice),
}

/// See the module docs.
#[derive(Debug, Default)]
pub(crate) struct Glue {
    links: BTreeMap<String, Link>,
    /// Per server: the interaction id of each open question's ticket.
    asked: BTreeMap<(String, Ticket), InteractionId>,
    /// Events that came up while a command (prompt, answer) was carried out.
    backlog: Vec<(String, AgentEvent)>,
    /// The links do not offer `fs/*` to their agents (`acp-cli client --no-fs`).
    no_fs: bool,
    /// The links advertise terminal auth: the application runs logins (R-AUTH-7).
    terminal_auth: bool,
}

impl Glue {
    /// No connections yet.
    pub(crate) fn new() -> Glue {
        Glue::default()
    }

    /// Links opened from now on offer `fs/*` to their agents (the default) or not.
    pub(crate) fn offer_fs(&mut self, on: bool) {
        self.no_fs = !on;
    }

    /// Links opened from now on say the application runs `terminal` auth methods.
    pub(crate) fn offer_terminal_auth(&mut self, on: bool) {
        self.terminal_auth = on;
    }

    /// After a login for server `name`: authenticate and open the session again.
    pub(crate) async fn retry_session(&mut self, runner: &mut AgentRunner<Question>, name: &str) {
        let Some(link) = self.links.get_mut(name) else {
            return;
        };
        link.retry_after_login();
        let mut out = Vec::new();
        self.forward(runner, name, &mut out).await;
        self.backlog.extend(out);
    }

    /// Server `name`'s link, while it has one.
    pub(crate) fn link(&self, name: &str) -> Option<&Link> {
        self.links.get(name)
    }

    /// The events that came up while [`Glue::prompt`] or [`Glue::answer`] ran; handle
    /// them like those of [`Glue::on_runner_event`] before waiting again.
    pub(crate) fn take_events(&mut self) -> Vec<(String, AgentEvent)> {
        std::mem::take(&mut self.backlog)
    }

    /// Handles one runner event: what comes out for the application, tagged by server.
    pub(crate) async fn on_runner_event(
        &mut self,
        runner: &mut AgentRunner<Question>,
        event: RunnerEvent<Question>,
    ) -> Vec<(String, AgentEvent)> {
        let mut out = Vec::new();
        match event {
            RunnerEvent::BeginHandshake { server } => {
                let cwd = runner
                    .supervisor()
                    .config(&server)
                    .map(|c| PathBuf::from(c.resolve_cwd(&runner.project_root().to_string_lossy())))
                    .unwrap_or_else(|| runner.project_root().to_path_buf());
                let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
                self.links.insert(
                    server.clone(),
                    Link::open_with(&cwd, !self.no_fs, self.terminal_auth),
                );
                let _ = runner.handle(&server, Input::HandshakeStarted);
                self.forward(runner, &server, &mut out).await;
            }
            RunnerEvent::Stdout { server, bytes } => {
                if let Some(link) = self.links.get_mut(&server) {
                    link.feed(&bytes);
                }
                self.forward(runner, &server, &mut out).await;
            }
            RunnerEvent::DropConnection { server } => {
                if let Some(link) = self.links.get_mut(&server) {
                    link.eof();
                }
                self.forward(runner, &server, &mut out).await;
                self.links.remove(&server);
                self.asked.retain(|(s, _), _| *s != server);
            }
            RunnerEvent::CancelTurn { server } => {
                if let Some(link) = self.links.get_mut(&server) {
                    link.cancel();
                }
                self.forward(runner, &server, &mut out).await;
            }
            RunnerEvent::Notice { server, notice } => {
                out.push((server, AgentEvent::Notice(notice)))
            }
            RunnerEvent::ProcessExited { server, status, .. } => {
                out.push((server, AgentEvent::Exited(status)));
            }
            RunnerEvent::Abandoned(interaction) => {
                let server = interaction.server.clone();
                self.asked
                    .remove(&(server.clone(), interaction.ticket.ticket));
                if let Some(link) = self.links.get_mut(&server) {
                    cancel_question(link, &interaction.ticket);
                }
                self.forward(runner, &server, &mut out).await;
                out.push((server, AgentEvent::QuestionGone(interaction.id)));
            }
        }
        out
    }

    /// Sends `text` as a prompt to server `name`, which must be ready.
    pub(crate) async fn prompt(
        &mut self,
        runner: &mut AgentRunner<Question>,
        name: &str,
        text: &str,
    ) -> Result<(), String> {
        if !self.links.contains_key(name) {
            return Err(format!("server '{name}' has no connection"));
        }
        runner
            .handle(name, Input::PromptStarted)
            .map_err(|e| e.to_string())?;
        let sent = self.links.get_mut(name).map(|link| link.prompt(text));
        if let Some(Err(error)) = sent {
            // The lifecycle thinks a turn runs; end it.
            let _ = runner.handle(name, Input::PromptEnded { ok: false });
            return Err(error);
        }
        let mut out = Vec::new();
        self.forward(runner, name, &mut out).await;
        self.backlog.extend(out);
        Ok(())
    }

    /// Answers question `id` of server `name`. Returns `false` if the question is gone
    /// (already answered, or settled without the person).
    pub(crate) async fn answer(
        &mut self,
        runner: &mut AgentRunner<Question>,
        name: &str,
        id: InteractionId,
        answer: Answer<'_>,
    ) -> bool {
        let Some(interaction) = runner.update(|s, now| s.resolve_interaction(now, name, id)) else {
            return false;
        };
        let question = interaction.ticket;
        self.asked.remove(&(name.to_owned(), question.ticket));
        if let Some(link) = self.links.get_mut(name) {
            match (&question.ask, answer) {
                (Ask::Permission(params), Answer::Decision(decision)) => {
                    let option = render::chosen_option(params, decision);
                    link.answer_permission(question.ticket, option.as_deref());
                }
                (Ask::Input(_), Answer::Text(text)) => link.answer_ask_user(question.ticket, text),
                (_, _) => cancel_question(link, &question),
            }
        }
        let mut out = Vec::new();
        self.forward(runner, name, &mut out).await;
        self.backlog.extend(out);
        true
    }

    /// Hands the link's events on and writes what its pump wrote to the agent's stdin, until
    /// both are empty (acp-async's pump moved the bytes, EOF and commands; see [`Link`]).
    async fn forward(
        &mut self,
        runner: &mut AgentRunner<Question>,
        name: &str,
        out: &mut Vec<(String, AgentEvent)>,
    ) {
        // Each pass drains the finite event queue and writes the output it caused; a pass
        // that writes nothing ends the loop.
        loop {
            while let Some(event) = self.links.get_mut(name).and_then(Link::poll_event) {
                if let Some(event) = self.on_link_event(runner, name, event) {
                    out.push((name.to_owned(), event));
                }
            }
            let bytes = match self.links.get_mut(name) {
                Some(link) => link.take_output(),
                None => return,
            };
            if bytes.is_empty() {
                return;
            }
            if let Err(e) = runner.write_stdin(name, &bytes).await {
                tracing::debug!(server = name, "write to the agent failed: {e}");
                return;
            }
        }
    }

    fn on_link_event(
        &mut self,
        runner: &mut AgentRunner<Question>,
        name: &str,
        event: LinkEvent,
    ) -> Option<AgentEvent> {
        match event {
            LinkEvent::Ready { .. } => {
                let _ = runner.handle(name, Input::HandshakeOk);
                Some(AgentEvent::Ready)
            }
            LinkEvent::HandshakeFailed(failure) => {
                let _ = runner.handle(
                    name,
                    Input::HandshakeFailed {
                        error: &failure.to_string(),
                    },
                );
                Some(AgentEvent::HandshakeFailed(failure))
            }
            LinkEvent::AuthRequired { failure, methods } => {
                if !self.terminal_auth {
                    // No login will run here: the handshake is over, as for any failure.
                    let _ = runner.handle(
                        name,
                        Input::HandshakeFailed {
                            error: &failure.to_string(),
                        },
                    );
                }
                Some(AgentEvent::AuthRequired { failure, methods })
            }
            LinkEvent::Text(text) => Some(AgentEvent::Text(text)),
            LinkEvent::Aside(text) => Some(AgentEvent::Aside(text)),
            LinkEvent::UnknownUpdate(tag) => Some(AgentEvent::UnknownUpdate(tag)),
            LinkEvent::Commands(commands) => Some(AgentEvent::Commands(commands)),
            LinkEvent::Permission { ticket, params } => {
                let summary = render::permission_summary(&params);
                let question = Question {
                    ticket,
                    ask: Ask::Permission(params),
                };
                self.open(
                    runner,
                    name,
                    InteractionKind::Permission,
                    &summary,
                    question,
                )
            }
            LinkEvent::AskUser { ticket, question } => {
                let prompt = question.clone();
                let question = Question {
                    ticket,
                    ask: Ask::Input(question),
                };
                self.open(runner, name, InteractionKind::Input, &prompt, question)
            }
            LinkEvent::Settled(ticket) => {
                let id = self.asked.remove(&(name.to_owned(), ticket))?;
                runner.update(|s, now| s.resolve_interaction(now, name, id));
                Some(AgentEvent::QuestionGone(id))
            }
            LinkEvent::TurnEnded(outcome) => {
                let ok = matches!(outcome, TurnOutcome::Stopped { .. });
                let _ = runner.handle(name, Input::PromptEnded { ok });
                Some(AgentEvent::TurnEnded(outcome))
            }
            LinkEvent::Closed => None,
        }
    }

    fn open(
        &mut self,
        runner: &mut AgentRunner<Question>,
        name: &str,
        kind: InteractionKind,
        prompt: &str,
        question: Question,
    ) -> Option<AgentEvent> {
        let session = self.links.get(name).and_then(Link::session);
        let ticket = question.ticket;
        let opened = runner.update(|s, now| {
            s.open_interaction(now, name, session.as_deref(), kind, prompt, question)
        });
        match opened {
            Ok(id) => {
                self.asked.insert((name.to_owned(), ticket), id);
                Some(AgentEvent::Asked(id))
            }
            Err(question) => {
                // Nobody can be asked (too many questions, no session): never leave the
                // agent waiting.
                if let Some(link) = self.links.get_mut(name) {
                    cancel_question(link, &question);
                }
                None
            }
        }
    }
}

/// Answers a question `cancelled` in the shape its method needs.
fn cancel_question(link: &mut Link, question: &Question) {
    match question.ask {
        Ask::Permission(_) => link.answer_permission(question.ticket, None),
        Ask::Input(_) => link.answer_ask_user(question.ticket, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_lines_answer_permissions() {
        let ask = Ask::Permission(Value::Null);
        assert_eq!(
            Answer::typed(&ask, Some("1")),
            Ok((
                Answer::Decision(Decision::AllowOnce),
                Some("Approved (once)")
            ))
        );
        assert_eq!(
            Answer::typed(&ask, None),
            Ok((
                Answer::Decision(Decision::Cancel),
                Some("Rejected (cancelled)")
            ))
        );
        assert_eq!(
            Answer::typed(&ask, Some("what")),
            Err("Press 1-4 · Esc to reject")
        );
    }

    #[test]
    fn typed_lines_answer_input_requests() {
        let ask = Ask::Input(String::from("Name?"));
        assert_eq!(
            Answer::typed(&ask, Some("  Ada ")),
            Ok((Answer::Text(Some("Ada")), None))
        );
        assert_eq!(
            Answer::typed(&ask, Some("   ")),
            Ok((Answer::Text(None), Some("Empty reply — cancelled.")))
        );
        assert_eq!(
            Answer::typed(&ask, None),
            Ok((Answer::Text(None), Some("Empty reply — cancelled.")))
        );
    }
}
