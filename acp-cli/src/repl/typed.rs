//! Typed lines: the REPL's own commands, delegation to a server and prompts to the main
//! agent, held while a turn runs.

use acp_host::sanitize::sanitize;
use acp_host::supervisor::lifecycle::{Input, ServerState};
use acp_host::supervisor::routing::{detect_route, empty_task_message};

use crate::host::{CommandOutput, commands};

use super::slash::Slash;
use super::{Foreground, HELP, Repl, Target, failed, slash};

impl Repl {
    /// Runs one typed line; `false` to leave.
    pub(super) async fn on_line(&mut self, line: &str) -> bool {
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
    pub(super) async fn send_to_server(&mut self, server: &str, message: &str) {
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

    pub(super) async fn send_to_main(&mut self, text: &str) {
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
    pub(super) async fn send_unsent(&mut self) {
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

    pub(super) fn is_foreground(&self, target: &Target) -> bool {
        self.foreground
            .as_ref()
            .is_some_and(|f| f.target == *target)
    }
}
