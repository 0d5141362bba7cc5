//! The model side of `--backend llm`: an OpenAI-compatible Chat Completions client. Its
//! conversation vocabulary (messages, tool specs, streamed events, errors) is
//! `crate::model::chat`, shared with the agent.
//!
//! - [`config`]: which server, key and model, read from the environment as Agentao does.
//! - [`openai`]: the Chat Completions wire format: the request body, and the streamed chunks
//!   assembled into text, reasoning and tool calls.
//! - [`images`]: whether the model takes images (`LLM_IMAGES`, `<PROVIDER>_IMAGES`).
//! - [`retry`]: which failures are tried again, after how long, through which sleeper.
//! - [`http`]: one streamed request over `crate::net`'s HTTP client, its body through the above;
//!   `HttpModel`, the `crate::model::ModelClient` the binary plugs in.
//! - [`window`]: the model's context window (`LLM_CONTEXT_WINDOW`, known defaults).
//! - [`backend`]: the llm backend: the tool loop, its tools and its context, sans-IO.
//! - [`credentials`]: the stored login (its file, mode 0600) and how it meets the environment.
//! - [`login`]: `acp-cli --login` / `--logout`, the terminal auth method's command.

pub mod backend;
pub mod config;
pub mod credentials;
pub mod http;
pub mod images;
pub mod login;
pub mod openai;
pub mod retry;
pub mod window;
