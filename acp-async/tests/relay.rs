//! A pump on a relay: the application hands the peer's bytes over and passes the output on
//! itself (acp-cli's host reads its agents' pipes), and `settle` runs the pump in place.

use std::cell::RefCell;
use std::future::Future;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use acp_async::acp_core::prelude::{
    AgentConfig, AgentInfo, ClientConfig, ClientConnection, ClientEvent, Growable, Serves,
    StopReason, TurnOutcome,
};
use acp_async::acp_core::schema::{ContentBlock, PromptRequest};
use acp_async::duplex::pipe;
use acp_async::pump::{Driver, Pump, Shared};
use acp_async::relay::{relay, settle};
use acp_async::{Agent, Error, NoTimers, Turn, serve};
use futures_io::{AsyncRead, AsyncWrite};

type Client = ClientConnection<Growable>;

struct Echo;

impl Agent for Echo {
    async fn prompt(&self, request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        for block in request.prompt {
            if let ContentBlock::Text(text) = block {
                turn.message(text.text).await?;
            }
        }
        Ok(StopReason::EndTurn)
    }
}

/// Opens a session, prompts once, then closes its output; writes down what it heard.
#[derive(Default)]
struct Script {
    heard: Rc<RefCell<Vec<String>>>,
}

impl Driver<Client> for Script {
    fn on_event(&mut self, shared: &Rc<Shared<Client>>, event: ClientEvent) {
        let now = shared.now();
        let mut heard = self.heard.borrow_mut();
        match event {
            ClientEvent::Initialized { .. } => {
                heard.push("initialized".into());
                // Refused once the agent's output has ended (the last test's EOF).
                let _ = shared.with(|c| c.new_session(now, "/home/user/p", &[] as &[u8; 0]));
            }
            ClientEvent::SessionOpened { session, .. } => {
                heard.push(format!("opened {}", session.as_str()));
                shared.with(|c| c.prompt_text(now, session.as_str(), "hi").unwrap());
            }
            ClientEvent::Update { kind, .. } => heard.push(format!("update {}", kind.as_str())),
            ClientEvent::TurnEnded { outcome, .. } => {
                let stop = match outcome {
                    TurnOutcome::Stopped { stop, .. } => stop.as_str(),
                    _ => "failed",
                };
                heard.push(format!("ended {stop}"));
                shared.close_output();
            }
            ClientEvent::Closed => heard.push("closed".into()),
            _ => {}
        }
    }
}

fn client_pump(
    script: Script,
) -> (
    acp_async::relay::Relay,
    Pump<Client, Script, NoTimers, acp_async::relay::RelayReader, acp_async::relay::RelayWriter>,
) {
    let shared = Shared::new(
        Client::new(ClientConfig::new("test", "0.1.0", Serves::NOTHING)),
        &NoTimers,
    );
    shared.with(|c| c.initialize(shared.now()).unwrap());
    let (relay, reader, writer) = relay();
    (relay, Pump::new(shared, script, NoTimers, reader, writer))
}

/// R-FRAME-1: the agent's bytes handed over one at a time (every line cut at every byte)
/// carry a whole exchange: handshake, session, prompt, the chunk and `end_turn`; then the
/// client closes its output, the agent ends at that EOF, and the relay's close ends the
/// client.
#[test]
fn a_client_on_a_relay_drives_an_agent_byte_by_byte() {
    let (agent_in, mut to_agent) = pipe(1 << 16);
    let (mut from_agent, agent_out) = pipe(1 << 16);
    let config = AgentConfig::new(AgentInfo::new("echo", "Echo", "0.1.0"));
    let mut agent = pin!(serve(config, Echo, NoTimers, agent_in, agent_out));
    let script = Script::default();
    let heard = script.heard.clone();
    let (relay, mut client) = client_pump(script);
    let mut cx = Context::from_waker(Waker::noop());

    let mut agent_done = false;
    let mut client_done = false;
    let mut to_agent_open = true;
    for _ in 0..1000 {
        if !client_done && let Poll::Ready(done) = settle(&mut client) {
            done.expect("the client ends cleanly");
            client_done = true;
        }
        // The client's output on to the agent, as acp-cli's glue writes a process's stdin.
        let out = relay.take_output();
        if !out.is_empty() {
            let written = Pin::new(&mut to_agent).poll_write(&mut cx, &out);
            assert_eq!(written.map(Result::unwrap), Poll::Ready(out.len()));
        }
        if to_agent_open && relay.is_output_closed() {
            assert_eq!(
                Pin::new(&mut to_agent)
                    .poll_close(&mut cx)
                    .map(Result::unwrap),
                Poll::Ready(())
            );
            to_agent_open = false;
        }
        if !agent_done && let Poll::Ready(done) = agent.as_mut().poll(&mut cx) {
            done.expect("the agent ends cleanly");
            agent_done = true;
        }
        // The agent's output, one byte per hand-over.
        let mut byte = [0u8; 1];
        while let Poll::Ready(Ok(1)) = Pin::new(&mut from_agent).poll_read(&mut cx, &mut byte) {
            relay.push(&byte);
        }
        if agent_done && from_agent.buffered() == 0 {
            relay.close();
        }
        if agent_done && client_done {
            break;
        }
    }
    assert!(agent_done && client_done, "{heard:?}");
    assert_eq!(
        *heard.borrow(),
        [
            "initialized",
            "opened session-1",
            "update agent_message_chunk",
            "ended end_turn",
            "closed"
        ]
    );
}

/// R-FRAME-3: bytes handed over before the close go in before the EOF, a last line
/// without a newline included: the handshake's answer arrives, then the connection closes
/// and the pump ends, its writer closed after the `initialize` it wrote.
#[test]
fn bytes_before_the_close_go_in_before_the_eof() {
    let script = Script::default();
    let heard = script.heard.clone();
    let (relay, mut client) = client_pump(script);
    assert_eq!(settle(&mut client).map(|r| r.is_ok()), Poll::Pending);
    let sent = String::from_utf8(relay.take_output()).unwrap();
    assert!(
        sent.starts_with(r#"{"jsonrpc":"2.0","id":0,"method":"initialize""#),
        "{sent}"
    );
    assert!(!relay.is_output_closed());

    relay
        .push(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}"#);
    relay.close();
    relay.push(b"ignored after the close\n");
    assert!(matches!(settle(&mut client), Poll::Ready(Ok(()))));
    assert_eq!(*heard.borrow(), ["initialized", "closed"]);
    assert!(relay.is_output_closed());
}

/// R-RPC-2: `settle` stops once the pump waits for more input, and a push wakes it: the
/// request it answers is settled on the next `settle`, not before.
#[test]
fn settle_returns_when_only_more_input_would_help() {
    let script = Script::default();
    let heard = script.heard.clone();
    let (relay, mut client) = client_pump(script);
    assert!(settle(&mut client).is_pending());
    assert!(settle(&mut client).is_pending());
    assert!(heard.borrow().is_empty());
    relay.push(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":");
    assert!(settle(&mut client).is_pending());
    assert!(heard.borrow().is_empty());
    relay.push(b"{\"protocolVersion\":1,\"agentCapabilities\":{}}}\n");
    assert!(settle(&mut client).is_pending());
    assert_eq!(*heard.borrow(), ["initialized"]);
    let sent = String::from_utf8(relay.take_output()).unwrap();
    assert!(sent.contains(r#""method":"session/new""#), "{sent}");
}

/// A future that wakes itself `left` more times, then is done.
struct WakesItself {
    left: usize,
    polls: usize,
}

impl Future for WakesItself {
    type Output = usize;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.polls += 1;
        if self.left == 0 {
            return Poll::Ready(self.polls);
        }
        self.left -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// `settle` polls again while the future woke itself (a pump that spent its step budget),
/// and returns `Pending` at once for one that nothing woke.
#[test]
fn settle_polls_again_while_the_future_wakes_itself() {
    let mut busy = WakesItself { left: 3, polls: 0 };
    assert_eq!(settle(&mut busy), Poll::Ready(4));
    let mut idle = std::future::pending::<()>();
    assert_eq!(settle(&mut idle), Poll::Pending);
}
