//! The client side: drive any ACP agent from async code.
//!
//! [`Client::builder`] takes the handlers for what the agent may ask (permission, files,
//! terminals, questions) and gives a [`Client`] handle plus a [`Connection`] future that
//! moves the bytes. Await the connection beside your own code — [`Connection::run_until`],
//! `futures::join!`, `tokio::join!` — on any executor: nothing is spawned.
//!
//! Here the agent is acp-async's own agent side on an in-memory [`duplex`](crate::duplex)
//! pipe; with a process, `ClientBuilder::spawn_tokio` or `spawn_smol` (features `tokio`,
//! `smol`) start it and connect in one call.
//!
//! ```
//! use acp_async::NoTimers;
//! use acp_async::acp_core::prelude::StopReason;
//! use acp_async::client::{Client, ClientError};
//! # use acp_async::acp_core::prelude::{AgentConfig, AgentInfo};
//! # use acp_async::acp_core::schema::PromptRequest;
//! # use acp_async::{Agent, Error, Turn};
//! # struct Hello;
//! # impl Agent for Hello {
//! #     async fn prompt(&self, _: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
//! #         turn.message("Hello!").await?;
//! #         Ok(StopReason::EndTurn)
//! #     }
//! # }
//!
//! let (ours, theirs) = acp_async::duplex::duplex(1 << 16);
//! # let config = AgentConfig::new(AgentInfo::new("hello", "Hello", "1.0"));
//! # let agent = acp_async::serve(config, Hello, NoTimers, theirs.reader, theirs.writer);
//! let (client, connection) =
//!     Client::builder("my-editor", "1.0").connect(NoTimers, ours.reader, ours.writer);
//! let app = connection.run_until(async {
//!     client.initialize().await?;
//!     let session = client.new_session("/home/user/p").await?.session_id;
//!     let mut turn = client.prompt(&session, "Hi").await?;
//!     let mut answer = String::new();
//!     while let Some(update) = turn.next().await {
//!         answer.push_str(update.agent_text().unwrap_or_default());
//!     }
//!     Ok::<_, ClientError>((answer, turn.finish().await?))
//! });
//! let (result, served) = smol::block_on(futures_util::future::join(app, agent));
//! assert_eq!(result, Ok(("Hello!".to_owned(), StopReason::EndTurn)));
//! # served.unwrap();
//! ```
//!
//! acp-core's [`ClientConnection`](acp_core::ClientConnection) takes every protocol
//! decision: what `initialize` advertises (exactly the handlers given, R-INIT-7), what it
//! refuses locally (a method the agent did not advertise, R-RPC-7), answering unserved
//! requests `-32601` (R-FS-2), what a cancel settles (R-CANCEL-3), deadlines (R-HOST-2), EOF
//! (R-RPC-2). This module only carries its commands and events.
//!
//! # Backpressure
//!
//! A running turn's updates wait in a queue of at most
//! [`turn_buffer`](ClientBuilder::turn_buffer) entries. When it is full the connection stops
//! taking events and so stops reading from the agent, whose writes then wait: memory stays
//! bounded by that queue, acp-core's line limit and the pump's read buffer, however far the
//! agent runs ahead. Updates outside a turn go to [`on_update`](ClientBuilder::on_update) as
//! they arrive.

mod driver;
mod error;
mod handler;
mod state;
mod turn;

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll};

use acp_core::conn::client::{AdvertisedMethods, NO_MCP_SERVERS, Serves};
use acp_core::machine::handshake::Capabilities;
use acp_core::prelude::{ClientConfig, Instant, RequestId, UsageError};
use acp_core::schema::{
    ContentBlock, InitializeResponse, ListSessionsResponse, LoadSessionResponse,
    NewSessionResponse, ResumeSessionResponse, SetSessionConfigOptionResponse, decode_result,
};
use futures_io::{AsyncRead, AsyncWrite};
use serde::Serialize;
use serde::de::DeserializeOwned;

use self::driver::{ClientDriver, OnUpdate};
pub use self::error::ClientError;
use self::handler::Handlers;
pub use self::handler::{AskUser, Permissions, ReadTextFile, RejectAll, Terminals, WriteTextFile};
use self::state::{Answer, Core, Inner, State, TurnSlot};
pub use self::turn::{Turn, Update};
use crate::pump::{Pump, Shared};
use crate::runtime::Runtime;

/// Updates a turn's queue holds by default before the connection stops reading.
pub const TURN_BUFFER: usize = 256;

/// A handle to one agent connection: cheap to clone, `!Send` (it shares the connection
/// with its [`Connection`] future on one thread). Every call is a future that resolves with
/// the agent's answer; calls from several tasks interleave freely (one turn per session,
/// as acp-core enforces).
#[derive(Clone)]
pub struct Client {
    inner: Rc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// What the agent said about itself in `initialize`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AgentInfo {
    /// The capabilities that gate what may be sent (load, prompt content, …).
    pub capabilities: Capabilities,
    /// The optional session methods it offers (list, resume, close, …).
    pub methods: AdvertisedMethods,
    /// The whole result, decoded (`None` if it does not match the schema).
    pub response: Option<InitializeResponse>,
    /// The whole result as sent.
    pub json: String,
}

impl Client {
    /// Starts configuring a client named `name` at `version` (`clientInfo`).
    pub fn builder(name: &'static str, version: &'static str) -> ClientBuilder {
        ClientBuilder {
            config: ClientConfig::new(name, version, Serves::NOTHING),
            handlers: Handlers::default(),
            on_update: None,
            turn_buffer: TURN_BUFFER,
        }
    }

    pub(crate) fn from_inner(inner: Rc<Inner>) -> Self {
        Self { inner }
    }

    /// Whether the connection is gone (the agent's output ended, or the [`Connection`]
    /// future ended or was dropped): every call now fails with [`ClientError::Closed`].
    pub fn is_closed(&self) -> bool {
        self.inner.state.borrow().gone
    }

    /// Ends the agent's input (EOF on its stdin) once everything queued is written, while
    /// the agent's output is still read: the agent finishes and exits, and the
    /// [`Connection`] future then ends. The graceful way to hang up when the connection is
    /// awaited with `join!` (dropping it, as [`Connection::run_until`] does, hangs up at
    /// once). Calls made afterwards are not written.
    pub fn close(&self) {
        self.inner.shared.close_output();
    }

    /// `initialize`: must come first. Returns what the agent advertised; fails when the
    /// agent's protocol version is not 1 (R-INIT-6) or it answers with an error.
    pub async fn initialize(&self) -> Result<AgentInfo, ClientError> {
        match self
            .call("initialize", |conn, now| conn.initialize(now))
            .await?
        {
            Answer::Initialized {
                capabilities,
                methods,
                result,
                decoded,
            } => Ok(AgentInfo {
                capabilities,
                methods,
                response: decoded.map(|d| *d),
                json: result.as_json().unwrap_or_default().to_owned(),
            }),
            other => Err(unexpected(other)),
        }
    }

    /// `session/new` in `cwd` (an absolute path), without MCP servers.
    pub async fn new_session(&self, cwd: &str) -> Result<NewSessionResponse, ClientError> {
        self.typed("session/new", |conn, now| {
            conn.new_session(now, cwd, NO_MCP_SERVERS)
        })
        .await
    }

    /// `session/load` (needs the agent's `loadSession`). The history replay arrives before
    /// the answer, at [`ClientBuilder::on_update`].
    pub async fn load_session(
        &self,
        session_id: &str,
        cwd: &str,
    ) -> Result<LoadSessionResponse, ClientError> {
        self.typed("session/load", |conn, now| {
            conn.load_session(now, session_id, cwd, NO_MCP_SERVERS)
        })
        .await
    }

    /// `session/resume` (needs `sessionCapabilities.resume`): reopens without replay.
    pub async fn resume_session(
        &self,
        session_id: &str,
        cwd: &str,
    ) -> Result<ResumeSessionResponse, ClientError> {
        self.typed("session/resume", |conn, now| {
            conn.resume_session(now, session_id, cwd, NO_MCP_SERVERS)
        })
        .await
    }

    /// `session/list` (needs `sessionCapabilities.list`), from `cursor` when paging.
    pub async fn list_sessions(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListSessionsResponse, ClientError> {
        let mut params = serde_json::Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), cursor.into());
        }
        self.request("session/list", &params).await
    }

    /// `session/close` (needs `sessionCapabilities.close`).
    pub async fn close_session(&self, session_id: &str) -> Result<(), ClientError> {
        let params = serde_json::json!({ "sessionId": session_id });
        self.request::<_, serde_json::Value>("session/close", &params)
            .await
            .map(drop)
    }

    /// `session/prompt` with one text block. Returns once the request is sent; the
    /// [`Turn`] then yields the updates and the stop reason. One turn per session
    /// ([`UsageError::TurnInProgress`]).
    pub async fn prompt(&self, session_id: &str, text: &str) -> Result<Turn, ClientError> {
        self.turn(session_id, |conn, now| {
            conn.prompt_text(now, session_id, text)
        })
        .await
    }

    /// `session/prompt` with any content blocks (image, audio and embedded resources only
    /// if the agent's `promptCapabilities` allow them: else refused, nothing sent).
    pub async fn prompt_blocks(
        &self,
        session_id: &str,
        blocks: &[ContentBlock],
    ) -> Result<Turn, ClientError> {
        self.turn(session_id, |conn, now| conn.prompt(now, session_id, blocks))
            .await
    }

    /// Cancels the running turn of `session_id`: `session/cancel` goes out, the session's
    /// open permission and ask_user requests are answered `cancelled` (their handler futures
    /// are dropped), and the turn ends `cancelled` (R-CANCEL-3). Returns whether a turn was
    /// running (cancelling an idle session sends nothing, R-CANCEL-6).
    pub async fn cancel(&self, session_id: &str) -> Result<bool, ClientError> {
        let shared = &self.inner.shared;
        shared
            .with_room(|conn| conn.cancel(shared.now(), session_id))
            .await
            .map_err(ClientError::from)
    }

    /// `session/set_mode` (refused while a turn runs, R-CONFIG-3).
    pub async fn set_mode(&self, session_id: &str, mode_id: &str) -> Result<(), ClientError> {
        self.call("session/set_mode", |conn, now| {
            conn.set_mode(now, session_id, mode_id)
        })
        .await
        .map(drop)
    }

    /// `session/set_config_option` with exactly `sessionId`, `configId` and `value`
    /// (R-CONFIG-1); the answer carries the full set of options.
    pub async fn set_config_option<V: Serialize + ?Sized>(
        &self,
        session_id: &str,
        config_id: &str,
        value: &V,
    ) -> Result<SetSessionConfigOptionResponse, ClientError> {
        self.typed("session/set_config_option", |conn, now| {
            conn.set_config_option(now, session_id, config_id, value)
        })
        .await
    }

    /// Any other request (`authenticate`, `_agentao.cn/set_model`, an extension), its result
    /// decoded as `R` (`serde_json::Value` for any). Optional methods the agent did not
    /// advertise are refused before sending (R-RPC-7).
    pub async fn request<P, R>(&self, method: &str, params: &P) -> Result<R, ClientError>
    where
        P: Serialize + ?Sized,
        R: DeserializeOwned,
    {
        self.typed(method, |conn, now| conn.request(now, method, params))
            .await
    }

    /// Sends a request to `method` (waiting for room in the outbox when it is full) and
    /// waits for its answer.
    async fn call(
        &self,
        method: &str,
        mut send: impl FnMut(&mut Core, Instant) -> Result<RequestId, UsageError>,
    ) -> Result<Answer, ClientError> {
        let request = self.send(&mut send).await?;
        let answer = Waiting {
            inner: &self.inner,
            request,
        }
        .await;
        match answer {
            Answer::Refused(failure) => Err(ClientError::failed(method, failure)),
            Answer::Failed(error) => Err(error),
            answer => Ok(answer),
        }
    }

    async fn send(
        &self,
        send: &mut impl FnMut(&mut Core, Instant) -> Result<RequestId, UsageError>,
    ) -> Result<RequestId, ClientError> {
        if self.is_closed() {
            return Err(ClientError::Closed);
        }
        let shared = &self.inner.shared;
        let request = shared.with_room(|conn| send(conn, shared.now())).await?;
        // No `.await` between sending and registering: no event can come in between.
        self.inner.state.borrow_mut().expect(request);
        Ok(request)
    }

    /// [`call`](Self::call), with the result decoded as `method`'s.
    async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        send: impl FnMut(&mut Core, Instant) -> Result<RequestId, UsageError>,
    ) -> Result<T, ClientError> {
        match self.call(method, send).await? {
            Answer::Result(result) => {
                Ok(decode_result(method, result.as_json().unwrap_or("null"))?)
            }
            other => Err(unexpected(other)),
        }
    }

    async fn turn(
        &self,
        session_id: &str,
        mut send: impl FnMut(&mut Core, Instant) -> Result<RequestId, UsageError>,
    ) -> Result<Turn, ClientError> {
        let request = self.send(&mut send).await?;
        let mut state = self.inner.state.borrow_mut();
        // The turn's answer arrives as `TurnEnded`, into the turn's slot.
        state.forget(request);
        state.active.insert(session_id.to_owned(), request);
        state.turns.insert(
            request,
            TurnSlot {
                queue: Default::default(),
                end: None,
                waker: None,
                detached: false,
            },
        );
        drop(state);
        Ok(Turn {
            inner: self.inner.clone(),
            request,
            session: session_id.to_owned(),
            end: None,
        })
    }
}

/// An answer of the wrong shape for the call: acp-core pairs each request with its own
/// event kind, so this does not happen; reported rather than panicking.
fn unexpected(answer: Answer) -> ClientError {
    match answer {
        Answer::Failed(error) => error,
        _ => ClientError::Closed,
    }
}

/// The future of one request's answer; forgets the request when dropped early.
struct Waiting<'a> {
    inner: &'a Inner,
    request: RequestId,
}

impl Future for Waiting<'_> {
    type Output = Answer;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answer> {
        let mut state = self.inner.state.borrow_mut();
        match state.poll_answer(self.request, cx.waker()) {
            Some(answer) => Poll::Ready(answer),
            None if !state.expects(self.request) => {
                Poll::Ready(Answer::Failed(ClientError::Closed))
            }
            None => Poll::Pending,
        }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.inner.state.borrow_mut().forget(self.request);
    }
}

/// Configures a [`Client`]: its handlers, acp-core's [`ClientConfig`], the turn buffer.
/// What `initialize` advertises follows the handlers given, and nothing else.
pub struct ClientBuilder {
    config: ClientConfig,
    handlers: Handlers,
    on_update: Option<OnUpdate>,
    turn_buffer: usize,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("config", &self.config)
            .field("serves", &self.serves())
            .field("turn_buffer", &self.turn_buffer)
            .finish()
    }
}

impl ClientBuilder {
    /// Adjusts acp-core's configuration: deadlines (defaults: 30 s per request, 60 s per
    /// turn; `None` waits), limits, `title`, the update kinds shown (`shows`). Its `serves`
    /// is replaced by what the handlers serve.
    pub fn config(mut self, f: impl FnOnce(&mut ClientConfig)) -> Self {
        f(&mut self.config);
        self
    }

    /// Answers `session/request_permission` (default: [`RejectAll`]).
    pub fn permissions(mut self, handler: impl Permissions) -> Self {
        self.handlers.permissions = Rc::new(handler);
        self
    }

    /// Serves `fs/read_text_file` and advertises `fs.readTextFile`.
    pub fn read_text_file(mut self, handler: impl ReadTextFile) -> Self {
        self.handlers.read = Some(Rc::new(handler));
        self
    }

    /// Serves `fs/write_text_file` and advertises `fs.writeTextFile`.
    pub fn write_text_file(mut self, handler: impl WriteTextFile) -> Self {
        self.handlers.write = Some(Rc::new(handler));
        self
    }

    /// Serves `terminal/*` and advertises `terminal`.
    pub fn terminals(mut self, handler: impl Terminals) -> Self {
        self.handlers.terminals = Some(Rc::new(handler));
        self
    }

    /// Serves `_agentao.cn/ask_user` and lists it in `clientCapabilities._meta`.
    pub fn ask_user(mut self, handler: impl AskUser) -> Self {
        self.handlers.ask_user = Some(Rc::new(handler));
        self
    }

    /// Receives the updates no [`Turn`] takes: between turns (`available_commands_update`,
    /// `current_mode_update`, …), a `session/load` replay, and the flagged ones (after a
    /// turn, for an unknown session). Called as they arrive; without it they are dropped.
    pub fn on_update(mut self, f: impl FnMut(Update) + 'static) -> Self {
        self.on_update = Some(Box::new(f));
        self
    }

    /// How many updates a turn's queue holds before the connection stops reading from the
    /// agent (default [`TURN_BUFFER`]; at least 1).
    pub fn turn_buffer(mut self, updates: usize) -> Self {
        self.turn_buffer = updates.max(1);
        self
    }

    fn serves(&self) -> Serves {
        let h = &self.handlers;
        Serves {
            fs_read: h.read.is_some(),
            fs_write: h.write.is_some(),
            terminal: h.terminals.is_some(),
            ask_user: h.ask_user.is_some(),
            ..Serves::NOTHING
        }
    }

    /// A client on `reader` (the agent's output) and `writer` (its input), with `runtime`'s
    /// clock and timers. Nothing is sent until [`Client::initialize`]; the [`Connection`]
    /// must be awaited for anything to move.
    pub fn connect<R, Rd, Wr>(
        mut self,
        runtime: R,
        reader: Rd,
        writer: Wr,
    ) -> (Client, Connection<R, Rd, Wr>)
    where
        R: Runtime,
        Rd: AsyncRead + Unpin,
        Wr: AsyncWrite + Unpin,
    {
        self.config.serves = self.serves();
        let shared = Shared::new(Core::new(self.config), &runtime);
        let inner = Rc::new(Inner {
            shared: shared.clone(),
            state: RefCell::new(State::new(self.turn_buffer)),
        });
        let driver = ClientDriver::new(inner.clone(), self.handlers, self.on_update);
        let pump = Pump::new(shared, driver, runtime, reader, writer);
        let connection = Connection {
            pump,
            inner: inner.clone(),
        };
        (Client { inner }, connection)
    }

    /// Starts `command` as an agent process (stdin and stdout piped, stderr inherited,
    /// killed when the returned process is dropped) and connects to it on tokio.
    #[cfg(feature = "tokio")]
    #[allow(clippy::type_complexity)]
    pub fn spawn_tokio(
        self,
        command: ::tokio::process::Command,
    ) -> io::Result<(
        Client,
        Connection<
            crate::tokio::Tokio,
            tokio_util::compat::Compat<::tokio::process::ChildStdout>,
            tokio_util::compat::Compat<::tokio::process::ChildStdin>,
        >,
        ::tokio::process::Child,
    )> {
        let child = crate::tokio::spawn(command)?;
        let (client, connection) =
            self.connect(crate::tokio::Tokio::new(), child.stdout, child.stdin);
        Ok((client, connection, child.process))
    }

    /// Starts `command` as an agent process (stdin and stdout piped, stderr inherited,
    /// killed when the returned process is dropped) and connects to it on smol.
    #[cfg(feature = "smol")]
    #[allow(clippy::type_complexity)]
    pub fn spawn_smol(
        self,
        command: ::smol::process::Command,
    ) -> io::Result<(
        Client,
        Connection<crate::smol::Smol, ::smol::process::ChildStdout, ::smol::process::ChildStdin>,
        ::smol::process::Child,
    )> {
        let child = crate::smol::spawn(command)?;
        let (client, connection) =
            self.connect(crate::smol::Smol::new(), child.stdout, child.stdin);
        Ok((client, connection, child.process))
    }
}

/// The connection's future: reads the agent's output, writes its input, runs the handler
/// futures, fires deadlines. Resolves when the agent's output has ended and everything was
/// settled and written (or with the first I/O error); every call still waiting then fails
/// with [`ClientError::Closed`]. Dropping it closes the connection the same way.
#[must_use = "nothing moves until the connection is awaited"]
pub struct Connection<R: Runtime, Rd, Wr> {
    pump: Pump<Core, ClientDriver, R, Rd, Wr>,
    inner: Rc<Inner>,
}

impl<R: Runtime, Rd, Wr> std::fmt::Debug for Connection<R, Rd, Wr> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").finish_non_exhaustive()
    }
}

impl<R, Rd, Wr> Future for Connection<R, Rd, Wr>
where
    R: Runtime,
    Rd: AsyncRead + Unpin,
    Wr: AsyncWrite + Unpin,
{
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let out = Pin::new(&mut self.pump).poll(cx);
        if out.is_ready() {
            // Nothing more arrives: what still waits fails now rather than when dropped.
            self.inner.state.borrow_mut().close();
        }
        out
    }
}

impl<R, Rd, Wr> Connection<R, Rd, Wr>
where
    R: Runtime,
    Rd: AsyncRead + Unpin,
    Wr: AsyncWrite + Unpin,
{
    /// Runs `app` with the connection beside it, and returns `app`'s output as soon as it
    /// has one, once what its last calls queued (a cancel, say) is written; the connection
    /// is then dropped, which closes the agent's input. If the connection ends first, `app`
    /// goes on alone and its calls fail with [`ClientError::Closed`].
    pub async fn run_until<F: Future>(mut self, app: F) -> F::Output {
        let mut ended = false;
        let mut app = pin!(app);
        let out = std::future::poll_fn(|cx| {
            if let Poll::Ready(out) = app.as_mut().poll(cx) {
                return Poll::Ready(out);
            }
            if !ended && Pin::new(&mut self).poll(cx).is_ready() {
                // What still waits has failed: poll `app` again to let it see that.
                ended = true;
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        })
        .await;
        if !ended {
            std::future::poll_fn(|cx| {
                let done = Pin::new(&mut self).poll(cx).is_ready();
                let written = self.pump.shared().borrow().poll_transmit().is_empty();
                if done || written {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            })
            .await;
        }
        out
    }
}
