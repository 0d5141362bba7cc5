//! `session/request_permission`, borrowed: the agent's question and the client's answer, in
//! the standard nested shape and the flat one some clients (Agentao's among them) send.

use crate::wire::json::ValueKind;
use crate::wire::{JsonStr, RawValue};

use super::enums::PermissionOptionKindView;
use super::error::{Detail, Fault};
use super::read::{
    Read, fill, is, lenient_object, members, object, required, required_array, required_object,
    required_str, skip, span, strict_opt_str, walk,
};
use super::update::ToolCallUpdateView;

/// `session/request_permission` params.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestPermissionView<'a> {
    /// The session.
    pub session_id: JsonStr<'a>,
    /// The tool call asking.
    pub tool_call: ToolCallUpdateView<'a>,
    /// The choices offered; every one was checked when the view was decoded.
    pub options: PermissionOptions<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> RequestPermissionView<'a> {
    /// Reads the params in one walk, descending into `toolCall` in place (it holds most of
    /// the bytes: the diffs and text the user is asked about).
    pub(crate) fn read(params: RawValue<'a>) -> Read<'a, Self> {
        let text = params.get();
        let (mut session_id, mut tool_call_raw, mut options, mut meta) = (None, None, None, None);
        let mut tool_call = None;
        walk(text, 0, |key, at| {
            if is(key, "toolCall") && text.as_bytes().get(at) == Some(&b'{') {
                // A fault inside `toolCall` is reported after `sessionId`'s, as before.
                let (read, end) = match ToolCallUpdateView::read_at(text, at) {
                    Ok((view, end)) => (Ok(view), end),
                    Err(fault) => (Err(fault), skip(text, at)),
                };
                fill(&mut tool_call_raw, "toolCall", span(text, at, end))?;
                tool_call = Some(read);
                return Ok(end);
            }
            let end = skip(text, at);
            let slot = if is(key, "sessionId") {
                Some((&mut session_id, "sessionId"))
            } else if is(key, "toolCall") {
                Some((&mut tool_call_raw, "toolCall"))
            } else if is(key, "options") {
                Some((&mut options, "options"))
            } else if is(key, "_meta") {
                Some((&mut meta, "_meta"))
            } else {
                None
            };
            if let Some((slot, key)) = slot {
                fill(slot, key, span(text, at, end))?;
            }
            Ok(end)
        })?;
        let session_id = required_str(session_id, "sessionId")?;
        let tool_call_raw = required_object(tool_call_raw, "toolCall")?;
        let tool_call = tool_call
            .unwrap_or_else(|| ToolCallUpdateView::read(tool_call_raw))
            .map_err(|fault| fault.at("toolCall"))?;
        let options = required_array(options, "options", "a JSON array")?;
        let mut len = 0;
        for (index, option) in options.elements().enumerate() {
            PermissionOptionView::read(option)
                .map_err(|fault| fault.at_index(index).at("options"))?;
            len += 1;
        }
        Ok(Self {
            session_id,
            tool_call,
            options: PermissionOptions {
                array: options,
                len,
            },
            meta: lenient_object(meta),
        })
    }
}

/// One choice offered to the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PermissionOptionView<'a> {
    /// Sent back when chosen.
    pub option_id: JsonStr<'a>,
    /// A human label.
    pub name: JsonStr<'a>,
    /// What choosing it means.
    pub kind: PermissionOptionKindView,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> PermissionOptionView<'a> {
    pub(crate) fn read(value: RawValue<'a>) -> Read<'a, Self> {
        let [option_id, name, kind, meta] =
            members(object(value)?, ["optionId", "name", "kind", "_meta"])?;
        Ok(Self {
            option_id: required_str(option_id, "optionId")?,
            name: required_str(name, "name")?,
            kind: PermissionOptionKindView::required(kind, "kind")?,
            meta: lenient_object(meta),
        })
    }
}

/// The options of a permission request, all known to decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PermissionOptions<'a> {
    array: RawValue<'a>,
    len: usize,
}

impl<'a> PermissionOptions<'a> {
    /// How many options there are.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The options, in order.
    pub fn iter(&self) -> impl Iterator<Item = PermissionOptionView<'a>> + 'a {
        // Every option decoded when the view was made; none is skipped here.
        self.array
            .elements()
            .filter_map(|option| PermissionOptionView::read(option).ok())
    }
}

/// `session/request_permission` result: what the user decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestPermissionResponseView<'a> {
    /// The decision.
    pub outcome: PermissionOutcomeView<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

/// The user's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionOutcomeView<'a> {
    /// The turn was cancelled before the user chose.
    Cancelled,
    /// The user chose this option.
    Selected {
        /// The chosen option's id.
        option_id: JsonStr<'a>,
    },
}

const OUTCOMES: &[&str] = &["cancelled", "selected"];

impl<'a> RequestPermissionResponseView<'a> {
    /// Reads `{"outcome":{"outcome":"selected","optionId":…}}` and the flat
    /// `{"outcome":"selected","optionId":…}`.
    pub(crate) fn read(result: RawValue<'a>) -> Read<'a, Self> {
        let [outcome, option_id, meta] = members(result, ["outcome", "optionId", "_meta"])?;
        let outcome = required(outcome, "outcome")?;
        let flat_option_id = strict_opt_str(option_id, "optionId")?;
        let outcome = if outcome.kind() == ValueKind::Object {
            read_nested(outcome).map_err(|fault| fault.at("outcome"))?
        } else if let Some(name) = outcome.as_str() {
            if name.eq_str("cancelled") {
                PermissionOutcomeView::Cancelled
            } else if name.eq_str("selected") {
                let option_id =
                    flat_option_id.ok_or_else(|| Fault::field("optionId", Detail::Required))?;
                PermissionOutcomeView::Selected { option_id }
            } else {
                return Err(Fault::here(Detail::OneOf {
                    expected: OUTCOMES,
                    got: name,
                }));
            }
        } else {
            return Err(Fault::field("outcome", Detail::MustBe("a JSON object")));
        };
        Ok(Self {
            outcome,
            meta: lenient_object(meta),
        })
    }
}

/// The nested outcome object, tagged by its own `outcome` member.
fn read_nested(outcome: RawValue<'_>) -> Read<'_, PermissionOutcomeView<'_>> {
    let tag = required_str(outcome.get_field("outcome"), "outcome")?;
    if tag.eq_str("cancelled") {
        Ok(PermissionOutcomeView::Cancelled)
    } else if tag.eq_str("selected") {
        let [option_id, _meta] = members(outcome, ["optionId", "_meta"])?;
        Ok(PermissionOutcomeView::Selected {
            option_id: required_str(option_id, "optionId")?,
        })
    } else {
        Err(Fault::here(Detail::OneOf {
            expected: OUTCOMES,
            got: tag,
        }))
    }
}
