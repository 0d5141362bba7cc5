//! Typed ACP v1 messages, owned (under `alloc`), plus Agentao's extensions.
//!
//! Every stable v1 method's params and result, in both directions, with serde impls that match
//! the official JSON Schema (generated from the official schema crate 1.20.0 by
//! `tests/schema-gen` for acp-core's `schema_*` tests) and the stable surface of that crate,
//! which `tests/oracle` holds them to (official values through ours and back, unchanged).
//!
//! - **Decoding by method**: [`ClientRequest::decode`], [`AgentRequest::decode`],
//!   [`ClientNotification::decode`], [`AgentNotification::decode`], and for results
//!   [`AgentResponse::decode`] / [`ClientResponse::decode`] given the pending request's method.
//!   The method picks the type; the params go straight into it. No untagged guessing.
//! - **Tagged unions without buffering**: [`SessionUpdate`], [`ContentBlock`] and the other
//!   internally tagged unions read their tag first and stream the rest into the variant; only an
//!   object whose tag is not its first key is buffered once.
//! - **Forward compatible**: unknown `sessionUpdate`, content `type` and tool `kind` values are
//!   kept (`Unknown`) and re-encode unchanged.
//! - **Lenient where the schema says so**: optional fields marked
//!   `x-deserialize-default-on-error` fall back to their default when malformed, arrays marked
//!   `x-deserialize-skip-invalid-items` drop malformed items. Required fields stay strict, as do
//!   `mcpServers` and `prompt` (an error is better than silently dropping what the user sent).
//!   Unknown fields are ignored; `_meta` is kept.
//! - **Errors with paths**: [`DecodeError`] names the field, e.g.
//!   `session/new.mcpServers[2].env[0].value must be a string`.

pub mod agentao;
mod capabilities;
mod config;
mod content;
mod elicitation;
mod error;
mod fs;
mod initialize;
pub(crate) mod lenient;
mod mcp;
mod messages;
pub mod methods;
mod path;
mod permission;
mod plan;
mod prompt;
mod rpc;
mod session;
pub(crate) mod tagged;
mod terminal;
mod tool_call;
mod update;

pub use agentao::{AskUserRequest, AskUserResponse, SetModelRequest, SetModelResponse};
pub use capabilities::*;
pub use config::*;
pub use content::*;
pub use elicitation::*;
pub use error::{DecodeError, DecodeErrorKind};
pub use fs::*;
pub use initialize::{
    AuthMethod, AuthMethodAgent, AuthMethodTerminal, AuthenticateRequest, AuthenticateResponse,
    Implementation, InitializeRequest, InitializeResponse, LogoutRequest, LogoutResponse,
    ProtocolVersion,
};
pub use lenient::Meta;
pub use mcp::*;
pub use messages::*;
pub use methods::{Direction, Method};
pub use permission::*;
pub use plan::*;
pub use prompt::*;
pub use rpc::*;
pub use session::*;
pub use terminal::*;
pub use tool_call::*;
pub use update::*;
