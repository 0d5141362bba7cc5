//! Commands: the requests the application sends the agent and its answers to the agent's
//! requests. Each either writes its line and changes state, or returns a [`UsageError`] and
//! changes neither.

use core::fmt;
use core::time::Duration;

use serde::Serialize;

use super::params::{
    AskUserResult, AuthenticateParams, EmptyParams, InitializeParams, NewSessionParams,
    OpenSessionParams, PermissionResult, PromptParams, SessionParams, SetConfigParams,
    SetModeParams, TextBlock,
};
use super::{
    AskUserAnswer, Buffers, ClientConnection, ClientMethod, Core, Init, OurRequest,
    PermissionAnswer, empty_result, wire_id,
};
use crate::Instant;
use crate::conn::transport::{Outbox, REPLY_RESERVE, Transport};
use crate::machine::pending::MethodKind;
use crate::machine::session::{CancelVia, SessionInput, SessionOutput};
use crate::machine::{ReqRef, RequestId, Table, Ticket, UsageError};
use crate::wire::encode::{write_error, write_notification, write_request, write_result};
use crate::wire::{ErrorCode, Id};

impl<S: Buffers> ClientConnection<S> {
    // ---- commands: requests -------------------------------------------------------------

    /// Sends `initialize` with `clientInfo` and the capabilities of [`ClientConfig::serves`](crate::conn::client::ClientConfig::serves).
    /// Answered by [`ClientEvent::Initialized`](crate::conn::client::ClientEvent::Initialized) or [`ClientEvent::HandshakeFailed`](crate::conn::client::ClientEvent::HandshakeFailed). May be
    /// repeated once answered; one at a time ([`UsageError::TooManyInFlight`]).
    pub fn initialize(&mut self, now: Instant) -> Result<RequestId, UsageError> {
        self.core.begin(now)?;
        if matches!(self.core.init, Init::InFlight(_)) {
            return Err(UsageError::TooManyInFlight);
        }
        let config = self.core.config.clone();
        let params = InitializeParams::new(&config);
        let timeout = self.core.config.request_timeout;
        let id = send(
            &mut self.core,
            &mut self.transport,
            Outgoing::new(ClientMethod::Initialize, None, timeout),
            &params,
        )?;
        self.core.init = Init::InFlight(id);
        Ok(id)
    }

    /// Sends `session/new` (always with `mcpServers`; pass [`NO_MCP_SERVERS`](crate::conn::client::NO_MCP_SERVERS) for none).
    /// Answered by [`ClientEvent::SessionOpened`](crate::conn::client::ClientEvent::SessionOpened) or [`ClientEvent::Failed`](crate::conn::client::ClientEvent::Failed).
    pub fn new_session<M: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        cwd: &str,
        mcp_servers: &M,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        let params = NewSessionParams { cwd, mcp_servers };
        let mut out = Outgoing::new(
            ClientMethod::NewSession,
            None,
            self.core.config.request_timeout,
        );
        out.session_input = SessionStart::New;
        send(&mut self.core, &mut self.transport, out, &params)
    }

    /// Sends `session/load` of `session_id`; only if the agent advertised `loadSession`
    /// ([`UsageError::NotAdvertised`]). History arrives as updates in context
    /// [`UpdateContext::Replay`](crate::conn::client::UpdateContext::Replay), then [`ClientEvent::SessionOpened`](crate::conn::client::ClientEvent::SessionOpened).
    pub fn load_session<M: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session_id: &str,
        cwd: &str,
        mcp_servers: &M,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.require("session/load")?;
        self.open_existing(ClientMethod::LoadSession, session_id, cwd, mcp_servers)
    }

    /// Sends `session/resume` of `session_id`; only if the agent advertised
    /// `sessionCapabilities.resume` ([`UsageError::NotAdvertised`]).
    pub fn resume_session<M: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session_id: &str,
        cwd: &str,
        mcp_servers: &M,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.require("session/resume")?;
        self.open_existing(ClientMethod::ResumeSession, session_id, cwd, mcp_servers)
    }

    fn open_existing<M: Serialize + ?Sized>(
        &mut self,
        method: ClientMethod,
        session_id: &str,
        cwd: &str,
        mcp_servers: &M,
    ) -> Result<RequestId, UsageError> {
        let params = OpenSessionParams {
            session_id,
            cwd,
            mcp_servers,
        };
        let mut out = Outgoing::new(method, Some(session_id), self.core.config.request_timeout);
        out.session_input = SessionStart::Existing;
        send(&mut self.core, &mut self.transport, out, &params)
    }

    /// Sends `session/prompt` with `prompt` as the content blocks (anything that serializes
    /// as a JSON array of `ContentBlock`s). One turn per session
    /// ([`UsageError::TurnInProgress`]). `image`, `audio` and `resource` blocks need the
    /// agent's `promptCapabilities` ([`UsageError::NotAdvertised`], nothing sent). Answered
    /// by [`ClientEvent::TurnEnded`](crate::conn::client::ClientEvent::TurnEnded); the prompt deadline is [`ClientConfig::prompt_timeout`](crate::conn::client::ClientConfig::prompt_timeout).
    pub fn prompt<P: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session: &str,
        prompt: &P,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        let params = PromptParams {
            session_id: session,
            prompt,
        };
        let mut out = Outgoing::new(
            ClientMethod::Prompt,
            Some(session),
            self.core.config.prompt_timeout,
        );
        out.session_input = SessionStart::Turn;
        send(&mut self.core, &mut self.transport, out, &params)
    }

    /// [`ClientConnection::prompt`] with one text block: `[{"type":"text","text":…}]`.
    pub fn prompt_text(
        &mut self,
        now: Instant,
        session: &str,
        text: &str,
    ) -> Result<RequestId, UsageError> {
        self.prompt(now, session, &[TextBlock { kind: "text", text }])
    }

    /// Sends `session/set_mode`; refused during a turn ([`UsageError::TurnInProgress`]).
    /// Answered by [`ClientEvent::Answered`](crate::conn::client::ClientEvent::Answered) or [`ClientEvent::Failed`](crate::conn::client::ClientEvent::Failed).
    pub fn set_mode(
        &mut self,
        now: Instant,
        session: &str,
        mode_id: &str,
    ) -> Result<RequestId, UsageError> {
        let params = SetModeParams {
            session_id: session,
            mode_id,
        };
        self.configure(
            now,
            session,
            ClientMethod::SetMode,
            "session/set_mode",
            &params,
        )
    }

    /// Sends `session/set_config_option` with exactly `sessionId`, `configId` and `value`;
    /// refused during a turn ([`UsageError::TurnInProgress`]).
    pub fn set_config_option<V: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session: &str,
        config_id: &str,
        value: &V,
    ) -> Result<RequestId, UsageError> {
        let params = SetConfigParams {
            session_id: session,
            config_id,
            value,
        };
        self.configure(
            now,
            session,
            ClientMethod::SetConfigOption,
            "session/set_config_option",
            &params,
        )
    }

    /// Sends a request that changes a session's configuration: refused during a turn.
    fn configure<P: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        session: &str,
        method: ClientMethod,
        name: &str,
        params: &P,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.configure(session, name)?;
        let out = Outgoing::new(method, Some(session), self.core.config.request_timeout);
        send(&mut self.core, &mut self.transport, out, params)
    }

    /// Sends `authenticate` with `method_id` (R-AUTH-6); only when the agent offered
    /// `authMethods` and `method_id` is one of its `agent` methods: a `terminal` method is
    /// run by the client, never passed here, and an id the agent did not offer is refused
    /// ([`UsageError::NotAdvertised`], nothing sent). Answered by
    /// [`ClientEvent::Answered`](crate::conn::client::ClientEvent::Answered) (`{}`: sessions
    /// may be opened) or [`ClientEvent::Failed`](crate::conn::client::ClientEvent::Failed),
    /// with [`ClientMethod::Other`].
    pub fn authenticate(&mut self, now: Instant, method_id: &str) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.require("authenticate")?;
        let offered = self.core.auth_methods.find(method_id);
        let agent = offered.is_some_and(|m| m.kind == crate::conn::agent::AuthKind::Agent);
        if !agent && (offered.is_some() || self.core.auth_methods_complete) {
            return Err(UsageError::NotAdvertised {
                method: "authenticate",
                needs: "an authMethods entry of type agent with this id",
            });
        }
        let out = Outgoing::new(ClientMethod::Other, None, self.core.config.request_timeout);
        let params = AuthenticateParams { method_id };
        send_named(
            &mut self.core,
            &mut self.transport,
            out,
            "authenticate",
            &params,
        )
    }

    /// Sends `logout` (R-AUTH-6); only when the agent advertised
    /// `agentCapabilities.auth.logout` ([`UsageError::NotAdvertised`], nothing sent).
    /// Answered by [`ClientEvent::Answered`](crate::conn::client::ClientEvent::Answered) or
    /// [`ClientEvent::Failed`](crate::conn::client::ClientEvent::Failed), with
    /// [`ClientMethod::Other`].
    pub fn logout(&mut self, now: Instant) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.require("logout")?;
        let out = Outgoing::new(ClientMethod::Other, None, self.core.config.request_timeout);
        send_named(
            &mut self.core,
            &mut self.transport,
            out,
            "logout",
            &EmptyParams {},
        )
    }

    /// Sends any other request (`authenticate`, `session/list`, `_agentao.cn/set_model`, an
    /// extension) after `initialize`. Answered by [`ClientEvent::Answered`](crate::conn::client::ClientEvent::Answered) or
    /// [`ClientEvent::Failed`](crate::conn::client::ClientEvent::Failed) with [`ClientMethod::Other`].
    ///
    /// An optional method the agent did not advertise is refused locally with
    /// [`UsageError::NotAdvertised`] naming what it needs, and nothing is sent:
    /// `session/load` (`loadSession`), `session/list`, `session/resume`, `session/close`,
    /// `session/delete` (`sessionCapabilities.*`), `logout` (`auth.logout`), `authenticate`
    /// (a non-empty `authMethods`) and `_agentao.cn/set_model` (listed in the agent's
    /// `_meta` extensions); so is a `session/prompt` with image, audio or resource blocks the
    /// agent's `promptCapabilities` do not allow, as with [`ClientConnection::prompt`].
    pub fn request<P: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        method: &str,
        params: &P,
    ) -> Result<RequestId, UsageError> {
        self.core.begin_ready(now)?;
        self.core.require(method)?;
        let out = Outgoing::new(ClientMethod::Other, None, self.core.config.request_timeout);
        send_named(&mut self.core, &mut self.transport, out, method, params)
    }

    /// Cancels the running turn of `session`: sends the `session/cancel` notification, and
    /// answers every open permission request of the session with
    /// `{"outcome":{"outcome":"cancelled"}}` and every ask_user with `{"outcome":"cancelled"}`
    /// (each reported as [`ClientEvent::RequestSettled`](crate::conn::client::ClientEvent::RequestSettled)). The turn ends `cancelled` when
    /// the agent answers. Returns whether a turn was running (cancelling an idle session
    /// sends nothing; cancelling twice is harmless).
    pub fn cancel(&mut self, now: Instant, session: &str) -> Result<bool, UsageError> {
        self.core.begin_ready(now)?;
        if !self.transport.outbox_ref().has_room_for(REPLY_RESERVE) {
            return Err(UsageError::WouldBlock);
        }
        let now = self.core.clock.latest();
        let out = self.core.sessions.handle(
            now,
            SessionInput::Cancel {
                id: session,
                via: CancelVia::Local,
            },
        )?;
        let started = matches!(out, SessionOutput::CancelStarted { .. });
        if started {
            write_cancel(self.transport.outbox(), session);
        }
        self.core.owing.cancel_session(session);
        Ok(started)
    }

    // ---- commands: answers --------------------------------------------------------------

    /// Answers a `session/request_permission`.
    pub fn respond_permission(
        &mut self,
        now: Instant,
        ticket: Ticket,
        answer: PermissionAnswer<'_>,
    ) -> Result<(), UsageError> {
        self.respond_with(now, ticket, Some(MethodKind::Permission), |outbox, id| {
            outbox.push_line(|s| write_result(s, id, &PermissionResult::new(answer)))
        })
    }

    /// Answers an `_agentao.cn/ask_user`.
    pub fn respond_ask_user(
        &mut self,
        now: Instant,
        ticket: Ticket,
        answer: AskUserAnswer<'_>,
    ) -> Result<(), UsageError> {
        self.respond_with(now, ticket, Some(MethodKind::AskUser), |outbox, id| {
            outbox.push_line(|s| write_result(s, id, &AskUserResult::new(answer)))
        })
    }

    /// Answers any other request (`fs/*`, `terminal/*`, `elicitation/create`, extensions)
    /// with `result`. Permission and ask_user requests have their own commands
    /// ([`UsageError::WrongKind`]), so their answers always have the right shape.
    pub fn respond<R: Serialize + ?Sized>(
        &mut self,
        now: Instant,
        ticket: Ticket,
        result: &R,
    ) -> Result<(), UsageError> {
        self.respond_with(now, ticket, None, |outbox, id| {
            outbox.push_line(|s| write_result(s, id, result))
        })
    }

    /// Answers any request of the agent with a JSON-RPC error.
    pub fn respond_error<M: fmt::Display + ?Sized>(
        &mut self,
        now: Instant,
        ticket: Ticket,
        code: ErrorCode,
        message: &M,
    ) -> Result<(), UsageError> {
        self.core.begin(now)?;
        let row = self
            .core
            .owing
            .get(ticket)
            .filter(|r| r.state == crate::machine::pending::OwedState::Open)
            .ok_or(UsageError::AlreadySettled)?;
        let id = row.id.clone();
        self.transport
            .outbox()
            .push_line(|s| write_error(s, wire_id(id.as_raw()), code, message, None::<&()>))?;
        self.core.owing.answer(ticket).map(|_| ())
    }

    fn respond_with(
        &mut self,
        now: Instant,
        ticket: Ticket,
        kind: Option<MethodKind>,
        write: impl FnOnce(&mut Outbox<S::Output>, Id<'_>) -> Result<(), UsageError>,
    ) -> Result<(), UsageError> {
        self.core.begin(now)?;
        let row = self
            .core
            .owing
            .get(ticket)
            .filter(|r| r.state == crate::machine::pending::OwedState::Open)
            .ok_or(UsageError::AlreadySettled)?;
        let special = matches!(row.kind, MethodKind::Permission | MethodKind::AskUser);
        match kind {
            Some(kind) if kind != row.kind => return Err(UsageError::WrongKind),
            None if special => return Err(UsageError::WrongKind),
            _ => {}
        }
        let id = row.id.clone();
        write(self.transport.outbox(), wire_id(id.as_raw()))?;
        self.core.owing.answer(ticket).map(|_| ())
    }
}

/// How a request we send changes the session table.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SessionStart {
    None,
    New,
    Existing,
    Turn,
}

/// A request about to be sent.
struct Outgoing<'a> {
    method: ClientMethod,
    session: Option<&'a str>,
    timeout: Option<Duration>,
    session_input: SessionStart,
}

impl<'a> Outgoing<'a> {
    fn new(method: ClientMethod, session: Option<&'a str>, timeout: Option<Duration>) -> Self {
        Self {
            method,
            session,
            timeout,
            session_input: SessionStart::None,
        }
    }
}

fn send<S: Buffers, P: Serialize + ?Sized>(
    core: &mut Core<S>,
    transport: &mut Transport<S::Input, S::Output>,
    out: Outgoing<'_>,
    params: &P,
) -> Result<RequestId, UsageError> {
    let name = out.method.name().unwrap_or_default();
    send_named(core, transport, out, name, params)
}

/// Registers a request in every table, writes it, and undoes everything if it cannot be
/// written: a command either sends its line and changes state, or does neither.
fn send_named<S: Buffers, P: Serialize + ?Sized>(
    core: &mut Core<S>,
    transport: &mut Transport<S::Input, S::Output>,
    out: Outgoing<'_>,
    name: &str,
    params: &P,
) -> Result<RequestId, UsageError> {
    let now = core.clock.latest();
    let id = core
        .pending
        .send(now, out.method.kind(), out.session, out.timeout)?;
    let row = OurRequest {
        id,
        method: out.method,
        empty_result: empty_result(name),
    };
    if core.requests.try_push(row).is_err() {
        let _ = core.pending.withdraw(id);
        return Err(UsageError::TooManyInFlight);
    }
    let req = ReqRef::Ours(id);
    let registered = match (out.session_input, out.session) {
        (SessionStart::None, _) => Ok(SessionOutput::Proceed),
        (SessionStart::New, _) => core.sessions.handle(now, SessionInput::NewStarted { req }),
        (SessionStart::Existing, Some(sid)) => core
            .sessions
            .handle(now, SessionInput::LoadStarted { id: sid, req }),
        (SessionStart::Turn, Some(sid)) => core
            .sessions
            .handle(now, SessionInput::Prompt { id: sid, req }),
        (_, None) => Ok(SessionOutput::Proceed),
    };
    if let Err(error) = registered {
        core.forget(id);
        return Err(error);
    }
    let before = transport.outbox_ref().len();
    let written = transport
        .outbox()
        .push_line(|s| write_request(s, id.0, name, Some(params)))
        .and_then(|()| {
            // Typed or through `request()`, a prompt carries only advertised content.
            if name != "session/prompt" {
                return Ok(());
            }
            let line = &transport.outbox_ref().pending()[before..];
            let (allowed, written) = (core.prompt_content_advertised(line), line.len());
            if allowed.is_err() {
                transport.outbox().retract(written);
            }
            allowed
        });
    if let Err(error) = written {
        match (out.session_input, out.session) {
            (SessionStart::New | SessionStart::Existing, _) => {
                let _ = core.sessions.handle(now, SessionInput::OpenFailed { req });
            }
            (SessionStart::Turn, Some(sid)) => {
                let _ = core.sessions.handle(
                    now,
                    SessionInput::FailTurn {
                        id: sid,
                        prompt: req,
                    },
                );
            }
            _ => {}
        }
        core.forget(id);
        return Err(error);
    }
    Ok(id)
}

pub(super) fn write_cancel<O: crate::wire::frame::ByteStorage>(
    outbox: &mut Outbox<O>,
    session: &str,
) {
    // Room was checked by the caller (REPLY_RESERVE covers a session id of SESSION_ID_MAX
    // bytes even fully escaped).
    let _ = outbox.push_line(|s| {
        write_notification(
            s,
            "session/cancel",
            Some(&SessionParams {
                session_id: session,
            }),
        )
    });
}
