//! Idle points: what waits is shown before each prompt, after each command and while a
//! turn the person waits for runs: the servers' inbox, then the next question, then the
//! prompt; and `/status`.

use acp_host::sanitize::sanitize;
use acp_host::supervisor::inbox::{InboxMessage, MessageKind};

use super::{PROMPT, Repl};

impl Repl {
    /// Shows what waits: the inbox, then the next question, then the prompt.
    pub(super) fn idle_point(&mut self) {
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
    pub(super) fn flush_inbox(&mut self) {
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
    pub(super) fn queue(
        &mut self,
        server: &str,
        kind: MessageKind,
        update_kind: &str,
        text: String,
    ) {
        let session = self.glue.link(server).and_then(|l| l.session());
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

    /// `/status`: the main agent, then the ACP summary (R-HOST-12 idle points).
    pub(super) fn status(&mut self) -> String {
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
}
