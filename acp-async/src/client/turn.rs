//! [`Turn`]: one prompt turn as a stream of [`Update`]s, then its stop reason.

use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use acp_core::conn::client::UpdateContext;
use acp_core::prelude::{RequestId, StopReason};
use acp_core::schema::{ContentBlock, DecodeError, SessionNotification, SessionUpdate};
use futures_util::Stream;

use super::error::ClientError;
use super::state::Inner;

/// One `session/update` from the agent, as acp-core delivered it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Update {
    /// The session (empty when the agent sent none).
    pub session: String,
    /// Where it arrived in the session's life; [`UpdateContext::is_flagged`] marks the ones
    /// that break the expected order (R-TURN-3, R-TURN-4). A [`Turn`] yields only
    /// [`UpdateContext::Turn`] updates; the others go to
    /// [`ClientBuilder::on_update`](super::ClientBuilder::on_update).
    pub context: UpdateContext,
    /// `update.sessionUpdate` (empty when missing).
    pub kind: String,
    /// The notification's params as sent (raw JSON), for what the typed form does not keep.
    pub json: String,
    /// The params, decoded; an error when they do not match the schema (the update is
    /// delivered anyway: updates are never dropped).
    pub decoded: Result<SessionNotification, DecodeError>,
}

impl Update {
    /// The typed update, when it decoded.
    pub fn update(&self) -> Option<&SessionUpdate> {
        self.decoded.as_ref().ok().map(|n| &n.update)
    }

    /// The text of an `agent_message_chunk` with a text block: what most clients print.
    pub fn agent_text(&self) -> Option<&str> {
        match self.update()? {
            SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                ContentBlock::Text(text) => Some(&text.text),
                _ => None,
            },
            _ => None,
        }
    }
}

/// A running prompt turn, from [`Client::prompt`](super::Client::prompt): its updates in the
/// order the agent sent them ([`next`](Self::next), or as a [`Stream`]), then the stop
/// reason ([`finish`](Self::finish)).
///
/// ```ignore
/// let mut turn = client.prompt(&session, "Hello").await?;
/// while let Some(update) = turn.next().await {
///     if let Some(text) = update.agent_text() {
///         print!("{text}");
///     }
/// }
/// let stop = turn.finish().await?; // end_turn, cancelled, …
/// ```
///
/// Updates wait in a queue of [`ClientBuilder::turn_buffer`](super::ClientBuilder::turn_buffer)
/// entries; when it is full the connection stops reading from the agent until this turn takes
/// one (backpressure: a slow consumer slows the agent instead of growing memory).
///
/// Dropping an unfinished `Turn` cancels it (`session/cancel`, as
/// [`Client::cancel`](super::Client::cancel)) and discards its remaining updates, so a
/// `select!` or a timeout around the loop leaves no turn running.
#[must_use = "a turn's updates hold the connection until they are taken"]
pub struct Turn {
    pub(crate) inner: Rc<Inner>,
    pub(crate) request: RequestId,
    pub(crate) session: String,
    /// The outcome, once taken out of the shared state.
    pub(crate) end: Option<Result<StopReason, ClientError>>,
}

impl Turn {
    /// The session this turn runs in.
    pub fn session_id(&self) -> &str {
        &self.session
    }

    /// The next update, or `None` once the turn has ended (then [`finish`](Self::finish)
    /// returns at once).
    pub async fn next(&mut self) -> Option<Update> {
        std::future::poll_fn(|cx| self.poll_update(cx)).await
    }

    /// How the turn ended: its stop reason (`cancelled` after a cancel, R-CANCEL-3), or why it
    /// has none ([`ClientError::TurnDisconnected`], [`ClientError::TurnTimedOut`], an error
    /// answer). Updates not taken yet are skipped.
    pub async fn finish(mut self) -> Result<StopReason, ClientError> {
        while self.next().await.is_some() {}
        self.end.take().unwrap_or(Err(ClientError::Closed))
    }

    /// Cancels the turn: see [`Client::cancel`](super::Client::cancel). Updates keep coming
    /// until the agent answers; the turn then ends `cancelled`.
    pub async fn cancel(&self) -> Result<bool, ClientError> {
        super::Client::from_inner(self.inner.clone())
            .cancel(&self.session)
            .await
    }

    /// Updates received and not taken yet (at most the turn buffer).
    pub fn buffered(&self) -> usize {
        let state = self.inner.state.borrow();
        state.turns.get(&self.request).map_or(0, |t| t.queue.len())
    }

    fn poll_update(&mut self, cx: &mut Context<'_>) -> Poll<Option<Update>> {
        if self.end.is_some() {
            return Poll::Ready(None);
        }
        let mut state = self.inner.state.borrow_mut();
        let stalled = state.stalled;
        let Some(slot) = state.turns.get_mut(&self.request) else {
            drop(state);
            self.end = Some(Err(ClientError::Closed));
            return Poll::Ready(None);
        };
        if let Some(update) = slot.queue.pop_front() {
            drop(state);
            if stalled {
                // The driver held an update back for want of room: there is room now.
                self.inner.shared.wake_pump();
            }
            return Poll::Ready(Some(update));
        }
        if let Some(end) = slot.end.take() {
            state.turns.remove(&self.request);
            drop(state);
            self.end = Some(end);
            return Poll::Ready(None);
        }
        slot.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Stream for Turn {
    type Item = Update;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Update>> {
        self.get_mut().poll_update(cx)
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if self.end.is_some() {
            return;
        }
        let mut state = self.inner.state.borrow_mut();
        let running = match state.turns.get_mut(&self.request) {
            Some(slot) if slot.end.is_none() => {
                slot.queue.clear();
                slot.detached = true;
                true
            }
            _ => {
                state.turns.remove(&self.request);
                false
            }
        };
        let stalled = state.stalled;
        drop(state);
        if running {
            let shared = &self.inner.shared;
            let now = shared.now();
            // Best effort: a full outbox or a closed connection leaves nothing to cancel
            // here; the turn then runs out and its updates are discarded.
            let _ = shared.with(|conn| conn.cancel(now, &self.session));
        }
        if stalled {
            // An update held back for this turn can now be discarded.
            self.inner.shared.wake_pump();
        }
    }
}

impl std::fmt::Debug for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn")
            .field("session", &self.session)
            .field("request", &self.request)
            .field("ended", &self.end.is_some())
            .finish()
    }
}
