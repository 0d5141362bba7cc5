//! The agent application as acp-async's pump sees it: a [`Connection`] whose inputs and
//! outputs are [`AgentApp`]'s and whose events are its notices and jobs, for the driver.

use acp_async::pump::Connection;
use acp_async::smol::Smol;
use acp_async::{Instant, Runtime};

use super::app::{AgentApp, Job, Notice, Workspace};
use super::backend::Backend;

/// The application as the pump's connection: [`AgentApp`]'s inputs and outputs, and its
/// notices and jobs as the events the pump hands to [`Agent`].
pub(crate) struct AppConnection<B, W> {
    pub(crate) app: AgentApp<B, W>,
    /// The pump's clock: room in the outbox lets paused turns step at once.
    pub(crate) clock: Smol,
}

/// What the application hands the driver.
pub(crate) enum AppEvent {
    /// Something for the driver itself.
    Notice(Notice),
    /// Work to start (or drop).
    Job(Job),
}

impl<B: Backend, W: Workspace> Connection for AppConnection<B, W> {
    type Event = AppEvent;
    fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> usize {
        self.app.handle_bytes(now, bytes)
    }
    fn handle_eof(&mut self, now: Instant) {
        self.app.handle_eof(now);
    }
    fn handle_timeout(&mut self, now: Instant) {
        self.app.handle_timeout(now);
    }
    /// Notices first: a session's log file opens before its jobs run.
    fn poll_event(&mut self) -> Option<AppEvent> {
        match self.app.poll_notice() {
            Some(notice) => Some(AppEvent::Notice(notice)),
            None => self.app.poll_job().map(AppEvent::Job),
        }
    }
    fn poll_transmit(&self) -> &[u8] {
        self.app.poll_transmit()
    }
    fn transmitted(&mut self, n: usize) {
        self.app.transmitted(n);
        // Room again: let paused turns fill the outbox while the pipe takes what was written.
        self.app.pump(self.clock.now());
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.app.poll_timeout()
    }
    fn is_input_held(&self) -> bool {
        self.app.is_input_held()
    }
    fn is_closed(&self) -> bool {
        self.app.is_closed()
    }
}
