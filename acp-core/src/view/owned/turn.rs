//! The fast path for the big messages of a prompt turn besides its updates: `session/prompt`
//! (the user's blocks, often a pasted file) and `session/request_permission` (a tool call with
//! its whole diff), and the small results that answer them.
//!
//! Same contract as the `session/update` path: the value serde gives, or `None` to fall back.
//! Params that fail Agentao's value rules (an empty `sessionId` or prompt) fall back too, so
//! the serde path words the error.

use alloc::vec::Vec;

use crate::schema::lenient::LeafKind;
use crate::schema::methods::{SESSION_PROMPT, SESSION_REQUEST_PERMISSION};
use crate::schema::{
    AgentRequest, AgentResponse, ClientRequest, ClientResponse, DecodeError, PermissionOption,
    PermissionOptionKind, PromptRequest, PromptResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome, StopReason,
};
use crate::wire::RawValue;
use crate::wire::json::ValueKind;

use super::super::content::ContentBlockView;
use super::super::permission::{
    PermissionOutcomeView, RequestPermissionResponseView, RequestPermissionView,
};
use super::super::read::{lenient_object, span, walk_array};
use super::super::session::{PromptRequestView, PromptResponseView};
use super::{block, meta, numbers_fit, owned, tag_first, tool_call_update};

impl ClientRequest {
    /// [`ClientRequest::decode`] from params the envelope scanner has validated (a
    /// [`RawValue`]), with the same result, faster for `session/prompt`.
    pub fn decode_raw(method: &str, params: Option<RawValue<'_>>) -> Result<Self, DecodeError> {
        if method == SESSION_PROMPT
            && let Some(prompt) = params.and_then(prompt_request)
        {
            return Ok(Self::Prompt(prompt));
        }
        Self::decode(method, params.map(|p| p.get()))
    }
}

impl AgentRequest {
    /// [`AgentRequest::decode`] from params the envelope scanner has validated, with the same
    /// result, faster for `session/request_permission`.
    pub fn decode_raw(method: &str, params: Option<RawValue<'_>>) -> Result<Self, DecodeError> {
        if method == SESSION_REQUEST_PERMISSION
            && let Some(request) = params.and_then(permission_request)
        {
            return Ok(Self::RequestPermission(request));
        }
        Self::decode(method, params.map(|p| p.get()))
    }
}

impl AgentResponse {
    /// [`AgentResponse::decode`] from a result the envelope scanner has validated, with the
    /// same result, faster for `session/prompt`.
    pub fn decode_raw(method: &str, result: RawValue<'_>) -> Result<Self, DecodeError> {
        if method == SESSION_PROMPT
            && let Some(response) = prompt_response(result)
        {
            return Ok(Self::Prompt(response));
        }
        Self::decode(method, result.get())
    }
}

impl ClientResponse {
    /// [`ClientResponse::decode`] from a result the envelope scanner has validated, with the
    /// same result, faster for `session/request_permission`.
    pub fn decode_raw(method: &str, result: RawValue<'_>) -> Result<Self, DecodeError> {
        if method == SESSION_REQUEST_PERMISSION
            && let Some(response) = permission_response(result)
        {
            return Ok(Self::RequestPermission(response));
        }
        Self::decode(method, result.get())
    }
}

/// An object serde reads the way the views do (see [`numbers_fit`]); anything else (absent or
/// `null` params among them) is left to serde.
fn object(value: RawValue<'_>) -> Option<RawValue<'_>> {
    (value.kind() == ValueKind::Object && numbers_fit(value.get())).then_some(value)
}

fn prompt_request(params: RawValue<'_>) -> Option<PromptRequest> {
    let view = PromptRequestView::read(object(params)?).ok()?;
    if view.session_id.raw().is_empty() || view.prompt.is_empty() {
        return None;
    }
    // Every block decoded when the view was made; each is walked once more, in place.
    let array = view.prompt.raw();
    let text = array.get();
    let mut blocks = Vec::with_capacity(view.prompt.len());
    let mut complete = true;
    let walked = walk_array(text, 0, |_, start| {
        let (view, end) = ContentBlockView::read_at(text, start)?;
        match block(view, span(text, start, end)) {
            Some(block) => blocks.push(block),
            None => complete = false,
        }
        Ok(end)
    });
    if walked.is_err() || !complete {
        return None;
    }
    Some(PromptRequest {
        session_id: owned(view.session_id),
        prompt: blocks,
        meta: meta(view.meta)?,
    })
}

fn permission_request(params: RawValue<'_>) -> Option<RequestPermissionRequest> {
    let view = RequestPermissionView::read(object(params)?).ok()?;
    let options = view
        .options
        .iter()
        .map(|option| {
            Some(PermissionOption {
                option_id: owned(option.option_id),
                name: owned(option.name),
                kind: <PermissionOptionKind as LeafKind>::from_str(option.kind.as_str())?,
                meta: meta(option.meta)?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    // The view checked every option; one it skipped here would change the list.
    if options.len() != view.options.len() {
        return None;
    }
    Some(RequestPermissionRequest {
        session_id: owned(view.session_id),
        tool_call: tool_call_update(view.tool_call)?,
        options,
        meta: meta(view.meta)?,
    })
}

fn prompt_response(result: RawValue<'_>) -> Option<PromptResponse> {
    let view = PromptResponseView::read(object(result)?).ok()?;
    Some(PromptResponse {
        stop_reason: <StopReason as LeafKind>::from_str(view.stop_reason.as_str())?,
        meta: meta(view.meta)?,
    })
}

fn permission_response(result: RawValue<'_>) -> Option<RequestPermissionResponse> {
    let view = RequestPermissionResponseView::read(object(result)?).ok()?;
    // The nested shape is read as serde streams it only when its tag comes first.
    let nested = result
        .get_field("outcome")
        .filter(|outcome| outcome.kind() == ValueKind::Object);
    if nested.is_some_and(|outcome| !tag_first(outcome, "outcome")) {
        return None;
    }
    let outcome = match view.outcome {
        PermissionOutcomeView::Cancelled => RequestPermissionOutcome::Cancelled,
        PermissionOutcomeView::Selected { option_id } => {
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome {
                option_id: owned(option_id),
                // The flat shape has no outcome object, so no `_meta` of its own.
                meta: match nested {
                    Some(outcome) => meta(lenient_object(outcome.get_field("_meta")))?,
                    None => None,
                },
            })
        }
    };
    Some(RequestPermissionResponse {
        outcome,
        meta: meta(view.meta)?,
    })
}
