//! The agent peers' logic on the official Rust SDK (`agent-client-protocol` 5), shared by the
//! stdio peer (`src/bin/agent.rs`, ACP over stdin/stdout) and the network peer
//! (`tests/interop/rust-http/src/bin/agent.rs`, served by `agent-client-protocol-http`), which
//! include this file as a module: they differ only in the transport, their name and their
//! command line.
//!
//! A small subset of the demo backend (the top README, "The demo commands"), so
//! our client can be tested against a real SDK agent:
//!
//! ```text
//! /echo TEXT          one agent_message_chunk with TEXT
//! /tool KIND TITLE    tool_call pending -> session/request_permission ->
//!                     in_progress + completed (allowed) or failed (rejected)
//! /read PATH          fs/read_text_file when the client offers it, otherwise a
//!                     local read; reports the byte count
//! /ask QUESTION       `_agentao.cn/ask_user`; echoes the answer
//! /sleep MS           waits; session/cancel ends the wait -> stopReason cancelled
//! /flood N [BYTES]    N agent_message_chunks of BYTES bytes each (default 32), yielding
//!                     every 64 sends as a streaming agent would (the e2e benchmark)
//! ```
//!
//! After every `session/new` answer it advertises these commands
//! (`available_commands_update`), so a client, and `acp-cli conform`, can drive them.
//! `/flood` is the notification-rate workload of `benches/net/` and of the e2e benchmark.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate,
    CancelNotification, ContentBlock, ContentChunk, Implementation, InitializeRequest,
    InitializeResponse, Meta, NewSessionRequest, NewSessionResponse, PermissionOption,
    PermissionOptionKind, PromptRequest, PromptResponse, ReadTextFileRequest,
    RequestPermissionOutcome, RequestPermissionRequest, SessionId, SessionNotification,
    SessionUpdate, StopReason, TextContent, ToolCall, ToolCallContent, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind, UnstructuredCommandInput,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, JsonRpcRequest, JsonRpcResponse};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

const ASK_USER: &str = "_agentao.cn/ask_user";
const USER_UNAVAILABLE: &str = "(user unavailable)";
const COMMANDS: &str =
    "/echo TEXT, /tool KIND TITLE, /read PATH, /ask QUESTION, /sleep MS, /flood N [BYTES]";
const MAX_SLEEP_MS: u64 = 600_000;
/// The default `/flood` chunk size, as in our demo backend.
const FLOOD_DEFAULT_BYTES: usize = 32;
/// The largest `/flood` chunk, as in our demo backend.
const FLOOD_MAX_BYTES: usize = 1 << 20;
/// `/flood` yields to the runtime after this many sends, as a streaming agent would.
const FLOOD_YIELD_EVERY: u64 = 64;

/// Who the agent says it is (`agentInfo`, and the SDK's connection name), and how it names
/// sessions.
#[derive(Clone, Copy)]
pub struct Identity {
    pub name: &'static str,
    pub title: &'static str,
    /// Session ids are this prefix and a number, unique in the process.
    pub session_prefix: &'static str,
}

/// Session numbers, unique over all connections of the process.
static NEXT_SESSION: AtomicU64 = AtomicU64::new(0);

/// `_agentao.cn/ask_user`, the Agentao extension request we send the client.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_agentao.cn/ask_user", response = AskUserResponse)]
struct AskUserRequest {
    #[serde(rename = "sessionId")]
    session_id: String,
    question: String,
}

/// The client's answer to `_agentao.cn/ask_user`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcResponse)]
struct AskUserResponse {
    outcome: String,
    #[serde(default)]
    text: Option<String>,
}

struct Session {
    cwd: PathBuf,
    /// `true` once session/cancel arrived for the running turn.
    cancelled: watch::Sender<bool>,
}

#[derive(Default)]
struct State {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    client_reads_files: AtomicBool,
    next_tool_call: AtomicU64,
    /// Self-check of the client peers (run-peers.sh): makes every /tool fail even when
    /// allowed, so a client that does not notice is caught.
    fault_deny: bool,
}

impl State {
    fn session(&self, id: &SessionId) -> Option<Arc<Session>> {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.get(&id.to_string()).cloned()
    }
}

/// The turn was cancelled by session/cancel.
struct Cancelled;

struct Turn {
    cx: ConnectionTo<Client>,
    state: Arc<State>,
    session_id: SessionId,
    session: Arc<Session>,
    cancelled: watch::Receiver<bool>,
}

impl Turn {
    fn is_cancelled(&self) -> bool {
        *self.cancelled.borrow()
    }

    async fn until_cancelled(&self) {
        let mut rx = self.cancelled.clone();
        // An error means the sender is gone: the session can no longer be cancelled.
        if rx.wait_for(|c| *c).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    fn update(&self, update: SessionUpdate) {
        // A send error means the connection is closing; the turn ends with it.
        let _ = self
            .cx
            .send_notification(SessionNotification::new(self.session_id.clone(), update));
    }

    fn say(&self, text: impl Into<String>) {
        self.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::Text(TextContent::new(text.into())),
        )));
    }

    fn new_tool_call_id(&self) -> String {
        let n = self.state.next_tool_call.fetch_add(1, Ordering::Relaxed) + 1;
        format!("call-{n}")
    }

    fn set_status(&self, id: &str, status: ToolCallStatus, text: Option<String>) {
        let mut fields = ToolCallUpdateFields::new().status(status);
        if let Some(text) = text {
            fields = fields.content(vec![ToolCallContent::Content(
                agent_client_protocol::v1::schema::Content::new(text),
            )]);
        }
        self.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_owned(),
            fields,
        )));
    }

    async fn run(&self, prompt: &[ContentBlock]) -> StopReason {
        let lines: Vec<String> = prompt
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            })
            .flat_map(|text| text.lines().map(str::to_owned).collect::<Vec<_>>())
            .collect();
        for line in &lines {
            if self.is_cancelled() {
                return StopReason::Cancelled;
            }
            if self.line(line).await.is_err() {
                return StopReason::Cancelled;
            }
        }
        if self.is_cancelled() {
            StopReason::Cancelled
        } else {
            StopReason::EndTurn
        }
    }

    async fn line(&self, line: &str) -> Result<(), Cancelled> {
        if !line.starts_with('/') {
            if !line.trim().is_empty() {
                self.say(line);
            }
            return Ok(());
        }
        let (command, rest) = line.split_once(' ').unwrap_or((line, ""));
        match command {
            "/echo" => self.say(rest),
            "/tool" => {
                let (kind, title) = rest.split_once(' ').unwrap_or((rest, ""));
                let kind = if kind.is_empty() { "other" } else { kind };
                let title = if title.is_empty() { "tool" } else { title };
                return self.tool(kind, title).await;
            }
            "/read" => self.read(rest.trim()).await,
            "/ask" => self.ask(rest).await,
            "/sleep" => return self.sleep(rest.trim()).await,
            "/flood" => return self.flood(rest).await,
            _ => self.say(format!("unknown command {command}; commands: {COMMANDS}")),
        }
        Ok(())
    }

    async fn tool(&self, kind: &str, title: &str) -> Result<(), Cancelled> {
        let id = self.new_tool_call_id();
        let kind: ToolKind =
            serde_json::from_value(serde_json::Value::from(kind)).unwrap_or(ToolKind::Other);
        self.update(SessionUpdate::ToolCall(
            ToolCall::new(id.clone(), title)
                .kind(kind)
                .status(ToolCallStatus::Pending),
        ));
        let options = [
            ("allow_once", "Allow once", PermissionOptionKind::AllowOnce),
            (
                "allow_always",
                "Allow always",
                PermissionOptionKind::AllowAlways,
            ),
            (
                "reject_once",
                "Reject once",
                PermissionOptionKind::RejectOnce,
            ),
            (
                "reject_always",
                "Reject always",
                PermissionOptionKind::RejectAlways,
            ),
        ]
        .into_iter()
        .map(|(id, name, kind)| PermissionOption::new(id, name, kind))
        .collect();
        let request = RequestPermissionRequest::new(
            self.session_id.clone(),
            ToolCallUpdate::new(
                id.clone(),
                ToolCallUpdateFields::new()
                    .title(title.to_owned())
                    .kind(kind)
                    .status(ToolCallStatus::Pending),
            ),
            options,
        );
        let answer = tokio::select! {
            answer = self.cx.send_request(request).block_task() => Some(answer),
            () = self.until_cancelled() => None,
        };
        // An error answer, a cancelled outcome or an unknown option all mean rejected.
        let allowed = match answer {
            Some(Ok(response)) => match response.outcome {
                RequestPermissionOutcome::Selected(selected) => {
                    let option = selected.option_id.to_string();
                    option == "allow_once" || option == "allow_always"
                }
                _ => false,
            },
            _ => false,
        };
        if !allowed || self.is_cancelled() || self.state.fault_deny {
            self.set_status(&id, ToolCallStatus::Failed, None);
            return if self.is_cancelled() {
                Err(Cancelled)
            } else {
                Ok(())
            };
        }
        self.set_status(&id, ToolCallStatus::InProgress, None);
        self.set_status(
            &id,
            ToolCallStatus::Completed,
            Some(format!("{title}: done")),
        );
        Ok(())
    }

    async fn read(&self, path: &str) {
        let full = if Path::new(path).is_absolute() {
            PathBuf::from(path)
        } else {
            self.session.cwd.join(path)
        };
        let id = self.new_tool_call_id();
        self.update(SessionUpdate::ToolCall(
            ToolCall::new(id.clone(), format!("Read {path}"))
                .kind(ToolKind::Read)
                .status(ToolCallStatus::Pending),
        ));
        let content = if self.state.client_reads_files.load(Ordering::Relaxed) {
            self.cx
                .send_request(ReadTextFileRequest::new(self.session_id.clone(), full))
                .block_task()
                .await
                .map(|r| r.content)
                .map_err(|e| e.to_string())
        } else {
            std::fs::read_to_string(&full).map_err(|e| e.to_string())
        };
        match content {
            Ok(content) => {
                let report = format!("read {} bytes from {path}", content.len());
                self.set_status(&id, ToolCallStatus::Completed, Some(report.clone()));
                self.say(report);
            }
            Err(why) => self.set_status(&id, ToolCallStatus::Failed, Some(why)),
        }
    }

    async fn ask(&self, question: &str) {
        let request = AskUserRequest {
            session_id: self.session_id.to_string(),
            question: question.to_owned(),
        };
        let answer = self.cx.send_request(request).block_task().await;
        let text = match answer {
            Ok(AskUserResponse {
                outcome,
                text: Some(text),
            }) if outcome == "answered" && !text.is_empty() => text,
            _ => USER_UNAVAILABLE.to_owned(),
        };
        self.say(text);
    }

    /// The same output as our demo backend's `/flood`: `count` chunks of the alphabet,
    /// repeated to `bytes` bytes. The SDK queues notifications without bound, so this goes as
    /// fast as the agent can produce, not as fast as the client reads.
    async fn flood(&self, arg: &str) -> Result<(), Cancelled> {
        let mut words = arg.split_whitespace();
        let count = words.next().and_then(|w| w.parse::<u64>().ok());
        let bytes = match words.next() {
            None => Some(FLOOD_DEFAULT_BYTES),
            Some(w) => w.parse::<usize>().ok().filter(|&b| b <= FLOOD_MAX_BYTES),
        };
        let (Some(count), Some(bytes), None) = (count, bytes, words.next()) else {
            self.say(format!(
                "usage: /flood N [BYTES] (BYTES up to {FLOOD_MAX_BYTES})"
            ));
            return Ok(());
        };
        let chunk: String = "abcdefghijklmnopqrstuvwxyz"
            .chars()
            .cycle()
            .take(bytes)
            .collect();
        for sent in 1..=count {
            self.say(chunk.clone());
            if sent % FLOOD_YIELD_EVERY == 0 {
                tokio::task::yield_now().await;
                if self.is_cancelled() {
                    return Err(Cancelled);
                }
            }
        }
        Ok(())
    }

    async fn sleep(&self, arg: &str) -> Result<(), Cancelled> {
        let ms = arg.parse::<u64>().unwrap_or(0).min(MAX_SLEEP_MS);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(()),
            () = self.until_cancelled() => Err(Cancelled),
        }
    }
}

/// The commands this peer serves, as advertised after `session/new`.
fn advertised_commands() -> AvailableCommandsUpdate {
    let command = |name: &str, description: &str, hint: &str| {
        AvailableCommand::new(name, description).input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new(hint),
        ))
    };
    AvailableCommandsUpdate::new(vec![
        command("echo", "Say TEXT back as one agent message", "TEXT"),
        command(
            "tool",
            "A tool call that asks for permission first",
            "KIND TITLE",
        ),
        command(
            "read",
            "Read a file (through the client when it offers fs)",
            "PATH",
        ),
        command(
            "ask",
            "Ask the user a question (_agentao.cn/ask_user)",
            "QUESTION",
        ),
        command(
            "sleep",
            "Wait MS milliseconds; session/cancel ends the wait",
            "MS",
        ),
        command(
            "flood",
            "N agent message chunks of BYTES bytes each",
            "N [BYTES]",
        ),
    ])
}

fn initialize_response(identity: Identity) -> InitializeResponse {
    let mut meta = Meta::new();
    meta.insert(
        "_agentao.cn/extensions".to_owned(),
        serde_json::json!([ASK_USER]),
    );
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(AgentCapabilities::new())
        .auth_methods(Vec::new())
        .agent_info(Implementation::new(identity.name, "0.0.0").title(identity.title.to_owned()))
        .meta(meta)
}

/// One connection's agent: the demo subset above, with its own state. With `fault_deny`
/// every /tool fails even when allowed (the client peers' self-check).
pub fn agent(identity: Identity, fault_deny: bool) -> impl ConnectTo<Client> {
    let state = Arc::new(State {
        fault_deny,
        ..State::default()
    });
    let on_init = state.clone();
    let on_new = state.clone();
    let on_cancel = state.clone();
    let on_prompt = state.clone();
    Agent
        .v1()
        .name(identity.name)
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                on_init.client_reads_files.store(
                    request.client_capabilities.fs.read_text_file,
                    Ordering::Relaxed,
                );
                responder.respond(initialize_response(identity))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let n = NEXT_SESSION.fetch_add(1, Ordering::Relaxed) + 1;
                let id = format!("{}{n}", identity.session_prefix);
                let session = Arc::new(Session {
                    cwd: request.cwd,
                    cancelled: watch::Sender::new(false),
                });
                on_new
                    .sessions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(id.clone(), session);
                // The answer is queued first, so the commands follow it.
                let answered = responder.respond(NewSessionResponse::new(id.clone()));
                let _ = cx.send_notification(SessionNotification::new(
                    id,
                    SessionUpdate::AvailableCommandsUpdate(advertised_commands()),
                ));
                answered
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx: ConnectionTo<Client>| {
                if let Some(session) = on_cancel.session(&notification.session_id) {
                    session.cancelled.send_replace(true);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse>,
                        cx: ConnectionTo<Client>| {
                let Some(session) = on_prompt.session(&request.session_id) else {
                    return responder.respond_with_error(
                        agent_client_protocol::Error::invalid_request()
                            .data(format!("unknown sessionId: {}", request.session_id)),
                    );
                };
                session.cancelled.send_replace(false);
                let turn = Turn {
                    cx: cx.clone(),
                    state: on_prompt.clone(),
                    session_id: request.session_id.clone(),
                    cancelled: session.cancelled.subscribe(),
                    session,
                };
                // The turn waits for the client's answers, so it must run outside
                // the dispatch loop (an SDK callback blocks the loop until it ends).
                cx.spawn(async move {
                    let stop = turn.run(&request.prompt).await;
                    responder.respond(PromptResponse::new(stop))
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
}
