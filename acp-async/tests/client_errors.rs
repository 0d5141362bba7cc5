//! Every error a caller of acp-async's client can meet, with its exact message, against a
//! raw agent played line by line on an in-memory pipe; and the updates that belong to no
//! turn. No executor, no sleeps: deadlines run on a clock the test moves (`ManualClock`).

mod client_support;

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use acp_async::acp_core::conn::client::UpdateContext;
use acp_async::acp_core::prelude::{StopReason, UsageError};
use acp_async::client::{Client, ClientError, Update};
use acp_async::runtime::ManualClock;
use acp_async::{NoTimers, Runtime};
use client_support::{RawAgent, raw_pair, run};
use serde_json::{Value, json};

const CWD: &str = "/home/user/p";

/// Answers the request named `method` among the client's new lines with `result`.
fn answer<F: Future + ?Sized>(agent: &mut RawAgent, app: Pin<&mut F>, method: &str, result: Value) {
    assert!(run(app).is_pending());
    let lines = agent.lines();
    let request = RawAgent::request(&lines, method);
    agent.send(json!({"jsonrpc":"2.0","id":request["id"],"result":result}));
}

type Outcome<T> = Rc<RefCell<Option<T>>>;

/// A client on a raw agent, running `app`; the outcome lands in the returned cell.
fn client_with<T: 'static, F: Future<Output = T> + 'static>(
    builder: acp_async::client::ClientBuilder,
    runtime: impl Runtime,
    app: impl FnOnce(Client) -> F,
) -> (RawAgent, Pin<Box<dyn Future<Output = ()>>>, Outcome<T>) {
    let (end, agent) = raw_pair(1 << 16);
    let (client, connection) = builder.connect(runtime, end.reader, end.writer);
    let outcome: Outcome<T> = Rc::default();
    let out = outcome.clone();
    let app = app(client);
    let future = Box::pin(connection.run_until(async move {
        *out.borrow_mut() = Some(app.await);
    }));
    (agent, future, outcome)
}

fn builder() -> acp_async::client::ClientBuilder {
    Client::builder("test-client", "0.1.0")
}

fn message(result: &Outcome<Result<impl std::fmt::Debug, ClientError>>) -> String {
    match result.borrow_mut().take() {
        Some(Err(error)) => error.to_string(),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// R-INIT-6: an agent that answers another protocol version fails `initialize` with a text
/// that says so.
#[test]
fn initialize_with_another_protocol_version_fails_saying_so() {
    let (mut agent, mut app, result) =
        client_with(builder(), NoTimers, |c| async move { c.initialize().await });
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":2}),
    );
    assert!(run(app.as_mut()).is_ready());
    assert_eq!(
        message(&result),
        "the agent answered initialize with protocolVersion 2; this client speaks only protocolVersion 1"
    );
}

/// R-INIT-1: a call before `initialize` is refused before anything is sent.
#[test]
fn a_call_before_initialize_is_refused_before_sending() {
    let (mut agent, mut app, result) =
        client_with(
            builder(),
            NoTimers,
            |c| async move { c.new_session(CWD).await },
        );
    assert!(run(app.as_mut()).is_ready());
    assert_eq!(
        message(&result),
        "refused before sending: the initialize handshake has not completed"
    );
    assert!(agent.lines().is_empty());
}

/// R-RPC-7: a method the agent did not advertise is refused before sending, naming what it
/// needs.
#[test]
fn a_method_the_agent_did_not_advertise_is_refused_before_sending() {
    let (mut agent, mut app, result) = client_with(builder(), NoTimers, |c| async move {
        c.initialize().await?;
        c.list_sessions(None).await
    });
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":1}),
    );
    assert!(run(app.as_mut()).is_ready());
    assert_eq!(
        message(&result),
        "refused before sending: session/list needs agentCapabilities.sessionCapabilities.list, which the agent did not advertise; nothing was sent"
    );
    assert!(agent.lines().is_empty());
}

/// R-RPC-4: an error answer fails the call with the agent's code and message.
#[test]
fn an_error_answer_fails_the_call_with_the_agents_words() {
    let (mut agent, mut app, result) = client_with(builder(), NoTimers, |c| async move {
        c.initialize().await?;
        c.new_session(CWD).await
    });
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":1}),
    );
    assert!(run(app.as_mut()).is_pending());
    let lines = agent.lines();
    let new = RawAgent::request(&lines, "session/new");
    agent.send(json!({"jsonrpc":"2.0","id":new["id"],"error":{"code":-32000,"message":"Authentication required"}}));
    assert!(run(app.as_mut()).is_ready());
    assert_eq!(
        message(&result),
        "session/new failed: JSON-RPC error -32000: Authentication required"
    );
}

/// R-RPC-9: an extension request the agent does not know fails naming the method sent.
#[test]
fn an_extension_request_refused_by_the_agent_fails_naming_it() {
    let (mut agent, mut app, result) = client_with(builder(), NoTimers, |c| async move {
        c.initialize().await?;
        c.request::<_, Value>("_vendor.example/ping", &json!({}))
            .await
    });
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":1}),
    );
    assert!(run(app.as_mut()).is_pending());
    let lines = agent.lines();
    let ping = RawAgent::request(&lines, "_vendor.example/ping");
    agent.send(json!({"jsonrpc":"2.0","id":ping["id"],"error":{"code":-32601,"message":"Method not found: _vendor.example/ping"}}));
    assert!(run(app.as_mut()).is_ready());
    assert_eq!(
        message(&result),
        "_vendor.example/ping failed: JSON-RPC error -32601: Method not found: _vendor.example/ping"
    );
}

/// R-TURN-2: a second prompt while the session's turn runs is refused before sending; the
/// `Turn` of the first, dropped unfinished, cancels it (R-CANCEL-6: a turn runs).
#[test]
fn a_second_prompt_during_a_turn_is_refused_before_sending() {
    let (mut agent, mut app, result) = client_with(builder(), NoTimers, |c| async move {
        c.initialize().await?;
        let session = c.new_session(CWD).await?.session_id;
        let _first = c.prompt(&session, "one").await?;
        c.prompt(&session, "two").await.map(drop)
    });
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":1}),
    );
    answer(
        &mut agent,
        app.as_mut(),
        "session/new",
        json!({"sessionId":"s1"}),
    );
    assert!(run(app.as_mut()).is_ready());
    // Only the first prompt went out; dropping its unfinished turn cancelled it.
    let lines = agent.lines();
    let sent: Vec<&Value> = lines.iter().map(|l| &l["method"]).collect();
    assert_eq!(sent, ["session/prompt", "session/cancel"], "{lines:?}");
    assert_eq!(lines[0]["params"]["prompt"][0]["text"], "one");
    assert_eq!(
        message(&result),
        "refused before sending: session already has an active turn"
    );
}

/// R-HOST-2: a turn past its deadline is cancelled (`session/cancel` goes out) and ends
/// with an error that says so.
#[test]
fn a_turn_past_its_deadline_ends_with_an_error_that_says_so() {
    let clock = ManualClock::new();
    let (mut agent, mut app, result) = client_with(
        builder().config(|c| c.prompt_timeout = Some(Duration::from_secs(5))),
        clock.clone(),
        |c| async move {
            c.initialize().await?;
            let session = c.new_session(CWD).await?.session_id;
            c.prompt(&session, "slow").await?.finish().await
        },
    );
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":1}),
    );
    answer(
        &mut agent,
        app.as_mut(),
        "session/new",
        json!({"sessionId":"s1"}),
    );
    assert!(run(app.as_mut()).is_pending());
    let _ = agent.lines();
    clock.advance(5_000);
    assert!(run(app.as_mut()).is_ready());
    assert_eq!(
        agent.lines(),
        [json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}})]
    );
    assert_eq!(
        message(&result),
        "session/prompt failed: no response before the deadline (the turn was cancelled)"
    );
}

/// R-SESSION-6, R-TURN-4: a `session/load` replay and the updates between turns reach
/// `on_update` (with their context), not a turn; the load then answers.
#[test]
fn updates_outside_a_turn_go_to_on_update() {
    let seen: Rc<RefCell<Vec<Update>>> = Rc::default();
    let sink = seen.clone();
    let (mut agent, mut app, result) = client_with(
        builder().on_update(move |u| sink.borrow_mut().push(u)),
        NoTimers,
        |c| async move {
            c.initialize().await?;
            c.load_session("s0", CWD).await?;
            let turn = c.prompt("s0", "hi").await?;
            turn.finish().await
        },
    );
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":1,"agentCapabilities":{"loadSession":true}}),
    );
    assert!(run(app.as_mut()).is_pending());
    let lines = agent.lines();
    let load = RawAgent::request(&lines, "session/load");
    let update = |kind: &str, extra: Value| {
        let mut update = json!({"sessionUpdate": kind});
        update
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s0","update":update}})
    };
    agent.send(update(
        "user_message_chunk",
        json!({"content":{"type":"text","text":"old"}}),
    ));
    agent.send(json!({"jsonrpc":"2.0","id":load["id"],"result":{}}));
    agent.send(update(
        "available_commands_update",
        json!({"availableCommands":[]}),
    ));
    assert!(run(app.as_mut()).is_pending());
    let lines = agent.lines();
    let prompt = RawAgent::request(&lines, "session/prompt");
    agent.send(update(
        "agent_message_chunk",
        json!({"content":{"type":"text","text":"new"}}),
    ));
    agent.send(json!({"jsonrpc":"2.0","id":prompt["id"],"result":{"stopReason":"end_turn"}}));
    assert!(run(app.as_mut()).is_ready());

    assert_eq!(result.borrow_mut().take(), Some(Ok(StopReason::EndTurn)));
    let seen: Vec<(UpdateContext, String)> = seen
        .borrow()
        .iter()
        .map(|u| (u.context, u.kind.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (UpdateContext::Replay, "user_message_chunk".to_owned()),
            (UpdateContext::Idle, "available_commands_update".to_owned()),
        ]
    );
}

/// R-CONFIG-1, R-MODE-1: `set_mode` and `set_config_option` send exactly what acp-core
/// writes and resolve with the agent's answer.
#[test]
fn session_settings_are_sent_and_answered() {
    let (mut agent, mut app, result) = client_with(builder(), NoTimers, |c| async move {
        c.initialize().await?;
        let session = c.new_session(CWD).await?.session_id;
        c.set_mode(&session, "plan").await?;
        let options = c
            .set_config_option(&session, "model", "openai/gpt-4.1")
            .await?;
        Ok::<_, ClientError>(options.config_options.len())
    });
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":1}),
    );
    answer(
        &mut agent,
        app.as_mut(),
        "session/new",
        json!({"sessionId":"s1"}),
    );
    assert!(run(app.as_mut()).is_pending());
    let lines = agent.lines();
    let mode = RawAgent::request(&lines, "session/set_mode");
    assert_eq!(mode["params"], json!({"sessionId":"s1","modeId":"plan"}));
    agent.send(json!({"jsonrpc":"2.0","id":mode["id"],"result":{}}));
    assert!(run(app.as_mut()).is_pending());
    let lines = agent.lines();
    let config = RawAgent::request(&lines, "session/set_config_option");
    assert_eq!(
        config["params"],
        json!({"sessionId":"s1","configId":"model","value":"openai/gpt-4.1"})
    );
    agent.send(json!({"jsonrpc":"2.0","id":config["id"],"result":{"configOptions":[]}}));
    assert!(run(app.as_mut()).is_ready());
    assert_eq!(result.borrow_mut().take(), Some(Ok(0)));
}

/// R-CANCEL-6: cancelling a session with no turn running sends nothing and says so.
#[test]
fn cancelling_an_idle_session_sends_nothing() {
    let (mut agent, mut app, result) = client_with(builder(), NoTimers, |c| async move {
        c.initialize().await?;
        let session = c.new_session(CWD).await?.session_id;
        c.cancel(&session).await
    });
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":1}),
    );
    answer(
        &mut agent,
        app.as_mut(),
        "session/new",
        json!({"sessionId":"s1"}),
    );
    assert!(run(app.as_mut()).is_ready());
    assert_eq!(result.borrow_mut().take(), Some(Ok(false)));
    assert!(agent.lines().is_empty());
}

/// Unknown sessions are acp-core's usage error, surfaced as is.
#[test]
fn a_prompt_for_an_unknown_session_is_refused_before_sending() {
    let (mut agent, mut app, result) = client_with(builder(), NoTimers, |c| async move {
        c.initialize().await?;
        c.prompt("nope", "hi").await.map(drop)
    });
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":1}),
    );
    assert!(run(app.as_mut()).is_ready());
    let error = result.borrow_mut().take().unwrap().unwrap_err();
    assert_eq!(error, ClientError::Usage(UsageError::UnknownSession));
    assert_eq!(error.to_string(), "refused before sending: unknown session");
}

/// A file reader that panics.
struct BrokenDisk;

impl acp_async::client::ReadTextFile for BrokenDisk {
    async fn read_text_file(
        &self,
        _request: acp_async::acp_core::schema::ReadTextFileRequest,
    ) -> Result<String, acp_async::Error> {
        panic!("disk on fire")
    }
}

/// R-RPC-1, R-RPC-10: a handler that panics still answers its request, `-32603` with the
/// panic's message, and the connection goes on.
#[test]
fn a_panicking_handler_answers_internal_error_with_its_message() {
    let (mut agent, mut app, result) = client_with(
        builder().read_text_file(BrokenDisk),
        NoTimers,
        |c| async move {
            c.initialize().await?;
            c.new_session(CWD).await.map(|r| r.session_id)
        },
    );
    answer(
        &mut agent,
        app.as_mut(),
        "initialize",
        json!({"protocolVersion":1}),
    );
    let lines = {
        assert!(run(app.as_mut()).is_pending());
        agent.lines()
    };
    let new = RawAgent::request(&lines, "session/new");
    agent.send(json!({"jsonrpc":"2.0","id":new["id"],"result":{"sessionId":"s1"}}));
    agent.send(json!({"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/home/user/p/a.txt"}}));
    let _ = run(app.as_mut());
    assert_eq!(
        agent.lines(),
        [
            json!({"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"Internal error: handler panicked: disk on fire"}})
        ]
    );
    assert_eq!(result.borrow_mut().take(), Some(Ok("s1".to_owned())));
}
