//! All of a host's servers in one place: the lifecycles by name, the shared inbox and the
//! questions waiting for the user, behind the same handle/poll contract as one [`Lifecycle`].

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::Instant;
use super::config::{AcpConfig, ServerConfig};
use super::inbox::Inbox;
use super::interaction::{Interaction, InteractionId, InteractionKind, Interactions};
use super::lifecycle::{Action, Input, Lifecycle, Refusal, ServerState};

/// The servers of one `.agentao/acp.json`; `T` is the host's handle for answering a question.
///
/// Call order as for [`Lifecycle`]: after any `handle*`, `open_interaction`,
/// `resolve_interaction`, `start_auto` or `stop_all`, drain [`Supervisor::poll_action`] and
/// [`Supervisor::poll_abandoned`], then read [`Supervisor::poll_timeout`].
#[derive(Debug)]
pub struct Supervisor<T> {
    servers: Vec<(ServerConfig, Lifecycle)>,
    inbox: Inbox,
    interactions: Interactions<T>,
    abandoned: VecDeque<Interaction<T>>,
    next_to_poll: usize,
}

impl<T> Supervisor<T> {
    /// Every loaded server of `config`, `configured`; `seed` varies the interaction ids.
    pub fn new(config: &AcpConfig, seed: u32) -> Self {
        Supervisor {
            servers: config
                .servers()
                .iter()
                .map(|c| (c.clone(), Lifecycle::from_config(c)))
                .collect(),
            inbox: Inbox::new(),
            interactions: Interactions::new(seed),
            abandoned: VecDeque::new(),
            next_to_poll: 0,
        }
    }

    /// Feeds `input` to server `name`. Questions go through
    /// [`Supervisor::open_interaction`] and [`Supervisor::resolve_interaction`] instead of
    /// `InteractionOpened`/`InteractionResolved` inputs, so the registry and the server agree.
    pub fn handle(
        &mut self,
        now: Instant,
        name: &str,
        input: Input<'_>,
    ) -> Result<(), SupervisorError> {
        let at = self.index(name)?;
        let result = self.servers[at].1.handle(now, input);
        self.abandon_orphans(at);
        result.map_err(SupervisorError::Refused)
    }

    /// Acts on every due deadline of every server.
    pub fn handle_timeout(&mut self, now: Instant) {
        for at in 0..self.servers.len() {
            self.servers[at].1.handle_timeout(now);
            self.abandon_orphans(at);
        }
    }

    /// Starts every server whose `autoStart` is true (spawn and handshake).
    pub fn start_auto(&mut self, now: Instant) {
        for at in 0..self.servers.len() {
            if self.servers[at].0.auto_start {
                // A start is never refused.
                let _ = self.servers[at].1.handle(now, Input::Start);
            }
        }
    }

    /// Stops every server (the host is exiting).
    pub fn stop_all(&mut self, now: Instant) {
        for at in 0..self.servers.len() {
            let _ = self.servers[at].1.handle(now, Input::Stop);
            self.abandon_orphans(at);
        }
    }

    /// Registers a question from server `name` and moves it to `waiting_for_user`. Gives the
    /// ticket back (answer it as cancelled yourself) for an unknown server, a server not in a
    /// session, or when too many questions wait.
    pub fn open_interaction(
        &mut self,
        now: Instant,
        name: &str,
        session_id: Option<&str>,
        kind: InteractionKind,
        prompt: &str,
        ticket: T,
    ) -> Result<InteractionId, T> {
        let Ok(at) = self.index(name) else {
            return Err(ticket);
        };
        let lifecycle = &self.servers[at].1;
        if !matches!(
            lifecycle.state(),
            ServerState::Ready | ServerState::Busy | ServerState::WaitingForUser
        ) {
            return Err(ticket);
        }
        let id = self
            .interactions
            .open(now, name, session_id, kind, prompt, ticket)?;
        // Accepted in those three states.
        let _ = self.servers[at].1.handle(now, Input::InteractionOpened);
        Ok(id)
    }

    /// Takes question `id` of server `name` out to answer it, and resumes the server when it
    /// was the last one. `None` if unknown, already answered, or another server's.
    pub fn resolve_interaction(
        &mut self,
        now: Instant,
        name: &str,
        id: InteractionId,
    ) -> Option<Interaction<T>> {
        let at = self.index(name).ok()?;
        let interaction = self.interactions.resolve(name, id)?;
        let _ = self.servers[at].1.handle(now, Input::InteractionResolved);
        Some(interaction)
    }

    /// The next action of any server, with the server's name; servers take turns.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<(&str, Action)> {
        let count = self.servers.len();
        for offset in 0..count {
            let at = (self.next_to_poll + offset) % count;
            if let Some(action) = self.servers[at].1.poll_action() {
                self.next_to_poll = (at + 1) % count;
                return Some((self.servers[at].0.name.as_str(), action));
            }
        }
        None
    }

    /// A question whose turn ended or whose server went away before the user answered: answer
    /// it as cancelled.
    #[must_use]
    pub fn poll_abandoned(&mut self) -> Option<Interaction<T>> {
        self.abandoned.pop_front()
    }

    /// The earliest deadline of any server.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.servers
            .iter()
            .filter_map(|(_, l)| l.poll_timeout())
            .min()
    }

    /// Server `name`'s lifecycle.
    pub fn server(&self, name: &str) -> Option<&Lifecycle> {
        self.servers
            .iter()
            .find(|(c, _)| c.name == name)
            .map(|(_, l)| l)
    }

    /// Server `name`'s config.
    pub fn config(&self, name: &str) -> Option<&ServerConfig> {
        self.servers
            .iter()
            .find(|(c, _)| c.name == name)
            .map(|(c, _)| c)
    }

    /// Every server, in config order.
    pub fn servers(&self) -> impl Iterator<Item = (&ServerConfig, &Lifecycle)> {
        self.servers.iter().map(|(c, l)| (c, l))
    }

    /// How many servers have a process or are getting one (not configured, stopped or
    /// failed), and how many there are: `/acp`'s `(<running>/<total> running)`.
    pub fn running_count(&self) -> (usize, usize) {
        let running = self
            .servers
            .iter()
            .filter(|(_, l)| {
                !matches!(
                    l.state(),
                    ServerState::Configured | ServerState::Stopped | ServerState::Failed
                )
            })
            .count();
        (running, self.servers.len())
    }

    /// The shared inbox.
    pub fn inbox(&mut self) -> &mut Inbox {
        &mut self.inbox
    }

    /// The questions waiting for the user.
    pub fn interactions(&self) -> &Interactions<T> {
        &self.interactions
    }

    fn index(&self, name: &str) -> Result<usize, SupervisorError> {
        self.servers
            .iter()
            .position(|(c, _)| c.name == name)
            .ok_or_else(|| SupervisorError::UnknownServer(String::from(name)))
    }

    /// A server that no longer waits for the user has no use for its questions.
    fn abandon_orphans(&mut self, at: usize) {
        let (config, lifecycle) = &self.servers[at];
        if lifecycle.open_interactions() == 0
            && self.interactions.pending_for(&config.name).next().is_some()
        {
            let name = config.name.clone();
            self.abandoned
                .extend(self.interactions.remove_server(&name));
        }
    }
}

/// Why a [`Supervisor`] call failed.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SupervisorError {
    /// No server of that name is configured: `no ACP server named '<n>'`.
    UnknownServer(String),
    /// The server refused the command.
    Refused(Refusal),
}

impl fmt::Display for SupervisorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SupervisorError::UnknownServer(name) => write!(f, "no ACP server named '{name}'"),
            SupervisorError::Refused(refusal) => write!(f, "{refusal}"),
        }
    }
}

impl core::error::Error for SupervisorError {}
