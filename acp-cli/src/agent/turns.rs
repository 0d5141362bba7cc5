//! The running turns of a backend, one per session, and the state they share: the table both
//! backends keep, so stepping, resuming, cancelling and forgetting are written once.

use std::fmt;

use acp_core::Instant;

use super::backend::{Reply, Step};
use super::session_map::SessionMap;

/// One session's turn, as a [`Turns`] table drives it.
pub(crate) trait SessionTurn {
    /// What every turn of the backend shares (tool ids, `*_always` memory, …).
    type Shared;

    /// The next thing the turn wants done.
    fn step(&mut self, shared: &mut Self::Shared, now: Instant) -> Step;
    /// The outcome of the request the turn waited for.
    fn resume(&mut self, shared: &mut Self::Shared, reply: Reply);
    /// The client cancelled the turn.
    fn cancel(&mut self);
    /// The turn has handed out its last step.
    fn is_finished(&self) -> bool;
    /// The session's MCP tools are now `tools` (R-MCP-5).
    fn mcp_tools_changed(&mut self, _tools: &[crate::mcp::McpTool]) {}
}

/// The turns of one backend by session, and their shared state.
pub(crate) struct Turns<T: SessionTurn> {
    running: SessionMap<T>,
    /// What the turns share.
    pub shared: T::Shared,
}

impl<T: SessionTurn + fmt::Debug> fmt::Debug for Turns<T>
where
    T::Shared: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Turns")
            .field("running", &self.running)
            .field("shared", &self.shared)
            .finish()
    }
}

impl<T: SessionTurn> Default for Turns<T>
where
    T::Shared: Default,
{
    fn default() -> Self {
        Self {
            running: SessionMap::default(),
            shared: T::Shared::default(),
        }
    }
}

impl<T: SessionTurn> Turns<T> {
    /// `session`'s turn starts (the connection guarantees none runs).
    pub(crate) fn start(&mut self, session: &str, turn: T) {
        self.running.insert(session.to_owned(), turn);
    }

    /// Whether `session` has a turn that has not ended yet.
    #[cfg(test)]
    pub(crate) fn is_running(&self, session: &str) -> bool {
        self.running.contains_key(session)
    }

    /// The next step of `session`'s turn; a finished turn leaves the table.
    pub(crate) fn step(&mut self, session: &str, now: Instant) -> Step {
        let Some(turn) = self.running.get_mut(session) else {
            return Step::Waiting;
        };
        let step = turn.step(&mut self.shared, now);
        if turn.is_finished() {
            self.running.remove(session);
        }
        step
    }

    /// Hands `session`'s turn the outcome it waited for.
    pub(crate) fn resume(&mut self, session: &str, reply: Reply) {
        if let Some(turn) = self.running.get_mut(session) {
            turn.resume(&mut self.shared, reply);
        }
    }

    /// Cancels `session`'s turn, if one runs.
    pub(crate) fn cancel(&mut self, session: &str) {
        if let Some(turn) = self.running.get_mut(session) {
            turn.cancel();
        }
    }

    /// Hands `session`'s running turn, if any, the session's new MCP tools.
    pub(crate) fn mcp_tools_changed(&mut self, session: &str, tools: &[crate::mcp::McpTool]) {
        if let Some(turn) = self.running.get_mut(session) {
            turn.mcp_tools_changed(tools);
        }
    }

    /// Drops `session`'s turn, if one runs (the shared state is the backend's to clean).
    pub(crate) fn forget(&mut self, session: &str) {
        self.running.remove(session);
    }
}
