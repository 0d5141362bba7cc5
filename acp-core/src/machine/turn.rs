//! One prompt turn of a session: running, then possibly cancelling, then ended exactly once.

use core::fmt;

use super::{Instant, ReqRef, trace_transition};

/// Why a turn ended (`stopReason` of the `session/prompt` answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The token limit was reached.
    MaxTokens,
    /// The limit of model requests in one turn was reached.
    MaxTurnRequests,
    /// The model refused.
    Refusal,
    /// The client cancelled the turn.
    Cancelled,
}

impl StopReason {
    /// Every stop reason, in schema order.
    pub const ALL: [Self; 5] = [
        Self::EndTurn,
        Self::MaxTokens,
        Self::MaxTurnRequests,
        Self::Refusal,
        Self::Cancelled,
    ];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::EndTurn => "end_turn",
            Self::MaxTokens => "max_tokens",
            Self::MaxTurnRequests => "max_turn_requests",
            Self::Refusal => "refusal",
            Self::Cancelled => "cancelled",
        }
    }

    /// Every wire name, in schema order.
    pub const NAMES: &'static [&'static str] = &[
        "end_turn",
        "max_tokens",
        "max_turn_requests",
        "refusal",
        "cancelled",
    ];

    /// The stop reason with this wire name.
    pub fn from_wire(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

impl serde::Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for StopReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = StopReason;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<StopReason, E> {
                StopReason::from_wire(v).ok_or_else(|| E::unknown_variant(v, StopReason::NAMES))
            }
        }
        d.deserialize_str(Name)
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A turn in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// The prompt is being worked on.
    Running {
        /// The prompt request this turn answers.
        prompt: ReqRef,
    },
    /// `session/cancel` was sent or received; the turn will end `cancelled`.
    Cancelling {
        /// The prompt request this turn answers.
        prompt: ReqRef,
        /// When the cancel happened.
        since: Instant,
    },
}

impl Turn {
    /// The prompt request this turn answers.
    pub const fn prompt(&self) -> ReqRef {
        match *self {
            Self::Running { prompt } | Self::Cancelling { prompt, .. } => prompt,
        }
    }

    /// Whether a cancel has been seen.
    pub const fn is_cancelling(&self) -> bool {
        matches!(self, Self::Cancelling { .. })
    }

    /// The state's name, for traces and transcripts.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Running { .. } => "Running",
            Self::Cancelling { .. } => "Cancelling",
        }
    }
}

/// An input to a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnInput {
    /// `session/cancel` for this session.
    Cancel,
    /// The turn ends with this stop reason (the agent application says so, or the client
    /// received the prompt's answer).
    End(StopReason),
    /// The turn ends with an error instead of a stop reason (the agent application answers
    /// the prompt with an error, or the client received an error or a malformed answer).
    Fail,
}

/// What a turn transition produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnOutput {
    /// The turn is now cancelling: pending permission and ask_user requests of the session
    /// must be settled as cancelled, and the application told to stop.
    CancelStarted {
        /// The prompt request of the turn.
        prompt: ReqRef,
    },
    /// A repeated cancel: nothing to do (cancel is idempotent).
    AlreadyCancelling,
    /// The turn is over; answer (or report) the prompt with `stop`.
    Ended {
        /// The prompt request of the turn.
        prompt: ReqRef,
        /// The stop reason to send or report.
        stop: StopReason,
        /// The stop reason given was replaced by `cancelled` because of a cancel.
        rewritten: bool,
    },
    /// The turn is over with an error: answer (or report) the prompt with it.
    Failed {
        /// The prompt request of the turn.
        prompt: ReqRef,
    },
}

/// One transition of a turn: the new turn (`None` once it ended) and what it produced.
pub fn step(turn: Turn, now: Instant, input: TurnInput) -> (Option<Turn>, TurnOutput) {
    let next = match (turn, input) {
        // ACP prompt-turn "cancellation": the client asks, the agent stops as soon as it can.
        (Turn::Running { prompt }, TurnInput::Cancel) => (
            Some(Turn::Cancelling { prompt, since: now }),
            TurnOutput::CancelStarted { prompt },
        ),
        // R-CANCEL-1: idempotent.
        (Turn::Cancelling { .. }, TurnInput::Cancel) => (Some(turn), TurnOutput::AlreadyCancelling),
        // A turn nobody cancelled ends the way the application says.
        (Turn::Running { prompt }, TurnInput::End(stop)) => (
            None,
            TurnOutput::Ended {
                prompt,
                stop,
                rewritten: false,
            },
        ),
        // R-CANCEL-3: after a cancel the turn ends `cancelled` whatever the
        // application says; the connection enforces it.
        (Turn::Cancelling { prompt, .. }, TurnInput::End(stop)) => (
            None,
            TurnOutput::Ended {
                prompt,
                stop: StopReason::Cancelled,
                rewritten: stop != StopReason::Cancelled,
            },
        ),
        // A turn nobody cancelled may fail (e.g. `-32603` from the backend).
        (Turn::Running { prompt }, TurnInput::Fail) => (None, TurnOutput::Failed { prompt }),
        // R-CANCEL-3: after a cancel even a failure ends `cancelled`.
        (Turn::Cancelling { prompt, .. }, TurnInput::Fail) => (
            None,
            TurnOutput::Ended {
                prompt,
                stop: StopReason::Cancelled,
                rewritten: true,
            },
        ),
    };
    trace_transition!("turn", turn.name(), next.0.map_or("Ended", |t| t.name()));
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Ticket;

    const PROMPT: ReqRef = ReqRef::Peer(Ticket(7));

    fn running() -> Turn {
        Turn::Running { prompt: PROMPT }
    }

    fn cancelling() -> Turn {
        Turn::Cancelling {
            prompt: PROMPT,
            since: Instant(5),
        }
    }

    #[test]
    fn cancel_moves_running_to_cancelling_at_now() {
        let (next, out) = step(running(), Instant(9), TurnInput::Cancel);
        assert_eq!(
            next,
            Some(Turn::Cancelling {
                prompt: PROMPT,
                since: Instant(9)
            })
        );
        assert_eq!(out, TurnOutput::CancelStarted { prompt: PROMPT });
    }

    #[test]
    fn second_cancel_keeps_the_first_time() {
        let (next, out) = step(cancelling(), Instant(50), TurnInput::Cancel);
        assert_eq!(next, Some(cancelling()));
        assert_eq!(out, TurnOutput::AlreadyCancelling);
    }

    #[test]
    fn running_turn_ends_with_the_given_reason() {
        for stop in StopReason::ALL {
            let (next, out) = step(running(), Instant(1), TurnInput::End(stop));
            assert_eq!(next, None);
            assert_eq!(
                out,
                TurnOutput::Ended {
                    prompt: PROMPT,
                    stop,
                    rewritten: false
                }
            );
        }
    }

    #[test]
    fn cancelled_turn_always_ends_cancelled() {
        for stop in StopReason::ALL {
            let (next, out) = step(cancelling(), Instant(1), TurnInput::End(stop));
            assert_eq!(next, None);
            assert_eq!(
                out,
                TurnOutput::Ended {
                    prompt: PROMPT,
                    stop: StopReason::Cancelled,
                    rewritten: stop != StopReason::Cancelled
                }
            );
        }
    }

    #[test]
    fn failures_end_the_turn_unless_it_was_cancelled() {
        let (next, out) = step(running(), Instant(1), TurnInput::Fail);
        assert_eq!(next, None);
        assert_eq!(out, TurnOutput::Failed { prompt: PROMPT });
        let (next, out) = step(cancelling(), Instant(1), TurnInput::Fail);
        assert_eq!(next, None);
        assert_eq!(
            out,
            TurnOutput::Ended {
                prompt: PROMPT,
                stop: StopReason::Cancelled,
                rewritten: true
            }
        );
    }

    #[test]
    fn stop_reasons_round_trip_their_wire_names() {
        for stop in StopReason::ALL {
            assert_eq!(StopReason::from_wire(stop.as_str()), Some(stop));
        }
        assert_eq!(StopReason::from_wire("done"), None);
    }
}
