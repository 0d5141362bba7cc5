//! The client side of acp-async on in-memory pipes, polled by hand: whole turns against
//! acp-async's agent side, and a raw agent played line by line for what a well-behaved agent
//! never does (unknown requests, EOF mid-turn). No executor, no clock, no sleeps.

mod client_support;

use std::cell::{Cell, RefCell};
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use acp_async::acp_core::machine::handshake::Capabilities;
use acp_async::acp_core::prelude::{AgentConfig, AgentInfo, StopReason};
use acp_async::acp_core::schema::{
    AskUserRequest, ClientResponse, CreateTerminalRequest, PromptRequest, ReadTextFileRequest,
    RequestPermissionOutcome, RequestPermissionRequest, TerminalExitStatus, TerminalOutputResponse,
    TerminalRequest, ToolCall, ToolCallUpdate, WriteTextFileRequest,
};
use acp_async::client::{Client, ClientError, Terminals, Turn, Update};
use acp_async::duplex::duplex;
use acp_async::{Agent, Error, NoTimers, serve};
use client_support::{RawAgent, finish, raw_pair, run};
use serde_json::json;

const CWD: &str = "/home/user/p";

fn agent_config() -> AgentConfig {
    AgentConfig::new(AgentInfo::new("test-agent", "Test agent", "0.1.0"))
}

fn text_of(request: &PromptRequest) -> String {
    serde_json::to_value(&request.prompt).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Runs `agent` and a client built by `build` on one in-memory pipe pair, with `app` given
/// the client; returns what `app` returns once both sides have finished.
fn with_agent<A, T, F>(
    agent: A,
    build: impl FnOnce(acp_async::client::ClientBuilder) -> acp_async::client::ClientBuilder,
    app: impl FnOnce(Client) -> F,
) -> T
where
    A: Agent,
    F: std::future::Future<Output = T>,
{
    let (client_end, agent_end) = duplex(1 << 16);
    let (client, connection) = build(Client::builder("test-client", "0.1.0")).connect(
        NoTimers,
        client_end.reader,
        client_end.writer,
    );
    let agent = serve(
        agent_config(),
        agent,
        NoTimers,
        agent_end.reader,
        agent_end.writer,
    );
    let client_side = connection.run_until(app(client));
    let (out, served) = finish(futures_util::future::join(client_side, agent));
    served.expect("the agent ends cleanly once the client hangs up");
    out
}

/// Opens a session: `initialize`, then `session/new`.
async fn open(client: &Client) -> Result<String, ClientError> {
    client.initialize().await?;
    Ok(client.new_session(CWD).await?.session_id)
}

/// The updates of a turn, then its outcome.
async fn drain(mut turn: Turn) -> (Vec<Update>, Result<StopReason, ClientError>) {
    let mut updates = Vec::new();
    while let Some(update) = turn.next().await {
        updates.push(update);
    }
    (updates, turn.finish().await)
}

/// Streams three updates, then ends the turn.
struct Talker;

impl Agent for Talker {
    async fn prompt(&self, request: PromptRequest, turn: AgentTurn) -> Result<StopReason, Error> {
        turn.message(format!("you said: {}", text_of(&request)))
            .await?;
        turn.thought("thinking").await?;
        turn.message("bye").await?;
        Ok(StopReason::MaxTokens)
    }
}

type AgentTurn = acp_async::Turn;

/// R-TURN-3: a turn's updates arrive in the order sent, before the answer, and the turn
/// ends with the agent's stop reason; `initialize` returns what the agent advertised.
#[test]
fn a_whole_turn_streams_its_updates_in_order_then_the_stop_reason() {
    let (info, updates, stop) = with_agent(
        Talker,
        |b| b,
        |client| async move {
            let info = client.initialize().await.unwrap();
            let session = client.new_session(CWD).await.unwrap().session_id;
            let (updates, stop) = drain(client.prompt(&session, "hello").await.unwrap()).await;
            (info, updates, stop)
        },
    );
    let agent = info.response.unwrap().agent_info.unwrap();
    assert_eq!(
        (agent.name.as_str(), agent.version.as_str()),
        ("test-agent", "0.1.0")
    );
    let seen: Vec<(&str, Option<&str>)> = updates
        .iter()
        .map(|u| (u.kind.as_str(), u.agent_text()))
        .collect();
    assert_eq!(
        seen,
        [
            ("agent_message_chunk", Some("you said: hello")),
            ("agent_thought_chunk", None),
            ("agent_message_chunk", Some("bye")),
        ]
    );
    assert_eq!(stop, Ok(StopReason::MaxTokens));
}

/// R-TURN-3: a `Turn` is a `Stream` of its updates too, ending with the turn.
#[test]
fn a_turn_is_a_stream_of_its_updates() {
    use futures_util::StreamExt;
    let kinds = with_agent(
        Talker,
        |b| b,
        |client| async move {
            let session = open(&client).await.unwrap();
            let turn = client.prompt(&session, "hello").await.unwrap();
            turn.map(|update| update.kind).collect::<Vec<_>>().await
        },
    );
    assert_eq!(
        kinds,
        [
            "agent_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk"
        ]
    );
}

/// Announces a tool call, asks permission, reports the decision as a message.
struct Asker;

impl Agent for Asker {
    async fn prompt(&self, _request: PromptRequest, turn: AgentTurn) -> Result<StopReason, Error> {
        turn.tool_call(ToolCall::new("t1", "Edit a file")).await?;
        let decision = turn.request_permission(ToolCallUpdate::new("t1")).await?;
        turn.message(format!("{decision:?}")).await?;
        Ok(StopReason::EndTurn)
    }
}

fn decision_of(updates: &[Update]) -> String {
    updates
        .iter()
        .find_map(Update::agent_text)
        .unwrap_or_default()
        .to_owned()
}

/// R-PERM-3: the agent's permission request reaches the application's handler, whose
/// choice is the answer the agent gets.
#[test]
fn a_permission_request_is_answered_by_the_handler() {
    let asked: Rc<RefCell<Vec<RequestPermissionRequest>>> = Rc::default();
    let seen = asked.clone();
    let handler = move |request: RequestPermissionRequest| {
        let seen = seen.clone();
        async move {
            seen.borrow_mut().push(request);
            RequestPermissionOutcome::selected("allow_once")
        }
    };
    let (updates, stop) = with_agent(
        Asker,
        |b| b.permissions(handler),
        |client| async move {
            let session = open(&client).await.unwrap();
            drain(client.prompt(&session, "edit").await.unwrap()).await
        },
    );
    let asked = asked.borrow();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool_call.tool_call_id, "t1");
    assert!(decision_of(&updates).starts_with("Allowed"), "{updates:?}");
    assert_eq!(stop, Ok(StopReason::EndTurn));
}

/// R-PERM-3: without a permission handler the client rejects: it selects the agent's
/// `reject_once` option, and the turn goes on.
#[test]
fn without_a_permission_handler_the_client_rejects() {
    let (updates, stop) = with_agent(
        Asker,
        |b| b,
        |client| async move {
            let session = open(&client).await.unwrap();
            drain(client.prompt(&session, "edit").await.unwrap()).await
        },
    );
    assert!(decision_of(&updates).starts_with("Rejected"), "{updates:?}");
    assert_eq!(stop, Ok(StopReason::EndTurn));
}

/// A permission handler that panics.
struct Panicky;

impl acp_async::client::Permissions for Panicky {
    async fn request_permission(
        &self,
        _request: RequestPermissionRequest,
    ) -> RequestPermissionOutcome {
        panic!("the permission dialog crashed")
    }
}

/// R-RPC-1, R-PERM-3: a handler that panics still answers its request (`-32603`, which the
/// agent reads as rejected), and the connection goes on to the end of the turn.
#[test]
fn a_panicking_handler_answers_an_error_and_the_turn_goes_on() {
    let (updates, stop) = with_agent(
        Asker,
        |b| b.permissions(Panicky),
        |client| async move {
            let session = open(&client).await.unwrap();
            drain(client.prompt(&session, "edit").await.unwrap()).await
        },
    );
    assert!(decision_of(&updates).starts_with("Rejected"), "{updates:?}");
    assert_eq!(stop, Ok(StopReason::EndTurn));
}

/// Reads a file, writes it back changed, and reports through messages.
struct Editor;

impl Agent for Editor {
    async fn prompt(&self, _request: PromptRequest, turn: AgentTurn) -> Result<StopReason, Error> {
        let caps = turn.client_capabilities();
        turn.message(format!(
            "read={} write={} terminal={}",
            caps.contains(Capabilities::FS_READ),
            caps.contains(Capabilities::FS_WRITE),
            caps.contains(Capabilities::TERMINAL),
        ))
        .await?;
        let mut read = ReadTextFileRequest::default();
        read.session_id = turn.session_id().to_owned();
        read.path = format!("{CWD}/notes.txt");
        match turn.read_text_file(read).await {
            Ok(file) => {
                let mut write = WriteTextFileRequest::default();
                write.session_id = turn.session_id().to_owned();
                write.path = format!("{CWD}/notes.txt");
                write.content = file.content.to_uppercase();
                turn.write_text_file(write).await?;
                turn.message("written").await?;
            }
            Err(e) => turn.message(format!("read failed: {}", e.message)).await?,
        }
        Ok(StopReason::EndTurn)
    }
}

/// R-FS-2, R-INIT-7: `fs/read_text_file` and `fs/write_text_file` are served by the
/// handlers given, and only what was given is advertised.
#[test]
fn fs_requests_are_served_by_the_handlers_given() {
    let written: Rc<RefCell<Vec<(String, String)>>> = Rc::default();
    let sink = written.clone();
    let (updates, stop) = with_agent(
        Editor,
        |b| {
            b.read_text_file(|request: ReadTextFileRequest| async move {
                Ok(format!("notes of {}", request.path))
            })
            .write_text_file(move |request: WriteTextFileRequest| {
                sink.borrow_mut().push((request.path, request.content));
                async { Ok(()) }
            })
        },
        |client| async move {
            let session = open(&client).await.unwrap();
            drain(client.prompt(&session, "go").await.unwrap()).await
        },
    );
    let texts: Vec<&str> = updates.iter().filter_map(Update::agent_text).collect();
    assert_eq!(texts, ["read=true write=true terminal=false", "written"]);
    assert_eq!(
        *written.borrow(),
        [(
            "/home/user/p/notes.txt".to_owned(),
            "NOTES OF /HOME/USER/P/NOTES.TXT".to_owned()
        )]
    );
    assert_eq!(stop, Ok(StopReason::EndTurn));
}

/// R-INIT-7: a client given no fs handler advertises no fs capability, so the agent's
/// acp-core refuses to send `fs/*` at all.
#[test]
fn without_fs_handlers_no_fs_capability_is_advertised() {
    let (updates, _) = with_agent(
        Editor,
        |b| b,
        |client| async move {
            let session = open(&client).await.unwrap();
            drain(client.prompt(&session, "go").await.unwrap()).await
        },
    );
    let texts: Vec<&str> = updates.iter().filter_map(Update::agent_text).collect();
    assert_eq!(texts[0], "read=false write=false terminal=false");
    assert!(texts[1].starts_with("read failed: "), "{texts:?}");
}

/// Asks the user, runs a command in a client terminal, reports both.
struct Operator;

impl Agent for Operator {
    async fn prompt(&self, _request: PromptRequest, turn: AgentTurn) -> Result<StopReason, Error> {
        let answer = turn.ask_user("Which branch?").await?;
        turn.message(format!("asked: {} ({})", answer.text, answer.answered))
            .await?;
        let mut create = CreateTerminalRequest::default();
        create.session_id = turn.session_id().to_owned();
        create.command = "ls".to_owned();
        let terminal = turn.terminal_create(create).await?.terminal_id;
        let request = TerminalRequest::new(turn.session_id(), terminal.clone());
        let output = match turn.terminal("terminal/output", request.clone()).await? {
            ClientResponse::TerminalOutput(output) => output.output,
            other => format!("unexpected {other:?}"),
        };
        turn.terminal("terminal/release", request).await?;
        turn.message(format!("{terminal}: {output}")).await?;
        Ok(StopReason::EndTurn)
    }
}

/// Terminals that only echo the command line, and log the calls.
#[derive(Clone, Default)]
struct EchoTerminals(Rc<RefCell<Vec<String>>>);

impl Terminals for EchoTerminals {
    async fn create(&self, request: CreateTerminalRequest) -> Result<String, Error> {
        self.0
            .borrow_mut()
            .push(format!("create {}", request.command));
        Ok("term-1".to_owned())
    }
    async fn output(&self, request: TerminalRequest) -> Result<TerminalOutputResponse, Error> {
        self.0
            .borrow_mut()
            .push(format!("output {}", request.terminal_id));
        let mut output = TerminalOutputResponse::default();
        output.output = "a.txt b.txt".to_owned();
        Ok(output)
    }
    async fn wait_for_exit(&self, _request: TerminalRequest) -> Result<TerminalExitStatus, Error> {
        Ok(TerminalExitStatus::default())
    }
    async fn kill(&self, _request: TerminalRequest) -> Result<(), Error> {
        Ok(())
    }
    async fn release(&self, request: TerminalRequest) -> Result<(), Error> {
        self.0
            .borrow_mut()
            .push(format!("release {}", request.terminal_id));
        Ok(())
    }
}

/// R-ASK-1, R-FS-1: `_agentao.cn/ask_user` and `terminal/*` are served by their handlers,
/// advertised because they were given.
#[test]
fn ask_user_and_terminals_are_served_by_their_handlers() {
    let terminals = EchoTerminals::default();
    let log = terminals.0.clone();
    let (updates, stop) = with_agent(
        Operator,
        |b| {
            b.ask_user(|request: AskUserRequest| async move {
                Some(format!("main, for '{}'", request.question))
            })
            .terminals(terminals)
        },
        |client| async move {
            let session = open(&client).await.unwrap();
            drain(client.prompt(&session, "go").await.unwrap()).await
        },
    );
    let texts: Vec<&str> = updates.iter().filter_map(Update::agent_text).collect();
    assert_eq!(
        texts,
        [
            "asked: main, for 'Which branch?' (true)",
            "term-1: a.txt b.txt"
        ]
    );
    assert_eq!(
        *log.borrow(),
        ["create ls", "output term-1", "release term-1"]
    );
    assert_eq!(stop, Ok(StopReason::EndTurn));
}

/// Plays the handshake and a session for a client polled in `app`: answers `initialize`
/// and `session/new` (as `s1`).
fn handshake<F: std::future::Future>(agent: &mut RawAgent, mut app: std::pin::Pin<&mut F>) {
    assert!(run(app.as_mut()).is_pending());
    let lines = agent.lines();
    let init = RawAgent::request(&lines, "initialize");
    agent.send(json!({"jsonrpc":"2.0","id":init["id"],"result":{"protocolVersion":1,"agentCapabilities":{}}}));
    assert!(run(app.as_mut()).is_pending());
    let lines = agent.lines();
    let new = RawAgent::request(&lines, "session/new");
    agent.send(json!({"jsonrpc":"2.0","id":new["id"],"result":{"sessionId":"s1"}}));
}

/// R-RPC-9, R-FS-2: a request for a method the client does not serve — unknown, or a
/// known one whose handler was not given — is answered `-32601` at once, and the turn goes
/// on.
#[test]
fn an_agent_request_nobody_serves_is_answered_method_not_found() {
    let (end, mut agent) = raw_pair(1 << 16);
    let (client, connection) =
        Client::builder("test-client", "0.1.0").connect(NoTimers, end.reader, end.writer);
    let stop = Rc::new(RefCell::new(None));
    let out = stop.clone();
    let mut app = pin!(connection.run_until(async move {
        let session = open(&client).await.unwrap();
        let (_, end) = drain(client.prompt(&session, "hi").await.unwrap()).await;
        *out.borrow_mut() = Some(end);
    }));
    handshake(&mut agent, app.as_mut());
    assert!(run(app.as_mut()).is_pending());
    let lines = agent.lines();
    let prompt = RawAgent::request(&lines, "session/prompt");

    agent.send(json!({"jsonrpc":"2.0","id":"x-1","method":"_vendor.example/unknown","params":{"sessionId":"s1"}}));
    agent.send(json!({"jsonrpc":"2.0","id":7,"method":"terminal/create","params":{"sessionId":"s1","command":"ls"}}));
    assert!(run(app.as_mut()).is_pending());
    assert_eq!(
        agent.lines(),
        [
            json!({"jsonrpc":"2.0","id":"x-1","error":{"code":-32601,"message":"Method not found: _vendor.example/unknown"}}),
            json!({"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found: terminal/create"}}),
        ]
    );

    agent.send(json!({"jsonrpc":"2.0","id":prompt["id"],"result":{"stopReason":"end_turn"}}));
    agent.close();
    assert!(run(app.as_mut()).is_ready());
    assert_eq!(*stop.borrow(), Some(Ok(StopReason::EndTurn)));
}

/// R-RPC-2: the agent's output ending mid-turn ends the awaiting turn at once with a clear
/// error, after the updates that did arrive; later calls fail as closed.
#[test]
fn agent_eof_mid_turn_fails_the_turn_with_a_clear_error() {
    let (end, mut agent) = raw_pair(1 << 16);
    let (client, connection) =
        Client::builder("test-client", "0.1.0").connect(NoTimers, end.reader, end.writer);
    let result = Rc::new(RefCell::new(None));
    let out = result.clone();
    let mut app = pin!(connection.run_until(async move {
        let session = open(&client).await.unwrap();
        let (updates, end) = drain(client.prompt(&session, "hi").await.unwrap()).await;
        let after = client.new_session(CWD).await;
        *out.borrow_mut() = Some((updates, end, after));
    }));
    handshake(&mut agent, app.as_mut());
    assert!(run(app.as_mut()).is_pending());
    let _ = agent.lines();
    agent.send(json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"partial"}}}}));
    agent.close();
    assert!(run(app.as_mut()).is_ready());

    let (updates, end, after) = result.borrow_mut().take().unwrap();
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0].agent_text(), Some("partial"));
    let error = end.unwrap_err();
    assert_eq!(error, ClientError::TurnDisconnected);
    assert_eq!(
        error.to_string(),
        "session/prompt failed: the agent's output ended during the turn"
    );
    let after = after.unwrap_err();
    assert_eq!(after.to_string(), "the connection to the agent is closed");
}

/// Says it is working, then waits for the cancel (and claims `end_turn` anyway).
struct Worker;

impl Agent for Worker {
    async fn prompt(&self, _request: PromptRequest, turn: AgentTurn) -> Result<StopReason, Error> {
        turn.message("working").await?;
        turn.cancelled().await;
        Ok(StopReason::EndTurn)
    }
}

/// R-CANCEL-3: a cancel mid-turn ends the turn `cancelled`, whatever stop reason the agent
/// would have given, after the updates already sent.
#[test]
fn cancel_mid_turn_ends_the_turn_cancelled() {
    let (first, cancelled, stop) = with_agent(
        Worker,
        |b| b,
        |client| async move {
            let session = open(&client).await.unwrap();
            let mut turn = client.prompt(&session, "work").await.unwrap();
            let first = turn
                .next()
                .await
                .and_then(|u| u.agent_text().map(str::to_owned));
            let cancelled = turn.cancel().await;
            (first, cancelled, turn.finish().await)
        },
    );
    assert_eq!(first.as_deref(), Some("working"));
    assert_eq!(cancelled, Ok(true));
    assert_eq!(stop, Ok(StopReason::Cancelled));
}

/// A permission handler that never answers, and says when its future is dropped.
struct Undecided {
    dropped: Rc<Cell<bool>>,
}

impl acp_async::client::Permissions for Undecided {
    async fn request_permission(
        &self,
        _request: RequestPermissionRequest,
    ) -> RequestPermissionOutcome {
        struct Guard(Rc<Cell<bool>>);
        impl Drop for Guard {
            fn drop(&mut self) {
                self.0.set(true);
            }
        }
        let _guard = Guard(self.dropped.clone());
        std::future::pending().await
    }
}

/// R-CANCEL-3: a cancel during a permission request settles it as cancelled (the agent
/// reads `Cancelled`) and drops the handler's future, so a question shown can be taken back.
#[test]
fn cancel_during_a_permission_request_drops_the_handler_future() {
    let dropped = Rc::new(Cell::new(false));
    let handler = Undecided {
        dropped: dropped.clone(),
    };
    let watch = dropped.clone();
    let (updates, stop) = with_agent(
        Asker,
        |b| b.permissions(handler),
        |client| async move {
            let session = open(&client).await.unwrap();
            let mut turn = client.prompt(&session, "edit").await.unwrap();
            // The tool call comes first; the permission request is then with the handler.
            let first = turn.next().await.unwrap();
            assert_eq!(first.kind, "tool_call");
            assert!(!watch.get(), "the handler still waits");
            assert_eq!(turn.cancel().await, Ok(true));
            drain(turn).await
        },
    );
    assert!(dropped.get());
    assert_eq!(decision_of(&updates), "Cancelled");
    assert_eq!(stop, Ok(StopReason::Cancelled));
}

/// Sends `count` numbered messages as fast as the client reads them, counting.
struct Flood {
    count: usize,
    sent: Rc<Cell<usize>>,
}

impl Agent for Flood {
    async fn prompt(&self, _request: PromptRequest, turn: AgentTurn) -> Result<StopReason, Error> {
        for i in 0..self.count {
            turn.message(format!("chunk {i} {}", "x".repeat(100)))
                .await?;
            self.sent.set(i + 1);
        }
        Ok(StopReason::EndTurn)
    }
}

/// R-TURN-8: a consumer that stops taking a turn's updates stops the client reading: the
/// turn holds at most its buffer, the pipe from the agent fills, the agent's sends wait. Once the
/// consumer takes them, every update arrives, in order.
#[test]
fn a_stalled_consumer_keeps_memory_bounded() {
    const COUNT: usize = 5_000;
    const BUFFER: usize = 8;
    let sent = Rc::new(Cell::new(0));
    let mut config = agent_config();
    // The agent's own outbox pauses early, so its sends wait on the client.
    config.limits.outbox_high_water = 4096;
    let (client_end, agent_end) = duplex(4096);
    let (client, connection) = Client::builder("test-client", "0.1.0")
        .turn_buffer(BUFFER)
        .connect(NoTimers, client_end.reader, client_end.writer);
    let agent = serve(
        config,
        Flood {
            count: COUNT,
            sent: sent.clone(),
        },
        NoTimers,
        agent_end.reader,
        agent_end.writer,
    );
    let turn: Rc<RefCell<Option<Turn>>> = Rc::default();
    let gate = Gate::default();
    let (slot, opened) = (turn.clone(), gate.clone());
    let app = async move {
        let session = open(&client).await.unwrap();
        *slot.borrow_mut() = Some(client.prompt(&session, "flood").await.unwrap());
        // Takes nothing until the test opens the gate.
        opened.wait().await;
        let taken = slot.borrow_mut().take().unwrap();
        drain(taken).await
    };
    let mut both = pin!(futures_util::future::join(connection.run_until(app), agent));

    assert!(
        run(both.as_mut()).is_pending(),
        "everything waits on the consumer"
    );
    let buffered = turn.borrow().as_ref().map(Turn::buffered);
    assert_eq!(buffered, Some(BUFFER), "the turn holds exactly its buffer");
    assert!(
        sent.get() < COUNT / 10,
        "the agent was held back: {} of {COUNT} sent",
        sent.get()
    );

    gate.open();
    let (updates, stop) = match run(both.as_mut()) {
        Poll::Ready(((updates, stop), served)) => {
            served.unwrap();
            (updates, stop)
        }
        Poll::Pending => panic!("stalled after the consumer resumed"),
    };
    assert_eq!(updates.len(), COUNT);
    for (i, update) in updates.iter().enumerate() {
        let text = update.agent_text().unwrap();
        assert!(text.starts_with(&format!("chunk {i} ")), "{i}: {text}");
    }
    assert_eq!(stop, Ok(StopReason::EndTurn));
}

/// A door the test opens: a future that waits for it, woken when it opens.
#[derive(Clone, Default)]
struct Gate(Rc<RefCell<(bool, Option<std::task::Waker>)>>);

impl Gate {
    async fn wait(&self) {
        std::future::poll_fn(|cx| {
            let mut state = self.0.borrow_mut();
            if state.0 {
                return Poll::Ready(());
            }
            state.1 = Some(cx.waker().clone());
            Poll::Pending
        })
        .await;
    }

    fn open(&self) {
        let mut state = self.0.borrow_mut();
        state.0 = true;
        if let Some(waker) = state.1.take() {
            waker.wake();
        }
    }
}
