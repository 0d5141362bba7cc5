//! The agent's [`Driver`]: turns acp-core's [`AgentEvent`]s into calls of the [`Agent`]'s
//! methods (futures run inside the pump) and their results into acp-core's commands.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use acp_core::conn::agent::ResponseError;
use acp_core::prelude::{AgentEvent, ErrorCode, PermissionDecision, RequestId, Ticket};
use acp_core::schema::{
    ClientResponse, CloseSessionResponse, ListSessionsRequest, LoadSessionRequest,
    NewSessionRequest, PromptRequest, ResumeSessionRequest, SetSessionConfigOptionRequest,
    SetSessionModeRequest,
};
use futures_util::FutureExt;
use futures_util::future::{AbortHandle, Abortable};
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde::de::DeserializeOwned;

use super::turn::{History, Turn, TurnFlag};
use super::{Agent, AgentConn};
use crate::Error;
use crate::pump::{Driver, Shared};

/// How a request of ours was settled.
pub(crate) enum Reply {
    Permission(PermissionDecision),
    AskUser { text: String, answered: bool },
    Response(Result<ClientResponse, ResponseError>),
}

#[derive(Default)]
struct Slot {
    reply: Option<Reply>,
    waker: Option<Waker>,
}

/// What the driver and the handlers' contexts share.
pub(crate) struct AgentState {
    pub(crate) shared: Rc<Shared<AgentConn>>,
    /// Requests of ours being waited for.
    slots: RefCell<HashMap<RequestId, Slot>>,
    /// Running turns, by session.
    turns: RefCell<HashMap<String, Rc<TurnFlag>>>,
    /// Handed-over requests that a `$/cancel_request` stops.
    aborts: RefCell<HashMap<Ticket, AbortHandle>>,
}

impl AgentState {
    /// Registers a wait for request `id`'s settlement.
    pub(crate) fn wait(self: &Rc<Self>, id: RequestId) -> Wait {
        self.slots.borrow_mut().insert(id, Slot::default());
        Wait {
            state: self.clone(),
            id,
        }
    }

    fn settle(&self, id: RequestId, reply: Reply) {
        // A settlement nobody waits for (the waiting handler was dropped) is dropped.
        if let Some(slot) = self.slots.borrow_mut().get_mut(&id) {
            slot.reply = Some(reply);
            if let Some(waker) = slot.waker.take() {
                waker.wake();
            }
        }
    }
}

/// The settlement of one request of ours.
pub(crate) struct Wait {
    state: Rc<AgentState>,
    id: RequestId,
}

impl Future for Wait {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        let mut slots = self.state.slots.borrow_mut();
        let slot = slots.entry(self.id).or_default();
        match slot.reply.take() {
            Some(reply) => Poll::Ready(reply),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        self.state.slots.borrow_mut().remove(&self.id);
    }
}

type Task = Pin<Box<dyn Future<Output = ()>>>;

pub(crate) struct AgentDriver<A> {
    agent: Rc<A>,
    state: Rc<AgentState>,
    tasks: FuturesUnordered<Task>,
    sessions: u64,
}

impl<A: Agent> AgentDriver<A> {
    pub(crate) fn new(agent: Rc<A>, shared: Rc<Shared<AgentConn>>) -> Self {
        Self {
            agent,
            state: Rc::new(AgentState {
                shared,
                slots: RefCell::default(),
                turns: RefCell::default(),
                aborts: RefCell::default(),
            }),
            tasks: FuturesUnordered::new(),
            sessions: 0,
        }
    }

    /// A session id the connection does not know.
    fn fresh_id(&mut self, conn: &AgentConn) -> String {
        loop {
            self.sessions += 1;
            let id = format!("session-{}", self.sessions);
            if conn.session_state(&id).is_none() {
                return id;
            }
        }
    }

    /// Runs a handler for request `ticket`: a `$/cancel_request` drops it, a panic answers
    /// `-32603`.
    fn spawn_request(
        &mut self,
        ticket: Ticket,
        work: impl Future<Output = Result<Answer, Error>> + 'static,
    ) {
        let state = self.state.clone();
        let (abort, registration) = AbortHandle::new_pair();
        state.aborts.borrow_mut().insert(ticket, abort);
        let task = Abortable::new(AssertUnwindSafe(work).catch_unwind(), registration);
        self.tasks.push(Box::pin(async move {
            let outcome = task.await;
            state.aborts.borrow_mut().remove(&ticket);
            // Aborted: acp-core has answered `-32800` already.
            let Ok(outcome) = outcome else { return };
            let outcome = outcome.unwrap_or_else(|panic| {
                Err(Error::internal(format!(
                    "handler panicked: {}",
                    panic_message(&*panic)
                )))
            });
            answer(&state, ticket, outcome).await;
        }));
    }

    fn spawn(&mut self, work: impl Future<Output = ()> + 'static) {
        self.tasks
            .push(Box::pin(AssertUnwindSafe(work).catch_unwind().map(drop)));
    }

    fn on_request(&mut self, ticket: Ticket, method: &str, params: Option<&str>, session: String) {
        let agent = self.agent.clone();
        match method {
            "session/set_mode" => match decode::<SetSessionModeRequest>(params) {
                Ok(request) => self.spawn_request(ticket, async move {
                    let mode = request.mode_id;
                    agent.set_mode(session, mode.clone()).await?;
                    Ok(Answer::Mode(mode))
                }),
                Err(error) => self.refuse(ticket, error),
            },
            "session/set_config_option" => match decode::<SetSessionConfigOptionRequest>(params) {
                Ok(request) => self.spawn_request(ticket, async move {
                    let response = agent.set_config_option(request).await?;
                    Ok(Answer::Value(to_value(&response)?))
                }),
                Err(error) => self.refuse(ticket, error),
            },
            "session/list" => match decode::<ListSessionsRequest>(params) {
                Ok(request) => self.spawn_request(ticket, async move {
                    let response = agent.list_sessions(request).await?;
                    Ok(Answer::Value(to_value(&response)?))
                }),
                Err(error) => self.refuse(ticket, error),
            },
            "session/close" => self.spawn_request(ticket, async move {
                agent.close_session(session).await?;
                Ok(Answer::Value(to_value(&CloseSessionResponse::default())?))
            }),
            _ => {
                let value = match params.map(serde_json::from_str::<serde_json::Value>) {
                    Some(Ok(value)) => value,
                    _ => serde_json::Value::Object(Default::default()),
                };
                let method = method.to_owned();
                self.spawn_request(ticket, async move {
                    Ok(Answer::Value(agent.ext_method(method, value).await?))
                });
            }
        }
    }

    /// Answers `ticket` with `error` at once (params acp-core let through that the typed
    /// request cannot read).
    fn refuse(&mut self, ticket: Ticket, error: Error) {
        let state = self.state.clone();
        self.tasks.push(Box::pin(
            async move { answer(&state, ticket, Err(error)).await },
        ));
    }
}

/// The answer a request handler produced.
enum Answer {
    /// A result, sent as it is (`respond`).
    Value(serde_json::Value),
    /// `session/new`'s result.
    New(acp_core::schema::NewSessionResponse),
    /// `session/load`'s result.
    Load(acp_core::schema::LoadSessionResponse),
    /// `session/load` of a session the agent does not have: acp-core's answer.
    LoadNotFound,
    /// `session/set_mode` accepted: acp-core sends the mode update and the answer.
    Mode(String),
}

/// Sends the answer of `ticket`, waiting for room. Refusals are dropped: the request was
/// answered by acp-core meanwhile (cancelled, closed, EOF).
async fn answer(state: &AgentState, ticket: Ticket, outcome: Result<Answer, Error>) {
    let _ = state
        .shared
        .with_room(|c| match &outcome {
            Ok(Answer::Value(value)) => c.respond(ticket, value),
            Ok(Answer::New(response)) => c.accept_new_session(ticket, response),
            Ok(Answer::Load(response)) => c.respond(ticket, response),
            Ok(Answer::Mode(mode)) => c.accept_mode(ticket, mode),
            Ok(Answer::LoadNotFound) => c.load_not_found(ticket),
            // acp-core words a failed request `Internal error: <message>` (R-RPC-10).
            Err(error) if error.code == ErrorCode::INTERNAL_ERROR => {
                c.fail_request(ticket, &error.message)
            }
            Err(error) => c.respond_error(ticket, error.code, &error.message),
        })
        .await;
}

fn decode<T: DeserializeOwned>(params: Option<&str>) -> Result<T, Error> {
    serde_json::from_str(params.unwrap_or("{}"))
        .map_err(|e| Error::invalid_params(format!("Invalid params: {e}")))
}

fn to_value<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, Error> {
    serde_json::to_value(value).map_err(|e| Error::internal(e.to_string()))
}

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    if let Some(text) = panic.downcast_ref::<&str>() {
        text
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text
    } else {
        "(no message)"
    }
}

impl<A: Agent> Driver<AgentConn> for AgentDriver<A> {
    fn on_event(&mut self, shared: &Rc<Shared<AgentConn>>, event: AgentEvent) {
        let conn = shared.borrow();
        let agent = self.agent.clone();
        match event {
            AgentEvent::Initialized { params, .. } => {
                if let Some(request) = conn.initialize_request(params) {
                    drop(conn);
                    self.spawn(async move { agent.initialize(request).await });
                }
            }
            AgentEvent::NewSession { ticket, params } => {
                let request = decode::<NewSessionRequest>(conn.params(params));
                let fresh = self.fresh_id(&conn);
                drop(conn);
                match request {
                    Ok(request) => self.spawn_request(ticket, async move {
                        Ok(Answer::New(agent.new_session(request, fresh).await?))
                    }),
                    Err(error) => self.refuse(ticket, error),
                }
            }
            AgentEvent::LoadSession {
                ticket,
                session,
                resume: false,
                params,
            } => {
                let request = decode::<LoadSessionRequest>(conn.params(params));
                drop(conn);
                let history = History {
                    state: self.state.clone(),
                    session: session.as_str().to_owned(),
                };
                match request {
                    Ok(request) => self.spawn_request(ticket, async move {
                        match agent.load_session(request, history).await {
                            Ok(response) => Ok(Answer::Load(response)),
                            Err(error) if error.not_found => Ok(Answer::LoadNotFound),
                            Err(error) => Err(error),
                        }
                    }),
                    Err(error) => self.refuse(ticket, error),
                }
            }
            AgentEvent::LoadSession {
                ticket,
                resume: true,
                params,
                ..
            } => {
                let request = decode::<ResumeSessionRequest>(conn.params(params));
                drop(conn);
                match request {
                    Ok(request) => self.spawn_request(ticket, async move {
                        Ok(Answer::Load(agent.resume_session(request).await?))
                    }),
                    Err(error) => self.refuse(ticket, error),
                }
            }
            AgentEvent::Prompt {
                session, params, ..
            } => {
                let request = decode::<PromptRequest>(conn.params(params));
                drop(conn);
                let session = session.as_str().to_owned();
                let flag = Rc::new(TurnFlag::default());
                self.state
                    .turns
                    .borrow_mut()
                    .insert(session.clone(), flag.clone());
                let turn = Turn {
                    state: self.state.clone(),
                    session: session.clone(),
                    flag: flag.clone(),
                };
                let state = self.state.clone();
                self.tasks.push(Box::pin(async move {
                    let outcome = match request {
                        Ok(request) => AssertUnwindSafe(agent.prompt(request, turn))
                            .catch_unwind()
                            .await
                            .unwrap_or_else(|panic| {
                                Err(Error::internal(format!(
                                    "handler panicked: {}",
                                    panic_message(&*panic)
                                )))
                            }),
                        Err(error) => Err(error),
                    };
                    let _ = state
                        .shared
                        .with_room(|c| match &outcome {
                            Ok(stop) => c.end_turn(&session, *stop).map(drop),
                            Err(e) if e.code == ErrorCode::INTERNAL_ERROR => {
                                c.fail_turn(&session, &e.message).map(drop)
                            }
                            Err(e) => c.fail_turn_with(&session, e.code, &e.message).map(drop),
                        })
                        .await;
                    let mut turns = state.turns.borrow_mut();
                    if turns.get(&session).is_some_and(|f| Rc::ptr_eq(f, &flag)) {
                        turns.remove(&session);
                    }
                }));
            }
            AgentEvent::Cancelled { session } => {
                drop(conn);
                let flag = self.state.turns.borrow().get(session.as_str()).cloned();
                if let Some(flag) = flag {
                    flag.cancel();
                }
                let session = session.as_str().to_owned();
                self.spawn(async move { agent.cancel(session).await });
            }
            AgentEvent::PermissionResolved {
                request, decision, ..
            } => self.state.settle(request, Reply::Permission(decision)),
            AgentEvent::AskUserAnswered {
                request,
                text,
                answered,
                ..
            } => self.state.settle(
                request,
                Reply::AskUser {
                    text: text.as_str().to_owned(),
                    answered,
                },
            ),
            AgentEvent::Response { request, result } => {
                self.state.settle(request, Reply::Response(result));
            }
            AgentEvent::Request {
                ticket,
                method,
                session,
                params,
            } => {
                let params = conn.params(params).map(str::to_owned);
                let session = session.map(|s| s.as_str().to_owned()).unwrap_or_default();
                drop(conn);
                self.on_request(ticket, &method, params.as_deref(), session);
            }
            AgentEvent::RequestCancelled { ticket } => {
                if let Some(abort) = self.state.aborts.borrow_mut().remove(&ticket) {
                    abort.abort();
                }
            }
            // Violations were answered by acp-core; SaveSession and Closed need nothing here.
            _ => {}
        }
    }

    fn poll_work(&mut self, cx: &mut Context<'_>) {
        while let Poll::Ready(Some(())) = self.tasks.poll_next_unpin(cx) {}
    }
}
