//! The model side of `--backend llm`: an OpenAI-compatible Chat Completions client.
//!
//! - [`chat`]: the conversation vocabulary shared by the HTTP client and the backend
//!   (messages, tool specs, streamed events, errors). No I/O.
//!
//! The HTTP client (configuration from the environment, HTTP/1.1 + TLS, SSE, retries) and the
//! backend that turns a model's stream into ACP updates and tool calls build on it.
//!
//! - [`backend`]: the llm backend: the tool loop, its tools and its context, sans-IO.

pub mod backend;
pub mod chat;
