//! The receiving half of a server connection, shared by the transports and the client: what a
//! transport reads goes through [`Inbound`] into the protocol state, and each answer to the
//! call waiting for it. Its own module so the transports ([`super::stdio`], [`super::http`])
//! and [`super::client`], which holds them, do not import each other.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use smol::channel::Sender;

use super::wire::{McpEvent, McpWire, RpcError};

/// Why a request to a server failed.
#[derive(Clone, Debug, PartialEq)]
pub enum McpError {
    /// The server answered with a JSON-RPC error.
    Rpc(RpcError),
    /// The server is gone (exited, closed its output, or its connection failed).
    Closed(String),
    /// The server's answer does not have the shape the method's result has.
    BadResult(String),
}

impl std::fmt::Display for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpError::Rpc(error) => write!(f, "the server answered {error}"),
            McpError::Closed(why) => f.write_str(why),
            McpError::BadResult(why) => write!(f, "the server's answer cannot be read: {why}"),
        }
    }
}

/// State shared with the reader task.
#[derive(Debug, Default)]
pub(super) struct Shared {
    pub(super) wire: McpWire,
    pub(super) pending: HashMap<u64, Sender<Result<Value, McpError>>>,
    /// The server said its tools changed since the list was last taken (R-MCP-5).
    pub(super) tools_changed: bool,
    /// Why the connection is over, once it is.
    pub(super) closed: Option<String>,
}

/// Where the lines go: the transport's writer.
pub(super) type Outgoing = Sender<Vec<u8>>;

/// The receiving half of a transport: what it read, handed to the protocol state.
#[derive(Clone, Debug)]
pub(super) struct Inbound {
    pub(super) shared: Arc<Mutex<Shared>>,
    pub(super) outgoing: Outgoing,
    pub(super) changes: Sender<()>,
    pub(super) name: String,
}

impl Inbound {
    /// Bytes of the server's output.
    pub(super) fn bytes(&self, bytes: &[u8]) {
        self.with_wire(|wire| wire.handle_bytes(bytes));
    }

    /// One whole message (HTTP).
    pub(super) fn message(&self, text: &str) {
        self.with_wire(|wire| wire.handle_message(text));
    }

    /// Whether our request `id` still waits for its answer.
    pub(super) fn is_waiting(&self, id: u64) -> bool {
        lock(&self.shared).pending.contains_key(&id)
    }

    /// Our request `id` will get no answer (its HTTP exchange failed): its caller hears why.
    pub(super) fn fail(&self, id: u64, why: String) {
        if let Some(waiter) = lock(&self.shared).pending.remove(&id) {
            let _ = waiter.try_send(Err(McpError::Closed(why)));
        }
    }

    /// The output ended: every waiting call fails with `why`.
    pub(super) fn closed(&self, why: String) {
        self.with_wire(McpWire::handle_eof);
        let mut shared = lock(&self.shared);
        shared.closed.get_or_insert(why.clone());
        for (_, waiter) in shared.pending.drain() {
            let _ = waiter.try_send(Err(McpError::Closed(why.clone())));
        }
    }

    fn with_wire(&self, feed: impl FnOnce(&mut McpWire)) {
        let mut shared = lock(&self.shared);
        feed(&mut shared.wire);
        while let Some(event) = shared.wire.poll_event() {
            match event {
                McpEvent::Response { id, outcome } => match shared.pending.remove(&id) {
                    Some(waiter) => {
                        let _ = waiter.try_send(outcome.map_err(McpError::Rpc));
                    }
                    None => tracing::debug!(server = self.name, id, "late MCP answer dropped"),
                },
                McpEvent::ToolsChanged => {
                    shared.tools_changed = true;
                    let _ = self.changes.try_send(());
                }
                McpEvent::Ignored(why) => {
                    tracing::debug!(server = self.name, why, "MCP line ignored")
                }
            }
        }
        let answers = shared.wire.take_transmit();
        if !answers.is_empty() {
            let _ = self.outgoing.try_send(answers);
        }
    }
}

pub(super) fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
