//! Sessions and prompt turns, borrowed: `session/new`'s result, `session/prompt` (params and
//! result) and `session/cancel`.

use crate::wire::{JsonStr, RawValue};

use super::content::ContentBlockView;
use super::enums::StopReasonView;
use super::error::{Detail, Fault};
use super::read::{
    ItemsAt, Read, fill, is, lenient_object, members, required_array, required_str, skip, span,
    walk, walk_array,
};

/// `session/new` result: the new session's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NewSessionResponseView<'a> {
    /// The new session's id.
    pub session_id: JsonStr<'a>,
    /// The modes, when an object (not looked into).
    pub modes: Option<RawValue<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> NewSessionResponseView<'a> {
    pub(crate) fn read(result: RawValue<'a>) -> Read<'a, Self> {
        let [session_id, modes, meta] = members(result, ["sessionId", "modes", "_meta"])?;
        Ok(Self {
            session_id: required_str(session_id, "sessionId")?,
            modes: lenient_object(modes),
            meta: lenient_object(meta),
        })
    }
}

/// `session/prompt` params: one user turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptRequestView<'a> {
    /// The session.
    pub session_id: JsonStr<'a>,
    /// The user's message; every block was checked when the view was decoded.
    pub prompt: PromptBlocks<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> PromptRequestView<'a> {
    pub(crate) fn read(params: RawValue<'a>) -> Read<'a, Self> {
        let text = params.get();
        let (mut session_id, mut prompt, mut meta) = (None, None, None);
        // Every block must decode (a prompt is never silently changed); they are checked in
        // place while the params are walked, a fault kept until `sessionId` is checked.
        let mut blocks: Read<'a, usize> = Ok(0);
        walk(text, 0, |key, at| {
            if is(key, "prompt") && text.as_bytes().get(at) == Some(&b'[') {
                let mut len = 0;
                let checked = walk_array(text, at, |index, start| {
                    len += 1;
                    ContentBlockView::read_at(text, start)
                        .map(|(_, end)| end)
                        .map_err(|fault| fault.at_index(index).at("prompt"))
                });
                let end = match checked {
                    Ok(end) => end,
                    Err(fault) => {
                        blocks = Err(fault);
                        skip(text, at)
                    }
                };
                if blocks.is_ok() {
                    blocks = Ok(len);
                }
                fill(&mut prompt, "prompt", span(text, at, end))?;
                return Ok(end);
            }
            let end = skip(text, at);
            if is(key, "sessionId") {
                fill(&mut session_id, "sessionId", span(text, at, end))?;
            } else if is(key, "prompt") {
                fill(&mut prompt, "prompt", span(text, at, end))?;
            } else if is(key, "_meta") {
                fill(&mut meta, "_meta", span(text, at, end))?;
            }
            Ok(end)
        })?;
        let session_id = required_str(session_id, "sessionId")?;
        let prompt = required_array(prompt, "prompt", "a JSON array of ContentBlocks")?;
        let len = blocks?;
        Ok(Self {
            session_id,
            prompt: PromptBlocks { array: prompt, len },
            meta: lenient_object(meta),
        })
    }

    /// Agentao's value rules for a prompt it is asked to run: a non-empty session id and at
    /// least one block.
    pub(crate) fn check(&self) -> Read<'a, ()> {
        non_empty_session(self.session_id)?;
        if self.prompt.is_empty() {
            return Err(Fault::field("prompt", Detail::Empty));
        }
        Ok(())
    }
}

/// `sessionId` must not be empty in a request an agent acts on.
pub(crate) fn non_empty_session(session_id: JsonStr<'_>) -> Read<'_, ()> {
    non_empty(session_id, "sessionId")
}

/// A string member that must not be empty (empty on the wire is empty decoded).
pub(crate) fn non_empty<'a>(value: JsonStr<'a>, key: &'static str) -> Read<'a, ()> {
    if value.raw().is_empty() {
        return Err(Fault::field(key, Detail::EmptyString));
    }
    Ok(())
}

/// The blocks of a prompt, all known to decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PromptBlocks<'a> {
    array: RawValue<'a>,
    len: usize,
}

impl<'a> PromptBlocks<'a> {
    /// How many blocks there are.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The blocks, in order.
    pub fn iter(&self) -> impl Iterator<Item = ContentBlockView<'a>> + 'a {
        // Every block decoded when the view was made; none is skipped here.
        ItemsAt::new(self.array, |text, start| {
            match ContentBlockView::read_at(text, start) {
                Ok((block, end)) => (Ok(block), end),
                Err(fault) => (Err(fault), skip(text, start)),
            }
        })
        .filter_map(Result::ok)
    }

    /// The array as sent.
    pub fn raw(&self) -> RawValue<'a> {
        self.array
    }
}

/// `session/prompt` result: why the turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptResponseView<'a> {
    /// Why the turn ended.
    pub stop_reason: StopReasonView,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> PromptResponseView<'a> {
    pub(crate) fn read(result: RawValue<'a>) -> Read<'a, Self> {
        let [stop_reason, meta] = members(result, ["stopReason", "_meta"])?;
        Ok(Self {
            stop_reason: StopReasonView::required(stop_reason, "stopReason")?,
            meta: lenient_object(meta),
        })
    }
}

/// `session/cancel` params: stop the session's turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CancelView<'a> {
    /// The session whose turn to cancel.
    pub session_id: JsonStr<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> CancelView<'a> {
    pub(crate) fn read(params: RawValue<'a>) -> Read<'a, Self> {
        let [session_id, meta] = members(params, ["sessionId", "_meta"])?;
        Ok(Self {
            session_id: required_str(session_id, "sessionId")?,
            meta: lenient_object(meta),
        })
    }
}
