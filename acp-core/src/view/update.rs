//! `session/update`, borrowed: message and thought chunks, tool calls, tool call updates and
//! plans, and the dispatch to the kinds of [`super::progress`]. Other kinds are passed through
//! raw.

use crate::wire::{JsonStr, RawValue};

use super::content::ContentBlockView;
use super::enums::{ToolCallStatusView, ToolKindView};
use super::error::{Detail, Fault};
use super::progress::{
    NoticeView, PlanRemovedView, PlanUpdateView, PlanView, SessionInfoUpdateView, UsageUpdateView,
};
use super::read::{
    EMPTY_OBJECT, ItemsAt, Read, any_value, dropped, fill, fill_string, first_member, key_name,
    leading_tag, lenient_array, lenient_object, lenient_str, members, members_after, next_member,
    object, required, required_str, skip, span, walk, walk_after, walk_array, walk_from,
};

/// `session/update` params.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionNotificationView<'a> {
    /// The session the update belongs to.
    pub session_id: JsonStr<'a>,
    /// What happened.
    pub update: SessionUpdateView<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
    /// The update object as sent.
    pub(crate) update_raw: RawValue<'a>,
    /// Whether a `_meta` that is no object was dropped (see [`TextView`](super::TextView)).
    pub(crate) lossy: bool,
}

impl<'a> SessionNotificationView<'a> {
    /// What [`read_into`](Self::read_into) starts from: every field is overwritten or checked.
    pub(crate) const EMPTY: Self = Self {
        session_id: JsonStr::new_unchecked("", false),
        update: SessionUpdateView::Unknown(EMPTY_OBJECT),
        meta: None,
        update_raw: EMPTY_OBJECT,
        lossy: false,
    };

    /// Reads the params into `self` in one walk, descending into `update` in place: the
    /// update (a few hundred bytes) is built where the caller keeps it rather than moved out
    /// through each reader. On a fault `self` holds whatever was read so far.
    pub(crate) fn read_into(&mut self, params: RawValue<'a>) -> Read<'a, ()> {
        let text = params.get();
        let (mut session_id, mut meta, mut update_raw) = (None, None, None);
        let mut session_str = None;
        let mut update_fault = None;
        let update = &mut self.update;
        walk(text, 0, |key, start| {
            let (slot, name) = match key_name(key, &["sessionId", "update", "_meta"]) {
                "update" => {
                    // A fault inside `update` is reported after `sessionId`'s, as before.
                    let end = match update.read_into(text, start) {
                        Ok(end) => {
                            update_fault = None;
                            end
                        }
                        Err(fault) => {
                            update_fault = Some(fault);
                            skip(text, start)
                        }
                    };
                    fill(&mut update_raw, "update", span(text, start, end))?;
                    return Ok(end);
                }
                "sessionId" => {
                    // Read as it is skipped: not scanned again for escapes.
                    let id =
                        fill_string(text, start, &mut session_id, &mut session_str, "sessionId")?;
                    if let Some(end) = id {
                        return Ok(end);
                    }
                    (&mut session_id, "sessionId")
                }
                "_meta" => (&mut meta, "_meta"),
                _ => return Ok(skip(text, start)),
            };
            let end = skip(text, start);
            fill(slot, name, span(text, start, end))?;
            Ok(end)
        })?;
        self.session_id = match session_str {
            Some(id) => id,
            None => required_str(session_id, "sessionId")?,
        };
        let Some(update_raw) = update_raw else {
            return Err(Fault::field("update", Detail::Required));
        };
        if let Some(fault) = update_fault {
            return Err(fault.at("update"));
        }
        self.meta = lenient_object(meta);
        self.lossy = dropped(meta);
        self.update_raw = update_raw;
        Ok(())
    }
}

/// One update, discriminated by `sessionUpdate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionUpdateView<'a> {
    /// A chunk of the user's message (history replay).
    UserMessageChunk(ContentChunkView<'a>),
    /// A chunk of the agent's answer.
    AgentMessageChunk(ContentChunkView<'a>),
    /// A chunk of the agent's reasoning.
    AgentThoughtChunk(ContentChunkView<'a>),
    /// A new tool call.
    ToolCall(ToolCallView<'a>),
    /// A change to a tool call.
    ToolCallUpdate(ToolCallUpdateView<'a>),
    /// The whole current plan.
    Plan(PlanView<'a>),
    /// One plan, by id (`plan_update`).
    PlanUpdate(PlanUpdateView<'a>),
    /// A plan, by id, is gone (`plan_removed`).
    PlanRemoved(PlanRemovedView<'a>),
    /// The session's title or timestamp changed (`session_info_update`).
    SessionInfoUpdate(SessionInfoUpdateView<'a>),
    /// Context window use and cost (`usage_update`).
    UsageUpdate(UsageUpdateView<'a>),
    /// A message for the user outside the conversation (`notice`).
    Notice(NoticeView<'a>),
    /// A chunk of a message between sessions (`session_message_chunk`); its `message_id` is
    /// always there.
    SessionMessageChunk(ContentChunkView<'a>),
    /// A kind the owned types know but the views do not look into (`available_commands_update`,
    /// `current_mode_update`, `subagent_update`, …): its name and the whole object, unchecked.
    Other {
        /// The `sessionUpdate` value.
        kind: &'static str,
        /// The whole update object.
        raw: RawValue<'a>,
    },
    /// A kind this version does not know: the whole object, tag included.
    Unknown(RawValue<'a>),
}

/// The kinds [`SessionUpdateView::read_into`] reads in place when their tag comes first, in
/// the order of its `match`.
const IN_PLACE_KINDS: [&str; 5] = [
    "agent_message_chunk",
    "agent_thought_chunk",
    "user_message_chunk",
    "tool_call",
    "tool_call_update",
];

/// The kinds the owned types decode that the views pass through as [`SessionUpdateView::Other`].
const OTHER_KINDS: [&str; 7] = [
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "compaction_update",
    "compaction_summary_chunk",
    "subagent_update",
    "session_message",
];

impl<'a> SessionUpdateView<'a> {
    /// Every `sessionUpdate` value that is not [`SessionUpdateView::Unknown`], in the owned
    /// `SessionUpdate::KNOWN` order.
    pub const KNOWN: [&'static str; 19] = [
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
        "plan_update",
        "plan_removed",
        "subagent_update",
        "session_message",
        "session_message_chunk",
    ];

    /// Reads the update starting at `text[start]` into `self`, in place when its tag comes
    /// first (the usual wire order) and names a chunk; returns the offset just past it.
    fn read_into(&mut self, text: &'a str, start: usize) -> Read<'a, usize> {
        if text.as_bytes().get(start) != Some(&b'{') {
            return Err(Fault::here(Detail::MustBe("a JSON object")));
        }
        let Some((tag, after)) = leading_tag(text, start, "sessionUpdate", IN_PLACE_KINDS) else {
            return self.read_skipped(text, start);
        };
        // The chunk is built inside its variant: it is most of the update's size and most
        // of the traffic. The tag is not read again.
        *self = match tag {
            0 => Self::AgentMessageChunk(ContentChunkView::EMPTY),
            1 => Self::AgentThoughtChunk(ContentChunkView::EMPTY),
            2 => Self::UserMessageChunk(ContentChunkView::EMPTY),
            3 => {
                let (call, end) = ToolCallView::read_after(text, after)?;
                *self = Self::ToolCall(call);
                return Ok(end);
            }
            _ => {
                let (update, end) = ToolCallUpdateView::read_after(text, after)?;
                *self = Self::ToolCallUpdate(update);
                return Ok(end);
            }
        };
        match self {
            Self::AgentMessageChunk(chunk)
            | Self::AgentThoughtChunk(chunk)
            | Self::UserMessageChunk(chunk) => chunk.read_after(text, after),
            _ => Ok(skip(text, start)),
        }
    }

    /// [`read`](Self::read) of the update at `text[start]`, skipped first: the kinds read
    /// from their members ([`RawValue::get_field`]) and the tags not sent first.
    fn read_skipped(&mut self, text: &'a str, start: usize) -> Read<'a, usize> {
        let end = skip(text, start);
        *self = Self::read(span(text, start, end))?;
        Ok(end)
    }

    pub(crate) fn read(update: RawValue<'a>) -> Read<'a, Self> {
        let tag = required_str(update.get_field("sessionUpdate"), "sessionUpdate")?;
        let kind = match tag.as_plain() {
            Some(plain) => plain,
            None => match Self::KNOWN.iter().find(|known| tag.eq_str(known)) {
                Some(known) => known,
                None => return Ok(Self::Unknown(update)),
            },
        };
        Ok(match kind {
            "agent_message_chunk" => Self::AgentMessageChunk(ContentChunkView::read(update)?),
            "agent_thought_chunk" => Self::AgentThoughtChunk(ContentChunkView::read(update)?),
            "user_message_chunk" => Self::UserMessageChunk(ContentChunkView::read(update)?),
            "tool_call" => Self::ToolCall(ToolCallView::read(update)?),
            "tool_call_update" => Self::ToolCallUpdate(ToolCallUpdateView::read(update)?),
            "plan" => Self::Plan(PlanView::read(update)?),
            "plan_update" => Self::PlanUpdate(PlanUpdateView::read(update)?),
            "plan_removed" => Self::PlanRemoved(PlanRemovedView::read(update)?),
            "session_info_update" => Self::SessionInfoUpdate(SessionInfoUpdateView::read(update)?),
            "usage_update" => Self::UsageUpdate(UsageUpdateView::read(update)?),
            "notice" => Self::Notice(NoticeView::read(update)?),
            "session_message_chunk" => {
                let chunk = ContentChunkView::read(update)?;
                if chunk.message_id.is_none() {
                    return Err(message_id_fault(update));
                }
                Self::SessionMessageChunk(chunk)
            }
            other => match OTHER_KINDS.iter().find(|known| **known == other) {
                Some(kind) => Self::Other { kind, raw: update },
                None => Self::Unknown(update),
            },
        })
    }

    /// The `sessionUpdate` value (still escaped for unknown kinds).
    pub fn kind(&self) -> &'a str {
        match self {
            Self::UserMessageChunk(_) => "user_message_chunk",
            Self::AgentMessageChunk(_) => "agent_message_chunk",
            Self::AgentThoughtChunk(_) => "agent_thought_chunk",
            Self::ToolCall(_) => "tool_call",
            Self::ToolCallUpdate(_) => "tool_call_update",
            Self::Plan(_) => "plan",
            Self::PlanUpdate(_) => "plan_update",
            Self::PlanRemoved(_) => "plan_removed",
            Self::SessionInfoUpdate(_) => "session_info_update",
            Self::UsageUpdate(_) => "usage_update",
            Self::Notice(_) => "notice",
            Self::SessionMessageChunk(_) => "session_message_chunk",
            Self::Other { kind, .. } => kind,
            Self::Unknown(raw) => raw
                .get_field("sessionUpdate")
                .and_then(|t| t.as_str())
                .map_or("", |t| t.raw()),
        }
    }
}

/// A streamed chunk of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContentChunkView<'a> {
    /// The chunk.
    pub content: ContentBlockView<'a>,
    /// Groups the chunks of one message.
    pub message_id: Option<JsonStr<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
    /// The content object as sent.
    pub(crate) content_raw: RawValue<'a>,
    /// Whether a `_meta` that is no object or a `messageId` that is no string was dropped:
    /// serde_json still reads those as values (see [`TextView`](super::TextView)).
    pub(crate) lossy: bool,
}

impl<'a> ContentChunkView<'a> {
    /// What [`read_into`](Self::read_into) starts from: every field is overwritten.
    const EMPTY: Self = Self {
        content: ContentBlockView::Unknown(EMPTY_OBJECT),
        message_id: None,
        meta: None,
        content_raw: EMPTY_OBJECT,
        lossy: false,
    };

    fn read(update: RawValue<'a>) -> Read<'a, Self> {
        let mut chunk = Self::EMPTY;
        chunk.read_into(update.get(), 0)?;
        Ok(chunk)
    }

    /// Reads the chunk object at `text[start]` into `self` in one walk, descending into
    /// `content` in place; returns the offset just past it.
    fn read_into(&mut self, text: &'a str, start: usize) -> Read<'a, usize> {
        self.read_members(text, first_member(text, start))
    }

    /// [`read_into`](Self::read_into) of the members after its tag, whose value ends at
    /// `after`.
    fn read_after(&mut self, text: &'a str, after: usize) -> Read<'a, usize> {
        self.read_members(text, next_member(text, after))
    }

    /// The walk of [`read_into`](Self::read_into) from the member at `text[pos]`.
    #[inline(always)]
    fn read_members(&mut self, text: &'a str, pos: usize) -> Read<'a, usize> {
        let (mut message_id, mut meta, mut content_raw) = (None, None, None);
        let mut message_str = None;
        let content = &mut self.content;
        let end = walk_from(text, pos, |key, at| {
            let (slot, name) = match key_name(key, &["content", "messageId", "_meta"]) {
                "content" => {
                    let end = content
                        .read_into(text, at)
                        .map_err(|fault| fault.at("content"))?;
                    fill(&mut content_raw, "content", span(text, at, end))?;
                    return Ok(end);
                }
                "messageId" => {
                    let id = fill_string(text, at, &mut message_id, &mut message_str, "messageId")?;
                    if let Some(end) = id {
                        return Ok(end);
                    }
                    (&mut message_id, "messageId")
                }
                "_meta" => (&mut meta, "_meta"),
                _ => return Ok(skip(text, at)),
            };
            let end = skip(text, at);
            fill(slot, name, span(text, at, end))?;
            Ok(end)
        })?;
        let Some(content_raw) = content_raw else {
            return Err(Fault::field("content", Detail::Required));
        };
        // A string read in the walk; anything else (dropped, marked lossy) is no string.
        self.message_id = message_str;
        self.meta = lenient_object(meta);
        self.lossy = dropped(meta) || message_id.is_some() != self.message_id.is_some();
        self.content_raw = content_raw;
        Ok(end)
    }
}

/// `tool_call`: a new tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolCallView<'a> {
    /// Unique within the session.
    pub tool_call_id: JsonStr<'a>,
    /// A human title.
    pub title: JsonStr<'a>,
    /// The tool's own name, when a string.
    pub name: Option<JsonStr<'a>>,
    /// The kind as sent; absent means `other` (see [`ToolCallView::kind`]).
    pub kind: Option<ToolKindView<'a>>,
    /// The status as sent; absent means `pending` (see [`ToolCallView::status`]).
    pub status: Option<ToolCallStatusView>,
    /// Content produced so far.
    pub content: ToolCallContents<'a>,
    /// Files the call touches.
    pub locations: Locations<'a>,
    /// The raw input sent to the tool (any JSON but `null`).
    pub raw_input: Option<RawValue<'a>>,
    /// The raw output of the tool (any JSON but `null`).
    pub raw_output: Option<RawValue<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

/// The members of a tool call (the owned fast path reads the same ones).
pub(super) const TOOL_CALL_KEYS: [&str; 10] = [
    "toolCallId",
    "title",
    "kind",
    "status",
    "content",
    "locations",
    "rawInput",
    "rawOutput",
    "_meta",
    "name",
];

/// Where `content` sits in [`TOOL_CALL_KEYS`].
pub(super) const CONTENT: usize = 4;

/// The members of a tool call (or an update of one), and the first item of its content:
/// finding the end of the content array means walking its items anyway, so the first one
/// (most often the only one: a diff, with both texts) is read on the way rather than
/// skipped now and read again when iterated.
struct ToolCallMembers<'a> {
    slots: [Option<RawValue<'a>>; 10],
    first: Option<FirstItem<'a>>,
}

impl<'a> ToolCallMembers<'a> {
    /// The members of the object at `text[start]`, and the offset past it.
    fn at(text: &'a str, start: usize) -> Read<'a, (Self, usize)> {
        let mut members = Self::none();
        let end = walk(text, start, |key, at| members.member(text, key, at))?;
        Ok((members, end))
    }

    /// The members after a leading tag whose value ends at `after`, and the offset past them.
    fn after(text: &'a str, after: usize) -> Read<'a, (Self, usize)> {
        let mut members = Self::none();
        let end = walk_after(text, after, |key, at| members.member(text, key, at))?;
        Ok((members, end))
    }

    fn none() -> Self {
        ToolCallMembers {
            slots: [None; 10],
            first: None,
        }
    }

    /// One member, as `collect` takes it, but for a `content` array.
    #[inline(always)]
    fn member(&mut self, text: &'a str, key: JsonStr<'a>, at: usize) -> Read<'a, usize> {
        let name = key_name(key, &TOOL_CALL_KEYS);
        if name == "content" && text.as_bytes().get(at) == Some(&b'[') {
            let mut first = None;
            let end = walk_array(text, at, |index, pos| {
                if index > 0 {
                    return Ok(skip(text, pos));
                }
                let (item, end) = ToolCallContentView::read_at(text, pos);
                first = Some(FirstItem {
                    item: item.ok(),
                    end: end - at,
                });
                Ok(end)
            })?;
            fill(&mut self.slots[CONTENT], "content", span(text, at, end))?;
            self.first = first;
            return Ok(end);
        }
        let end = skip(text, at);
        if let Some(index) = TOOL_CALL_KEYS.iter().position(|k| *k == name) {
            fill(
                &mut self.slots[index],
                TOOL_CALL_KEYS[index],
                span(text, at, end),
            )?;
        }
        Ok(end)
    }
}

impl<'a> ToolCallView<'a> {
    fn read(update: RawValue<'a>) -> Read<'a, Self> {
        Self::read_at(update.get(), 0).map(|(view, _)| view)
    }

    /// Reads the update at `text[start]` in one walk; returns it and the offset past it.
    fn read_at(text: &'a str, start: usize) -> Read<'a, (Self, usize)> {
        let (members, end) = ToolCallMembers::at(text, start)?;
        Ok((Self::from_members(members)?, end))
    }

    /// [`read_at`](Self::read_at) of the members after the update's tag, whose value ends at
    /// `after`.
    fn read_after(text: &'a str, after: usize) -> Read<'a, (Self, usize)> {
        let (members, end) = ToolCallMembers::after(text, after)?;
        Ok((Self::from_members(members)?, end))
    }

    fn from_members(members: ToolCallMembers<'a>) -> Read<'a, Self> {
        let first = members.first;
        let [
            id,
            title,
            kind,
            status,
            content,
            locations,
            raw_input,
            raw_output,
            meta,
            name,
        ] = members.slots;
        Ok(Self {
            tool_call_id: required_str(id, "toolCallId")?,
            title: required_str(title, "title")?,
            name: lenient_str(name),
            kind: ToolKindView::lenient(kind),
            status: ToolCallStatusView::lenient(status),
            content: ToolCallContents::new(lenient_array(content), first),
            locations: Locations(lenient_array(locations)),
            raw_input: any_value(raw_input),
            raw_output: any_value(raw_output),
            meta: lenient_object(meta),
        })
    }

    /// The kind, `other` when absent.
    pub fn kind(&self) -> ToolKindView<'a> {
        self.kind.unwrap_or_default()
    }

    /// The status, `pending` when absent.
    pub fn status(&self) -> ToolCallStatusView {
        self.status.unwrap_or(ToolCallStatusView::Pending)
    }
}

/// `tool_call_update` (and the `toolCall` of a permission request): only the fields present
/// change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolCallUpdateView<'a> {
    /// The call being updated.
    pub tool_call_id: JsonStr<'a>,
    /// New kind.
    pub kind: Option<ToolKindView<'a>>,
    /// New status.
    pub status: Option<ToolCallStatusView>,
    /// New title.
    pub title: Option<JsonStr<'a>>,
    /// New tool name.
    pub name: Option<JsonStr<'a>>,
    /// Replaces the content, when an array.
    pub content: Option<ToolCallContents<'a>>,
    /// Replaces the locations, when an array.
    pub locations: Option<Locations<'a>>,
    /// New raw input (any JSON but `null`).
    pub raw_input: Option<RawValue<'a>>,
    /// New raw output (any JSON but `null`).
    pub raw_output: Option<RawValue<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> ToolCallUpdateView<'a> {
    pub(crate) fn read(update: RawValue<'a>) -> Read<'a, Self> {
        Self::read_at(update.get(), 0).map(|(view, _)| view)
    }

    /// Reads the update at `text[start]` in one walk; returns it and the offset past it.
    pub(crate) fn read_at(text: &'a str, start: usize) -> Read<'a, (Self, usize)> {
        let (members, end) = ToolCallMembers::at(text, start)?;
        Ok((Self::from_members(members)?, end))
    }

    /// [`read_at`](Self::read_at) of the members after the update's tag, whose value ends at
    /// `after`.
    fn read_after(text: &'a str, after: usize) -> Read<'a, (Self, usize)> {
        let (members, end) = ToolCallMembers::after(text, after)?;
        Ok((Self::from_members(members)?, end))
    }

    fn from_members(members: ToolCallMembers<'a>) -> Read<'a, Self> {
        let first = members.first;
        let [
            id,
            title,
            kind,
            status,
            content,
            locations,
            raw_input,
            raw_output,
            meta,
            name,
        ] = members.slots;
        Ok(Self {
            tool_call_id: required_str(id, "toolCallId")?,
            kind: ToolKindView::lenient(kind),
            status: ToolCallStatusView::lenient(status),
            title: lenient_str(title),
            name: lenient_str(name),
            content: lenient_array(content).map(|c| ToolCallContents::new(Some(c), first)),
            locations: lenient_array(locations).map(|l| Locations(Some(l))),
            raw_input: any_value(raw_input),
            raw_output: any_value(raw_output),
            meta: lenient_object(meta),
        })
    }
}

/// Content a tool call produced, discriminated by `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolCallContentView<'a> {
    /// `type: "content"`: a content block.
    Content {
        /// The block.
        content: ContentBlockView<'a>,
        /// Extension data, when an object.
        meta: Option<RawValue<'a>>,
    },
    /// `type: "diff"`: a change to one file.
    Diff {
        /// Absolute path of the file.
        path: JsonStr<'a>,
        /// The old text; `None` for a new file.
        old_text: Option<JsonStr<'a>>,
        /// The new text.
        new_text: JsonStr<'a>,
        /// Extension data, when an object.
        meta: Option<RawValue<'a>>,
    },
    /// `type: "terminal"`: a live terminal.
    Terminal {
        /// The terminal's id.
        terminal_id: JsonStr<'a>,
        /// Extension data, when an object.
        meta: Option<RawValue<'a>>,
    },
    /// `type: "session"`: a session (a subagent's) doing the call's work.
    Session {
        /// The session's id.
        session_id: JsonStr<'a>,
        /// Extension data, when an object.
        meta: Option<RawValue<'a>>,
    },
}

impl<'a> ToolCallContentView<'a> {
    /// Reads one item with the owned `ToolCallContent`'s rules (a closed union).
    pub(crate) fn read(value: RawValue<'a>) -> Read<'a, Self> {
        let value = object(value)?;
        if let Some((_content, after)) = leading_tag(value.get(), 0, "type", ["content"]) {
            return Self::read_content(value.get(), after).map(|(view, _)| view);
        }
        let tag = required_str(value.get_field("type"), "type")?;
        if tag.eq_str("content") {
            let [content, meta] = members(value, ["content", "_meta"])?;
            let content = required(content, "content")?;
            Ok(Self::Content {
                content: ContentBlockView::read(content).map_err(|fault| fault.at("content"))?,
                meta: lenient_object(meta),
            })
        } else if tag.eq_str("diff") {
            let [path, old_text, new_text, meta] =
                members(value, ["path", "oldText", "newText", "_meta"])?;
            Ok(Self::Diff {
                path: required_str(path, "path")?,
                old_text: lenient_str(old_text),
                new_text: required_str(new_text, "newText")?,
                meta: lenient_object(meta),
            })
        } else if tag.eq_str("terminal") {
            let [terminal_id, meta] = members(value, ["terminalId", "_meta"])?;
            Ok(Self::Terminal {
                terminal_id: required_str(terminal_id, "terminalId")?,
                meta: lenient_object(meta),
            })
        } else if tag.eq_str("session") {
            let [session_id, meta] = members(value, ["sessionId", "_meta"])?;
            Ok(Self::Session {
                session_id: required_str(session_id, "sessionId")?,
                meta: lenient_object(meta),
            })
        } else {
            // Closed union: the owned types name the object, not its tag.
            Err(Fault::here(Detail::OneOf {
                expected: &["content", "diff", "terminal", "session"],
                got: tag,
            }))
        }
    }
}

impl<'a> ToolCallContentView<'a> {
    /// [`read`](Self::read) of the item at `text[start]`, in place: one walk when its tag comes
    /// first (as every sender writes it). Returns the offset past the item, also on a fault.
    fn read_at(text: &'a str, start: usize) -> (Read<'a, Self>, usize) {
        let walked = match leading_tag(text, start, "type", ["content", "diff", "terminal"]) {
            Some((0, after)) => Self::read_content(text, after),
            Some((1, after)) => members_after(text, after, ["path", "oldText", "newText", "_meta"])
                .and_then(|([path, old_text, new_text, meta], end)| {
                    let diff = Self::Diff {
                        path: required_str(path, "path")?,
                        old_text: lenient_str(old_text),
                        new_text: required_str(new_text, "newText")?,
                        meta: lenient_object(meta),
                    };
                    Ok((diff, end))
                }),
            Some((_terminal, after)) => members_after(text, after, ["terminalId", "_meta"])
                .and_then(|([terminal_id, meta], end)| {
                    let terminal = Self::Terminal {
                        terminal_id: required_str(terminal_id, "terminalId")?,
                        meta: lenient_object(meta),
                    };
                    Ok((terminal, end))
                }),
            _ => {
                let end = skip(text, start);
                return (Self::read(span(text, start, end)), end);
            }
        };
        match walked {
            Ok((view, end)) => (Ok(view), end),
            Err(fault) => (Err(fault), skip(text, start)),
        }
    }

    /// A `type: "content"` item (tag first, its value ending at `after`) in one walk over the
    /// rest, descending into its block; returns it and the offset past it.
    fn read_content(text: &'a str, after: usize) -> Read<'a, (Self, usize)> {
        let (mut content, mut content_seen, mut meta) = (None, None, None);
        let end = walk_after(text, after, |key, at| {
            match key_name(key, &["content", "_meta"]) {
                "content" => {
                    let (block, end) =
                        ContentBlockView::read_at(text, at).map_err(|fault| fault.at("content"))?;
                    fill(&mut content_seen, "content", span(text, at, end))?;
                    content = Some(block);
                    Ok(end)
                }
                "_meta" => {
                    let end = skip(text, at);
                    fill(&mut meta, "_meta", span(text, at, end))?;
                    Ok(end)
                }
                _ => Ok(skip(text, at)),
            }
        })?;
        let view = Self::Content {
            content: content.ok_or_else(|| Fault::field("content", Detail::Required))?,
            meta: lenient_object(meta),
        };
        Ok((view, end))
    }
}

/// The `content` list of a tool call: the items that decode, in order (malformed items are
/// skipped, as the schema's skip-invalid-items mark says).
#[derive(Clone, Copy, Debug)]
pub struct ToolCallContents<'a> {
    array: Option<RawValue<'a>>,
    /// The first item, read when the array was walked (see `ToolCallMembers`).
    first: Option<FirstItem<'a>>,
}

/// The first item of a content array, `None` when it is not valid, and the offset past it
/// within the array's text.
#[derive(Clone, Copy, Debug)]
struct FirstItem<'a> {
    item: Option<ToolCallContentView<'a>>,
    end: usize,
}

impl<'a> ToolCallContents<'a> {
    fn new(array: Option<RawValue<'a>>, first: Option<FirstItem<'a>>) -> Self {
        // The first item belongs to this array only.
        let first = array.and(first);
        ToolCallContents { array, first }
    }

    /// The valid items.
    pub fn iter(&self) -> impl Iterator<Item = ToolCallContentView<'a>> + 'a {
        let (first, rest) = match (self.array, self.first) {
            (Some(array), Some(first)) => (
                first.item,
                Some(ItemsAt::after(
                    array,
                    first.end,
                    ToolCallContentView::read_at,
                )),
            ),
            (Some(array), None) => (
                None,
                Some(ItemsAt::new(array, ToolCallContentView::read_at)),
            ),
            (None, _) => (None, None),
        };
        first
            .into_iter()
            .chain(rest.into_iter().flatten().filter_map(Result::ok))
    }

    /// The array as sent (`None` when absent or not an array).
    pub fn raw(&self) -> Option<RawValue<'a>> {
        self.array
    }
}

/// Equal when the arrays are: the first item is read from the array, and only saves work.
impl PartialEq for ToolCallContents<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.array == other.array
    }
}

impl Eq for ToolCallContents<'_> {}

/// A file location a tool call touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocationView<'a> {
    /// Absolute path.
    pub path: JsonStr<'a>,
    /// 1-based line.
    pub line: Option<u32>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> LocationView<'a> {
    pub(crate) fn read(value: RawValue<'a>) -> Read<'a, Self> {
        let [path, line, meta] = members(object(value)?, ["path", "line", "_meta"])?;
        Ok(Self {
            path: required_str(path, "path")?,
            line: line
                .and_then(super::read::integer)
                .and_then(|n| u32::try_from(n).ok()),
            meta: lenient_object(meta),
        })
    }
}

/// The `locations` list of a tool call: the items that decode, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Locations<'a>(Option<RawValue<'a>>);

impl<'a> Locations<'a> {
    /// The valid items.
    pub fn iter(&self) -> impl Iterator<Item = LocationView<'a>> + 'a {
        let items = self.0.map(|array| array.elements());
        items
            .into_iter()
            .flatten()
            .filter_map(|item| LocationView::read(item).ok())
    }

    /// The array as sent (`None` when absent or not an array).
    pub fn raw(&self) -> Option<RawValue<'a>> {
        self.0
    }
}

/// Why a `session_message_chunk` has no `messageId`: absent, or not a string.
#[cold]
fn message_id_fault(update: RawValue<'_>) -> Fault<'_> {
    let detail = match update.get_field("messageId") {
        Some(_) => Detail::MustBe("a string"),
        None => Detail::Required,
    };
    Fault::field("messageId", detail)
}
