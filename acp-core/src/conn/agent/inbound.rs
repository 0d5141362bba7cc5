//! Peer messages in: the handshake gate, then routing by method, each request registered in
//! the owed table first so that every path answers it exactly once.

use core::fmt;

use serde::Serialize;

use super::event::{AgentEvent, ClientViolation, METHOD_MAX, Text};
use super::wire_out::{self, Empty, InitializeResult};
use super::{AUTH_OWED_MAX, AgentFeatures, Buffers, Core};
use crate::conn::transport::{Incoming, Outbox};
use crate::machine::handshake::{Capabilities, HandshakeInput, HandshakeOutput, RequestedVersion};
use crate::machine::pending::{
    CancelRequestVerdict, MethodKind, Received, ReplyKind, SettledOutcome,
};
use crate::machine::permission::{self, PermissionDecision, PermissionReply};
use crate::machine::session::{Actor, CancelVia, SessionInput, SessionOutput};
use crate::machine::{Instant, PEER_ID_MAX, ReqRef, SESSION_ID_MAX, SessionId, Ticket};
use crate::wire::encode;
use crate::wire::envelope::{self, Message};
use crate::wire::json::ValueKind;
use crate::wire::{ErrorCode, Id, JsonStr, RawValue};

/// `Invalid params: <detail>` (Agentao's -32602 wrapper).
pub(super) struct InvalidParams<D>(pub(super) D);

impl<D: fmt::Display> fmt::Display for InvalidParams<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid params: {}", self.0)
    }
}

/// JSON-RPC's `Method not found` (Agentao's text, no data).
const METHOD_NOT_FOUND: &str = "Method not found";

/// A prompt content block the agent did not advertise (R-TURN-1; Agentao's texts, with
/// the list of supported types taken from `promptCapabilities`).
pub(super) struct BlockRefused<'a> {
    index: usize,
    block: &'a str,
    features: AgentFeatures,
}

impl fmt::Display for BlockRefused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known = ["text", "image", "audio", "resource_link", "resource"];
        if !known.contains(&self.block) {
            return write!(
                f,
                "session/prompt.prompt[{}]: unknown block type '{}'",
                self.index, self.block
            );
        }
        write!(
            f,
            "session/prompt.prompt[{}]: block type '{}' is not yet supported (v1 supports ",
            self.index, self.block
        )?;
        let on = [
            ("text", true),
            ("resource_link", true),
            ("image", self.features.prompt_image),
            ("audio", self.features.prompt_audio),
            ("resource", self.features.prompt_embedded_context),
        ];
        let count = on.iter().filter(|(_, yes)| *yes).count();
        for (i, (name, _)) in on.iter().filter(|(_, yes)| *yes).enumerate() {
            match i {
                0 => {}
                _ if i + 1 == count && count > 2 => f.write_str(", and ")?,
                _ if i + 1 == count => f.write_str(" and ")?,
                _ => f.write_str(", ")?,
            }
            write!(f, "'{name}'")?;
        }
        f.write_str(")")
    }
}

/// Checks content block types against `promptCapabilities`: `text` and `resource_link`
/// always; `image`, `audio`, `resource` only when advertised.
pub(super) fn check_blocks<'a>(
    features: AgentFeatures,
    types: impl Iterator<Item = &'a str>,
) -> Result<(), BlockRefused<'a>> {
    for (index, block) in types.enumerate() {
        let ok = match block {
            "text" | "resource_link" => true,
            "image" => features.prompt_image,
            "audio" => features.prompt_audio,
            "resource" => features.prompt_embedded_context,
            _ => false,
        };
        if !ok {
            return Err(BlockRefused {
                index,
                block,
                features,
            });
        }
    }
    Ok(())
}

/// An MCP transport the agent did not advertise.
pub(super) struct McpRefused<'a> {
    method: &'a str,
    index: usize,
    kind: &'static str,
}

impl fmt::Display for McpRefused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.mcpServers[{}].type '{}' is not supported (mcpCapabilities.{} is not advertised)",
            self.method, self.index, self.kind, self.kind
        )
    }
}

/// `systemPrompt` sent to an agent that does not advertise `sessionCapabilities.systemPrompt`
/// (clients must not send it then; the schema asks the agent to refuse what it cannot apply).
pub(super) struct SystemPromptRefused<'a>(pub(super) &'a str);

impl fmt::Display for SystemPromptRefused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.systemPrompt is not supported (sessionCapabilities.systemPrompt is not advertised)",
            self.0
        )
    }
}

/// Whether `params` carry a `systemPrompt` the agent did not advertise (`null` is the same
/// as absent).
pub(super) fn unadvertised_system_prompt(
    features: AgentFeatures,
    params: Option<RawValue<'_>>,
) -> bool {
    !features.system_prompt
        && params
            .and_then(|p| p.get_field("systemPrompt"))
            .is_some_and(|v| v.kind() != ValueKind::Null)
}

/// Checks MCP server transports (`stdio` always; `http`, `sse` when advertised).
pub(super) fn check_mcp<'a>(
    method: &'a str,
    features: AgentFeatures,
    kinds: impl Iterator<Item = &'static str>,
) -> Result<(), McpRefused<'a>> {
    for (index, kind) in kinds.enumerate() {
        let ok = match kind {
            "http" => features.mcp_http,
            "sse" => features.mcp_sse,
            _ => true,
        };
        if !ok {
            return Err(McpRefused {
                method,
                index,
                kind,
            });
        }
    }
    Ok(())
}

/// `set_config_option` with a `configId` other than `model` (R-CONFIG-1; Agentao's text).
pub(super) struct UnknownConfigId<'a>(pub(super) &'a str);

impl fmt::Display for UnknownConfigId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown configId '{}'; only 'model' is supported",
            self.0
        )
    }
}

/// A string field, unescaped into `buf` (or borrowed when it has no escapes).
pub(super) fn text_of<'a>(value: JsonStr<'a>, buf: &'a mut [u8]) -> Option<&'a str> {
    match value.as_plain() {
        Some(plain) => Some(plain),
        None => value.unescape_into(buf).ok(),
    }
}

/// The raw JSON text of a request id, to store and echo.
fn raw_id(id: Id<'_>) -> Option<heapless::String<PEER_ID_MAX>> {
    let mut raw = heapless::String::new();
    match id {
        Id::Int(digits) => raw.push_str(digits).ok()?,
        Id::Str(s) => {
            raw.push('"').ok()?;
            raw.push_str(s.raw()).ok()?;
            raw.push('"').ok()?;
        }
        Id::Null => return None,
    }
    Some(raw)
}

/// Answers a request straight from its line (before it is registered as owed).
fn reply_now<O: crate::wire::frame::ByteStorage, M: fmt::Display + ?Sized>(
    out: &mut Outbox<O>,
    id: Id<'_>,
    code: ErrorCode,
    message: &M,
) {
    // Input is only taken while the outbox has room for a reply (REPLY_RESERVE).
    let _ = out.push_line(|sink| encode::write_error(sink, id, code, message, None::<&()>));
}

fn reply_result_now<O: crate::wire::frame::ByteStorage, R: Serialize + ?Sized>(
    out: &mut Outbox<O>,
    id: Id<'_>,
    result: &R,
) {
    let _ = out.push_line(|sink| encode::write_result(sink, id, result));
}

/// The decoded `initialize` params, checked in Agentao's order (R-INIT-2, R-INIT-3).
enum Hello {
    Ok {
        version: RequestedVersion,
        client: Capabilities,
    },
    /// Not an object, or a `clientCapabilities`/`clientInfo` of the wrong type.
    Invalid(&'static str),
}

fn read_initialize(params: Option<RawValue<'_>>) -> Hello {
    let Some(params) = params.filter(|p| p.kind() == ValueKind::Object) else {
        return Hello::Invalid("initialize params must be a JSON object");
    };
    let version = match params.get_field("protocolVersion") {
        Some(v) if v.kind() == ValueKind::Number && !v.get().contains(['.', 'e', 'E']) => {
            match v.as_i64() {
                Some(n) => RequestedVersion::Integer(n),
                None => RequestedVersion::HugeInteger,
            }
        }
        _ => RequestedVersion::NotInteger,
    };
    if !matches!(version, RequestedVersion::Integer(0..=65535)) {
        // The handshake machine words the refusal.
        return Hello::Ok {
            version,
            client: Capabilities::empty(),
        };
    }
    let caps = params.get_field("clientCapabilities");
    if caps.is_some_and(|c| c.kind() != ValueKind::Object) {
        return Hello::Invalid("initialize.clientCapabilities must be a JSON object");
    }
    if params
        .get_field("clientInfo")
        .is_some_and(|c| c.kind() != ValueKind::Object)
    {
        return Hello::Invalid("initialize.clientInfo must be a JSON object when present");
    }
    let flag = |v: Option<RawValue<'_>>| v.and_then(|v| v.as_bool()).unwrap_or(false);
    let client = match caps {
        None => Capabilities::empty(),
        Some(caps) => {
            let fs = caps.get_field("fs");
            Capabilities::empty()
                .with(
                    Capabilities::FS_READ,
                    flag(fs.and_then(|f| f.get_field("readTextFile"))),
                )
                .with(
                    Capabilities::FS_WRITE,
                    flag(fs.and_then(|f| f.get_field("writeTextFile"))),
                )
                .with(Capabilities::TERMINAL, flag(caps.get_field("terminal")))
                .with(
                    Capabilities::AUTH_TERMINAL,
                    flag(caps.get_field("auth").and_then(|a| a.get_field("terminal"))),
                )
                .with(
                    Capabilities::ELICITATION,
                    caps.get_field("elicitation")
                        .is_some_and(|e| e.kind() == ValueKind::Object),
                )
        }
    };
    Hello::Ok { version, client }
}

impl<B: Buffers> Core<B> {
    pub(super) fn on_incoming(
        &mut self,
        now: Instant,
        incoming: Incoming<'_>,
        out: &mut Outbox<B::Output>,
    ) {
        match incoming {
            Incoming::Rejected(rejection) => {
                self.push_event(AgentEvent::PeerViolation(ClientViolation::Rejected(
                    rejection.code,
                )));
            }
            Incoming::Message(Message::Request(request)) => self.on_request(now, request, out),
            Incoming::Message(Message::Notification(note)) => self.on_notification(now, note, out),
            Incoming::Message(Message::Response(response)) => self.on_response(now, response),
        }
    }

    fn violation(&mut self, code: ErrorCode) {
        self.push_event(AgentEvent::PeerViolation(ClientViolation::Refused(code)));
    }

    /// Answers owed request `ticket` with an error.
    pub(super) fn refuse<M: fmt::Display + ?Sized>(
        &mut self,
        out: &mut Outbox<B::Output>,
        ticket: Ticket,
        code: ErrorCode,
        message: &M,
    ) {
        if let Ok(owed) = self.owing.answer(ticket) {
            let _ = wire_out::error(out, owed.id.as_raw(), code, message);
        }
        self.violation(code);
    }

    /// Answers owed request `ticket` with a result.
    pub(super) fn grant<R: Serialize + ?Sized>(
        &mut self,
        out: &mut Outbox<B::Output>,
        ticket: Ticket,
        result: &R,
    ) {
        if let Ok(owed) = self.owing.answer(ticket) {
            let _ = wire_out::result(out, owed.id.as_raw(), result);
        }
    }

    fn on_request(
        &mut self,
        now: Instant,
        request: envelope::Request<'_>,
        out: &mut Outbox<B::Output>,
    ) {
        let mut method_buf = [0u8; 128];
        let method = text_of(request.method, &mut method_buf).unwrap_or(request.method.raw());
        if method == "initialize" {
            return self.on_initialize(request.id, request.params, out);
        }
        // R-INIT-1 (Agentao: -32002), R-INIT-8 (plain ACP: -32600), for every request, known
        // or not.
        if let HandshakeOutput::Reject(rejection) = self
            .handshake
            .handle(HandshakeInput::PeerRequest { method })
        {
            let code = match (self.config.dialect, &rejection) {
                (super::Dialect::Acp, crate::machine::Rejection::BeforeInitialize { .. }) => {
                    ErrorCode::INVALID_REQUEST
                }
                _ => rejection.code(),
            };
            reply_now(out, request.id, code, &rejection);
            return self.violation(code);
        }
        let mut session_buf = [0u8; SESSION_ID_MAX];
        let session = request
            .params
            .and_then(|p| p.get_field("sessionId"))
            .and_then(|v| v.as_str())
            .and_then(|s| text_of(s, &mut session_buf));
        let received = match raw_id(request.id) {
            Some(raw) => self.owing.receive(&raw, MethodKind::of(method), session),
            None => Received::Reject(crate::machine::Rejection::IdTooLong),
        };
        let ticket = match received {
            Received::Owed(ticket) => ticket,
            Received::Reject(rejection) => {
                reply_now(out, request.id, rejection.code(), &rejection);
                return self.violation(rejection.code());
            }
        };
        self.dispatch(now, ticket, method, request.params, out);
    }

    fn on_initialize(
        &mut self,
        id: Id<'_>,
        params: Option<RawValue<'_>>,
        out: &mut Outbox<B::Output>,
    ) {
        let (version, client) = match read_initialize(params) {
            Hello::Ok { version, client } => (version, client),
            Hello::Invalid(detail) => {
                reply_now(out, id, ErrorCode::INVALID_PARAMS, &InvalidParams(detail));
                return self.violation(ErrorCode::INVALID_PARAMS);
            }
        };
        match self.handshake.handle(HandshakeInput::PeerInitialize {
            version,
            capabilities: client,
        }) {
            HandshakeOutput::AnswerInitialize { .. } => {
                let terminal = client.contains(Capabilities::AUTH_TERMINAL);
                reply_result_now(out, id, &InitializeResult(&self.config, terminal));
                let params = self.keep_later(params);
                self.push_event(AgentEvent::Initialized { client, params });
            }
            HandshakeOutput::Reject(rejection) => {
                reply_now(out, id, rejection.code(), &rejection);
                self.violation(rejection.code());
            }
            HandshakeOutput::Proceed | HandshakeOutput::Ignore | HandshakeOutput::Ready => {}
        }
    }

    fn on_notification(
        &mut self,
        now: Instant,
        note: envelope::Notification<'_>,
        out: &mut Outbox<B::Output>,
    ) {
        // R-INIT-1: notifications are ignored.
        if self.handshake.handle(HandshakeInput::PeerNotification) == HandshakeOutput::Ignore {
            return;
        }
        let mut method_buf = [0u8; 64];
        let method = text_of(note.method, &mut method_buf).unwrap_or("");
        match method {
            "session/cancel" => {
                let mut buf = [0u8; SESSION_ID_MAX];
                let session = note
                    .params
                    .and_then(|p| p.get_field("sessionId"))
                    .and_then(|v| v.as_str())
                    .and_then(|s| text_of(s, &mut buf));
                match session {
                    Some(session) => {
                        self.on_cancel(now, session, CancelVia::PeerNotification, None, out)
                    }
                    None => {
                        self.push_event(AgentEvent::PeerViolation(ClientViolation::BadNotification))
                    }
                }
            }
            "$/cancel_request" => {
                let target = note
                    .params
                    .and_then(|p| p.get_field("requestId"))
                    .filter(|v| matches!(v.kind(), ValueKind::Number | ValueKind::String));
                match target {
                    Some(target) => self.on_cancel_request(now, target.get(), out),
                    None => {
                        self.push_event(AgentEvent::PeerViolation(ClientViolation::BadNotification))
                    }
                }
            }
            // Unknown notifications are ignored (JSON-RPC: never answered).
            _ => {}
        }
    }

    /// `session/cancel` (R-CANCEL-1 … R-CANCEL-3): settles the session's permission and
    /// ask_user requests at once and makes the turn end `cancelled`; idempotent.
    pub(super) fn on_cancel(
        &mut self,
        now: Instant,
        session: &str,
        via: CancelVia,
        ticket: Option<Ticket>,
        out: &mut Outbox<B::Output>,
    ) {
        match self
            .sessions
            .handle(now, SessionInput::Cancel { id: session, via })
        {
            Ok(SessionOutput::CancelStarted { .. }) => self.turn_cancelled(session),
            Ok(SessionOutput::Reject(rejection)) => {
                if let Some(ticket) = ticket {
                    self.refuse(out, ticket, rejection.code(), &rejection);
                }
            }
            _ => {}
        }
        // As a request it is answered `{}` (Agentao answers null; the schema says {}).
        if let Some(ticket) = ticket {
            self.grant(out, ticket, &Empty {});
        }
    }

    /// The client's `$/cancel_request` for `raw` (R-CANCEL-4): `-32800` for a request still
    /// owed; a prompt is cancelled through its turn.
    fn on_cancel_request(&mut self, now: Instant, raw: &str, out: &mut Outbox<B::Output>) {
        match self.owing.handle_cancel_request(raw) {
            CancelRequestVerdict::Settling(ticket) => {
                // Bounded: each call removes one settling row.
                while let Some((owed, settle)) = self.owing.poll_settled() {
                    if let Some(rejection) = settle.rejection(owed.kind) {
                        let _ =
                            wire_out::error(out, owed.id.as_raw(), rejection.code(), &rejection);
                    }
                    // A session/new or load that will never be answered leaves no session.
                    let _ = self.sessions.handle(
                        now,
                        SessionInput::OpenFailed {
                            req: ReqRef::Peer(owed.ticket),
                        },
                    );
                }
                self.push_event(AgentEvent::RequestCancelled { ticket });
            }
            CancelRequestVerdict::CancelTurn { ticket } => {
                if let Some(session) = self.owing.get(ticket).and_then(|o| o.session.clone()) {
                    self.on_cancel(
                        now,
                        session.as_str(),
                        CancelVia::PeerNotification,
                        None,
                        out,
                    );
                }
            }
            CancelRequestVerdict::Unknown => {}
        }
    }

    fn on_response(&mut self, now: Instant, response: envelope::Response<'_>) {
        use crate::wire::envelope::Outcome;
        let kind = match response.outcome {
            Outcome::Result(_) => ReplyKind::Result,
            Outcome::Error(error) => ReplyKind::Error(error.code),
            Outcome::Malformed(_) => ReplyKind::Malformed,
        };
        match self
            .pending
            .handle_response(now, response.id.as_u64(), kind)
        {
            crate::machine::pending::ResponseVerdict::Settled(settled) => {
                let (answer, message) = match response.outcome {
                    Outcome::Result(value) => (Some(value.get()), None),
                    Outcome::Error(error) => (None, Some(error.message)),
                    Outcome::Malformed(_) => (None, None),
                };
                self.report_settled(settled, answer, message);
            }
            crate::machine::pending::ResponseVerdict::Late { id, .. } => {
                self.push_event(AgentEvent::PeerViolation(ClientViolation::LateResponse(id)));
            }
            crate::machine::pending::ResponseVerdict::Unknown => {
                self.push_event(AgentEvent::PeerViolation(ClientViolation::UnknownResponse));
            }
        }
    }

    /// A session is closed by `session/close`: its running turn is answered `cancelled`.
    pub(super) fn close_session(
        &mut self,
        now: Instant,
        session: &str,
        out: &mut Outbox<B::Output>,
    ) -> Result<(), crate::machine::Rejection<'static>> {
        match self.sessions.handle(
            now,
            SessionInput::Close {
                id: session,
                actor: Actor::Peer,
            },
        ) {
            Ok(SessionOutput::Closed { ended }) => {
                if let Some(ReqRef::Peer(prompt)) = ended {
                    self.answer_prompt_cancelled(out, prompt);
                    self.turn_cancelled(session);
                    self.forget_turn(session);
                }
                self.memory.forget_session(session);
                Ok(())
            }
            _ => Err(crate::machine::Rejection::ConnectionClosed),
        }
    }
}

/// Reads a permission answer's result: the nested standard shape or Agentao's flat one.
pub(super) fn read_permission(result: &str) -> PermissionDecision {
    let Ok(value) = crate::wire::json::parse_value(result) else {
        return permission::decide(PermissionReply::Malformed);
    };
    fn plain(v: Option<RawValue<'_>>) -> Option<&str> {
        v.and_then(|v| v.as_str()).and_then(|s| s.as_plain())
    }
    let reply = match value.get_field("outcome") {
        Some(outcome) if outcome.kind() == ValueKind::Object => PermissionReply::Nested {
            outcome: plain(outcome.get_field("outcome")),
            option_id: plain(outcome.get_field("optionId")),
        },
        Some(outcome) if outcome.kind() == ValueKind::String => match plain(Some(outcome)) {
            Some(flat) => PermissionReply::Flat {
                outcome: flat,
                option_id: plain(value.get_field("optionId")),
            },
            None => PermissionReply::Malformed,
        },
        _ => PermissionReply::Malformed,
    };
    permission::decide(reply)
}

/// Reads an ask_user answer: the text when usable, `None` for the sentinel (R-ASK-1).
pub(super) fn read_ask_user(answer: Option<&str>, outcome: SettledOutcome) -> Option<Text> {
    use crate::machine::ask_user::{self, AskUserReply, AskUserResolution};
    let reply = match answer.map(crate::wire::json::parse_value) {
        Some(Ok(value)) if value.kind() == ValueKind::Object => {
            let outcome = value
                .get_field("outcome")
                .and_then(|v| v.as_str())
                .and_then(|s| s.as_plain());
            let text = value.get_field("text").and_then(|v| v.as_str());
            // Escaped or not, a JSON string is empty exactly when its raw text is.
            return match ask_user::read_reply(AskUserReply::Result {
                outcome,
                text: text.map(|t| t.raw()),
            }) {
                AskUserResolution::Answered(_) => text.map(Text::from_json),
                AskUserResolution::Unavailable(_) => None,
            };
        }
        Some(_) => AskUserReply::Malformed,
        None => AskUserReply::Settled(outcome),
    };
    match ask_user::read_reply(reply) {
        AskUserResolution::Answered(text) => Some(Text::new(text)),
        AskUserResolution::Unavailable(_) => None,
    }
}

/// Reads the answer to an `fs/*`, `terminal/*` or `elicitation/create` request.
#[cfg(feature = "alloc")]
pub(super) fn read_response(
    method: &str,
    answer: Option<&str>,
    outcome: SettledOutcome,
    message: Option<alloc::string::String>,
) -> Result<crate::schema::ClientResponse, super::ResponseError> {
    use alloc::string::{String, ToString};
    let error = |code: ErrorCode, message: String| super::ResponseError { code, message };
    match (answer, outcome) {
        (Some(text), _) => crate::schema::ClientResponse::decode(method, text).map_err(|e| {
            error(
                ErrorCode::INTERNAL_ERROR,
                alloc::format!("Internal error: malformed response: {e}"),
            )
        }),
        (None, SettledOutcome::Error(code)) => Err(error(code, message.unwrap_or_default())),
        (None, SettledOutcome::TimedOut) => Err(error(
            ErrorCode::INTERNAL_ERROR,
            String::from("Internal error: request timed out"),
        )),
        (None, SettledOutcome::Disconnected) => Err(error(
            ErrorCode::REQUEST_CANCELLED,
            crate::machine::Rejection::ConnectionClosed.to_string(),
        )),
        (None, SettledOutcome::Cancelled) => Err(error(
            ErrorCode::REQUEST_CANCELLED,
            crate::machine::Rejection::RequestCancelled.to_string(),
        )),
        (None, SettledOutcome::Malformed | SettledOutcome::Answered) => Err(error(
            ErrorCode::INTERNAL_ERROR,
            String::from("Internal error: malformed response"),
        )),
    }
}

// ----- routing by method -----

/// Why a request's params were refused.
enum Invalid<'a> {
    /// No such client → agent method.
    MethodNotFound,
    /// The owned decoder's refusal (`alloc`).
    #[cfg(feature = "alloc")]
    Decoded(crate::schema::DecodeError),
    /// The borrowed view's refusal.
    View(crate::view::ViewError<'a>),
    /// `<method>.<field> <detail>` for the methods no view covers (no `alloc`).
    #[cfg_attr(feature = "alloc", allow(dead_code))]
    Field(&'a str, &'static str, &'static str),
    /// `<method> params must be a JSON object` (no `alloc`).
    #[cfg_attr(feature = "alloc", allow(dead_code))]
    NotObject(&'a str),
}

impl Invalid<'_> {
    fn code(&self) -> ErrorCode {
        match self {
            Invalid::MethodNotFound => ErrorCode::METHOD_NOT_FOUND,
            _ => ErrorCode::INVALID_PARAMS,
        }
    }
}

impl fmt::Display for Invalid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::MethodNotFound => f.write_str(METHOD_NOT_FOUND),
            #[cfg(feature = "alloc")]
            Invalid::Decoded(e) => write!(f, "{}", InvalidParams(e.message())),
            Invalid::View(e) => write!(f, "{}", InvalidParams(e)),
            Invalid::Field(method, field, detail) => {
                write!(f, "Invalid params: {method}.{field} {detail}")
            }
            Invalid::NotObject(method) => {
                write!(f, "Invalid params: {method} params must be a JSON object")
            }
        }
    }
}

/// Checks a request's params: by the borrowed views of [`crate::view`] where one exists
/// (`initialize`, `session/new`, `session/prompt`, `session/cancel`), in every build, so a turn
/// allocates nothing even with `alloc`; elsewhere with `alloc` by the owned decoder of
/// [`crate::schema`] (full coverage), without it by the shape the routing needs (an object, a
/// non-empty `sessionId`). Views and owned types refuse with the same messages (R-RPC-10).
/// What the routing reads afterwards it reads from the raw params, the same way in both
/// builds.
#[cfg(feature = "alloc")]
fn validate<'a>(method: &'a str, params: Option<RawValue<'a>>) -> Result<(), Invalid<'a>> {
    use crate::schema::{ClientRequest, DecodeErrorKind};
    use crate::view::{ClientRequestView, ViewErrorKind};
    match ClientRequestView::decode(method, params) {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() != ViewErrorKind::NoView => return Err(Invalid::View(e)),
        Err(_) => {}
    }
    match ClientRequest::decode(method, params.map(|p| p.get())) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == DecodeErrorKind::UnknownMethod => Err(Invalid::MethodNotFound),
        Err(e) => Err(Invalid::Decoded(e)),
    }
}

#[cfg(not(feature = "alloc"))]
fn validate<'a>(method: &'a str, params: Option<RawValue<'a>>) -> Result<(), Invalid<'a>> {
    use crate::view::{ClientRequestView, ViewErrorKind};
    match ClientRequestView::decode(method, params) {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() != ViewErrorKind::NoView => return Err(Invalid::View(e)),
        Err(_) => {}
    }
    let names_session = match method {
        "session/load"
        | "session/resume"
        | "session/close"
        | "session/delete"
        | "session/set_mode"
        | "session/set_config_option"
        | "_agentao.cn/set_model" => true,
        "session/list" => false,
        // All-optional params: missing or `null` reads as `{}`, as the owned decoder does.
        "logout" if params.is_none_or(|p| p.is_null()) => return Ok(()),
        "logout" => false,
        "authenticate" => {
            let method_id = params
                .filter(|p| p.kind() == ValueKind::Object)
                .and_then(|p| p.get_field("methodId"));
            return match method_id {
                Some(id) if id.kind() == ValueKind::String => Ok(()),
                Some(_) => Err(Invalid::Field(method, "methodId", "must be a string")),
                // Missing or `null` params read as `{}`, which lacks `methodId`: the owned
                // decoder words that as "must be a JSON object".
                None if params.is_none_or(|p| p.kind() != ValueKind::Object) => {
                    Err(Invalid::NotObject(method))
                }
                None => Err(Invalid::Field(method, "methodId", "is required")),
            };
        }
        _ => return Err(Invalid::MethodNotFound),
    };
    let Some(params) = params.filter(|p| p.kind() == ValueKind::Object) else {
        return Err(Invalid::NotObject(method));
    };
    let session = params.get_field("sessionId").and_then(|v| v.as_str());
    if names_session && session.is_none_or(|s| s.raw().is_empty()) {
        return Err(Invalid::Field(
            method,
            "sessionId",
            "must be a non-empty string",
        ));
    }
    Ok(())
}

/// The transports of a request's `mcpServers` (`stdio` unless `http` or `sse`).
fn mcp_kinds<'a>(params: Option<RawValue<'a>>) -> impl Iterator<Item = &'static str> + 'a {
    params
        .and_then(|p| p.get_field("mcpServers"))
        .into_iter()
        .flat_map(|s| s.elements())
        .map(|s| {
            match s
                .get_field("type")
                .and_then(|t| t.as_str())
                .and_then(|t| t.as_plain())
            {
                Some("http") => "http",
                Some("sse") => "sse",
                _ => "stdio",
            }
        })
}

impl<B: Buffers> Core<B> {
    /// Validates a registered request (see [`validate`]) and routes it: one path with and
    /// without `alloc`.
    fn dispatch(
        &mut self,
        now: Instant,
        ticket: Ticket,
        method: &str,
        params: Option<RawValue<'_>>,
        out: &mut Outbox<B::Output>,
    ) {
        use crate::machine::Rejection;
        use crate::machine::session::SessionState;

        let f = self.config.features;
        // R-RPC-7: -32601 unless advertised.
        let served = match method {
            "session/load" => f.load_session,
            "session/list" => f.session_list,
            "session/resume" => f.session_resume,
            "session/close" => f.session_close,
            "session/delete" => f.session_delete,
            "_agentao.cn/set_model" => f.set_model,
            // R-AUTH-1, R-AUTH-5: served when offered.
            "authenticate" => !self.config.auth_methods.is_empty(),
            "logout" => f.logout,
            _ => true,
        };
        if !served {
            return self.refuse(out, ticket, ErrorCode::METHOD_NOT_FOUND, METHOD_NOT_FOUND);
        }
        // R-AUTH-3: no session before authentication, when the agent requires it.
        if self.config.auth_required
            && !self.authenticated
            && matches!(
                method,
                "session/new" | "session/load" | "session/resume" | "session/list"
            )
        {
            return self.refuse(
                out,
                ticket,
                ErrorCode::AUTH_REQUIRED,
                super::AUTH_REQUIRED_MESSAGE,
            );
        }
        if matches!(method, "session/new" | "session/load" | "session/resume")
            && unadvertised_system_prompt(f, params)
        {
            let e = InvalidParams(SystemPromptRefused(method));
            return self.refuse(out, ticket, ErrorCode::INVALID_PARAMS, &e);
        }
        let name = heapless::String::<METHOD_MAX>::try_from(method).unwrap_or_default();
        if self.config.serves_extension(method) {
            let session = self.owing.get(ticket).and_then(|o| o.session.clone());
            let params = self.keep_later(params);
            return self.push_event(AgentEvent::Request {
                ticket,
                method: name,
                session,
                params,
            });
        }
        if let Err(invalid) = validate(method, params) {
            return self.refuse(out, ticket, invalid.code(), &invalid);
        }
        let mut session_buf = [0u8; SESSION_ID_MAX];
        let session = params
            .and_then(|p| p.get_field("sessionId"))
            .and_then(|v| v.as_str())
            .map(|s| text_of(s, &mut session_buf).unwrap_or(s.raw()));
        let mut session_copy = heapless::String::<SESSION_ID_MAX>::new();
        let _ = session_copy.push_str(session.unwrap_or(""));
        let session = session_copy.as_str();
        let peer = ReqRef::Peer(ticket);
        match method {
            // Routed to `on_initialize` before registration; kept so every method is answered.
            "initialize" => {
                let config = self.config.clone();
                let terminal = self.handshake.peer().contains(Capabilities::AUTH_TERMINAL);
                self.grant(out, ticket, &InitializeResult(&config, terminal))
            }
            "session/new" => {
                if let Err(refused) = check_mcp(method, f, mcp_kinds(params)) {
                    let e = InvalidParams(refused);
                    return self.refuse(out, ticket, ErrorCode::INVALID_PARAMS, &e);
                }
                match self
                    .sessions
                    .handle(now, SessionInput::NewStarted { req: peer })
                {
                    Ok(SessionOutput::Reject(rejection)) => {
                        self.refuse(out, ticket, rejection.code(), &rejection)
                    }
                    _ => {
                        let params = self.keep_later(params);
                        self.push_event(AgentEvent::NewSession { ticket, params })
                    }
                }
            }
            "session/load" | "session/resume" => {
                if let Err(refused) = check_mcp(method, f, mcp_kinds(params)) {
                    let e = InvalidParams(refused);
                    return self.refuse(out, ticket, ErrorCode::INVALID_PARAMS, &e);
                }
                match self.sessions.handle(
                    now,
                    SessionInput::LoadStarted {
                        id: session,
                        req: peer,
                    },
                ) {
                    Ok(SessionOutput::Reject(rejection)) => {
                        self.refuse(out, ticket, rejection.code(), &rejection)
                    }
                    Ok(_) => {
                        if let Some(id) = SessionId::new(session) {
                            let params = self.keep_later(params);
                            self.push_event(AgentEvent::LoadSession {
                                ticket,
                                session: id,
                                resume: method == "session/resume",
                                params,
                            });
                        }
                    }
                    Err(_) => {}
                }
            }
            "session/prompt" => {
                let types = params
                    .and_then(|p| p.get_field("prompt"))
                    .into_iter()
                    .flat_map(|p| p.elements())
                    .map(|b| {
                        b.get_field("type")
                            .and_then(|t| t.as_str())
                            .and_then(|t| t.as_plain())
                            .unwrap_or("")
                    });
                if let Err(refused) = check_blocks(f, types) {
                    let e = InvalidParams(refused);
                    return self.refuse(out, ticket, ErrorCode::INVALID_PARAMS, &e);
                }
                let handle = self.keep_later(params);
                self.start_turn(now, ticket, session, out, |session| AgentEvent::Prompt {
                    ticket,
                    session,
                    params: handle,
                });
            }
            "session/cancel" => {
                self.on_cancel(now, session, CancelVia::PeerRequest, Some(ticket), out)
            }
            "session/set_mode" | "session/set_config_option" | "_agentao.cn/set_model" => {
                // R-SESSION-3: Agentao's common session gate before the method's own checks.
                match self.sessions.get(session) {
                    None => {
                        let rejection = Rejection::UnknownSession { session };
                        return self.refuse(out, ticket, rejection.code(), &rejection);
                    }
                    Some(SessionState::Active { .. }) => {}
                    Some(_) => {
                        let rejection = Rejection::SessionNotActive { session };
                        return self.refuse(out, ticket, rejection.code(), &rejection);
                    }
                }
                let mut value_buf = [0u8; 256];
                let mut value = None;
                if method == "session/set_config_option" {
                    let mut config_buf = [0u8; 64];
                    let config = params
                        .and_then(|p| p.get_field("configId"))
                        .and_then(|v| v.as_str())
                        .map(|s| text_of(s, &mut config_buf).unwrap_or(s.raw()))
                        .unwrap_or("");
                    // R-CONFIG-1 (Agentao's steps 3 and 4).
                    if config != "model" {
                        let e = UnknownConfigId(config);
                        return self.refuse(out, ticket, ErrorCode::INVALID_REQUEST, &e);
                    }
                    match params
                        .and_then(|p| p.get_field("value"))
                        .and_then(|v| v.as_str())
                    {
                        Some(s) => value = text_of(s, &mut value_buf),
                        None => {
                            let e = InvalidParams(
                                "session/set_config_option.value must be a non-empty string",
                            );
                            return self.refuse(out, ticket, ErrorCode::INVALID_PARAMS, &e);
                        }
                    }
                }
                match self.sessions.handle(
                    now,
                    SessionInput::Configure {
                        id: session,
                        method,
                        actor: Actor::Peer,
                    },
                ) {
                    Ok(SessionOutput::Reject(rejection)) => {
                        self.refuse(out, ticket, rejection.code(), &rejection)
                    }
                    _ => {
                        // R-CONFIG-1 (Agentao's step 6): `provider/model` needs both parts.
                        if let Some((provider, model)) = value.and_then(|v| v.split_once('/'))
                            && (provider.trim().is_empty() || model.trim().is_empty())
                        {
                            let e = InvalidParams(
                                "session/set_config_option.value 'provider/model' must have a non-empty provider and model",
                            );
                            return self.refuse(out, ticket, ErrorCode::INVALID_PARAMS, &e);
                        }
                        let params = self.keep_later(params);
                        self.push_event(AgentEvent::Request {
                            ticket,
                            method: name,
                            session: SessionId::new(session),
                            params,
                        })
                    }
                }
            }
            "authenticate" => {
                let mut id_buf = [0u8; super::AUTH_ID_MAX];
                let raw = params
                    .and_then(|p| p.get_field("methodId"))
                    .and_then(|v| v.as_str());
                let id = raw.and_then(|s| text_of(s, &mut id_buf));
                let terminal = self.handshake.peer().contains(Capabilities::AUTH_TERMINAL);
                // R-AUTH-4: an `agent` method of ours; a `terminal` one is never passed here.
                let offered = id.and_then(|id| self.config.auth_methods.find(id));
                let method_id = match offered {
                    Some(m) if m.kind == super::AuthKind::Agent => {
                        heapless::String::try_from(m.id).unwrap_or_default()
                    }
                    found => {
                        let e = AuthIdRefused {
                            id: id.unwrap_or(raw.map_or("", |r| r.raw())),
                            terminal: found.is_some() && terminal,
                        };
                        return self.refuse(out, ticket, ErrorCode::INVALID_PARAMS, &e);
                    }
                };
                if self.owe_auth(out, ticket, true) {
                    let params = self.keep_later(params);
                    self.push_event(AgentEvent::Authenticate {
                        ticket,
                        method_id,
                        params,
                    });
                }
            }
            "logout" => {
                if self.owe_auth(out, ticket, false) {
                    let params = self.keep_later(params);
                    self.push_event(AgentEvent::Logout { ticket, params });
                }
            }
            "session/close" => {
                if self.sessions.get(session).is_none() {
                    let rejection = Rejection::UnknownSession { session };
                    return self.refuse(out, ticket, rejection.code(), &rejection);
                }
                let _ = self.close_session(now, session, out);
                let params = self.keep_later(params);
                self.push_event(AgentEvent::Request {
                    ticket,
                    method: name,
                    session: SessionId::new(session),
                    params,
                });
            }
            _ => {
                let params_handle = self.keep_later(params);
                self.push_event(AgentEvent::Request {
                    ticket,
                    method: name,
                    session: SessionId::new(session).filter(|s| !s.as_str().is_empty()),
                    params: params_handle,
                });
            }
        }
    }
}

/// `authenticate` naming no `agent` method of ours (R-AUTH-4). The id is echoed decoded (as
/// the raw JSON string text when it is too long to decode here).
struct AuthIdRefused<'a> {
    id: &'a str,
    /// It names a `terminal` method the client was offered.
    terminal: bool,
}

impl fmt::Display for AuthIdRefused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terminal {
            write!(
                f,
                "Invalid params: authenticate.methodId '{}' is a terminal auth method: the client runs it, it is not passed to authenticate",
                self.id
            )
        } else {
            write!(
                f,
                "Invalid params: authenticate.methodId '{}' is not one of the advertised authMethods",
                self.id
            )
        }
    }
}

impl<B: Buffers> Core<B> {
    /// Remembers an `authenticate` (`login`) or `logout` request handed over, so its
    /// successful answer flips the authenticated state; refuses it `-32603` when too many
    /// are open (R-RPC-6). Rows of requests settled otherwise (cancel, EOF) are dropped here.
    fn owe_auth(&mut self, out: &mut Outbox<B::Output>, ticket: Ticket, login: bool) -> bool {
        let owing = &self.owing;
        self.auth_owed.retain(|(t, _)| owing.get(*t).is_some());
        if self.auth_owed.push((ticket, login)).is_err() {
            let rejection = crate::machine::Rejection::TooManyRequests {
                limit: AUTH_OWED_MAX,
            };
            self.refuse(out, ticket, rejection.code(), &rejection);
            return false;
        }
        true
    }

    /// One turn per session (R-TURN-2): start it, or refuse the prompt.
    fn start_turn(
        &mut self,
        now: Instant,
        ticket: Ticket,
        session: &str,
        out: &mut Outbox<B::Output>,
        event: impl FnOnce(SessionId) -> AgentEvent,
    ) {
        match self.sessions.handle(
            now,
            SessionInput::Prompt {
                id: session,
                req: ReqRef::Peer(ticket),
            },
        ) {
            Ok(SessionOutput::TurnStarted { .. }) => {
                self.forget_turn(session);
                if let Some(id) = SessionId::new(session) {
                    self.push_event(event(id));
                }
            }
            Ok(SessionOutput::Reject(rejection)) => {
                self.refuse(out, ticket, rejection.code(), &rejection)
            }
            _ => {
                let rejection = crate::machine::Rejection::UnknownSession { session };
                self.refuse(out, ticket, rejection.code(), &rejection)
            }
        }
    }
}
