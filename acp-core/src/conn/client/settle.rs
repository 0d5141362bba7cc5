//! Settlements that come without an answer: requests of ours past their deadline or cut off
//! by EOF, requests of the agent cancelled, and the EOF sequence itself.

use super::commands::write_cancel;
use super::params::{AskUserResult, PermissionResult};
use super::{
    AskUserAnswer, Buffers, ClientEvent, ClientMethod, Core, Eof, Failure, HandshakeError, Init,
    PermissionAnswer, TurnOutcome, reply_error, wire_id,
};
use crate::conn::transport::Outbox;
use crate::machine::pending::{MethodKind, Settle, Settled, SettledOutcome};
use crate::machine::session::{CancelVia, SessionInput, SessionOutput};
use crate::machine::{Rejection, ReqRef};
use crate::wire::encode::write_result;

impl<S: Buffers> Core<S> {
    // ---- settlements without an answer --------------------------------------------------

    pub(super) fn step_settled(&mut self, outbox: &mut Outbox<S::Output>) -> bool {
        if let Some(settled) = self.pending.poll_settled() {
            self.on_local_settlement(settled, outbox);
            return true;
        }
        if let Some((row, how)) = self.owing.poll_settled() {
            let id = wire_id(row.id.as_raw());
            match how {
                // Nothing is written after EOF: nothing reads it.
                Settle::ConnectionClosed => {}
                Settle::SessionCancelled if row.kind == MethodKind::AskUser => {
                    let _ = outbox.push_line(|s| {
                        write_result(s, id, &AskUserResult::new(AskUserAnswer::Cancelled))
                    });
                }
                Settle::SessionCancelled => {
                    let _ = outbox.push_line(|s| {
                        write_result(s, id, &PermissionResult::new(PermissionAnswer::Cancelled))
                    });
                }
                Settle::CancelRequested => {
                    let rejection = Rejection::RequestCancelled;
                    reply_error(outbox, id, rejection.code(), &rejection);
                }
            }
            self.push(ClientEvent::RequestSettled {
                ticket: row.ticket,
                kind: row.kind,
                how,
            });
            return true;
        }
        false
    }

    /// A request of ours settled without an answer: its deadline passed, or EOF.
    fn on_local_settlement(&mut self, settled: Settled, outbox: &mut Outbox<S::Output>) {
        let method = self.take_method(settled.id).unwrap_or(ClientMethod::Other);
        let failure = match settled.outcome {
            SettledOutcome::TimedOut => Failure::TimedOut,
            SettledOutcome::Disconnected => Failure::Disconnected,
            // Only permission and ask_user requests settle on a cancel; a client sends none.
            _ => Failure::Malformed,
        };
        let now = self.clock.latest();
        match method {
            ClientMethod::Initialize => {
                self.init = Init::Failed;
                self.push(ClientEvent::HandshakeFailed {
                    request: settled.id,
                    error: HandshakeError::Failed(failure),
                });
            }
            // EOF: the session table reports the turn (step_eof).
            ClientMethod::Prompt if failure == Failure::Disconnected => {}
            ClientMethod::Prompt => {
                let Some(session) = settled.session else {
                    return;
                };
                let sid = session.as_str();
                // R-HOST-2: a prompt timeout sends session/cancel (Agentao's blocking
                // path does not: its bug 18), and settles what the agent asked meanwhile.
                let cancel = self.sessions.handle(
                    now,
                    SessionInput::Cancel {
                        id: sid,
                        via: CancelVia::Local,
                    },
                );
                if matches!(cancel, Ok(SessionOutput::CancelStarted { .. })) {
                    write_cancel(outbox, sid);
                }
                self.owing.cancel_session(sid);
                let prompt = ReqRef::Ours(settled.id);
                let _ = self
                    .sessions
                    .handle(now, SessionInput::FailTurn { id: sid, prompt });
                self.push(ClientEvent::TurnEnded {
                    session,
                    request: settled.id,
                    outcome: TurnOutcome::TimedOut,
                });
            }
            ClientMethod::NewSession | ClientMethod::LoadSession | ClientMethod::ResumeSession => {
                let req = ReqRef::Ours(settled.id);
                let _ = self.sessions.handle(now, SessionInput::OpenFailed { req });
                self.push(ClientEvent::Failed {
                    request: settled.id,
                    method,
                    failure,
                });
            }
            _ => self.push(ClientEvent::Failed {
                request: settled.id,
                method,
                failure,
            }),
        }
    }

    /// One step of the EOF sequence (R-HOST-5: EOF fails every pending request at
    /// once; Agentao's client waits for each timeout: its bug 17).
    pub(super) fn step_eof(&mut self) -> bool {
        let now = self.clock.latest();
        match self.eof {
            Eof::Open | Eof::Done => false,
            Eof::Draining => {
                self.pending.handle_eof(now);
                self.owing.handle_eof();
                self.eof = Eof::Sessions;
                true
            }
            Eof::Sessions => {
                match self.sessions.handle_eof(now) {
                    Some(SessionOutput::TurnEnded {
                        session,
                        prompt: ReqRef::Ours(request),
                        ..
                    }) => self.push(ClientEvent::TurnEnded {
                        session,
                        request,
                        outcome: TurnOutcome::Disconnected,
                    }),
                    Some(_) => {}
                    None => {
                        self.eof = Eof::Done;
                        self.push(ClientEvent::Closed);
                    }
                }
                true
            }
        }
    }
}
