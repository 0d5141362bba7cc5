//! The model client against a real HTTP server: the scripted mock of `llm_support` on
//! loopback. Streamed text, reasoning and tool calls; every error a user can meet (401, 429
//! then success, 500, refused, TLS, a cut stream, malformed SSE or JSON) with its exact
//! text; cancel by dropping the future; (`llm_key.rs` checks that the API key
//! appears in no error and no log line.)
//!
//! Retries wait through a sleeper that records the delays and returns at once, so no test
//! sleeps or depends on time.

mod llm_support;

use std::future::Future;
use std::time::Duration;

use acp_cli::llm::config::ModelConfig;
use acp_cli::llm::http::stream_chat_with;
use acp_cli::llm::retry::{RetryPolicy, Sleeper};
use acp_cli::model::chat::{
    ChatMessage, ChatRequest, FinishReason, Finished, ModelError, ModelToolCall, StreamEvent,
    ToolSpec,
};
use llm_support::{
    Framing, MockModel, Piece, Reply, dead_port, done, finish, reasoning, text,
    tls_certificate_path, tool_call,
};
use serde_json::json;
use smol::future::FutureExt;

/// The key every test configures; no output may contain it.
const KEY: &str = "sk-mock-SECRET-7f3a9c2e51";

/// A sleeper that records each delay and returns at once.
#[derive(Default)]
struct Recorder(Vec<Duration>);

impl Sleeper for Recorder {
    fn sleep(&mut self, delay: Duration) -> impl Future<Output = ()> + Send {
        self.0.push(delay);
        std::future::ready(())
    }
}

/// OpenAI configured at `base_url` with [`KEY`] and model `mock-model`.
fn config(base_url: &str) -> ModelConfig {
    config_trusting(base_url, None)
}

/// The same, with `SSL_CERT_FILE` set to `ca_file`.
fn config_trusting(base_url: &str, ca_file: Option<&str>) -> ModelConfig {
    let base_url = base_url.to_owned();
    let ca_file = ca_file.map(str::to_owned);
    ModelConfig::from_env(
        move |name| match name {
            "OPENAI_API_KEY" => Some(KEY.to_owned()),
            "OPENAI_BASE_URL" => Some(base_url.clone()),
            "OPENAI_MODEL" => Some("mock-model".to_owned()),
            "SSL_CERT_FILE" => ca_file.clone(),
            _ => None,
        },
        None,
    )
    .unwrap()
}

/// A small conversation with one tool offered.
fn request() -> ChatRequest {
    ChatRequest {
        model: "mock-model".into(),
        messages: vec![
            ChatMessage::System("You are a test.".into()),
            ChatMessage::User("hello".into()),
        ],
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Reads a text file.".into(),
            parameters: json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}),
        }],
    }
}

/// What one call produced.
struct Outcome {
    events: Vec<StreamEvent>,
    result: Result<Finished, ModelError>,
    sleeps: Vec<Duration>,
}

/// Streams `request` from `config` with the default policy and a recording sleeper.
fn run_with(config: &ModelConfig, request: &ChatRequest) -> Outcome {
    let mut events = Vec::new();
    let mut sleeper = Recorder::default();
    let result = smol::block_on(stream_chat_with(
        config,
        request,
        |event| events.push(event),
        &RetryPolicy::default(),
        &mut sleeper,
    ));
    Outcome {
        events,
        result,
        sleeps: sleeper.0,
    }
}

/// Streams the standard request from `server`.
fn run(server: &MockModel) -> Outcome {
    run_with(&config(&server.base_url()), &request())
}

fn t(text: &str) -> StreamEvent {
    StreamEvent::Text(text.to_owned())
}

#[test]
fn a_plain_answer_streams_as_text_chunks_and_finishes_with_stop() {
    let server = MockModel::start(vec![Reply::text(&["Hel", "lo, ", "world"])]);
    let outcome = run(&server);
    assert_eq!(outcome.events, vec![t("Hel"), t("lo, "), t("world")]);
    assert_eq!(
        outcome.result,
        Ok(Finished {
            usage: None,
            reason: FinishReason::Stop,
            tool_calls: vec![]
        })
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(
        sent.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    let body = sent.json();
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["messages"],
        json!([{"role":"system","content":"You are a test."},{"role":"user","content":"hello"}])
    );
    assert_eq!(body["tools"][0]["function"]["name"], "read_file");
}

#[test]
fn reasoning_streams_as_reasoning_before_the_text() {
    let server = MockModel::start(vec![Reply::sse(&[
        reasoning("Let me "),
        reasoning("think."),
        text("Answer"),
        finish("stop"),
        done(),
    ])]);
    let outcome = run(&server);
    assert_eq!(
        outcome.events,
        vec![
            StreamEvent::Reasoning("Let me ".into()),
            StreamEvent::Reasoning("think.".into()),
            t("Answer"),
        ]
    );
    assert_eq!(outcome.result.unwrap().reason, FinishReason::Stop);
}

#[test]
fn a_tool_call_split_across_chunks_is_assembled() {
    let server = MockModel::start(vec![Reply::sse(&[
        text("Reading."),
        tool_call(0, Some("call_1"), Some("read_file"), ""),
        tool_call(0, None, None, "{\"pa"),
        tool_call(0, None, None, "th\": \"src/"),
        tool_call(0, None, None, "main.rs\"}"),
        finish("tool_calls"),
        done(),
    ])]);
    let outcome = run(&server);
    assert_eq!(outcome.events, vec![t("Reading.")]);
    assert_eq!(
        outcome.result,
        Ok(Finished {
            usage: None,
            reason: FinishReason::ToolCalls,
            tool_calls: vec![ModelToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: "{\"path\": \"src/main.rs\"}".into(),
            }],
        })
    );
}

#[test]
fn parallel_tool_calls_interleaved_across_chunks_are_assembled_in_index_order() {
    let server = MockModel::start(vec![Reply::sse(&[
        tool_call(0, Some("call_a"), Some("glob"), "{\"pattern\":"),
        tool_call(1, Some("call_b"), Some("read_file"), "{\"path\""),
        tool_call(1, None, None, ":\"a.txt\"}"),
        tool_call(0, None, None, "\"*.rs\"}"),
        finish("tool_calls"),
        done(),
    ])]);
    let outcome = run(&server);
    assert_eq!(outcome.events, vec![]);
    let finished = outcome.result.unwrap();
    assert_eq!(
        finished.tool_calls,
        vec![
            ModelToolCall {
                id: "call_a".into(),
                name: "glob".into(),
                arguments: "{\"pattern\":\"*.rs\"}".into(),
            },
            ModelToolCall {
                id: "call_b".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"a.txt\"}".into(),
            },
        ]
    );
}

#[test]
fn tool_results_reach_the_server_as_tool_messages() {
    let server = MockModel::start(vec![Reply::text(&["It says hi."])]);
    let mut request = request();
    request.messages.push(ChatMessage::Assistant {
        content: None,
        tool_calls: vec![ModelToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: "{\"path\":\"a.txt\"}".into(),
        }],
    });
    request.messages.push(ChatMessage::Tool {
        tool_call_id: "call_1".into(),
        content: "hi".into(),
    });
    let outcome = run_with(&config(&server.base_url()), &request);
    assert_eq!(outcome.events, vec![t("It says hi.")]);
    let sent = &server.requests()[0];
    assert_eq!(
        sent.tool_messages(),
        vec![json!({"role":"tool","tool_call_id":"call_1","content":"hi"})]
    );
    assert_eq!(
        sent.json()["messages"][2]["tool_calls"][0],
        json!({"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}})
    );
}

#[test]
fn a_server_without_chunked_framing_streams_until_it_closes() {
    let server = MockModel::start(vec![Reply::Stream {
        pieces: vec![
            Piece::Data(text("a")),
            Piece::Bytes(b"data: {\"choices\":[{\"index\":0,\"del".to_vec()),
            Piece::Bytes(b"ta\":{\"content\":\"b\"}}]}\r\n\r\n".to_vec()),
            Piece::Data(finish("stop")),
            Piece::Data(done()),
        ],
        framing: Framing::Close,
    }]);
    let outcome = run(&server);
    assert_eq!(outcome.events, vec![t("a"), t("b")]);
    assert_eq!(outcome.result.unwrap().reason, FinishReason::Stop);
}

#[test]
fn http_401_is_an_authentication_error_with_the_providers_message() {
    let server = MockModel::start(vec![Reply::error(401, "Incorrect API key provided.")]);
    let outcome = run(&server);
    let error = outcome.result.unwrap_err();
    assert_eq!(
        error.to_string(),
        "Authentication failed: HTTP 401: Incorrect API key provided."
    );
    assert_eq!(error.code(), -32000);
    assert_eq!(server.requests().len(), 1, "401 is not retried");
    assert_eq!(outcome.sleeps, vec![]);
}

#[test]
fn http_403_is_an_authentication_error_too() {
    let server = MockModel::start(vec![Reply::error(403, "Project does not have access")]);
    let error = run(&server).result.unwrap_err();
    assert_eq!(
        error.to_string(),
        "Authentication failed: HTTP 403: Project does not have access"
    );
    assert_eq!(error.code(), -32000);
}

/// R-LLM-3: 429 is retried after its `Retry-After`.
#[test]
fn http_429_then_success_retries_after_the_servers_retry_after() {
    let server = MockModel::start(vec![
        Reply::error_with(429, "Rate limit reached", &[("Retry-After", "0")]),
        Reply::text(&["ok"]),
    ]);
    let outcome = run(&server);
    assert_eq!(outcome.events, vec![t("ok")]);
    assert_eq!(outcome.result.unwrap().reason, FinishReason::Stop);
    assert_eq!(outcome.sleeps, vec![Duration::ZERO]);
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[0].body, server.requests()[1].body);
}

#[test]
fn retry_after_seconds_are_honoured_and_backoff_doubles_without_it() {
    let server = MockModel::start(vec![
        Reply::error_with(503, "busy", &[("Retry-After", "7")]),
        Reply::error(502, "bad gateway"),
        Reply::text(&["late"]),
    ]);
    let outcome = run(&server);
    assert_eq!(outcome.events, vec![t("late")]);
    assert_eq!(
        outcome.sleeps,
        vec![Duration::from_secs(7), Duration::from_secs(2)]
    );
}

#[test]
fn http_500_three_times_fails_naming_the_status() {
    let server = MockModel::start(vec![
        Reply::error(500, "The server had an error"),
        Reply::error(500, "The server had an error"),
        Reply::error(500, "The server had an error"),
        Reply::text(&["never"]),
    ]);
    let outcome = run(&server);
    let error = outcome.result.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model server answered HTTP 500: The server had an error"
    );
    assert_eq!(error.code(), -32603);
    assert_eq!(server.requests().len(), 3, "at most 3 tries in all");
    assert_eq!(server.unused_replies(), 1);
    assert_eq!(
        outcome.sleeps,
        vec![Duration::from_secs(1), Duration::from_secs(2)]
    );
}

#[test]
fn other_statuses_are_not_retried_and_an_empty_body_gives_the_reason_phrase() {
    let server = MockModel::start(vec![Reply::error(404, "The model `x` does not exist")]);
    assert_eq!(
        run(&server).result.unwrap_err().to_string(),
        "the model server answered HTTP 404: The model `x` does not exist"
    );
    assert_eq!(server.requests().len(), 1);
    let server = MockModel::start(vec![Reply::Status {
        status: 400,
        headers: vec![],
        body: String::new(),
    }]);
    assert_eq!(
        run(&server).result.unwrap_err().to_string(),
        "the model server answered HTTP 400: Mock"
    );
}

#[test]
fn connection_refused_is_a_clear_connect_error() {
    let port = dead_port();
    let outcome = run_with(&config(&format!("http://127.0.0.1:{port}/v1")), &request());
    let error = outcome.result.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot reach the model server: 127.0.0.1:{port}: Connection refused (os error 111)"
        )
    );
    assert_eq!(error.code(), -32603);
    assert_eq!(
        outcome.sleeps,
        vec![],
        "a refused connection is not retried"
    );
}

#[test]
fn a_tls_handshake_failure_is_a_clear_connect_error() {
    // The mock speaks plain HTTP: it answers the TLS hello with an HTTP 400.
    let server = MockModel::start(vec![]);
    let port = server.address().port();
    let error = run_with(&config(&format!("https://127.0.0.1:{port}/v1")), &request())
        .result
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot reach the model server: TLS handshake with 127.0.0.1:{port} failed: \
             received corrupt message of type InvalidContentType"
        )
    );
}

#[test]
fn https_to_a_server_whose_certificate_is_trusted_streams() {
    let server = MockModel::start_tls(vec![Reply::text(&["over ", "TLS"])]);
    assert!(server.base_url().starts_with("https://127.0.0.1:"));
    let config = config_trusting(&server.base_url(), Some(&tls_certificate_path()));
    let outcome = run_with(&config, &request());
    assert_eq!(outcome.events, vec![t("over "), t("TLS")]);
    assert_eq!(outcome.result.unwrap().reason, FinishReason::Stop);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
}

#[test]
fn https_to_a_server_whose_certificate_is_not_trusted_fails_the_handshake() {
    let server = MockModel::start_tls(vec![Reply::text(&["never"])]);
    let port = server.address().port();
    let error = run(&server).result.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot reach the model server: TLS handshake with 127.0.0.1:{port} failed: \
             invalid peer certificate: UnknownIssuer"
        )
    );
    assert_eq!(server.requests().len(), 0, "nothing was sent");
}

#[test]
fn an_unusable_ssl_cert_file_is_a_config_error() {
    let server = MockModel::start_tls(vec![]);
    let missing = config_trusting(&server.base_url(), Some("/nonexistent/ca.pem"));
    assert_eq!(
        run_with(&missing, &request())
            .result
            .unwrap_err()
            .to_string(),
        "model configuration: SSL_CERT_FILE '/nonexistent/ca.pem' cannot be read: \
         No such file or directory (os error 2)"
    );
    let not_pem = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let empty = config_trusting(&server.base_url(), Some(not_pem));
    assert_eq!(
        run_with(&empty, &request()).result.unwrap_err().to_string(),
        format!("model configuration: SSL_CERT_FILE '{not_pem}' holds no certificate")
    );
}

#[test]
fn a_stream_cut_mid_way_is_a_stream_error_after_the_text_so_far() {
    let server = MockModel::start(vec![Reply::pieces(vec![
        Piece::Data(text("partial")),
        Piece::Cut,
    ])]);
    let outcome = run(&server);
    assert_eq!(outcome.events, vec![t("partial")]);
    assert_eq!(
        outcome.result.unwrap_err().to_string(),
        "the model's stream broke off: the server closed the connection in the middle of the \
         response (after 1 chunk(s))"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "a started stream is not retried"
    );
}

#[test]
fn a_stream_that_ends_without_finishing_is_a_stream_error() {
    let server = MockModel::start(vec![Reply::Stream {
        pieces: vec![Piece::Data(text("a")), Piece::Data(text("b"))],
        framing: Framing::Close,
    }]);
    assert_eq!(
        run(&server).result.unwrap_err().to_string(),
        "the model's stream broke off: the stream ended after 2 chunk(s) without a \
         finish_reason or [DONE]"
    );
}

#[test]
fn a_malformed_json_chunk_is_a_stream_error_quoting_it() {
    let server = MockModel::start(vec![Reply::pieces(vec![
        Piece::Data(text("ok")),
        Piece::Data("{\"choices\": [oops]}".into()),
        Piece::Data(done()),
    ])]);
    let outcome = run(&server);
    assert_eq!(outcome.events, vec![t("ok")]);
    assert_eq!(
        outcome.result.unwrap_err().to_string(),
        "the model's stream broke off: chunk 2 is not a JSON chat completion chunk \
         (expected value at line 1 column 14): {\"choices\": [oops]}"
    );
}

#[test]
fn malformed_sse_is_a_stream_error() {
    let server = MockModel::start(vec![Reply::pieces(vec![Piece::Bytes(
        b"data: \xFF\xFE\n\n".to_vec(),
    )])]);
    assert_eq!(
        run(&server).result.unwrap_err().to_string(),
        "the model's stream broke off: a server-sent event's data is not UTF-8"
    );
}

#[test]
fn a_malformed_chunked_body_is_a_stream_error() {
    let server = MockModel::start(vec![Reply::Raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
            .to_vec(),
    )]);
    assert_eq!(
        run(&server).result.unwrap_err().to_string(),
        "the model's stream broke off: the response body is malformed: a chunk size is not \
         hexadecimal: 'zz'"
    );
}

#[test]
fn a_server_that_does_not_speak_http_is_a_stream_error() {
    let server = MockModel::start(vec![Reply::Raw(b"SSH-2.0-OpenSSH_9.2\r\n\r\n".to_vec())]);
    assert_eq!(
        run(&server).result.unwrap_err().to_string(),
        "the model's stream broke off: the response is not HTTP/1.1 (invalid HTTP version)"
    );
}

#[test]
fn a_server_that_closes_without_answering_is_a_connect_error() {
    let server = MockModel::start(vec![Reply::Raw(Vec::new())]);
    assert_eq!(
        run(&server).result.unwrap_err().to_string(),
        "cannot reach the model server: the server closed the connection without answering"
    );
}

#[test]
fn a_json_answer_instead_of_a_stream_is_a_stream_error() {
    let server = MockModel::start(vec![Reply::Status {
        status: 200,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: "{\"error\":\"streaming is disabled\"}".into(),
    }]);
    assert_eq!(
        run(&server).result.unwrap_err().to_string(),
        "the model's stream broke off: the server answered application/json, not an event \
         stream: streaming is disabled"
    );
}

#[test]
fn a_missing_key_fails_before_any_request() {
    let server = MockModel::start(vec![]);
    let base_url = server.base_url();
    let config = ModelConfig::from_env(
        |name| (name == "OPENAI_BASE_URL").then(|| base_url.clone()),
        None,
    )
    .unwrap();
    let error = run_with(&config, &request()).result.unwrap_err();
    assert_eq!(
        error.to_string(),
        "Authentication required: set OPENAI_API_KEY (LLM_PROVIDER=openai)"
    );
    assert_eq!(error.code(), -32000);
    assert_eq!(server.requests().len(), 0);
}

#[test]
fn dropping_the_future_closes_the_connection_at_once() {
    let server = MockModel::start(vec![Reply::pieces(vec![
        Piece::Data(text("first")),
        Piece::HoldUntilClosed,
    ])]);
    let config = config(&server.base_url());
    let request = request();
    let (sender, receiver) = smol::channel::unbounded();
    let policy = RetryPolicy::default();
    let mut sleeper = Recorder::default();
    let raced = smol::block_on(async {
        let chat = stream_chat_with(
            &config,
            &request,
            move |event| {
                let _ = sender.try_send(event);
            },
            &policy,
            &mut sleeper,
        );
        let first_event = async { Err(receiver.recv().await.expect("an event")) };
        chat.map_ok_into().or(first_event).await
    });
    // The first event won the race; the request's future was dropped with the race.
    assert_eq!(raced, Err(t("first")));
    assert_eq!(server.wait_client_closed(), Some(1));
}

/// `Ok` of a chat result, so it can race a future of another type.
trait MapOkInto: Future<Output = Result<Finished, ModelError>> + Sized {
    fn map_ok_into(
        self,
    ) -> impl Future<Output = Result<Result<Finished, ModelError>, StreamEvent>> {
        async move { Ok(self.await) }
    }
}

impl<F: Future<Output = Result<Finished, ModelError>>> MapOkInto for F {}

#[test]
fn the_request_future_is_send_so_a_driver_may_spawn_it() {
    fn assert_send<T: Send>(_: &T) {}
    let config = config("http://127.0.0.1:1/v1");
    let request = request();
    let mut sleeper = Recorder::default();
    let policy = RetryPolicy::default();
    let future = stream_chat_with(&config, &request, |_event| {}, &policy, &mut sleeper);
    assert_send(&future);
    let plain = acp_cli::llm::http::stream_chat(&config, &request, |_event| {});
    assert_send(&plain);
}
