//! The client side's [`Driver`]: acp-core's [`ClientEvent`]s become answers for the
//! handle's waiting calls, updates in a turn's queue, and handler futures for the agent's
//! requests. Every protocol decision (what to answer by itself, what a cancel settles, how
//! EOF ends things) has been taken by acp-core before an event gets here.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::task::Context;

use acp_core::conn::client::{IncomingRequest, TurnOutcome, UpdateContext};
use acp_core::prelude::{
    AskUserAnswer, ClientEvent, PermissionAnswer, RequestId, Ticket, UsageError,
};
use acp_core::schema::{AgentRequest, RequestPermissionOutcome};
use futures_util::FutureExt;

use super::error::ClientError;
use super::handler::{Handlers, Reply, ReplyFuture, TerminalCall};
use super::state::{Answer, Core, Inner};
use super::turn::Update;
use crate::pump::{Driver, Shared};

/// Updates outside a running turn (between turns, a `session/load` replay, flagged ones).
pub(crate) type OnUpdate = Box<dyn FnMut(Update)>;

/// See the module docs.
pub(crate) struct ClientDriver {
    inner: Rc<Inner>,
    handlers: Handlers,
    on_update: Option<OnUpdate>,
    /// The agent's requests being answered by a handler, by ticket.
    work: Vec<(Ticket, ReplyFuture)>,
    /// Answers a full outbox refused (`WouldBlock`): sent once bytes are written.
    unsent: VecDeque<(Ticket, Reply)>,
    /// Events held back, in order, behind an update whose turn's queue is full. The pump
    /// takes no more events meanwhile ([`Driver::is_ready`]), so this holds one.
    held: VecDeque<ClientEvent>,
}

impl ClientDriver {
    pub(crate) fn new(inner: Rc<Inner>, handlers: Handlers, on_update: Option<OnUpdate>) -> Self {
        Self {
            inner,
            handlers,
            on_update,
            work: Vec::new(),
            unsent: VecDeque::new(),
            held: VecDeque::new(),
        }
    }

    fn dispatch(&mut self, event: ClientEvent) {
        match event {
            ClientEvent::Initialized {
                request,
                agent,
                features,
                result,
                decoded,
            } => self.answer(
                request,
                Answer::Initialized {
                    capabilities: agent,
                    methods: features,
                    result,
                    decoded: decoded.map(Box::new),
                },
            ),
            ClientEvent::HandshakeFailed { request, error } => {
                self.answer(request, Answer::Failed(ClientError::Handshake(error)));
            }
            ClientEvent::SessionOpened {
                request, result, ..
            }
            | ClientEvent::Answered {
                request, result, ..
            } => self.answer(request, Answer::Result(result)),
            ClientEvent::Failed {
                request, failure, ..
            } => self.answer(request, Answer::Refused(failure)),
            ClientEvent::Update {
                session,
                context,
                kind,
                params,
                decoded,
            } => {
                let update = Update {
                    session: session.as_str().to_owned(),
                    context,
                    kind: kind.as_str().to_owned(),
                    json: params.as_json().unwrap_or_default().to_owned(),
                    decoded,
                };
                self.update(update);
            }
            ClientEvent::TurnEnded {
                session,
                request,
                outcome,
            } => self.turn_ended(session.as_str(), request, outcome),
            ClientEvent::Request(request) => self.request(request),
            ClientEvent::RequestSettled { ticket, .. } => {
                // acp-core answered it (cancel, `$/cancel_request`, EOF): the handler's
                // future is dropped, and with it whatever it was asking.
                self.work.retain(|(t, _)| *t != ticket);
                self.unsent.retain(|(t, _)| *t != ticket);
            }
            ClientEvent::Closed => self.inner.state.borrow_mut().close(),
            // Notifications other than updates, and the agent's protocol violations (already
            // answered by acp-core), need nothing from a client of this layer.
            _ => {}
        }
    }

    fn answer(&self, request: RequestId, answer: Answer) {
        self.inner.state.borrow_mut().answer(request, answer);
    }

    /// Routes an update: into its running turn's queue, else to `on_update`.
    fn update(&mut self, update: Update) {
        let mut state = self.inner.state.borrow_mut();
        let turn = match update.context {
            UpdateContext::Turn => state.active.get(&update.session).copied(),
            _ => None,
        };
        if let Some(slot) = turn.and_then(|request| state.turns.get_mut(&request)) {
            if !slot.detached {
                slot.queue.push_back(update);
                if let Some(waker) = slot.waker.take() {
                    waker.wake();
                }
            }
            return;
        }
        drop(state);
        if let Some(on_update) = &mut self.on_update {
            on_update(update);
        }
    }

    /// Whether `event` must wait: an update for a turn whose queue is full (R-TURN-8).
    fn must_wait(&self, event: &ClientEvent) -> bool {
        let ClientEvent::Update {
            session,
            context: UpdateContext::Turn,
            ..
        } = event
        else {
            return false;
        };
        let state = self.inner.state.borrow();
        state
            .active
            .get(session.as_str())
            .and_then(|request| state.turns.get(request))
            .is_some_and(|slot| !slot.detached && slot.queue.len() >= state.turn_buffer)
    }

    fn turn_ended(&mut self, session: &str, request: RequestId, outcome: TurnOutcome) {
        let end = match outcome {
            TurnOutcome::Stopped { stop, .. } => Ok(stop),
            TurnOutcome::Failed(failure) => Err(ClientError::failed("session/prompt", failure)),
            TurnOutcome::TimedOut => Err(ClientError::TurnTimedOut),
            TurnOutcome::Disconnected => Err(ClientError::TurnDisconnected),
        };
        let mut state = self.inner.state.borrow_mut();
        if state.active.get(session) == Some(&request) {
            state.active.remove(session);
        }
        let detached = match state.turns.get_mut(&request) {
            Some(slot) => {
                slot.end = Some(end);
                if let Some(waker) = slot.waker.take() {
                    waker.wake();
                }
                slot.detached
            }
            None => false,
        };
        if detached {
            state.turns.remove(&request);
        }
    }

    /// An agent request acp-core hands over: it is one the application serves (acp-core
    /// answered the others `-32601` and never shows them), so its handler is there.
    fn request(&mut self, request: IncomingRequest) {
        let h = &self.handlers;
        let future = match request.decoded {
            Some(AgentRequest::RequestPermission(r)) => Some(h.permissions.clone().call(r)),
            Some(AgentRequest::ReadTextFile(r)) => h.read.clone().map(|h| h.call(r)),
            Some(AgentRequest::WriteTextFile(r)) => h.write.clone().map(|h| h.call(r)),
            Some(AgentRequest::AskUser(r)) => h.ask_user.clone().map(|h| h.call(r)),
            Some(AgentRequest::CreateTerminal(r)) => terminal(h, TerminalCall::Create(r)),
            Some(AgentRequest::TerminalOutput(r)) => terminal(h, TerminalCall::Output(r)),
            Some(AgentRequest::WaitForTerminalExit(r)) => terminal(h, TerminalCall::WaitForExit(r)),
            Some(AgentRequest::KillTerminal(r)) => terminal(h, TerminalCall::Kill(r)),
            Some(AgentRequest::ReleaseTerminal(r)) => terminal(h, TerminalCall::Release(r)),
            _ => None,
        };
        match future {
            Some(future) => {
                // A handler that panics answers `-32603` and the connection goes on, as on
                // the agent side: one bad request does not take the others down.
                let guarded = AssertUnwindSafe(future).catch_unwind().map(|done| {
                    done.unwrap_or_else(|panic| {
                        let why = (panic.downcast_ref::<&str>().copied())
                            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
                            .unwrap_or("(no message)");
                        let message = format!("Internal error: handler panicked: {why}");
                        Reply::Error(crate::Error::internal(message))
                    })
                });
                self.work.push((request.ticket, Box::pin(guarded)));
            }
            // Not reachable with the capabilities the builder advertises; answered anyway so
            // the agent never waits (R-RPC-1).
            None => self.reply(
                request.ticket,
                Reply::Error(crate::Error::method_not_found()),
            ),
        }
    }

    /// Hands a handler's answer to acp-core; a full outbox keeps it for later.
    fn reply(&mut self, ticket: Ticket, reply: Reply) {
        let shared: &Shared<Core> = &self.inner.shared;
        let now = shared.now();
        let sent = shared.with(|conn| match &reply {
            Reply::Permission(outcome) => {
                let answer = match outcome {
                    RequestPermissionOutcome::Selected(s) => {
                        PermissionAnswer::Selected(&s.option_id)
                    }
                    _ => PermissionAnswer::Cancelled,
                };
                conn.respond_permission(now, ticket, answer)
            }
            Reply::AskUser(text) => {
                let answer = match text {
                    Some(text) => AskUserAnswer::Answered(text),
                    None => AskUserAnswer::Cancelled,
                };
                conn.respond_ask_user(now, ticket, answer)
            }
            Reply::Result(value) => conn.respond(now, ticket, value),
            Reply::Error(e) => conn.respond_error(now, ticket, e.code, &e.message),
        });
        if sent == Err(UsageError::WouldBlock) {
            self.unsent.push_back((ticket, reply));
        }
        // Anything else (already settled by a cancel or EOF, closed) leaves nothing owed.
    }
}

fn terminal(h: &Handlers, call: TerminalCall) -> Option<ReplyFuture> {
    h.terminals.clone().map(|t| t.call(call))
}

impl Driver<Core> for ClientDriver {
    fn on_event(&mut self, _shared: &Rc<Shared<Core>>, event: ClientEvent) {
        if !self.held.is_empty() || self.must_wait(&event) {
            self.held.push_back(event);
            self.inner.state.borrow_mut().stalled = true;
            return;
        }
        self.dispatch(event);
    }

    fn poll_work(&mut self, cx: &mut Context<'_>) {
        while let Some(event) = self.held.front() {
            if self.must_wait(event) {
                break;
            }
            if let Some(event) = self.held.pop_front() {
                self.dispatch(event);
            }
        }
        if self.held.is_empty() {
            self.inner.state.borrow_mut().stalled = false;
        }
        for _ in 0..self.unsent.len() {
            if let Some((ticket, reply)) = self.unsent.pop_front() {
                self.reply(ticket, reply);
            }
        }
        let mut i = 0;
        while i < self.work.len() {
            match self.work[i].1.as_mut().poll(cx) {
                std::task::Poll::Ready(reply) => {
                    let (ticket, _) = self.work.swap_remove(i);
                    self.reply(ticket, reply);
                }
                std::task::Poll::Pending => i += 1,
            }
        }
    }

    fn is_ready(&self) -> bool {
        self.held.is_empty()
    }
}

impl Drop for ClientDriver {
    /// The connection future ended or was dropped: every call still waiting fails with
    /// [`ClientError::Closed`] instead of waiting forever.
    fn drop(&mut self) {
        self.inner.state.borrow_mut().close();
    }
}
