//! The three decode paths of `acp-cli bench`, line by line: the envelope scan alone, the
//! borrowed views and the owned types, each decoding a message by its method (a response by the
//! method of the request it answers, from a pending table filled as requests go by).
//!
//! The benches include this file too (`benches/common/paths.rs`), so the CLI and the criterion
//! suite measure exactly the same work. It needs nothing but `acp-core` and `std`.

use std::collections::HashMap;
use std::hint::black_box;

use acp_core::schema::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest,
    ClientResponse, Direction, Method,
};
use acp_core::view::{
    AgentNotificationView, AgentRequestView, AgentResponseView, ClientNotificationView,
    ClientRequestView, ClientResponseView, ContentBlockView, SessionUpdateView,
    ToolCallContentView, ToolCallContents,
};
use acp_core::wire::envelope::{self, Message, Outcome};
use acp_core::wire::{Id, JsonStr, RawValue};

/// The requests seen and not yet answered, by id: what a response's result is decoded as.
/// Keys are owned, so lines need not outlive the framer's buffer; only requests and responses
/// (a few per turn) pay for that.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    methods: HashMap<String, Method>,
}

impl Pending {
    /// An empty table.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// `i<digits>` or `s<text as sent>`: integers and strings never collide.
    fn key(id: &Id<'_>) -> String {
        match id {
            Id::Int(digits) => format!("i{digits}"),
            Id::Str(text) => format!("s{}", text.raw()),
            Id::Null => String::from("n"),
        }
    }

    fn request(&mut self, id: &Id<'_>, method: Method) {
        self.methods.insert(Self::key(id), method);
    }

    fn answer(&mut self, id: &Id<'_>) -> Option<Method> {
        self.methods.remove(&Self::key(id))
    }
}

/// Why a line did not decode on a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Skip {
    /// A method this path has no type for (or an escaped method name).
    UnknownMethod,
    /// A response to no request seen before.
    Unmatched,
    /// The params or result did not fit the type.
    Invalid,
}

/// The method of a request or notification, when it is one of the table's.
fn method_of(name: JsonStr<'_>) -> Result<Method, Skip> {
    name.as_plain()
        .and_then(Method::from_name)
        .ok_or(Skip::UnknownMethod)
}

fn params_text(params: Option<RawValue<'_>>) -> Option<&str> {
    params.map(|p| p.get())
}

/// A number taken from a decoded message, so the work stays observable.
fn size(raw: Option<RawValue<'_>>) -> u64 {
    raw.map_or(0, |raw| raw.get().len() as u64)
}

/// The owned decode of a whole line: a text chunk in the form SDKs write it in one pass
/// ([`AgentNotification::decode_text_chunk_line`], which checks the line as the envelope scan
/// does), any other line scanned ([`envelope::scan_bytes`]) and then decoded by [`owned`].
/// `None` when the line is not a JSON-RPC message; the same fingerprint as [`owned`] otherwise.
pub(crate) fn owned_line(line: &[u8], pending: &mut Pending) -> Option<Result<u64, Skip>> {
    if let Some(notification) = AgentNotification::decode_text_chunk_line(line) {
        black_box(notification);
        let params = line.len() - 1 - AgentNotification::TEXT_CHUNK_LINE_PARAMS_AT;
        return Some(Ok(params as u64));
    }
    let message = envelope::scan_bytes(line).ok()?;
    Some(owned(&message, pending))
}

/// Decodes one message into the owned types; returns a fingerprint for a checksum.
pub(crate) fn owned(message: &Message<'_>, pending: &mut Pending) -> Result<u64, Skip> {
    match message {
        Message::Request(request) => {
            let method = method_of(request.method)?;
            let name = method.name();
            let ok = match method.direction() {
                Direction::ClientToAgent => {
                    black_box(ClientRequest::decode_raw(name, request.params)).is_ok()
                }
                Direction::AgentToClient => {
                    black_box(AgentRequest::decode_raw(name, request.params)).is_ok()
                }
                Direction::Both => false,
            };
            if !ok {
                return Err(Skip::Invalid);
            }
            pending.request(&request.id, method);
            Ok(size(request.params))
        }
        Message::Notification(notification) => {
            let method = method_of(notification.method)?;
            let name = method.name();
            let text = params_text(notification.params);
            let ok = match method.direction() {
                Direction::ClientToAgent => {
                    black_box(ClientNotification::decode(name, text)).is_ok()
                }
                Direction::AgentToClient | Direction::Both => {
                    black_box(AgentNotification::decode_raw(name, notification.params)).is_ok()
                }
            };
            if ok {
                Ok(size(notification.params))
            } else {
                Err(Skip::Invalid)
            }
        }
        Message::Response(response) => {
            let method = pending.answer(&response.id).ok_or(Skip::Unmatched)?;
            let Outcome::Result(result) = response.outcome else {
                // Error responses carry no typed result.
                return Ok(1);
            };
            let ok = match method.direction() {
                Direction::ClientToAgent => {
                    black_box(AgentResponse::decode(method.name(), result.get())).is_ok()
                }
                _ => black_box(ClientResponse::decode(method.name(), result.get())).is_ok(),
            };
            if ok {
                Ok(size(Some(result)))
            } else {
                Err(Skip::Invalid)
            }
        }
    }
}

/// Decodes one message into the borrowed views and reads the text it carries (chunk text, tool
/// call content); returns a fingerprint for a checksum.
pub(crate) fn borrowed(message: &Message<'_>, pending: &mut Pending) -> Result<u64, Skip> {
    match message {
        Message::Request(request) => {
            let method = method_of(request.method)?;
            let name = method.name();
            let sum = match method.direction() {
                Direction::ClientToAgent => match ClientRequestView::decode(name, request.params) {
                    Ok(ClientRequestView::Prompt(prompt)) => {
                        prompt.prompt.iter().map(|block| block_size(&block)).sum()
                    }
                    Ok(view) => {
                        black_box(view);
                        1
                    }
                    Err(_) => return Err(Skip::Invalid),
                },
                Direction::AgentToClient => match &AgentRequestView::decode(name, request.params) {
                    Ok(AgentRequestView::RequestPermission(permission)) => {
                        permission.options.len() as u64
                            + permission.tool_call.content.map_or(0, contents_size)
                    }
                    Ok(_) => 1,
                    Err(_) => return Err(Skip::Invalid),
                },
                Direction::Both => return Err(Skip::UnknownMethod),
            };
            pending.request(&request.id, method);
            Ok(sum)
        }
        Message::Notification(notification) => {
            let method = method_of(notification.method)?;
            let name = method.name();
            match method.direction() {
                Direction::ClientToAgent => {
                    match ClientNotificationView::decode(name, notification.params) {
                        Ok(ClientNotificationView::Cancel(cancel)) => {
                            Ok(cancel.session_id.raw().len() as u64)
                        }
                        Ok(_) => Ok(1),
                        Err(_) => Err(Skip::Invalid),
                    }
                }
                // By reference: the view is read where it was built, not moved out first.
                _ => match &AgentNotificationView::decode(name, notification.params) {
                    Ok(AgentNotificationView::SessionUpdate(update)) => {
                        Ok(update.session_id.raw().len() as u64 + update_size(&update.update))
                    }
                    Ok(_) => Ok(1),
                    Err(_) => Err(Skip::Invalid),
                },
            }
        }
        Message::Response(response) => {
            let method = pending.answer(&response.id).ok_or(Skip::Unmatched)?;
            let Outcome::Result(result) = response.outcome else {
                return Ok(1);
            };
            let ok = match method.direction() {
                Direction::ClientToAgent => {
                    black_box(AgentResponseView::decode(method.name(), result)).is_ok()
                }
                _ => black_box(ClientResponseView::decode(method.name(), result)).is_ok(),
            };
            if ok {
                Ok(size(Some(result)))
            } else {
                Err(Skip::Invalid)
            }
        }
    }
}

/// Envelope only: the line was already scanned; count what it holds.
pub(crate) fn envelope(message: &Message<'_>) -> u64 {
    match message {
        Message::Request(request) => size(request.params) + request.method.raw().len() as u64,
        Message::Notification(n) => size(n.params) + n.method.raw().len() as u64,
        Message::Response(response) => match response.outcome {
            Outcome::Result(result) => size(Some(result)),
            Outcome::Error(error) => error.message.raw().len() as u64,
            Outcome::Malformed(_) => 0,
        },
    }
}

fn block_size(block: &ContentBlockView<'_>) -> u64 {
    match block {
        ContentBlockView::Text(text) => text.text.raw().len() as u64,
        ContentBlockView::ResourceLink(link) => link.uri.raw().len() as u64,
        other => other.type_name().len() as u64,
    }
}

fn contents_size(contents: ToolCallContents<'_>) -> u64 {
    contents
        .iter()
        .map(|item| match item {
            ToolCallContentView::Content { content, .. } => block_size(&content),
            ToolCallContentView::Diff { new_text, .. } => new_text.raw().len() as u64,
            ToolCallContentView::Terminal { terminal_id, .. } => terminal_id.raw().len() as u64,
            _ => 1,
        })
        .sum()
}

fn update_size(update: &SessionUpdateView<'_>) -> u64 {
    match update {
        SessionUpdateView::AgentMessageChunk(chunk)
        | SessionUpdateView::AgentThoughtChunk(chunk)
        | SessionUpdateView::UserMessageChunk(chunk) => block_size(&chunk.content),
        SessionUpdateView::ToolCall(call) => {
            call.title.raw().len() as u64
                + contents_size(call.content)
                + call.locations.iter().count() as u64
                + size(call.raw_input)
        }
        SessionUpdateView::ToolCallUpdate(update) => {
            update.tool_call_id.raw().len() as u64 + update.content.map_or(0, contents_size)
        }
        SessionUpdateView::Plan(plan) => plan.entries().count() as u64,
        other => other.kind().len() as u64,
    }
}
