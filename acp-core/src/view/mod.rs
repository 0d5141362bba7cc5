//! Borrowed, allocation-free views of the ACP messages a constrained agent or client needs.
//!
//! A view is a `Copy` struct of [`JsonStr`](crate::wire::JsonStr)s, small numbers and enums, and [`RawValue`]s for
//! what it does not look into, all borrowed from the line. Nothing allocates, so this module
//! builds without `alloc`. Views read the spans the envelope scanner already validated, through
//! the accessors of [`crate::wire::json`].
//!
//! Covered: `initialize` (params and result), `session/new` (params with the MCP servers, and
//! the new session's id), `session/prompt`
//! (params with text, resource link and the other blocks; result with the stop reason),
//! `session/cancel`, `session/update` with message, thought and session message chunks (with
//! their `messageId`), tool calls, tool call updates, plans (`plan`, and `plan_update` /
//! `plan_removed` by id), `session_info_update`, `usage_update` and `notice` (other kinds pass
//! through raw, unknown kinds as [`SessionUpdateView::Unknown`]), and `session/request_permission` (params, and the result in
//! both its nested and its flat shape). Every other method is [`ViewErrorKind::NoView`]; decode
//! those with the owned types of `crate::schema` (under `alloc`).
//!
//! # Rules
//!
//! Views decide like the owned types: **by method** (the method picks the view, see
//! [`ClientRequestView::decode`] and its siblings), **strict** on required fields and on the
//! lists the owned types keep strict (prompt blocks, permission options), **lenient** where the
//! schema marks a field default-on-error (a malformed optional field reads as absent) or a list
//! skip-invalid-items (the list's iterator skips malformed items), unknown members ignored.
//! A known member sent twice is refused, as serde's derived decoders refuse it. Errors carry the
//! owned types' wording and path: `session/prompt.prompt[0].text must be a string`.
//!
//! Deliberately shallow: annotations, `_meta`, `rawInput`/`rawOutput`, a new session's modes and
//! the capability objects are handed over raw (capabilities with accessors that apply their
//! defaults).
//!
//! Strings stay escaped as on the wire: most carry no escapes and [`JsonStr::as_plain`](crate::wire::JsonStr::as_plain) gives
//! them without copying; the others decode with [`JsonStr::unescape_into`](crate::wire::JsonStr::unescape_into) into a caller's
//! buffer, or piece by piece with [`JsonStr::fragments`](crate::wire::JsonStr::fragments).
//!
//! ```
//! use acp_core::view::{AgentNotificationView, ContentBlockView, SessionUpdateView};
//! use acp_core::wire::envelope::{self, Message};
//!
//! let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}}"#;
//! let Ok(Message::Notification(n)) = envelope::scan(line) else { panic!() };
//! let method = n.method.as_plain().unwrap();
//! let Ok(AgentNotificationView::SessionUpdate(update)) =
//!     AgentNotificationView::decode(method, n.params) else { panic!() };
//! assert_eq!(update.session_id.as_plain(), Some("s1"));
//! let SessionUpdateView::AgentMessageChunk(chunk) = update.update else { panic!() };
//! assert_eq!(chunk.content.as_text().and_then(|t| t.as_plain()), Some("Hi"));
//! # let _ = ContentBlockView::Unknown;
//! ```

mod content;
mod enums;
mod error;
mod initialize;
mod mcp;
#[cfg(feature = "alloc")]
mod owned;
mod permission;
mod progress;
mod read;
mod session;
mod update;

pub use content::{
    ContentBlockView, EmbeddedResourceView, MediaView, ResourceContents, ResourceLinkView, TextView,
};
pub use enums::{
    KnownToolKind, PermissionOptionKindView, PlanEntryPriorityView, PlanEntryStatusView,
    StopReasonView, ToolCallStatusView, ToolKindView,
};
pub use error::{Detail, FieldPath, MAX_PATH_SEGMENTS, Part, Segment, ViewError, ViewErrorKind};
pub use initialize::{
    AgentCapabilitiesView, AuthMethodInfo, AuthMethodView, AuthMethods, ClientCapabilitiesView,
    ImplementationView, InitializeRequestView, InitializeResponseView,
};
pub use mcp::{McpServerView, McpServers, McpTransport, NewSessionRequestView};
pub use permission::{
    PermissionOptionView, PermissionOptions, PermissionOutcomeView, RequestPermissionResponseView,
    RequestPermissionView,
};
pub use progress::{
    CostView, NoticeView, PlanBodyView, PlanEntryView, PlanRemovedView, PlanUpdateView, PlanView,
    SessionInfoUpdateView, UsageUpdateView,
};
pub use session::{
    CancelView, NewSessionResponseView, PromptBlocks, PromptRequestView, PromptResponseView,
};
pub use update::{
    ContentChunkView, LocationView, Locations, SessionNotificationView, SessionUpdateView,
    ToolCallContentView, ToolCallContents, ToolCallUpdateView, ToolCallView,
};

use crate::wire::RawValue;
use crate::wire::json::ValueKind;

use error::Fault;
use read::{EMPTY_OBJECT, object};

/// Params as the owned types read them: absent or `null` is `{}`, anything but an object is
/// refused.
fn params_object(params: Option<RawValue<'_>>) -> Result<RawValue<'_>, Fault<'_>> {
    match params {
        None => Ok(EMPTY_OBJECT),
        Some(p) if p.is_null() => Ok(EMPTY_OBJECT),
        Some(p) if p.kind() == ValueKind::Object => Ok(p),
        Some(_) => Err(Fault::here(error::Detail::MustBe("a JSON object"))),
    }
}

/// Decodes the params of `method` with `read`, wrapping faults with the method.
fn params<'a, T>(
    method: &'a str,
    params: Option<RawValue<'a>>,
    read: impl FnOnce(RawValue<'a>) -> Result<T, Fault<'a>>,
) -> Result<T, ViewError<'a>> {
    params_object(params)
        .and_then(read)
        .map_err(|fault| ViewError::invalid(method, Part::Params, fault))
}

/// Decodes the result of a request to `method` (an object) with `read`.
fn result<'a, T>(
    method: &'a str,
    result: RawValue<'a>,
    read: impl FnOnce(RawValue<'a>) -> Result<T, Fault<'a>>,
) -> Result<T, ViewError<'a>> {
    object(result)
        .and_then(read)
        .map_err(|fault| ViewError::invalid(method, Part::Result, fault))
}

/// A request the agent handles (client → agent), by method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientRequestView<'a> {
    /// `initialize`.
    Initialize(InitializeRequestView<'a>),
    /// `session/new`.
    NewSession(NewSessionRequestView<'a>),
    /// `session/prompt`.
    Prompt(PromptRequestView<'a>),
    /// `session/cancel` sent as a request (Agentao accepts both forms).
    Cancel(CancelView<'a>),
}

impl<'a> ClientRequestView<'a> {
    /// Decodes the params of a client → agent request named `method`, with the value rules the
    /// owned `ClientRequest::decode` applies (a non-empty `sessionId`, a non-empty prompt, an
    /// absolute `cwd`, MCP servers with names and commands or URLs).
    pub fn decode(method: &'a str, raw: Option<RawValue<'a>>) -> Result<Self, ViewError<'a>> {
        match method {
            "session/prompt" => params(method, raw, |p| {
                let prompt = PromptRequestView::read(p)?;
                prompt.check()?;
                Ok(Self::Prompt(prompt))
            }),
            "initialize" => params(method, raw, InitializeRequestView::read).map(Self::Initialize),
            "session/new" => params(method, raw, |p| {
                let new = NewSessionRequestView::read(p)?;
                new.check()?;
                Ok(Self::NewSession(new))
            }),
            "session/cancel" => params(method, raw, |p| {
                let cancel = CancelView::read(p)?;
                session::non_empty_session(cancel.session_id)?;
                Ok(Self::Cancel(cancel))
            }),
            _ => Err(ViewError::no_view(method, Part::Params)),
        }
    }
}

/// A request the client handles (agent → client), by method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentRequestView<'a> {
    /// `session/request_permission`.
    RequestPermission(RequestPermissionView<'a>),
}

impl<'a> AgentRequestView<'a> {
    /// Decodes the params of an agent → client request named `method`.
    pub fn decode(method: &'a str, raw: Option<RawValue<'a>>) -> Result<Self, ViewError<'a>> {
        match method {
            "session/request_permission" => {
                params(method, raw, RequestPermissionView::read).map(Self::RequestPermission)
            }
            _ => Err(ViewError::no_view(method, Part::Params)),
        }
    }
}

/// A notification from the client, by method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientNotificationView<'a> {
    /// `session/cancel`.
    Cancel(CancelView<'a>),
}

impl<'a> ClientNotificationView<'a> {
    /// Decodes a client → agent notification named `method`.
    pub fn decode(method: &'a str, raw: Option<RawValue<'a>>) -> Result<Self, ViewError<'a>> {
        match method {
            "session/cancel" => params(method, raw, CancelView::read).map(Self::Cancel),
            _ => Err(ViewError::no_view(method, Part::Params)),
        }
    }
}

/// A notification from the agent, by method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentNotificationView<'a> {
    /// `session/update`.
    SessionUpdate(SessionNotificationView<'a>),
}

impl<'a> AgentNotificationView<'a> {
    /// Decodes an agent → client notification named `method`.
    pub fn decode(method: &'a str, raw: Option<RawValue<'a>>) -> Result<Self, ViewError<'a>> {
        match method {
            "session/update" => {
                // Built in the returned value: the view is a few hundred bytes and this is
                // most of the traffic.
                let mut decoded = Ok(Self::SessionUpdate(SessionNotificationView::EMPTY));
                if let Ok(Self::SessionUpdate(view)) = &mut decoded
                    && let Err(fault) = params_object(raw).and_then(|p| view.read_into(p))
                {
                    decoded = Err(ViewError::invalid(method, Part::Params, fault));
                }
                decoded
            }
            _ => Err(ViewError::no_view(method, Part::Params)),
        }
    }
}

/// A result the agent sends, by the method of the request it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentResponseView<'a> {
    /// `initialize`.
    Initialize(InitializeResponseView<'a>),
    /// `session/new`.
    NewSession(NewSessionResponseView<'a>),
    /// `session/prompt`.
    Prompt(PromptResponseView<'a>),
}

impl<'a> AgentResponseView<'a> {
    /// Decodes the `result` of the client's request to `method`.
    pub fn decode(method: &'a str, raw: RawValue<'a>) -> Result<Self, ViewError<'a>> {
        match method {
            "session/prompt" => result(method, raw, PromptResponseView::read).map(Self::Prompt),
            "session/new" => {
                result(method, raw, NewSessionResponseView::read).map(Self::NewSession)
            }
            "initialize" => result(method, raw, InitializeResponseView::read).map(Self::Initialize),
            _ => Err(ViewError::no_view(method, Part::Result)),
        }
    }
}

/// A result the client sends, by the method of the request it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientResponseView<'a> {
    /// `session/request_permission`.
    RequestPermission(RequestPermissionResponseView<'a>),
}

impl<'a> ClientResponseView<'a> {
    /// Decodes the `result` of the agent's request to `method`.
    pub fn decode(method: &'a str, raw: RawValue<'a>) -> Result<Self, ViewError<'a>> {
        match method {
            "session/request_permission" => {
                result(method, raw, RequestPermissionResponseView::read)
                    .map(Self::RequestPermission)
            }
            _ => Err(ViewError::no_view(method, Part::Result)),
        }
    }
}
