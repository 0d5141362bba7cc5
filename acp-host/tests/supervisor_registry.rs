//! The multi-server `Supervisor`: names, merged polling, bulk start/stop, and questions that
//! outlive their turn.

use acp_host::supervisor::config::AcpConfig;
use acp_host::supervisor::interaction::{InteractionId, InteractionKind};
use acp_host::supervisor::lifecycle::{Action, Input, Notice, ServerState as S};
use acp_host::supervisor::recovery::ExitStatus;
use acp_host::supervisor::{Instant, Supervisor, SupervisorError};

fn config() -> AcpConfig {
    let doc = r#"{"servers": {
        "planner": {"command": "p", "args": [], "env": {}, "cwd": ".", "startupTimeoutMs": 3000},
        "reviewer": {"command": "r", "args": [], "env": {}, "cwd": ".", "autoStart": false}
    }}"#;
    AcpConfig::parse(doc, "acp.json", |_| None).unwrap()
}

fn drain(sup: &mut Supervisor<&'static str>) -> Vec<(String, Action)> {
    std::iter::from_fn(|| sup.poll_action().map(|(n, a)| (n.to_string(), a)))
        .take(100)
        .collect()
}

fn ready(sup: &mut Supervisor<&'static str>, name: &str, pid: u32) {
    sup.handle(Instant(0), name, Input::Start).unwrap();
    sup.handle(Instant(0), name, Input::Spawned { pid })
        .unwrap();
    sup.handle(Instant(0), name, Input::HandshakeOk).unwrap();
    drain(sup);
}

#[test]
fn unknown_names_are_an_error_with_agentaos_text() {
    let mut sup: Supervisor<&str> = Supervisor::new(&config(), 0);
    let err = sup
        .handle(Instant(0), "nobody", Input::CancelTurn)
        .unwrap_err();
    assert_eq!(err, SupervisorError::UnknownServer("nobody".into()));
    assert_eq!(err.to_string(), "no ACP server named 'nobody'");
    assert!(sup.server("nobody").is_none());
}

#[test]
fn refusals_pass_through_with_their_text() {
    let mut sup: Supervisor<&str> = Supervisor::new(&config(), 0);
    let err = sup
        .handle(Instant(0), "planner", Input::CancelTurn)
        .unwrap_err();
    assert_eq!(err.to_string(), "server 'planner' has no active turn");
}

#[test]
fn start_auto_starts_only_auto_start_servers_and_polling_names_them() {
    let mut sup: Supervisor<&str> = Supervisor::new(&config(), 0);
    assert_eq!(sup.running_count(), (0, 2));
    sup.start_auto(Instant(10));
    let actions = drain(&mut sup);
    assert_eq!(
        actions,
        [
            ("planner".to_string(), Action::Spawn),
            (
                "planner".to_string(),
                Action::Notify(Notice::StateChanged {
                    from: S::Configured,
                    to: S::Starting
                })
            ),
        ]
    );
    assert_eq!(sup.server("reviewer").unwrap().state(), S::Configured);
    assert_eq!(sup.running_count(), (1, 2));
    assert_eq!(sup.poll_timeout(), Some(Instant(3_010)));
}

#[test]
fn polling_takes_turns_between_servers() {
    let mut sup: Supervisor<&str> = Supervisor::new(&config(), 0);
    sup.handle(Instant(0), "planner", Input::Start).unwrap();
    sup.handle(Instant(0), "reviewer", Input::Start).unwrap();
    let names: Vec<String> = drain(&mut sup).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["planner", "reviewer", "planner", "reviewer"]);
}

#[test]
fn the_earliest_deadline_of_all_servers_is_reported_and_handled() {
    let mut sup: Supervisor<&str> = Supervisor::new(&config(), 0);
    sup.handle(Instant(0), "reviewer", Input::Start).unwrap(); // 10 s default
    sup.handle(Instant(100), "planner", Input::Start).unwrap(); // 3 s
    drain(&mut sup);
    assert_eq!(sup.poll_timeout(), Some(Instant(3_100)));
    sup.handle_timeout(Instant(3_100));
    assert_eq!(sup.server("planner").unwrap().state(), S::Failed);
    assert_eq!(sup.server("reviewer").unwrap().state(), S::Starting);
    assert_eq!(sup.poll_timeout(), Some(Instant(10_000)));
}

#[test]
fn stop_all_stops_every_server() {
    let mut sup: Supervisor<&str> = Supervisor::new(&config(), 0);
    ready(&mut sup, "planner", 11);
    sup.stop_all(Instant(5));
    let actions = drain(&mut sup);
    assert!(actions.contains(&("planner".to_string(), Action::CloseStdin { pid: 11 })));
    assert_eq!(sup.server("planner").unwrap().state(), S::Stopping);
    assert_eq!(sup.server("reviewer").unwrap().state(), S::Stopped);
}

#[test]
fn a_question_moves_the_server_to_waiting_and_its_answer_back() {
    let mut sup: Supervisor<&'static str> = Supervisor::new(&config(), 3);
    ready(&mut sup, "planner", 11);
    sup.handle(Instant(1), "planner", Input::PromptStarted)
        .unwrap();
    let id = sup
        .open_interaction(
            Instant(2),
            "planner",
            Some("sess_1"),
            InteractionKind::Permission,
            "Allow edit?",
            "t1",
        )
        .unwrap();
    assert_eq!(sup.server("planner").unwrap().state(), S::WaitingForUser);
    assert_eq!(sup.interactions().len(), 1);
    assert!(
        sup.resolve_interaction(Instant(3), "reviewer", id)
            .is_none(),
        "another server's id"
    );
    let answered = sup.resolve_interaction(Instant(3), "planner", id).unwrap();
    assert_eq!(answered.ticket, "t1");
    assert_eq!(sup.server("planner").unwrap().state(), S::Busy);
    assert!(
        sup.resolve_interaction(Instant(4), "planner", id).is_none(),
        "answered once"
    );
}

#[test]
fn questions_for_a_server_without_a_session_are_refused() {
    let mut sup: Supervisor<&'static str> = Supervisor::new(&config(), 0);
    let refused = sup.open_interaction(
        Instant(0),
        "planner",
        None,
        InteractionKind::Input,
        "?",
        "t",
    );
    assert_eq!(refused, Err("t"));
    let refused =
        sup.open_interaction(Instant(0), "ghost", None, InteractionKind::Input, "?", "t2");
    assert_eq!(refused, Err("t2"));
    assert!(sup.interactions().is_empty());
}

#[test]
fn questions_outliving_their_turn_are_handed_back() {
    let mut sup: Supervisor<&'static str> = Supervisor::new(&config(), 0);
    ready(&mut sup, "planner", 11);
    sup.handle(Instant(1), "planner", Input::PromptStarted)
        .unwrap();
    sup.open_interaction(
        Instant(2),
        "planner",
        None,
        InteractionKind::Permission,
        "a",
        "t1",
    )
    .unwrap();
    sup.open_interaction(
        Instant(2),
        "planner",
        None,
        InteractionKind::Input,
        "b",
        "t2",
    )
    .unwrap();
    assert!(sup.poll_abandoned().is_none());
    sup.handle(Instant(3), "planner", Input::PromptEnded { ok: true })
        .unwrap();
    let tickets: Vec<&str> = std::iter::from_fn(|| sup.poll_abandoned())
        .map(|i| i.ticket)
        .collect();
    assert_eq!(tickets, ["t1", "t2"]);
    assert!(sup.interactions().is_empty());
}

#[test]
fn questions_of_a_crashed_server_are_handed_back() {
    let mut sup: Supervisor<&'static str> = Supervisor::new(&config(), 0);
    ready(&mut sup, "planner", 11);
    let id = sup
        .open_interaction(
            Instant(2),
            "planner",
            None,
            InteractionKind::Input,
            "b",
            "t",
        )
        .unwrap();
    sup.handle(
        Instant(3),
        "planner",
        Input::Exited {
            pid: 11,
            status: ExitStatus::Code(1),
        },
    )
    .unwrap();
    assert_eq!(sup.poll_abandoned().map(|i| i.id), Some(id));
    assert_eq!(sup.resolve_interaction(Instant(4), "planner", id), None);
    assert_eq!(InteractionId::parse(&id.to_string()), Some(id));
}

#[test]
fn config_and_servers_are_in_file_order() {
    let sup: Supervisor<()> = Supervisor::new(&config(), 0);
    let names: Vec<&str> = sup.servers().map(|(c, _)| c.name.as_str()).collect();
    assert_eq!(names, ["planner", "reviewer"]);
    assert_eq!(sup.config("planner").unwrap().startup_timeout_ms, 3000);
}
