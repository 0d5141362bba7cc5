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
    PermissionOptionView, PermissionOutcomeView, RequestPermissionResponseView,
};
use super::super::read::{fill, is, lenient_object, required_str, skip, span, walk, walk_array};
use super::super::session::PromptResponseView;
use super::tool_call::tool_call_update_at;
use super::{DECLINE, guarded_block, meta, meta_any, numbers, owned, tag_first};

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

/// A result serde reads the way the views do (a small object, its numbers checked whole, see
/// [`numbers`]); anything else is left to serde.
fn object(value: RawValue<'_>) -> Option<RawValue<'_>> {
    (value.kind() == ValueKind::Object && numbers::fit(value.get())).then_some(value)
}

/// The params, in one walk: the blocks are read in place, each number checked around the
/// block's long text (see [`numbers`]).
fn prompt_request(params: RawValue<'_>) -> Option<PromptRequest> {
    if params.kind() != ValueKind::Object {
        return None;
    }
    let text = params.get();
    let (mut session_id, mut prompt, mut meta) = (None, None, None);
    walk(text, 0, |key, at| {
        if is(key, "prompt") {
            if prompt.is_some() || text.as_bytes().get(at) != Some(&b'[') {
                return Err(DECLINE);
            }
            let mut blocks = Vec::new();
            let end = walk_array(text, at, |_, start| {
                let (view, end) = ContentBlockView::read_at(text, start)?;
                blocks.push(guarded_block(view, span(text, start, end)).ok_or(DECLINE)?);
                Ok(end)
            })?;
            prompt = Some(blocks);
            return Ok(end);
        }
        let end = skip(text, at);
        if is(key, "sessionId") {
            fill(&mut session_id, "sessionId", span(text, at, end))?;
        } else if is(key, "_meta") {
            fill(&mut meta, "_meta", span(text, at, end))?;
        }
        Ok(end)
    })
    .ok()?;
    let session_id = required_str(session_id, "sessionId").ok()?;
    let prompt = prompt?;
    // Agentao's value rules: the serde path words their errors.
    if session_id.raw().is_empty() || prompt.is_empty() {
        return None;
    }
    Some(PromptRequest {
        session_id: owned(session_id),
        prompt,
        meta: meta_any(meta)?,
    })
}

/// The params, in one walk: the tool call is read in place (see [`tool_call`]).
fn permission_request(params: RawValue<'_>) -> Option<RequestPermissionRequest> {
    if params.kind() != ValueKind::Object {
        return None;
    }
    let text = params.get();
    let (mut session_id, mut tool_call, mut options, mut meta) = (None, None, None, None);
    walk(text, 0, |key, at| {
        if is(key, "toolCall") {
            if tool_call.is_some() {
                return Err(DECLINE);
            }
            let (update, end) = tool_call_update_at(text, at).ok_or(DECLINE)?;
            tool_call = Some(update);
            return Ok(end);
        }
        let end = skip(text, at);
        if is(key, "sessionId") {
            fill(&mut session_id, "sessionId", span(text, at, end))?;
        } else if is(key, "options") {
            fill(&mut options, "options", span(text, at, end))?;
        } else if is(key, "_meta") {
            fill(&mut meta, "_meta", span(text, at, end))?;
        }
        Ok(end)
    })
    .ok()?;
    let options = options.filter(|o| o.kind() == ValueKind::Array)?;
    Some(RequestPermissionRequest {
        session_id: owned(required_str(session_id, "sessionId").ok()?),
        tool_call: tool_call?,
        options: options
            .elements()
            .map(permission_option)
            .collect::<Option<Vec<_>>>()?,
        meta: meta_any(meta)?,
    })
}

fn permission_option(option: RawValue<'_>) -> Option<PermissionOption> {
    if !numbers::fit(option.get()) {
        return None;
    }
    let option = PermissionOptionView::read(option).ok()?;
    Some(PermissionOption {
        option_id: owned(option.option_id),
        name: owned(option.name),
        kind: <PermissionOptionKind as LeafKind>::from_str(option.kind.as_str())?,
        meta: meta(option.meta)?,
    })
}

fn prompt_response(result: RawValue<'_>) -> Option<PromptResponse> {
    let result = object(result)?;
    // `usage` is rare: serde reads it.
    if result.get_field("usage").is_some() {
        return None;
    }
    let view = PromptResponseView::read(result).ok()?;
    Some(PromptResponse {
        stop_reason: <StopReason as LeafKind>::from_str(view.stop_reason.as_str())?,
        usage: None,
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
