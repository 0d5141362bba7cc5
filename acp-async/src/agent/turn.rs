//! What a handler holds while it works: [`Turn`] (a prompt), [`History`] (a load's replay),
//! and the futures they hand out.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use acp_core::conn::agent::Update;
use acp_core::machine::handshake::Capabilities;
use acp_core::prelude::{Instant, PermissionDecision, RequestId, UsageError};
use acp_core::schema::{
    AskUserRequest, ClientResponse, ContentBlock, ContentChunk, CreateTerminalRequest,
    CreateTerminalResponse, Plan, ReadTextFileRequest, ReadTextFileResponse, SessionUpdate,
    TerminalRequest, ToolCall, ToolCallUpdate, WriteTextFileRequest, WriteTextFileResponse,
};

use super::AgentConn;
use super::driver::{AgentState, Reply};
use crate::Error;

/// Whether a turn was cancelled, and who waits for it.
#[derive(Default)]
pub(crate) struct TurnFlag {
    cancelled: Cell<bool>,
    wakers: RefCell<Vec<Waker>>,
}

impl TurnFlag {
    pub(crate) fn cancel(&self) {
        self.cancelled.set(true);
        for waker in self.wakers.take() {
            waker.wake();
        }
    }
}

/// A prompt turn in progress: what a [`prompt`](super::Agent::prompt) handler streams its
/// work through. Cheap to clone (share it with the turn's sub-tasks).
///
/// Every method that sends waits for room in the connection's outbox instead of growing it:
/// a client that reads slowly slows the handler down (backpressure), and memory stays
/// bounded by the outbox limit of the [`Limits`](acp_core::prelude::Limits).
#[derive(Clone)]
pub struct Turn {
    pub(crate) state: Rc<AgentState>,
    pub(crate) session: String,
    pub(crate) flag: Rc<TurnFlag>,
}

impl Turn {
    /// The turn's session.
    pub fn session_id(&self) -> &str {
        &self.session
    }

    /// Whether the client cancelled the turn (or the connection is closing).
    pub fn is_cancelled(&self) -> bool {
        self.flag.cancelled.get()
    }

    /// Resolves once the turn is cancelled (`session/cancel`, `$/cancel_request` of the
    /// prompt, `session/close`, or the client's EOF). Race it against the work; after it the
    /// turn is answered `cancelled` whatever the handler returns.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled {
            flag: self.flag.clone(),
        }
    }

    /// The capabilities the client advertised (`fs`, `terminal`, …).
    pub fn client_capabilities(&self) -> Capabilities {
        self.state.shared.with(|c| c.handshake().peer())
    }

    /// Runs `f` on acp-core's connection, for what this type does not wrap. Never call it
    /// from inside another `with_connection`.
    pub fn with_connection<T>(&self, f: impl FnOnce(&mut AgentConn) -> T) -> T {
        self.state.shared.with(f)
    }

    /// Sends one `session/update` of this session (any kind acp-core accepts: a
    /// [`SessionUpdate`], a [`RawUpdate`](acp_core::prelude::RawUpdate), …), waiting for room.
    pub async fn send<U: Update + ?Sized>(&self, update: &U) -> Result<(), Error> {
        let session = &self.session;
        self.state
            .shared
            .with_room(|c| c.send_update(session, update))
            .await
            .map_err(Error::from)
    }

    /// An `agent_message_chunk` of text.
    pub async fn message(&self, text: impl Into<String>) -> Result<(), Error> {
        let chunk = ContentChunk::new(ContentBlock::text(text));
        self.send(&SessionUpdate::AgentMessageChunk(chunk)).await
    }

    /// An `agent_thought_chunk` of text.
    pub async fn thought(&self, text: impl Into<String>) -> Result<(), Error> {
        let chunk = ContentChunk::new(ContentBlock::text(text));
        self.send(&SessionUpdate::AgentThoughtChunk(chunk)).await
    }

    /// A `tool_call`: announces a call that [`request_permission`](Self::request_permission)
    /// may then name.
    pub async fn tool_call(&self, call: ToolCall) -> Result<(), Error> {
        self.send(&SessionUpdate::ToolCall(call)).await
    }

    /// A `tool_call_update`.
    pub async fn tool_call_update(&self, update: ToolCallUpdate) -> Result<(), Error> {
        self.send(&SessionUpdate::ToolCallUpdate(update)).await
    }

    /// A `plan`.
    pub async fn plan(&self, plan: Plan) -> Result<(), Error> {
        self.send(&SessionUpdate::Plan(plan)).await
    }

    /// Asks the client whether tool call `tool_call` (announced by [`tool_call`](Self::tool_call)
    /// in this turn) may run, and waits for the decision. acp-core settles it exactly once:
    /// the user's choice, a remembered `*_always` answer (nothing sent), `Cancelled` when the
    /// turn is cancelled (at once, without waiting for the client), rejected on a timeout,
    /// an error or EOF.
    pub async fn request_permission(
        &self,
        tool_call: ToolCallUpdate,
    ) -> Result<PermissionDecision, Error> {
        let session = &self.session;
        match self
            .ask(|c, now| c.request_permission(now, session, &tool_call, None))
            .await?
        {
            Reply::Permission(decision) => Ok(decision),
            _ => Err(Error::internal(
                "unexpected settlement of a permission request",
            )),
        }
    }

    /// Asks the user a question (`_agentao.cn/ask_user`) and waits for the answer. Never
    /// fails the turn: anything but an answer reads as acp-core's sentinel
    /// `(user unavailable)` with `answered: false`.
    pub async fn ask_user(&self, question: impl Into<String>) -> Result<UserAnswer, Error> {
        let request = AskUserRequest::new(self.session.clone(), question);
        self.ask_user_with(request).await
    }

    /// [`ask_user`](Self::ask_user) with every field of the request (header, options, …).
    pub async fn ask_user_with(&self, request: AskUserRequest) -> Result<UserAnswer, Error> {
        match self.ask(|c, now| c.ask_user(now, &request, None)).await? {
            Reply::AskUser { text, answered } => Ok(UserAnswer { text, answered }),
            _ => Err(Error::internal(
                "unexpected settlement of an ask_user request",
            )),
        }
    }

    /// `fs/read_text_file` through the client (only when it advertised `fs.readTextFile`:
    /// otherwise acp-core refuses, [`UsageError::CapabilityNotAdvertised`]).
    pub async fn read_text_file(
        &self,
        request: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, Error> {
        match self
            .client_request(|c, now| c.read_text_file(now, &request, None))
            .await?
        {
            ClientResponse::ReadTextFile(response) => Ok(response),
            other => Err(unexpected(&other)),
        }
    }

    /// `fs/write_text_file` through the client (needs `fs.writeTextFile`).
    pub async fn write_text_file(
        &self,
        request: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, Error> {
        match self
            .client_request(|c, now| c.write_text_file(now, &request, None))
            .await?
        {
            ClientResponse::WriteTextFile(response) => Ok(response),
            other => Err(unexpected(&other)),
        }
    }

    /// `terminal/create` (needs the client's `terminal`).
    pub async fn terminal_create(
        &self,
        request: CreateTerminalRequest,
    ) -> Result<CreateTerminalResponse, Error> {
        match self
            .client_request(|c, now| c.terminal_create(now, &request, None))
            .await?
        {
            ClientResponse::CreateTerminal(response) => Ok(response),
            other => Err(unexpected(&other)),
        }
    }

    /// `terminal/output`, `terminal/wait_for_exit`, `terminal/kill` or `terminal/release`
    /// (`method`) for a terminal (needs the client's `terminal`).
    pub async fn terminal(
        &self,
        method: &str,
        request: TerminalRequest,
    ) -> Result<ClientResponse, Error> {
        self.client_request(|c, now| c.terminal(now, method, &request, None))
            .await
    }

    /// Sends a request of ours through `send` and waits for its settlement.
    async fn client_request(
        &self,
        send: impl FnMut(&mut AgentConn, Instant) -> Result<RequestId, UsageError>,
    ) -> Result<ClientResponse, Error> {
        match self.ask(send).await? {
            Reply::Response(Ok(response)) => Ok(response),
            Reply::Response(Err(error)) => Err(Error::new(error.code, error.message)),
            _ => Err(Error::internal("unexpected settlement of a client request")),
        }
    }

    async fn ask(
        &self,
        mut send: impl FnMut(&mut AgentConn, Instant) -> Result<RequestId, UsageError>,
    ) -> Result<Reply, Error> {
        let shared = &self.state.shared;
        // The wait is registered as soon as the request exists (before any event is
        // dispatched), so a settlement queued at once (a remembered answer) is not missed.
        let wait = shared
            .with_room(|c| send(c, shared.now()))
            .await
            .map(|id| self.state.wait(id))?;
        Ok(wait.await)
    }
}

fn unexpected(response: &ClientResponse) -> Error {
    Error::internal(format!(
        "unexpected answer to a client request: {:?}",
        response.method()
    ))
}

/// The answer of [`Turn::ask_user`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserAnswer {
    /// The user's text, or acp-core's sentinel `(user unavailable)`.
    pub text: String,
    /// Whether the user answered (false: `text` is the sentinel).
    pub answered: bool,
}

/// The future of [`Turn::cancelled`].
pub struct Cancelled {
    flag: Rc<TurnFlag>,
}

impl Future for Cancelled {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.flag.cancelled.get() {
            return Poll::Ready(());
        }
        let mut wakers = self.flag.wakers.borrow_mut();
        wakers.retain(|w| !w.will_wake(cx.waker()));
        wakers.push(cx.waker().clone());
        Poll::Pending
    }
}

/// The replay of a `session/load`: send the stored history, then return from
/// [`load_session`](super::Agent::load_session).
#[derive(Clone)]
pub struct History {
    pub(crate) state: Rc<AgentState>,
    pub(crate) session: String,
}

impl History {
    /// The session being loaded.
    pub fn session_id(&self) -> &str {
        &self.session
    }

    /// Sends one update of the history (any kind), waiting for room.
    pub async fn send<U: Update + ?Sized>(&self, update: &U) -> Result<(), Error> {
        let session = &self.session;
        self.state
            .shared
            .with_room(|c| c.send_update(session, update))
            .await
            .map_err(Error::from)
    }
}
