//! Questions on screen, one at a time: shown, then answered by a typed line, a single key
//! (permission, at a terminal) or Ctrl-C, which rejects the question or cancels the turn.

use acp_host::supervisor::answer::Decision;
use acp_host::supervisor::interaction::InteractionId;
use acp_host::supervisor::lifecycle::Input;

use crate::client::glue::{Answer, Ask, Question};
use crate::client::render;
use crate::client::terminal::RawMode;

use super::{PROMPT, Repl, Target};

impl Repl {
    /// Shows the oldest waiting question (servers first, then the main agent).
    pub(super) fn show_next_question(&mut self) {
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
    pub(super) fn keys_for_question(&mut self) {
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

    pub(super) fn question(&mut self, target: &Target, id: InteractionId) -> Option<Question> {
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
    pub(super) async fn answer_line(&mut self, line: Option<&str>) {
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
    pub(super) async fn answer_key(&mut self, key: &[u8]) {
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

    pub(super) async fn answer(&mut self, target: &Target, id: InteractionId, answer: Answer<'_>) {
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

    pub(super) async fn on_interrupt(&mut self) {
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
}
