//! The model side of `--backend llm`: an OpenAI-compatible Chat Completions client.
//!
//! - [`chat`]: the conversation vocabulary shared by the HTTP client and the backend
//!   (messages, tool specs, streamed events, errors). No I/O.
//! - [`config`]: which server, key and model, read from the environment as Agentao does.
//! - [`sse`]: the Server-Sent Events parser, fed the body in any pieces.
//! - [`openai`]: the Chat Completions wire format: the request body, and the streamed chunks
//!   assembled into text, reasoning and tool calls.
//!
//! The backend that turns a model's stream into ACP updates and tool calls builds on it.

pub mod chat;
pub mod config;
pub mod openai;
pub mod sse;
