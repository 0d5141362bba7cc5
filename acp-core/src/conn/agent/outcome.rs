//! How a prompt turn was answered: what [`fail_turn`](super::AgentConnection::fail_turn)
//! reports, so a failed turn is never mistaken for a cancelled one.

use crate::machine::turn::StopReason;

/// What the answer to a turn's `session/prompt` said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnEnd {
    /// A result with this stop reason (the one the application gave).
    Ended(StopReason),
    /// An error (`fail_turn`, `fail_turn_with`).
    Failed,
    /// A result with `cancelled`, because the client cancelled the turn (R-CANCEL-3),
    /// whatever the application asked for.
    Cancelled,
}
