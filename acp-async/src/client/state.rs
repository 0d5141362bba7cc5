//! What the [`Client`](super::Client) handle and the connection's driver share: the
//! answers to our requests as they arrive, and each running turn's queue of updates.
//!
//! Single-threaded (`Rc`, `RefCell`), like the pump: the handle's futures and the driver run
//! in or beside the one connection future. No borrow is held across an `.await`.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::task::Waker;

use acp_core::conn::Growable;
use acp_core::conn::client::{AdvertisedMethods, Payload};
use acp_core::machine::handshake::Capabilities;
use acp_core::prelude::{ClientConnection, RequestId, StopReason};
use acp_core::schema::InitializeResponse;

use super::error::ClientError;
use super::turn::Update;
use crate::pump::Shared;

/// The client connection this layer drives: acp-core's, with growable storage.
pub(crate) type Core = ClientConnection<Growable>;

/// The handle's and the driver's common state.
pub(crate) struct Inner {
    pub(crate) shared: Rc<Shared<Core>>,
    pub(crate) state: RefCell<State>,
}

/// What the agent answered to one request of ours.
pub(crate) enum Answer {
    Initialized {
        capabilities: Capabilities,
        methods: AdvertisedMethods,
        result: Payload,
        decoded: Option<Box<InitializeResponse>>,
    },
    /// `session/new`, `session/load`, `session/resume`, or any other request's result.
    Result(Payload),
    /// The agent's error answer, or none in time: the caller names its method.
    Refused(acp_core::conn::client::Failure),
    Failed(ClientError),
}

#[derive(Default)]
struct Slot {
    answer: Option<Answer>,
    waker: Option<Waker>,
}

/// One running turn, as the driver fills it and the [`Turn`](super::Turn) empties it.
pub(crate) struct TurnSlot {
    pub(crate) queue: VecDeque<Update>,
    pub(crate) end: Option<Result<StopReason, ClientError>>,
    pub(crate) waker: Option<Waker>,
    /// The [`Turn`](super::Turn) was dropped: its updates are discarded.
    pub(crate) detached: bool,
}

#[derive(Default)]
pub(crate) struct State {
    answers: HashMap<RequestId, Slot>,
    pub(crate) turns: HashMap<RequestId, TurnSlot>,
    /// The running turn of each session, by `session/prompt` request.
    pub(crate) active: HashMap<String, RequestId>,
    /// The most updates a turn's queue holds before the driver stops taking events.
    pub(crate) turn_buffer: usize,
    /// The driver holds an event back because a turn's queue is full: a consumer that
    /// takes an update wakes the pump.
    pub(crate) stalled: bool,
    /// The driver is gone (the connection future ended or was dropped): nothing more
    /// arrives.
    pub(crate) gone: bool,
}

impl State {
    /// Nothing pending; turns hold at most `turn_buffer` updates.
    pub(crate) fn new(turn_buffer: usize) -> Self {
        Self {
            turn_buffer,
            ..Self::default()
        }
    }

    /// Waits for the answer to `request`.
    pub(crate) fn expect(&mut self, request: RequestId) {
        self.answers.insert(request, Slot::default());
    }

    /// Takes the answer to `request` if it came, else keeps `waker` to be woken when it does.
    pub(crate) fn poll_answer(&mut self, request: RequestId, waker: &Waker) -> Option<Answer> {
        let slot = self.answers.get_mut(&request)?;
        match slot.answer.take() {
            Some(answer) => {
                self.answers.remove(&request);
                Some(answer)
            }
            None if self.gone => {
                self.answers.remove(&request);
                Some(Answer::Failed(ClientError::Closed))
            }
            None => {
                slot.waker = Some(waker.clone());
                None
            }
        }
    }

    /// Whether an answer to `request` is awaited.
    pub(crate) fn expects(&self, request: RequestId) -> bool {
        self.answers.contains_key(&request)
    }

    /// Stops waiting (the caller's future was dropped).
    pub(crate) fn forget(&mut self, request: RequestId) {
        self.answers.remove(&request);
    }

    /// Hands `answer` to whoever waits for `request` (nobody: it is dropped).
    pub(crate) fn answer(&mut self, request: RequestId, answer: Answer) {
        if let Some(slot) = self.answers.get_mut(&request) {
            slot.answer = Some(answer);
            if let Some(waker) = slot.waker.take() {
                waker.wake();
            }
        }
    }

    /// The connection is gone: every waiter and every turn learns it.
    pub(crate) fn close(&mut self) {
        self.gone = true;
        for slot in self.answers.values_mut() {
            if let Some(waker) = slot.waker.take() {
                waker.wake();
            }
        }
        for turn in self.turns.values_mut() {
            if turn.end.is_none() {
                turn.end = Some(Err(ClientError::Closed));
            }
            if let Some(waker) = turn.waker.take() {
                waker.wake();
            }
        }
    }
}
