//! The Chat Completions wire format: the streamed request body, the chunks of its answer
//! assembled into [`StreamEvent`]s and one [`Finished`], and the provider's error bodies.
//!
//! Sans-IO: [`StreamAssembler`] is fed the SSE events the HTTP client parsed. Text and
//! reasoning go out as they arrive; `delta.tool_calls` pieces are joined by their `index`
//! (the `id` and `name` come in the first piece, `arguments` in fragments, several calls may
//! interleave) and handed over whole at the end. Some servers send `finish_reason: "stop"`
//! with tool calls, so a caller should go by [`Finished::tool_calls`] being non-empty, not
//! by the reason alone. Only the first choice (`index` 0) is read.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::model::chat::{
    ChatMessage, ChatRequest, FinishReason, Finished, ModelError, ModelToolCall, StreamEvent,
    TokenUsage, UserPart,
};
use crate::net::sse::SseEvent;

/// The bound on the tool-call arguments of one answer, all calls together: 16 MiB.
pub(crate) const TOOL_ARGUMENTS_LIMIT: usize = 16 << 20;

/// How much of an unparsable chunk or error body an error message quotes.
const QUOTE_LIMIT: usize = 200;

/// The JSON body of a streamed request. With `include_usage` it asks for the token counts
/// (`stream_options.include_usage`, R-LLM-USAGE-1); some OpenAI-compatible servers refuse
/// fields they do not know, so the caller can leave it out.
pub(crate) fn request_body(request: &ChatRequest, include_usage: bool) -> Vec<u8> {
    let messages: Vec<Value> = request.messages.iter().map(message_json).collect();
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
    });
    if include_usage {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    }
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    serde_json::to_vec(&body).expect("a JSON value always serializes")
}

/// One message in Chat Completions form.
fn message_json(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::System(text) => json!({"role": "system", "content": text}),
        ChatMessage::User(text) => json!({"role": "user", "content": text}),
        // Images as `image_url` parts holding a data URL (R-LLM-9).
        ChatMessage::UserParts(parts) => {
            let parts: Vec<Value> = parts
                .iter()
                .map(|part| match part {
                    UserPart::Text(text) => json!({"type": "text", "text": text}),
                    UserPart::Image { mime_type, data } => json!({
                        "type": "image_url",
                        "image_url": {"url": format!("data:{mime_type};base64,{data}")}
                    }),
                })
                .collect();
            json!({"role": "user", "content": parts})
        }
        ChatMessage::Assistant {
            content,
            tool_calls,
        } => {
            let mut value = json!({"role": "assistant", "content": content});
            if !tool_calls.is_empty() {
                value["tool_calls"] = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
            } else if content.is_none() {
                value["content"] = json!("");
            }
            value
        }
        ChatMessage::Tool {
            tool_call_id,
            content,
        } => json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}),
    }
}

/// The provider's message in an error body: `{"error":{"message":…}}`, `{"error":"…"}`,
/// `{"message":…}` or `{"detail":…}`; otherwise the body's text, trimmed and cut short.
pub(crate) fn error_message(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        let candidates = [
            value.pointer("/error/message"),
            value.get("error"),
            value.get("message"),
            value.get("detail"),
        ];
        for candidate in candidates.into_iter().flatten() {
            if let Some(text) = candidate.as_str() {
                return quote(text.trim());
            }
        }
    }
    quote(String::from_utf8_lossy(body).trim())
}

/// `text`, cut to [`QUOTE_LIMIT`] characters with `…` when longer.
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_LIMIT) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Whether the stream still runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// More chunks may come.
    More,
    /// `data: [DONE]` arrived: the answer is complete.
    Done,
}

/// A tool call being assembled.
#[derive(Debug)]
struct PartialCall {
    /// Its `index` in the stream.
    index: usize,
    /// Its id, from the first piece that had one.
    id: String,
    /// Its function name, from the first piece that had one.
    name: String,
    /// The `arguments` fragments so far.
    arguments: String,
}

/// Turns one answer's chunks into events and, at the end, a [`Finished`].
#[derive(Debug, Default)]
pub struct StreamAssembler {
    /// The tool calls in the order they first appeared.
    calls: Vec<PartialCall>,
    /// All `arguments` bytes so far, against [`TOOL_ARGUMENTS_LIMIT`].
    argument_bytes: usize,
    /// The last `finish_reason` seen.
    finish: Option<FinishReason>,
    /// `[DONE]` arrived.
    done: bool,
    /// How many chunks were read (for error messages).
    chunks: usize,
    /// The last `usage` a chunk carried (the final chunk, with `include_usage`).
    usage: Option<TokenUsage>,
}

/// One `chat.completion.chunk` (the fields the client reads; others are skipped).
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: Vec<Choice<'a>>,
    #[serde(default)]
    error: Option<Value>,
    /// Sent in the last chunk (empty `choices`) when usage was asked for; `null` before.
    #[serde(default)]
    usage: Option<UsageJson>,
}

/// A chunk's `usage` object (the counts the client reads).
#[derive(Deserialize)]
struct UsageJson {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

/// `usage.completion_tokens_details`.
#[derive(Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// `usage.prompt_tokens_details`.
#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl From<UsageJson> for TokenUsage {
    fn from(usage: UsageJson) -> Self {
        Self {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            reasoning_tokens: usage
                .completion_tokens_details
                .and_then(|details| details.reasoning_tokens),
            cached_tokens: usage
                .prompt_tokens_details
                .and_then(|details| details.cached_tokens),
        }
    }
}

/// One choice of a chunk.
#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: u32,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

/// What a choice adds.
#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    /// The name some servers (OpenRouter, Ollama) give the reasoning text.
    #[serde(default, borrow)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

/// A piece of one tool call.
#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    function: Option<FunctionDelta<'a>>,
}

/// A piece of a tool call's function.
#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    arguments: Option<Cow<'a, str>>,
}

impl StreamAssembler {
    /// A fresh assembler for one answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads one SSE event, emitting the text and reasoning it carries.
    pub fn on_event(
        &mut self,
        event: &SseEvent,
        emit: &mut impl FnMut(StreamEvent),
    ) -> Result<Progress, ModelError> {
        if self.done {
            return Ok(Progress::Done);
        }
        let data = event.data.trim();
        if event.event == "error" {
            return Err(ModelError::Stream(format!(
                "the server sent an error event: {}",
                error_message(data.as_bytes())
            )));
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(Progress::Done);
        }
        self.chunks += 1;
        let chunk: Chunk<'_> = serde_json::from_str(data).map_err(|error| {
            ModelError::Stream(format!(
                "chunk {} is not a JSON chat completion chunk ({error}): {}",
                self.chunks,
                quote(data)
            ))
        })?;
        if let Some(error) = chunk.error {
            let body = serde_json::to_vec(&json!({ "error": error })).unwrap_or_default();
            return Err(ModelError::Stream(format!(
                "the server reported an error: {}",
                error_message(&body)
            )));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.into());
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                self.on_delta(delta, emit)?;
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(finish_reason(&reason));
            }
        }
        Ok(Progress::More)
    }

    /// Emits a delta's text and reasoning and folds in its tool-call pieces.
    fn on_delta(
        &mut self,
        delta: Delta<'_>,
        emit: &mut impl FnMut(StreamEvent),
    ) -> Result<(), ModelError> {
        if let Some(reasoning) = delta.reasoning_content.or(delta.reasoning)
            && !reasoning.is_empty()
        {
            emit(StreamEvent::Reasoning(reasoning.into_owned()));
        }
        if let Some(text) = delta.content
            && !text.is_empty()
        {
            emit(StreamEvent::Text(text.into_owned()));
        }
        for piece in delta.tool_calls.into_iter().flatten() {
            self.on_tool_piece(piece)?;
        }
        Ok(())
    }

    /// Adds one tool-call piece to the call its `index` names. A piece without `index` (some
    /// servers leave it out) starts a new call when it brings a new id, else continues the
    /// last one.
    fn on_tool_piece(&mut self, piece: ToolCallDelta<'_>) -> Result<(), ModelError> {
        let id = piece.id.filter(|id| !id.is_empty());
        let index = match piece.index {
            Some(index) => index,
            None => match (&id, self.calls.last()) {
                (Some(id), Some(last)) if last.id == id.as_ref() || last.id.is_empty() => {
                    last.index
                }
                (None, Some(last)) => last.index,
                _ => self.calls.iter().map(|c| c.index + 1).max().unwrap_or(0),
            },
        };
        let position = match self.calls.iter().position(|call| call.index == index) {
            Some(position) => position,
            None => {
                self.calls.push(PartialCall {
                    index,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[position];
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id.into_owned();
        }
        if let Some(function) = piece.function {
            if let Some(name) = function.name.filter(|name| !name.is_empty())
                && call.name.is_empty()
            {
                call.name = name.into_owned();
            }
            if let Some(arguments) = function.arguments {
                self.argument_bytes += arguments.len();
                if self.argument_bytes > TOOL_ARGUMENTS_LIMIT {
                    return Err(ModelError::Stream(format!(
                        "the tool call arguments exceed {TOOL_ARGUMENTS_LIMIT} bytes"
                    )));
                }
                call.arguments.push_str(&arguments);
            }
        }
        Ok(())
    }

    /// Whether a `finish_reason` or `[DONE]` arrived: the answer is complete even if the
    /// connection now breaks.
    pub(crate) fn has_finish_reason(&self) -> bool {
        self.finish.is_some() || self.done
    }

    /// How many chunks (not counting `[DONE]`) were read.
    pub(crate) fn chunks(&self) -> usize {
        self.chunks
    }

    /// The end of the body: the answer, or why the stream did not finish.
    pub(crate) fn finish(mut self) -> Result<Finished, ModelError> {
        let reason = match (self.finish, self.done) {
            (Some(reason), _) => reason,
            (None, true) => FinishReason::Other,
            (None, false) => {
                return Err(ModelError::Stream(format!(
                    "the stream ended after {} chunk(s) without a finish_reason or [DONE]",
                    self.chunks
                )));
            }
        };
        self.calls.sort_by_key(|call| call.index);
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for call in self.calls {
            if call.name.is_empty() {
                return Err(ModelError::Stream(format!(
                    "tool call {} has no function name",
                    call.index
                )));
            }
            let id = if call.id.is_empty() {
                format!("call_{}", call.index)
            } else {
                call.id
            };
            tool_calls.push(ModelToolCall {
                id,
                name: call.name,
                arguments: call.arguments,
            });
        }
        Ok(Finished {
            reason,
            tool_calls,
            usage: self.usage,
        })
    }
}

/// `finish_reason` as a [`FinishReason`].
pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        _ => FinishReason::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::chat::ToolSpec;

    fn event(data: &str) -> SseEvent {
        SseEvent {
            event: String::new(),
            data: data.to_owned(),
        }
    }

    /// Feeds `chunks` (SSE data texts) and returns the events and the end.
    fn assemble(chunks: &[&str]) -> (Vec<StreamEvent>, Result<Finished, ModelError>) {
        let mut assembler = StreamAssembler::new();
        let mut events = Vec::new();
        for chunk in chunks {
            if let Err(error) = assembler.on_event(&event(chunk), &mut |e| events.push(e)) {
                return (events, Err(error));
            }
        }
        (events, assembler.finish())
    }

    #[test]
    fn text_and_reasoning_stream_as_they_come() {
        let (events, end) = assemble(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning":" more"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo \"x\""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"total_tokens":3}}"#,
            "[DONE]",
        ]);
        assert_eq!(
            events,
            vec![
                StreamEvent::Reasoning("think".into()),
                StreamEvent::Reasoning(" more".into()),
                StreamEvent::Text("Hel".into()),
                StreamEvent::Text("lo \"x\"".into()),
            ]
        );
        assert_eq!(
            end,
            Ok(Finished {
                reason: FinishReason::Stop,
                tool_calls: vec![],
                usage: Some(TokenUsage::default()),
            })
        );
    }

    /// R-LLM-USAGE-1: the last chunk's `usage` (with its details when sent) is the answer's.
    #[test]
    fn the_usage_chunk_gives_the_token_counts() {
        let (_, end) = assemble(&[
            r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":7,"total_tokens":127,"completion_tokens_details":{"reasoning_tokens":3},"prompt_tokens_details":{"cached_tokens":64}}}"#,
            "[DONE]",
        ]);
        assert_eq!(
            end.unwrap().usage,
            Some(TokenUsage {
                prompt_tokens: 120,
                completion_tokens: 7,
                reasoning_tokens: Some(3),
                cached_tokens: Some(64),
            })
        );
        let (_, end) = assemble(&[
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(end.unwrap().usage, None, "no usage sent, none reported");
    }

    #[test]
    fn finish_reasons_map() {
        for (text, reason) in [
            ("stop", FinishReason::Stop),
            ("length", FinishReason::Length),
            ("content_filter", FinishReason::ContentFilter),
            ("tool_calls", FinishReason::ToolCalls),
            ("function_call", FinishReason::ToolCalls),
            ("eos", FinishReason::Other),
        ] {
            let chunk =
                format!(r#"{{"choices":[{{"index":0,"delta":{{}},"finish_reason":"{text}"}}]}}"#);
            assert_eq!(assemble(&[&chunk]).1.unwrap().reason, reason, "{text}");
        }
    }

    #[test]
    fn parallel_tool_calls_are_assembled_by_index() {
        let (events, end) = assemble(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"glob","arguments":"{\"pattern\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.txt\"}"}},{"index":1,"function":{"arguments":"\"*.rs\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(events, vec![]);
        assert_eq!(
            end,
            Ok(Finished {
                reason: FinishReason::ToolCalls,
                usage: None,
                tool_calls: vec![
                    ModelToolCall {
                        id: "call_a".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a.txt"}"#.into()
                    },
                    ModelToolCall {
                        id: "call_b".into(),
                        name: "glob".into(),
                        arguments: r#"{"pattern":"*.rs"}"#.into()
                    },
                ]
            })
        );
    }

    #[test]
    fn tool_calls_without_index_or_id_still_assemble() {
        let (_, end) = assemble(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"x1","function":{"name":"glob","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"read_file","arguments":"{\"path\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"x2","function":{"name":"list_directory","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
        ]);
        let calls = end.unwrap().tool_calls;
        let summary: Vec<(&str, &str, &str)> = calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("x1", "glob", "{}{\"path\""),
                ("x2", "list_directory", "{}"),
            ]
        );
        let (_, end) = assemble(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":3,"function":{"name":"glob","arguments":"{}"}}]}}]}"#,
            "[DONE]",
        ]);
        let end = end.unwrap();
        assert_eq!(end.reason, FinishReason::Other);
        assert_eq!(end.tool_calls[0].id, "call_3");
    }

    #[test]
    fn a_tool_call_without_a_name_is_a_stream_error() {
        let (_, end) = assemble(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{}"}}]}}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            end.unwrap_err().to_string(),
            "the model's stream broke off: tool call 0 has no function name"
        );
    }

    #[test]
    fn malformed_json_is_a_stream_error_quoting_the_chunk() {
        let (events, end) = assemble(&[
            r#"{"choices":[{"index":0,"delta":{"content":"a"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"#,
        ]);
        assert_eq!(events, vec![StreamEvent::Text("a".into())]);
        assert_eq!(
            end.unwrap_err().to_string(),
            "the model's stream broke off: chunk 2 is not a JSON chat completion chunk \
             (EOF while parsing a value at line 1 column 42): {\"choices\":[{\"index\":0,\"delta\":{\"content\":"
        );
    }

    #[test]
    fn a_stream_that_ends_without_finishing_is_a_stream_error() {
        let (_, end) = assemble(&[r#"{"choices":[{"index":0,"delta":{"content":"a"}}]}"#]);
        assert_eq!(
            end.unwrap_err().to_string(),
            "the model's stream broke off: the stream ended after 1 chunk(s) without a finish_reason or [DONE]"
        );
    }

    #[test]
    fn an_error_in_the_stream_is_reported() {
        let (_, end) = assemble(&[r#"{"error":{"message":"overloaded","type":"server_error"}}"#]);
        assert_eq!(
            end.unwrap_err().to_string(),
            "the model's stream broke off: the server reported an error: overloaded"
        );
        let mut assembler = StreamAssembler::new();
        let error = assembler
            .on_event(
                &SseEvent {
                    event: "error".into(),
                    data: r#"{"message":"quota"}"#.into(),
                },
                &mut |_| {},
            )
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the model's stream broke off: the server sent an error event: quota"
        );
    }

    #[test]
    fn other_choices_and_events_after_done_are_ignored() {
        let (events, end) = assemble(&[
            r#"{"choices":[{"index":1,"delta":{"content":"no"}},{"index":0,"delta":{"content":"yes"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
            "[DONE]",
            "not json at all",
        ]);
        assert_eq!(events, vec![StreamEvent::Text("yes".into())]);
        assert_eq!(end.unwrap().reason, FinishReason::Length);
    }

    #[test]
    fn the_request_body_has_the_chat_completions_shape() {
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![
                ChatMessage::System("sys".into()),
                ChatMessage::User("hi".into()),
                ChatMessage::Assistant {
                    content: None,
                    tool_calls: vec![ModelToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: "{\"path\":\"a\"}".into(),
                    }],
                },
                ChatMessage::Tool {
                    tool_call_id: "c1".into(),
                    content: "text".into(),
                },
                ChatMessage::Assistant {
                    content: Some("done".into()),
                    tool_calls: vec![],
                },
            ],
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "Reads a file".into(),
                parameters: json!({"type":"object","properties":{"path":{"type":"string"}}}),
            }],
        };
        let body: Value = serde_json::from_slice(&request_body(&request, false)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "stream": true,
                "messages": [
                    {"role":"system","content":"sys"},
                    {"role":"user","content":"hi"},
                    {"role":"assistant","content":null,"tool_calls":[
                        {"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}
                    ]},
                    {"role":"tool","tool_call_id":"c1","content":"text"},
                    {"role":"assistant","content":"done"},
                ],
                "tools": [{"type":"function","function":{
                    "name":"read_file","description":"Reads a file",
                    "parameters":{"type":"object","properties":{"path":{"type":"string"}}}
                }}]
            })
        );
        let bare = ChatRequest {
            model: "m".into(),
            messages: vec![ChatMessage::Assistant {
                content: None,
                tool_calls: vec![],
            }],
            tools: vec![],
        };
        let body: Value = serde_json::from_slice(&request_body(&bare, false)).unwrap();
        assert_eq!(body.get("tools"), None);
        assert_eq!(body.get("stream_options"), None);
        assert_eq!(body["messages"][0]["content"], "");
        let body: Value = serde_json::from_slice(&request_body(&bare, true)).unwrap();
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    }

    #[test]
    fn error_messages_come_from_the_json_body_or_its_text() {
        let cases: [(&[u8], &str); 6] = [
            (
                br#"{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}"#,
                "Incorrect API key",
            ),
            (br#"{"error":"rate limited"}"#, "rate limited"),
            (br#"{"message":"nope"}"#, "nope"),
            (br#"{"detail":"Not Found"}"#, "Not Found"),
            (b"  Bad Gateway\n", "Bad Gateway"),
            (b"", ""),
        ];
        for (body, message) in cases {
            assert_eq!(error_message(body), message);
        }
        let long = "x".repeat(500);
        assert_eq!(
            error_message(long.as_bytes()),
            format!("{}…", "x".repeat(200))
        );
    }

    /// A whole answer as SSE bytes: reasoning, text with escapes and a multi-byte
    /// character, two interleaved tool calls, a comment, CRLF line ends, the finish.
    const STREAM: &str = concat!(
        ": keep-alive\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\\u00e9 \\\"ok\\\" €\"}}]}\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"glob\",\"arguments\":\"{\\\"pat\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"tern\\\":\\\"*\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );

    /// The events and end of `STREAM` fed in pieces cut at `cuts`.
    fn through_parser(cuts: &[usize]) -> (Vec<StreamEvent>, Result<Finished, ModelError>) {
        let bytes = STREAM.as_bytes();
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.push(bytes.len());
        cuts.sort_unstable();
        let mut parser = crate::net::sse::SseParser::new();
        let mut assembler = StreamAssembler::new();
        let mut produced = Vec::new();
        let mut events = Vec::new();
        let mut start = 0;
        for cut in cuts {
            events.clear();
            parser.feed(&bytes[start..cut], &mut events).unwrap();
            for event in &events {
                if let Err(error) = assembler.on_event(event, &mut |e| produced.push(e)) {
                    return (produced, Err(error));
                }
            }
            start = cut;
        }
        (produced, assembler.finish())
    }

    #[test]
    fn a_whole_answer_split_anywhere_gives_the_same_events_and_end() {
        let (events, end) = through_parser(&[]);
        assert_eq!(
            events,
            vec![
                StreamEvent::Reasoning("hm".into()),
                StreamEvent::Text("café \"ok\" €".into()),
            ]
        );
        let end = end.unwrap();
        assert_eq!(end.reason, FinishReason::ToolCalls);
        assert_eq!(end.tool_calls.len(), 2);
        assert_eq!(end.tool_calls[0].arguments, "{\"pattern\":\"*\"}");
        fn property(cuts: Vec<usize>) -> bool {
            through_parser(&cuts) == through_parser(&[])
        }
        quickcheck::QuickCheck::new()
            .tests(2000)
            .quickcheck(property as fn(Vec<usize>) -> bool);
    }

    /// The events and end of `bytes` fed in pieces cut at `cuts`, whatever the bytes are.
    fn through_parser_bytes(
        bytes: &[u8],
        cuts: &[usize],
    ) -> (Vec<StreamEvent>, Result<Finished, ModelError>) {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.push(bytes.len());
        cuts.sort_unstable();
        let mut parser = crate::net::sse::SseParser::with_limit(512);
        let mut assembler = StreamAssembler::new();
        let mut produced = Vec::new();
        let mut events = Vec::new();
        let mut start = 0;
        for cut in cuts {
            events.clear();
            let parsed = parser.feed(&bytes[start..cut], &mut events);
            for event in &events {
                if let Err(error) = assembler.on_event(event, &mut |e| produced.push(e)) {
                    return (produced, Err(error));
                }
            }
            if let Err(error) = parsed {
                return (produced, Err(ModelError::Stream(error.to_string())));
            }
            start = cut;
        }
        (produced, assembler.finish())
    }

    /// Pieces of a real answer's lines, garbage and line ends.
    fn tokens() -> Vec<Vec<u8>> {
        let mut tokens: Vec<Vec<u8>> = STREAM
            .split_inclusive('\n')
            .map(|line| line.as_bytes().to_vec())
            .collect();
        for extra in [
            &b"data: {"[..],
            b"\"}]}",
            b"\r",
            b"\n",
            b"\xFF",
            b"data: [DONE]",
            b":",
        ] {
            tokens.push(extra.to_vec());
        }
        tokens
    }

    #[test]
    fn shuffled_and_broken_answers_never_panic_and_split_the_same() {
        fn property(picks: Vec<u8>, cuts: Vec<usize>) -> bool {
            let tokens = tokens();
            let bytes: Vec<u8> = picks
                .iter()
                .flat_map(|pick| tokens[usize::from(*pick) % tokens.len()].clone())
                .collect();
            through_parser_bytes(&bytes, &cuts) == through_parser_bytes(&bytes, &[])
        }
        quickcheck::QuickCheck::new()
            .tests(1000)
            .quickcheck(property as fn(Vec<u8>, Vec<usize>) -> bool);
    }
}
