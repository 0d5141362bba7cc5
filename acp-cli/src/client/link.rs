//! One agent's ACP connection as the host sees it: a [`ClientConnection`] plus the requests
//! the host serves itself (`fs/*` inside the session's directory) and the translation of the
//! connection's events into what a person is shown.
//!
//! The connection runs on acp-async's pump ([`Pump`]), the workspace's one drive loop: it
//! takes the agent's bytes, its EOF and the link's commands, writes what the connection
//! sends, and hands each event to the [`Translator`] at once. The agent's process belongs to
//! the host's runner, which reads its stdout beside every other agent's, so the pump's byte
//! stream is a [`relay`]: bytes in ([`Link::feed`], [`Link::eof`]), bytes out
//! ([`Link::take_output`]), events out ([`Link::poll_event`]); each call runs the pump
//! until it has handled what was handed over. The glue moves the bytes between the relay and
//! the process.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::task::Poll;

use acp_async::pump::{Driver, Pump, Shared};
use acp_async::relay::{self, Relay, RelayReader, RelayWriter};
use acp_async::smol::Smol;
use acp_core::conn::agent::AuthKind;
use acp_core::conn::client::{
    AgentMethod, AskUserAnswer, ClientConfig, ClientConnection, ClientEvent, ClientMethod, Failure,
    Growable, HandshakeError, NO_MCP_SERVERS, PermissionAnswer, Serves, Shows, TurnOutcome,
    UpdateContext,
};
use acp_core::machine::{RequestId, Ticket};
use acp_core::wire::ErrorCode;
use serde_json::Value;

use super::render;
use super::updates::{AgentCommand, Shown, UpdateView};

/// What the application learns from a link.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum LinkEvent {
    /// `initialize` and `session/new` succeeded: prompts can be sent.
    Ready {
        /// The session opened.
        session: String,
    },
    /// `initialize` or `session/new` failed; see [`HandshakeFailure`].
    HandshakeFailed(HandshakeFailure),
    /// `session/new` was answered auth-required (`-32000`) the first time: the application
    /// may run a `terminal` method, then [`Link::retry_after_login`] (R-AUTH-8).
    AuthRequired {
        /// The refusal, for the message.
        failure: HandshakeFailure,
        /// The methods the agent offered, in order.
        methods: Vec<OfferedAuth>,
    },
    /// A chunk of the agent's answer (sanitized).
    Text(String),
    /// Something to show beside the answer: a thought, a plan, a tool call (sanitized, one
    /// or more lines, no trailing newline).
    Aside(String),
    /// An update of a kind this client does not know: its `sessionUpdate` tag (sanitized),
    /// to show as one dim line.
    UnknownUpdate(String),
    /// The agent's slash commands (`available_commands_update`).
    Commands(Vec<AgentCommand>),
    /// The agent asks for permission.
    Permission {
        /// The handle to answer with.
        ticket: Ticket,
        /// The request's params.
        params: Value,
    },
    /// The agent asks the user for text (`_agentao.cn/ask_user`).
    AskUser {
        /// The handle to answer with.
        ticket: Ticket,
        /// The question (not yet sanitized).
        question: String,
    },
    /// A question was answered without the application (its turn was cancelled, the
    /// connection closed): stop asking it.
    Settled(Ticket),
    /// The prompt turn is over.
    TurnEnded(TurnOutcome),
    /// The agent's output ended; nothing more comes.
    Closed,
}

/// An auth method the agent offered (R-AUTH-6), owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OfferedAuth {
    /// `id`.
    pub id: String,
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: Option<String>,
    /// A `terminal` method's command; `None` for an `agent` method.
    pub terminal: Option<TerminalLogin>,
}

/// What a `terminal` auth method adds to the agent's command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TerminalLogin {
    /// Arguments appended.
    pub args: Vec<String>,
    /// Variables set, `(name, value)`.
    pub env: Vec<(String, String)>,
}

/// Why the handshake failed, with the agent's own words when it gave any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HandshakeFailure {
    /// `initialize` or `session/new`.
    pub method: &'static str,
    /// The JSON-RPC error code, when the agent answered with an error.
    pub code: Option<i32>,
    /// What went wrong.
    pub message: String,
}

impl HandshakeFailure {
    /// Whether the agent asked for authentication (`-32000`).
    pub(crate) fn needs_auth(&self) -> bool {
        self.code == Some(ErrorCode::AUTH_REQUIRED.0)
    }
}

impl std::fmt::Display for HandshakeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let message = acp_host::sanitize::sanitize(&self.message);
        match self.code {
            Some(code) if self.needs_auth() => write!(
                f,
                "the agent requires authentication ({} answered {code}: {message})",
                self.method
            ),
            Some(code) => write!(f, "{} failed with error {code}: {message}", self.method),
            None => write!(f, "{} failed: {message}", self.method),
        }
    }
}

impl std::error::Error for HandshakeFailure {}

type Conn = ClientConnection<Growable>;

/// The connection on acp-async's pump, which reads the agent's bytes from the relay (the
/// runner reads the process's stdout) and writes to it (the glue passes that on to stdin).
type LinkPump = Pump<Conn, Translator, Smol, RelayReader, RelayWriter>;

/// See the module docs.
pub(crate) struct Link {
    shared: Rc<Shared<Conn>>,
    /// Until the connection has closed (EOF handled, last bytes written).
    pump: Option<LinkPump>,
    relay: Relay,
    out: Rc<Out>,
    /// The session's working directory, as sent (for a `session/new` after a login).
    cwd: String,
}

/// What the translation hands the application.
#[derive(Default)]
struct Out {
    events: RefCell<VecDeque<LinkEvent>>,
    session: RefCell<Option<String>>,
    /// A login was run and `session/new` retried: a second auth-required answer fails.
    login_tried: Cell<bool>,
    /// Our `authenticate` after a login, until its answer.
    authenticating: Cell<Option<RequestId>>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("session", &self.out.session.borrow())
            .field("open", &self.pump.is_some())
            .finish()
    }
}

/// The client's name in `clientInfo`.
pub(crate) const CLIENT_NAME: &str = "acp-cli";

impl Link {
    /// A link that has sent `initialize` (offering `fs/*` when `offer_fs`); the session will be
    /// opened in `cwd` (absolute). `offer_fs: false` advertises no `fs` capability, so the agent
    /// works on files itself (and the link answers any `fs/*` request `-32601`).
    /// `terminal_auth` advertises `clientCapabilities.auth.terminal`: the application runs
    /// terminal auth methods in the user's terminal (R-AUTH-7).
    pub(crate) fn open_with(cwd: &Path, offer_fs: bool, terminal_auth: bool) -> Link {
        let serves = Serves {
            fs_read: offer_fs,
            fs_write: offer_fs,
            ask_user: true,
            terminal_auth,
            ..Serves::NOTHING
        };
        let mut config = ClientConfig::new(CLIENT_NAME, env!("CARGO_PKG_VERSION"), serves);
        // The supervisor's lifecycle owns the deadlines: the turn's (it pauses while the user
        // thinks; the connection's own would cut a turn the user is still answering) and the
        // startup's, which covers the handshake. So the connection sets none, and the pump
        // never needs a timer.
        config.prompt_timeout = None;
        config.request_timeout = None;
        // The renderer shows every update kind (client/updates.rs), so agents may send them all.
        config.shows = Shows::EVERYTHING;
        let runtime = Smol::new();
        let shared = Shared::new(ClientConnection::new(config), &runtime);
        let now = shared.now();
        // A fresh connection always accepts `initialize`.
        let _ = shared.with(|conn| conn.initialize(now));
        let out = Rc::new(Out::default());
        let translator = Translator {
            cwd: cwd.to_string_lossy().into_owned(),
            root: cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf()),
            view: UpdateView::new(),
            out: out.clone(),
        };
        let (relay, reader, writer) = relay::relay();
        let pump = Pump::new(shared.clone(), translator, runtime, reader, writer);
        let mut link = Link {
            shared,
            pump: Some(pump),
            relay,
            out,
            cwd: cwd.to_string_lossy().into_owned(),
        };
        link.run();
        link
    }

    /// Runs the pump until it has handled everything handed over (bytes, EOF, commands).
    fn run(&mut self) {
        let Some(pump) = self.pump.as_mut() else {
            return;
        };
        if let Poll::Ready(ended) = relay::settle(pump) {
            if let Err(e) = ended {
                tracing::debug!("the agent's connection failed: {e}");
            }
            self.pump = None;
        }
    }

    /// After a login in the terminal: `authenticate` with the first `agent` method offered
    /// (the agent checks its credentials again), then `session/new` once more; without an
    /// `agent` method, `session/new` at once (R-AUTH-8). A second auth-required answer is a
    /// [`LinkEvent::HandshakeFailed`].
    pub(crate) fn retry_after_login(&mut self) {
        self.out.login_tried.set(true);
        let now = self.shared.now();
        let agent_method = self
            .shared
            .with(|conn| offered_auth(conn))
            .into_iter()
            .find(|method| method.terminal.is_none());
        let out = self.out.clone();
        let cwd = self.cwd.clone();
        let sent = self.shared.with(|conn| match agent_method {
            Some(method) => conn
                .authenticate(now, &method.id)
                .map(|id| out.authenticating.set(Some(id))),
            None => conn.new_session(now, &cwd, NO_MCP_SERVERS).map(drop),
        });
        if let Err(error) = sent {
            tracing::debug!(%error, "retry after the login not sent");
        }
        self.run();
    }

    /// The open session, once [`LinkEvent::Ready`] was given.
    pub(crate) fn session(&self) -> Option<String> {
        self.out.session.borrow().clone()
    }

    /// Feeds bytes from the agent's stdout.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.relay.push(bytes);
        self.run();
    }

    /// The agent's output ended.
    pub(crate) fn eof(&mut self) {
        self.relay.close();
        self.run();
    }

    /// The bytes to write to the agent's stdin now.
    pub(crate) fn take_output(&mut self) -> Vec<u8> {
        self.relay.take_output()
    }

    /// Sends the prompt `text`. Fails without a session or while a turn runs.
    pub(crate) fn prompt(&mut self, text: &str) -> Result<(), String> {
        let session = self.session().ok_or("no session is open")?;
        let now = self.shared.now();
        let sent = self
            .shared
            .with(|conn| conn.prompt_text(now, &session, text).map(|_| ()));
        self.run();
        sent.map_err(|e| e.to_string())
    }

    /// Sends `session/cancel` for the running turn (its open questions are answered
    /// `cancelled`). Returns whether a turn was running.
    pub(crate) fn cancel(&mut self) -> bool {
        let Some(session) = self.session() else {
            return false;
        };
        let now = self.shared.now();
        let cancelled = self.shared.with(|conn| conn.cancel(now, &session));
        self.run();
        cancelled.unwrap_or(false)
    }

    /// Answers a permission request with the option `option_id`, or `cancelled`.
    pub(crate) fn answer_permission(&mut self, ticket: Ticket, option_id: Option<&str>) {
        let now = self.shared.now();
        let answer = match option_id {
            Some(id) => PermissionAnswer::Selected(id),
            None => PermissionAnswer::Cancelled,
        };
        // Already settled (a cancel raced the answer): nothing is owed.
        let _ = self
            .shared
            .with(|conn| conn.respond_permission(now, ticket, answer));
        self.run();
    }

    /// Answers an ask_user request with `text`, or `cancelled` for none (or only blanks).
    pub(crate) fn answer_ask_user(&mut self, ticket: Ticket, text: Option<&str>) {
        let now = self.shared.now();
        let answer = match text {
            Some(text) if !text.trim().is_empty() => AskUserAnswer::Answered(text),
            _ => AskUserAnswer::Cancelled,
        };
        let _ = self
            .shared
            .with(|conn| conn.respond_ask_user(now, ticket, answer));
        self.run();
    }

    /// The next event for the application (requests the link serves itself were answered
    /// on the way, as the pump handed their events over).
    pub(crate) fn poll_event(&mut self) -> Option<LinkEvent> {
        self.out.events.borrow_mut().pop_front()
    }
}

/// The agent's auth methods, owned.
fn offered_auth(conn: &Conn) -> Vec<OfferedAuth> {
    conn.auth_methods()
        .iter()
        .map(|method| OfferedAuth {
            id: method.id.to_owned(),
            name: method.name.to_owned(),
            description: method.description.map(str::to_owned),
            terminal: (method.kind == AuthKind::Terminal).then(|| TerminalLogin {
                args: method.args().map(str::to_owned).collect(),
                env: method
                    .env()
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect(),
            }),
        })
        .collect()
}

/// The pump's driver: translates the connection's events into [`LinkEvent`]s, answering
/// `fs/*` itself (inside the session's directory) and what this client does not serve.
struct Translator {
    /// The session's working directory, as sent.
    cwd: String,
    /// The same, symlinks resolved: what `fs/*` paths must stay inside.
    root: PathBuf,
    /// What updates show (it remembers plans and subagents).
    view: UpdateView,
    out: Rc<Out>,
}

impl Driver<Conn> for Translator {
    fn on_event(&mut self, shared: &Rc<Shared<Conn>>, event: ClientEvent) {
        if let Some(event) = self.translate(shared, event) {
            self.out.events.borrow_mut().push_back(event);
        }
    }
}

impl Translator {
    fn translate(&mut self, shared: &Shared<Conn>, event: ClientEvent) -> Option<LinkEvent> {
        let now = shared.now();
        match event {
            ClientEvent::Initialized { .. } => {
                let cwd = self.cwd.clone();
                if let Err(e) = shared.with(|conn| conn.new_session(now, &cwd, NO_MCP_SERVERS)) {
                    return Some(LinkEvent::HandshakeFailed(HandshakeFailure {
                        method: "session/new",
                        code: None,
                        message: e.to_string(),
                    }));
                }
                None
            }
            ClientEvent::HandshakeFailed { error, .. } => {
                let (code, message) = match error {
                    HandshakeError::Failed(failure) => failure_parts(&failure),
                    other => (None, other.to_string()),
                };
                Some(LinkEvent::HandshakeFailed(HandshakeFailure {
                    method: "initialize",
                    code,
                    message,
                }))
            }
            ClientEvent::SessionOpened { session, .. } if self.out.session.borrow().is_none() => {
                let session = session.as_str().to_owned();
                *self.out.session.borrow_mut() = Some(session.clone());
                Some(LinkEvent::Ready { session })
            }
            ClientEvent::Failed {
                method: ClientMethod::NewSession,
                failure,
                ..
            } => {
                let (code, message) = failure_parts(&failure);
                let failure = HandshakeFailure {
                    method: "session/new",
                    code,
                    message,
                };
                if failure.needs_auth() && !self.out.login_tried.get() {
                    return Some(LinkEvent::AuthRequired {
                        failure,
                        methods: shared.with(|conn| offered_auth(conn)),
                    });
                }
                Some(LinkEvent::HandshakeFailed(failure))
            }
            ClientEvent::Answered { request, .. }
                if self.out.authenticating.get() == Some(request) =>
            {
                self.out.authenticating.set(None);
                let cwd = self.cwd.clone();
                if let Err(e) = shared.with(|conn| conn.new_session(now, &cwd, NO_MCP_SERVERS)) {
                    return Some(LinkEvent::HandshakeFailed(HandshakeFailure {
                        method: "session/new",
                        code: None,
                        message: e.to_string(),
                    }));
                }
                None
            }
            ClientEvent::Failed {
                request, failure, ..
            } if self.out.authenticating.get() == Some(request) => {
                self.out.authenticating.set(None);
                let (code, message) = failure_parts(&failure);
                Some(LinkEvent::HandshakeFailed(HandshakeFailure {
                    method: "authenticate",
                    code,
                    message,
                }))
            }
            // R-CLIENT-6: an update for a session this client never opened is not its
            // session's: logged, never shown.
            ClientEvent::Update {
                context: UpdateContext::UnknownSession,
                session,
                ..
            } => {
                tracing::debug!(
                    session = session.as_str(),
                    "update for an unknown session ignored"
                );
                None
            }
            ClientEvent::Update { params, .. } => {
                let params: Value = serde_json::from_str(params.as_json()?).ok()?;
                Some(match self.view.show(&params)? {
                    Shown::Text(text) => LinkEvent::Text(text),
                    Shown::Aside(text) => LinkEvent::Aside(text),
                    Shown::Unknown(tag) => LinkEvent::UnknownUpdate(tag),
                    Shown::Commands(commands) => LinkEvent::Commands(commands),
                })
            }
            ClientEvent::TurnEnded { outcome, .. } => Some(LinkEvent::TurnEnded(outcome)),
            ClientEvent::Request(request) => {
                let params: Value = request
                    .params
                    .as_json()
                    .and_then(|json| serde_json::from_str(json).ok())
                    .unwrap_or(Value::Null);
                match request.method {
                    AgentMethod::RequestPermission => Some(LinkEvent::Permission {
                        ticket: request.ticket,
                        params,
                    }),
                    AgentMethod::AskUser => Some(LinkEvent::AskUser {
                        ticket: request.ticket,
                        question: render::ask_user_question(&params),
                    }),
                    AgentMethod::ReadTextFile => {
                        let result = self.read_text_file(&params);
                        reply(shared, request.ticket, result);
                        None
                    }
                    AgentMethod::WriteTextFile => {
                        let result = self.write_text_file(&params);
                        reply(shared, request.ticket, result);
                        None
                    }
                    _ => {
                        let message = format!("Method not found: {}", request.name.as_str());
                        let _ = shared.with(|conn| {
                            conn.respond_error(
                                now,
                                request.ticket,
                                ErrorCode::METHOD_NOT_FOUND,
                                &message,
                            )
                        });
                        None
                    }
                }
            }
            ClientEvent::RequestSettled { ticket, .. } => Some(LinkEvent::Settled(ticket)),
            ClientEvent::PeerViolation(violation) => {
                tracing::debug!(?violation, "agent broke a protocol rule");
                None
            }
            ClientEvent::Closed => Some(LinkEvent::Closed),
            _ => None,
        }
    }

    fn read_text_file(&self, params: &Value) -> Result<Value, (ErrorCode, String)> {
        let path = self.inside_root(params, true)?;
        let text = std::fs::read_to_string(&path).map_err(|e| {
            (
                ErrorCode::RESOURCE_NOT_FOUND,
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
        let line = params.get("line").and_then(Value::as_u64);
        let limit = params.get("limit").and_then(Value::as_u64);
        let content = match (line, limit) {
            (None, None) => text,
            _ => {
                let skip = line.unwrap_or(1).saturating_sub(1);
                let take = limit.unwrap_or(u64::MAX);
                let lines: Vec<&str> = text
                    .split_inclusive('\n')
                    .skip(usize::try_from(skip).unwrap_or(usize::MAX))
                    .take(usize::try_from(take).unwrap_or(usize::MAX))
                    .collect();
                lines.concat()
            }
        };
        Ok(serde_json::json!({ "content": content }))
    }

    fn write_text_file(&self, params: &Value) -> Result<Value, (ErrorCode, String)> {
        let path = self.inside_root(params, false)?;
        let content = params
            .get("content")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("fs/write_text_file needs a string \"content\""))?;
        std::fs::write(&path, content).map_err(|e| {
            (
                ErrorCode::INTERNAL_ERROR,
                format!("cannot write {}: {e}", path.display()),
            )
        })?;
        // The schema's WriteTextFileResponse is an object: `{}`, never `null`.
        Ok(Value::Object(serde_json::Map::new()))
    }

    /// The request's `path`, if it is absolute and lies inside the session's directory
    /// (symlinks resolved; for a write, the parent must exist and the file name must be a
    /// plain name).
    fn inside_root(&self, params: &Value, exists: bool) -> Result<PathBuf, (ErrorCode, String)> {
        let raw = params
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("fs request needs a string \"path\""))?;
        let path = Path::new(raw);
        if !path.is_absolute() {
            return Err(invalid(&format!("path must be absolute, got '{raw}'")));
        }
        let outside = || {
            invalid(&format!(
                "path is outside the session's working directory {}: {raw}",
                self.cwd
            ))
        };
        let resolved = if exists {
            path.canonicalize().map_err(|e| {
                (
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("cannot read {raw}: {e}"),
                )
            })?
        } else {
            let name = path.file_name().ok_or_else(outside)?;
            let parent = path.parent().ok_or_else(outside)?;
            let parent = parent.canonicalize().map_err(|e| {
                (
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("cannot write {raw}: {e}"),
                )
            })?;
            let target = parent.join(name);
            // An existing symlink is followed by the write: check where it leads.
            target.canonicalize().unwrap_or(target)
        };
        if resolved.starts_with(&self.root) {
            Ok(resolved)
        } else {
            Err(outside())
        }
    }
}

/// Answers a request the link serves itself.
fn reply(shared: &Shared<Conn>, ticket: Ticket, result: Result<Value, (ErrorCode, String)>) {
    let now = shared.now();
    let _ = shared.with(|conn| match result {
        Ok(value) => conn.respond(now, ticket, &value),
        Err((code, message)) => conn.respond_error(now, ticket, code, &message),
    });
}

fn invalid(message: &str) -> (ErrorCode, String) {
    (ErrorCode::INVALID_PARAMS, message.to_owned())
}

fn failure_parts(failure: &Failure) -> (Option<i32>, String) {
    match failure {
        Failure::Error { code, message } => (Some(code.0), message.as_str().to_owned()),
        other => (None, other.to_string()),
    }
}
