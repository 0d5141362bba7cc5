//! The llm backend's usage and context window end to end: the agent over pipes, raw ACP
//! lines in and out, its model the scripted mock server on loopback. The token figures the
//! client sees are the mock's; a conversation that outgrows a small `LLM_CONTEXT_WINDOW` is
//! compacted, and `session/load` still replays all of it.

mod agent_support;
mod llm_support;

use agent_support::{Agent, binary, s, session_id};
use llm_support::{MockModel, Reply, done, finish, text};
use serde_json::{Value, json};

/// The agent with the llm backend against `mock`, with these extra variables.
fn llm_agent(name: &str, mock: &MockModel, env: &[(&str, &str)]) -> Agent {
    let base = mock.base_url();
    let mut vars = vec![
        ("OPENAI_API_KEY", "sk-context-test"),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    vars.extend_from_slice(env);
    Agent::start_with_env(
        name,
        &["--backend", "llm", "--model", "mock-model"],
        None,
        &vars,
    )
}

/// `initialize` with these capabilities, then `session/new` in `cwd`; the session id.
fn open(agent: &mut Agent, capabilities: &str, cwd: &str) -> String {
    agent.call(
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{capabilities}}}}}"#
        ),
        1,
    );
    let answer = agent.call(
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{cwd}","mcpServers":[]}}}}"#
        ),
        2,
    );
    session_id(answer.last().expect("an answer")).expect("a session id")
}

/// The JSON values of `lines`.
fn values(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// The `update` objects among `lines` of this `sessionUpdate` kind.
fn updates(lines: &[String], kind: &str) -> Vec<Value> {
    values(lines)
        .into_iter()
        .filter(|value| value["params"]["update"]["sessionUpdate"] == kind)
        .map(|value| value["params"]["update"].clone())
        .collect()
}

/// A usage chunk as OpenAI sends it last, with `include_usage`.
fn usage_chunk(prompt: u64, completion: u64) -> String {
    json!({"choices": [], "usage": {
        "prompt_tokens": prompt, "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "completion_tokens_details": {"reasoning_tokens": 4},
    }})
    .to_string()
}

/// R-LLM-USAGE-1, R-LLM-USAGE-2, R-LLM-USAGE-3: the agent asks for usage; the mock's counts
/// are the `usage_update` (of the window `LLM_CONTEXT_WINDOW` sets) and the prompt answer's
/// `usage`.
#[test]
fn the_mocks_token_counts_reach_the_client() {
    let mock = MockModel::start(vec![Reply::sse(&[
        text("Hi."),
        finish("stop"),
        usage_chunk(321, 12),
        done(),
    ])]);
    let mut agent = llm_agent("llm-usage", &mock, &[("LLM_CONTEXT_WINDOW", "50000")]);
    let cwd = agent.cwd.clone();
    let session = open(&mut agent, "{}", s(&cwd));
    let lines = agent.prompt(3, &session, "hello");
    assert_eq!(
        updates(&lines, "usage_update"),
        [json!({"sessionUpdate": "usage_update", "used": 333, "size": 50000})]
    );
    let answer = values(&lines).pop().expect("the answer");
    assert_eq!(
        answer["result"],
        json!({"stopReason": "end_turn", "usage": {
            "totalTokens": 333, "inputTokens": 321, "outputTokens": 12, "thoughtTokens": 4
        }})
    );
    assert_eq!(
        mock.requests()[0].json()["stream_options"],
        json!({"include_usage": true})
    );
}

/// R-LLM-USAGE-1: a server that refuses `stream_options` gets the request again without it,
/// and no later request asks; the turn goes on.
#[test]
fn a_server_refusing_stream_options_is_asked_without_it_from_then_on() {
    let mock = MockModel::start(vec![
        Reply::error(
            400,
            "Unrecognized request argument supplied: stream_options",
        ),
        Reply::text(&["One."]),
        Reply::text(&["Two."]),
    ]);
    let mut agent = llm_agent("llm-usage-refused", &mock, &[]);
    let cwd = agent.cwd.clone();
    let session = open(&mut agent, "{}", s(&cwd));
    let first = agent.prompt(3, &session, "one");
    assert_eq!(
        values(&first).pop().expect("an answer")["result"],
        json!({"stopReason": "end_turn"}),
        "no counts, no usage"
    );
    agent.prompt(4, &session, "two");
    let asked: Vec<bool> = mock
        .requests()
        .iter()
        .map(|request| request.json().get("stream_options").is_some())
        .collect();
    assert_eq!(asked, [true, false, false]);
}

/// R-LLM-CONTEXT-1, R-LLM-CONTEXT-2: a conversation that outgrows a small window is
/// compacted (the client sees the compaction, the model's next request is the summary and
/// the prompt), and `session/load` replays every earlier message, the compaction with them;
/// the model then goes on from the summary.
#[test]
fn a_conversation_outgrowing_the_window_is_compacted_and_still_replays_whole() {
    let long = "a".repeat(12_000);
    let mock = MockModel::start(vec![
        Reply::text(&[&long]),
        Reply::text(&["We talked ", "about a."]),
        Reply::text(&["Answer two."]),
        Reply::text(&["Answer three."]),
    ]);
    let compaction = r#"{"session":{"compaction":{}}}"#;
    let mut agent = llm_agent("llm-compact", &mock, &[("LLM_CONTEXT_WINDOW", "4000")]);
    let cwd = agent.cwd.clone();
    let session = open(&mut agent, compaction, s(&cwd));
    agent.prompt(3, &session, "first");
    let second = agent.prompt(4, &session, "second");
    let kinds: Vec<String> = values(&second)
        .iter()
        .filter_map(|value| value["params"]["update"]["sessionUpdate"].as_str())
        .filter(|kind| kind.starts_with("compaction"))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        kinds,
        [
            "compaction_update",
            "compaction_summary_chunk",
            "compaction_summary_chunk",
            "compaction_update"
        ]
    );
    let done = updates(&second, "compaction_update")
        .pop()
        .expect("its end");
    assert_eq!(
        done,
        json!({"sessionUpdate": "compaction_update", "compactionId": "compaction-1",
               "status": "completed",
               "summary": [{"type": "text", "text": "We talked about a."}]})
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let sent = |n: usize| requests[n].json()["messages"].as_array().unwrap().clone();
    assert_eq!(sent(1).len(), 5, "everything, then the instruction");
    let after = sent(2);
    assert_eq!(after.len(), 3);
    assert!(
        after[1]["content"]
            .as_str()
            .unwrap()
            .ends_with("We talked about a.")
    );
    assert_eq!(after[2], json!({"role": "user", "content": "second"}));
    assert!(
        requests[2].body.len() * 2 < requests[1].body.len(),
        "the request shrank"
    );
    drop(agent);

    // A client that shows compactions gets the whole conversation back, the compaction in
    // its place; the model goes on from the summary.
    let mut again = llm_agent("llm-compact-load", &mock, &[("LLM_CONTEXT_WINDOW", "4000")]);
    again.call(
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{compaction}}}}}"#
        ),
        1,
    );
    let loaded = again.call(
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"session/load","params":{{"sessionId":"{session}","cwd":"{}","mcpServers":[]}}}}"#,
            s(&cwd)
        ),
        2,
    );
    let replayed: Vec<String> = values(&loaded)
        .iter()
        .filter_map(|value| {
            let update = &value["params"]["update"];
            let text = update["content"]["text"]
                .as_str()
                .map(|t| &t[..t.len().min(8)]);
            match update["sessionUpdate"].as_str()? {
                "compaction_update" => Some(format!("compaction {}", update["status"])),
                kind => Some(format!("{kind} {}", text.unwrap_or(""))),
            }
        })
        .collect();
    assert_eq!(
        replayed,
        [
            "user_message_chunk first",
            "agent_message_chunk aaaaaaaa",
            "user_message_chunk second",
            "compaction \"completed\"",
            "agent_message_chunk Answer t",
        ]
    );
    again.prompt(3, &session, "third");
    let requests = mock.requests();
    let last = requests.last().unwrap().json()["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(last.len(), 5, "system, summary, second, its answer, third");
    assert_eq!(
        last[3],
        json!({"role": "assistant", "content": "Answer two."})
    );
    drop(again);

    // A client that does not show compactions is sent none, live or replayed.
    let mut plain = llm_agent(
        "llm-compact-plain",
        &mock,
        &[("LLM_CONTEXT_WINDOW", "4000")],
    );
    plain.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        1,
    );
    let loaded = plain.call(
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"session/load","params":{{"sessionId":"{session}","cwd":"{}","mcpServers":[]}}}}"#,
            s(&cwd)
        ),
        2,
    );
    assert!(
        updates(&loaded, "compaction_update").is_empty(),
        "{loaded:?}"
    );
    assert_eq!(updates(&loaded, "user_message_chunk").len(), 3);
}

/// R-LLM-USAGE-2: a window that is not a number of tokens stops the agent before it starts.
#[test]
fn a_bad_context_window_is_refused_with_its_message() {
    let output = binary()
        .args(["--acp", "--stdio", "--backend", "llm"])
        .env("LLM_CONTEXT_WINDOW", "lots")
        .env("OPENAI_API_KEY", "sk-unused")
        .output()
        .expect("run acp-cli");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "acp-cli: LLM_CONTEXT_WINDOW must be a number of tokens, at least 256 (got \"lots\")\n"
    );
}
