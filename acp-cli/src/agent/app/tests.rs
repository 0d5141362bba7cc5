//! The application in memory: a virtual clock, a fake workspace, bytes in and out. These
//! cover what the pipe tests cannot show deterministically: the backpressure bound and sleeps
//! on the clock.

use std::cell::RefCell;
use std::collections::HashMap;

use acp_core::Instant;
use acp_core::conn::agent::Limits;

use super::{AgentApp, DEMO_TITLE, Notice, Workspace, agent_config};
use crate::agent::paths::Roots;
use crate::agent::sessions::{CwdKind, SessionTable};
use crate::demo::DemoBackend;
use crate::store::{Deleted, Loaded, Saved, SessionHistory, SessionPage, StoreError};
use acp_core::schema::ListSessionsRequest;

/// Directories that exist, files by path, and every write.
#[derive(Default)]
struct FakeWorkspace {
    dirs: Vec<&'static str>,
    files: HashMap<String, String>,
    writes: RefCell<Vec<(String, String)>>,
    /// Saved sessions by (cwd, id).
    saved: RefCell<HashMap<(String, String), SessionHistory>>,
}

impl Workspace for FakeWorkspace {
    fn cwd_kind(&self, path: &str) -> CwdKind {
        if self.dirs.contains(&path) {
            CwdKind::Directory
        } else if self.files.contains_key(path) {
            CwdKind::NotADirectory
        } else {
            CwdKind::Missing
        }
    }

    fn read(&self, _roots: Roots<'_>, path: &str) -> Result<String, String> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| format!("cannot read '{path}': not found"))
    }

    fn write(&self, _roots: Roots<'_>, path: &str, content: &str) -> Result<(), String> {
        self.writes
            .borrow_mut()
            .push((path.to_owned(), content.to_owned()));
        Ok(())
    }

    fn save_session(&self, cwd: &str, history: &mut SessionHistory) -> Result<Saved, StoreError> {
        self.saved.borrow_mut().insert(
            (cwd.to_owned(), history.session_id().to_owned()),
            history.clone(),
        );
        Ok(Saved::default())
    }

    fn load_session(&self, cwd: &str, id: Option<&str>) -> Result<Loaded, StoreError> {
        let saved = self.saved.borrow();
        let found = saved
            .iter()
            .find(|((c, s), _)| c == cwd && id.is_none_or(|id| id == s))
            .map(|(_, history)| history.clone());
        match found {
            Some(history) => Ok(Loaded {
                history,
                path: "/memory".into(),
                warnings: Vec::new(),
            }),
            None => Err(StoreError::NotFound {
                session_id: id.unwrap_or_default().to_owned(),
            }),
        }
    }

    fn list_sessions(
        &self,
        _request: &ListSessionsRequest,
        _known_cwds: &[std::path::PathBuf],
    ) -> Result<SessionPage, StoreError> {
        Ok(SessionPage {
            response: Default::default(),
            warnings: Vec::new(),
        })
    }

    fn delete_session(&self, cwd: &str, id: &str) -> Result<Deleted, StoreError> {
        match self
            .saved
            .borrow_mut()
            .remove(&(cwd.to_owned(), id.to_owned()))
        {
            Some(_) => Ok(Deleted {
                removed: vec!["/memory".into()],
                warnings: Vec::new(),
            }),
            None => Err(StoreError::NotFound {
                session_id: id.to_owned(),
            }),
        }
    }
}

type App = AgentApp<DemoBackend, FakeWorkspace>;

fn app_with(limits: Limits, workspace: FakeWorkspace) -> App {
    let mut config = agent_config(DEMO_TITLE);
    config.limits = limits;
    AgentApp::new(
        config,
        DemoBackend::new(),
        workspace,
        SessionTable::with_nonce(7),
    )
}

fn workspace() -> FakeWorkspace {
    FakeWorkspace {
        dirs: vec!["/p"],
        ..FakeWorkspace::default()
    }
}

const SID: &str = "sess_00000000000000070000000000000001";

/// Feeds lines and takes everything written, as text.
fn exchange(app: &mut App, now: u64, input: &str) -> String {
    // The connection takes one request line per input (its params are kept until the next
    // one): feed the rest until everything is taken, keeping the output in order.
    let mut rest = input.as_bytes();
    let mut out = String::new();
    while !rest.is_empty() {
        let taken = app.handle_bytes(Instant(now), rest);
        rest = &rest[taken..];
        out.push_str(&take_output(app));
    }
    out
}

fn take_output(app: &mut App) -> String {
    let out = String::from_utf8(app.poll_transmit().to_vec()).expect("utf-8");
    app.transmitted(out.len());
    out
}

fn open_session(app: &mut App) {
    let out = exchange(
        app,
        0,
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
            "\n",
        ),
    );
    assert!(out.contains(SID), "{out}");
}

fn prompt(text: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"{SID}\",\"prompt\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}\n"
    )
}

#[test]
fn the_first_session_names_the_log_directory_once() {
    let mut app = app_with(Limits::default(), workspace());
    open_session(&mut app);
    assert_eq!(
        app.poll_notice(),
        Some(Notice::FirstSession { cwd: "/p".into() })
    );
    exchange(
        &mut app,
        0,
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"session/new\",\"params\":{\"cwd\":\"/p\",\"mcpServers\":[]}}\n",
    );
    assert_eq!(app.poll_notice(), None);
}

#[test]
fn a_client_that_stops_reading_pauses_the_flood_with_bounded_output() {
    let limits = Limits {
        outbox_limit: 64 * 1024,
        outbox_high_water: 16 * 1024,
        ..Limits::default()
    };
    let mut app = app_with(limits, workspace());
    open_session(&mut app);
    app.handle_bytes(Instant(0), prompt("/flood 100000").as_bytes());
    // Nobody writes anything out: the turn pauses once the outbox is over its mark.
    for _ in 0..10 {
        app.pump(Instant(0));
    }
    let pending = app.poll_transmit().len();
    assert!(pending <= 16 * 1024 + 2048, "pending {pending} bytes");
    assert!(pending >= 16 * 1024, "filled up to the mark: {pending}");
    assert!(app.has_ready_turns(), "paused, not finished");

    // Reading again lets it go on, a bounded slice at a time, to the end.
    let mut chunks = 0;
    let mut answer = String::new();
    for _ in 0..100_000 {
        let out = take_output(&mut app);
        assert!(out.len() <= 16 * 1024 + 2048);
        chunks += out.matches("agent_message_chunk").count();
        if let Some(line) = out.lines().find(|l| l.contains("stopReason")) {
            answer = line.to_owned();
            break;
        }
        app.pump(Instant(0));
    }
    assert_eq!(chunks, 100_000);
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#
    );
}

#[test]
fn a_sleep_is_a_deadline_on_the_clock() {
    let mut app = app_with(Limits::default(), workspace());
    open_session(&mut app);
    let out = exchange(&mut app, 1000, &prompt("/sleep 250\\n/echo awake"));
    assert_eq!(
        out,
        format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"{SID}\",\"update\":{{\"sessionUpdate\":\"session_info_update\",\"title\":\"/sleep 250\"}}}}}}\n"
        ),
        "only the first prompt's title before the sleep"
    );
    assert_eq!(app.poll_timeout(), Some(Instant(1250)));
    app.handle_timeout(Instant(1249));
    assert_eq!(take_output(&mut app), "");
    app.handle_timeout(Instant(1250));
    let out = take_output(&mut app);
    assert!(out.contains("\"text\":\"awake\""), "{out}");
    assert!(
        out.ends_with("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}\n")
    );
    assert_eq!(app.poll_timeout(), None);
}

#[test]
fn local_files_go_through_the_workspace() {
    let mut ws = workspace();
    ws.files.insert("/p/a.txt".into(), "four".into());
    let mut app = app_with(Limits::default(), ws);
    open_session(&mut app);
    let mut config = app.sessions.get(SID).cloned().expect("session");
    config.set_mode("full-access");
    *app.sessions.get_mut(SID).expect("session") = config;
    let out = exchange(
        &mut app,
        0,
        &prompt("/read a.txt\\n/write b.txt hi\\n/read nope.txt"),
    );
    assert!(out.contains("Read 4 bytes from /p/a.txt"), "{out}");
    assert!(out.contains("Wrote 2 bytes to /p/b.txt"), "{out}");
    assert!(
        out.contains("Error: cannot read '/p/nope.txt': not found"),
        "{out}"
    );
    assert_eq!(
        *app.workspace.writes.borrow(),
        [("/p/b.txt".to_owned(), "hi".to_owned())]
    );
}

#[test]
fn eof_answers_a_running_turn_cancelled_and_closes() {
    let mut app = app_with(Limits::default(), workspace());
    open_session(&mut app);
    exchange(&mut app, 0, &prompt("/sleep 100000"));
    app.handle_eof(Instant(5));
    assert!(app.is_closed());
    assert_eq!(
        take_output(&mut app),
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"cancelled\"}}\n"
    );
    assert_eq!(app.poll_timeout(), None, "nothing left to wake up for");
}

/// The `id` of the last request line in `out` whose method is `method`.
fn request_id(out: &str, method: &str) -> String {
    let line = out
        .lines()
        .rev()
        .find(|l| l.contains(&format!("\"method\":\"{method}\"")))
        .unwrap_or_else(|| panic!("no {method} in {out}"));
    let start = line.find("\"id\":").expect("id") + 5;
    let end = line[start..].find(',').expect("end");
    line[start..start + end].to_owned()
}

#[test]
fn a_late_file_answer_from_a_cancelled_turn_never_reaches_the_next_turn() {
    let mut app = app_with(Limits::default(), workspace());
    let out = exchange(
        &mut app,
        0,
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
            "\n",
        ),
    );
    assert!(out.contains(SID));
    let out = exchange(&mut app, 0, &prompt("/read a.txt"));
    let first = request_id(&out, "fs/read_text_file");
    let cancel = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{{\"sessionId\":\"{SID}\"}}}}\n"
    );
    let out = exchange(&mut app, 0, &cancel);
    assert!(
        out.ends_with("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"cancelled\"}}\n"),
        "{out}"
    );

    let next = prompt("/read b.txt").replace("\"id\":3", "\"id\":4");
    let out = exchange(&mut app, 0, &next);
    let second = request_id(&out, "fs/read_text_file");
    assert_ne!(first, second);
    // The first read's answer arrives late: nothing happens.
    let late = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{first},\"result\":{{\"content\":\"0123456789\"}}}}\n"
    );
    assert_eq!(exchange(&mut app, 0, &late), "");
    // The second read's answer completes the second turn with its own content.
    let answer =
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{second},\"result\":{{\"content\":\"xy\"}}}}\n");
    let out = exchange(&mut app, 0, &answer);
    assert!(out.contains("Read 2 bytes from /p/b.txt"), "{out}");
    assert!(
        out.ends_with("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"stopReason\":\"end_turn\"}}\n")
    );
}

#[test]
fn a_long_replay_waits_for_the_client_to_read_and_the_answer_comes_last() {
    let limits = Limits {
        outbox_limit: 64 * 1024,
        outbox_high_water: 16 * 1024,
        ..Limits::default()
    };
    let workspace = workspace();
    let mut history = SessionHistory::new("sess_stored", "demo");
    for n in 0..2000 {
        history.record_user_prompt(&[acp_core::schema::ContentBlock::text(format!("turn {n}"))]);
        history.end_turn(acp_core::schema::StopReason::EndTurn);
    }
    workspace
        .saved
        .borrow_mut()
        .insert(("/p".into(), "sess_stored".into()), history);
    let mut app = app_with(limits, workspace);
    let load = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"sess_stored","cwd":"/p","mcpServers":[]}}"#,
        "\n",
    );
    // Two request lines: the connection takes the second in the next input.
    let taken = app.handle_bytes(Instant(0), load.as_bytes());
    let initialized = take_output(&mut app);
    assert!(initialized.contains("\"id\":1"), "{initialized}");
    app.handle_bytes(Instant(0), &load.as_bytes()[taken..]);
    for _ in 0..10 {
        app.pump(Instant(0));
    }
    let pending = app.poll_transmit().len();
    assert!(pending <= 16 * 1024 + 2048, "pending {pending} bytes");

    let mut replayed = 0;
    let mut answer = String::new();
    for _ in 0..10_000 {
        let out = take_output(&mut app);
        for line in out.lines() {
            if line.contains("user_message_chunk") {
                assert!(answer.is_empty(), "an update after the answer: {line}");
                replayed += 1;
            } else if line.contains("\"id\":2") {
                answer = line.to_owned();
            }
        }
        if !answer.is_empty() {
            break;
        }
        app.pump(Instant(0));
    }
    assert_eq!(replayed, 2000);
    assert!(answer.contains("\"configOptions\""), "{answer}");
    assert!(answer.contains("\"modes\""), "{answer}");
}

/// The `sessionUpdate` tag of each line of `out` (`-` for lines that are not updates), with
/// the id of each answer: a transcript's shape.
fn shape(out: &str) -> Vec<String> {
    out.lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
            match (&value["params"]["update"]["sessionUpdate"], &value["id"]) {
                (serde_json::Value::String(tag), _) => tag.clone(),
                (_, serde_json::Value::Number(id)) => format!("answer {id}"),
                _ => format!("- {line}"),
            }
        })
        .collect()
}

/// The first line of `out` whose update is `tag`, parsed.
fn update_of(out: &str, tag: &str) -> serde_json::Value {
    out.lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON"))
        .find(|v| v["params"]["update"]["sessionUpdate"] == tag)
        .unwrap_or_else(|| panic!("no {tag} in {out}"))
}

#[test]
fn every_opened_session_is_told_the_commands_right_after_its_answer() {
    let mut app = app_with(Limits::default(), workspace());
    let out = exchange(
        &mut app,
        0,
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
            "\n",
        ),
    );
    assert_eq!(
        shape(&out),
        ["answer 1", "answer 2", "available_commands_update"]
    );
    let update = update_of(&out, "available_commands_update");
    assert_eq!(update["params"]["sessionId"], SID);
    let commands = update["params"]["update"]["availableCommands"]
        .as_array()
        .expect("a list");
    let names: Vec<&str> = commands.iter().filter_map(|c| c["name"].as_str()).collect();
    let expected: Vec<&str> = crate::demo::script::COMMANDS
        .iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, expected);
    assert_eq!(
        commands[0],
        serde_json::json!({"name":"echo","description":"Send TEXT back as one message chunk","input":{"hint":"TEXT"}})
    );

    // A finished turn is saved; loading and resuming it are announced the same way.
    exchange(&mut app, 0, &prompt("hello"));
    for (id, method) in [(5, "session/load"), (6, "session/resume")] {
        let close = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"session/close\",\"params\":{{\"sessionId\":\"{SID}\"}}}}\n",
            id + 10
        );
        exchange(&mut app, 0, &close);
        let open = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{{\"sessionId\":\"{SID}\",\"cwd\":\"/p\",\"mcpServers\":[]}}}}\n"
        );
        let out = exchange(&mut app, 0, &open);
        let shape = shape(&out);
        assert_eq!(
            shape[shape.len() - 2..],
            [
                format!("answer {id}"),
                "available_commands_update".to_owned()
            ],
            "{method}: {out}"
        );
    }
}

#[test]
fn a_turn_closes_with_its_usage_before_the_answer_and_only_the_first_is_titled() {
    let mut app = app_with(Limits::default(), workspace());
    open_session(&mut app);
    let out = exchange(&mut app, 0, &prompt("Fix the build\\n/echo ok"));
    assert_eq!(
        shape(&out),
        [
            "session_info_update",
            "agent_message_chunk",
            "agent_message_chunk",
            "usage_update",
            "answer 3"
        ]
    );
    assert_eq!(
        update_of(&out, "session_info_update")["params"]["update"],
        serde_json::json!({"sessionUpdate":"session_info_update","title":"Fix the build"})
    );
    // "Fix the build\n/echo ok" (22 bytes) and "Fix the build" echoed, "ok" sent.
    assert_eq!(
        update_of(&out, "usage_update")["params"]["update"],
        serde_json::json!({"sessionUpdate":"usage_update","used":37,"size":1000000})
    );
    let next = prompt("again").replace("\"id\":3", "\"id\":4");
    let out = exchange(&mut app, 0, &next);
    assert_eq!(
        shape(&out),
        ["agent_message_chunk", "usage_update", "answer 4"]
    );
    assert_eq!(
        update_of(&out, "usage_update")["params"]["update"]["used"],
        37 + 5 + 5
    );
}

/// `session/new` in `/p` with these `additionalDirectories` (a JSON array).
fn new_with_directories(id: u64, directories: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"session/new\",\"params\":{{\"cwd\":\"/p\",\"additionalDirectories\":{directories},\"mcpServers\":[]}}}}\n"
    )
}

fn initialized() -> App {
    let mut ws = workspace();
    ws.dirs.push("/data");
    ws.files.insert("/etc/hosts".into(), "x".into());
    ws.files.insert("/data/a.txt".into(), "shared".into());
    let mut app = app_with(Limits::default(), ws);
    exchange(
        &mut app,
        0,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
    );
    app
}

#[test]
fn additional_directories_that_are_relative_or_missing_are_refused_with_their_index() {
    let mut app = initialized();
    for (directories, message) in [
        (
            r#"["x"]"#,
            "Invalid params: session/new.additionalDirectories[0] must be an absolute path, got 'x'",
        ),
        (
            r#"["/data","/gone"]"#,
            "Invalid params: session/new.additionalDirectories[1] does not exist: '/gone'",
        ),
        (
            r#"["/etc/hosts"]"#,
            "Invalid params: session/new.additionalDirectories[0] is not a directory: '/etc/hosts'",
        ),
    ] {
        let out = exchange(&mut app, 0, &new_with_directories(2, directories));
        assert_eq!(
            out,
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{{\"code\":-32602,\"message\":\"{message}\"}}}}\n"
            )
        );
    }
    assert_eq!(app.sessions.len(), 0, "no session was opened");
}

#[test]
fn additional_directories_are_inside_the_session_saved_and_restored_on_load() {
    let mut app = initialized();
    let out = exchange(&mut app, 0, &new_with_directories(2, r#"["/data"]"#));
    assert!(out.contains(SID), "{out}");
    assert_eq!(
        app.sessions.get(SID).unwrap().additional_directories,
        ["/data"]
    );
    let mut state = app.sessions.get(SID).cloned().expect("session");
    state.set_mode("full-access");
    *app.sessions.get_mut(SID).expect("session") = state;
    let out = exchange(
        &mut app,
        0,
        &prompt("/read /data/a.txt\\n/read /elsewhere/b.txt"),
    );
    assert!(out.contains("Read 6 bytes from /data/a.txt"), "{out}");
    assert!(
        out.contains(
            "Error: '/elsewhere/b.txt' is outside the session cwd '/p' and its additional directories"
        ),
        "{out}"
    );
    let saved = app.workspace.saved.borrow()[&("/p".to_owned(), SID.to_owned())].clone();
    assert_eq!(
        saved.additional_directories,
        ["/data"],
        "saved with the session"
    );

    // Loaded without a list: the stored one comes back. With a list: that list replaces it.
    let close = |id: u64| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"session/close\",\"params\":{{\"sessionId\":\"{SID}\"}}}}\n"
        )
    };
    exchange(&mut app, 0, &close(4));
    exchange(
        &mut app,
        0,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session/load\",\"params\":{{\"sessionId\":\"{SID}\",\"cwd\":\"/p\",\"mcpServers\":[]}}}}\n"
        ),
    );
    assert_eq!(
        app.sessions.get(SID).unwrap().additional_directories,
        ["/data"]
    );
    exchange(&mut app, 0, &close(6));
    let out = exchange(
        &mut app,
        0,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/resume\",\"params\":{{\"sessionId\":\"{SID}\",\"cwd\":\"/p\",\"additionalDirectories\":[\"/p\"],\"mcpServers\":[]}}}}\n"
        ),
    );
    assert!(out.contains("\"id\":7,\"result\""), "{out}");
    assert_eq!(
        app.sessions.get(SID).unwrap().additional_directories,
        ["/p"]
    );
    exchange(&mut app, 0, &close(8));
    let out = exchange(
        &mut app,
        0,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"session/load\",\"params\":{{\"sessionId\":\"{SID}\",\"cwd\":\"/p\",\"additionalDirectories\":[\"rel\"],\"mcpServers\":[]}}}}\n"
        ),
    );
    assert_eq!(
        out,
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32602,\"message\":\"Invalid params: session/load.additionalDirectories[0] must be an absolute path, got 'rel'\"}}\n"
    );
}

#[test]
fn a_stored_directory_that_is_gone_is_not_restored() {
    let mut app = initialized();
    let mut history = SessionHistory::new("sess_old", "demo");
    history.record_user_prompt(&[acp_core::schema::ContentBlock::text("hi")]);
    history.end_turn(acp_core::schema::StopReason::EndTurn);
    history.additional_directories = vec!["/data".into(), "/gone".into()];
    app.workspace
        .saved
        .borrow_mut()
        .insert(("/p".into(), "sess_old".into()), history);
    exchange(
        &mut app,
        0,
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/resume\",\"params\":{\"sessionId\":\"sess_old\",\"cwd\":\"/p\",\"mcpServers\":[]}}\n",
    );
    assert_eq!(
        app.sessions.get("sess_old").unwrap().additional_directories,
        ["/data"]
    );
}

#[test]
fn a_system_prompt_is_kept_with_the_session_and_history_mentions_it() {
    let mut app = initialized();
    let new = |id: u64, system_prompt: &str| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"session/new\",\"params\":{{\"cwd\":\"/p\",\"systemPrompt\":{system_prompt},\"mcpServers\":[]}}}}\n"
        )
    };
    for (system_prompt, message) in [
        (
            r#"{"mode":"override","content":[{"type":"text","text":"x"}]}"#,
            "Invalid params: session/new.systemPrompt.mode 'override' is not supported; only 'append' is advertised",
        ),
        (
            r#"{"mode":"append","content":[]}"#,
            "Invalid params: session/new.systemPrompt.content must not be empty",
        ),
        (
            r#"{"mode":"append","content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}"#,
            "Invalid params: session/new.systemPrompt.content[0] must be a text block, got 'resource_link'",
        ),
    ] {
        assert_eq!(
            exchange(&mut app, 0, &new(2, system_prompt)),
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{{\"code\":-32602,\"message\":\"{message}\"}}}}\n"
            )
        );
    }
    let out = exchange(
        &mut app,
        0,
        &new(
            2,
            r#"{"mode":"append","content":[{"type":"text","text":"Be brief."}]}"#,
        ),
    );
    assert!(out.contains(SID), "{out}");
    assert_eq!(
        app.sessions.get(SID).unwrap().system_prompt.as_deref(),
        Some("Be brief.")
    );
    let out = exchange(&mut app, 0, &prompt("/history"));
    assert!(
        out.contains("\"text\":\"this session has 0 completed turns; a system prompt is set\""),
        "{out}"
    );
    let saved = app.workspace.saved.borrow()[&("/p".to_owned(), SID.to_owned())].clone();
    assert_eq!(saved.system_prompt.as_deref(), Some("Be brief."));

    // Reloaded without one, the stored prompt comes back; a new one replaces it.
    for (id, params, expected) in [
        (5, "", "Be brief."),
        (
            7,
            r#","systemPrompt":{"mode":"append","content":[{"type":"text","text":"Be kind."}]}"#,
            "Be kind.",
        ),
    ] {
        exchange(
            &mut app,
            0,
            &format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"session/close\",\"params\":{{\"sessionId\":\"{SID}\"}}}}\n",
                id - 1
            ),
        );
        exchange(
            &mut app,
            0,
            &format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"session/load\",\"params\":{{\"sessionId\":\"{SID}\",\"cwd\":\"/p\",\"mcpServers\":[]{params}}}}}\n"
            ),
        );
        assert_eq!(
            app.sessions.get(SID).unwrap().system_prompt.as_deref(),
            Some(expected)
        );
    }
}

#[test]
fn resume_flag_restores_the_stored_directories_and_system_prompt_unless_the_request_gives_its_own()
{
    for (params, directories, system_prompt) in [
        ("", vec!["/data"], "Stored."),
        (
            r#","additionalDirectories":["/p"],"systemPrompt":{"mode":"append","content":[{"type":"text","text":"New."}]}"#,
            vec!["/p"],
            "New.",
        ),
    ] {
        let mut app = initialized();
        let mut history = SessionHistory::new("sess_old", "demo");
        history.record_user_prompt(&[acp_core::schema::ContentBlock::text("hi")]);
        history.end_turn(acp_core::schema::StopReason::EndTurn);
        history.additional_directories = vec!["/data".into()];
        history.system_prompt = Some("Stored.".into());
        app.workspace
            .saved
            .borrow_mut()
            .insert(("/p".into(), "sess_old".into()), history);
        app.resume_first_session("");
        let out = exchange(
            &mut app,
            0,
            &format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{{\"cwd\":\"/p\",\"mcpServers\":[]{params}}}}}\n"
            ),
        );
        assert!(out.contains("\"sessionId\":\"sess_old\""), "{out}");
        let session = app.sessions.get("sess_old").expect("resumed");
        assert_eq!(session.additional_directories, directories, "{params}");
        assert_eq!(session.system_prompt.as_deref(), Some(system_prompt));
    }
}

#[test]
fn resume_answers_session_new_then_replays_and_a_prompt_sent_meanwhile_waits_for_the_replay() {
    let limits = Limits {
        outbox_limit: 64 * 1024,
        outbox_high_water: 16 * 1024,
        ..Limits::default()
    };
    let workspace = workspace();
    let mut history = SessionHistory::new("sess_stored", "demo");
    for n in 0..2000 {
        history.record_user_prompt(&[acp_core::schema::ContentBlock::text(format!("turn {n}"))]);
        history.end_turn(acp_core::schema::StopReason::EndTurn);
    }
    workspace
        .saved
        .borrow_mut()
        .insert(("/p".into(), "sess_stored".into()), history);
    let mut app = app_with(limits, workspace);
    app.resume_first_session("");
    let open = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
        "\n",
    );
    let mut lines: Vec<String> = Vec::new();
    let out = exchange(&mut app, 0, open);
    assert!(
        out.len() <= 16 * 1024 + 2048,
        "bounded: {} bytes",
        out.len()
    );
    lines.extend(out.lines().map(str::to_owned));
    // The client has the answer and prompts at once, without reading the rest of the replay.
    let prompt = r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess_stored","prompt":[{"type":"text","text":"/echo after"}]}}"#;
    let input = format!("{prompt}\n");
    let mut fed = 0;
    for _ in 0..10_000 {
        fed += app.handle_bytes(Instant(0), &input.as_bytes()[fed..]);
        app.pump(Instant(0));
        let out = take_output(&mut app);
        assert!(
            out.len() <= 16 * 1024 + 2048,
            "bounded: {} bytes",
            out.len()
        );
        lines.extend(out.lines().map(str::to_owned));
        if lines.last().is_some_and(|l| l.contains("stopReason")) {
            break;
        }
    }
    assert_eq!(fed, input.len());
    let answer = lines
        .iter()
        .position(|l| {
            l.starts_with(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess_stored""#)
        })
        .expect("session/new answered");
    let replayed: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("user_message_chunk"))
        .collect();
    let echoed = lines
        .iter()
        .position(|l| l.contains(r#""text":"after""#))
        .expect("the prompt ran");
    assert_eq!(replayed.len(), 2000);
    assert!(answer < replayed[0], "the answer first");
    assert!(
        lines[replayed[1999]].contains(r#""text":"turn 1999""#),
        "in order: {}",
        lines[replayed[1999]]
    );
    assert!(
        replayed[1999] < echoed,
        "the whole history before the new turn"
    );
    assert_eq!(
        lines.last().unwrap(),
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#
    );
}

#[test]
fn closing_a_resumed_session_stops_its_replay() {
    let limits = Limits {
        outbox_limit: 64 * 1024,
        outbox_high_water: 16 * 1024,
        ..Limits::default()
    };
    let workspace = workspace();
    let mut history = SessionHistory::new("sess_stored", "demo");
    for n in 0..2000 {
        history.record_user_prompt(&[acp_core::schema::ContentBlock::text(format!("turn {n}"))]);
        history.end_turn(acp_core::schema::StopReason::EndTurn);
    }
    workspace
        .saved
        .borrow_mut()
        .insert(("/p".into(), "sess_stored".into()), history);
    let mut app = app_with(limits, workspace);
    app.resume_first_session("sess_stored");
    let open = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
        "\n",
    );
    let first = exchange(&mut app, 0, open);
    let replayed_before_close = first.matches("user_message_chunk").count();
    assert!(
        (1..2000).contains(&replayed_before_close),
        "{replayed_before_close}"
    );
    let close =
        r#"{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"sess_stored"}}"#;
    let input = format!("{close}\n");
    let mut fed = 0;
    let mut after = String::new();
    for _ in 0..10_000 {
        fed += app.handle_bytes(Instant(0), &input.as_bytes()[fed..]);
        app.pump(Instant(0));
        let out = take_output(&mut app);
        if out.is_empty() && fed == input.len() {
            break;
        }
        after.push_str(&out);
    }
    let answer = after
        .find(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#)
        .expect("session/close answered");
    assert!(
        !after[answer..].contains("user_message_chunk"),
        "nothing of the replay after the close: {}",
        &after[answer..]
    );
    assert!(
        replayed_before_close + after.matches("user_message_chunk").count() < 2000,
        "the replay stopped short"
    );
}

mod llm;
