//! Pure protocol state machines: `(state, input, now) -> (state, outputs)`.
//!
//! Nothing in here reads JSON, does I/O or allocates: the connection layer decodes a line,
//! turns the fields that drive state into an input, feeds it to a machine and encodes what
//! comes back. Each machine has one `match (state, input)` whose arms cite the rule they
//! implement (by its id in docs/protocol.md, such as `R-CANCEL-3`), and one `transition()`
//! where its state changes.
//!
//! | module | machine |
//! |---|---|
//! | [`time`] | the virtual clock every input carries |
//! | [`handshake`] | the `initialize` gate and the negotiated capabilities |
//! | [`session`] | the session table: creating, active, closed |
//! | [`turn`] | one prompt turn: running, cancelling, ended |
//! | [`pending`] | requests we sent and requests the peer sent us, each settled exactly once |
//! | [`permission`] | how a permission answer is read, and the `*_always` memory |
//! | [`ask_user`] | how an `_agentao.cn/ask_user` answer is read |
//!
//! Local misuse (the application asking for something the protocol forbids) is an
//! [`UsageError`]; misbehaviour of the peer is never an `Err`: it is an output, usually a
//! [`Rejection`] the connection sends back as a JSON-RPC error.
//!
//! Tables (sessions, pending requests, remembered permissions) sit on a [`Table`]: a
//! fixed-capacity `heapless::Vec` without `alloc`, or a growable `Vec` with it.
//!
//! # How a connection glues them (agent side, one prompt)
//!
//! ```
//! use acp_core::machine::pending::{FixedOwing, MethodKind, Received};
//! use acp_core::machine::session::{CancelVia, FixedSessions, SessionInput, SessionOutput, SessionState};
//! use acp_core::machine::turn::StopReason;
//! use acp_core::machine::{Instant, ReqRef};
//!
//! let now = Instant(0);
//! let mut sessions = FixedSessions::<4>::default();
//! let mut owed = FixedOwing::<8>::default();
//! sessions.restore("s1", SessionState::Active { turn: None }).unwrap();
//!
//! // `{"id":7,"method":"session/prompt","params":{"sessionId":"s1",…}}` arrives.
//! let Received::Owed(ticket) = owed.receive("7", MethodKind::Prompt, Some("s1")) else { panic!() };
//! let out = sessions.handle(now, SessionInput::Prompt { id: "s1", req: ReqRef::Peer(ticket) });
//! assert_eq!(out, Ok(SessionOutput::TurnStarted { prompt: ReqRef::Peer(ticket) }));
//!
//! // `session/cancel` arrives as a notification: the turn will end `cancelled`.
//! let out = sessions.handle(now, SessionInput::Cancel { id: "s1", via: CancelVia::PeerNotification });
//! assert!(matches!(out, Ok(SessionOutput::CancelStarted { .. })));
//!
//! // The application ends the turn as if nothing happened; the machine rewrites it.
//! let out = sessions.handle(now, SessionInput::EndTurn {
//!     id: "s1",
//!     prompt: ReqRef::Peer(ticket),
//!     stop: StopReason::EndTurn,
//! });
//! let Ok(SessionOutput::TurnEnded { stop, .. }) = out else { panic!() };
//! assert_eq!(stop, StopReason::Cancelled);
//!
//! // Exactly one answer: the owed table hands out the id to echo once.
//! let row = owed.answer(ticket).unwrap();
//! assert_eq!(row.id.as_raw(), "7"); // write {"jsonrpc":"2.0","id":7,"result":{"stopReason":"cancelled"}}
//! assert!(owed.answer(ticket).is_err());
//! ```

pub mod ask_user;
pub mod handshake;
pub mod pending;
pub mod permission;
pub mod session;
pub mod time;
pub mod turn;

mod error;
mod ids;
mod rejection;
mod storage;

pub use error::UsageError;
pub use ids::{PEER_ID_MAX, PeerRequestId, ReqRef, RequestId, SESSION_ID_MAX, SessionId, Ticket};
pub use rejection::Rejection;
pub use storage::Table;
pub use time::Instant;

/// Marks a state change of a machine. Compiles to nothing: it names the single point where a
/// machine's state is replaced, so a logging facade can be put behind it later.
macro_rules! trace_transition {
    ($machine:expr, $from:expr, $to:expr) => {{
        let _ = (&$machine, &$from, &$to);
    }};
}
pub(crate) use trace_transition;
