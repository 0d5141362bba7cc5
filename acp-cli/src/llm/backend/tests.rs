//! The llm backend turn by turn against a scripted model: every step is rendered as a short
//! line, every request the model would get is kept, so each test reads as a transcript and
//! checks what reached the model.

use acp_core::Instant;
use acp_core::machine::permission::{PermissionChoice, PermissionDecision, RejectReason};
use acp_core::schema::{
    ContentBlock, ImageContent, PlanEntry, PlanUpdateContent, SessionUpdate, TerminalExitStatus,
    TerminalOutputResponse, ToolCallContent,
};

use super::LlmBackend;
use super::instructions::MemoryFiles;
use crate::agent::backend::{
    Backend, ClientFs, Explore, Reply, ShellOutcome, Step, TerminalCall, TurnStart,
};
use crate::agent::modes::Posture;
use crate::model::chat::{
    ChatMessage, ChatRequest, FinishReason, Finished, ModelError, ModelToolCall, StreamEvent,
    UserPart,
};
use crate::store::SessionHistory;

const CWD: &str = "/home/user/project";
const S: &str = "sess-1";

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

fn entries(entries: &[PlanEntry]) -> String {
    entries
        .iter()
        .map(|e| format!("{} {} {}", e.status, e.priority.as_str(), e.content))
        .collect::<Vec<_>>()
        .join(", ")
}

fn render(step: &Step) -> String {
    match step {
        Step::Update(update) => match update {
            SessionUpdate::AgentMessageChunk(c) => format!("message: {}", text_of(&c.content)),
            SessionUpdate::AgentThoughtChunk(c) => format!("thought: {}", text_of(&c.content)),
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
            SessionUpdate::CompactionUpdate(u) => format!(
                "update compaction {} {} summary={:?} error={:?}",
                u.compaction_id,
                u.status,
                u.summary
                    .clone()
                    .flatten()
                    .map(|blocks| blocks.iter().map(text_of).collect::<String>()),
                u.error.clone().flatten(),
            ),
            SessionUpdate::CompactionSummaryChunk(c) => {
                format!("summary chunk {}: {}", c.compaction_id, text_of(&c.content))
            }
            SessionUpdate::ToolCallUpdate(u) => format!(
                "tool_call_update {} {} [{}]",
                u.tool_call_id,
                u.status.map(|s| s.to_string()).unwrap_or_default(),
                contents(u.content.as_deref().unwrap_or(&[])),
            ),
            SessionUpdate::Plan(plan) => format!("plan [{}]", entries(&plan.entries)),
            SessionUpdate::PlanUpdate(update) => match &update.plan {
                PlanUpdateContent::Items(items) => format!(
                    "plan_update {} [{}]",
                    items.plan_id,
                    entries(&items.entries)
                ),
                _ => "plan_update (not items)".to_owned(),
            },
            other => format!("update {}", other.kind()),
        },
        Step::RequestPermission(u) => format!(
            "permission? {} '{}'",
            u.tool_call_id,
            u.title.clone().unwrap_or_default(),
        ),
        Step::AskUser(q) => format!("ask? {q}"),
        Step::ReadFile { path, via } => format!("read? {via:?} {path}"),
        Step::WriteFile { path, content, via } => format!("write? {via:?} {path} {content:?}"),
        Step::CallModel(request) => format!("model? {} messages", request.messages.len()),
        Step::RunShell {
            command,
            cwd,
            timeout_ms,
        } => format!("shell? {command:?} in {cwd} for {timeout_ms} ms"),
        Step::Explore(Explore { roots, what }) => format!("explore? {what:?} within {roots:?}"),
        Step::Waiting => "waiting".into(),
        Step::End(reason) => format!("end {reason}"),
        Step::TurnUsage(usage) => format!(
            "usage in={} out={} total={} thought={:?} cached={:?}",
            usage.input_tokens,
            usage.output_tokens,
            usage.total_tokens,
            usage.thought_tokens,
            usage.cached_read_tokens
        ),
        Step::Fail(text) => format!("fail: {text}"),
        Step::FailWith { code, message } => format!("fail {code}: {message}"),
        Step::SleepUntil(t) => format!("sleep until {}", t.0),
        Step::McpCall {
            server,
            tool,
            arguments,
        } => format!("mcp? {server} {tool} {arguments}"),
        Step::Terminal(call) => match call {
            TerminalCall::Create {
                command,
                args,
                cwd,
                output_byte_limit,
            } => format!(
                "terminal/create {command} {args:?} in {cwd} keeping {output_byte_limit} bytes"
            ),
            TerminalCall::WaitForExit { terminal_id } => {
                format!("terminal/wait_for_exit {terminal_id}")
            }
            TerminalCall::Output { terminal_id } => format!("terminal/output {terminal_id}"),
            TerminalCall::Kill { terminal_id } => format!("terminal/kill {terminal_id}"),
            TerminalCall::Release { terminal_id } => format!("terminal/release {terminal_id}"),
        },
    }
}

/// A backend with one session, the requests the model got, and a scripted model.
struct Harness {
    backend: LlmBackend,
    requests: Vec<ChatRequest>,
    /// The client serves `terminal/*`.
    terminal: bool,
    /// The client renders `plan_update` (`clientCapabilities.plan`).
    plan: bool,
    /// The turn's clock, in ms.
    now: u64,
    /// Every `usage_update` the turn sent, as (used, size).
    usage: Vec<(u64, u64)>,
}

impl Harness {
    fn new(max_rounds: u32) -> Self {
        Self {
            backend: LlmBackend::new("test-model", max_rounds)
                .with_files(MemoryFiles::default(), None),
            requests: Vec::new(),
            terminal: false,
            plan: false,
            now: 0,
            usage: Vec::new(),
        }
    }

    fn start(&mut self, text: &str, posture: Posture, fs: ClientFs, history: &mut SessionHistory) {
        let prompt = [ContentBlock::text(text)];
        history.record_user_prompt(&prompt);
        self.backend.start_turn(
            TurnStart {
                session: S,
                cwd: CWD,
                additional_directories: &[],
                system_prompt: None,
                posture,
                client_fs: fs,
                client_terminal: self.terminal,
                client_plan: self.plan,
                prompt: &prompt,
                history,
                mcp_tools: &[],
            },
            Instant(0),
        );
    }

    /// Steps until one that is neither an update nor a terminal request (that one
    /// included), as the app does; a model call is kept.
    fn run(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for _ in 0..1000 {
            let step = self.backend.step(S, Instant(self.now));
            out.push(render(&step));
            if let Step::CallModel(request) = &step {
                self.requests.push(request.clone());
            }
            if let Step::Update(SessionUpdate::UsageUpdate(usage)) = &step {
                self.usage.push((usage.used, usage.size));
            }
            if !matches!(
                step,
                Step::Update(_) | Step::Terminal(_) | Step::TurnUsage(_)
            ) {
                return out;
            }
        }
        panic!("no end in sight: {out:?}");
    }

    fn reply(&mut self, reply: Reply) -> Vec<String> {
        self.backend.resume(S, reply);
        self.run()
    }

    /// The model streams `text` in pieces and then answers with `calls` (or stops).
    fn answer(&mut self, pieces: &[&str], calls: Vec<ModelToolCall>) -> Vec<String> {
        for piece in pieces {
            self.backend
                .resume(S, Reply::ModelEvent(StreamEvent::Text((*piece).to_owned())));
        }
        let reason = if calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        self.reply(Reply::ModelDone(Ok(Finished {
            usage: None,
            reason,
            tool_calls: calls,
        })))
    }

    /// The `tool` messages of the last request.
    fn tool_results(&self) -> Vec<(String, String)> {
        let last = self.requests.last().expect("a model request");
        last.messages
            .iter()
            .filter_map(|m| match m {
                ChatMessage::Tool {
                    tool_call_id,
                    content,
                } => Some((tool_call_id.clone(), content.clone())),
                _ => None,
            })
            .collect()
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ModelToolCall {
    ModelToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments: arguments.to_owned(),
    }
}

fn history() -> SessionHistory {
    SessionHistory::new(S, "test-model")
}

fn allow(option: PermissionChoice) -> Reply {
    Reply::Permission(PermissionDecision::Allowed(option))
}

fn reject(option: PermissionChoice) -> Reply {
    Reply::Permission(PermissionDecision::Rejected(RejectReason::Chosen(option)))
}

#[test]
fn a_plain_answer_streams_as_chunks_and_ends_the_turn() {
    let mut h = Harness::new(50);
    h.start(
        "hello",
        Posture::WorkspaceWrite,
        ClientFs::default(),
        &mut history(),
    );
    assert_eq!(h.run(), ["update session_info_update", "model? 2 messages"]);
    let request = &h.requests[0];
    assert_eq!(request.model, "test-model");
    assert!(
        matches!(&request.messages[0], ChatMessage::System(s) if s.contains(CWD) && s.contains("search_file_content"))
    );
    assert_eq!(request.messages[1], ChatMessage::User("hello".into()));
    let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, super::tools::TOOL_NAMES);
    h.backend
        .resume(S, Reply::ModelEvent(StreamEvent::Reasoning("hmm".into())));
    h.backend
        .resume(S, Reply::ModelEvent(StreamEvent::Text("Hel".into())));
    assert_eq!(h.run(), ["thought: hmm", "message: Hel", "waiting"]);
    assert_eq!(
        h.answer(&["lo", ""], vec![]),
        ["message: lo", "update usage_update", "end end_turn"]
    );
}

#[test]
fn finish_reasons_map_to_stop_reasons() {
    for (reason, stop) in [
        (FinishReason::Length, "end max_tokens"),
        (FinishReason::ContentFilter, "end refusal"),
        (FinishReason::Other, "end end_turn"),
    ] {
        let mut h = Harness::new(50);
        h.start(
            "hi",
            Posture::WorkspaceWrite,
            ClientFs::default(),
            &mut history(),
        );
        h.run();
        let done = Reply::ModelDone(Ok(Finished {
            usage: None,
            reason,
            tool_calls: vec![],
        }));
        assert_eq!(h.reply(done), ["update usage_update", stop]);
    }
}

#[test]
fn model_errors_fail_the_turn_with_their_code_and_text() {
    let mut h = Harness::new(50);
    h.start(
        "hi",
        Posture::WorkspaceWrite,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let missing = ModelError::MissingKey {
        variable: "OPENAI_API_KEY".into(),
        provider: "openai".into(),
    };
    assert_eq!(
        h.reply(Reply::ModelDone(Err(missing))),
        [
            "update usage_update",
            "fail -32000: Authentication required: set OPENAI_API_KEY (LLM_PROVIDER=openai)"
        ]
    );
    let mut h = Harness::new(50);
    h.start(
        "hi",
        Posture::WorkspaceWrite,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let status = ModelError::Status {
        status: 500,
        message: "boom".into(),
    };
    assert_eq!(
        h.reply(Reply::ModelDone(Err(status))),
        [
            "update usage_update",
            "fail: the model server answered HTTP 500: boom"
        ]
    );
}

#[test]
fn write_file_asks_writes_on_allow_once_and_tells_the_model() {
    let mut h = Harness::new(50);
    h.start(
        "make a",
        Posture::WorkspaceWrite,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let write = call("c1", "write_file", r#"{"path":"a.txt","content":"new"}"#);
    assert_eq!(
        h.answer(&["Writing."], vec![write]),
        [
            "message: Writing.",
            "tool_call tool-1 pending edit 'Write a.txt' at [/home/user/project/a.txt] [diff:/home/user/project/a.txt old=None new=\"new\"]",
            "read? Local /home/user/project/a.txt",
        ]
    );
    // The file exists: its old text is in the diff the user is asked about.
    assert_eq!(
        h.reply(Reply::FileRead(Ok("old".into()))),
        [
            "tool_call_update tool-1  [diff:/home/user/project/a.txt old=Some(\"old\") new=\"new\"]",
            "permission? tool-1 'Write a.txt'",
        ]
    );
    assert_eq!(
        h.reply(allow(PermissionChoice::AllowOnce)),
        [
            "tool_call_update tool-1 in_progress []",
            "write? Local /home/user/project/a.txt \"new\"",
        ]
    );
    assert_eq!(
        h.reply(Reply::FileWritten(Ok(()))),
        [
            "tool_call_update tool-1 completed [diff:/home/user/project/a.txt old=Some(\"old\") new=\"new\", text:Wrote 3 bytes to /home/user/project/a.txt]",
            "model? 4 messages",
        ]
    );
    assert_eq!(
        h.requests[1].messages[2],
        ChatMessage::Assistant {
            content: Some("Writing.".into()),
            tool_calls: vec![call(
                "c1",
                "write_file",
                r#"{"path":"a.txt","content":"new"}"#
            )],
        }
    );
    assert_eq!(
        h.tool_results(),
        [(
            "c1".into(),
            "Wrote 3 bytes to /home/user/project/a.txt".into()
        )]
    );
    assert_eq!(
        h.answer(&["Done."], vec![]),
        ["message: Done.", "update usage_update", "end end_turn"]
    );
}

#[test]
fn write_file_rejected_once_fails_without_writing_and_the_model_hears_why() {
    let mut h = Harness::new(50);
    h.start(
        "make a",
        Posture::WorkspaceWrite,
        ClientFs {
            read: true,
            write: true,
        },
        &mut history(),
    );
    h.run();
    let write = call("c1", "write_file", r#"{"path":"a.txt","content":"new"}"#);
    assert_eq!(
        h.answer(&[], vec![write]).last().unwrap(),
        "read? Client /home/user/project/a.txt"
    );
    // A file that cannot be read is a new file.
    assert_eq!(
        h.reply(Reply::FileRead(Err("not found".into()))),
        [
            "tool_call_update tool-1  [diff:/home/user/project/a.txt old=None new=\"new\"]",
            "permission? tool-1 'Write a.txt'",
        ]
    );
    let after = h.reply(reject(PermissionChoice::RejectOnce));
    assert_eq!(
        after,
        [
            "tool_call_update tool-1 failed [diff:/home/user/project/a.txt old=None new=\"new\", text:Error: rejected by the user (reject_once)]",
            "model? 4 messages",
        ]
    );
    assert!(!after.iter().any(|line| line.starts_with("write?")));
    assert_eq!(
        h.tool_results(),
        [(
            "c1".into(),
            "Error: rejected by the user (reject_once)".into()
        )]
    );
}

#[test]
fn allow_always_is_remembered_per_tool_and_reject_always_refuses_without_asking() {
    let mut h = Harness::new(50);
    h.start(
        "edit",
        Posture::WorkspaceWrite,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    h.answer(
        &[],
        vec![call("c1", "write_file", r#"{"path":"a","content":"1"}"#)],
    );
    h.reply(Reply::FileRead(Err("missing".into())));
    h.reply(allow(PermissionChoice::AllowAlways));
    h.reply(Reply::FileWritten(Ok(())));
    // Another file, same tool: no question.
    h.answer(
        &[],
        vec![call("c2", "write_file", r#"{"path":"b","content":"2"}"#)],
    );
    assert_eq!(
        h.reply(Reply::FileRead(Err("missing".into()))),
        [
            "tool_call_update tool-2  [diff:/home/user/project/b old=None new=\"2\"]",
            "tool_call_update tool-2 in_progress []",
            "write? Local /home/user/project/b \"2\"",
        ]
    );
    h.reply(Reply::FileWritten(Ok(())));
    h.answer(
        &[],
        vec![call("c3", "run_shell_command", r#"{"command":"rm -rf /"}"#)],
    );
    h.reply(reject(PermissionChoice::RejectAlways));
    assert_eq!(
        h.answer(
            &[],
            vec![call("c4", "run_shell_command", r#"{"command":"ls"}"#)]
        ),
        [
            "tool_call tool-4 pending execute 'Run ls' at [] []",
            "tool_call_update tool-4 failed [text:Error: rejected: 'reject_always' was chosen earlier for this tool]",
            "model? 10 messages",
        ]
    );
}

#[test]
fn replace_shows_the_diff_of_one_occurrence_and_refuses_missing_or_repeated_text() {
    let mut h = Harness::new(50);
    h.start(
        "fix",
        Posture::FullAccess,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let edit = r#"{"path":"src/lib.rs","old_string":"a + b","new_string":"a - b"}"#;
    assert_eq!(
        h.answer(&[], vec![call("c1", "replace", edit)]),
        [
            "tool_call tool-1 pending edit 'Edit src/lib.rs' at [/home/user/project/src/lib.rs] []",
            "read? Local /home/user/project/src/lib.rs",
        ]
    );
    assert_eq!(
        h.reply(Reply::FileRead(Ok("fn f() { a + b }".into()))),
        [
            "tool_call_update tool-1  [diff:/home/user/project/src/lib.rs old=Some(\"fn f() { a + b }\") new=\"fn f() { a - b }\"]",
            "tool_call_update tool-1 in_progress []",
            "write? Local /home/user/project/src/lib.rs \"fn f() { a - b }\"",
        ]
    );
    h.reply(Reply::FileWritten(Ok(())));
    assert_eq!(
        h.tool_results(),
        [(
            "c1".into(),
            "Replaced 1 occurrence in /home/user/project/src/lib.rs".into()
        )]
    );
    h.answer(&[], vec![call("c2", "replace", edit)]);
    let after = h.reply(Reply::FileRead(Ok("a + b; a + b".into())));
    assert_eq!(
        after[0],
        "tool_call_update tool-2 failed [text:Error: old_string occurs 2 times in /home/user/project/src/lib.rs; include more context so it occurs once]"
    );
    h.answer(&[], vec![call("c3", "replace", edit)]);
    let after = h.reply(Reply::FileRead(Ok("nothing".into())));
    assert_eq!(
        after[0],
        "tool_call_update tool-3 failed [text:Error: old_string was not found in /home/user/project/src/lib.rs]"
    );
}

#[test]
fn read_file_and_search_results_reach_the_next_request_as_tool_messages() {
    let mut h = Harness::new(50);
    h.start(
        "look",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let read = call(
        "r1",
        "read_file",
        r#"{"path":"src/main.rs","offset":1,"limit":1}"#,
    );
    let search = call(
        "s1",
        "search_file_content",
        r#"{"pattern":"fn \\w+","include":"*.rs"}"#,
    );
    assert_eq!(
        h.answer(&[], vec![read, search]),
        [
            "tool_call tool-1 pending read 'Read src/main.rs' at [/home/user/project/src/main.rs] []",
            "tool_call_update tool-1 in_progress []",
            "read? Local /home/user/project/src/main.rs",
        ]
    );
    assert_eq!(
        h.reply(Reply::FileRead(Ok("one\ntwo\nthree\n".into()))),
        [
            "tool_call_update tool-1 completed [text:[lines 2-2 of 3; use offset and limit for more]\ntwo]",
            "tool_call tool-2 pending search 'Search fn \\w+' at [/home/user/project] []",
            "tool_call_update tool-2 in_progress []",
            "explore? Search { pattern: \"fn \\\\w+\", base: \"/home/user/project\", include: Some(\"*.rs\") } within [\"/home/user/project\"]",
        ]
    );
    assert_eq!(
        h.reply(Reply::Explored(Ok("src/main.rs:1: fn main() {}".into()))),
        [
            "tool_call_update tool-2 completed [text:src/main.rs:1: fn main() {}]",
            "model? 5 messages",
        ]
    );
    assert_eq!(
        h.tool_results(),
        [
            (
                "r1".into(),
                "[lines 2-2 of 3; use offset and limit for more]\ntwo".into()
            ),
            ("s1".into(), "src/main.rs:1: fn main() {}".into()),
        ]
    );
}

#[test]
fn paths_outside_the_cwd_are_refused_without_touching_them() {
    let mut h = Harness::new(50);
    h.start(
        "peek",
        Posture::FullAccess,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let outside = call("c1", "read_file", r#"{"path":"../secret.txt"}"#);
    let listing = call("c2", "list_directory", r#"{"path":"/etc"}"#);
    assert_eq!(
        h.answer(&[], vec![outside, listing]),
        [
            "tool_call tool-1 pending read 'Read ../secret.txt' at [] []",
            "tool_call_update tool-1 failed [text:Error: '../secret.txt' is outside the session cwd '/home/user/project']",
            "tool_call tool-2 pending read 'List /etc' at [] []",
            "tool_call_update tool-2 failed [text:Error: '/etc' is outside the session cwd '/home/user/project']",
            "model? 5 messages",
        ]
    );
    assert_eq!(
        h.tool_results()[0],
        (
            "c1".into(),
            "Error: '../secret.txt' is outside the session cwd '/home/user/project'".into()
        )
    );
}

#[test]
fn run_shell_command_is_refused_in_read_only_and_runs_after_permission_otherwise() {
    let mut h = Harness::new(50);
    h.start(
        "test",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let shell = call("c1", "run_shell_command", r#"{"command":"cargo test"}"#);
    let after = h.answer(&[], vec![shell.clone()]);
    assert_eq!(
        after,
        [
            "tool_call tool-1 pending execute 'Run cargo test' at [] []",
            "tool_call_update tool-1 failed [text:Error: the session is in read-only mode; a tool of kind 'execute' may not run]",
            "model? 4 messages",
        ]
    );
    let mut h = Harness::new(50);
    h.start(
        "test",
        Posture::WorkspaceWrite,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    assert_eq!(
        h.answer(&[], vec![shell]),
        [
            "tool_call tool-1 pending execute 'Run cargo test' at [] []",
            "permission? tool-1 'Run cargo test'",
        ]
    );
    assert_eq!(
        h.reply(allow(PermissionChoice::AllowOnce)),
        [
            "tool_call_update tool-1 in_progress []",
            "shell? \"cargo test\" in /home/user/project for 120000 ms",
        ]
    );
    let outcome = ShellOutcome {
        exit_code: Some(101),
        output: "test failed".into(),
        truncated: true,
        timed_out: false,
    };
    h.reply(Reply::ShellDone(Ok(outcome)));
    assert_eq!(
        h.tool_results(),
        [(
            "c1".into(),
            "Exit code: 101\ntest failed\n[output cut at 64 KiB]".into()
        )]
    );
}

#[test]
fn plan_mode_runs_no_tool_but_ask_user_still_asks() {
    let mut h = Harness::new(50);
    h.start("plan", Posture::Plan, ClientFs::default(), &mut history());
    h.run();
    let read = call("c1", "read_file", r#"{"path":"a"}"#);
    let ask = call("c2", "ask_user", r#"{"question":"Which file?"}"#);
    assert_eq!(
        h.answer(&[], vec![read, ask]),
        [
            "tool_call tool-1 pending read 'Read a' at [/home/user/project/a] []",
            "tool_call_update tool-1 failed [text:Error: the session is in plan mode; tools do not run]",
            "tool_call tool-2 pending other 'Ask: Which file?' at [] []",
            "tool_call_update tool-2 in_progress []",
            "ask? Which file?",
        ]
    );
    h.reply(Reply::Answer("b.txt".into()));
    assert_eq!(h.tool_results()[1], ("c2".into(), "b.txt".into()));
}

#[test]
fn bad_tool_calls_fail_and_the_model_is_told_why() {
    let mut h = Harness::new(50);
    h.start(
        "go",
        Posture::FullAccess,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    assert_eq!(
        h.answer(&[], vec![call("", "read_file", "{\"path\":")]),
        [
            "tool_call tool-1 pending other 'read_file' at [] []",
            "tool_call_update tool-1 failed [text:Error: the arguments of read_file are not valid JSON: EOF while parsing a value at line 1 column 8]",
            "model? 4 messages",
        ]
    );
    // An empty id gets one, the same in the assistant message and the tool message.
    let ChatMessage::Assistant { tool_calls, .. } = &h.requests[1].messages[2] else {
        panic!("assistant message");
    };
    assert_eq!(tool_calls[0].id, "call_0_0");
    assert_eq!(h.tool_results()[0].0, "call_0_0");
}

#[test]
fn the_tool_rounds_are_bounded() {
    let mut h = Harness::new(1);
    h.start(
        "loop",
        Posture::FullAccess,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    h.answer(&[], vec![call("c1", "list_directory", r#"{"path":"."}"#)]);
    assert_eq!(
        h.reply(Reply::Explored(Ok("a/".into()))).last().unwrap(),
        "model? 4 messages"
    );
    assert_eq!(
        h.answer(
            &["again"],
            vec![call("c2", "list_directory", r#"{"path":"."}"#)]
        ),
        [
            "message: again",
            "update usage_update",
            "end max_turn_requests"
        ]
    );
}

#[test]
fn a_cancel_mid_stream_ends_cancelled_and_drops_what_comes_late() {
    let mut h = Harness::new(50);
    h.start(
        "slow",
        Posture::WorkspaceWrite,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    h.backend
        .resume(S, Reply::ModelEvent(StreamEvent::Text("par".into())));
    h.backend.cancel(S);
    assert_eq!(
        h.run(),
        ["message: par", "update usage_update", "end cancelled"]
    );
    h.backend
        .resume(S, Reply::ModelEvent(StreamEvent::Text("tial".into())));
    assert_eq!(h.run(), ["waiting"]);
}

#[test]
fn a_cancel_while_a_tool_runs_fails_it_and_ends_cancelled() {
    let mut h = Harness::new(50);
    h.start(
        "run",
        Posture::FullAccess,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    h.answer(
        &[],
        vec![call(
            "c1",
            "run_shell_command",
            r#"{"command":"sleep 100"}"#,
        )],
    );
    h.backend.cancel(S);
    assert_eq!(
        h.run(),
        [
            "tool_call_update tool-1 failed [text:Error: cancelled by user]",
            "update usage_update",
            "end cancelled"
        ]
    );
}

#[test]
fn earlier_turns_with_their_tool_calls_are_the_context_of_the_next() {
    let mut history = history();
    let mut h = Harness::new(50);
    // First turn: a read, then an answer; the history records what was sent.
    h.start(
        "read a",
        Posture::FullAccess,
        ClientFs::default(),
        &mut history,
    );
    let mut steps = Vec::new();
    let mut step = |h: &mut Harness, history: &mut SessionHistory, reply: Option<Reply>| {
        if let Some(reply) = reply {
            h.backend.resume(S, reply);
        }
        loop {
            let step = h.backend.step(S, Instant(0));
            if let Step::Update(update) = &step {
                history.record_update(update);
                continue;
            }
            if let Step::CallModel(request) = &step {
                h.requests.push(request.clone());
            }
            steps.push(render(&step));
            return;
        }
    };
    step(&mut h, &mut history, None);
    step(
        &mut h,
        &mut history,
        Some(Reply::ModelDone(Ok(Finished {
            usage: None,
            reason: FinishReason::ToolCalls,
            tool_calls: vec![call("m1", "read_file", r#"{"path":"a"}"#)],
        }))),
    );
    step(&mut h, &mut history, Some(Reply::FileRead(Ok("A".into()))));
    h.backend
        .resume(S, Reply::ModelEvent(StreamEvent::Text("It says A.".into())));
    step(
        &mut h,
        &mut history,
        Some(Reply::ModelDone(Ok(Finished {
            usage: None,
            reason: FinishReason::Stop,
            tool_calls: vec![],
        }))),
    );
    history.end_turn(acp_core::schema::StopReason::EndTurn);
    // Second turn: the model sees the first one, its tool call under the ACP id.
    h.start(
        "and b?",
        Posture::FullAccess,
        ClientFs::default(),
        &mut history,
    );
    step(&mut h, &mut history, None);
    let messages = &h.requests.last().unwrap().messages;
    assert_eq!(
        messages[1..],
        [
            ChatMessage::User("read a".into()),
            ChatMessage::Assistant {
                content: None,
                tool_calls: vec![call("tool-1", "read_file", r#"{"path":"a"}"#)],
            },
            ChatMessage::Tool {
                tool_call_id: "tool-1".into(),
                content: "A".into(),
            },
            ChatMessage::Assistant {
                content: Some("It says A.".into()),
                tool_calls: vec![],
            },
            ChatMessage::User("and b?".into()),
        ]
    );
    assert_eq!(steps.last().unwrap(), "model? 6 messages");
}

#[test]
fn a_session_model_set_by_the_client_is_the_one_asked() {
    let mut h = Harness::new(50);
    let mut history = SessionHistory::new(S, "llama3.2");
    h.start(
        "hi",
        Posture::WorkspaceWrite,
        ClientFs::default(),
        &mut history,
    );
    h.run();
    assert_eq!(h.requests[0].model, "llama3.2");
}

#[test]
fn the_clients_system_prompt_is_appended_and_additional_directories_are_inside() {
    let mut backend = LlmBackend::new("m", 50).with_files(MemoryFiles::default(), None);
    let prompt = [ContentBlock::text("go")];
    let mut history = history();
    history.record_user_prompt(&prompt);
    let extra = ["/home/user/shared".to_owned()];
    backend.start_turn(
        TurnStart {
            session: S,
            cwd: CWD,
            additional_directories: &extra,
            system_prompt: Some("Answer in French."),
            posture: Posture::FullAccess,
            client_fs: ClientFs::default(),
            client_terminal: false,
            client_plan: false,
            prompt: &prompt,
            history: &history,
            mcp_tools: &[],
        },
        Instant(0),
    );
    assert_eq!(
        render(&backend.step(S, Instant(0))),
        "update session_info_update"
    );
    let Step::CallModel(request) = backend.step(S, Instant(0)) else {
        panic!("a model call");
    };
    let ChatMessage::System(system) = &request.messages[0] else {
        panic!("a system message first");
    };
    assert!(
        system.contains(CWD) && system.ends_with("\n\nAnswer in French."),
        "{system}"
    );
    backend.resume(
        S,
        Reply::ModelDone(Ok(Finished {
            usage: None,
            reason: FinishReason::ToolCalls,
            tool_calls: vec![
                call(
                    "c1",
                    "read_file",
                    r#"{"path":"/home/user/shared/notes.txt"}"#,
                ),
                call(
                    "c2",
                    "glob",
                    r#"{"pattern":"*.md","path":"/home/user/shared"}"#,
                ),
            ],
        })),
    );
    let mut steps = Vec::new();
    loop {
        let step = backend.step(S, Instant(0));
        let done = !matches!(step, Step::Update(_));
        steps.push(render(&step));
        if done {
            break;
        }
    }
    assert_eq!(
        steps.last().unwrap(),
        "read? Local /home/user/shared/notes.txt"
    );
    backend.resume(S, Reply::FileRead(Ok("x".into())));
    let mut last = String::new();
    for _ in 0..10 {
        let step = backend.step(S, Instant(0));
        last = render(&step);
        if !matches!(step, Step::Update(_)) {
            break;
        }
    }
    assert_eq!(
        last,
        "explore? Glob { pattern: \"*.md\", base: \"/home/user/shared\" } within [\"/home/user/project\", \"/home/user/shared\"]"
    );
}

/// A turn in full-access mode with a client that serves `terminal/*`, whose model has just
/// called `run_shell_command` with `arguments`: the command is announced and created.
fn shell_in_the_clients_terminal(arguments: &str) -> Harness {
    let mut h = Harness::new(50);
    h.terminal = true;
    h.start(
        "test",
        Posture::FullAccess,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let after = h.answer(&[], vec![call("c1", "run_shell_command", arguments)]);
    assert_eq!(
        after[1..],
        [
            "tool_call_update tool-1 in_progress []",
            "terminal/create /bin/sh [\"-c\", \"cargo test\"] in /home/user/project keeping 65536 bytes",
            "waiting",
        ]
    );
    h
}

fn exited(code: Option<u32>, signal: Option<&str>) -> TerminalExitStatus {
    let mut exit = TerminalExitStatus::default();
    exit.exit_code = code;
    exit.signal = signal.map(str::to_owned);
    exit
}

fn output(text: &str, truncated: bool) -> TerminalOutputResponse {
    let mut output = TerminalOutputResponse::default();
    output.output = text.to_owned();
    output.truncated = truncated;
    output
}

#[test]
fn run_shell_command_runs_in_the_clients_terminal_shown_live_then_read_and_released() {
    let mut h = shell_in_the_clients_terminal(r#"{"command":"cargo test"}"#);
    h.now = 1_000;
    // The terminal is embedded in the tool call; the default timeout counts from the wait.
    assert_eq!(
        h.reply(Reply::TerminalCreated(Ok("term-1".into()))),
        [
            "tool_call_update tool-1  [terminal:term-1]",
            "terminal/wait_for_exit term-1",
            "sleep until 121000",
        ]
    );
    h.now = 2_000;
    assert_eq!(
        h.reply(Reply::TerminalExited(Ok(exited(Some(101), None)))),
        ["terminal/output term-1", "waiting"]
    );
    assert_eq!(
        h.reply(Reply::TerminalOutput(Ok(output("test failed", true)))),
        [
            "terminal/release term-1",
            "tool_call_update tool-1 completed [terminal:term-1, text:Exit code: 101\ntest failed\n[output cut at 64 KiB]]",
            "model? 4 messages",
        ]
    );
    assert_eq!(
        h.tool_results(),
        [(
            "c1".into(),
            "Exit code: 101\ntest failed\n[output cut at 64 KiB]".into()
        )]
    );
}

#[test]
fn a_command_in_the_clients_terminal_past_its_timeout_is_killed_read_and_released() {
    let mut h = shell_in_the_clients_terminal(r#"{"command":"cargo test","timeout_ms":5000}"#);
    h.now = 1_000;
    assert_eq!(
        h.reply(Reply::TerminalCreated(Ok("term-1".into())))[2],
        "sleep until 6000"
    );
    // Woken early (another reply, a spurious wake): still its time to run.
    h.now = 5_999;
    assert_eq!(h.run(), ["sleep until 6000"]);
    h.now = 6_000;
    assert_eq!(
        h.run(),
        ["terminal/kill term-1", "terminal/output term-1", "waiting"]
    );
    // The wait the kill ended answers late: the output is what the turn waits for.
    assert_eq!(
        h.reply(Reply::TerminalExited(Ok(exited(None, Some("SIGKILL"))))),
        ["waiting"]
    );
    assert_eq!(
        h.reply(Reply::TerminalOutput(Ok(output("compiling\n", false)))),
        [
            "terminal/release term-1",
            "tool_call_update tool-1 failed [terminal:term-1, text:Error: timed out after 5000 ms and was killed\ncompiling\n]",
            "model? 4 messages",
        ]
    );
    assert_eq!(
        h.tool_results(),
        [(
            "c1".into(),
            "Error: timed out after 5000 ms and was killed\ncompiling\n".into()
        )]
    );
}

#[test]
fn a_cancel_while_the_clients_terminal_runs_kills_and_releases_it_and_ends_cancelled() {
    let mut h = shell_in_the_clients_terminal(r#"{"command":"cargo test"}"#);
    h.reply(Reply::TerminalCreated(Ok("term-1".into())));
    h.backend.cancel(S);
    assert_eq!(
        h.run(),
        [
            "terminal/kill term-1",
            "terminal/release term-1",
            "tool_call_update tool-1 failed [terminal:term-1, text:Error: cancelled by user]",
            "update usage_update",
            "end cancelled",
        ]
    );
    // The wait the kill ended answers after the turn: nothing happens.
    h.backend
        .resume(S, Reply::TerminalExited(Ok(exited(None, Some("SIGKILL")))));
    assert_eq!(h.run(), ["waiting"]);
}

#[test]
fn a_cancel_before_the_terminal_exists_ends_cancelled_without_terminal_requests() {
    // The terminal being created is the app's to kill when its id comes.
    let mut h = shell_in_the_clients_terminal(r#"{"command":"cargo test"}"#);
    h.backend.cancel(S);
    assert_eq!(
        h.run(),
        [
            "tool_call_update tool-1 failed [text:Error: cancelled by user]",
            "update usage_update",
            "end cancelled",
        ]
    );
}

#[test]
fn a_terminal_the_client_cannot_create_fails_the_tool_and_the_model_hears_why() {
    let mut h = shell_in_the_clients_terminal(r#"{"command":"cargo test"}"#);
    let why = "the client answered -32603 Internal error: no shell";
    assert_eq!(
        h.reply(Reply::TerminalCreated(Err(why.into()))),
        [
            "tool_call_update tool-1 failed [text:Error: the client's terminal: the client answered -32603 Internal error: no shell]",
            "model? 4 messages",
        ]
    );
    assert_eq!(
        h.tool_results(),
        [("c1".into(), format!("Error: the client's terminal: {why}"))]
    );
}

/// R-LLM-8: `todo_write` is shown as a `plan` (no tool call), even in plan mode, and the
/// model is told the list was updated.
#[test]
fn todo_write_shows_a_plan_in_any_mode_and_the_model_is_told() {
    let mut h = Harness::new(50);
    h.start(
        "plan it",
        Posture::Plan,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let todos = call(
        "c1",
        "todo_write",
        r#"{"todos":[{"content":"Look","status":"in_progress"},{"content":"Fix","status":"pending"}]}"#,
    );
    assert_eq!(
        h.answer(&[], vec![todos]),
        [
            "plan [in_progress medium Look, pending medium Fix]",
            "model? 4 messages"
        ]
    );
    assert_eq!(
        h.tool_results(),
        [("c1".into(), "Todo list updated.".into())]
    );
}

/// R-LLM-8, R-TURN-6: to a client that advertised `plan` it is a `plan_update`, items form,
/// with the session's one `planId`.
#[test]
fn todo_write_is_a_plan_update_when_the_client_renders_them() {
    let mut h = Harness::new(50);
    h.plan = true;
    h.start(
        "plan it",
        Posture::WorkspaceWrite,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let first = call(
        "c1",
        "todo_write",
        r#"{"todos":[{"content":"A","status":"pending"}]}"#,
    );
    let second = call(
        "c2",
        "todo_write",
        r#"{"todos":[{"content":"A","status":"completed"}]}"#,
    );
    assert_eq!(
        h.answer(&[], vec![first, second]),
        [
            "plan_update todos [pending medium A]",
            "plan_update todos [completed medium A]",
            "model? 5 messages"
        ]
    );
}

/// R-LLM-8: a malformed list is no plan: a failed tool call tells the model the shape.
#[test]
fn a_malformed_todo_write_fails_as_a_tool_call() {
    let mut h = Harness::new(50);
    h.start(
        "plan it",
        Posture::WorkspaceWrite,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let bad = call(
        "c1",
        "todo_write",
        r#"{"todos":[{"content":"A","status":"doing"}]}"#,
    );
    let why = "Error: todo_write needs 'todos': a non-empty list of {\"content\": string, \
               \"status\": \"pending\" | \"in_progress\" | \"completed\"}; todos[0] is not one";
    assert_eq!(
        h.answer(&[], vec![bad]),
        [
            "tool_call tool-1 pending other 'todo_write' at [] []".to_owned(),
            format!("tool_call_update tool-1 failed [text:{why}]"),
            "model? 4 messages".to_owned(),
        ]
    );
    assert_eq!(h.tool_results(), [("c1".into(), why.into())]);
}

/// R-LLM-7: the system prompt is the built-in text, the instruction files (root first),
/// then the client's `systemPrompt`.
#[test]
fn the_system_prompt_puts_instructions_between_the_built_in_text_and_the_clients() {
    let files = MemoryFiles::default()
        .git("/home/user")
        .file("/home/user/AGENTS.md", "Use tabs.")
        .file("/home/user/project/AGENTAO.md", "Run make check.");
    let mut backend = LlmBackend::new("m", 50).with_files(files, None);
    let prompt = [ContentBlock::text("go")];
    let mut history = history();
    history.record_user_prompt(&prompt);
    backend.start_turn(
        TurnStart {
            session: S,
            cwd: CWD,
            additional_directories: &[],
            system_prompt: Some("Answer in French."),
            posture: Posture::FullAccess,
            client_fs: ClientFs::default(),
            client_terminal: false,
            client_plan: false,
            prompt: &prompt,
            history: &history,
            mcp_tools: &[],
        },
        Instant(0),
    );
    backend.step(S, Instant(0));
    let Step::CallModel(request) = backend.step(S, Instant(0)) else {
        panic!("a model call");
    };
    let ChatMessage::System(system) = &request.messages[0] else {
        panic!("a system message first");
    };
    let tail = "\n\n# Project instructions\n\nThe project's instruction files follow, from the \
                repository root down to the working directory: where they disagree, the later \
                (nearer) one wins.\n\n## /home/user/AGENTS.md\n\nUse tabs.\n\n\
                ## /home/user/project/AGENTAO.md\n\nRun make check.\n\nAnswer in French.";
    assert!(system.starts_with("You are acp-cli"), "{system}");
    assert!(system.ends_with(tail), "{system}");
}

/// A turn whose prompt is text then an image, with the backend taking images or not: the
/// user message the model gets.
fn user_message_with_images(images: bool) -> ChatMessage {
    let mut backend = LlmBackend::new("m", 50)
        .with_files(MemoryFiles::default(), None)
        .with_images(images);
    assert_eq!(backend.prompt_image(), images);
    let mut image = ImageContent::default();
    image.data = "aGk=".into();
    image.mime_type = "image/png".into();
    let prompt = [
        ContentBlock::text("what is it?"),
        ContentBlock::Image(image),
    ];
    let mut history = history();
    history.record_user_prompt(&prompt);
    backend.start_turn(
        TurnStart {
            session: S,
            cwd: CWD,
            additional_directories: &[],
            system_prompt: None,
            posture: Posture::FullAccess,
            client_fs: ClientFs::default(),
            client_terminal: false,
            client_plan: false,
            prompt: &prompt,
            history: &history,
            mcp_tools: &[],
        },
        Instant(0),
    );
    backend.step(S, Instant(0));
    let Step::CallModel(request) = backend.step(S, Instant(0)) else {
        panic!("a model call");
    };
    request.messages[1].clone()
}

/// R-LLM-9: image blocks reach the model only when the backend takes images.
#[test]
fn image_blocks_go_to_the_model_only_when_it_takes_images() {
    assert_eq!(
        user_message_with_images(true),
        ChatMessage::UserParts(vec![
            UserPart::Text("what is it?".into()),
            UserPart::Image {
                mime_type: "image/png".into(),
                data: "aGk=".into()
            },
        ])
    );
    assert_eq!(
        user_message_with_images(false),
        ChatMessage::User("what is it?".into())
    );
}

// ----- usage and context that fits (R-LLM-USAGE-*, R-LLM-CONTEXT-*) -----

fn usage(prompt: u64, completion: u64) -> Option<crate::model::chat::TokenUsage> {
    Some(crate::model::chat::TokenUsage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        reasoning_tokens: None,
        cached_tokens: None,
    })
}

fn done_with(usage: Option<crate::model::chat::TokenUsage>) -> Reply {
    Reply::ModelDone(Ok(Finished {
        reason: FinishReason::Stop,
        tool_calls: vec![],
        usage,
    }))
}

/// A harness whose models have a `window` of tokens.
fn with_window(window: u64) -> Harness {
    let mut h = Harness::new(50);
    h.backend = LlmBackend::new("test-model", 50).with_context_window(Some(window));
    h
}

/// A history of `turns` finished turns, each answered with `answer_bytes` bytes.
fn long_history(turns: usize, answer_bytes: usize) -> SessionHistory {
    let mut history = history();
    for index in 0..turns {
        history.record_user_prompt(&[ContentBlock::text(format!("question {index}"))]);
        history.record_update(&SessionUpdate::AgentMessageChunk(
            acp_core::schema::ContentChunk::new(ContentBlock::text("x".repeat(answer_bytes))),
        ));
        history.end_turn(acp_core::schema::StopReason::EndTurn);
    }
    history
}

/// R-LLM-USAGE-1, R-LLM-USAGE-2, R-LLM-USAGE-3: the server's counts are the usage: the
/// context's tokens of the window, and the turn's sums just before its end.
#[test]
fn the_servers_token_counts_are_the_usage_reported() {
    let mut h = with_window(10_000);
    h.start(
        "hello",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    let counts = crate::model::chat::TokenUsage {
        prompt_tokens: 1200,
        completion_tokens: 34,
        reasoning_tokens: Some(5),
        cached_tokens: Some(1000),
    };
    assert_eq!(
        h.reply(done_with(Some(counts))),
        [
            "update usage_update",
            "usage in=1200 out=34 total=1234 thought=Some(5) cached=Some(1000)",
            "end end_turn"
        ]
    );
    assert_eq!(h.usage, [(1234, 10_000)]);
    // Unknown models have the default window; without counts, no turn usage is reported and
    // the context is estimated.
    let mut h = Harness::new(50);
    h.start(
        "hello",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    assert_eq!(
        h.reply(done_with(None)),
        ["update usage_update", "end end_turn"]
    );
    assert_eq!(h.usage.len(), 1);
    let (used, size) = h.usage[0];
    assert_eq!(size, crate::llm::window::DEFAULT_WINDOW);
    assert!(used > 0 && used < 10_000, "{used}");
}

/// R-LLM-USAGE-3: the next turn's size starts from the last turn's count, not an estimate.
#[test]
fn the_last_turns_count_is_where_the_next_estimate_starts() {
    let mut h = with_window(1_000_000);
    let mut history = history();
    h.start("one", Posture::ReadOnly, ClientFs::default(), &mut history);
    h.run();
    h.reply(done_with(usage(50_000, 10)));
    history.end_turn(acp_core::schema::StopReason::EndTurn);
    h.start("two", Posture::ReadOnly, ClientFs::default(), &mut history);
    h.run();
    h.reply(done_with(None));
    // 50,010 counted, plus "two" (1 token).
    assert_eq!(h.usage, [(50_010, 1_000_000), (50_011, 1_000_000)]);
}

/// R-LLM-CONTEXT-1, R-LLM-CONTEXT-2: a request over 80% of the window is preceded by a
/// compaction: the model summarizes, the summary streams as compaction updates, and the
/// request that follows is the summary and this turn's prompt.
#[test]
fn a_conversation_over_the_trigger_is_compacted_before_the_request() {
    let mut h = with_window(4_000);
    let mut history = long_history(4, 4_000);
    h.start("next", Posture::ReadOnly, ClientFs::default(), &mut history);
    assert_eq!(
        h.run(),
        [
            "update compaction compaction-1 in_progress summary=None error=None",
            "model? 11 messages"
        ]
    );
    let summary_request = h.requests[0].clone();
    assert!(summary_request.tools.is_empty());
    assert_eq!(
        summary_request.messages.last(),
        Some(&ChatMessage::User(super::compact::INSTRUCTION.into()))
    );
    assert_eq!(
        summary_request.messages[9],
        ChatMessage::User("next".into())
    );
    for piece in ["We asked ", "four questions."] {
        h.backend
            .resume(S, Reply::ModelEvent(StreamEvent::Text(piece.into())));
    }
    h.backend
        .resume(S, Reply::ModelEvent(StreamEvent::Reasoning("hm".into())));
    assert_eq!(
        h.run(),
        [
            "summary chunk compaction-1: We asked ",
            "summary chunk compaction-1: four questions.",
            "waiting"
        ]
    );
    assert_eq!(
        h.reply(done_with(usage(4_100, 6))),
        [
            "update compaction compaction-1 completed summary=Some(\"We asked four questions.\") error=None",
            "update usage_update",
            "model? 3 messages"
        ]
    );
    let request = h.requests[1].clone();
    assert_eq!(
        request.messages[1..],
        [
            super::context::summary_message("We asked four questions."),
            ChatMessage::User("next".into())
        ]
    );
    assert!(!request.tools.is_empty());
    let bytes =
        |r: &ChatRequest| -> usize { r.messages.iter().map(super::compact::message_bytes).sum() };
    assert!(
        bytes(&request) * 10 < bytes(&summary_request),
        "the request shrank"
    );
    assert_eq!(
        h.reply(done_with(usage(900, 20))),
        [
            "update usage_update",
            "usage in=5000 out=26 total=5026 thought=None cached=None",
            "end end_turn"
        ]
    );
    assert_eq!(h.usage.last(), Some(&(920, 4_000)));
}

/// R-LLM-CONTEXT-1: under the trigger nothing is compacted; a failed summary leaves the
/// context as it was and the turn goes on.
#[test]
fn a_failed_compaction_keeps_the_context_and_goes_on() {
    let mut h = with_window(1_000_000);
    h.start(
        "hi",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut long_history(4, 4_000),
    );
    assert_eq!(h.run(), ["model? 10 messages"], "far under the trigger");

    let mut h = with_window(4_000);
    h.start(
        "hi",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut long_history(4, 4_000),
    );
    h.run();
    let failure = ModelError::Status {
        status: 500,
        message: "boom".into(),
    };
    assert_eq!(
        h.reply(Reply::ModelDone(Err(failure))),
        [
            "update compaction compaction-1 failed summary=None error=Some(\"the model server answered HTTP 500: boom\")",
            "model? 10 messages"
        ]
    );
    assert!(!h.requests[1].tools.is_empty(), "the turn's own request");
}

/// R-LLM-CONTEXT-1: `/compact` compacts whatever the size and ends the turn; with nothing to
/// compact it says so; a failure fails the turn.
#[test]
fn slash_compact_forces_a_compaction_and_ends() {
    let mut h = with_window(1_000_000);
    let mut history = long_history(2, 10);
    h.start(
        "/compact",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut history,
    );
    assert_eq!(
        h.run(),
        [
            "update compaction compaction-1 in_progress summary=None error=None",
            "model? 6 messages"
        ]
    );
    assert!(
        !h.requests[0]
            .messages
            .contains(&ChatMessage::User("/compact".into())),
        "/compact is not sent to the model"
    );
    h.backend
        .resume(S, Reply::ModelEvent(StreamEvent::Text("Short.".into())));
    assert_eq!(
        h.reply(done_with(None)),
        [
            "summary chunk compaction-1: Short.",
            "update compaction compaction-1 completed summary=Some(\"Short.\") error=None",
            "update usage_update",
            "update usage_update",
            "end end_turn"
        ]
    );

    let mut h = with_window(1_000_000);
    h.start(
        "/compact",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut self::history(),
    );
    assert_eq!(
        h.run(),
        [
            "update session_info_update",
            "message: Nothing to compact yet.",
            "update usage_update",
            "end end_turn"
        ]
    );
    assert!(h.requests.is_empty());

    let mut h = with_window(1_000_000);
    h.start(
        "/compact",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut long_history(2, 10),
    );
    h.run();
    let failure = ModelError::Stream("gone".into());
    assert_eq!(
        h.reply(Reply::ModelDone(Err(failure))),
        [
            "update compaction compaction-1 failed summary=None error=Some(\"the model's stream broke off: gone\")",
            "update usage_update",
            "fail: the model's stream broke off: gone"
        ]
    );
}

/// R-LLM-CONTEXT-1: a cancel during a compaction cancels it and ends the turn `cancelled`.
#[test]
fn a_cancel_during_a_compaction_cancels_it() {
    let mut h = with_window(4_000);
    h.start(
        "hi",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut long_history(4, 4_000),
    );
    h.run();
    h.backend.cancel(S);
    assert_eq!(
        h.run(),
        [
            "update compaction compaction-1 cancelled summary=None error=None",
            "update usage_update",
            "end cancelled"
        ]
    );
}

/// R-LLM-CONTEXT-2: the history keeps the compaction point; the next turn's model context
/// starts at its summary, while a load replays everything, the compaction included.
#[test]
fn the_compaction_point_is_kept_and_the_model_context_starts_there() {
    use acp_core::schema::{CompactionStatus, CompactionUpdate};
    let mut history = long_history(2, 10);
    history.record_user_prompt(&[ContentBlock::text("third")]);
    let mut done = CompactionUpdate::new("compaction-1", CompactionStatus::Completed);
    done.summary = Some(Some(vec![ContentBlock::text("Two questions.")]));
    history.record_update(&SessionUpdate::CompactionUpdate(CompactionUpdate::new(
        "compaction-1",
        CompactionStatus::InProgress,
    )));
    history.record_update(&SessionUpdate::CompactionUpdate(done.clone()));
    history.record_update(&SessionUpdate::AgentMessageChunk(
        acp_core::schema::ContentChunk::new(ContentBlock::text("answer three")),
    ));
    history.end_turn(acp_core::schema::StopReason::EndTurn);
    history.record_user_prompt(&[ContentBlock::text("fourth")]);
    let messages = super::context::messages("sys".into(), &history, false);
    assert_eq!(
        messages,
        [
            ChatMessage::System("sys".into()),
            super::context::summary_message("Two questions."),
            ChatMessage::User("third".into()),
            ChatMessage::Assistant {
                content: Some("answer three".into()),
                tool_calls: vec![]
            },
            ChatMessage::User("fourth".into()),
        ]
    );
    history.end_turn(acp_core::schema::StopReason::EndTurn);
    let replayed: Vec<String> = crate::store::replay(&history)
        .iter()
        .map(|update| render(&Step::Update(update.clone())))
        .collect();
    assert_eq!(
        replayed,
        [
            "update user_message_chunk",
            "message: xxxxxxxxxx",
            "update user_message_chunk",
            "message: xxxxxxxxxx",
            "update user_message_chunk",
            "update compaction compaction-1 completed summary=Some(\"Two questions.\") error=None",
            "message: answer three",
            "update user_message_chunk",
        ]
    );
    // A second compaction gets the next id.
    let mut h = with_window(1_000_000);
    h.start(
        "/compact",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut history,
    );
    assert_eq!(
        h.run()[0],
        "update compaction compaction-2 in_progress summary=None error=None"
    );
}

/// R-LLM-CONTEXT-3: a tool result over the budget (64 KiB, less in a small window) is cut
/// with a note saying how much was cut.
#[test]
fn a_tool_result_over_the_budget_is_cut_with_a_note() {
    assert_eq!(
        super::turn::tool_budget(1_000_000),
        super::turn::TOOL_RESULT_MAX
    );
    assert_eq!(super::turn::tool_budget(1_000), 1_000);
    let mut h = with_window(1_000);
    h.start(
        "look",
        Posture::ReadOnly,
        ClientFs::default(),
        &mut history(),
    );
    h.run();
    h.answer(&[], vec![call("r1", "read_file", r#"{"path":"a.txt"}"#)]);
    let text = "é".repeat(1_500);
    h.reply(Reply::FileRead(Ok(text)));
    let (_, result) = &h.tool_results()[0];
    assert_eq!(
        result.as_str(),
        format!(
            "{}\n[2000 of 3000 bytes cut: a tool result is kept to 1000 bytes]",
            "é".repeat(500)
        )
    );
}
