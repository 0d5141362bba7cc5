//! One server's lifecycle (R-HOST-3, R-HOST-7, R-HOST-8), transition by transition, with a fake
//! clock and fake process events.

use acp_host::supervisor::Instant;
use acp_host::supervisor::lifecycle::{
    Action, Input, Lifecycle, Limits, Notice, Refusal, ServerState as S,
};
use acp_host::supervisor::recovery::{ExitStatus, FatalCause, Verdict};

const LIMITS: Limits = Limits {
    startup_timeout_ms: 10_000,
    request_timeout_ms: 60_000,
    max_recoverable_restarts: 3,
};
const PID: u32 = 4242;

fn t(ms: u64) -> Instant {
    Instant(ms)
}

fn drain(lc: &mut Lifecycle) -> Vec<Action> {
    std::iter::from_fn(|| lc.poll_action()).take(100).collect()
}

fn changed(from: S, to: S) -> Action {
    Action::Notify(Notice::StateChanged { from, to })
}

/// Feeds an input that must be accepted and returns the actions it produced.
fn feed(lc: &mut Lifecycle, at: u64, input: Input<'_>) -> Vec<Action> {
    lc.handle(t(at), input).expect("accepted");
    drain(lc)
}

fn timeout(lc: &mut Lifecycle, at: u64) -> Vec<Action> {
    lc.handle_timeout(t(at));
    drain(lc)
}

/// A server that reached `ready` at t=0 with process `pid`.
fn ready_with(pid: u32) -> Lifecycle {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid });
    feed(&mut lc, 0, Input::HandshakeStarted);
    feed(&mut lc, 0, Input::HandshakeOk);
    assert_eq!(lc.state(), S::Ready);
    lc
}

fn ready() -> Lifecycle {
    ready_with(PID)
}

fn busy() -> Lifecycle {
    let mut lc = ready();
    feed(&mut lc, 0, Input::PromptStarted);
    lc
}

/// A server whose handshake failed once (streak 1), now `failed` with no process.
fn failed_once() -> Lifecycle {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid: PID });
    feed(
        &mut lc,
        0,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(1),
        },
    );
    assert_eq!(
        (lc.state(), lc.handshake_streak(), lc.is_fatal()),
        (S::Failed, 1, false)
    );
    lc
}

// ---- start and handshake ----

/// R-HOST-3: a server starts `configured`.
#[test]
fn a_new_server_is_configured_and_quiet() {
    let mut lc = Lifecycle::new("a", LIMITS);
    assert_eq!(lc.state(), S::Configured);
    assert_eq!(lc.poll_timeout(), None);
    assert_eq!(lc.poll_action(), None);
    assert_eq!(
        (lc.pid(), lc.last_error(), lc.restart_count()),
        (None, None, 0)
    );
}

#[test]
fn start_asks_for_a_spawn_and_arms_the_startup_deadline() {
    let mut lc = Lifecycle::new("a", LIMITS);
    assert_eq!(
        feed(&mut lc, 100, Input::Start),
        [Action::Spawn, changed(S::Configured, S::Starting)]
    );
    assert_eq!(lc.poll_timeout(), Some(t(10_100)));
}

#[test]
fn spawned_starts_the_handshake_at_once() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    assert_eq!(
        feed(&mut lc, 5, Input::Spawned { pid: PID }),
        [Action::BeginHandshake]
    );
    assert_eq!((lc.state(), lc.pid()), (S::Starting, Some(PID)));
}

#[test]
fn handshake_started_is_initializing_under_the_same_deadline() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 5, Input::Spawned { pid: PID });
    assert_eq!(
        feed(&mut lc, 6, Input::HandshakeStarted),
        [changed(S::Starting, S::Initializing)]
    );
    assert_eq!(lc.poll_timeout(), Some(t(10_000)));
}

/// R-HOST-3: `initializing → ready`.
#[test]
fn handshake_ok_is_ready_without_deadline() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid: PID });
    feed(&mut lc, 0, Input::HandshakeStarted);
    assert_eq!(
        feed(&mut lc, 9, Input::HandshakeOk),
        [changed(S::Initializing, S::Ready)]
    );
    assert_eq!(lc.poll_timeout(), None);
}

#[test]
fn spawn_failure_is_failed_with_the_os_error_and_can_be_retried() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    let out = feed(
        &mut lc,
        1,
        Input::SpawnFailed {
            error: "No such file or directory (os error 2)",
        },
    );
    assert_eq!(out, [changed(S::Starting, S::Failed)]);
    assert_eq!(
        lc.last_error(),
        Some("acp server 'a': failed to start: No such file or directory (os error 2)")
    );
    assert!(!lc.is_fatal());
    assert_eq!(lc.poll_timeout(), None);
    assert_eq!(
        feed(&mut lc, 2, Input::Connect),
        [Action::Spawn, changed(S::Failed, S::Starting)]
    );
}

#[test]
fn duplicate_start_of_a_live_server_does_nothing() {
    let mut lc = ready();
    assert_eq!(feed(&mut lc, 1, Input::Start), []);
    assert_eq!(feed(&mut lc, 1, Input::Connect), []);
    assert_eq!(lc.state(), S::Ready);
}

// ---- failures while starting (fix: liveness while starting, startup timeout) ----

#[test]
fn a_death_while_starting_fails_at_once() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid: PID });
    // Long after Agentao's 50 ms window: still noticed.
    let out = feed(
        &mut lc,
        3_000,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(2),
        },
    );
    assert_eq!(
        out,
        [Action::DropConnection, changed(S::Starting, S::Failed)]
    );
    assert_eq!(
        lc.last_error(),
        Some("process exited during startup (exit code 2)")
    );
    assert_eq!(
        (lc.pid(), lc.handshake_streak(), lc.is_fatal()),
        (None, 1, false)
    );
    assert_eq!(lc.poll_timeout(), None);
}

#[test]
fn a_death_while_initializing_fails_at_once() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid: PID });
    feed(&mut lc, 0, Input::HandshakeStarted);
    let out = feed(
        &mut lc,
        10,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(1),
        },
    );
    assert_eq!(
        out,
        [Action::DropConnection, changed(S::Initializing, S::Failed)]
    );
}

#[test]
fn a_signal_while_starting_is_fatal_at_once() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid: PID });
    feed(
        &mut lc,
        1,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Signal(9),
        },
    );
    assert!(lc.is_fatal());
    assert_eq!(
        lc.last_error(),
        Some("server 'a' marked fatal by recovery classifier")
    );
}

#[test]
fn the_second_handshake_failure_in_a_row_is_fatal_and_sticky() {
    let mut lc = failed_once();
    feed(&mut lc, 1, Input::Connect);
    feed(&mut lc, 1, Input::Spawned { pid: PID + 1 });
    feed(&mut lc, 1, Input::HandshakeStarted);
    let out = feed(
        &mut lc,
        2,
        Input::HandshakeFailed {
            error: "JSON-RPC error -32603: boom",
        },
    );
    assert_eq!(
        out,
        [
            Action::DropConnection,
            Action::CloseStdin { pid: PID + 1 },
            changed(S::Initializing, S::Stopping)
        ]
    );
    feed(
        &mut lc,
        3,
        Input::Exited {
            pid: PID + 1,
            status: ExitStatus::Code(0),
        },
    );
    assert_eq!(
        (lc.state(), lc.is_fatal(), lc.handshake_streak()),
        (S::Failed, true, 2)
    );
    assert_eq!(
        lc.last_error(),
        Some("server 'a' marked fatal by recovery classifier")
    );
    // Lazy starts and prompts are refused with Agentao's text.
    let refused = lc.handle(t(4), Input::Connect).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "server 'a' is in the fatal recovery state; call restart_server('a') to clear it"
    );
    assert_eq!(
        lc.handle(t(4), Input::PromptStarted).unwrap_err(),
        Refusal::Fatal { server: "a".into() }
    );
    assert_eq!(drain(&mut lc), []);
}

#[test]
fn an_explicit_start_clears_the_fatal_mark() {
    let mut lc = failed_once();
    feed(&mut lc, 1, Input::Connect);
    feed(&mut lc, 1, Input::SpawnFailed { error: "x" });
    feed(&mut lc, 1, Input::Connect);
    feed(&mut lc, 1, Input::Spawned { pid: 7 });
    feed(&mut lc, 2, Input::StdoutEof { pid: 7 });
    feed(
        &mut lc,
        3,
        Input::Exited {
            pid: 7,
            status: ExitStatus::Code(0),
        },
    );
    assert!(lc.is_fatal());
    assert_eq!(
        feed(&mut lc, 5, Input::Start),
        [Action::Spawn, changed(S::Failed, S::Starting)]
    );
    assert_eq!(
        (lc.is_fatal(), lc.handshake_streak(), lc.restart_count()),
        (false, 0, 0)
    );
}

#[test]
fn a_successful_handshake_clears_the_streak() {
    let mut lc = failed_once();
    feed(&mut lc, 1, Input::Connect);
    feed(&mut lc, 1, Input::Spawned { pid: 9 });
    feed(&mut lc, 1, Input::HandshakeOk);
    assert_eq!((lc.state(), lc.handshake_streak()), (S::Ready, 0));
}

#[test]
fn handshake_failure_stops_the_process_then_rests_in_failed() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid: PID });
    feed(&mut lc, 0, Input::HandshakeStarted);
    let out = feed(
        &mut lc,
        50,
        Input::HandshakeFailed {
            error: "timeout waiting for response to 'initialize' (id=0)",
        },
    );
    assert_eq!(
        out,
        [
            Action::DropConnection,
            Action::CloseStdin { pid: PID },
            changed(S::Initializing, S::Stopping)
        ]
    );
    assert_eq!(lc.poll_timeout(), Some(t(5_050)));
    let out = feed(
        &mut lc,
        60,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(0),
        },
    );
    assert_eq!(out, [changed(S::Stopping, S::Failed)]);
    assert_eq!(
        lc.last_error(),
        Some("timeout waiting for response to 'initialize' (id=0)")
    );
    assert!(!lc.is_fatal());
}

#[test]
fn stdout_eof_while_starting_is_a_handshake_failure() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid: PID });
    let out = feed(&mut lc, 1, Input::StdoutEof { pid: PID });
    assert_eq!(
        out,
        [
            Action::DropConnection,
            Action::CloseStdin { pid: PID },
            changed(S::Starting, S::Stopping)
        ]
    );
    assert_eq!(lc.last_error(), Some("stdout closed during startup"));
    assert_eq!(lc.handshake_streak(), 1);
}

#[test]
fn the_startup_deadline_fails_a_server_stuck_in_starting() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid: PID });
    assert_eq!(timeout(&mut lc, 9_999), [], "not yet");
    let out = timeout(&mut lc, 10_000);
    assert_eq!(
        out,
        [
            Action::Notify(Notice::StartupTimedOut),
            Action::DropConnection,
            Action::CloseStdin { pid: PID },
            changed(S::Starting, S::Stopping),
        ]
    );
    feed(
        &mut lc,
        10_001,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(0),
        },
    );
    assert_eq!(lc.state(), S::Failed);
    assert_eq!(
        lc.last_error(),
        Some("server 'a' did not become ready within 10000 ms")
    );
}

#[test]
fn the_startup_deadline_covers_initializing() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid: PID });
    feed(&mut lc, 4_000, Input::HandshakeStarted);
    let out = timeout(&mut lc, 10_000);
    assert_eq!(out[0], Action::Notify(Notice::StartupTimedOut));
    assert_eq!(lc.state(), S::Stopping);
}

#[test]
fn an_unconfirmed_spawn_times_out_straight_to_failed() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    let out = timeout(&mut lc, 10_000);
    assert_eq!(
        out,
        [
            Action::Notify(Notice::StartupTimedOut),
            changed(S::Starting, S::Failed)
        ]
    );
    assert_eq!(lc.handshake_streak(), 1);
}

// ---- turns ----

/// R-HOST-3: `ready → busy`.
#[test]
fn a_prompt_makes_it_busy_with_the_request_deadline() {
    let mut lc = ready();
    assert_eq!(
        feed(&mut lc, 1_000, Input::PromptStarted),
        [changed(S::Ready, S::Busy)]
    );
    assert_eq!(lc.poll_timeout(), Some(t(61_000)));
    assert!(lc.has_active_turn());
}

#[test]
fn a_second_prompt_is_refused_fail_fast() {
    let mut lc = busy();
    let refused = lc.handle(t(1), Input::PromptStarted).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "server 'a' has an active turn; send_prompt is fail-fast"
    );
}

#[test]
fn a_prompt_needs_a_ready_server() {
    let mut lc = Lifecycle::new("a", LIMITS);
    let refused = lc.handle(t(0), Input::PromptStarted).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "server 'a' is not ready (state: configured)"
    );
    feed(&mut lc, 0, Input::Start);
    let refused = lc.handle(t(0), Input::PromptStarted).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "server 'a' is not ready (state: starting)"
    );
}

#[test]
fn a_turn_end_returns_to_ready_and_resets_the_restart_budget() {
    let mut lc = ready();
    feed(
        &mut lc,
        0,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(1),
        },
    );
    assert_eq!(lc.restart_count(), 1);
    feed(&mut lc, 0, Input::Connect);
    feed(&mut lc, 0, Input::Spawned { pid: 2 });
    feed(&mut lc, 0, Input::HandshakeOk);
    feed(&mut lc, 0, Input::PromptStarted);
    assert_eq!(
        feed(&mut lc, 5, Input::PromptEnded { ok: false }),
        [changed(S::Busy, S::Ready)]
    );
    assert_eq!(lc.restart_count(), 1, "an error reply is not a success");
    feed(&mut lc, 6, Input::PromptStarted);
    feed(&mut lc, 7, Input::PromptEnded { ok: true });
    assert_eq!(
        (lc.state(), lc.restart_count(), lc.poll_timeout()),
        (S::Ready, 0, None)
    );
}

#[test]
fn a_turn_timeout_cancels_the_turn_and_returns_to_ready() {
    let mut lc = busy();
    assert_eq!(timeout(&mut lc, 59_999), []);
    let out = timeout(&mut lc, 60_000);
    assert_eq!(
        out,
        [
            Action::CancelTurn,
            Action::Notify(Notice::TurnTimedOut),
            changed(S::Busy, S::Ready)
        ]
    );
    assert_eq!(
        lc.last_error(),
        Some("timeout waiting for response from 'a' after 60000 ms")
    );
    // The cancelled turn's late answer changes nothing; the next turn runs.
    assert_eq!(feed(&mut lc, 60_001, Input::PromptEnded { ok: false }), []);
    assert_eq!(
        feed(&mut lc, 60_002, Input::PromptStarted),
        [changed(S::Ready, S::Busy)]
    );
}

#[test]
fn cancel_sends_session_cancel_and_waits_for_the_turn_end() {
    let mut lc = busy();
    assert_eq!(feed(&mut lc, 1, Input::CancelTurn), [Action::CancelTurn]);
    assert_eq!(lc.state(), S::Busy);
    feed(&mut lc, 2, Input::PromptEnded { ok: true });
    let refused = lc.handle(t(3), Input::CancelTurn).unwrap_err();
    assert_eq!(refused.to_string(), "server 'a' has no active turn");
}

// ---- waiting for the user ----

#[test]
fn a_question_during_a_turn_suspends_the_turn_deadline() {
    let mut lc = busy();
    assert_eq!(
        feed(&mut lc, 10, Input::InteractionOpened),
        [changed(S::Busy, S::WaitingForUser)]
    );
    assert_eq!(lc.poll_timeout(), None);
    assert!(lc.has_active_turn());
    // The user may take longer than the request timeout.
    assert_eq!(timeout(&mut lc, 500_000), []);
    feed(&mut lc, 500_001, Input::InteractionOpened);
    assert_eq!(lc.open_interactions(), 2);
    assert_eq!(feed(&mut lc, 500_002, Input::InteractionResolved), []);
    assert_eq!(lc.state(), S::WaitingForUser);
    assert_eq!(
        feed(&mut lc, 500_003, Input::InteractionResolved),
        [changed(S::WaitingForUser, S::Busy)]
    );
    // The deadline restarts after the last answer.
    assert_eq!(lc.poll_timeout(), Some(t(560_003)));
}

#[test]
fn a_question_outside_a_turn_returns_to_ready() {
    let mut lc = ready();
    assert_eq!(
        feed(&mut lc, 1, Input::InteractionOpened),
        [changed(S::Ready, S::WaitingForUser)]
    );
    assert!(!lc.has_active_turn());
    assert_eq!(
        lc.handle(t(2), Input::PromptStarted).unwrap_err(),
        Refusal::Busy { server: "a".into() }
    );
    assert_eq!(
        feed(&mut lc, 3, Input::InteractionResolved),
        [changed(S::WaitingForUser, S::Ready)]
    );
}

#[test]
fn a_turn_ending_while_waiting_returns_to_ready() {
    let mut lc = busy();
    feed(&mut lc, 1, Input::InteractionOpened);
    assert_eq!(feed(&mut lc, 1, Input::CancelTurn), [Action::CancelTurn]);
    assert_eq!(
        feed(&mut lc, 2, Input::PromptEnded { ok: true }),
        [changed(S::WaitingForUser, S::Ready)]
    );
    assert_eq!(lc.open_interactions(), 0);
}

// ---- the stop sequence ----

#[test]
fn stop_closes_stdin_and_a_graceful_exit_ends_it() {
    let mut lc = ready();
    let out = feed(&mut lc, 100, Input::Stop);
    assert_eq!(
        out,
        [
            Action::DropConnection,
            Action::CloseStdin { pid: PID },
            changed(S::Ready, S::Stopping)
        ]
    );
    assert_eq!(lc.poll_timeout(), Some(t(5_100)));
    assert_eq!(
        feed(&mut lc, 101, Input::StdoutEof { pid: PID }),
        [],
        "the expected EOF"
    );
    let out = feed(
        &mut lc,
        200,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(0),
        },
    );
    assert_eq!(out, [changed(S::Stopping, S::Stopped)]);
    assert_eq!((lc.pid(), lc.poll_timeout()), (None, None));
}

/// R-HOST-4: close stdin, SIGTERM, then the whole group.
#[test]
fn stop_escalates_to_sigterm_then_kills_the_group() {
    let mut lc = ready();
    feed(&mut lc, 0, Input::Stop);
    assert_eq!(timeout(&mut lc, 4_999), []);
    assert_eq!(timeout(&mut lc, 5_000), [Action::Terminate { pid: PID }]);
    assert_eq!(lc.poll_timeout(), Some(t(10_000)));
    assert_eq!(
        timeout(&mut lc, 10_000),
        [Action::KillProcessGroup { pid: PID }]
    );
    assert_eq!(lc.poll_timeout(), Some(t(12_000)));
    let out = feed(
        &mut lc,
        10_010,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Signal(9),
        },
    );
    assert_eq!(out, [changed(S::Stopping, S::Stopped)]);
    assert!(!lc.is_fatal(), "our own kill is not a crash");
}

#[test]
fn a_child_that_dies_on_sigterm_still_gets_its_group_killed() {
    let mut lc = ready();
    feed(&mut lc, 0, Input::Stop);
    timeout(&mut lc, 5_000);
    let out = feed(
        &mut lc,
        5_001,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Signal(15),
        },
    );
    assert_eq!(
        out,
        [
            Action::KillProcessGroup { pid: PID },
            changed(S::Stopping, S::Stopped)
        ]
    );
}

#[test]
fn a_process_that_survives_sigkill_is_let_go_after_two_seconds() {
    let mut lc = ready();
    feed(&mut lc, 0, Input::Stop);
    timeout(&mut lc, 5_000);
    timeout(&mut lc, 10_000);
    assert_eq!(timeout(&mut lc, 11_999), []);
    let out = timeout(&mut lc, 12_000);
    assert_eq!(
        out,
        [
            Action::Notify(Notice::ProcessLingering { pid: PID }),
            changed(S::Stopping, S::Stopped)
        ]
    );
    assert_eq!(lc.pid(), None);
}

#[test]
fn stop_with_no_process_is_stopped_at_once() {
    let mut lc = Lifecycle::new("a", LIMITS);
    assert_eq!(
        feed(&mut lc, 0, Input::Stop),
        [changed(S::Configured, S::Stopped)]
    );
    assert_eq!(feed(&mut lc, 0, Input::Stop), []);
}

#[test]
fn a_process_spawned_after_its_stop_is_stopped() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    assert_eq!(
        feed(&mut lc, 1, Input::Stop),
        [changed(S::Starting, S::Stopped)]
    );
    let out = feed(&mut lc, 2, Input::Spawned { pid: PID });
    assert_eq!(
        out,
        [
            Action::CloseStdin { pid: PID },
            changed(S::Stopped, S::Stopping)
        ]
    );
    feed(
        &mut lc,
        3,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(0),
        },
    );
    assert_eq!(lc.state(), S::Stopped);
}

#[test]
fn a_stray_second_spawn_is_killed() {
    let mut lc = ready();
    assert_eq!(
        feed(&mut lc, 1, Input::Spawned { pid: 999 }),
        [Action::KillProcessGroup { pid: 999 }]
    );
    assert_eq!((lc.state(), lc.pid()), (S::Ready, Some(PID)));
}

#[test]
fn restart_stops_then_spawns() {
    let mut lc = ready();
    let out = feed(&mut lc, 0, Input::Restart);
    assert_eq!(
        out,
        [
            Action::DropConnection,
            Action::CloseStdin { pid: PID },
            changed(S::Ready, S::Stopping)
        ]
    );
    let out = feed(
        &mut lc,
        10,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(0),
        },
    );
    assert_eq!(out, [Action::Spawn, changed(S::Stopping, S::Starting)]);
    assert_eq!(lc.poll_timeout(), Some(t(10_010)));
    // The old process's late events are ignored.
    assert_eq!(feed(&mut lc, 11, Input::StdoutEof { pid: PID }), []);
    feed(&mut lc, 12, Input::Spawned { pid: PID + 1 });
    assert_eq!(
        feed(
            &mut lc,
            13,
            Input::Exited {
                pid: PID,
                status: ExitStatus::Code(1)
            }
        ),
        []
    );
    assert_eq!(lc.state(), S::Starting);
}

#[test]
fn restart_before_the_spawn_is_confirmed_does_not_spawn_twice() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::Start);
    assert_eq!(feed(&mut lc, 1, Input::Restart), []);
    assert_eq!(
        feed(&mut lc, 2, Input::Spawned { pid: PID }),
        [Action::BeginHandshake]
    );
}

#[test]
fn start_during_a_stop_restarts_after_it_and_stop_cancels_that() {
    let mut lc = ready();
    feed(&mut lc, 0, Input::Stop);
    assert_eq!(feed(&mut lc, 1, Input::Start), []);
    feed(&mut lc, 1, Input::Stop);
    let out = feed(
        &mut lc,
        2,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(0),
        },
    );
    assert_eq!(out, [changed(S::Stopping, S::Stopped)]);

    let mut lc = ready();
    feed(&mut lc, 0, Input::Stop);
    feed(&mut lc, 1, Input::Connect);
    let out = feed(
        &mut lc,
        2,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(0),
        },
    );
    assert_eq!(out, [Action::Spawn, changed(S::Stopping, S::Starting)]);
}

#[test]
fn stopping_a_fatal_server_keeps_it_fatal_until_an_explicit_start() {
    let mut lc = ready();
    feed(
        &mut lc,
        0,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Signal(9),
        },
    );
    assert_eq!(
        feed(&mut lc, 1, Input::Stop),
        [changed(S::Failed, S::Stopped)]
    );
    assert!(lc.handle(t(2), Input::Connect).is_err());
    assert_eq!(
        feed(&mut lc, 3, Input::Restart),
        [Action::Spawn, changed(S::Stopped, S::Starting)]
    );
    assert!(!lc.is_fatal());
}

// ---- recovery of a running server ----

#[test]
fn an_idle_crash_within_budget_is_recoverable() {
    let mut lc = ready();
    let out = feed(
        &mut lc,
        1,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(1),
        },
    );
    assert_eq!(
        out,
        [
            Action::DropConnection,
            Action::Notify(Notice::Died {
                status: Some(ExitStatus::Code(1)),
                verdict: Verdict::Recoverable
            }),
            changed(S::Ready, S::Configured),
        ]
    );
    assert_eq!(
        (lc.pid(), lc.restart_count(), lc.is_fatal()),
        (None, 1, false)
    );
    assert_eq!(lc.last_error(), Some("server 'a' exited (exit code 1)"));
    // The next prompt rebuilds lazily.
    assert_eq!(
        feed(&mut lc, 2, Input::Connect),
        [Action::Spawn, changed(S::Configured, S::Starting)]
    );
}

#[test]
fn a_clean_exit_is_recoverable_even_past_the_budget() {
    let limits = Limits {
        max_recoverable_restarts: 0,
        ..LIMITS
    };
    let mut lc = Lifecycle::new("a", limits);
    for at in [0, 1, 2] {
        feed(&mut lc, at, Input::Connect);
        feed(&mut lc, at, Input::Spawned { pid: PID });
        feed(&mut lc, at, Input::HandshakeOk);
        feed(
            &mut lc,
            at,
            Input::Exited {
                pid: PID,
                status: ExitStatus::Code(0),
            },
        );
        assert_eq!(lc.state(), S::Configured);
    }
}

#[test]
fn signals_and_signal_exit_codes_are_fatal() {
    for status in [
        ExitStatus::Signal(9),
        ExitStatus::Code(137),
        ExitStatus::Code(139),
        ExitStatus::Code(143),
        ExitStatus::Code(-11),
    ] {
        let mut lc = ready();
        let out = feed(&mut lc, 1, Input::Exited { pid: PID, status });
        assert_eq!(
            out[1],
            Action::Notify(Notice::Died {
                status: Some(status),
                verdict: Verdict::Fatal(FatalCause::Signalled)
            })
        );
        assert_eq!((lc.state(), lc.is_fatal()), (S::Failed, true), "{status:?}");
        assert_eq!(
            lc.last_error(),
            Some("server 'a' marked fatal by recovery classifier")
        );
    }
}

#[test]
fn idle_crashes_beyond_the_budget_become_fatal() {
    let mut lc = ready();
    for round in 0..4u32 {
        let out = feed(
            &mut lc,
            1,
            Input::Exited {
                pid: PID,
                status: ExitStatus::Code(1),
            },
        );
        if round < 3 {
            assert_eq!(lc.state(), S::Configured, "round {round}");
            feed(&mut lc, 1, Input::Connect);
            feed(&mut lc, 1, Input::Spawned { pid: PID });
            feed(&mut lc, 1, Input::HandshakeOk);
        } else {
            assert_eq!(
                out[1],
                Action::Notify(Notice::Died {
                    status: Some(ExitStatus::Code(1)),
                    verdict: Verdict::Fatal(FatalCause::RestartLimit),
                })
            );
            assert_eq!(lc.state(), S::Failed);
        }
    }
}

#[test]
fn a_crash_during_a_turn_is_recoverable_even_past_the_budget() {
    let mut lc = Lifecycle::new(
        "a",
        Limits {
            max_recoverable_restarts: 0,
            ..LIMITS
        },
    );
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::Spawned { pid: PID });
    feed(&mut lc, 0, Input::HandshakeOk);
    feed(&mut lc, 0, Input::PromptStarted);
    feed(&mut lc, 0, Input::InteractionOpened);
    let out = feed(
        &mut lc,
        1,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Code(3),
        },
    );
    assert_eq!(out.last(), Some(&changed(S::WaitingForUser, S::Configured)));
    assert!(!lc.is_fatal());
    assert_eq!(lc.poll_timeout(), None);
}

#[test]
fn stdout_eof_of_a_running_server_stops_it_and_rests_in_configured() {
    let mut lc = busy();
    let out = feed(&mut lc, 1, Input::StdoutEof { pid: PID });
    assert_eq!(
        out,
        [
            Action::DropConnection,
            Action::Notify(Notice::Died {
                status: None,
                verdict: Verdict::Recoverable
            }),
            Action::CloseStdin { pid: PID },
            changed(S::Busy, S::Stopping),
        ]
    );
    assert_eq!(lc.last_error(), Some("server 'a' closed its stdout"));
    // Its exit after our SIGTERM does not reclassify it.
    timeout(&mut lc, 5_001);
    let out = feed(
        &mut lc,
        5_002,
        Input::Exited {
            pid: PID,
            status: ExitStatus::Signal(15),
        },
    );
    assert_eq!(
        out,
        [
            Action::KillProcessGroup { pid: PID },
            changed(S::Stopping, S::Configured)
        ]
    );
    assert!(!lc.is_fatal());
}

// ---- odds and ends ----

#[test]
fn stderr_is_kept_in_every_state() {
    let mut lc = Lifecycle::new("a", LIMITS);
    feed(&mut lc, 0, Input::StderrLine("before start\r\n"));
    feed(&mut lc, 0, Input::Start);
    feed(&mut lc, 0, Input::StderrLine("   "));
    feed(&mut lc, 0, Input::StderrLine("listening"));
    assert_eq!(
        lc.stderr().tail(5).collect::<Vec<_>>(),
        ["before start", "listening"]
    );
}

#[test]
fn a_resession_goes_through_initializing() {
    let mut lc = ready();
    assert_eq!(
        feed(&mut lc, 100, Input::HandshakeStarted),
        [changed(S::Ready, S::Initializing)]
    );
    assert_eq!(lc.poll_timeout(), Some(t(10_100)));
    assert_eq!(
        feed(&mut lc, 101, Input::HandshakeOk),
        [changed(S::Initializing, S::Ready)]
    );
}

#[test]
fn events_out_of_place_are_ignored() {
    let mut lc = Lifecycle::new("a", LIMITS);
    for input in [
        Input::HandshakeOk,
        Input::HandshakeStarted,
        Input::HandshakeFailed { error: "x" },
        Input::PromptEnded { ok: true },
        Input::InteractionResolved,
        Input::SpawnFailed { error: "x" },
        Input::Exited {
            pid: 1,
            status: ExitStatus::Code(0),
        },
        Input::StdoutEof { pid: 1 },
    ] {
        assert_eq!(feed(&mut lc, 0, input), [], "{input:?}");
        assert_eq!(lc.state(), S::Configured);
    }
    assert_eq!(lc.last_error(), None);
}

#[test]
fn spurious_timeouts_do_nothing() {
    let mut lc = ready();
    assert_eq!(timeout(&mut lc, u64::MAX), []);
    let mut lc = busy();
    assert_eq!(timeout(&mut lc, 1), []);
    assert_eq!(lc.state(), S::Busy);
}

#[test]
fn last_error_persists_until_reset() {
    let mut lc = busy();
    timeout(&mut lc, 60_000);
    feed(&mut lc, 60_001, Input::PromptStarted);
    feed(&mut lc, 60_002, Input::PromptEnded { ok: true });
    assert!(lc.last_error().is_some());
    lc.reset_last_error();
    assert_eq!(lc.last_error(), None);
}

#[test]
fn state_names_are_agentaos() {
    let names: Vec<String> = [
        S::Configured,
        S::Starting,
        S::Initializing,
        S::Ready,
        S::Busy,
        S::WaitingForUser,
        S::Stopping,
        S::Stopped,
        S::Failed,
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        names,
        [
            "configured",
            "starting",
            "initializing",
            "ready",
            "busy",
            "waiting_for_user",
            "stopping",
            "stopped",
            "failed"
        ]
    );
}

#[test]
fn limits_come_from_the_config() {
    let doc = r#"{"servers": {"r": {"command": "x", "args": [], "env": {}, "cwd": ".",
                 "startupTimeoutMs": 1500, "requestTimeoutMs": 2500, "maxRecoverableRestarts": 1}}}"#;
    let config = acp_host::supervisor::config::AcpConfig::parse(doc, "acp.json", |_| None).unwrap();
    let mut lc = Lifecycle::from_config(&config.servers()[0]);
    assert_eq!(lc.name(), "r");
    feed(&mut lc, 0, Input::Start);
    assert_eq!(lc.poll_timeout(), Some(t(1_500)));
    feed(&mut lc, 0, Input::Spawned { pid: 1 });
    feed(&mut lc, 0, Input::HandshakeOk);
    feed(&mut lc, 0, Input::PromptStarted);
    assert_eq!(lc.poll_timeout(), Some(t(2_500)));
}

// ---- properties over random sequences ----

/// Decodes one random op into an input (or a clock jump plus timeout).
fn op_input(op: u8, arg: u8) -> Option<Input<'static>> {
    let pid = u32::from(arg % 3) + 1;
    let status = if arg.is_multiple_of(2) {
        ExitStatus::Code(i32::from(arg % 5))
    } else {
        ExitStatus::Signal(9)
    };
    Some(match op % 19 {
        0 => Input::Start,
        1 => Input::Connect,
        2 => Input::Stop,
        3 => Input::Restart,
        4 => Input::PromptStarted,
        5 => Input::CancelTurn,
        6 => Input::Spawned { pid },
        7 => Input::SpawnFailed { error: "enoent" },
        8 => Input::Exited { pid, status },
        9 => Input::StdoutEof { pid },
        10 => Input::StderrLine("noise"),
        11 => Input::HandshakeStarted,
        12 => Input::HandshakeOk,
        13 => Input::HandshakeFailed { error: "bad" },
        14 => Input::PromptEnded {
            ok: arg.is_multiple_of(2),
        },
        15 => Input::InteractionOpened,
        16 => Input::InteractionResolved,
        _ => return None, // 17, 18: let time pass
    })
}

#[test]
fn invariants_hold_for_any_sequence() {
    fn property(ops: Vec<(u8, u8, u16)>) -> bool {
        let mut lc = Lifecycle::new(
            "a",
            Limits {
                startup_timeout_ms: 1_000,
                request_timeout_ms: 2_000,
                max_recoverable_restarts: 2,
            },
        );
        let mut now = 0u64;
        for (op, arg, dt) in ops {
            match op_input(op, arg) {
                Some(input) => {
                    let _ = lc.handle(t(now), input);
                }
                None => {
                    now += u64::from(dt);
                    lc.handle_timeout(t(now));
                    // A handled deadline never stays due.
                    if lc.poll_timeout().is_some_and(|d| d <= t(now)) {
                        return false;
                    }
                }
            }
            // The action queue is drained each step and stays small.
            if drain(&mut lc).len() > 10 {
                return false;
            }
            let state = lc.state();
            let resting = matches!(state, S::Configured | S::Stopped | S::Failed);
            if resting && (lc.pid().is_some() || lc.poll_timeout().is_some()) {
                return false;
            }
            if lc.is_fatal() && !matches!(state, S::Failed | S::Stopped | S::Stopping) {
                return false;
            }
            if (lc.open_interactions() > 0) != (state == S::WaitingForUser) {
                return false;
            }
            if matches!(
                state,
                S::Ready | S::Busy | S::WaitingForUser | S::Initializing
            ) && lc.pid().is_none()
            {
                return false;
            }
        }
        true
    }
    quickcheck::QuickCheck::new()
        .tests(2_000)
        .quickcheck(property as fn(Vec<(u8, u8, u16)>) -> bool);
}
