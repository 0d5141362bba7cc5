//! What servers said while the user was looking elsewhere.
//!
//! Messages from all servers wait here, in arrival order, until the host renders them at an
//! idle point. The queue is bounded: when full, the **oldest** message goes and
//! [`Inbox::dropped`] counts it, so a flooding agent costs bounded memory and the newest state
//! is what the user sees.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;

use super::Instant;

/// Default capacity.
pub const INBOX_CAPACITY: usize = 256;

/// What kind of message it is, from the method that carried it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// `session/update`.
    Response,
    /// `session/request_permission`.
    Permission,
    /// `_agentao.cn/ask_user`.
    Input,
    /// Anything else a server sent.
    Notification,
    /// Something went wrong with the server (crash, timeout); produced by the host.
    Error,
}

impl MessageKind {
    /// The kind for a method name.
    pub fn for_method(method: &str) -> MessageKind {
        match method {
            "session/update" => MessageKind::Response,
            "session/request_permission" => MessageKind::Permission,
            "_agentao.cn/ask_user" => MessageKind::Input,
            _ => MessageKind::Notification,
        }
    }

    /// Whether the message needs the user's answer.
    pub const fn is_interaction(self) -> bool {
        matches!(self, MessageKind::Permission | MessageKind::Input)
    }
}

/// One queued message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboxMessage {
    /// The server's name.
    pub server: String,
    /// The session the message itself names (its `sessionId`), not whatever session the
    /// host currently has (Agentao stamps its current one: a bug).
    pub session_id: Option<String>,
    /// What kind of message it is.
    pub kind: MessageKind,
    /// The `sessionUpdate` kind for updates, the method for requests.
    pub update_kind: Option<String>,
    /// The text to show (sanitise it before display).
    pub text: String,
    /// When it arrived.
    pub at: Instant,
}

/// A bounded FIFO of [`InboxMessage`]s; see the module docs.
#[derive(Clone, Debug)]
pub struct Inbox {
    messages: VecDeque<InboxMessage>,
    capacity: usize,
    dropped: u64,
}

impl Default for Inbox {
    fn default() -> Self {
        Self::with_capacity(INBOX_CAPACITY)
    }
}

impl Inbox {
    /// An inbox of [`INBOX_CAPACITY`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An inbox holding at most `capacity` messages (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            messages: VecDeque::new(),
            capacity,
            dropped: 0,
        }
    }

    /// Queues `message`, dropping (and counting) the oldest one if full.
    pub fn push(&mut self, message: InboxMessage) {
        if self.messages.len() >= self.capacity {
            self.messages.pop_front();
            self.dropped += 1;
        }
        self.messages.push_back(message);
    }

    /// Takes every queued message, oldest first.
    pub fn drain(&mut self) -> Vec<InboxMessage> {
        self.messages.drain(..).collect()
    }

    /// The queued messages, oldest first, without taking them.
    pub fn peek(&self) -> impl Iterator<Item = &InboxMessage> {
        self.messages.iter()
    }

    /// How many messages wait.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// How many messages were dropped for lack of room since the inbox was made.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}
