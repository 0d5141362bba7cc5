//! The application with the llm backend: the jobs a turn hands the driver (model, shell),
//! their replies turned into updates, a failure with its own code, a cancel that aborts the
//! running job, the session's model in the request, and the shell in a client's terminal
//! (the client's side scripted as lines).

use acp_core::Instant;

use super::{FakeWorkspace, SID, request_id, workspace};
use crate::agent::app::{AgentApp, Job, JobId, agent_config};
use crate::agent::backend::{Reply, ShellOutcome};
use crate::agent::sessions::SessionTable;
use crate::llm::backend::{LLM_TITLE, LlmBackend};
use crate::model::chat::{
    ChatMessage, ChatRequest, FinishReason, Finished, ModelError, ModelToolCall, StreamEvent,
};

type App = AgentApp<LlmBackend, FakeWorkspace>;

fn app() -> App {
    app_with_client("{}")
}

/// An app with one session opened by a client with these `clientCapabilities`.
fn app_with_client(capabilities: &str) -> App {
    let mut app = AgentApp::new(
        agent_config(LLM_TITLE),
        LlmBackend::new("gpt-test", 50),
        workspace(),
        SessionTable::with_nonce(7).with_model("openai", "gpt-test"),
    );
    let out = send(
        &mut app,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":1,\"clientCapabilities\":{capabilities}}}}}\n{}\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
        ),
    );
    assert!(out.contains(r#""currentValue":"openai/gpt-test""#), "{out}");
    app
}

fn take_output(app: &mut App) -> String {
    let out = String::from_utf8(app.poll_transmit().to_vec()).expect("utf-8");
    app.transmitted(out.len());
    out
}

fn send(app: &mut App, input: &str) -> String {
    // The connection takes one request line per input (its params are kept until the next
    // one): feed the rest until everything is taken, keeping the output in order.
    let mut rest = input.as_bytes();
    let mut out = String::new();
    while !rest.is_empty() {
        let taken = app.handle_bytes(Instant(0), rest);
        rest = &rest[taken..];
        out.push_str(&take_output(app));
    }
    out
}

fn prompt(app: &mut App, text: &str) -> String {
    send(
        app,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"{SID}\",\"prompt\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}\n"
        ),
    )
}

/// The model job the turn is waiting for.
fn model_job(app: &mut App) -> (JobId, ChatRequest) {
    match app.poll_job() {
        Some(Job::Model { id, request }) => (id, request),
        other => panic!("expected a model job, got {other:?}"),
    }
}

/// What a job's reply produced, without the title and usage reports (tested on their own).
fn reply(app: &mut App, id: JobId, reply: Reply) -> String {
    app.job_reply(Instant(0), id, reply);
    without_reports(&take_output(app))
}

fn without_reports(out: &str) -> String {
    out.lines()
        .filter(|line| {
            !line.contains("\"usage_update\"") && !line.contains("\"session_info_update\"")
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

fn done(calls: Vec<ModelToolCall>) -> Reply {
    let reason = match calls.is_empty() {
        true => FinishReason::Stop,
        false => FinishReason::ToolCalls,
    };
    Reply::ModelDone(Ok(Finished {
        usage: None,
        reason,
        tool_calls: calls,
    }))
}

#[test]
fn a_model_job_streams_chunks_then_the_turn_ends() {
    let mut app = app();
    assert_eq!(without_reports(&prompt(&mut app, "hello")), "");
    let (id, request) = model_job(&mut app);
    assert_eq!(request.model, "gpt-test");
    assert_eq!(request.messages[1], ChatMessage::User("hello".into()));
    let out = reply(
        &mut app,
        id,
        Reply::ModelEvent(StreamEvent::Text("Hi".into())),
    );
    assert_eq!(
        out,
        format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"{SID}\",\"update\":{{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{{\"type\":\"text\",\"text\":\"Hi\"}}}}}}}}\n"
        )
    );
    let out = reply(&mut app, id, done(vec![]));
    assert_eq!(
        out,
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}\n"
    );
    assert_eq!(app.poll_job(), None);
}

#[test]
fn a_missing_key_fails_the_prompt_with_32000_and_the_session_stays_usable() {
    let mut app = app();
    prompt(&mut app, "hello");
    let (id, _) = model_job(&mut app);
    let missing = ModelError::MissingKey {
        variable: "OPENAI_API_KEY".into(),
        provider: "openai".into(),
    };
    assert_eq!(
        reply(&mut app, id, Reply::ModelDone(Err(missing))),
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32000,\"message\":\"Authentication required: set OPENAI_API_KEY (LLM_PROVIDER=openai)\"}}\n"
    );
    prompt(&mut app, "again");
    let (id, request) = model_job(&mut app);
    let status = ModelError::Status {
        status: 500,
        message: "down".into(),
    };
    assert_eq!(
        reply(&mut app, id, Reply::ModelDone(Err(status))),
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32603,\"message\":\"Internal error: the model server answered HTTP 500: down\"}}\n"
    );
    // The failed turn stays in the context.
    assert_eq!(request.messages[1], ChatMessage::User("hello".into()));
}

#[test]
fn a_cancel_aborts_the_running_model_job_and_its_late_replies_are_dropped() {
    let mut app = app();
    prompt(&mut app, "slow");
    let (id, _) = model_job(&mut app);
    reply(
        &mut app,
        id,
        Reply::ModelEvent(StreamEvent::Text("par".into())),
    );
    let out = send(
        &mut app,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{{\"sessionId\":\"{SID}\"}}}}\n"
        ),
    );
    assert_eq!(
        without_reports(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"cancelled\"}}\n"
    );
    assert_eq!(app.poll_job(), Some(Job::Abort(id)));
    assert_eq!(
        reply(
            &mut app,
            id,
            Reply::ModelEvent(StreamEvent::Text("tial".into()))
        ),
        ""
    );
    assert_eq!(reply(&mut app, id, done(vec![])), "");
}

#[test]
fn a_shell_job_runs_in_the_session_cwd_and_its_outcome_reaches_the_next_request() {
    let mut app = app();
    send(
        &mut app,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session/set_mode\",\"params\":{{\"sessionId\":\"{SID}\",\"modeId\":\"full-access\"}}}}\n"
        ),
    );
    prompt(&mut app, "test it");
    let (id, _) = model_job(&mut app);
    let call = ModelToolCall {
        id: "c1".into(),
        name: "run_shell_command".into(),
        arguments: r#"{"command":"cargo test","timeout_ms":5000}"#.into(),
    };
    let out = reply(&mut app, id, done(vec![call]));
    assert!(
        out.contains(r#""title":"Run cargo test","kind":"execute""#),
        "{out}"
    );
    let Some(Job::Shell {
        id,
        command,
        cwd,
        timeout_ms,
    }) = app.poll_job()
    else {
        panic!("a shell job");
    };
    assert_eq!(
        (command.as_str(), cwd.as_str(), timeout_ms),
        ("cargo test", "/p", 5000)
    );
    let outcome = ShellOutcome {
        exit_code: Some(0),
        output: "ok".into(),
        truncated: false,
        timed_out: false,
    };
    reply(&mut app, id, Reply::ShellDone(Ok(outcome)));
    let (_, request) = model_job(&mut app);
    assert_eq!(
        request.messages.last(),
        Some(&ChatMessage::Tool {
            tool_call_id: "c1".into(),
            content: "Exit code: 0\nok".into()
        })
    );
}

#[test]
fn set_model_names_the_model_of_the_next_request() {
    let mut app = app();
    let out = send(
        &mut app,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"_agentao.cn/set_model\",\"params\":{{\"sessionId\":\"{SID}\",\"model\":\"gpt-other\"}}}}\n"
        ),
    );
    assert_eq!(
        out,
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"model\":\"gpt-other\"}}\n"
    );
    prompt(&mut app, "hi");
    assert_eq!(model_job(&mut app).1.model, "gpt-other");
}

#[test]
fn eof_aborts_the_running_jobs() {
    let mut app = app();
    prompt(&mut app, "hello");
    let (id, _) = model_job(&mut app);
    app.handle_eof(Instant(0));
    assert_eq!(app.poll_job(), Some(Job::Abort(id)));
}

#[test]
fn the_first_turn_is_titled_and_every_turn_closes_with_its_usage() {
    let mut app = app();
    let out = prompt(&mut app, "fix the build");
    assert_eq!(
        out,
        format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"{SID}\",\"update\":{{\"sessionUpdate\":\"session_info_update\",\"title\":\"fix the build\"}}}}}}\n"
        )
    );
    let (id, _) = model_job(&mut app);
    app.job_reply(
        Instant(0),
        id,
        Reply::ModelEvent(StreamEvent::Text("ok".into())),
    );
    take_output(&mut app);
    app.job_reply(Instant(0), id, done(vec![]));
    let lines: Vec<String> = take_output(&mut app).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("\"sessionUpdate\":\"usage_update\""),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}"
    );
    // The second turn has no title of its own.
    assert_eq!(prompt(&mut app, "again"), "");
}

/// The client's result for our request `id`, as a line.
fn answer(id: &str, result: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}\n")
}

/// Our requests in `out`, in order, as `method params` (their ids only count up).
fn requests(out: &str) -> Vec<String> {
    out.lines()
        .filter(|line| line.contains("\"id\":") && line.contains("\"method\":"))
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("json");
            let params = &line[line.find("\"params\":").expect("params") + 9..line.len() - 1];
            format!("{} {params}", value["method"].as_str().expect("method"))
        })
        .collect()
}

/// A session in full-access mode whose client serves `terminal/*`, where the model has just
/// called `run_shell_command` for `cargo test` with a 5 s timeout, at time 0. Returns the
/// `terminal/create` request's id.
fn shell_in_the_clients_terminal(app: &mut App) -> String {
    send(
        app,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session/set_mode\",\"params\":{{\"sessionId\":\"{SID}\",\"modeId\":\"full-access\"}}}}\n"
        ),
    );
    prompt(app, "test it");
    let (id, _) = model_job(app);
    let call = ModelToolCall {
        id: "c1".into(),
        name: "run_shell_command".into(),
        arguments: r#"{"command":"cargo test","timeout_ms":5000}"#.into(),
    };
    let out = reply(app, id, done(vec![call]));
    assert_eq!(
        requests(&out),
        [format!(
            "terminal/create {{\"sessionId\":\"{SID}\",\"command\":\"/bin/sh\",\"args\":[\"-c\",\"cargo test\"],\"cwd\":\"/p\",\"outputByteLimit\":65536}}"
        )]
    );
    // The shell is the client's: no local child.
    assert_eq!(app.poll_job(), None);
    request_id(&out, "terminal/create")
}

fn terminal_request(method: &str, terminal: &str) -> String {
    format!("{method} {{\"sessionId\":\"{SID}\",\"terminalId\":\"{terminal}\"}}")
}

#[test]
fn the_shell_runs_in_the_clients_terminal_shown_in_the_tool_call_then_read_and_released() {
    let mut app = app_with_client(r#"{"terminal":true}"#);
    let create = shell_in_the_clients_terminal(&mut app);
    let out = send(&mut app, &answer(&create, r#"{"terminalId":"term-1"}"#));
    assert!(
        out.contains(r#""sessionUpdate":"tool_call_update","toolCallId":"tool-1","content":[{"type":"terminal","terminalId":"term-1"}]"#),
        "{out}"
    );
    assert_eq!(
        requests(&out),
        [terminal_request("terminal/wait_for_exit", "term-1")]
    );
    // The timeout is a deadline on the agent's clock.
    assert_eq!(app.poll_timeout(), Some(Instant(5000)));
    let wait = request_id(&out, "terminal/wait_for_exit");
    let out = send(&mut app, &answer(&wait, r#"{"exitCode":0}"#));
    assert_eq!(
        requests(&out),
        [terminal_request("terminal/output", "term-1")]
    );
    let read = request_id(&out, "terminal/output");
    let out = send(
        &mut app,
        &answer(&read, r#"{"output":"ok","truncated":false}"#),
    );
    assert_eq!(
        requests(&out),
        [terminal_request("terminal/release", "term-1")]
    );
    assert!(
        out.contains(r#""status":"completed","content":[{"type":"terminal","terminalId":"term-1"},{"type":"content","content":{"type":"text","text":"Exit code: 0\nok"}}]"#),
        "{out}"
    );
    let (_, request) = model_job(&mut app);
    assert_eq!(
        request.messages.last(),
        Some(&ChatMessage::Tool {
            tool_call_id: "c1".into(),
            content: "Exit code: 0\nok".into()
        })
    );
    // The release's answer is nobody's business.
    let release = request_id(&out, "terminal/release");
    assert_eq!(send(&mut app, &answer(&release, "{}")), "");
}

#[test]
fn the_clients_terminal_is_killed_at_the_timeout_and_on_cancel_even_before_its_id_is_known() {
    let mut app = app_with_client(r#"{"terminal":true}"#);
    let create = shell_in_the_clients_terminal(&mut app);
    send(&mut app, &answer(&create, r#"{"terminalId":"term-1"}"#));
    app.handle_timeout(Instant(4999));
    assert_eq!(requests(&take_output(&mut app)), Vec::<String>::new());
    app.handle_timeout(Instant(5000));
    let out = take_output(&mut app);
    assert_eq!(
        requests(&out),
        [
            terminal_request("terminal/kill", "term-1"),
            terminal_request("terminal/output", "term-1"),
        ]
    );
    let read = request_id(&out, "terminal/output");
    let out = send(
        &mut app,
        &answer(&read, r#"{"output":"compiling","truncated":false}"#),
    );
    assert_eq!(
        requests(&out),
        [terminal_request("terminal/release", "term-1")]
    );
    let (id, request) = model_job(&mut app);
    assert_eq!(
        request.messages.last(),
        Some(&ChatMessage::Tool {
            tool_call_id: "c1".into(),
            content: "Error: timed out after 5000 ms and was killed\ncompiling".into()
        })
    );
    // Again; the client cancels before it says which terminal it made.
    let call = ModelToolCall {
        id: "c2".into(),
        name: "run_shell_command".into(),
        arguments: r#"{"command":"cargo test"}"#.into(),
    };
    let out = reply(&mut app, id, done(vec![call]));
    let create = request_id(&out, "terminal/create");
    let out = send(
        &mut app,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{{\"sessionId\":\"{SID}\"}}}}\n"
        ),
    );
    assert!(
        out.ends_with("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"cancelled\"}}\n"),
        "{out}"
    );
    assert_eq!(requests(&out), Vec::<String>::new());
    // Its id comes after the turn: it is killed and released at once.
    let out = send(&mut app, &answer(&create, r#"{"terminalId":"term-2"}"#));
    assert_eq!(
        requests(&out),
        [
            terminal_request("terminal/kill", "term-2"),
            terminal_request("terminal/release", "term-2"),
        ]
    );
}

#[test]
fn a_cancel_kills_and_releases_the_running_terminal_before_the_turn_answers_cancelled() {
    let mut app = app_with_client(r#"{"terminal":true}"#);
    let create = shell_in_the_clients_terminal(&mut app);
    send(&mut app, &answer(&create, r#"{"terminalId":"term-1"}"#));
    let out = send(
        &mut app,
        &format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{{\"sessionId\":\"{SID}\"}}}}\n"
        ),
    );
    assert_eq!(
        requests(&out),
        [
            terminal_request("terminal/kill", "term-1"),
            terminal_request("terminal/release", "term-1"),
        ]
    );
    assert!(
        out.ends_with("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"cancelled\"}}\n"),
        "{out}"
    );
    // The deadline went with the turn.
    assert_eq!(app.poll_timeout(), None);
}
