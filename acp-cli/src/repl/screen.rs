//! The screen: output starts on a fresh line, beside the line editor when it holds the
//! terminal.

use acp_host::sanitize::sanitize;
use acp_host::supervisor::inbox::MessageKind;

use super::editor::Keyboard;
use super::{Repl, Target};

impl Repl {
    /// Whether the line editor is on screen.
    pub(super) fn editing(&self) -> bool {
        self.keyboard.as_ref().is_some_and(Keyboard::editing)
    }

    /// A line about an agent: queued for a server, shown at once for the main agent.
    pub(super) fn note(&mut self, target: &Target, text: &str) {
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

    /// Moves off a shown prompt so output starts on a fresh line.
    pub(super) fn interrupt_prompt(&mut self) {
        if self.prompt_shown && !self.editing() {
            crate::stdout::print(format_args!("\n"));
            self.prompt_shown = false;
        }
    }

    pub(super) fn end_line(&mut self) {
        if self.open_line {
            crate::stdout::print(format_args!("\n"));
            self.open_line = false;
        }
    }

    pub(super) fn say(&mut self, text: &str) {
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
