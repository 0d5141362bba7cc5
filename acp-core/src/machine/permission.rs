//! How a `session/request_permission` answer is read (R-PERM-3), and the per-session memory
//! of `*_always` answers (R-PERM-4).
//!
//! The decoder hands over the fields it found; nothing here sees JSON.

use core::fmt;

use super::pending::SettledOutcome;
use super::{SessionId, Table};
use crate::wire::ErrorCode;

/// The four permission options. We always offer all four, in this order, each with
/// `optionId` equal to its `kind` (R-PERM-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PermissionChoice {
    /// `allow_once`
    AllowOnce,
    /// `allow_always`: allowed, and remembered for this tool in this session.
    AllowAlways,
    /// `reject_once`
    RejectOnce,
    /// `reject_always`: rejected, and remembered for this tool in this session.
    RejectAlways,
}

impl PermissionChoice {
    /// All four, in the order they are offered.
    pub const ALL: [Self; 4] = [
        Self::AllowOnce,
        Self::AllowAlways,
        Self::RejectOnce,
        Self::RejectAlways,
    ];

    /// The `optionId`, which is also the `kind`.
    pub const fn id(self) -> &'static str {
        match self {
            Self::AllowOnce => "allow_once",
            Self::AllowAlways => "allow_always",
            Self::RejectOnce => "reject_once",
            Self::RejectAlways => "reject_always",
        }
    }

    /// The human-readable `name` offered with it (Agentao's texts).
    pub const fn label(self) -> &'static str {
        match self {
            Self::AllowOnce => "Allow once",
            Self::AllowAlways => "Always allow",
            Self::RejectOnce => "Reject once",
            Self::RejectAlways => "Always reject",
        }
    }

    /// The option with this `optionId`; `None` for anything else (e.g. `"yes"`).
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.id() == id)
    }

    /// Whether choosing it lets the tool run.
    pub const fn allows(self) -> bool {
        matches!(self, Self::AllowOnce | Self::AllowAlways)
    }

    /// Whether choosing it is remembered for the tool in the session.
    pub const fn is_always(self) -> bool {
        matches!(self, Self::AllowAlways | Self::RejectAlways)
    }
}

impl fmt::Display for PermissionChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A permission answer as decoded, or why there is none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionReply<'a> {
    /// The standard shape: `result.outcome` is an object; these are its `outcome` and
    /// `optionId` string fields (`None` when missing or not a string).
    Nested {
        /// `result.outcome.outcome`.
        outcome: Option<&'a str>,
        /// `result.outcome.optionId`.
        option_id: Option<&'a str>,
    },
    /// Agentao's flat shape: `result.outcome` is a string and `result.optionId` sits beside it.
    Flat {
        /// `result.outcome`.
        outcome: &'a str,
        /// `result.optionId`.
        option_id: Option<&'a str>,
    },
    /// A result with no readable `outcome` (not an object, `outcome` missing or of another
    /// type).
    Malformed,
    /// The request was settled without a result ([`SettledOutcome`] of the pending table).
    Settled(SettledOutcome),
}

/// Why a permission counts as rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectReason {
    /// The user chose `reject_once` or `reject_always`.
    Chosen(PermissionChoice),
    /// `selected` with an `optionId` we did not offer.
    UnknownOption,
    /// An `outcome` that is neither `selected` nor `cancelled`.
    UnknownOutcome,
    /// A result we could not read, or `selected` without an `optionId`.
    Malformed,
    /// An error response.
    Error(ErrorCode),
    /// No answer in time.
    TimedOut,
}

/// What the agent does with the tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionDecision {
    /// Run it (`allow_once` or `allow_always`).
    Allowed(PermissionChoice),
    /// Do not run it; the turn goes on (R-PERM-3).
    Rejected(RejectReason),
    /// Do not run it: the user cancelled, the session was cancelled or the connection closed.
    Cancelled,
}

impl PermissionDecision {
    /// Whether the tool may run.
    pub const fn is_allowed(self) -> bool {
        matches!(self, Self::Allowed(_))
    }

    /// The choice to remember for this tool in this session (`Some(allowed)` for the
    /// `*_always` options).
    pub const fn remembered(self) -> Option<bool> {
        match self {
            Self::Allowed(PermissionChoice::AllowAlways) => Some(true),
            Self::Rejected(RejectReason::Chosen(PermissionChoice::RejectAlways)) => Some(false),
            _ => None,
        }
    }
}

/// Reads a permission answer (R-PERM-3): both the nested and the flat shape; an unknown
/// optionId, an error, a malformed result or a timeout all mean rejected.
pub fn decide(reply: PermissionReply<'_>) -> PermissionDecision {
    use PermissionDecision as D;
    let (outcome, option_id) = match reply {
        PermissionReply::Nested {
            outcome: Some(outcome),
            option_id,
        }
        | PermissionReply::Flat { outcome, option_id } => (outcome, option_id),
        PermissionReply::Nested { outcome: None, .. } | PermissionReply::Malformed => {
            return D::Rejected(RejectReason::Malformed);
        }
        PermissionReply::Settled(settled) => {
            return match settled {
                // An answer is decoded into Nested/Flat/Malformed before it gets here; if a
                // caller passes the bare outcome it is unreadable.
                SettledOutcome::Answered | SettledOutcome::Malformed => {
                    D::Rejected(RejectReason::Malformed)
                }
                SettledOutcome::Error(code) => D::Rejected(RejectReason::Error(code)),
                SettledOutcome::TimedOut => D::Rejected(RejectReason::TimedOut),
                // R-CANCEL-3; R-CANCEL-5 (a disconnect counts as a cancel).
                SettledOutcome::Cancelled | SettledOutcome::Disconnected => D::Cancelled,
            };
        }
    };
    match (outcome, option_id.map(PermissionChoice::from_id)) {
        ("selected", Some(Some(option))) if option.allows() => D::Allowed(option),
        ("selected", Some(Some(option))) => D::Rejected(RejectReason::Chosen(option)),
        ("selected", Some(None)) => D::Rejected(RejectReason::UnknownOption),
        ("selected", None) => D::Rejected(RejectReason::Malformed),
        ("cancelled", _) => D::Cancelled,
        _ => D::Rejected(RejectReason::UnknownOutcome),
    }
}

/// The longest tool key remembered, in bytes.
pub const TOOL_KEY_MAX: usize = 128;

/// One remembered `*_always` answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remembered {
    /// The session it applies to.
    pub session: SessionId,
    /// The tool it applies to (the demo backend uses kind and title).
    pub tool: heapless::String<TOOL_KEY_MAX>,
    /// Allowed (`allow_always`) or rejected (`reject_always`).
    pub allow: bool,
}

/// The `*_always` answers of a connection, per session per tool (R-PERM-4; in memory only,
/// never shared between sessions). Bounded: when full, the oldest entry is forgotten, which
/// only means that tool is asked about again.
#[derive(Clone, Debug)]
pub struct PermissionMemory<S> {
    rows: S,
    limit: usize,
}

/// A permission memory with fixed capacity `N`.
pub type FixedPermissionMemory<const N: usize> = PermissionMemory<heapless::Vec<Remembered, N>>;

impl<const N: usize> Default for FixedPermissionMemory<N> {
    fn default() -> Self {
        Self::new(heapless::Vec::new(), N)
    }
}

impl<S: Table<Remembered>> PermissionMemory<S> {
    /// A memory on `rows` (normally empty) holding at most `limit` answers.
    pub fn new(rows: S, limit: usize) -> Self {
        Self { rows, limit }
    }

    /// The remembered answer for `tool` in `session`: `Some(true)` allow without asking,
    /// `Some(false)` reject without asking, `None` ask.
    pub fn recall(&self, session: &str, tool: &str) -> Option<bool> {
        self.rows
            .rows()
            .iter()
            .find(|r| r.session.as_str() == session && r.tool.as_str() == tool)
            .map(|r| r.allow)
    }

    /// Records a decision; only `*_always` choices are kept. Returns whether it was kept (an
    /// id or tool key longer than the fixed capacity is not).
    pub fn record(&mut self, session: &str, tool: &str, decision: PermissionDecision) -> bool {
        let Some(allow) = decision.remembered() else {
            return false;
        };
        let (Some(sid), Ok(key)) = (SessionId::new(session), heapless::String::try_from(tool))
        else {
            return false;
        };
        if let Some(row) = self
            .rows
            .rows_mut()
            .iter_mut()
            .find(|r| r.session == sid && r.tool == key)
        {
            row.allow = allow;
            return true;
        }
        let cap = self.limit.min(self.rows.max_rows());
        if cap == 0 {
            return false;
        }
        if self.rows.rows().len() >= cap {
            self.rows.remove_at(0);
        }
        self.rows
            .try_push(Remembered {
                session: sid,
                tool: key,
                allow,
            })
            .is_ok()
    }

    /// Forgets everything about `session` (closed, or reloaded: R-PERM-4; Agentao says the
    /// memory is not restored by `session/load`).
    pub fn forget_session(&mut self, session: &str) {
        let mut index = 0;
        // Bounded: each pass removes a row or moves past it.
        while index < self.rows.rows().len() {
            if self.rows.rows()[index].session.as_str() == session {
                self.rows.remove_at(index);
            } else {
                index += 1;
            }
        }
    }

    /// Every remembered answer, oldest first.
    pub fn rows(&self) -> &[Remembered] {
        self.rows.rows()
    }
}
