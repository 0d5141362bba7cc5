//! A whole prompt turn through `AgentConnection` with no I/O: the prompt line in, 1,000
//! `agent_message_chunk` updates out, the `session/prompt` answer, and the output taken after
//! every chunk as a driver would. Reported per turn (turns/s) and per chunk (chunks/s).
//!
//! Two update paths: the typed `schema::SessionUpdate` (serde into the outbox) and a
//! pre-validated `RawUpdate` (written verbatim).
//!
//! Run: `cargo bench --bench turn`.

use std::hint::black_box;

use acp_core::Instant;
use acp_core::conn::agent::{AgentConfig, AgentConnection, AgentEvent, AgentInfo, RawUpdate};
use acp_core::machine::turn::StopReason;
use acp_core::schema::{ContentBlock, ContentChunk, SessionUpdate};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const CHUNKS: usize = 1_000;
const PROMPT: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"sess_0123456789abcdef\",\"prompt\":[{\"type\":\"text\",\"text\":\"Write a haiku about sans-IO protocol engines.\"}]}}\n";
const TEXT: &str = "a streamed piece of the model's answer, about forty bytes ";

fn ready() -> AgentConnection<acp_core::conn::Growable> {
    let mut agent: AgentConnection<acp_core::conn::Growable> =
        AgentConnection::new(AgentConfig::new(AgentInfo::new("bench", "Bench", "0")));
    agent.restore_handshake(Default::default());
    agent
        .restore_session("sess_0123456789abcdef")
        .expect("a fresh table");
    agent
}

/// One turn; returns the bytes written.
fn turn(
    agent: &mut AgentConnection<acp_core::conn::Growable>,
    send: &mut dyn FnMut(&mut AgentConnection<acp_core::conn::Growable>, &str),
) -> usize {
    let mut written = 0;
    agent.handle_bytes(Instant(0), PROMPT);
    let mut session = None;
    while let Some(event) = agent.poll_event() {
        if let AgentEvent::Prompt { session: s, .. } = event {
            session = Some(s);
        }
    }
    let session = session.expect("the prompt starts a turn");
    for _ in 0..CHUNKS {
        send(agent, session.as_str());
        let n = black_box(agent.poll_transmit()).len();
        written += n;
        agent.transmitted(n);
    }
    agent
        .end_turn(session.as_str(), StopReason::EndTurn)
        .expect("the turn is running");
    let n = agent.poll_transmit().len();
    agent.transmitted(n);
    written + n
}

fn bench(c: &mut Criterion) {
    let typed = SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(TEXT)));
    let raw_text = format!(
        r#"{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{TEXT}"}}}}"#
    );
    let raw = RawUpdate::new(&raw_text).expect("a valid update");
    let mut send_typed = |a: &mut AgentConnection<acp_core::conn::Growable>, s: &str| {
        a.send_update(s, &typed).expect("room")
    };
    let mut send_raw = |a: &mut AgentConnection<acp_core::conn::Growable>, s: &str| {
        a.send_update(s, &raw).expect("room")
    };

    for (unit, throughput) in [
        ("turns", Throughput::Elements(1)),
        ("chunks", Throughput::Elements(CHUNKS as u64)),
    ] {
        let mut group = c.benchmark_group(format!("turn_1000_chunks/{unit}"));
        group.throughput(throughput);
        group.bench_function("typed SessionUpdate", |b| {
            let mut agent = ready();
            b.iter(|| turn(&mut agent, &mut send_typed))
        });
        group.bench_function("RawUpdate", |b| {
            let mut agent = ready();
            b.iter(|| turn(&mut agent, &mut send_raw))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
