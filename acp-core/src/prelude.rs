//! The loop vocabulary in one import: `use acp_core::prelude::*;` brings both connections,
//! their configurations, events and storage, the time, and the ids and errors commands take
//! and return.
//!
//! Both connections speak the same loop: `handle_bytes(now, bytes)`, `handle_timeout(now)`,
//! `handle_eof(now)` in; `poll_event()`, `poll_transmit()` + `transmitted(n)`,
//! `poll_timeout()` out. See the crate docs for a whole drive loop.

pub use crate::conn::agent::{
    AgentConfig, AgentConnection, AgentEvent, AgentFeatures, AgentInfo, ClientViolation, Limits,
    RawUpdate,
};
pub use crate::conn::client::{
    AgentViolation, AskUserAnswer, ClientConfig, ClientConnection, ClientEvent, Payload,
    PermissionAnswer, Serves, TurnOutcome,
};
#[cfg(feature = "alloc")]
pub use crate::conn::storage::Growable;
pub use crate::conn::storage::{Buffers, Fixed};
pub use crate::machine::permission::{PermissionChoice, PermissionDecision};
pub use crate::machine::turn::StopReason;
pub use crate::machine::{Instant, RequestId, SessionId, Ticket, UsageError};
pub use crate::wire::ErrorCode;
