//! What the agent asks the client, one trait per capability: [`Permissions`] (always served,
//! [`RejectAll`] by default), [`ReadTextFile`] and [`WriteTextFile`] (`fs.*`), [`Terminals`]
//! (`terminal`) and [`AskUser`] (`_agentao.cn/ask_user`).
//!
//! One trait per capability so that what `initialize` advertises is exactly what was given
//! to the [`ClientBuilder`](super::ClientBuilder): a handler that is not there is not
//! advertised, and acp-core answers its requests `-32601` by itself (R-INIT-7, R-FS-2).
//! The single-method traits are implemented for closures returning a future.
//!
//! Handler futures run inside the connection's future, one per request, concurrently. A
//! future is dropped when acp-core settles its request without it (the turn was cancelled,
//! the agent sent `$/cancel_request`, or its output ended; R-CANCEL-3, R-CANCEL-4), so a
//! question shown to a person can be taken back in its `Drop`.
//!
//! A handler that panics answers its request `-32603` (`Internal error: handler panicked:
//! <message>`)
//! and the connection goes on, as on the agent side; the panic is still reported by the
//! panic hook.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use acp_core::schema::{
    AskUserRequest, CreateTerminalRequest, PermissionOptionKind, ReadTextFileRequest,
    RequestPermissionOutcome, RequestPermissionRequest, TerminalExitStatus, TerminalOutputResponse,
    TerminalRequest, WriteTextFileRequest,
};

use crate::Error;

/// Answers `session/request_permission`. Every client must (the method needs no
/// capability); without one the builder uses [`RejectAll`].
#[allow(async_fn_in_trait)] // deliberately `?Send`: the connection runs on one thread
pub trait Permissions: 'static {
    /// The outcome: [`RequestPermissionOutcome::selected`] with one of
    /// `request.options[].option_id`, or [`RequestPermissionOutcome::Cancelled`] when the
    /// person dismissed the question.
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> RequestPermissionOutcome;
}

impl<F, Fut> Permissions for F
where
    F: Fn(RequestPermissionRequest) -> Fut + 'static,
    Fut: Future<Output = RequestPermissionOutcome>,
{
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> RequestPermissionOutcome {
        self(request).await
    }
}

/// The default [`Permissions`]: never allows. It selects the agent's `reject_once` option
/// (else `reject_always`), so the agent reads a plain rejection and the turn goes on; when
/// the agent offers no reject option it answers `cancelled`, which agents also read as not
/// allowed (R-PERM-3). An application that can ask a person gives its own handler.
#[derive(Clone, Copy, Debug, Default)]
pub struct RejectAll;

impl Permissions for RejectAll {
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> RequestPermissionOutcome {
        [
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
        .into_iter()
        .find_map(|kind| request.options.iter().find(|o| o.kind == kind))
        .map_or(RequestPermissionOutcome::Cancelled, |option| {
            RequestPermissionOutcome::selected(option.option_id.clone())
        })
    }
}

/// Serves `fs/read_text_file`; giving one advertises `fs.readTextFile`.
#[allow(async_fn_in_trait)]
pub trait ReadTextFile: 'static {
    /// The file's text (from `request.line`, at most `request.limit` lines, when set: the
    /// handler applies them), or an error to answer with (e.g. `-32002` not found).
    async fn read_text_file(&self, request: ReadTextFileRequest) -> Result<String, Error>;
}

impl<F, Fut> ReadTextFile for F
where
    F: Fn(ReadTextFileRequest) -> Fut + 'static,
    Fut: Future<Output = Result<String, Error>>,
{
    async fn read_text_file(&self, request: ReadTextFileRequest) -> Result<String, Error> {
        self(request).await
    }
}

/// Serves `fs/write_text_file`; giving one advertises `fs.writeTextFile`.
#[allow(async_fn_in_trait)]
pub trait WriteTextFile: 'static {
    /// Writes `request.content` to `request.path` (answered `{}`), or fails with an error.
    async fn write_text_file(&self, request: WriteTextFileRequest) -> Result<(), Error>;
}

impl<F, Fut> WriteTextFile for F
where
    F: Fn(WriteTextFileRequest) -> Fut + 'static,
    Fut: Future<Output = Result<(), Error>>,
{
    async fn write_text_file(&self, request: WriteTextFileRequest) -> Result<(), Error> {
        self(request).await
    }
}

/// Serves `terminal/*`; giving one advertises `terminal`. All five methods belong to the one
/// capability, so all five are required.
#[allow(async_fn_in_trait)]
pub trait Terminals: 'static {
    /// `terminal/create`: starts the command; answers the new terminal's id.
    async fn create(&self, request: CreateTerminalRequest) -> Result<String, Error>;
    /// `terminal/output`: the output so far.
    async fn output(&self, request: TerminalRequest) -> Result<TerminalOutputResponse, Error>;
    /// `terminal/wait_for_exit`: resolves when the command has exited.
    async fn wait_for_exit(&self, request: TerminalRequest) -> Result<TerminalExitStatus, Error>;
    /// `terminal/kill`: kills the command, keeps the terminal.
    async fn kill(&self, request: TerminalRequest) -> Result<(), Error>;
    /// `terminal/release`: kills the command if it runs and forgets the terminal.
    async fn release(&self, request: TerminalRequest) -> Result<(), Error>;
}

/// Serves `_agentao.cn/ask_user`; giving one lists it in `clientCapabilities._meta`.
#[allow(async_fn_in_trait)]
pub trait AskUser: 'static {
    /// The person's answer, or `None` when they gave none (answered `cancelled`; the agent
    /// goes on with `(user unavailable)`, R-ASK-1).
    async fn ask_user(&self, request: AskUserRequest) -> Option<String>;
}

impl<F, Fut> AskUser for F
where
    F: Fn(AskUserRequest) -> Fut + 'static,
    Fut: Future<Output = Option<String>>,
{
    async fn ask_user(&self, request: AskUserRequest) -> Option<String> {
        self(request).await
    }
}

/// What a handler future answers, for the driver to hand to acp-core.
pub(crate) enum Reply {
    Permission(RequestPermissionOutcome),
    AskUser(Option<String>),
    Result(serde_json::Value),
    Error(Error),
}

/// A handler's future, boxed so the driver can keep futures of every handler in one list.
pub(crate) type ReplyFuture = Pin<Box<dyn Future<Output = Reply>>>;

fn result<T: serde::Serialize>(outcome: Result<T, Error>) -> Reply {
    match outcome.map(|value| serde_json::to_value(value)) {
        Ok(Ok(value)) => Reply::Result(value),
        Ok(Err(e)) => Reply::Error(Error::internal(e.to_string())),
        Err(e) => Reply::Error(e),
    }
}

/// `{}`: the result of the methods whose answer has no members.
fn empty(outcome: Result<(), Error>) -> Reply {
    result(outcome.map(|()| serde_json::Map::new()))
}

/// The handlers given to the builder, type-erased: each call returns a `'static` future
/// that owns an `Rc` of its handler.
#[derive(Clone)]
pub(crate) struct Handlers {
    pub(crate) permissions: Rc<dyn ErasedPermissions>,
    pub(crate) read: Option<Rc<dyn ErasedRead>>,
    pub(crate) write: Option<Rc<dyn ErasedWrite>>,
    pub(crate) terminals: Option<Rc<dyn ErasedTerminals>>,
    pub(crate) ask_user: Option<Rc<dyn ErasedAskUser>>,
}

impl Default for Handlers {
    fn default() -> Self {
        Self {
            permissions: Rc::new(RejectAll),
            read: None,
            write: None,
            terminals: None,
            ask_user: None,
        }
    }
}

pub(crate) trait ErasedPermissions {
    fn call(self: Rc<Self>, request: RequestPermissionRequest) -> ReplyFuture;
}

impl<T: Permissions> ErasedPermissions for T {
    fn call(self: Rc<Self>, request: RequestPermissionRequest) -> ReplyFuture {
        Box::pin(async move { Reply::Permission(self.request_permission(request).await) })
    }
}

pub(crate) trait ErasedRead {
    fn call(self: Rc<Self>, request: ReadTextFileRequest) -> ReplyFuture;
}

impl<T: ReadTextFile> ErasedRead for T {
    fn call(self: Rc<Self>, request: ReadTextFileRequest) -> ReplyFuture {
        Box::pin(async move {
            let text = self.read_text_file(request).await;
            result(text.map(|content| serde_json::json!({ "content": content })))
        })
    }
}

pub(crate) trait ErasedWrite {
    fn call(self: Rc<Self>, request: WriteTextFileRequest) -> ReplyFuture;
}

impl<T: WriteTextFile> ErasedWrite for T {
    fn call(self: Rc<Self>, request: WriteTextFileRequest) -> ReplyFuture {
        Box::pin(async move { empty(self.write_text_file(request).await) })
    }
}

/// The five terminal methods, as the driver dispatches them.
pub(crate) enum TerminalCall {
    Create(CreateTerminalRequest),
    Output(TerminalRequest),
    WaitForExit(TerminalRequest),
    Kill(TerminalRequest),
    Release(TerminalRequest),
}

pub(crate) trait ErasedTerminals {
    fn call(self: Rc<Self>, call: TerminalCall) -> ReplyFuture;
}

impl<T: Terminals> ErasedTerminals for T {
    fn call(self: Rc<Self>, call: TerminalCall) -> ReplyFuture {
        Box::pin(async move {
            match call {
                TerminalCall::Create(r) => result(
                    self.create(r)
                        .await
                        .map(|id| serde_json::json!({ "terminalId": id })),
                ),
                TerminalCall::Output(r) => result(self.output(r).await),
                TerminalCall::WaitForExit(r) => result(self.wait_for_exit(r).await),
                TerminalCall::Kill(r) => empty(self.kill(r).await),
                TerminalCall::Release(r) => empty(self.release(r).await),
            }
        })
    }
}

pub(crate) trait ErasedAskUser {
    fn call(self: Rc<Self>, request: AskUserRequest) -> ReplyFuture;
}

impl<T: AskUser> ErasedAskUser for T {
    fn call(self: Rc<Self>, request: AskUserRequest) -> ReplyFuture {
        Box::pin(async move { Reply::AskUser(self.ask_user(request).await) })
    }
}
