//! Lines from the agent: answers to our requests, the agent's requests (refused here when
//! unserved or invalid, handed over otherwise) and its notifications.

use core::fmt;

use super::{
    AgentMethod, AgentViolation, Buffers, ClientEvent, ClientMethod, Core, Failure, HandshakeError,
    IncomingRequest, Init, Payload, Text, TurnOutcome, UpdateContext, peek, reply_error,
};
use crate::conn::transport::{Incoming, Outbox};
use crate::machine::handshake::{HandshakeInput, HandshakeOutput};
use crate::machine::pending::{MethodKind, Received, ReplyKind, ResponseVerdict, Settled};
use crate::machine::session::{SessionInput, SessionOutput, SessionState};
use crate::machine::turn::StopReason;
use crate::machine::{PEER_ID_MAX, Rejection, ReqRef, RequestId};
use crate::wire::envelope::{Message, Notification, Outcome, Request, Response};
use crate::wire::{ErrorCode, Id, RawValue};

/// What the session table made of an answer to `session/new`, `load` or `resume`.
enum Opened {
    Yes,
    Gone,
    Refused,
}

/// `-32601` for a method the application does not serve.
struct MethodNotFound<'a>(&'a str);

impl fmt::Display for MethodNotFound<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Method not found: {}", self.0)
    }
}

/// `-32602` with the decoder's message, e.g. `Invalid params: fs/read_text_file.path is
/// required` (the prefix of every `-32602` text, R-RPC-10).
#[cfg(feature = "alloc")]
struct InvalidParams<'a>(&'a str);

#[cfg(feature = "alloc")]
impl fmt::Display for InvalidParams<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid params: {}", self.0)
    }
}

/// `-32602` for a request without a string `sessionId`.
struct MissingSession<'a>(&'a str);

impl fmt::Display for MissingSession<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid params: {}.sessionId must be a string", self.0)
    }
}

impl<S: Buffers> Core<S> {
    // ---- lines from the agent -----------------------------------------------------------

    pub(super) fn on_incoming(&mut self, incoming: Incoming<'_>, outbox: &mut Outbox<S::Output>) {
        match incoming {
            Incoming::Rejected(rejection) => self.violation(AgentViolation::RejectedLine {
                code: rejection.code,
            }),
            Incoming::Message(Message::Response(response)) => self.on_response(response),
            Incoming::Message(Message::Request(request)) => self.on_request(request, outbox),
            Incoming::Message(Message::Notification(notification)) => {
                self.on_notification(notification)
            }
        }
    }

    fn on_response(&mut self, response: Response<'_>) {
        let now = self.clock.latest();
        let answer = match response.outcome {
            Outcome::Result(_) => ReplyKind::Result,
            Outcome::Error(error) => ReplyKind::Error(error.code),
            Outcome::Malformed(_) => ReplyKind::Malformed,
        };
        match self
            .pending
            .handle_response(now, response.id.as_u64(), answer)
        {
            // R-ID-6: responses with unknown ids are reported, never answered.
            ResponseVerdict::Unknown => self.violation(AgentViolation::UnknownResponse),
            // R-HOST-2: a prompt we timed out was cancelled, and its answer is what R-CANCEL-3
            // asks of the agent: expected, so absorbed (the turn already ended `TimedOut`).
            ResponseVerdict::Late {
                id,
                kind: MethodKind::Prompt,
            } => {
                let _ = self.take_method(id);
            }
            ResponseVerdict::Late { id, .. } => {
                let _ = self.take_method(id);
                self.violation(AgentViolation::LateResponse { request: id });
            }
            ResponseVerdict::Settled(settled) => {
                let row = self.take_request(settled.id);
                let method = row.map_or(ClientMethod::Other, |r| r.method);
                let empty_result = row.is_some_and(|r| r.empty_result);
                let result = match response.outcome {
                    // R-RPC-5: some SDKs answer `null` where `{}` is meant.
                    Outcome::Result(result) if empty_result && result.is_null() => {
                        Ok(RawValue::EMPTY_OBJECT)
                    }
                    Outcome::Result(result) => Ok(result),
                    Outcome::Error(error) => Err(Failure::Error {
                        code: error.code,
                        message: Text::from_json(error.message),
                    }),
                    // R-RPC-4: still settles, as an error.
                    Outcome::Malformed(_) => Err(Failure::Malformed),
                };
                self.on_answer(settled, method, result);
            }
        }
    }

    fn on_answer(
        &mut self,
        settled: Settled,
        method: ClientMethod,
        result: Result<RawValue<'_>, Failure>,
    ) {
        let request = settled.id;
        let now = self.clock.latest();
        match method {
            ClientMethod::Initialize => self.on_initialize(request, result),
            ClientMethod::NewSession | ClientMethod::LoadSession | ClientMethod::ResumeSession => {
                let req = ReqRef::Ours(request);
                let opened = match (method, result) {
                    (_, Err(failure)) => Err(failure),
                    (ClientMethod::NewSession, Ok(r)) => r
                        .get_field("sessionId")
                        .and_then(|v| v.as_str())
                        .ok_or(Failure::BadResult)
                        .map(|id| (Some(id), r)),
                    (_, Ok(r)) => Ok((None, r)),
                };
                match opened {
                    Err(failure) => {
                        let _ = self.sessions.handle(now, SessionInput::OpenFailed { req });
                        self.push(ClientEvent::Failed {
                            request,
                            method,
                            failure,
                        });
                    }
                    Ok((named, r)) => {
                        let session = match named {
                            Some(id) => peek::session_id(id),
                            None => settled.session.clone(),
                        };
                        let out = session.as_ref().map(|sid| {
                            match self.sessions.handle(
                                now,
                                SessionInput::Opened {
                                    req,
                                    id: sid.as_str(),
                                },
                            ) {
                                Ok(SessionOutput::Opened) => Opened::Yes,
                                Ok(SessionOutput::Ignore) => Opened::Gone,
                                _ => Opened::Refused,
                            }
                        });
                        match (out, session) {
                            (Some(Opened::Yes), Some(session)) => {
                                self.push(ClientEvent::SessionOpened {
                                    request,
                                    method,
                                    session,
                                    result: Payload::new(r.get()),
                                });
                            }
                            // Gone already (EOF raced it): nothing to open.
                            (Some(Opened::Gone), _) => {}
                            _ => {
                                let _ = self.sessions.handle(now, SessionInput::OpenFailed { req });
                                self.violation(AgentViolation::BadSessionId);
                                self.push(ClientEvent::Failed {
                                    request,
                                    method,
                                    failure: Failure::BadResult,
                                });
                            }
                        }
                    }
                }
            }
            ClientMethod::Prompt => {
                let Some(session) = settled.session else {
                    return;
                };
                let prompt = ReqRef::Ours(request);
                let sid = session.as_str();
                let stop = result.as_ref().ok().map(|r| {
                    r.get_field("stopReason")
                        .and_then(|v| v.as_str())
                        .and_then(|s| StopReason::ALL.into_iter().find(|k| s.eq_str(k.as_str())))
                });
                let input = match stop {
                    Some(Some(stop)) => SessionInput::EndTurn {
                        id: sid,
                        prompt,
                        stop,
                    },
                    _ => SessionInput::FailTurn { id: sid, prompt },
                };
                let outcome = match self.sessions.handle(now, input) {
                    Ok(SessionOutput::TurnEnded {
                        stop, rewritten, ..
                    }) => TurnOutcome::Stopped { stop, rewritten },
                    Ok(SessionOutput::TurnFailed { .. }) => TurnOutcome::Failed(match result {
                        Err(failure) => failure,
                        Ok(_) => Failure::BadResult,
                    }),
                    // The turn was already settled (timed out, closed).
                    _ => return,
                };
                self.push(ClientEvent::TurnEnded {
                    session,
                    request,
                    outcome,
                });
            }
            _ => match result {
                Ok(r) => self.push(ClientEvent::Answered {
                    request,
                    method,
                    result: Payload::new(r.get()),
                }),
                Err(failure) => self.push(ClientEvent::Failed {
                    request,
                    method,
                    failure,
                }),
            },
        }
    }

    fn on_initialize(&mut self, request: RequestId, result: Result<RawValue<'_>, Failure>) {
        let outcome = match result {
            Err(failure) => Err(HandshakeError::Failed(failure)),
            Ok(r) => match r.get_field("protocolVersion").and_then(|v| v.as_i64()) {
                Some(1) => Ok(r),
                Some(other) => Err(HandshakeError::UnsupportedVersion(other)),
                None => Err(HandshakeError::MissingVersion),
            },
        };
        match outcome {
            Ok(r) => {
                let (agent, features) = peek::agent_capabilities(r);
                let _ = self.handshake.handle(HandshakeInput::InitializeAnswered {
                    protocol_version: 1,
                    capabilities: agent,
                });
                self.features = features;
                self.auth_methods_complete = self.auth_methods.read_result(r);
                self.init = Init::Ready;
                self.push(ClientEvent::Initialized {
                    request,
                    agent,
                    features,
                    result: Payload::new(r.get()),
                    #[cfg(feature = "alloc")]
                    decoded: crate::schema::decode_result("initialize", r.get()).ok(),
                });
            }
            Err(error) => {
                self.init = Init::Failed;
                self.push(ClientEvent::HandshakeFailed { request, error });
            }
        }
    }

    fn on_request(&mut self, request: Request<'_>, outbox: &mut Outbox<S::Output>) {
        let method = AgentMethod::KNOWN
            .into_iter()
            .find(|m| request.method.eq_str(m.name().unwrap_or_default()))
            .unwrap_or(AgentMethod::Other);
        let name = Text::from_json(request.method);
        let refuse =
            |core: &mut Self, outbox: &mut Outbox<S::Output>, code, text: &dyn fmt::Display| {
                reply_error(outbox, request.id, code, text);
                core.violation(AgentViolation::RequestRefused {
                    method: name.clone(),
                    code,
                });
            };
        // Seed appendix C: nothing is served before the handshake.
        if let HandshakeOutput::Reject(rejection) =
            self.handshake.handle(HandshakeInput::PeerRequest {
                method: name.as_str(),
            })
        {
            refuse(self, outbox, rejection.code(), &rejection);
            return;
        }
        // R-FS-2: unserved methods get -32601, never silence.
        if !self.serves(method) {
            refuse(
                self,
                outbox,
                ErrorCode::METHOD_NOT_FOUND,
                &MethodNotFound(name.as_str()),
            );
            return;
        }
        let session_field = request
            .params
            .and_then(|p| p.get_field("sessionId"))
            .and_then(|v| v.as_str());
        let session = match (method, session_field) {
            (AgentMethod::Other, field) => field.and_then(peek::session_id),
            (_, None) => {
                refuse(
                    self,
                    outbox,
                    ErrorCode::INVALID_PARAMS,
                    &MissingSession(name.as_str()),
                );
                return;
            }
            (_, Some(field)) => {
                let known =
                    peek::session_id(field).map(|sid| (self.sessions.get(sid.as_str()), sid));
                match known {
                    Some((Some(SessionState::Active { .. }), sid)) => Some(sid),
                    Some((Some(_), sid)) => {
                        let rejection = Rejection::SessionNotActive {
                            session: sid.as_str(),
                        };
                        refuse(self, outbox, rejection.code(), &rejection);
                        return;
                    }
                    _ => {
                        let text = Text::from_json(field);
                        let rejection = Rejection::UnknownSession {
                            session: text.as_str(),
                        };
                        refuse(self, outbox, rejection.code(), &rejection);
                        return;
                    }
                }
            }
        };
        #[cfg(feature = "alloc")]
        let decoded = match method {
            AgentMethod::Other => None,
            _ => match crate::schema::AgentRequest::decode(
                name.as_str(),
                request.params.map(|p| p.get()),
            ) {
                Ok(decoded) => Some(decoded),
                Err(error) => {
                    refuse(self, outbox, error.code(), &InvalidParams(error.message()));
                    return;
                }
            },
        };
        let mut raw = heapless::String::<{ PEER_ID_MAX + 2 }>::new();
        let raw_id = match request.id {
            Id::Int(digits) => Some(digits),
            Id::Str(s) => {
                let ok =
                    raw.push('"').is_ok() && raw.push_str(s.raw()).is_ok() && raw.push('"').is_ok();
                ok.then_some(raw.as_str())
            }
            Id::Null => None,
        };
        let received = match raw_id {
            Some(raw_id) => {
                self.owing
                    .receive(raw_id, method.kind(), session.as_ref().map(|s| s.as_str()))
            }
            None => Received::Reject(Rejection::IdTooLong),
        };
        let ticket = match received {
            Received::Owed(ticket) => ticket,
            Received::Reject(rejection) => {
                refuse(self, outbox, rejection.code(), &rejection);
                return;
            }
        };
        let cancelling = session
            .as_ref()
            .and_then(|s| self.sessions.get(s.as_str()))
            .and_then(|state| state.turn())
            .is_some_and(|turn| turn.is_cancelling());
        let id = self
            .owing
            .get(ticket)
            .map(|row| row.id.clone())
            .expect("a ticket just handed out is owed");
        self.push(ClientEvent::Request(IncomingRequest {
            ticket,
            id,
            method,
            name,
            session: session.clone(),
            params: request
                .params
                .map_or_else(Payload::none, |p| Payload::new(p.get())),
            #[cfg(feature = "alloc")]
            decoded,
        }));
        // Asked after we cancelled: answered `cancelled` at once, like the ones before.
        if cancelling && let Some(session) = session {
            self.owing.cancel_session(session.as_str());
        }
    }

    /// Whether the application answers `method` (permission requests always).
    fn serves(&self, method: AgentMethod) -> bool {
        let serves = self.config.serves;
        match method {
            AgentMethod::RequestPermission => true,
            AgentMethod::AskUser => serves.ask_user,
            AgentMethod::ReadTextFile => serves.fs_read,
            AgentMethod::WriteTextFile => serves.fs_write,
            AgentMethod::TerminalCreate
            | AgentMethod::TerminalOutput
            | AgentMethod::TerminalWaitForExit
            | AgentMethod::TerminalKill
            | AgentMethod::TerminalRelease => serves.terminal,
            AgentMethod::ElicitationCreate => serves.elicitation,
            AgentMethod::Other => serves.extension_methods,
        }
    }

    fn on_notification(&mut self, notification: Notification<'_>) {
        let params = notification.params;
        if notification.method.eq_str("session/update") {
            self.on_update(params);
        } else if notification.method.eq_str("$/cancel_request") {
            // R-CANCEL-4: the request is answered -32800 (next step).
            if let Some(id) = params.and_then(|p| p.get_field("requestId")) {
                let _ = self.owing.handle_cancel_request(id.get());
            }
        } else {
            self.push(ClientEvent::Notification {
                method: Text::from_json(notification.method),
                params: params.map_or_else(Payload::none, |p| Payload::new(p.get())),
            });
        }
    }

    fn on_update(&mut self, params: Option<RawValue<'_>>) {
        let session = params
            .and_then(|p| p.get_field("sessionId"))
            .and_then(|v| v.as_str())
            .and_then(peek::session_id);
        let kind = params
            .and_then(|p| peek::path(p, &["update", "sessionUpdate"]))
            .and_then(|v| v.as_str());
        let state = session.as_ref().and_then(|s| self.sessions.get(s.as_str()));
        let context = match state {
            None => UpdateContext::UnknownSession,
            Some(SessionState::Creating { .. }) => UpdateContext::Replay,
            Some(SessionState::Active { turn: Some(_) }) => UpdateContext::Turn,
            Some(SessionState::Active { turn: None }) => {
                if kind.is_some_and(peek::is_turn_content) {
                    UpdateContext::AfterTurn
                } else {
                    UpdateContext::Idle
                }
            }
            Some(SessionState::Closed) => UpdateContext::Closed,
        };
        self.push(ClientEvent::Update {
            session: session.unwrap_or_default(),
            context,
            kind: kind.map(Text::from_json).unwrap_or_default(),
            params: params.map_or_else(Payload::none, |p| Payload::new(p.get())),
            #[cfg(feature = "alloc")]
            decoded: crate::schema::decode_params("session/update", params.map(|p| p.get())),
        });
    }
}
