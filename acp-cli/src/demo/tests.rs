//! The demo backend, command by command and rule by rule, on a fake clock with fake file
//! results. Steps are rendered as short lines so each test reads as a transcript.

use acp_core::Instant;
use acp_core::machine::permission::{PermissionChoice, PermissionDecision, RejectReason};
use acp_core::schema::{
    ContentBlock, IdleState, IdleStopReason, PlanUpdateContent, SessionMessage, SessionUpdate,
    StateUpdate, SubagentUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolKind,
};
use acp_core::wire::ErrorCode;

use super::DemoBackend;
use crate::agent::backend::{Backend, ClientFs, Reply, Step, TurnStart};
use crate::agent::modes::Posture;

const CWD: &str = "/home/user/project";
const S: &str = "sess-1";

fn start(backend: &mut DemoBackend, session: &str, text: &str, posture: Posture, fs: ClientFs) {
    let prompt = [ContentBlock::text(text)];
    // As the application does: the prompt is recorded before the turn starts.
    let mut history = crate::store::SessionHistory::new(session, "demo");
    history.record_user_prompt(&prompt);
    backend.start_turn(
        TurnStart {
            session,
            cwd: CWD,
            additional_directories: &[],
            system_prompt: None,
            posture,
            client_fs: fs,
            client_terminal: false,
            client_plan: false,
            prompt: &prompt,
            history: &history,
            mcp_tools: &[],
        },
        Instant(1000),
    );
}

fn text_of(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        other => format!("<{}>", other.type_name()),
    }
}

fn contents(content: &[ToolCallContent]) -> String {
    content
        .iter()
        .map(|c| match c {
            ToolCallContent::Content(c) => format!("text:{}", text_of(&c.content)),
            ToolCallContent::Diff(d) => {
                format!("diff:{} old={:?} new={:?}", d.path, d.old_text, d.new_text)
            }
            ToolCallContent::Terminal(t) => format!("terminal:{}", t.terminal_id),
            _ => "other".to_owned(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn render(step: &Step) -> String {
    match step {
        Step::Update(update) => match update {
            SessionUpdate::AgentMessageChunk(c) => format!("message: {}", text_of(&c.content)),
            SessionUpdate::AgentThoughtChunk(c) => format!("thought: {}", text_of(&c.content)),
            SessionUpdate::Plan(plan) => format!(
                "plan: {}",
                plan.entries
                    .iter()
                    .map(|e| format!("{} ({}, {})", e.content, e.status, e.priority))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
            SessionUpdate::ToolCall(call) => format!(
                "tool_call {} {} {} '{}' at [{}] [{}]",
                call.tool_call_id,
                call.status(),
                call.kind(),
                call.title,
                call.locations
                    .iter()
                    .map(|l| l.path.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
                contents(&call.content),
            ),
            SessionUpdate::ToolCallUpdate(u) => format!(
                "tool_call_update {} {} [{}]",
                u.tool_call_id,
                u.status.map(|s| s.to_string()).unwrap_or_default(),
                contents(u.content.as_deref().unwrap_or(&[])),
            ),
            SessionUpdate::SessionInfoUpdate(info) => match &info.title {
                Some(Some(title)) => format!("title: {title}"),
                other => format!("title patch: {other:?}"),
            },
            SessionUpdate::UsageUpdate(usage) => format!(
                "usage: {}/{}{}",
                usage.used,
                usage.size,
                usage
                    .cost
                    .as_ref()
                    .map(|c| format!(" cost {} {}", c.amount, c.currency))
                    .unwrap_or_default()
            ),
            SessionUpdate::Notice(notice) => format!(
                "notice {}: {}{}",
                notice.severity,
                notice.title,
                notice
                    .description
                    .as_ref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            ),
            other => format!("update {}", other.kind()),
        },
        Step::RequestPermission(u) => format!(
            "permission? {} {} '{}' [{}]",
            u.tool_call_id,
            u.kind.as_ref().map(|k| k.to_string()).unwrap_or_default(),
            u.title.clone().unwrap_or_default(),
            contents(u.content.as_deref().unwrap_or(&[])),
        ),
        Step::AskUser(q) => format!("ask? {q}"),
        Step::ReadFile { path, via } => format!("read? {via:?} {path}"),
        Step::WriteFile { path, content, via } => format!("write? {via:?} {path} {content:?}"),
        Step::SleepUntil(t) => format!("sleep until {}", t.0),
        Step::Waiting => "waiting".into(),
        Step::End(reason) => format!("end {reason}"),
        Step::Fail(text) => format!("fail: {text}"),
        other => format!("{other:?}"),
    }
}

/// Steps until one that is not an update (that one included).
fn run(backend: &mut DemoBackend, session: &str, now: u64) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..10_000 {
        let step = backend.step(session, Instant(now));
        out.push(render(&step));
        if !matches!(step, Step::Update(_)) {
            return out;
        }
    }
    panic!("no end in sight: {out:?}");
}

fn turn(text: &str) -> Vec<String> {
    let mut backend = DemoBackend::new();
    start(
        &mut backend,
        S,
        text,
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    run(&mut backend, S, 1000)
}

fn allow(option: PermissionChoice) -> Reply {
    Reply::Permission(PermissionDecision::Allowed(option))
}

fn reject(option: PermissionChoice) -> Reply {
    Reply::Permission(PermissionDecision::Rejected(RejectReason::Chosen(option)))
}

#[test]
fn plain_text_is_echoed_and_an_empty_prompt_just_ends() {
    assert_eq!(
        turn("hello there\nsecond line"),
        [
            "title: hello there",
            "message: hello there\nsecond line",
            // 23 bytes of prompt, 23 echoed.
            "usage: 46/1000000",
            "end end_turn"
        ]
    );
    assert_eq!(turn(""), ["usage: 0/1000000", "end end_turn"]);
}

#[test]
fn echo_think_and_plan_send_one_update_each_in_order() {
    assert_eq!(
        turn("/echo Hello, world\n/think pondering\n/plan Read | Edit the code | Test"),
        [
            "title: /echo Hello, world",
            "message: Hello, world",
            "thought: pondering",
            "plan: Read (pending, medium) | Edit the code (pending, medium) | Test (pending, medium)",
            "usage: 90/1000000",
            "end end_turn",
        ]
    );
}

#[test]
fn tool_asks_then_runs_when_allowed() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/tool execute Run tests\n/echo after",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 1000),
        [
            "title: /tool execute Run tests",
            "tool_call tool-1 pending execute 'Run tests' at [] []",
            "permission? tool-1 execute 'Run tests' []",
        ]
    );
    assert_eq!(
        run(&mut b, S, 1000),
        ["waiting"],
        "nothing happens before the answer"
    );
    b.resume(S, allow(PermissionChoice::AllowOnce));
    assert_eq!(
        run(&mut b, S, 1000),
        [
            "tool_call_update tool-1 in_progress []",
            "tool_call_update tool-1 completed [text:Done: Run tests]",
            "message: after",
            "usage: 40/1000000",
            "end end_turn",
        ]
    );
}

#[test]
fn the_tool_call_is_sent_with_exactly_the_given_kind_and_title() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/tool fetch Get the weather",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    let title = b.step(S, Instant(0));
    assert_eq!(render(&title), "title: /tool fetch Get the weather");
    let Step::Update(SessionUpdate::ToolCall(call)) = b.step(S, Instant(0)) else {
        panic!("expected a tool_call");
    };
    let mut expected = ToolCall::new("tool-1", "Get the weather");
    expected.kind = Some(ToolKind::Fetch);
    expected.status = Some(ToolCallStatus::Pending);
    assert_eq!(call, expected);
}

#[test]
fn tool_fails_when_rejected_or_cancelled_and_the_turn_goes_on() {
    for (reply, why) in [
        (
            reject(PermissionChoice::RejectOnce),
            "Error: rejected by the user (reject_once)",
        ),
        (
            Reply::Permission(PermissionDecision::Cancelled),
            "Error: cancelled by user",
        ),
        (
            Reply::Permission(PermissionDecision::Rejected(RejectReason::UnknownOption)),
            "Error: permission refused: the client chose an option that was not offered",
        ),
        (
            Reply::Permission(PermissionDecision::Rejected(RejectReason::Malformed)),
            "Error: permission refused: the client's answer could not be read",
        ),
        (
            Reply::Permission(PermissionDecision::Rejected(RejectReason::UnknownOutcome)),
            "Error: permission refused: the client's outcome is neither 'selected' nor 'cancelled'",
        ),
        (
            Reply::Permission(PermissionDecision::Rejected(RejectReason::Error(
                ErrorCode(-32601),
            ))),
            "Error: permission refused: the client answered with error -32601",
        ),
        (
            Reply::Permission(PermissionDecision::Rejected(RejectReason::TimedOut)),
            "Error: permission refused: no answer in time",
        ),
    ] {
        let mut b = DemoBackend::new();
        start(
            &mut b,
            S,
            "/tool edit Fix\n/echo next",
            Posture::WorkspaceWrite,
            ClientFs::default(),
        );
        run(&mut b, S, 0);
        b.resume(S, reply);
        assert_eq!(
            run(&mut b, S, 0),
            [
                format!("tool_call_update tool-1 failed [text:{why}]"),
                "message: next".to_owned(),
                // 25 bytes of prompt, 4 echoed.
                "usage: 29/1000000".to_owned(),
                "end end_turn".to_owned(),
            ]
        );
    }
}

#[test]
fn always_answers_are_remembered_per_session_per_tool() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/tool execute Build",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    run(&mut b, S, 0);
    b.resume(S, allow(PermissionChoice::AllowAlways));
    assert_eq!(run(&mut b, S, 0).last().unwrap(), "end end_turn");

    // Same tool, same session: runs without asking. Another title or kind still asks.
    start(
        &mut b,
        S,
        "/tool execute Build\n/tool execute Deploy",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 0),
        [
            "title: /tool execute Build",
            "tool_call tool-2 pending execute 'Build' at [] []",
            "tool_call_update tool-2 in_progress []",
            "tool_call_update tool-2 completed [text:Done: Build]",
            "tool_call tool-3 pending execute 'Deploy' at [] []",
            "permission? tool-3 execute 'Deploy' []",
        ]
    );
    b.resume(S, reject(PermissionChoice::RejectAlways));
    run(&mut b, S, 0);
    start(
        &mut b,
        S,
        "/tool execute Deploy\n/tool other Build",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 0),
        [
            "title: /tool execute Deploy",
            "tool_call tool-4 pending execute 'Deploy' at [] []",
            "tool_call_update tool-4 failed [text:Error: rejected: 'reject_always' was chosen earlier for this tool]",
            "tool_call tool-5 pending other 'Build' at [] []",
            "permission? tool-5 other 'Build' []",
        ]
    );

    // Another session knows nothing of it.
    start(
        &mut b,
        "sess-2",
        "/tool execute Build",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, "sess-2", 0).last().unwrap(),
        "permission? tool-6 execute 'Build' []"
    );

    // A forgotten session forgets its answers.
    b.forget_session(S);
    start(
        &mut b,
        S,
        "/tool execute Build",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 0).last().unwrap(),
        "permission? tool-7 execute 'Build' []"
    );
}

#[test]
fn once_answers_are_not_remembered() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/tool execute Build",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    run(&mut b, S, 0);
    b.resume(S, allow(PermissionChoice::AllowOnce));
    run(&mut b, S, 0);
    start(
        &mut b,
        S,
        "/tool execute Build",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 0).last().unwrap(),
        "permission? tool-2 execute 'Build' []"
    );
}

#[test]
fn full_access_never_asks() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/tool execute rm -rf build\n/write a.txt hi",
        Posture::FullAccess,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 0),
        [
            "title: /tool execute rm -rf build",
            "tool_call tool-1 pending execute 'rm -rf build' at [] []",
            "tool_call_update tool-1 in_progress []",
            "tool_call_update tool-1 completed [text:Done: rm -rf build]",
            "tool_call tool-2 pending edit 'Write a.txt' at [/home/user/project/a.txt] [diff:/home/user/project/a.txt old=None new=\"hi\"]",
            "tool_call_update tool-2 in_progress []",
            "write? Local /home/user/project/a.txt \"hi\"",
        ]
    );
}

#[test]
fn read_only_fails_changing_tools_without_asking_and_asks_for_the_others() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/tool execute make\n/tool delete Remove\n/write a.txt x\n/read a.txt\n/tool search Find",
        Posture::ReadOnly,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 0),
        [
            "title: /tool execute make",
            "tool_call tool-1 pending execute 'make' at [] []",
            "tool_call_update tool-1 failed [text:Error: the session is in read-only mode; a tool of kind 'execute' may not run]",
            "tool_call tool-2 pending delete 'Remove' at [] []",
            "tool_call_update tool-2 failed [text:Error: the session is in read-only mode; a tool of kind 'delete' may not run]",
            "tool_call tool-3 pending edit 'Write a.txt' at [/home/user/project/a.txt] [diff:/home/user/project/a.txt old=None new=\"x\"]",
            "tool_call_update tool-3 failed [diff:/home/user/project/a.txt old=None new=\"x\", text:Error: the session is in read-only mode; a tool of kind 'edit' may not run]",
            "tool_call tool-4 pending read 'Read a.txt' at [/home/user/project/a.txt] []",
            "tool_call_update tool-4 in_progress []",
            "read? Local /home/user/project/a.txt",
        ]
    );
    b.resume(S, Reply::FileRead(Ok("abc".into())));
    assert_eq!(
        run(&mut b, S, 0),
        [
            "tool_call_update tool-4 completed [text:Read 3 bytes from /home/user/project/a.txt]",
            "tool_call tool-5 pending search 'Find' at [] []",
            "permission? tool-5 search 'Find' []",
        ]
    );
    for kind in ["read", "think", "fetch"] {
        let mut b = DemoBackend::new();
        start(
            &mut b,
            S,
            &format!("/tool {kind} T"),
            Posture::ReadOnly,
            ClientFs::default(),
        );
        assert_eq!(
            run(&mut b, S, 0).last().unwrap(),
            &format!("permission? tool-1 {kind} 'T' []")
        );
    }
}

#[test]
fn plan_fails_every_tool_without_asking() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/tool read Look\n/read a.txt\n/write a.txt x",
        Posture::Plan,
        ClientFs::default(),
    );
    let why = "Error: the session is in plan mode; tools do not run";
    assert_eq!(run(&mut b, S, 0), [
        "title: /tool read Look".to_owned(),
        "tool_call tool-1 pending read 'Look' at [] []".to_owned(),
        format!("tool_call_update tool-1 failed [text:{why}]"),
        "tool_call tool-2 pending read 'Read a.txt' at [/home/user/project/a.txt] []".to_owned(),
        format!("tool_call_update tool-2 failed [text:{why}]"),
        "tool_call tool-3 pending edit 'Write a.txt' at [/home/user/project/a.txt] [diff:/home/user/project/a.txt old=None new=\"x\"]".to_owned(),
        format!("tool_call_update tool-3 failed [diff:/home/user/project/a.txt old=None new=\"x\", text:{why}]"),
        "usage: 42/1000000".to_owned(),
        "end end_turn".to_owned(),
    ]);
}

#[test]
fn read_goes_through_the_client_when_offered_and_reports_the_byte_count() {
    let mut b = DemoBackend::new();
    let fs = ClientFs {
        read: true,
        write: false,
    };
    start(&mut b, S, "/read src/main.rs", Posture::WorkspaceWrite, fs);
    assert_eq!(
        run(&mut b, S, 0),
        [
            "title: /read src/main.rs",
            "tool_call tool-1 pending read 'Read src/main.rs' at [/home/user/project/src/main.rs] []",
            "tool_call_update tool-1 in_progress []",
            "read? Client /home/user/project/src/main.rs",
        ]
    );
    assert_eq!(run(&mut b, S, 0), ["waiting"]);
    // Bytes, not characters.
    b.resume(S, Reply::FileRead(Ok("héllo\n".into())));
    assert_eq!(
        run(&mut b, S, 0),
        [
            "tool_call_update tool-1 completed [text:Read 7 bytes from /home/user/project/src/main.rs]",
            "usage: 17/1000000",
            "end end_turn",
        ]
    );
}

#[test]
fn a_failed_read_is_a_failed_tool_call() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/read missing.txt",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    run(&mut b, S, 0);
    b.resume(
        S,
        Reply::FileRead(Err("No such file or directory (os error 2)".into())),
    );
    assert_eq!(
        run(&mut b, S, 0),
        [
            "tool_call_update tool-1 failed [text:Error: No such file or directory (os error 2)]",
            "usage: 17/1000000",
            "end end_turn",
        ]
    );
}

#[test]
fn paths_outside_the_cwd_are_failed_tool_calls() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/read ../other/secret\n/write /etc/passwd x",
        Posture::FullAccess,
        ClientFs {
            read: true,
            write: true,
        },
    );
    assert_eq!(
        run(&mut b, S, 0),
        [
            "title: /read ../other/secret",
            "tool_call tool-1 pending read 'Read ../other/secret' at [] []",
            "tool_call_update tool-1 failed [text:Error: '../other/secret' is outside the session cwd '/home/user/project']",
            "tool_call tool-2 pending edit 'Write /etc/passwd' at [] []",
            "tool_call_update tool-2 failed [text:Error: '/etc/passwd' is outside the session cwd '/home/user/project']",
            "usage: 42/1000000",
            "end end_turn",
        ]
    );
}

#[test]
fn write_asks_with_the_diff_then_writes_exactly_the_text() {
    let mut b = DemoBackend::new();
    let fs = ClientFs {
        read: false,
        write: true,
    };
    start(
        &mut b,
        S,
        "/write notes/todo.txt buy milk ",
        Posture::WorkspaceWrite,
        fs,
    );
    let diff = "diff:/home/user/project/notes/todo.txt old=None new=\"buy milk \"";
    assert_eq!(
        run(&mut b, S, 0),
        [
            "title: /write notes/todo.txt buy milk".to_owned(),
            format!(
                "tool_call tool-1 pending edit 'Write notes/todo.txt' at [/home/user/project/notes/todo.txt] [{diff}]"
            ),
            format!("permission? tool-1 edit 'Write notes/todo.txt' [{diff}]"),
        ]
    );
    b.resume(S, allow(PermissionChoice::AllowOnce));
    assert_eq!(
        run(&mut b, S, 0),
        [
            "tool_call_update tool-1 in_progress []".to_owned(),
            "write? Client /home/user/project/notes/todo.txt \"buy milk \"".to_owned(),
        ]
    );
    b.resume(S, Reply::FileWritten(Ok(())));
    assert_eq!(
        run(&mut b, S, 0),
        [
            format!(
                "tool_call_update tool-1 completed [{diff}, text:Wrote 9 bytes to /home/user/project/notes/todo.txt]"
            ),
            "usage: 31/1000000".to_owned(),
            "end end_turn".to_owned(),
        ]
    );
}

#[test]
fn a_rejected_or_failed_write_is_a_failed_tool_call() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/write a.txt x\n/write b.txt y",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    run(&mut b, S, 0);
    b.resume(S, reject(PermissionChoice::RejectOnce));
    let out = run(&mut b, S, 0);
    assert_eq!(
        out[0],
        "tool_call_update tool-1 failed [diff:/home/user/project/a.txt old=None new=\"x\", text:Error: rejected by the user (reject_once)]"
    );
    b.resume(S, allow(PermissionChoice::AllowOnce));
    run(&mut b, S, 0);
    b.resume(
        S,
        Reply::FileWritten(Err("Permission denied (os error 13)".into())),
    );
    assert_eq!(
        run(&mut b, S, 0),
        [
            "tool_call_update tool-2 failed [diff:/home/user/project/b.txt old=None new=\"y\", text:Error: Permission denied (os error 13)]",
            "usage: 29/1000000",
            "end end_turn",
        ]
    );
}

#[test]
fn ask_echoes_the_answer_or_the_sentinel() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/ask Which color?\n/ask Again?",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 0),
        ["title: /ask Which color?", "ask? Which color?"]
    );
    assert_eq!(run(&mut b, S, 0), ["waiting"]);
    b.resume(S, Reply::Answer("blue".into()));
    assert_eq!(run(&mut b, S, 0), ["message: blue", "ask? Again?"]);
    b.resume(S, Reply::Answer("(user unavailable)".into()));
    assert_eq!(
        run(&mut b, S, 0),
        [
            "message: (user unavailable)",
            // 29 bytes of prompt, 4 + 18 of answers.
            "usage: 51/1000000",
            "end end_turn"
        ]
    );
}

#[test]
fn sleep_waits_on_the_clock() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/sleep 250\n/echo awake",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 1000),
        ["title: /sleep 250", "sleep until 1250"]
    );
    assert_eq!(run(&mut b, S, 1249), ["sleep until 1250"]);
    assert_eq!(
        run(&mut b, S, 1250),
        ["message: awake", "usage: 27/1000000", "end end_turn"]
    );
}

#[test]
fn cancel_ends_a_sleep_at_once_and_skips_the_rest() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/sleep 60000\n/echo never",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 0),
        ["title: /sleep 60000", "sleep until 60000"]
    );
    b.cancel(S);
    assert_eq!(run(&mut b, S, 1), ["usage: 24/1000000", "end cancelled"]);
    assert_eq!(run(&mut b, S, 2), ["waiting"], "the turn is gone");
}

#[test]
fn cancel_while_asking_permission_fails_the_open_tool_then_ends() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/tool execute Deploy\n/echo never",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    run(&mut b, S, 0);
    b.cancel(S);
    assert_eq!(
        run(&mut b, S, 0),
        [
            "tool_call_update tool-1 failed [text:Error: cancelled by user]",
            "usage: 32/1000000",
            "end cancelled",
        ]
    );
    // The settled permission arriving late changes nothing.
    b.resume(S, allow(PermissionChoice::AllowOnce));
    assert_eq!(run(&mut b, S, 0), ["waiting"]);
}

#[test]
fn cancel_while_waiting_for_a_file_or_an_answer_ends_at_once() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/read a.txt",
        Posture::WorkspaceWrite,
        ClientFs {
            read: true,
            write: true,
        },
    );
    run(&mut b, S, 0);
    b.cancel(S);
    assert_eq!(
        run(&mut b, S, 0),
        [
            "tool_call_update tool-1 failed [text:Error: cancelled by user]",
            "usage: 11/1000000",
            "end cancelled",
        ]
    );
    start(
        &mut b,
        S,
        "/ask Q?\n/echo never",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    run(&mut b, S, 0);
    b.cancel(S);
    assert_eq!(run(&mut b, S, 0), ["usage: 19/1000000", "end cancelled"]);
}

#[test]
fn flood_sends_n_chunks_of_the_given_size_one_per_step() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/flood 3 5\n/flood 1\n/flood 0 9\n/echo done",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, S, 0),
        [
            "title: /flood 3 5",
            "message: abcde",
            "message: abcde",
            "message: abcde",
            "message: abcdefghijklmnopqrstuvwxyzabcdef",
            "message: done",
            // 41 bytes of prompt, 15 + 32 + 4 sent.
            "usage: 92/1000000",
            "end end_turn",
        ]
    );
}

#[test]
fn cancel_stops_a_flood() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/flood 1000000",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    for _ in 0..10 {
        assert!(matches!(b.step(S, Instant(0)), Step::Update(_)));
    }
    b.cancel(S);
    // The title and nine chunks of 32 bytes went out, after 14 bytes of prompt.
    assert_eq!(run(&mut b, S, 0), ["usage: 302/1000000", "end cancelled"]);
}

#[test]
fn stop_ends_the_turn_with_the_reason_and_skips_the_rest() {
    for reason in ["end_turn", "max_tokens", "max_turn_requests", "refusal"] {
        assert_eq!(
            turn(&format!("/echo before\n/stop {reason}\n/echo after")),
            [
                "title: /echo before".to_owned(),
                "message: before".to_owned(),
                // 31 bytes of prompt and the reason, 6 echoed.
                format!("usage: {}/1000000", 37 + reason.len()),
                format!("end {reason}")
            ]
        );
    }
}

#[test]
fn error_fails_the_turn_with_the_text() {
    assert_eq!(
        turn("/echo before\n/error disk on fire\n/echo after"),
        [
            "title: /echo before",
            "message: before",
            "usage: 50/1000000",
            "fail: disk on fire"
        ]
    );
}

#[test]
fn unknown_commands_and_bad_arguments_answer_with_a_message_and_go_on() {
    assert_eq!(
        turn("/dance\n/sleep soon\n/echo still here"),
        [
            "title: /dance",
            "message: unknown command '/dance'. Commands: /echo TEXT, /think TEXT, /plan A | B | C, /tool KIND TITLE, /read PATH, /write PATH TEXT, /ask QUESTION, /sleep MS, /flood N [BYTES], /stop REASON, /error TEXT, /history, /notice SEVERITY TITLE, /usage USED SIZE [AMOUNT CURRENCY], /title TEXT, /plan2 A | B, /unplan, /subagent NAME TEXT, /mcp SERVER TOOL [JSON]; any other text is echoed.",
            "message: /sleep needs a whole number of milliseconds, got 'soon'; usage: /sleep MS",
            "message: still here",
            "usage: 492/1000000",
            "end end_turn",
        ]
    );
}

#[test]
fn sessions_run_their_turns_independently() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        "a",
        "/sleep 100\n/echo a done",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    start(
        &mut b,
        "b",
        "/echo b done",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, "a", 0),
        ["title: /sleep 100", "sleep until 100"]
    );
    assert_eq!(
        run(&mut b, "b", 0),
        [
            "title: /echo b done",
            "message: b done",
            "usage: 18/1000000",
            "end end_turn"
        ]
    );
    assert!(b.is_running("a"));
    assert!(!b.is_running("b"));
    b.cancel("b");
    assert_eq!(
        run(&mut b, "a", 100),
        ["message: a done", "usage: 29/1000000", "end end_turn"]
    );
}

#[test]
fn a_reply_nobody_waits_for_is_dropped() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/ask Q?",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    run(&mut b, S, 0);
    // A file result is not what the turn waits for: still waiting for the answer.
    b.resume(S, Reply::FileRead(Ok("x".into())));
    assert_eq!(run(&mut b, S, 0), ["waiting"]);
    b.resume(S, Reply::Answer("yes".into()));
    assert_eq!(
        run(&mut b, S, 0),
        ["message: yes", "usage: 10/1000000", "end end_turn"]
    );
}

#[test]
fn history_counts_the_finished_turns_and_new_tools_are_numbered_after_the_stored_ones() {
    let mut history = crate::store::SessionHistory::new(S, "demo");
    for (n, stored_tool) in [(0, "tool-7"), (1, "call_abc")] {
        history.record_user_prompt(&[ContentBlock::text(format!("turn {n}"))]);
        let call = ToolCall::new(stored_tool, "Stored");
        history.record_update(&SessionUpdate::ToolCall(call));
        history.end_turn(acp_core::schema::StopReason::EndTurn);
    }
    // The running turn is recorded before the backend starts it; it does not count.
    let prompt = [ContentBlock::text("/history\n/tool read Look")];
    history.record_user_prompt(&prompt);
    let mut backend = DemoBackend::new();
    backend.start_turn(
        TurnStart {
            session: S,
            cwd: CWD,
            additional_directories: &[],
            system_prompt: None,
            posture: Posture::WorkspaceWrite,
            client_fs: ClientFs::default(),
            client_terminal: false,
            client_plan: false,
            prompt: &prompt,
            history: &history,
            mcp_tools: &[],
        },
        Instant(1000),
    );
    let steps = run(&mut backend, S, 1000);
    assert_eq!(steps[0], "message: this session has 2 completed turns");
    assert_eq!(steps[1], "tool_call tool-8 pending read 'Look' at [] []");
    assert_eq!(
        turn("/history"),
        [
            "title: /history",
            "message: this session has 0 completed turns",
            "usage: 42/1000000",
            "end end_turn"
        ]
    );
}

#[test]
fn notice_usage_and_title_send_one_update_each() {
    assert_eq!(
        turn(
            "/notice error Build failed\n/usage 1200 200000 0.42 USD\n/usage 5 10\n/title Renamed"
        ),
        [
            "title: /notice error Build failed",
            "notice error: Build failed",
            "usage: 1200/200000 cost 0.42 USD",
            "usage: 5/10",
            "title: Renamed",
            // The turn's own figures close it: 81 bytes of prompt, no answer text.
            "usage: 81/1000000",
            "end end_turn",
        ]
    );
    for severity in ["info", "warning", "error"] {
        assert_eq!(
            turn(&format!("/notice {severity} Heads up")).get(1),
            Some(&format!("notice {severity}: Heads up"))
        );
    }
}

#[test]
fn only_the_first_prompt_of_a_session_names_it_and_usage_counts_the_whole_session() {
    let mut history = crate::store::SessionHistory::new(S, "demo");
    history.record_user_prompt(&[ContentBlock::text("first")]);
    history.record_update(&SessionUpdate::AgentMessageChunk(
        acp_core::schema::ContentChunk::new(ContentBlock::text("first")),
    ));
    history.end_turn(acp_core::schema::StopReason::EndTurn);
    let prompt = [ContentBlock::text("second")];
    history.record_user_prompt(&prompt);
    let mut backend = DemoBackend::new();
    backend.start_turn(
        TurnStart {
            session: S,
            cwd: CWD,
            additional_directories: &[],
            system_prompt: None,
            posture: Posture::WorkspaceWrite,
            client_fs: ClientFs::default(),
            client_terminal: false,
            client_plan: false,
            prompt: &prompt,
            history: &history,
            mcp_tools: &[],
        },
        Instant(1000),
    );
    assert_eq!(
        run(&mut backend, S, 1000),
        [
            "message: second",
            // 5 + 5 from the finished turn, 6 + 6 from this one.
            "usage: 22/1000000",
            "end end_turn"
        ]
    );
}

#[test]
fn a_long_first_line_is_cut_to_80_characters_for_the_title() {
    let long = format!("{}\nsecond line", "ü".repeat(90));
    let steps = turn(&long);
    assert_eq!(steps[0], format!("title: {}", "ü".repeat(80)));
}

#[test]
fn a_failed_or_cancelled_turn_still_reports_usage_before_its_answer() {
    let steps = turn("/error boom");
    assert_eq!(
        &steps[steps.len() - 2..],
        ["usage: 11/1000000", "fail: boom"]
    );
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/sleep 10",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    run(&mut b, S, 0);
    b.cancel(S);
    b.cancel(S);
    assert_eq!(
        run(&mut b, S, 0),
        ["usage: 9/1000000", "end cancelled"],
        "one usage_update however often the turn is cancelled"
    );
}

#[test]
fn plan2_sends_a_fresh_plan_id_and_unplan_removes_the_last_one() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/plan2 Draft | Review\n/plan2 Ship\n/unplan\n/unplan",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    let steps: Vec<Step> = (0..6).map(|_| b.step(S, Instant(0))).collect();
    let Step::Update(SessionUpdate::PlanUpdate(first)) = &steps[1] else {
        panic!("a plan_update, got {:?}", steps[1]);
    };
    let PlanUpdateContent::Items(items) = &first.plan else {
        panic!("items form");
    };
    assert_eq!(items.plan_id, "plan-1");
    let entries: Vec<(&str, String, String)> = items
        .entries
        .iter()
        .map(|e| {
            (
                e.content.as_str(),
                e.status.to_string(),
                e.priority.to_string(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("Draft", "pending".to_owned(), "medium".to_owned()),
            ("Review", "pending".to_owned(), "medium".to_owned())
        ]
    );
    let Step::Update(SessionUpdate::PlanUpdate(second)) = &steps[2] else {
        panic!("a plan_update");
    };
    assert_eq!(
        second.plan.plan_id(),
        Some("plan-2"),
        "a fresh id each time"
    );
    let Step::Update(SessionUpdate::PlanRemoved(removed)) = &steps[3] else {
        panic!("a plan_removed, got {:?}", steps[3]);
    };
    assert_eq!(removed.plan_id, "plan-2", "the last one");
    assert_eq!(
        render(&steps[4]),
        "message: /unplan: this session has no /plan2 plan to remove"
    );
}

#[test]
fn unplan_is_per_session_and_forgotten_with_it() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        "a",
        "/plan2 A",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    run(&mut b, "a", 0);
    start(
        &mut b,
        "b",
        "/unplan",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, "b", 0)[1],
        "message: /unplan: this session has no /plan2 plan to remove"
    );
    b.forget_session("a");
    start(
        &mut b,
        "a",
        "/unplan",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    assert_eq!(
        run(&mut b, "a", 0)[1],
        "message: /unplan: this session has no /plan2 plan to remove"
    );
}

#[test]
fn subagent_announces_a_named_session_then_relays_its_text() {
    let mut b = DemoBackend::new();
    start(
        &mut b,
        S,
        "/subagent scout Found 3 files\n/subagent critic Looks fine",
        Posture::WorkspaceWrite,
        ClientFs::default(),
    );
    let steps: Vec<Step> = (0..7).map(|_| b.step(S, Instant(0))).collect();
    let mut expected = SubagentUpdate::new("subagent-1");
    expected.title = Some(Some("scout".into()));
    let mut idle = IdleState::default();
    idle.stop_reason = Some(IdleStopReason::EndTurn);
    expected.state = Some(Some(StateUpdate::Idle(idle)));
    assert_eq!(
        steps[1],
        Step::Update(SessionUpdate::SubagentUpdate(expected))
    );
    let mut relayed = SessionMessage::new("message-2");
    relayed.sender_session_id = Some(Some("subagent-1".into()));
    relayed.recipient_session_id = Some(Some(S.into()));
    relayed.content = Some(Some(vec![ContentBlock::text("Found 3 files")]));
    assert_eq!(
        steps[2],
        Step::Update(SessionUpdate::SessionMessage(relayed))
    );
    let Step::Update(SessionUpdate::SubagentUpdate(second)) = &steps[3] else {
        panic!("a second subagent");
    };
    assert_eq!(second.session_id, "subagent-3", "a session of its own");
    // Relayed text is the subagent's, not counted as this session's: 57 bytes of prompt.
    assert_eq!(render(&steps[5]), "usage: 57/1000000");
    assert_eq!(render(&steps[6]), "end end_turn");
}
