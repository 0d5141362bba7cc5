//! The agent side: implement [`Agent`] (only [`prompt`](Agent::prompt) is required), then
//! [`serve`] it on a byte stream — or `serve_stdio` of the `smol` or `tokio` module (features
//! of the same names).
//!
//! acp-core's [`AgentConnection`] answers everything it can by itself (the handshake, invalid
//! requests, cancellations, EOF); each request it hands over becomes one call of an
//! [`Agent`] method, running as a future inside the connection's future, and its return
//! value is the answer. A prompt gets a [`Turn`] to stream updates, ask for permission, ask
//! the user, use the client's `fs/*` and `terminal/*`, and see cancellation.
//!
//! # Panics in handlers
//!
//! A handler that panics answers its request `-32603 Internal error: handler panicked:
//! <panic message>` and the
//! connection goes on serving: one bad request does not take the other sessions down. The
//! panic is still reported by the panic hook (stderr by default).

mod driver;
mod turn;

use std::future::Future;
use std::io;
use std::rc::Rc;

use acp_core::conn::Growable;
use acp_core::prelude::{AgentConfig, AgentConnection, StopReason};
use acp_core::schema::{
    InitializeRequest, ListSessionsRequest, ListSessionsResponse, LoadSessionRequest,
    LoadSessionResponse, NewSessionRequest, NewSessionResponse, PromptRequest,
    ResumeSessionRequest, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
};
use futures_io::{AsyncRead, AsyncWrite};

pub use self::turn::{Cancelled, History, Turn, UserAnswer};
use crate::Error;
use crate::pump::{Pump, Shared};
use crate::runtime::Runtime;

/// The agent connection this layer drives: acp-core's, with growable storage.
pub type AgentConn = AgentConnection<Growable>;

/// An ACP agent. Every method but [`prompt`](Self::prompt) has a default.
///
/// Methods take `&self`: the sessions of one connection run concurrently (two prompts of
/// two sessions interleave), so keep mutable state in `Cell`s or `RefCell`s, and never hold
/// a `RefCell` borrow across an `.await`. The futures need not be `Send` (see the crate
/// docs: the connection is one `!Send` future).
///
/// Which of these requests reach the agent at all is decided by acp-core from the
/// [`AgentConfig`] given to [`serve`]: `session/load` needs `features.load_session`,
/// `session/list` `features.session_list`, and so on; the others are answered `-32601`.
#[allow(async_fn_in_trait)] // deliberately `?Send`: the connection runs on one thread
pub trait Agent: 'static {
    /// The client completed `initialize` (acp-core has answered it from the configuration).
    async fn initialize(&self, request: InitializeRequest) {
        let _ = request;
    }

    /// `session/new`. `fresh_id` is an id this connection has not handed out
    /// (`session-<n>`): the default answers with it and nothing else.
    async fn new_session(
        &self,
        request: NewSessionRequest,
        fresh_id: String,
    ) -> Result<NewSessionResponse, Error> {
        let _ = request;
        let mut response = NewSessionResponse::default();
        response.session_id = fresh_id;
        Ok(response)
    }

    /// `session/load`: replay the history through `history`, then answer. The default finds
    /// no session (acp-core's `session/load: Session '<id>' not found`). Return
    /// [`Error::session_not_found`] for that answer.
    async fn load_session(
        &self,
        request: LoadSessionRequest,
        history: History,
    ) -> Result<LoadSessionResponse, Error> {
        let _ = (request, history);
        Err(Error::session_not_found())
    }

    /// `session/resume` (no replay). The default finds no session.
    async fn resume_session(
        &self,
        request: ResumeSessionRequest,
    ) -> Result<LoadSessionResponse, Error> {
        let _ = request;
        Err(Error::session_not_found())
    }

    /// `session/list`. The default lists nothing.
    async fn list_sessions(
        &self,
        request: ListSessionsRequest,
    ) -> Result<ListSessionsResponse, Error> {
        let _ = request;
        Ok(ListSessionsResponse::default())
    }

    /// `session/close` of `session` (acp-core has already answered its running turn
    /// `cancelled`). The default does nothing.
    async fn close_session(&self, session: String) -> Result<(), Error> {
        let _ = session;
        Ok(())
    }

    /// One prompt turn. Stream updates through `turn`; the returned stop reason answers the
    /// turn (an error answers it with that error). After a cancel the answer is `cancelled`
    /// whatever is returned — acp-core guarantees it — so return promptly once
    /// [`Turn::cancelled`] resolves.
    async fn prompt(&self, request: PromptRequest, turn: Turn) -> Result<StopReason, Error>;

    /// The client cancelled the turn of `session` (`session/cancel`, `$/cancel_request`,
    /// `session/close`, or EOF). The turn's [`Turn::cancelled`] resolves as well; this hook
    /// is for work kept outside the turn.
    async fn cancel(&self, session: String) {
        let _ = session;
    }

    /// `session/set_mode` to `mode_id` (acp-core checked the session is idle). `Ok` answers
    /// with acp-core's `current_mode_update` and result. The default accepts any mode.
    async fn set_mode(&self, session: String, mode_id: String) -> Result<(), Error> {
        let _ = (session, mode_id);
        Ok(())
    }

    /// `session/set_config_option` (acp-core checked the whitelist and the session). The
    /// default refuses with `-32601`.
    async fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let _ = request;
        Err(Error::method_not_found())
    }

    /// Any other request acp-core hands over: registered extension methods
    /// (`AgentConfig::serve_extension`), `_agentao.cn/set_model`, `authenticate`, `logout`,
    /// `session/delete`. The result is sent as it is. The default refuses with `-32601`.
    async fn ext_method(
        &self,
        method: String,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, Error> {
        let _ = (method, params);
        Err(Error::method_not_found())
    }
}

impl Error {
    /// "No such session": from [`Agent::load_session`], acp-core's answer
    /// (`session/load: Session '<id>' not found`); elsewhere `-32600 session not found`.
    pub fn session_not_found() -> Self {
        let mut error = Self::new(
            acp_core::prelude::ErrorCode::INVALID_REQUEST,
            "session not found",
        );
        error.not_found = true;
        error
    }
}

/// Serves `agent` on `reader`/`writer` until the client's EOF has been handled and the last
/// bytes written: one future, no spawning (the agent's futures run inside it).
///
/// Returns the first write error, or a read error (handled as EOF) once closed. Unfinished
/// handler futures are dropped at the end (every request has been answered by then).
pub fn serve<A, R, Rd, Wr>(
    config: AgentConfig,
    agent: A,
    runtime: R,
    reader: Rd,
    writer: Wr,
) -> impl Future<Output = io::Result<()>>
where
    A: Agent,
    R: Runtime,
    Rd: AsyncRead + Unpin,
    Wr: AsyncWrite + Unpin,
{
    let shared = Shared::new(AgentConn::new(config), &runtime);
    Pump::new(
        shared.clone(),
        driver::AgentDriver::new(Rc::new(agent), shared.clone()),
        runtime,
        reader,
        writer,
    )
}
