//! The agent side of acp-async with requests both ways: deadlines on a virtual clock, the
//! client's `fs/*`, `$/cancel_request` of a handed-over request, `session/load` replay.

mod support;

use std::cell::{Cell, RefCell};
use std::pin::pin;
use std::rc::Rc;
use std::time::Duration;

use acp_async::acp_core::prelude::{
    AgentConfig, AgentInfo, PermissionDecision, StopReason, UsageError,
};
use acp_async::acp_core::schema::{
    LoadSessionRequest, LoadSessionResponse, PromptRequest, ReadTextFileRequest, SessionUpdate,
    ToolCall, ToolCallUpdate, WriteTextFileRequest,
};
use acp_async::agent::History;
use acp_async::{Agent, Error, ManualClock, NoTimers, Turn, serve};
use serde_json::json;
use support::{answer, pair, requests, run, updates};

fn config() -> AgentConfig {
    AgentConfig::new(AgentInfo::new("test", "Test", "0.1.0"))
}

/// Asks permission and records the decision.
struct Asker {
    decision: Rc<Cell<Option<PermissionDecision>>>,
}

impl Agent for Asker {
    async fn prompt(&self, _request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        turn.tool_call(ToolCall::new("t1", "Run it")).await?;
        let decision = turn.request_permission(ToolCallUpdate::new("t1")).await?;
        self.decision.set(Some(decision));
        Ok(StopReason::EndTurn)
    }
}

/// R-PERM-3: a permission request's deadline is kept with the runtime's timer: nothing
/// happens before it, and at it the request is settled as rejected (timed out) and the turn
/// goes on.
#[test]
fn a_permission_deadline_fires_on_the_runtime_clock() {
    use acp_async::acp_core::machine::permission::RejectReason;
    let mut config = config();
    config.limits.permission_timeout = Some(Duration::from_secs(5));
    let clock = ManualClock::new();
    let decision = Rc::new(Cell::new(None));
    let agent = Asker {
        decision: decision.clone(),
    };
    let (end, mut peer) = pair(1 << 16);
    let mut conn = pin!(serve(config, agent, clock.clone(), end.reader, end.writer));
    peer.open();
    peer.prompt(2, "session-1", "go");
    assert!(run(conn.as_mut()).is_pending());
    assert_eq!(
        requests(&peer.lines(), "session/request_permission").len(),
        1
    );

    clock.advance(4_999);
    assert!(run(conn.as_mut()).is_pending());
    assert_eq!(decision.get(), None);
    assert!(peer.lines().is_empty());

    clock.advance(1);
    assert!(run(conn.as_mut()).is_pending());
    assert_eq!(
        decision.get(),
        Some(PermissionDecision::Rejected(RejectReason::TimedOut))
    );
    assert_eq!(
        answer(&peer.lines(), 2).unwrap()["result"]["stopReason"],
        "end_turn"
    );
}

/// Reads a file through the client, then tries to write one.
struct Files {
    write_refused: Rc<RefCell<Option<Error>>>,
}

impl Agent for Files {
    async fn prompt(&self, request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        let mut read = ReadTextFileRequest::default();
        read.session_id = request.session_id.clone();
        read.path = "/home/user/p/notes.txt".into();
        let content = turn.read_text_file(read).await?.content;
        turn.message(content).await?;
        let mut write = WriteTextFileRequest::default();
        write.session_id = request.session_id;
        write.path = "/home/user/p/out.txt".into();
        *self.write_refused.borrow_mut() = turn.write_text_file(write).await.err();
        Ok(StopReason::EndTurn)
    }
}

/// R-FS-1: the agent uses the client's `fs/read_text_file` it advertised, and its
/// `fs/write_text_file`, not advertised, is refused locally without a line written.
#[test]
fn client_fs_is_used_when_offered_and_refused_when_not() {
    let refused = Rc::new(RefCell::new(None));
    let agent = Files {
        write_refused: refused.clone(),
    };
    let (end, mut peer) = pair(1 << 16);
    let mut conn = pin!(serve(config(), agent, NoTimers, end.reader, end.writer));
    peer.send(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,
        "clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false}}}}),
    );
    peer.send(json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/user/p","mcpServers":[]}}));
    peer.prompt(2, "session-1", "read it");
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    let read = requests(&lines, "fs/read_text_file");
    assert_eq!(read.len(), 1, "{lines:?}");
    assert_eq!(read[0]["params"]["path"], "/home/user/p/notes.txt");

    peer.send(json!({"jsonrpc":"2.0","id":read[0]["id"],"result":{"content":"hello file"}}));
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    let chunks = updates(&lines, "agent_message_chunk");
    assert_eq!(
        chunks[0]["params"]["update"]["content"]["text"],
        "hello file"
    );
    assert!(requests(&lines, "fs/write_text_file").is_empty());
    assert_eq!(
        answer(&lines, 2).unwrap()["result"]["stopReason"],
        "end_turn"
    );
    let refused = refused.borrow().clone().expect("the write was refused");
    assert_eq!(refused.usage(), Some(UsageError::CapabilityNotAdvertised));
    assert_eq!(
        refused.message,
        "the peer did not advertise this capability"
    );
}

/// An extension method that never finishes, and counts how often it was dropped.
struct Slow {
    dropped: Rc<Cell<u32>>,
}

struct CountDrop(Rc<Cell<u32>>);

impl Drop for CountDrop {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

impl Agent for Slow {
    async fn prompt(&self, _request: PromptRequest, _turn: Turn) -> Result<StopReason, Error> {
        Ok(StopReason::EndTurn)
    }

    async fn ext_method(
        &self,
        _method: String,
        _params: serde_json::Value,
    ) -> Result<serde_json::Value, Error> {
        let _guard = CountDrop(self.dropped.clone());
        std::future::pending::<()>().await;
        Ok(json!({}))
    }
}

/// R-CANCEL-4: `$/cancel_request` of a request handed to the agent is answered `-32800` by
/// acp-core, and its handler future is dropped (it answers nothing more).
#[test]
fn cancel_request_drops_the_handler_of_a_handed_over_request() {
    let dropped = Rc::new(Cell::new(0));
    let mut config = config();
    assert!(config.serve_extension("_test/slow", "never ends"));
    let agent = Slow {
        dropped: dropped.clone(),
    };
    let (end, mut peer) = pair(1 << 16);
    let mut conn = pin!(serve(config, agent, NoTimers, end.reader, end.writer));
    peer.open();
    peer.send(json!({"jsonrpc":"2.0","id":7,"method":"_test/slow","params":{}}));
    assert!(run(conn.as_mut()).is_pending());
    assert!(answer(&peer.lines(), 7).is_none());
    assert_eq!(dropped.get(), 0);

    peer.send(json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}));
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    assert_eq!(answer(&lines, 7).unwrap()["error"]["code"], -32800);
    assert_eq!(dropped.get(), 1);
    peer.close();
    assert!(run(conn.as_mut()).is_ready());
    assert!(answer(&peer.lines(), 7).is_none(), "answered once");
}

/// Knows one stored session, `old`, with one message of history.
struct Store;

impl Agent for Store {
    async fn prompt(&self, _request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        turn.message("new turn").await?;
        Ok(StopReason::EndTurn)
    }

    async fn load_session(
        &self,
        request: LoadSessionRequest,
        history: History,
    ) -> Result<LoadSessionResponse, Error> {
        if request.session_id != "old" {
            return Err(Error::session_not_found());
        }
        let chunk = json!({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"earlier"}});
        let update: SessionUpdate = serde_json::from_value(chunk).unwrap();
        history.send(&update).await?;
        Ok(LoadSessionResponse::default())
    }
}

/// R-SESSION-6: `session/load` replays the history before its answer, the session then
/// takes prompts, and an unknown session gets acp-core's not-found answer.
#[test]
fn load_replays_history_then_answers_and_unknown_sessions_are_not_found() {
    let mut config = config();
    config.features.load_session = true;
    let (end, mut peer) = pair(1 << 16);
    let mut conn = pin!(serve(config, Store, NoTimers, end.reader, end.writer));
    peer.send(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}));
    peer.send(json!({"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"old","cwd":"/home/user/p","mcpServers":[]}}));
    peer.send(json!({"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"gone","cwd":"/home/user/p","mcpServers":[]}}));
    peer.prompt(3, "old", "again");
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    let replay = lines
        .iter()
        .position(|l| l["params"]["update"]["content"]["text"] == "earlier")
        .expect("replayed");
    let loaded = lines.iter().position(|l| l["id"] == 1).expect("answered");
    assert!(replay < loaded, "{lines:?}");
    assert_eq!(
        answer(&lines, 2).unwrap()["error"]["message"],
        "session/load: Session 'gone' not found"
    );
    assert_eq!(
        answer(&lines, 3).unwrap()["result"]["stopReason"],
        "end_turn"
    );
}

/// R-RPC-9: an extension method the configuration registers but the agent does not
/// implement (the default `ext_method`) is answered `-32601 Method not found`, as acp-core
/// answers methods nobody serves.
#[test]
fn an_unimplemented_extension_is_method_not_found() {
    let mut config = config();
    assert!(config.serve_extension("_test/none", "not implemented"));
    let (end, mut peer) = pair(1 << 16);
    let mut conn = pin!(serve(config, Store, NoTimers, end.reader, end.writer));
    peer.open();
    peer.send(json!({"jsonrpc":"2.0","id":5,"method":"_test/none","params":{}}));
    peer.send(json!({"jsonrpc":"2.0","id":6,"method":"_test/unregistered","params":{}}));
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    for id in [5, 6] {
        let error = &answer(&lines, id).unwrap()["error"];
        assert_eq!(error["code"], -32601);
        assert_eq!(error["message"], "Method not found");
    }
}
