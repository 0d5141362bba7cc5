//! The agent's added latency per streamed token with the llm backend, no I/O: one Chat
//! Completions chunk's bytes as the socket hands them over (inside HTTP chunked framing) →
//! chunked decoder → SSE parser → chunk assembler → `StreamEvent` → the app and the llm
//! backend → the `session/update` line ready for stdout. Each sample is one chunk, timed
//! alone; the median and the 99th percentile are printed, plus the same without the model
//! client's part (event in → line out) to show where the time goes.
//!
//! Run: `cargo bench -p acp-rs-cli --bench llm_agent`.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant as WallClock;

use acp_cli::agent::app::{AgentApp, Job, Workspace, agent_config};
use acp_cli::agent::backend::Reply;
use acp_cli::agent::paths::Roots;
use acp_cli::agent::sessions::{CwdKind, SessionTable};
use acp_cli::llm::backend::{LLM_TITLE, LlmBackend};
use acp_cli::llm::openai::StreamAssembler;
use acp_cli::model::chat::StreamEvent;
use acp_cli::net::response::ChunkedDecoder;
use acp_cli::net::sse::SseParser;
use acp_cli::store::{Deleted, Loaded, Saved, SessionHistory, SessionPage, StoreError};
use acp_core::Instant;
use acp_core::schema::ListSessionsRequest;

/// A typical OpenAI text chunk: one token of the answer.
const TEXT_CHUNK: &[u8] = b"data: {\"id\":\"chatcmpl-AbCdEf0123456789\",\"object\":\"chat.completion.chunk\",\"created\":1764000000,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0123456789\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" streamed\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";

const SAMPLES: usize = 200_000;
const WARMUP: usize = 20_000;

/// A workspace where only `/p` exists and nothing is stored.
struct Nothing;

impl Workspace for Nothing {
    fn cwd_kind(&self, _path: &str) -> CwdKind {
        CwdKind::Directory
    }
    fn read(&self, _roots: Roots<'_>, _path: &str) -> Result<String, String> {
        Err("no files".into())
    }
    fn write(&self, _roots: Roots<'_>, _path: &str, _content: &str) -> Result<(), String> {
        Err("no files".into())
    }
    fn save_session(&self, _cwd: &str, _h: &mut SessionHistory) -> Result<Saved, StoreError> {
        Ok(Saved::default())
    }
    fn load_session(&self, _cwd: &str, id: Option<&str>) -> Result<Loaded, StoreError> {
        Err(StoreError::NotFound {
            session_id: id.unwrap_or_default().to_owned(),
        })
    }
    fn list_sessions(
        &self,
        _request: &ListSessionsRequest,
        _known: &[PathBuf],
    ) -> Result<SessionPage, StoreError> {
        Ok(SessionPage {
            response: Default::default(),
            warnings: Vec::new(),
        })
    }
    fn delete_session(&self, _cwd: &str, id: &str) -> Result<Deleted, StoreError> {
        Err(StoreError::NotFound {
            session_id: id.to_owned(),
        })
    }
}

type App = AgentApp<LlmBackend, Nothing>;

/// An app with one session whose turn waits for its model job; returns the job's id.
fn app_waiting_for_the_model() -> (App, acp_cli::agent::app::JobId) {
    let mut app = AgentApp::new(
        agent_config(LLM_TITLE),
        LlmBackend::new("m", 50),
        Nothing,
        SessionTable::with_nonce(1).with_model("openai", "m"),
    );
    let sid = "sess_00000000000000010000000000000001";
    let prompt = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"{sid}\",\"prompt\":[{{\"type\":\"text\",\"text\":\"go\"}}]}}}}\n"
    );
    // One line at a time, as a client waits for each answer.
    for line in [
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{\"cwd\":\"/p\",\"mcpServers\":[]}}\n",
        prompt.as_str(),
    ] {
        app.handle_bytes(Instant(0), line.as_bytes());
    }
    let n = app.poll_transmit().len();
    app.transmitted(n);
    match app.poll_job() {
        Some(Job::Model { id, .. }) => (app, id),
        other => panic!("expected the model job, got {other:?}"),
    }
}

fn report(name: &str, mut nanos: Vec<u64>) {
    nanos.sort_unstable();
    let at = |q: f64| nanos[((nanos.len() as f64 - 1.0) * q) as usize];
    println!(
        "{name:<38} median {:>6.2} µs   p99 {:>6.2} µs   ({} chunks)",
        at(0.5) as f64 / 1000.0,
        at(0.99) as f64 / 1000.0,
        nanos.len()
    );
}

fn main() {
    let mut framed = format!("{:x}\r\n", TEXT_CHUNK.len()).into_bytes();
    framed.extend_from_slice(TEXT_CHUNK);
    framed.extend_from_slice(b"\r\n");

    // Whole path: bytes in, session/update line out.
    let (mut app, job) = app_waiting_for_the_model();
    let mut decoder = ChunkedDecoder::default();
    let mut parser = SseParser::new();
    let mut assembler = StreamAssembler::new();
    let mut events = Vec::new();
    let mut body = Vec::with_capacity(1024);
    let mut nanos = Vec::with_capacity(SAMPLES);
    let mut line_bytes = 0;
    for i in 0..WARMUP + SAMPLES {
        let start = WallClock::now();
        body.clear();
        decoder
            .decode(black_box(&framed), &mut body)
            .expect("framing");
        events.clear();
        parser.feed(&body, &mut events).expect("SSE");
        let mut out = None;
        for event in &events {
            assembler
                .on_event(event, &mut |e| out = Some(e))
                .expect("chunk");
        }
        app.job_reply(Instant(0), job, Reply::ModelEvent(out.expect("event")));
        let line = app.poll_transmit();
        line_bytes = line.len();
        black_box(line);
        app.transmitted(line_bytes);
        let took = start.elapsed().as_nanos() as u64;
        if i >= WARMUP {
            nanos.push(took);
        }
    }
    assert!(line_bytes > 0, "each chunk became a line");
    report("SSE chunk in -> session/update out", nanos);

    // The agent's part alone: the event in, the line out.
    let (mut app, job) = app_waiting_for_the_model();
    let mut nanos = Vec::with_capacity(SAMPLES);
    for i in 0..WARMUP + SAMPLES {
        let event = StreamEvent::Text(" streamed".to_owned());
        let start = WallClock::now();
        app.job_reply(Instant(0), job, Reply::ModelEvent(black_box(event)));
        let n = app.poll_transmit().len();
        app.transmitted(n);
        let took = start.elapsed().as_nanos() as u64;
        if i >= WARMUP {
            nanos.push(took);
        }
    }
    report("StreamEvent in -> session/update out", nanos);
}
