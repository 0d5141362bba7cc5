//! The client peers' logic on the official Rust SDK (`agent-client-protocol` 5), shared by
//! the stdio peer (`src/bin/client.rs`, the agent as a child process) and the network peer
//! (`tests/interop/rust-http/src/bin/client.rs`, `agent-client-protocol-http`), which include
//! this file as a module: they differ only in the transport, their name and their command line.
//!
//! Drives the agent through a scenario of demo-backend commands (the top README,
//! "The demo commands") and prints `ok <step>` per step, `FAIL <step>: <why>` on
//! the first failure (exit 1), and `N passed, 0 failed` at the end.
//! A global 30 s timeout exits 1.
//!
//! With `--prompt TEXT` it sends that one prompt instead, in a session whose cwd is
//! the current directory, for any backend (the llm backend's tests): see
//! tests/interop/README.md, "One prompt".

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation,
    InitializeRequest, NewSessionRequest, PromptRequest, PromptResponse, ReadTextFileRequest,
    ReadTextFileResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionId, SessionNotification,
    SessionUpdate, StopReason, TextContent, ToolCallContent, ToolCallStatus,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, JsonRpcRequest, JsonRpcResponse};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

const FILE_TEXT: &str = "interop peer file, plain ASCII text.\n";
/// Who the client says it is (`clientInfo`, and the SDK's connection name).
#[derive(Clone, Copy)]
pub struct Identity {
    pub name: &'static str,
    pub title: &'static str,
}

impl Identity {
    fn implementation(self) -> Implementation {
        Implementation::new(self.name, "0.0.0").title(self.title.to_owned())
    }
}

const GLOBAL_TIMEOUT: Duration = Duration::from_secs(30);
const STEPS: [&str; 7] = [
    "initialize",
    "session/new",
    "tool allow_once",
    "tool reject_once",
    "ask",
    "read",
    "cancel",
];

/// `_agentao.cn/ask_user`, the Agentao extension request the agent sends us.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_agentao.cn/ask_user", response = AskUserResponse)]
struct AskUserRequest {
    #[serde(rename = "sessionId")]
    session_id: String,
    question: String,
}

/// The answer to `_agentao.cn/ask_user`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcResponse)]
struct AskUserResponse {
    outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

/// What the agent asked of us during the current turn, and how to answer.
#[derive(Default)]
struct TurnLog {
    permission_answer: String,
    ask_answer: String,
    updates: Vec<SessionUpdate>,
    permission_requests: Vec<RequestPermissionRequest>,
    reads: Vec<PathBuf>,
    questions: Vec<AskUserRequest>,
}

struct Shared {
    log: Mutex<TurnLog>,
    first_update: Notify,
    /// `--prompt` mode: stream the answer's text to stdout, report permissions on stderr.
    prompt_mode: bool,
}

impl Shared {
    fn log(&self) -> std::sync::MutexGuard<'_, TurnLog> {
        // A poisoned lock only means another handler panicked; the data is still usable.
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn begin_turn(&self) {
        let mut log = self.log();
        log.updates.clear();
        log.permission_requests.clear();
        log.reads.clear();
        log.questions.clear();
    }
}

struct Failure {
    step: &'static str,
    why: String,
}

fn fail(step: &'static str, why: impl Into<String>) -> Failure {
    Failure {
        step,
        why: why.into(),
    }
}

fn texts(updates: &[SessionUpdate], with_tools: bool) -> Vec<String> {
    let mut out = Vec::new();
    for update in updates {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(text) = &chunk.content {
                    out.push(text.text.clone());
                }
            }
            SessionUpdate::ToolCall(call) if with_tools => out.extend(content_texts(&call.content)),
            SessionUpdate::ToolCallUpdate(update) if with_tools => out.extend(content_texts(
                update.fields.content.as_deref().unwrap_or(&[]),
            )),
            _ => {}
        }
    }
    out
}

fn content_texts(content: &[ToolCallContent]) -> Vec<String> {
    content
        .iter()
        .filter_map(|item| match item {
            ToolCallContent::Content(c) => match &c.content {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn tool_statuses(updates: &[SessionUpdate]) -> Vec<ToolCallStatus> {
    updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(update) => update.fields.status,
            _ => None,
        })
        .collect()
}

struct Run {
    cx: ConnectionTo<Agent>,
    shared: Arc<Shared>,
    identity: Identity,
    passed: usize,
}

impl Run {
    fn ok(&mut self, step: &str) {
        self.passed += 1;
        println!("ok {step}");
    }

    fn current_step(&self) -> &'static str {
        STEPS[self.passed.min(STEPS.len() - 1)]
    }

    async fn prompt(&self, session_id: &SessionId, text: &str) -> Result<PromptResponse, Failure> {
        self.shared.begin_turn();
        self.cx
            .send_request(PromptRequest::new(
                session_id.clone(),
                vec![ContentBlock::Text(TextContent::new(text))],
            ))
            .block_task()
            .await
            .map_err(|e| fail(self.current_step(), format!("session/prompt failed: {e}")))
    }

    async fn tool_step(
        &mut self,
        step: &'static str,
        session_id: &SessionId,
        answer: &str,
        want: ToolCallStatus,
    ) -> Result<(), Failure> {
        self.shared.log().permission_answer = answer.to_owned();
        let response = self.prompt(session_id, "/tool edit Fix").await?;
        let log = self.shared.log();
        let [request] = log.permission_requests.as_slice() else {
            return Err(fail(
                step,
                format!(
                    "expected 1 permission request, got {}",
                    log.permission_requests.len()
                ),
            ));
        };
        let mut ids: Vec<String> = request
            .options
            .iter()
            .map(|o| o.option_id.to_string())
            .collect();
        ids.sort();
        if ids != ["allow_always", "allow_once", "reject_always", "reject_once"] {
            return Err(fail(step, format!("permission options were {ids:?}")));
        }
        let announced = log.updates.iter().find_map(|u| match u {
            SessionUpdate::ToolCall(call) => Some(call.tool_call_id.clone()),
            _ => None,
        });
        if announced.as_ref() != Some(&request.tool_call.tool_call_id) {
            return Err(fail(
                step,
                "permission request does not name the announced tool_call",
            ));
        }
        let statuses = tool_statuses(&log.updates);
        if !statuses.contains(&want) {
            return Err(fail(
                step,
                format!("expected a tool_call_update {want:?}, got statuses {statuses:?}"),
            ));
        }
        if response.stop_reason != StopReason::EndTurn {
            return Err(fail(step, format!("stopReason {:?}", response.stop_reason)));
        }
        drop(log);
        self.ok(step);
        Ok(())
    }

    async fn scenario(&mut self, work_dir: &Path, file_path: &Path) -> Result<(), Failure> {
        let step = "initialize";
        let init = self
            .cx
            .send_request(
                InitializeRequest::new(ProtocolVersion::V1)
                    .client_capabilities(
                        ClientCapabilities::new()
                            .fs(FileSystemCapabilities::new().read_text_file(true)),
                    )
                    .client_info(self.identity.implementation()),
            )
            .block_task()
            .await
            .map_err(|e| fail(step, format!("initialize failed: {e}")))?;
        if init.protocol_version != ProtocolVersion::V1 {
            return Err(fail(
                step,
                format!("protocolVersion {:?}", init.protocol_version),
            ));
        }
        self.ok(step);

        let step = "session/new";
        let session = self
            .cx
            .send_request(NewSessionRequest::new(work_dir))
            .block_task()
            .await
            .map_err(|e| fail(step, format!("session/new failed: {e}")))?;
        let session_id = session.session_id;
        if session_id.to_string().is_empty() {
            return Err(fail(step, "empty sessionId"));
        }
        self.ok(step);

        self.tool_step(
            "tool allow_once",
            &session_id,
            "allow_once",
            ToolCallStatus::Completed,
        )
        .await?;
        self.tool_step(
            "tool reject_once",
            &session_id,
            "reject_once",
            ToolCallStatus::Failed,
        )
        .await?;

        let step = "ask";
        self.shared.log().ask_answer = "Ada".to_owned();
        let response = self.prompt(&session_id, "/ask Your name?").await?;
        {
            let log = self.shared.log();
            let questions: Vec<&str> = log.questions.iter().map(|q| q.question.as_str()).collect();
            if questions != ["Your name?"] {
                return Err(fail(step, format!("ask_user requests were {questions:?}")));
            }
            if log.questions[0].session_id != session_id.to_string() {
                return Err(fail(step, "ask_user sessionId does not match"));
            }
            let said = texts(&log.updates, false);
            if !said.iter().any(|t| t.contains("Ada")) {
                return Err(fail(
                    step,
                    format!("no agent_message_chunk with the answer, got {said:?}"),
                ));
            }
            if response.stop_reason != StopReason::EndTurn {
                return Err(fail(step, format!("stopReason {:?}", response.stop_reason)));
            }
        }
        self.ok(step);

        let step = "read";
        let response = self
            .prompt(&session_id, &format!("/read {}", file_path.display()))
            .await?;
        {
            let log = self.shared.log();
            if log.reads != [file_path.to_path_buf()] {
                return Err(fail(
                    step,
                    format!("fs/read_text_file calls were {:?}", log.reads),
                ));
            }
            let size = FILE_TEXT.len().to_string();
            let said = texts(&log.updates, true);
            if !said.iter().any(|t| t.contains(&size)) {
                return Err(fail(
                    step,
                    format!("no reply mentions {size} bytes, got {said:?}"),
                ));
            }
            if response.stop_reason != StopReason::EndTurn {
                return Err(fail(step, format!("stopReason {:?}", response.stop_reason)));
            }
        }
        self.ok(step);

        let step = "cancel";
        self.shared.begin_turn();
        let first_update = self.shared.first_update.notified();
        let turn = self.cx.send_request(PromptRequest::new(
            session_id.clone(),
            vec![ContentBlock::Text(TextContent::new("/sleep 10000"))],
        ));
        let turn = turn.block_task();
        tokio::pin!(turn);
        tokio::select! {
            ended = &mut turn => {
                return Err(fail(step, format!("the turn ended before the cancel: {ended:?}")));
            }
            () = first_update => {}
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        self.cx
            .send_notification(CancelNotification::new(session_id.clone()))
            .map_err(|e| fail(step, format!("session/cancel failed: {e}")))?;
        let response = tokio::time::timeout(Duration::from_secs(5), turn)
            .await
            .map_err(|_| fail(step, "no answer within 5 s of session/cancel"))?
            .map_err(|e| fail(step, format!("session/prompt failed: {e}")))?;
        if response.stop_reason != StopReason::Cancelled {
            return Err(fail(
                step,
                format!("stopReason {:?}, expected cancelled", response.stop_reason),
            ));
        }
        self.ok(step);
        Ok(())
    }
}

/// What the run does once connected.
pub enum Mode {
    /// The demo scenario (the default).
    Scenario,
    /// `--prompt TEXT`: that one prompt.
    Prompt(String),
}

/// `--prompt` mode: one prompt in a new session in the current directory. The answer's text
/// was streamed by the update handler; this prints the stop reason after it and returns the
/// exit code (0 for `end_turn`, 1 for any other stop reason).
async fn one_prompt(
    cx: &ConnectionTo<Agent>,
    identity: Identity,
    text: &str,
) -> Result<usize, Failure> {
    let step = "prompt";
    cx.send_request(
        InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(ClientCapabilities::new())
            .client_info(identity.implementation()),
    )
    .block_task()
    .await
    .map_err(|e| fail(step, format!("initialize failed: {e}")))?;
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .map_err(|e| fail(step, format!("current directory: {e}")))?;
    let session = cx
        .send_request(NewSessionRequest::new(cwd))
        .block_task()
        .await
        .map_err(|e| fail(step, format!("session/new failed: {e}")))?;
    let response = cx
        .send_request(PromptRequest::new(
            session.session_id,
            vec![ContentBlock::Text(TextContent::new(text))],
        ))
        .block_task()
        .await
        .map_err(|e| fail(step, format!("session/prompt failed: {e}")))?;
    let reason = serde_json::to_value(response.stop_reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{:?}", response.stop_reason));
    println!("\nstop reason: {reason}");
    Ok(usize::from(response.stop_reason != StopReason::EndTurn))
}

async fn run(
    transport: impl ConnectTo<Client> + 'static,
    identity: Identity,
    mode: Mode,
) -> Result<usize, Failure> {
    let work = std::env::temp_dir().join(format!("acp-interop-rust-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| fail("initialize", format!("temp dir: {e}")))?;
    let work_dir = std::fs::canonicalize(&work).unwrap_or(work);
    let file_path = work_dir.join("hello.txt");
    std::fs::write(&file_path, FILE_TEXT)
        .map_err(|e| fail("initialize", format!("temp file: {e}")))?;

    let shared = Arc::new(Shared {
        log: Mutex::new(TurnLog {
            permission_answer: "allow_once".to_owned(),
            ask_answer: "Ada".to_owned(),
            ..TurnLog::default()
        }),
        first_update: Notify::new(),
        prompt_mode: matches!(mode, Mode::Prompt(_)),
    });

    let on_update = shared.clone();
    let on_permission = shared.clone();
    let on_read = shared.clone();
    let on_ask = shared.clone();
    let scenario_shared = shared.clone();
    let (dir, file) = (work_dir.clone(), file_path.clone());
    let outcome = Client
        .v1()
        .name(identity.name)
        .on_receive_notification(
            async move |notification: SessionNotification, _cx: ConnectionTo<Agent>| {
                if on_update.prompt_mode
                    && let SessionUpdate::AgentMessageChunk(chunk) = &notification.update
                    && let ContentBlock::Text(text) = &chunk.content
                {
                    let mut stdout = std::io::stdout().lock();
                    let _ = stdout.write_all(text.text.as_bytes());
                    let _ = stdout.flush();
                }
                on_update.log().updates.push(notification.update);
                on_update.first_update.notify_one();
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        _cx: ConnectionTo<Agent>| {
                let answer = {
                    let mut log = on_permission.log();
                    log.permission_requests.push(request.clone());
                    log.permission_answer.clone()
                };
                let outcome = match request
                    .options
                    .iter()
                    .find(|o| o.option_id.to_string() == answer)
                {
                    Some(option) => RequestPermissionOutcome::Selected(
                        SelectedPermissionOutcome::new(option.option_id.clone()),
                    ),
                    None => RequestPermissionOutcome::Cancelled,
                };
                if on_permission.prompt_mode {
                    let chosen = match &outcome {
                        RequestPermissionOutcome::Selected(selected) => {
                            selected.option_id.to_string()
                        }
                        _ => "cancelled".to_owned(),
                    };
                    let title = request.tool_call.fields.title.clone().unwrap_or_default();
                    eprintln!("permission: {title} -> {chosen}");
                }
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest,
                        responder: Responder<ReadTextFileResponse>,
                        _cx: ConnectionTo<Agent>| {
                on_read.log().reads.push(request.path.clone());
                match std::fs::read_to_string(&request.path) {
                    Ok(content) => responder.respond(ReadTextFileResponse::new(content)),
                    Err(e) => responder.respond_with_error(
                        agent_client_protocol::Error::internal_error()
                            .data(format!("{}: {e}", request.path.display())),
                    ),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: AskUserRequest,
                        responder: Responder<AskUserResponse>,
                        _cx: ConnectionTo<Agent>| {
                let text = {
                    let mut log = on_ask.log();
                    log.questions.push(request);
                    log.ask_answer.clone()
                };
                responder.respond(AskUserResponse {
                    outcome: "answered".to_owned(),
                    text: Some(text),
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            if let Mode::Prompt(text) = &mode {
                return Ok(one_prompt(&cx, identity, text).await);
            }
            let mut run = Run {
                cx,
                shared: scenario_shared,
                identity,
                passed: 0,
            };
            let result = run.scenario(&dir, &file).await;
            Ok(result.map(|()| run.passed))
        })
        .await;
    let _ = std::fs::remove_dir_all(&work_dir);
    match outcome {
        Ok(result) => result,
        Err(e) => Err(fail("initialize", format!("connection failed: {e}"))),
    }
}

/// Runs the scenario (or `--prompt`'s one prompt) over `transport` under the global timeout,
/// prints the result, and returns the exit code.
pub async fn drive(
    transport: impl ConnectTo<Client> + 'static,
    identity: Identity,
    mode: Mode,
) -> ExitCode {
    let prompt_mode = matches!(mode, Mode::Prompt(_));
    match tokio::time::timeout(GLOBAL_TIMEOUT, run(transport, identity, mode)).await {
        Ok(Ok(code)) if prompt_mode => ExitCode::from(u8::from(code != 0)),
        Ok(Ok(passed)) => {
            println!("{passed} passed, 0 failed");
            ExitCode::SUCCESS
        }
        Ok(Err(failure)) => {
            if prompt_mode {
                // After any text the answer streamed.
                println!();
            }
            println!("FAIL {}: {}", failure.step, failure.why);
            ExitCode::FAILURE
        }
        Err(_) => {
            println!(
                "FAIL timeout: no result within {} s",
                GLOBAL_TIMEOUT.as_secs()
            );
            ExitCode::FAILURE
        }
    }
}
