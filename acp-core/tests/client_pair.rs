//! `ClientConnection` against `AgentConnection`, wired in memory with a virtual clock: both
//! sides of this crate agree on every exchange of a session's life.
#![cfg(feature = "alloc")] // the owned schema types and growable buffers

use acp_core::Instant;
use acp_core::conn::agent::{AgentConfig, AgentConnection, AgentEvent, AgentInfo, RawUpdate};
use acp_core::conn::client::{
    AskUserAnswer, ClientConfig, ClientConnection, ClientEvent, Growable, NO_MCP_SERVERS,
    PermissionAnswer, Serves, TurnOutcome, UpdateContext,
};
use acp_core::machine::handshake::Capabilities;
use acp_core::machine::permission::{PermissionChoice, PermissionDecision};
use acp_core::machine::turn::StopReason;
use acp_core::schema::{AskUserRequest, ToolCallUpdate};

struct Pair {
    client: ClientConnection<Growable>,
    agent: AgentConnection<acp_core::conn::Growable>,
    now: u64,
    client_events: Vec<ClientEvent>,
    agent_events: Vec<AgentEvent>,
}

impl Pair {
    fn new(serves: Serves) -> Self {
        let mut info = AgentConfig::agentao(AgentInfo::new("demo", "Demo", "0.1.0"));
        info.features.load_session = true;
        let mut config = ClientConfig::new("host", "1.0", serves);
        config.prompt_timeout = Some(core::time::Duration::from_millis(5_000));
        Self {
            client: ClientConnection::new(config),
            agent: AgentConnection::new(info),
            now: 0,
            client_events: Vec::new(),
            agent_events: Vec::new(),
        }
    }

    fn at(&self) -> Instant {
        Instant(self.now)
    }

    /// Moves bytes both ways until neither side has anything to say.
    fn pump(&mut self) {
        let now = self.at();
        for _ in 0..1_000 {
            while let Some(event) = self.client.poll_event() {
                self.client_events.push(event);
            }
            while let Some(event) = self.agent.poll_event() {
                self.agent_events.push(event);
            }
            let to_agent = self.client.outbox().pending().to_vec();
            self.client.outbox().consume(to_agent.len());
            let to_client = self.agent.poll_transmit().to_vec();
            self.agent.transmitted(to_client.len());
            if to_agent.is_empty() && to_client.is_empty() {
                return;
            }
            let mut rest = &to_agent[..];
            while !rest.is_empty() {
                let n = self.agent.handle_bytes(now, rest);
                rest = &rest[n..];
                while let Some(event) = self.agent.poll_event() {
                    self.agent_events.push(event);
                }
            }
            let mut rest = &to_client[..];
            while !rest.is_empty() {
                let n = self.client.handle_bytes(now, rest);
                rest = &rest[n..];
                while let Some(event) = self.client.poll_event() {
                    self.client_events.push(event);
                }
            }
        }
        panic!("the pair never goes quiet");
    }

    fn take_client(&mut self) -> Vec<ClientEvent> {
        self.pump();
        std::mem::take(&mut self.client_events)
    }

    fn take_agent(&mut self) -> Vec<AgentEvent> {
        self.pump();
        std::mem::take(&mut self.agent_events)
    }

    /// Handshake and one session `s1`, accepted by the agent.
    fn with_session(serves: Serves) -> Self {
        let mut pair = Self::new(serves);
        pair.client.initialize(pair.at()).unwrap();
        let agent = pair.take_agent();
        assert!(
            matches!(agent.as_slice(), [AgentEvent::Initialized { .. }]),
            "{agent:?}"
        );
        assert!(matches!(
            pair.take_client().as_slice(),
            [ClientEvent::Initialized { .. }]
        ));
        pair.client
            .new_session(pair.at(), "/tmp", NO_MCP_SERVERS)
            .unwrap();
        let agent = pair.take_agent();
        let [AgentEvent::NewSession { ticket, .. }] = agent.as_slice() else {
            panic!("{agent:?}")
        };
        pair.agent.accept_new_session_id(*ticket, "s1").unwrap();
        let client = pair.take_client();
        assert!(
            matches!(client.as_slice(), [ClientEvent::SessionOpened { .. }]),
            "{client:?}"
        );
        pair
    }

    fn prompt(&mut self) {
        self.client.prompt_text(self.at(), "s1", "hi").unwrap();
        let agent = self.take_agent();
        assert!(
            matches!(agent.as_slice(), [AgentEvent::Prompt { .. }]),
            "{agent:?}"
        );
    }

    fn tool_call(&mut self) -> ToolCallUpdate {
        let update = RawUpdate::new(
            r#"{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","kind":"execute","status":"pending"}"#,
        )
        .unwrap();
        self.agent.send_update("s1", &update).unwrap();
        ToolCallUpdate::new("t1")
    }
}

#[test]
fn the_handshake_exchanges_capabilities_both_ways() {
    let mut serves = Serves::NOTHING;
    serves.fs_read = true;
    serves.ask_user = true;
    let mut pair = Pair::new(serves);
    pair.client.initialize(pair.at()).unwrap();
    let agent = pair.take_agent();
    let [AgentEvent::Initialized { client, .. }] = agent.as_slice() else {
        panic!("{agent:?}")
    };
    assert!(client.contains(Capabilities::FS_READ) && !client.contains(Capabilities::TERMINAL));
    let events = pair.take_client();
    let [ClientEvent::Initialized { agent, .. }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert!(agent.contains(Capabilities::LOAD_SESSION));
    assert!(agent.contains(Capabilities::ASK_USER));
}

#[test]
fn a_turn_with_updates_and_an_allowed_permission() {
    let mut pair = Pair::with_session(Serves::NOTHING);
    pair.prompt();
    let tool = pair.tool_call();
    let asked = pair
        .agent
        .request_permission(pair.at(), "s1", &tool, None)
        .unwrap();
    let events = pair.take_client();
    let [
        ClientEvent::Update {
            context: UpdateContext::Turn,
            kind,
            ..
        },
        ClientEvent::Request(request),
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(kind.as_str(), "tool_call");
    pair.client
        .respond_permission(
            pair.at(),
            request.ticket,
            PermissionAnswer::Selected("allow_once"),
        )
        .unwrap();
    let agent = pair.take_agent();
    assert_eq!(
        agent,
        [AgentEvent::PermissionResolved {
            request: asked,
            session: acp_core::machine::SessionId::new("s1").unwrap(),
            decision: PermissionDecision::Allowed(PermissionChoice::AllowOnce),
            remembered: false
        }]
    );
    pair.agent.end_turn("s1", StopReason::EndTurn).unwrap();
    let events = pair.take_client();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::TurnEnded {
                outcome: TurnOutcome::Stopped {
                    stop: StopReason::EndTurn,
                    rewritten: false
                },
                ..
            }]
        ),
        "{events:?}"
    );
}

#[test]
fn cancel_settles_the_permission_on_both_sides_and_the_turn_ends_cancelled() {
    let mut pair = Pair::with_session(Serves::NOTHING);
    pair.prompt();
    let tool = pair.tool_call();
    pair.agent
        .request_permission(pair.at(), "s1", &tool, None)
        .unwrap();
    let events = pair.take_client();
    assert!(matches!(events.last(), Some(ClientEvent::Request(_))));
    assert_eq!(pair.client.cancel(pair.at(), "s1"), Ok(true));
    let client = pair.take_client();
    assert!(
        matches!(client.as_slice(), [ClientEvent::RequestSettled { .. }]),
        "{client:?}"
    );
    let agent = pair.take_agent();
    assert!(
        agent
            .iter()
            .any(|e| matches!(e, AgentEvent::Cancelled { .. })),
        "{agent:?}"
    );
    assert!(
        agent.iter().any(|e| matches!(
            e,
            AgentEvent::PermissionResolved {
                decision: PermissionDecision::Cancelled,
                ..
            }
        )),
        "{agent:?}"
    );
    pair.agent.end_turn("s1", StopReason::EndTurn).unwrap();
    let events = pair.take_client();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::TurnEnded {
                outcome: TurnOutcome::Stopped {
                    stop: StopReason::Cancelled,
                    ..
                },
                ..
            }]
        ),
        "{events:?}"
    );
    assert_eq!(pair.client.requests_owed(), 0);
    assert_eq!(pair.agent.requests_in_flight(), 0);
}

#[test]
fn a_client_prompt_timeout_cancels_the_agents_turn() {
    let mut pair = Pair::with_session(Serves::NOTHING);
    pair.prompt();
    assert_eq!(pair.client.poll_timeout(), Some(Instant(5_000)));
    pair.now = 5_000;
    pair.client.handle_timeout(Instant(5_000));
    let client = pair.take_client();
    assert!(matches!(
        client.as_slice(),
        [ClientEvent::TurnEnded {
            outcome: TurnOutcome::TimedOut,
            ..
        }]
    ));
    let agent = pair.take_agent();
    assert!(
        matches!(agent.as_slice(), [AgentEvent::Cancelled { .. }]),
        "{agent:?}"
    );
    // The agent's answer comes after the client gave up: the `cancelled` R-CANCEL-3 asks for,
    // absorbed without an event.
    pair.agent.end_turn("s1", StopReason::Cancelled).unwrap();
    assert!(pair.take_client().is_empty());
}

#[test]
fn ask_user_and_fs_requests_round_trip() {
    let mut pair = Pair::with_session(Serves::EVERYTHING);
    pair.prompt();
    let asked = pair
        .agent
        .ask_user(pair.at(), &AskUserRequest::new("s1", "Colour?"), None)
        .unwrap();
    let events = pair.take_client();
    let [ClientEvent::Request(request)] = events.as_slice() else {
        panic!("{events:?}")
    };
    pair.client
        .respond_ask_user(pair.at(), request.ticket, AskUserAnswer::Answered("blue"))
        .unwrap();
    let agent = pair.take_agent();
    let [
        AgentEvent::AskUserAnswered {
            request: r,
            text,
            answered: true,
            ..
        },
    ] = agent.as_slice()
    else {
        panic!("{agent:?}")
    };
    assert_eq!((*r, text.as_str()), (asked, "blue"));

    let read = serde_json::from_str(r#"{"sessionId":"s1","path":"/tmp/a.txt"}"#).unwrap();
    pair.agent.read_text_file(pair.at(), &read, None).unwrap();
    let events = pair.take_client();
    let [ClientEvent::Request(request)] = events.as_slice() else {
        panic!("{events:?}")
    };
    pair.client
        .respond(
            pair.at(),
            request.ticket,
            &serde_json::json!({"content":"abc"}),
        )
        .unwrap();
    let agent = pair.take_agent();
    let [
        AgentEvent::Response {
            result: Ok(acp_core::schema::ClientResponse::ReadTextFile(file)),
            ..
        },
    ] = agent.as_slice()
    else {
        panic!("{agent:?}")
    };
    assert_eq!(file.content, "abc");
}

#[test]
fn session_load_replays_history_then_opens() {
    let mut pair = Pair::with_session(Serves::NOTHING);
    pair.client
        .load_session(pair.at(), "old", "/tmp", NO_MCP_SERVERS)
        .unwrap();
    let agent = pair.take_agent();
    let [
        AgentEvent::LoadSession {
            ticket,
            session,
            resume: false,
            ..
        },
    ] = agent.as_slice()
    else {
        panic!("{agent:?}")
    };
    assert_eq!(session.as_str(), "old");
    let history = RawUpdate::new(
        r#"{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"earlier"}}"#,
    )
    .unwrap();
    pair.agent.send_update("old", &history).unwrap();
    pair.agent
        .accept_load(*ticket, &serde_json::json!({}))
        .unwrap();
    let events = pair.take_client();
    assert!(
        matches!(
            events.as_slice(),
            [
                ClientEvent::Update {
                    context: UpdateContext::Replay,
                    ..
                },
                ClientEvent::SessionOpened { .. }
            ]
        ),
        "{events:?}"
    );
}

#[test]
fn the_agents_eof_fails_the_clients_turn_at_once() {
    let mut pair = Pair::with_session(Serves::NOTHING);
    pair.prompt();
    pair.client.handle_eof(pair.at());
    let events = pair.take_client();
    assert!(
        matches!(
            events.as_slice(),
            [
                ClientEvent::TurnEnded {
                    outcome: TurnOutcome::Disconnected,
                    ..
                },
                ClientEvent::Closed
            ]
        ),
        "{events:?}"
    );
}
