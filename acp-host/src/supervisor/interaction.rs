//! Permission and input requests waiting for the user.
//!
//! When a server asks for permission (`session/request_permission`) or for text
//! (`_agentao.cn/ask_user`) during an interactive turn, the host shows the question and the
//! user answers later, maybe after other servers asked too. Each waiting request gets a short
//! id the user can type (`a3f09c1e`), and carries the host's own `ticket` (whatever it needs to
//! answer the request, e.g. the connection's permission ticket) until it is resolved.
//!
//! Ids are 8 lowercase hex digits. They come from a counter put through a fixed permutation of
//! the 32-bit numbers, offset by a caller-chosen seed: deterministic for tests, different per
//! seed, never repeated within 2^32 requests, and unlike a bare counter one mistyped digit is
//! unlikely to name another live request.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::Instant;

/// The most requests that may wait at once; [`Interactions::open`] refuses more, and the host
/// answers the refused request itself (as rejected/cancelled).
pub const MAX_PENDING: usize = 256;

/// A user-visible interaction id: 8 lowercase hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InteractionId(pub u32);

impl InteractionId {
    /// Reads an id as the user typed it: exactly 8 hex digits, either case, surrounding
    /// whitespace ignored.
    pub fn parse(text: &str) -> Option<InteractionId> {
        let text = text.trim();
        if text.len() != 8 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(text, 16).ok().map(InteractionId)
    }
}

impl fmt::Display for InteractionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08x}", self.0)
    }
}

/// What the server wants from the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InteractionKind {
    /// A yes/no decision on a tool call (`session/request_permission`).
    Permission,
    /// Free text (`_agentao.cn/ask_user`); declining it answers `{"outcome":"cancelled"}`,
    /// never a permission-shaped outcome (Agentao's bug).
    Input,
}

/// One waiting request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interaction<T> {
    /// The id shown to the user.
    pub id: InteractionId,
    /// The server that asked.
    pub server: String,
    /// The session the request named.
    pub session_id: Option<String>,
    /// Permission or input.
    pub kind: InteractionKind,
    /// The question, for display (sanitise it first).
    pub prompt: String,
    /// When it was opened.
    pub opened_at: Instant,
    /// The host's handle for answering it.
    pub ticket: T,
}

/// The waiting requests of all servers, in the order they arrived.
#[derive(Clone, Debug)]
pub struct Interactions<T> {
    pending: Vec<Interaction<T>>,
    counter: u32,
    seed: u32,
}

impl<T> Interactions<T> {
    /// An empty registry whose ids depend on `seed`.
    pub fn new(seed: u32) -> Self {
        Self {
            pending: Vec::new(),
            counter: 0,
            seed,
        }
    }

    /// Registers a request and returns its id, or gives `ticket` back when [`MAX_PENDING`]
    /// requests already wait.
    pub fn open(
        &mut self,
        now: Instant,
        server: &str,
        session_id: Option<&str>,
        kind: InteractionKind,
        prompt: &str,
        ticket: T,
    ) -> Result<InteractionId, T> {
        if self.pending.len() >= MAX_PENDING {
            return Err(ticket);
        }
        let id = InteractionId(permute(self.counter.wrapping_add(self.seed)));
        self.counter = self.counter.wrapping_add(1);
        self.pending.push(Interaction {
            id,
            server: String::from(server),
            session_id: session_id.map(String::from),
            kind,
            prompt: String::from(prompt),
            opened_at: now,
            ticket,
        });
        Ok(id)
    }

    /// The waiting request `id`.
    pub fn get(&self, id: InteractionId) -> Option<&Interaction<T>> {
        self.pending.iter().find(|i| i.id == id)
    }

    /// Takes request `id` of `server` out to answer it. `None` if the id is unknown, already
    /// resolved, or belongs to another server.
    pub fn resolve(&mut self, server: &str, id: InteractionId) -> Option<Interaction<T>> {
        let at = self
            .pending
            .iter()
            .position(|i| i.id == id && i.server == server)?;
        Some(self.pending.remove(at))
    }

    /// The requests of `server`, oldest first.
    pub fn pending_for<'a>(&'a self, server: &'a str) -> impl Iterator<Item = &'a Interaction<T>> {
        self.pending.iter().filter(move |i| i.server == server)
    }

    /// Every waiting request, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Interaction<T>> {
        self.pending.iter()
    }

    /// Takes out every request of `server` (its turn ended or its process went away); the host
    /// settles each ticket as cancelled.
    pub fn remove_server(&mut self, server: &str) -> Vec<Interaction<T>> {
        let (gone, kept) = core::mem::take(&mut self.pending)
            .into_iter()
            .partition(|i| i.server == server);
        self.pending = kept;
        gone
    }

    /// How many requests wait.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether none wait.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// A bijection on `u32` (xor-shift and odd-multiply rounds), so distinct inputs give distinct
/// ids.
const fn permute(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}
