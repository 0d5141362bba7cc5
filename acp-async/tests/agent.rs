//! The agent side of acp-async on an in-memory duplex, polled by hand: cancellation, EOF,
//! panics, backpressure and concurrent sessions. No executor, no clock, no sleeps.

mod support;

use std::cell::Cell;
use std::pin::pin;
use std::rc::Rc;

use acp_async::acp_core::prelude::{AgentConfig, AgentInfo, PermissionDecision, StopReason};
use acp_async::acp_core::schema::{PromptRequest, ToolCall, ToolCallUpdate};
use acp_async::{Agent, Error, NoTimers, Turn, serve};
use serde_json::json;
use support::{answer, pair, requests, run, updates};

fn config() -> AgentConfig {
    AgentConfig::new(AgentInfo::new("test", "Test", "0.1.0"))
}

fn text_of(request: &PromptRequest) -> String {
    serde_json::to_value(&request.prompt).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Announces a tool call, asks permission, reports what it got as a message.
struct Asker {
    decisions: Rc<Cell<Option<PermissionDecision>>>,
}

impl Agent for Asker {
    async fn prompt(&self, _request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        turn.tool_call(ToolCall::new("t1", "Run it")).await?;
        let decision = turn.request_permission(ToolCallUpdate::new("t1")).await?;
        self.decisions.set(Some(decision));
        turn.message(format!("{decision:?}")).await?;
        // Says end_turn even after a cancel: the connection must answer `cancelled`.
        Ok(StopReason::EndTurn)
    }
}

/// R-CANCEL-3: a cancel during a permission request settles it as cancelled for the waiting
/// handler, and the turn is answered `cancelled` though the handler returns `end_turn`.
#[test]
fn cancel_during_permission_settles_it_and_answers_cancelled() {
    let decisions = Rc::new(Cell::new(None));
    let (end, mut peer) = pair(1 << 16);
    let agent = Asker {
        decisions: decisions.clone(),
    };
    let mut conn = pin!(serve(config(), agent, NoTimers, end.reader, end.writer));
    peer.open();
    peer.prompt(2, "session-1", "go");
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    assert_eq!(
        answer(&lines, 1).unwrap()["result"]["sessionId"],
        "session-1"
    );
    let asked = requests(&lines, "session/request_permission");
    assert_eq!(asked.len(), 1, "{lines:?}");
    assert_eq!(decisions.get(), None, "the handler waits for the decision");

    peer.send(
        json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"session-1"}}),
    );
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    assert_eq!(decisions.get(), Some(PermissionDecision::Cancelled));
    assert_eq!(updates(&lines, "agent_message_chunk").len(), 1);
    assert_eq!(
        answer(&lines, 2).unwrap()["result"]["stopReason"],
        "cancelled",
        "{lines:?}"
    );

    // The client's late answer to the settled request is absorbed; the connection goes on.
    let late = asked[0]["id"].clone();
    peer.send(json!({"jsonrpc":"2.0","id":late,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}));
    peer.close();
    assert!(matches!(run(conn.as_mut()), std::task::Poll::Ready(Ok(()))));
    assert!(peer.lines().is_empty());
}

/// Waits for a cancel that only EOF brings, then tries one more chunk.
struct Waiter {
    saw_cancel: Rc<Cell<bool>>,
    late_refused: Rc<Cell<bool>>,
}

impl Agent for Waiter {
    async fn prompt(&self, _request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        turn.message("working").await?;
        turn.cancelled().await;
        self.saw_cancel.set(true);
        // The connection is closed: commands are refused, and the answer was written already.
        self.late_refused
            .set(turn.message("too late").await.is_err());
        Ok(StopReason::EndTurn)
    }
}

/// R-RPC-11: the client's EOF in the middle of a turn cancels it (the handler sees it), the
/// turn is still answered `cancelled`, and the connection's future ends cleanly.
#[test]
fn peer_eof_mid_turn_cancels_answers_and_ends() {
    let saw_cancel = Rc::new(Cell::new(false));
    let late_refused = Rc::new(Cell::new(false));
    let (end, mut peer) = pair(1 << 16);
    let agent = Waiter {
        saw_cancel: saw_cancel.clone(),
        late_refused: late_refused.clone(),
    };
    let mut conn = pin!(serve(config(), agent, NoTimers, end.reader, end.writer));
    peer.open();
    peer.prompt(2, "session-1", "go");
    assert!(run(conn.as_mut()).is_pending());
    assert_eq!(updates(&peer.lines(), "agent_message_chunk").len(), 1);

    peer.close();
    assert!(matches!(run(conn.as_mut()), std::task::Poll::Ready(Ok(()))));
    let lines = peer.lines();
    assert!(saw_cancel.get());
    assert!(late_refused.get());
    assert_eq!(
        answer(&lines, 2).unwrap()["result"]["stopReason"],
        "cancelled"
    );
    assert!(updates(&lines, "agent_message_chunk").is_empty());
}

/// Panics on the prompt `boom` (and on `session/list`), echoes anything else.
struct Panicky;

impl Agent for Panicky {
    async fn prompt(&self, request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        let text = text_of(&request);
        if text == "boom" {
            panic!("boom");
        }
        turn.message(text).await?;
        Ok(StopReason::EndTurn)
    }

    async fn ext_method(
        &self,
        method: String,
        _params: serde_json::Value,
    ) -> Result<serde_json::Value, Error> {
        panic!("no {method}");
    }
}

/// R-RPC-10: a handler that panics answers its request `-32603` (a prompt:
/// `Internal error: handler panicked: <message>`) and the connection goes on serving.
#[test]
fn a_panicking_handler_answers_internal_error_and_the_connection_goes_on() {
    let mut config = config();
    assert!(config.serve_extension("_test/explode", "panics"));
    let (end, mut peer) = pair(1 << 16);
    let mut conn = pin!(serve(config, Panicky, NoTimers, end.reader, end.writer));
    peer.open();
    peer.prompt(2, "session-1", "boom");
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    let error = &answer(&lines, 2).unwrap()["error"];
    assert_eq!(error["code"], -32603);
    assert_eq!(error["message"], "Internal error: handler panicked: boom");

    peer.send(json!({"jsonrpc":"2.0","id":3,"method":"_test/explode","params":{}}));
    peer.prompt(4, "session-1", "still here");
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    let error = &answer(&lines, 3).unwrap()["error"];
    assert_eq!(error["code"], -32603);
    assert_eq!(
        error["message"],
        "Internal error: handler panicked: no _test/explode"
    );
    assert_eq!(
        answer(&lines, 4).unwrap()["result"]["stopReason"],
        "end_turn"
    );
    let chunks = updates(&lines, "agent_message_chunk");
    assert_eq!(
        chunks[0]["params"]["update"]["content"]["text"],
        "still here"
    );
}

/// Streams `CHUNKS` chunks as fast as the connection takes them, recording the largest
/// outbox it saw after each send.
struct Flood {
    sent: Rc<Cell<usize>>,
    max_outbox: Rc<Cell<usize>>,
}

const CHUNKS: usize = 5_000;
const LIMIT: usize = 64 * 1024;

impl Agent for Flood {
    async fn prompt(&self, _request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        let text = "x".repeat(100);
        for _ in 0..CHUNKS {
            turn.message(text.as_str()).await?;
            self.sent.set(self.sent.get() + 1);
            let pending = turn.with_connection(|c| c.poll_transmit().len());
            self.max_outbox.set(self.max_outbox.get().max(pending));
        }
        Ok(StopReason::EndTurn)
    }
}

/// R-TURN-7: with a reader that stops reading, the producer waits for room instead of
/// growing the outbox: it stays under its limit while the producer keeps trying, and every
/// chunk arrives once the reader reads again.
#[test]
fn a_stalled_reader_holds_the_producer_with_bounded_memory() {
    let mut config = config();
    config.limits.outbox_high_water = 4 * 1024;
    config.limits.outbox_limit = LIMIT;
    let sent = Rc::new(Cell::new(0));
    let max_outbox = Rc::new(Cell::new(0));
    let agent = Flood {
        sent: sent.clone(),
        max_outbox: max_outbox.clone(),
    };
    let (end, mut peer) = pair(8 * 1024);
    let mut conn = pin!(serve(config, agent, NoTimers, end.reader, end.writer));
    peer.open();
    peer.prompt(2, "session-1", "flood");
    // The reader reads nothing: the pipe fills, then the outbox, then the producer waits.
    let mut stalled = 0;
    for _ in 0..3 {
        assert!(run(conn.as_mut()).is_pending());
        let stalled_at = sent.get();
        assert!(
            stalled_at < CHUNKS / 10,
            "sent {stalled_at} into a stalled reader"
        );
        assert!(
            max_outbox.get() <= LIMIT,
            "outbox reached {}",
            max_outbox.get()
        );
        assert!(peer.reader.buffered() <= 8 * 1024);
        assert!(
            stalled == 0 || stalled == stalled_at,
            "the producer moved while stalled"
        );
        stalled = stalled_at;
    }
    assert!(stalled > 0, "the producer sent before the stall");

    // The reader reads again: everything arrives, in order, the outbox still bounded.
    let mut chunks = 0;
    let mut done = None;
    // Bounded: each round moves at least a pipe's worth (8 KiB of some 800 KiB).
    for _ in 0..10_000 {
        let _ = run(conn.as_mut());
        let lines = peer.lines();
        chunks += updates(&lines, "agent_message_chunk").len();
        done = answer(&lines, 2).cloned();
        if done.is_some() {
            break;
        }
    }
    assert!(
        done.is_some(),
        "the turn never ended: {chunks} chunks arrived"
    );
    eprintln!(
        "stalled after {stalled} of {CHUNKS} chunks; outbox peaked at {} bytes (limit {LIMIT})",
        max_outbox.get()
    );
    assert_eq!(chunks, CHUNKS);
    assert_eq!(done.unwrap()["result"]["stopReason"], "end_turn");
    assert!(
        max_outbox.get() <= LIMIT,
        "outbox reached {}",
        max_outbox.get()
    );
}

/// Each turn says `start`, asks the user, then says the answer.
struct Asking;

impl Agent for Asking {
    async fn prompt(&self, _request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        turn.message("start").await?;
        let answer = turn.ask_user("which?").await?;
        turn.message(answer.text).await?;
        Ok(StopReason::EndTurn)
    }
}

/// R-TURN-2: two sessions' turns run at the same time: both start, both wait for the user,
/// and the one answered first ends first.
#[test]
fn two_sessions_prompt_concurrently() {
    let (end, mut peer) = pair(1 << 16);
    let mut conn = pin!(serve(config(), Asking, NoTimers, end.reader, end.writer));
    peer.open();
    peer.send(json!({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/home/user/q","mcpServers":[]}}));
    peer.prompt(3, "session-1", "one");
    peer.prompt(4, "session-2", "two");
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    assert_eq!(
        answer(&lines, 2).unwrap()["result"]["sessionId"],
        "session-2"
    );
    assert_eq!(updates(&lines, "agent_message_chunk").len(), 2, "{lines:?}");
    let asked = requests(&lines, "_agentao.cn/ask_user");
    assert_eq!(asked.len(), 2);
    assert!(answer(&lines, 3).is_none() && answer(&lines, 4).is_none());

    // Answer session 2 first: its turn ends while session 1 still waits.
    let second = asked
        .iter()
        .find(|r| r["params"]["sessionId"] == "session-2")
        .unwrap();
    peer.send(
        json!({"jsonrpc":"2.0","id":second["id"],"result":{"outcome":"answered","text":"B"}}),
    );
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    assert_eq!(
        answer(&lines, 4).unwrap()["result"]["stopReason"],
        "end_turn"
    );
    assert!(answer(&lines, 3).is_none());
    let chunks = updates(&lines, "agent_message_chunk");
    assert_eq!(chunks[0]["params"]["sessionId"], "session-2");
    assert_eq!(chunks[0]["params"]["update"]["content"]["text"], "B");

    let first = asked
        .iter()
        .find(|r| r["params"]["sessionId"] == "session-1")
        .unwrap();
    peer.send(json!({"jsonrpc":"2.0","id":first["id"],"result":{"outcome":"answered","text":"A"}}));
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    assert_eq!(
        answer(&lines, 3).unwrap()["result"]["stopReason"],
        "end_turn"
    );
}

/// Works until cancelled, then says so and claims `end_turn`.
struct UntilCancelled;

impl Agent for UntilCancelled {
    async fn prompt(&self, _request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        turn.message("working").await?;
        turn.cancelled().await;
        turn.message("stopped").await?;
        Ok(StopReason::EndTurn)
    }
}

/// R-CANCEL-4: `$/cancel_request` of a running prompt resolves the turn's `cancelled()`; the
/// handler's last update still goes out and the prompt is answered `cancelled`.
#[test]
fn cancel_request_of_a_prompt_resolves_cancelled_and_answers_cancelled() {
    let (end, mut peer) = pair(1 << 16);
    let mut conn = pin!(serve(
        config(),
        UntilCancelled,
        NoTimers,
        end.reader,
        end.writer
    ));
    peer.open();
    peer.prompt(2, "session-1", "go");
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    assert_eq!(updates(&lines, "agent_message_chunk").len(), 1);
    assert!(answer(&lines, 2).is_none());

    peer.send(json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}));
    assert!(run(conn.as_mut()).is_pending());
    let lines = peer.lines();
    let chunks = updates(&lines, "agent_message_chunk");
    assert_eq!(chunks.len(), 1, "{lines:?}");
    assert_eq!(chunks[0]["params"]["update"]["content"]["text"], "stopped");
    assert_eq!(
        answer(&lines, 2).unwrap()["result"]["stopReason"],
        "cancelled"
    );
}
