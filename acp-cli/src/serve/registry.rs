//! The server's live state: its options, how it starts an agent, the Streamable HTTP
//! connections by `Acp-Connection-Id` with their streams, and the router that puts each of an
//! agent's messages on its stream (R-NET-3).
//!
//! Every queue here is bounded (R-NET-6): a stream holds at most [`STREAM_QUEUE`] messages;
//! when one is full the router waits, the agent's output queue fills, and the agent's pump
//! stops writing, so the turns of that connection pause until the client reads again.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use smol::channel::{Receiver, Sender};

use super::task::spawn_local;

use super::link::{self, Link};
use super::route::{self, SESSION_OPENING};
use super::{STREAM_QUEUE, SpawnAgent, Stats};

/// Session streams a connection may open for sessions it has not seen yet (a client opens a
/// session's stream before it posts its `session/load`); past this an unknown session is 404
/// (R-NET-3).
pub(crate) const UNCONFIRMED_STREAMS: usize = 4;

/// What the server was asked to be.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// Largest POST body (R-NET-7).
    pub(crate) max_body: usize,
    /// A connection with no request and no message either way for this long is closed
    /// (R-NET-8).
    pub(crate) idle_timeout: Duration,
    /// A comment on an SSE stream after this much silence (R-NET-4).
    pub(crate) keepalive: Duration,
}

/// The server's state, shared by every socket's task (one thread).
pub(crate) struct Server {
    pub(crate) gate: super::auth::Gate,
    pub(crate) limits: Limits,
    spawn: SpawnAgent,
    connections: RefCell<HashMap<String, Rc<HttpConnection>>>,
    pub(crate) stats: Arc<Stats>,
    /// Dropped at shutdown: every WebSocket task waiting on it ends its agent's input.
    shutdown: RefCell<Option<Sender<()>>>,
    shutdown_seen: Receiver<()>,
}

impl Server {
    pub(crate) fn new(
        gate: super::auth::Gate,
        limits: Limits,
        spawn: SpawnAgent,
        stats: Arc<Stats>,
    ) -> Rc<Self> {
        let (shutdown, shutdown_seen) = smol::channel::bounded(1);
        Rc::new(Self {
            gate,
            limits,
            spawn,
            connections: RefCell::new(HashMap::new()),
            stats,
            shutdown: RefCell::new(Some(shutdown)),
            shutdown_seen,
        })
    }

    /// A new agent on a new pipe: the network side's ends.
    pub(crate) fn start_agent(&self) -> Link {
        let (link, reader, writer) = link::pipe();
        (self.spawn)(reader, writer);
        link
    }

    /// Resolves at shutdown.
    pub(crate) async fn shutting_down(&self) {
        let _ = self.shutdown_seen.recv().await;
    }

    /// Ends every connection's input: WebSocket tasks see it, HTTP connections are dropped.
    pub(crate) fn shut_down(&self) {
        self.shutdown.borrow_mut().take();
        let all: Vec<_> = self.connections.borrow_mut().drain().collect();
        for (_, connection) in all {
            connection.end();
        }
    }

    pub(crate) fn connection(&self, id: &str) -> Option<Rc<HttpConnection>> {
        self.connections.borrow().get(id).cloned()
    }

    /// Opens a Streamable HTTP connection: a fresh id, a fresh agent, its router.
    pub(crate) fn open_http(self: &Rc<Self>) -> Rc<HttpConnection> {
        let link = self.start_agent();
        let connection = Rc::new(HttpConnection {
            id: new_id(),
            input: RefCell::new(Some(link.input)),
            connection_stream: Rc::new(Stream::new(true)),
            sessions: RefCell::new(HashMap::new()),
            scopes: RefCell::new(HashMap::new()),
            init: RefCell::new(None),
            last_active: Cell::new(Instant::now()),
            stats: Arc::clone(&self.stats),
        });
        self.connections
            .borrow_mut()
            .insert(connection.id.clone(), Rc::clone(&connection));
        let router = Rc::clone(&connection);
        let server = Rc::clone(self);
        spawn_local(async move {
            route_all(&router, link.output).await;
            server.connections.borrow_mut().remove(&router.id);
            router.close_streams();
        });
        let idle = Rc::clone(&connection);
        let server = Rc::clone(self);
        spawn_local(async move {
            idle.wait_idle(server.limits.idle_timeout).await;
            if server.connections.borrow_mut().remove(&idle.id).is_some() {
                tracing::info!(connection = idle.id.as_str(), "idle connection closed");
            }
            idle.end();
        });
        connection
    }

    /// `DELETE`: the connection ends (its agent sees EOF, its sessions are saved).
    pub(crate) fn close_http(&self, id: &str) -> bool {
        let connection = self.connections.borrow_mut().remove(id);
        connection.map(|c| c.end()).is_some()
    }
}

/// A connection id: 128 random bits, hex.
pub(crate) fn new_id() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        // No randomness: unique still (the token, not the id, is what guards).
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = nanos.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One SSE stream's queue and whether a client holds it.
pub(crate) struct Stream {
    sender: Sender<Vec<u8>>,
    receiver: Receiver<Vec<u8>>,
    attached: Cell<bool>,
    /// The session is known to the connection (not a stream opened ahead of a load).
    confirmed: Cell<bool>,
}

impl Stream {
    fn new(confirmed: bool) -> Self {
        let (sender, receiver) = smol::channel::bounded(STREAM_QUEUE);
        Self {
            sender,
            receiver,
            attached: Cell::new(false),
            confirmed: Cell::new(confirmed),
        }
    }

    /// Takes the stream for one GET; `None` when another GET holds it (409).
    pub(crate) fn attach(self: &Rc<Self>) -> Option<Attached> {
        if self.attached.replace(true) {
            return None;
        }
        Some(Attached(Rc::clone(self)))
    }
}

/// A GET's hold on a stream; released when dropped.
pub(crate) struct Attached(Rc<Stream>);

impl Attached {
    /// The next message; `None` once the connection has ended and the queue is empty.
    pub(crate) async fn next(&self) -> Option<Vec<u8>> {
        self.0.receiver.recv().await.ok()
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        self.0.attached.set(false);
    }
}

/// Where an answer goes.
#[derive(Clone, Debug)]
enum Scope {
    Connection,
    Session(String),
}

/// One Streamable HTTP connection.
pub(crate) struct HttpConnection {
    pub(crate) id: String,
    /// Lines to the agent; `None` once ended.
    input: RefCell<Option<Sender<Vec<u8>>>>,
    connection_stream: Rc<Stream>,
    sessions: RefCell<HashMap<String, Rc<Stream>>>,
    /// Pending client requests: where each answer goes, by id.
    scopes: RefCell<HashMap<String, Scope>>,
    /// The `initialize` waiting for its answer in the POST's body.
    init: RefCell<Option<(String, Sender<Vec<u8>>)>>,
    last_active: Cell<Instant>,
    stats: Arc<Stats>,
}

/// Why a GET cannot have a stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StreamRefused {
    Busy,
    UnknownSession,
}

impl HttpConnection {
    pub(crate) fn touch(&self) {
        self.last_active.set(Instant::now());
    }

    /// Ends the agent's input; the router ends once the agent has.
    pub(crate) fn end(&self) {
        self.input.borrow_mut().take();
    }

    fn close_streams(&self) {
        self.connection_stream.sender.close();
        for stream in self.sessions.borrow().values() {
            stream.sender.close();
        }
    }

    /// Hands one client message to the agent, remembering where its answer goes. Waits while
    /// the agent's input queue is full (R-NET-6). `false` once the connection has ended.
    pub(crate) async fn send(
        &self,
        message: &[u8],
        peek: &route::Peek,
        session: Option<&str>,
    ) -> bool {
        self.touch();
        if let (Some(id), Some(method)) = (&peek.id, &peek.method) {
            let scope = match session {
                Some(s) if !SESSION_OPENING.contains(&method.as_str()) => Scope::Session(s.into()),
                _ => Scope::Connection,
            };
            self.scopes.borrow_mut().insert(id.clone(), scope);
        }
        if let Some(session) = session {
            // A session a client names in a POST is one it may stream.
            self.session_stream(session).confirmed.set(true);
        }
        let input = self.input.borrow().clone();
        match input {
            Some(input) => input.send(link::message_line(message)).await.is_ok(),
            None => false,
        }
    }

    /// Sends `initialize` and waits for its answer; `None` if the agent ended first.
    pub(crate) async fn initialize(&self, message: &[u8], id: &str) -> Option<Vec<u8>> {
        let (sender, answer) = smol::channel::bounded(1);
        *self.init.borrow_mut() = Some((id.to_owned(), sender));
        let input = self.input.borrow().clone()?;
        input.send(link::message_line(message)).await.ok()?;
        answer.recv().await.ok()
    }

    /// The connection's stream, or a session's, for a GET.
    pub(crate) fn stream(&self, session: Option<&str>) -> Result<Attached, StreamRefused> {
        let stream = match session {
            None => Rc::clone(&self.connection_stream),
            Some(session) => {
                let known = self.sessions.borrow().get(session).cloned();
                match known {
                    Some(stream) => stream,
                    None => {
                        let unconfirmed = self
                            .sessions
                            .borrow()
                            .values()
                            .filter(|s| !s.confirmed.get())
                            .count();
                        if unconfirmed >= UNCONFIRMED_STREAMS {
                            return Err(StreamRefused::UnknownSession);
                        }
                        let stream = Rc::new(Stream::new(false));
                        self.sessions
                            .borrow_mut()
                            .insert(session.to_owned(), Rc::clone(&stream));
                        stream
                    }
                }
            }
        };
        self.touch();
        stream.attach().ok_or(StreamRefused::Busy)
    }

    fn session_stream(&self, session: &str) -> Rc<Stream> {
        let mut sessions = self.sessions.borrow_mut();
        Rc::clone(
            sessions
                .entry(session.to_owned())
                .or_insert_with(|| Rc::new(Stream::new(true))),
        )
    }

    /// Where one of the agent's messages goes (R-NET-3); `None` for the `initialize` answer,
    /// which has been handed to its POST.
    fn target(&self, message: &[u8]) -> Option<Rc<Stream>> {
        let peek = route::peek(message);
        if peek.method.is_some() {
            // The agent's own requests and notifications: their session's stream.
            return Some(match &peek.params_session {
                Some(session) => self.session_stream(session),
                None => Rc::clone(&self.connection_stream),
            });
        }
        let id = peek.id.unwrap_or_default();
        let init = self
            .init
            .borrow()
            .as_ref()
            .is_some_and(|(wanted, _)| *wanted == id);
        if init && let Some((_, answer)) = self.init.borrow_mut().take() {
            let _ = answer.try_send(message.to_vec());
            return None;
        }
        if let Some(session) = &peek.result_session {
            // A session opened (`session/new`, `session/fork`): its stream exists from now.
            self.session_stream(session).confirmed.set(true);
        }
        let scope = self.scopes.borrow_mut().remove(&id);
        Some(match scope {
            Some(Scope::Session(session)) => self.session_stream(&session),
            _ => Rc::clone(&self.connection_stream),
        })
    }

    /// Resolves once the connection has had nothing for `timeout` (R-NET-8).
    async fn wait_idle(&self, timeout: Duration) {
        loop {
            let due = self.last_active.get() + timeout;
            if Instant::now() >= due {
                return;
            }
            smol::Timer::at(due).await;
            if self.input.borrow().is_none() {
                return;
            }
        }
    }
}

/// Routes every message of the agent until it ends.
async fn route_all(connection: &HttpConnection, output: Receiver<Vec<u8>>) {
    while let Ok(message) = output.recv().await {
        connection.touch();
        let Some(stream) = connection.target(&message) else {
            continue;
        };
        // Full: wait for the client to read (R-NET-6).
        if stream.sender.send(message).await.is_err() {
            continue;
        }
        let held = stream.sender.len();
        connection
            .stats
            .stream_queue_peak
            .fetch_max(held, Ordering::Relaxed);
    }
    // The agent has ended: an `initialize` still waiting gets no answer.
    connection.init.borrow_mut().take();
}
