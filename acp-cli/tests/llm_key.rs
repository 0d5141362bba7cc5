//! The API key appears only in the `Authorization` header: never in an error text, a
//! `Debug` output or a log line, even when the provider echoes it back. A file of its own:
//! `tracing` caches per call site whether anyone listens, so a scoped subscriber only sees
//! every event when no other test runs in the process.

mod llm_support;

use std::future::Future;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_cli::llm::config::ModelConfig;
use acp_cli::llm::http::stream_chat_with;
use acp_cli::llm::retry::{RetryPolicy, Sleeper};
use acp_cli::model::chat::{ChatMessage, ChatRequest, Finished, ModelError};
use llm_support::{MockModel, Piece, Reply, dead_port, text};

/// The key; no output may contain it.
const KEY: &str = "sk-mock-SECRET-7f3a9c2e51";

/// A sleeper that returns at once.
struct NoWait;

impl Sleeper for NoWait {
    fn sleep(&mut self, _delay: Duration) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }
}

/// OpenAI configured at `base_url` with [`KEY`].
fn config(base_url: &str) -> ModelConfig {
    let base_url = base_url.to_owned();
    ModelConfig::from_env(
        move |name| match name {
            "OPENAI_API_KEY" => Some(KEY.to_owned()),
            "OPENAI_BASE_URL" => Some(base_url.clone()),
            _ => None,
        },
        None,
    )
    .unwrap()
}

/// Streams a one-message request from `base_url`.
fn run_at(base_url: &str) -> Result<Finished, ModelError> {
    let request = ChatRequest {
        model: "mock-model".into(),
        messages: vec![ChatMessage::User("hello".into())],
        tools: vec![],
    };
    smol::block_on(stream_chat_with(
        &config(base_url),
        &request,
        |_event| {},
        &RetryPolicy::default(),
        &mut NoWait,
    ))
}

fn run(server: &MockModel) -> Result<Finished, ModelError> {
    run_at(&server.base_url())
}

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl Write for LogBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// R-LLM-1: the key goes only into the Authorization header.
#[test]
fn the_key_is_absent_from_every_error_and_every_log_line() {
    let logs = LogBuffer::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let port = dead_port();
    let texts = tracing::subscriber::with_default(subscriber, || {
        let scripts = vec![
            // A provider that echoes the key in its message.
            vec![Reply::error(
                401,
                &format!("Incorrect API key provided: {KEY}"),
            )],
            vec![
                Reply::error(500, KEY),
                Reply::error(502, KEY),
                Reply::error(503, KEY),
            ],
            vec![
                Reply::error_with(429, "slow", &[("Retry-After", "0")]),
                Reply::text(&["x"]),
            ],
            vec![Reply::pieces(vec![Piece::Data(text(KEY)), Piece::Cut])],
            vec![Reply::pieces(vec![Piece::Data(format!(
                "{{\"bad\": {KEY}"
            ))])],
            vec![Reply::Raw(
                format!("HTTP/1.1 200 OK\r\nContent-Type: {KEY}\r\n\r\n").into_bytes(),
            )],
        ];
        let mut texts = Vec::new();
        for script in scripts {
            let server = MockModel::start(script);
            let result = run(&server);
            for request in server.requests() {
                assert_eq!(
                    request.header("authorization"),
                    Some(&*format!("Bearer {KEY}"))
                );
                assert!(!String::from_utf8_lossy(&request.body).contains(KEY));
            }
            if let Err(error) = result {
                texts.push(error.to_string());
                texts.push(format!("{error:?}"));
            }
        }
        let error = run_at(&format!("http://127.0.0.1:{port}/v1")).unwrap_err();
        texts.push(error.to_string());
        texts.push(format!("{:?}", config("http://h")));
        texts
    });
    assert_eq!(texts.len(), 12, "{texts:#?}");
    for text in &texts {
        assert!(!text.contains(KEY), "the key leaked: {text}");
    }
    assert!(
        texts[0].contains("Incorrect API key provided: [redacted]"),
        "{}",
        texts[0]
    );
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("model request"),
        "the logs were captured: {logs}"
    );
    assert!(logs.contains("retrying"), "{logs}");
    assert!(!logs.contains(KEY), "the key leaked into the logs: {logs}");
}
