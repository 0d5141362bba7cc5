//! Requests that fail change nothing: a `session/load` or `session/resume` that is refused
//! (no sessions directory, no such session there, a cwd that does not exist) leaves an open
//! session open and a closed one closed, and no sequence of failing requests changes what
//! later requests see.

mod persist_support;

use std::path::{Path, PathBuf};

use acp_cli::store::{SessionHistory, SessionStore, StoreConfig, Timestamp};
use acp_core::schema::{ContentBlock, StopReason};
use persist_support::*;
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// Where a reload fails, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trigger {
    /// An existing directory with no `.agentao/sessions`.
    NoSessionsDirectory,
    /// A directory whose store holds another session only.
    NotFound,
    /// A cwd that does not exist.
    MissingCwd,
}

const TRIGGERS: [Trigger; 3] = [
    Trigger::NoSessionsDirectory,
    Trigger::NotFound,
    Trigger::MissingCwd,
];

/// The three places a reload of any session of the test fails, made once per test.
struct Places {
    empty: PathBuf,
    other: PathBuf,
    missing: PathBuf,
}

impl Places {
    fn new(name: &str) -> Self {
        let empty = scratch(&format!("{name}-empty"));
        let other = scratch(&format!("{name}-other"));
        let mut history = SessionHistory::new("sess_someone_else", "demo");
        history.record_user_prompt(&[ContentBlock::text("elsewhere")]);
        history.end_turn(StopReason::EndTurn);
        SessionStore::new(&other, StoreConfig::default())
            .save(&mut history, Timestamp::from_unix_seconds(1_700_000_000))
            .unwrap();
        let missing = empty.join("gone");
        Self {
            empty,
            other,
            missing,
        }
    }

    fn cwd(&self, trigger: Trigger) -> &Path {
        match trigger {
            Trigger::NoSessionsDirectory => &self.empty,
            Trigger::NotFound => &self.other,
            Trigger::MissingCwd => &self.missing,
        }
    }

    /// The exact error a reload of `session` by `method` gets there.
    fn error(&self, trigger: Trigger, method: &str, session: &str) -> (i64, String) {
        match trigger {
            Trigger::NoSessionsDirectory => {
                (-32600, format!("{method}: No sessions directory found"))
            }
            Trigger::NotFound => (-32600, format!("{method}: Session '{session}' not found")),
            Trigger::MissingCwd => (
                -32602,
                format!(
                    "Invalid params: {method}.cwd does not exist: '{}'",
                    s(&self.missing)
                ),
            ),
        }
    }
}

fn reload_line(id: u64, resume: bool, session: &str, cwd: &Path) -> String {
    match resume {
        true => resume_line(id, session, cwd),
        false => load_line(id, session, cwd),
    }
}

/// R-SESSION-10: for every trigger, a failed `session/load` and a failed `session/resume` of
/// an open session leave it open: it takes prompts, `session/delete` calls it open, and it
/// closes (and is then deleted) as if the reload had never been asked.
#[test]
fn a_failed_reload_leaves_an_open_session_usable_closable_and_deletable() {
    let places = Places::new("persist-fail-reload");
    for trigger in TRIGGERS {
        for resume in [false, true] {
            let method = if resume {
                "session/resume"
            } else {
                "session/load"
            };
            let case = format!("{trigger:?} {method}");
            let cwd = scratch("persist-fail-reload-cwd");
            let mut agent = agent_in("persist-fail-reload-a", &cwd, &[]);
            let session = agent.handshake();
            let lines = agent.call(&reload_line(3, resume, &session, places.cwd(trigger)), 3);
            assert_eq!(lines.len(), 1, "{case}: {lines:?}");
            assert_eq!(
                error_of(&lines[0]),
                places.error(trigger, method, &session),
                "{case}"
            );

            let lines = agent.prompt(4, &session, "/echo still here");
            assert_eq!(messages(&lines), ["still here"], "{case}: {lines:?}");
            assert_eq!(lines.last().unwrap(), &agent::stop(4, "end_turn"), "{case}");
            let lines = agent.call(&by_id_line(5, "session/delete", &session), 5);
            assert_eq!(
                error_of(&lines[0]),
                (
                    -32600,
                    format!("session/delete: session '{session}' is open; close it first")
                ),
                "{case}"
            );
            let lines = agent.call(&by_id_line(6, "session/close", &session), 6);
            assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":6,"result":{}}"#], "{case}");
            let lines = agent.call(&by_id_line(7, "session/delete", &session), 7);
            assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":7,"result":{}}"#], "{case}");
            assert!(session_files(&cwd).is_empty(), "{case}");
        }
    }
}

/// R-SESSION-10: a failed reload of a closed session leaves it closed (`not active`, never
/// `unknown sessionId`), and it still loads from its own cwd afterwards.
#[test]
fn a_failed_reload_leaves_a_closed_session_closed_and_loadable() {
    let places = Places::new("persist-fail-closed");
    let cwd = scratch("persist-fail-closed-cwd");
    let mut agent = agent_in("persist-fail-closed-a", &cwd, &[]);
    let session = agent.handshake();
    agent.prompt(3, &session, "/echo kept");
    agent.call(&by_id_line(4, "session/close", &session), 4);
    let mut id = 5;
    for trigger in TRIGGERS {
        for resume in [false, true] {
            let lines = agent.call(&reload_line(id, resume, &session, places.cwd(trigger)), id);
            assert!(json(&lines[0])["error"].is_object(), "{lines:?}");
            let lines = agent.prompt(id + 1, &session, "/echo no");
            assert_eq!(
                error_of(&lines[0]),
                (-32600, format!("session {session} is not active")),
                "{trigger:?} resume={resume}"
            );
            id += 2;
        }
    }
    let lines = agent.call(&load_line(id, &session, &cwd), id);
    assert_eq!(messages(&lines), ["kept"]);
    assert_eq!(
        history_answer(&mut agent, id + 1, &session),
        "this session has 1 completed turn"
    );
}

/// One request of the property: one that must fail, or a probe whose answer is compared.
#[derive(Clone, Debug)]
enum Op {
    /// `session/load` (or `session/resume`) of the open (or the closed) session, failing.
    Reload {
        trigger: Trigger,
        resume: bool,
        closed: bool,
    },
    /// A request naming a session that never existed.
    Stranger(usize),
    /// `session/delete` of the open session (refused: it is open).
    DeleteOpen,
    /// `session/set_mode` with an empty mode id (refused).
    EmptyMode,
    /// Probe: `/history` in the open session.
    History,
    /// Probe: a prompt in the closed session.
    PromptClosed,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        match u8::arbitrary(g) % 7 {
            0 | 1 => Op::Reload {
                trigger: *g.choose(&TRIGGERS).unwrap(),
                resume: bool::arbitrary(g),
                closed: bool::arbitrary(g),
            },
            2 => Op::Stranger(usize::arbitrary(g) % 3),
            3 => Op::DeleteOpen,
            4 => Op::EmptyMode,
            5 => Op::History,
            _ => Op::PromptClosed,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        quickcheck::empty_shrinker()
    }
}

/// What a probe answered, or that a failing request failed (with its code).
fn run(agent: &mut Agent, places: &Places, open: &str, closed: &str, ops: &[Op]) -> Vec<String> {
    let mut seen = Vec::new();
    for (n, op) in ops.iter().enumerate() {
        let id = 100 + n as u64;
        let line = match op {
            Op::Reload {
                trigger,
                resume,
                closed: of_closed,
            } => {
                let session = if *of_closed { closed } else { open };
                reload_line(id, *resume, session, places.cwd(*trigger))
            }
            Op::Stranger(which) => {
                let method = ["session/prompt", "session/close", "session/set_mode"][*which];
                match method {
                    "session/prompt" => Agent::prompt_line(id, "sess_stranger", "/echo x"),
                    "session/set_mode" => format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/set_mode","params":{{"sessionId":"sess_stranger","modeId":"plan"}}}}"#
                    ),
                    _ => by_id_line(id, method, "sess_stranger"),
                }
            }
            Op::DeleteOpen => by_id_line(id, "session/delete", open),
            Op::EmptyMode => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"session/set_mode","params":{{"sessionId":"{open}","modeId":""}}}}"#
            ),
            Op::History => Agent::prompt_line(id, open, "/history"),
            Op::PromptClosed => Agent::prompt_line(id, closed, "/echo x"),
        };
        let lines = agent.call(&line, id);
        match op {
            Op::History => seen.push(format!("history: {:?}", messages(&lines))),
            Op::PromptClosed => seen.push(format!("closed: {:?}", error_of(&lines[0]))),
            _ => {
                assert_eq!(lines.len(), 1, "{op:?}: {lines:?}");
                assert!(json(&lines[0])["error"].is_object(), "{op:?}: {lines:?}");
            }
        }
    }
    seen
}

/// R-SESSION-10: the probes of a random sequence answer exactly as the probes alone do: the
/// failing requests between them changed nothing they can see.
#[test]
fn no_sequence_of_failing_requests_changes_what_later_requests_see() {
    fn property(ops: Vec<Op>) -> bool {
        let places = Places::new("persist-fail-prop");
        let ops: Vec<Op> = ops.into_iter().take(10).collect();
        let probes: Vec<Op> = ops
            .iter()
            .filter(|op| matches!(op, Op::History | Op::PromptClosed))
            .cloned()
            .collect();
        let mut answers = Vec::new();
        for ops in [&ops, &probes] {
            let cwd = scratch("persist-fail-prop-cwd");
            let mut agent = agent_in("persist-fail-prop-a", &cwd, &[]);
            let closed = agent.handshake();
            agent.call(&by_id_line(3, "session/close", &closed), 3);
            let open = agent.new_session(4);
            let mut seen = run(&mut agent, &places, &open, &closed, ops);
            // The open session still closes, and is then deleted; the closed one is not open.
            let lines = agent.call(&by_id_line(90, "session/close", &open), 90);
            seen.push(lines.join("|"));
            let lines = agent.call(&by_id_line(91, "session/delete", &open), 91);
            seen.push(lines.join("|"));
            let lines = agent.call(&by_id_line(92, "session/delete", &closed), 92);
            seen.push(lines.join("|"));
            answers.push(
                seen.join("\n")
                    .replace(&open, "OPEN")
                    .replace(&closed, "CLOSED"),
            );
        }
        answers[0] == answers[1]
    }
    QuickCheck::new()
        .tests(12)
        .quickcheck(property as fn(Vec<Op>) -> bool);
}
