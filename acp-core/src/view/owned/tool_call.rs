//! Tool calls and tool call updates (a `session/update`, or the `toolCall` of a permission
//! request) read in one walk, the content list in place: their diffs and outputs are most of
//! the bytes of a turn, so each is scanned once here and copied once, rather than skipped by
//! the view and again by the list and item readers.
//!
//! The rules are the owned types' (`ToolCall`, `ToolCallUpdate`, `ToolCallContent`), checked
//! against serde by the differential tests; like the rest of the fast path, anything it is not
//! sure of (a content item that does not decode, a tag that is not first, a number serde_json
//! cannot hold in a field it reads as a number) declines.

use alloc::vec::Vec;

use crate::schema::{
    Diff, TerminalContent, ToolCall, ToolCallContent, ToolCallLocation, ToolCallUpdate, ToolContent,
};
use crate::wire::{JsonStr, RawValue};

use super::super::content::ContentBlockView;
use super::super::enums::{ToolCallStatusView, ToolKindView};
use super::super::read::{
    any_value, fill, is, key_name, leading_tag, lenient_str, members_after, required_str, skip,
    span, walk, walk_after, walk_array,
};
use super::{
    DECLINE, guarded_block, location, meta_any, numbers, owned, raw_json, status, tool_kind,
};

use super::super::update::{CONTENT, TOOL_CALL_KEYS as KEYS};

/// The members of a tool call object, found in one walk.
struct Members<'a> {
    slots: [Option<RawValue<'a>>; 10],
    /// The content items, when `content` is an array (then every item converted).
    content: Option<Vec<ToolCallContent>>,
}

impl<'a> Members<'a> {
    /// Walks the object at `text[start]`; returns its members and the offset past it.
    fn read_at(text: &'a str, start: usize) -> Option<(Self, usize)> {
        if text.as_bytes().get(start) != Some(&b'{') {
            return None;
        }
        let mut slots = [None; 10];
        let mut content = None;
        let end = walk(text, start, |key, at| {
            let name = key_name(key, &KEYS);
            let Some(index) = KEYS.iter().position(|k| *k == name) else {
                return Ok(skip(text, at));
            };
            let end = if index == CONTENT && text.as_bytes().get(at) == Some(&b'[') {
                let mut items = Vec::new();
                let end = walk_array(text, at, |_, item| {
                    let (item, end) = content_item_at(text, item).ok_or(DECLINE)?;
                    items.push(item);
                    Ok(end)
                })?;
                content = Some(items);
                end
            } else {
                skip(text, at)
            };
            fill(&mut slots[index], KEYS[index], span(text, at, end))?;
            Ok(end)
        })
        .ok()?;
        Some((Self { slots, content }, end))
    }

    fn id(&self) -> Option<JsonStr<'a>> {
        required_str(self.slots[0], KEYS[0]).ok()
    }

    /// A lenient member serde reads as a number when it is one: `None` (decline) when that
    /// number does not fit, else the member.
    fn leaf(&self, index: usize) -> Option<Option<RawValue<'a>>> {
        match self.slots[index] {
            Some(value) if !numbers::value_fits(value.get().as_bytes(), 0) => None,
            slot => Some(slot),
        }
    }

    fn kind(&self) -> Option<Option<crate::schema::ToolKind>> {
        match ToolKindView::lenient(self.leaf(2)?) {
            None => Some(None),
            Some(kind) => tool_kind(kind).map(Some),
        }
    }

    fn status(&self) -> Option<Option<crate::schema::ToolCallStatus>> {
        match ToolCallStatusView::lenient(self.leaf(3)?) {
            None => Some(None),
            Some(s) => status(s).map(Some),
        }
    }

    /// `locations`, when an array: every item converted, or `None` (decline).
    fn locations(&self) -> Option<Option<Vec<ToolCallLocation>>> {
        let Some(list) = self.slots[5].filter(|l| l.get().starts_with('[')) else {
            return Some(None);
        };
        list.elements()
            .map(|item| numbers::fit(item.get()).then(|| location(item)).flatten())
            .collect::<Option<Vec<_>>>()
            .map(Some)
    }

    fn raw(&self, index: usize) -> Option<Option<serde_json::Value>> {
        raw_json(any_value(self.slots[index]))
    }
}

/// The `ToolCallUpdate` object at `text[start]`, and the offset past it.
pub(super) fn tool_call_update_at(text: &str, start: usize) -> Option<(ToolCallUpdate, usize)> {
    let (members, end) = Members::read_at(text, start)?;
    let locations = members.locations()?;
    let update = ToolCallUpdate {
        tool_call_id: owned(members.id()?),
        kind: members.kind()?,
        status: members.status()?,
        title: lenient_str(members.leaf(1)?).map(owned),
        name: lenient_str(members.leaf(9)?).map(owned),
        locations,
        raw_input: members.raw(6)?,
        raw_output: members.raw(7)?,
        meta: meta_any(members.slots[8])?,
        content: members.content,
    };
    Some((update, end))
}

/// The `ToolCall` object at `text[start]`: the same members, with a required title and lists
/// that read as empty when they are not arrays.
pub(super) fn tool_call_at(text: &str, start: usize) -> Option<(ToolCall, usize)> {
    let (members, end) = Members::read_at(text, start)?;
    let locations = members.locations()?.unwrap_or_default();
    let call = ToolCall {
        tool_call_id: owned(members.id()?),
        title: owned(required_str(members.slots[1], KEYS[1]).ok()?),
        name: lenient_str(members.leaf(9)?).map(owned),
        kind: members.kind()?,
        status: members.status()?,
        locations,
        raw_input: members.raw(6)?,
        raw_output: members.raw(7)?,
        meta: meta_any(members.slots[8])?,
        content: members.content.unwrap_or_default(),
    };
    Some((call, end))
}

/// One content item at `text[start]`, its tag first, and the offset past it.
fn content_item_at(text: &str, start: usize) -> Option<(ToolCallContent, usize)> {
    if text.as_bytes().get(start) != Some(&b'{') {
        return None;
    }
    let (tag, after) = leading_tag(text, start, "type", ["diff", "terminal", "content"])?;
    let item = match tag {
        0 => {
            let ([path, old_text, new_text, meta], end) =
                members_after(text, after, ["path", "oldText", "newText", "_meta"]).ok()?;
            let old_text = match old_text {
                Some(value) if !numbers::value_fits(value.get().as_bytes(), 0) => return None,
                old_text => lenient_str(old_text),
            };
            let diff = Diff {
                path: owned(required_str(path, "path").ok()?),
                old_text: old_text.map(owned),
                new_text: owned(required_str(new_text, "newText").ok()?),
                meta: meta_any(meta)?,
            };
            (ToolCallContent::Diff(diff), end)
        }
        1 => {
            let ([terminal_id, meta], end) =
                members_after(text, after, ["terminalId", "_meta"]).ok()?;
            let terminal = TerminalContent {
                terminal_id: owned(required_str(terminal_id, "terminalId").ok()?),
                meta: meta_any(meta)?,
            };
            (ToolCallContent::Terminal(terminal), end)
        }
        _ => {
            let (mut block, mut meta) = (None, None);
            let end = walk_after(text, after, |key, at| {
                if is(key, "content") {
                    if block.is_some() {
                        return Err(DECLINE);
                    }
                    let (view, end) = ContentBlockView::read_at(text, at)?;
                    block = Some(guarded_block(view, span(text, at, end)).ok_or(DECLINE)?);
                    return Ok(end);
                }
                let end = skip(text, at);
                if is(key, "_meta") {
                    fill(&mut meta, "_meta", span(text, at, end))?;
                }
                Ok(end)
            })
            .ok()?;
            let content = ToolContent {
                content: block?,
                meta: meta_any(meta)?,
            };
            (ToolCallContent::Content(content), end)
        }
    };
    Some(item)
}
