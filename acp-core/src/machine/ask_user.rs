//! How an `_agentao.cn/ask_user` answer is read (R-ASK-1):
//! a non-empty answered text, or the sentinel. It never aborts the turn.

use super::pending::SettledOutcome;
use crate::wire::ErrorCode;

/// What the model receives when there is no usable answer (Agentao's
/// `ASK_USER_UNAVAILABLE_SENTINEL`).
pub const UNAVAILABLE: &str = "(user unavailable)";

/// The `outcome` of an answer with text.
pub const OUTCOME_ANSWERED: &str = "answered";

/// The `outcome` of a cancelled question.
pub const OUTCOME_CANCELLED: &str = "cancelled";

/// An ask_user answer as decoded, or why there is none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskUserReply<'a> {
    /// A result object; its `outcome` and `text` string fields (`None` when missing or not
    /// strings).
    Result {
        /// `result.outcome`.
        outcome: Option<&'a str>,
        /// `result.text`, unescaped.
        text: Option<&'a str>,
    },
    /// A result that is not an object.
    Malformed,
    /// The request was settled without a result ([`SettledOutcome`] of the pending table).
    Settled(SettledOutcome),
}

/// Why the sentinel was used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// `{"outcome":"cancelled"}`, or the session was cancelled.
    Cancelled,
    /// `answered` with a missing or empty text.
    EmptyText,
    /// Any other outcome, or a result of another shape (e.g. `{"answer":…}`).
    UnknownOutcome,
    /// A result that is not an object.
    Malformed,
    /// An error response.
    Error(ErrorCode),
    /// No answer in time.
    TimedOut,
    /// The connection closed.
    Disconnected,
}

/// The answer handed to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskUserResolution<'a> {
    /// The user's text.
    Answered(&'a str),
    /// No usable answer: the model gets [`UNAVAILABLE`].
    Unavailable(Unavailable),
}

impl<'a> AskUserResolution<'a> {
    /// The text for the model: the answer, or the sentinel.
    pub const fn text(&self) -> &'a str {
        match self {
            Self::Answered(text) => text,
            Self::Unavailable(_) => UNAVAILABLE,
        }
    }
}

/// Reads an ask_user answer: `answered` with a non-empty text gives the text, anything else
/// the sentinel.
pub fn read_reply(reply: AskUserReply<'_>) -> AskUserResolution<'_> {
    use AskUserResolution as A;
    match reply {
        AskUserReply::Result {
            outcome: Some(OUTCOME_ANSWERED),
            text: Some(text),
        } if !text.is_empty() => A::Answered(text),
        // R-ASK-1: an empty text is replaced by the sentinel.
        AskUserReply::Result {
            outcome: Some(OUTCOME_ANSWERED),
            ..
        } => A::Unavailable(Unavailable::EmptyText),
        AskUserReply::Result {
            outcome: Some(OUTCOME_CANCELLED),
            ..
        } => A::Unavailable(Unavailable::Cancelled),
        AskUserReply::Result { .. } => A::Unavailable(Unavailable::UnknownOutcome),
        AskUserReply::Malformed => A::Unavailable(Unavailable::Malformed),
        AskUserReply::Settled(outcome) => A::Unavailable(match outcome {
            SettledOutcome::Answered | SettledOutcome::Malformed => Unavailable::Malformed,
            SettledOutcome::Error(code) => Unavailable::Error(code),
            SettledOutcome::TimedOut => Unavailable::TimedOut,
            SettledOutcome::Cancelled => Unavailable::Cancelled,
            SettledOutcome::Disconnected => Unavailable::Disconnected,
        }),
    }
}
