//! What the agents say: updates, questions, state changes and turn ends, routed to the
//! screen (the main agent) or the inbox (servers).

use std::io::IsTerminal as _;

use acp_core::conn::client::TurnOutcome;
use acp_host::sanitize::sanitize;
use acp_host::supervisor::inbox::MessageKind;
use acp_host::supervisor::lifecycle::{Notice, ServerState};
use acp_host::supervisor::recovery::Verdict;

use crate::client::glue::AgentEvent;
use crate::client::{render, updates};
use crate::host::commands::ClientView;

use super::{Repl, Target};

impl Repl {
    pub(super) async fn on_agent_event(&mut self, target: Target, event: AgentEvent) {
        let name = self.target_name(&target);
        match event {
            AgentEvent::Ready => {
                if let Target::Server(server) = &target {
                    let session = self.glue.link(server).and_then(|l| l.session());
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
            AgentEvent::AuthRequired { failure, methods } => {
                // The line editor owns the terminal: no login runs here; the methods are
                // listed (terminal ones are not offered to the REPL, R-AUTH-2).
                let mut text = format!("handshake failed: {failure}");
                if !methods.is_empty() {
                    text.push('\n');
                    text.push_str(render::auth_methods(&methods, &[]).trim_end());
                }
                if self.is_foreground(&target) {
                    self.foreground = None;
                    self.say(&format!("Send failed: {name}: {text}"));
                } else {
                    self.note(&target, &text);
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

    pub(super) fn state(&mut self, target: &Target) -> Option<ServerState> {
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

    pub(super) fn last_error(&mut self, target: &Target) -> Option<String> {
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

    pub(super) fn target_name(&self, target: &Target) -> String {
        match target {
            Target::Server(name) => name.clone(),
            Target::Main => self
                .main
                .as_ref()
                .map(|m| m.name.clone())
                .unwrap_or_default(),
        }
    }
}

fn outcome_text(outcome: &TurnOutcome) -> String {
    match outcome {
        TurnOutcome::Stopped { stop, .. } => stop.to_string(),
        TurnOutcome::Failed(failure) => sanitize(&failure.to_string()),
        TurnOutcome::TimedOut => String::from("timed out"),
        TurnOutcome::Disconnected => String::from("the agent's output ended during the turn"),
    }
}
