//! The demo backend: a deterministic agent driven by plain prompt text (its commands are in
//! the README; its rules are R-DEMO-1 … R-DEMO-4 of docs/protocol.md).
//!
//! It is what editors, tests, benchmarks and newcomers talk to when no model is configured.
//! Each line of the prompt's text blocks is a command (`/echo`, `/tool`, `/flood`, …) or plain
//! text to echo; the turn runs them in order and drives every protocol feature from them:
//! updates of every kind, permission requests, `ask_user`, the client's file system, sleeps
//! that a cancel cuts short, floods that go only as fast as the client reads, and every way a
//! turn can end.
//!
//! - [`exchange`]: `acp-cli demo`, a scripted client printing a whole exchange.
//! - [`script`]: the prompt parsed into commands, and the commands the demo offers.
//! - [`turn`]: one turn as a sequence of steps.

pub mod exchange;
pub mod script;
#[cfg(test)]
mod tests;
pub mod turn;

use acp_core::Instant;

use crate::agent::backend::{Backend, Reply, Step, TurnStart};
use crate::agent::turns::Turns;
use turn::DemoTurn;

/// The demo backend: one per connection, one turn at a time per session.
#[derive(Debug, Default)]
pub struct DemoBackend {
    turns: Turns<DemoTurn>,
}

impl DemoBackend {
    /// A backend with no sessions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `session` has a turn that has not ended yet.
    #[cfg(test)]
    pub(crate) fn is_running(&self, session: &str) -> bool {
        self.turns.is_running(session)
    }
}

impl Backend for DemoBackend {
    fn title(&self) -> &'static str {
        crate::agent::app::DEMO_TITLE
    }

    fn start_turn(&mut self, turn: TurnStart<'_>, _now: Instant) {
        let script = script::parse(turn.prompt);
        let used = turn::last_tool_number(turn.history);
        let shared = &mut self.turns.shared;
        shared.last_tool = shared.last_tool.max(used);
        self.turns.start(turn.session, DemoTurn::new(&turn, script));
    }

    fn step(&mut self, session: &str, now: Instant) -> Step {
        self.turns.step(session, now)
    }

    fn resume(&mut self, session: &str, reply: Reply) {
        self.turns.resume(session, reply);
    }

    fn cancel(&mut self, session: &str) {
        self.turns.cancel(session);
    }

    fn mcp_tools_changed(&mut self, session: &str, tools: &[crate::mcp::McpTool]) {
        self.turns.mcp_tools_changed(session, tools);
    }

    fn forget_session(&mut self, session: &str) {
        self.turns.forget(session);
        self.turns.shared.memory.forget_session(session);
        self.turns.shared.plans.remove(session);
    }

    fn session_opened(&self) -> Vec<acp_core::schema::SessionUpdate> {
        vec![script::available_commands()]
    }
}
