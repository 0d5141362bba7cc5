//! The one pump drives acp-core's client connection as well: a client on `Pump` talks to an
//! agent on `serve` through an in-memory duplex, both polled by hand.

mod support;

use std::cell::RefCell;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use acp_async::acp_core::prelude::{
    AgentConfig, AgentInfo, ClientConfig, ClientConnection, ClientEvent, Growable, Serves,
    StopReason, TurnOutcome,
};
use acp_async::acp_core::schema::{ContentBlock, PromptRequest};
use acp_async::duplex::duplex;
use acp_async::pump::{Driver, Pump, Shared};
use acp_async::{Agent, Error, NoTimers, Turn, serve};
use support::run;

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

/// Opens a session, prompts once, then closes its output (EOF for the agent).
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
                shared.with(|c| c.new_session(now, "/home/user/p", &[] as &[u8; 0]).unwrap());
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

/// R-RPC-11: a whole exchange through two pumps — the client's handshake, session and
/// prompt, the agent's chunk and `end_turn` — ends with the client closing its output: the
/// agent sees EOF and ends, then the client sees the agent's EOF and ends.
#[test]
fn a_client_on_the_pump_drives_an_agent_on_serve() {
    let (agent_end, client_end) = duplex(1 << 16);
    let config = AgentConfig::new(AgentInfo::new("echo", "Echo", "0.1.0"));
    let mut agent = pin!(serve(
        config,
        Echo,
        NoTimers,
        agent_end.reader,
        agent_end.writer
    ));

    let client = Client::new(ClientConfig::new("test", "0.1.0", Serves::NOTHING));
    let shared = Shared::new(client, &NoTimers);
    shared.with(|c| c.initialize(shared.now()).unwrap());
    let script = Script::default();
    let heard = script.heard.clone();
    let pump = Pump::new(
        shared,
        script,
        NoTimers,
        client_end.reader,
        client_end.writer,
    );
    let mut client = pin!(pump);

    let mut agent_done = false;
    let mut client_done = false;
    for _ in 0..100 {
        if !agent_done && let Poll::Ready(done) = run(agent.as_mut()) {
            done.expect("the agent ends cleanly");
            agent_done = true;
        }
        if !client_done && let Poll::Ready(done) = run(client.as_mut()) {
            done.expect("the client ends cleanly");
            client_done = true;
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
