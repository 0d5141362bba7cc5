//! What the agent and an OpenAI-compatible model say to each other, independent of HTTP.
//!
//! The backend builds a [`ChatRequest`] from the session's history and its tools; the client
//! streams it and hands back [`StreamEvent`]s as they arrive, then one [`Finished`] or one
//! [`ModelError`]. Tool calls arrive assembled (their `arguments` fragments joined across
//! chunks), so the backend never sees the stream's pieces.

use serde_json::Value;

/// One message of the conversation, in Chat Completions terms.
#[derive(Clone, Debug, PartialEq)]
pub enum ChatMessage {
    /// `role: "system"`.
    System(String),
    /// `role: "user"`.
    User(String),
    /// `role: "user"` with images: its parts in the prompt's order (only for a model that
    /// takes images, R-LLM-9).
    UserParts(Vec<UserPart>),
    /// `role: "assistant"`: its text (if any) and the tools it called (if any).
    Assistant {
        /// The text the model wrote.
        content: Option<String>,
        /// The tools it called, in order.
        tool_calls: Vec<ModelToolCall>,
    },
    /// `role: "tool"`: the result of one tool call, sent back to the model.
    Tool {
        /// The `id` of the [`ModelToolCall`] this answers.
        tool_call_id: String,
        /// What the tool produced, or why it failed or was refused.
        content: String,
    },
}

/// One part of a user message with images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserPart {
    /// Text.
    Text(String),
    /// An image, base64 `data` of type `mime_type` (`image/png`), sent as a data URL.
    Image {
        /// `image/png`, `image/jpeg`, ….
        mime_type: String,
        /// The image, base64.
        data: String,
    },
}

/// A tool call the model made, assembled from the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelToolCall {
    /// The model's id for the call (echoed in the [`ChatMessage::Tool`] answer).
    pub id: String,
    /// The function name (`read_file`, `write_file`, …).
    pub name: String,
    /// The arguments as the model wrote them: a JSON text, possibly malformed.
    pub arguments: String,
}

/// A function offered to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The function name (our tools' are fixed; MCP tools' are made per session).
    pub name: std::borrow::Cow<'static, str>,
    /// What it does, for the model.
    pub description: std::borrow::Cow<'static, str>,
    /// Its arguments as a JSON Schema object.
    pub parameters: Value,
}

/// One streamed completion request.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatRequest {
    /// The model name as the provider knows it (no `provider/` prefix).
    pub model: String,
    /// The conversation so far, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// The functions the model may call.
    pub tools: Vec<ToolSpec>,
}

/// Something the model produced, as soon as it arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// A piece of the answer (`delta.content`).
    Text(String),
    /// A piece of reasoning (`delta.reasoning_content`, where the server sends it).
    Reasoning(String),
}

/// Why the model stopped (`finish_reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinishReason {
    /// `stop`: the answer is complete.
    Stop,
    /// `length`: the token limit was reached.
    Length,
    /// `content_filter`: the provider refused.
    ContentFilter,
    /// `tool_calls` (or `function_call`): the model wants its tools run.
    ToolCalls,
    /// Missing or any other value.
    Other,
}

/// The end of a successful stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// Why the model stopped.
    pub reason: FinishReason,
    /// The tool calls of this answer, assembled, in index order (empty if none).
    pub tool_calls: Vec<ModelToolCall>,
    /// The server's token counts for this request (`stream_options.include_usage`), when
    /// it sent them.
    pub usage: Option<TokenUsage>,
}

/// A request's token counts as the server reported them (its `usage` object).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenUsage {
    /// `prompt_tokens`: the request's messages and tools.
    pub prompt_tokens: u64,
    /// `completion_tokens`: the answer (reasoning included).
    pub completion_tokens: u64,
    /// `completion_tokens_details.reasoning_tokens`, when reported.
    pub reasoning_tokens: Option<u64>,
    /// `prompt_tokens_details.cached_tokens`, when reported.
    pub cached_tokens: Option<u64>,
}

impl TokenUsage {
    /// The tokens in the model's context after this answer: its prompt and its answer.
    pub fn context_tokens(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }
}

/// Why a request failed. Its `Display` is the text the user sees; it never holds the API key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// No API key is configured: `Authentication required: set <VAR> (LLM_PROVIDER=<p>)`.
    MissingKey {
        /// The variable to set, e.g. `OPENAI_API_KEY`.
        variable: String,
        /// The provider, lower-cased.
        provider: String,
    },
    /// HTTP 401 or 403, with the provider's message.
    Unauthorized {
        /// The HTTP status.
        status: u16,
        /// The provider's error message (from its JSON body when there is one).
        message: String,
    },
    /// Any other HTTP error status after the retries (429 and 5xx are retried first).
    Status {
        /// The HTTP status.
        status: u16,
        /// The provider's error message.
        message: String,
    },
    /// The server could not be reached (refused, DNS, TLS, reset before the answer).
    Connect(String),
    /// A timeout ran out (R-LLM-6): which one, its seconds and where the request was.
    Timeout(String),
    /// The stream broke off or carried something that is not a Chat Completions chunk.
    Stream(String),
    /// The configuration cannot make a request (no endpoint for the provider, a base URL
    /// that does not parse, no model). Added by the model client.
    Config(String),
}

impl ModelError {
    /// The JSON-RPC code a failed prompt is answered with: `-32000` for authentication,
    /// `-32603` for everything else.
    pub fn code(&self) -> i32 {
        match self {
            Self::MissingKey { .. } | Self::Unauthorized { .. } => -32000,
            _ => -32603,
        }
    }
}

impl core::fmt::Display for ModelError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::MissingKey { variable, provider } => write!(
                f,
                "Authentication required: set {variable} (LLM_PROVIDER={provider})"
            ),
            Self::Unauthorized { status, message } => {
                write!(f, "Authentication failed: HTTP {status}: {message}")
            }
            Self::Status { status, message } => {
                write!(f, "the model server answered HTTP {status}: {message}")
            }
            Self::Connect(why) => write!(f, "cannot reach the model server: {why}"),
            Self::Timeout(why) => write!(f, "the model server timed out: {why}"),
            Self::Stream(why) => write!(f, "the model's stream broke off: {why}"),
            Self::Config(why) => write!(f, "model configuration: {why}"),
        }
    }
}

impl std::error::Error for ModelError {}
