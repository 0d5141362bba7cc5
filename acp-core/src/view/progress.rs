//! `session/update` kinds a client shows beside the conversation, borrowed: the plan (`plan`)
//! and plans by id (`plan_update`, `plan_removed`), the session's title (`session_info_update`), context use
//! and cost (`usage_update`) and notices (`notice`). Each is read from its members with the
//! owned types' rules; none is on the hot path of a turn.

use crate::wire::json::ValueKind;
use crate::wire::{JsonStr, RawValue};

use super::enums::{PlanEntryPriorityView, PlanEntryStatusView};
use super::error::{Detail, Fault};
use super::read::{
    Read, lenient_object, lenient_str, members, object, required_array, required_object,
    required_str,
};

/// `plan_update`: one plan, by id, replacing the plan with that id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanUpdateView<'a> {
    /// The plan's body.
    pub plan: PlanBodyView<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

/// A plan's body, discriminated by `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanBodyView<'a> {
    /// `type: "items"`: a checklist.
    Items {
        /// Which plan this replaces.
        plan_id: JsonStr<'a>,
        /// The entries array as sent; see [`PlanBodyView::entries`].
        entries: RawValue<'a>,
        /// Extension data, when an object.
        meta: Option<RawValue<'a>>,
    },
    /// `type: "markdown"`: free Markdown.
    Markdown {
        /// Which plan this replaces.
        plan_id: JsonStr<'a>,
        /// The Markdown text.
        content: JsonStr<'a>,
        /// The file the plan lives in, when a string.
        path: Option<JsonStr<'a>>,
        /// Extension data, when an object.
        meta: Option<RawValue<'a>>,
    },
    /// A form this version does not know: the whole object, tag included.
    Unknown(RawValue<'a>),
}

impl<'a> PlanUpdateView<'a> {
    pub(crate) fn read(update: RawValue<'a>) -> Read<'a, Self> {
        let [plan, meta] = members(update, ["plan", "_meta"])?;
        let plan = required_object(plan, "plan")?;
        Ok(Self {
            plan: PlanBodyView::read(plan).map_err(|fault| fault.at("plan"))?,
            meta: lenient_object(meta),
        })
    }
}

impl<'a> PlanBodyView<'a> {
    fn read(plan: RawValue<'a>) -> Read<'a, Self> {
        let tag = required_str(plan.get_field("type"), "type")?;
        if tag.eq_str("items") {
            let [plan_id, entries, meta] = members(plan, ["planId", "entries", "_meta"])?;
            Ok(Self::Items {
                plan_id: required_str(plan_id, "planId")?,
                entries: required_array(entries, "entries", "a JSON array")?,
                meta: lenient_object(meta),
            })
        } else if tag.eq_str("markdown") {
            let [plan_id, content, path, meta] =
                members(plan, ["planId", "content", "path", "_meta"])?;
            Ok(Self::Markdown {
                plan_id: required_str(plan_id, "planId")?,
                content: required_str(content, "content")?,
                path: lenient_str(path),
                meta: lenient_object(meta),
            })
        } else {
            Ok(Self::Unknown(plan))
        }
    }

    /// The plan's id (`None` for an unknown form without a string `planId`).
    pub fn plan_id(&self) -> Option<JsonStr<'a>> {
        match self {
            Self::Items { plan_id, .. } | Self::Markdown { plan_id, .. } => Some(*plan_id),
            Self::Unknown(raw) => raw.get_field("planId").and_then(|id| id.as_str()),
        }
    }

    /// The checklist entries that decode, in order (malformed entries are skipped); none for
    /// the other forms.
    pub fn entries(&self) -> impl Iterator<Item = PlanEntryView<'a>> + 'a {
        let entries = match self {
            Self::Items { entries, .. } => Some(entries.elements()),
            _ => None,
        };
        entries
            .into_iter()
            .flatten()
            .filter_map(|item| PlanEntryView::read(item).ok())
    }
}

/// `plan_removed`: the plan with this id is gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanRemovedView<'a> {
    /// The plan removed.
    pub plan_id: JsonStr<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> PlanRemovedView<'a> {
    pub(crate) fn read(update: RawValue<'a>) -> Read<'a, Self> {
        let [plan_id, meta] = members(update, ["planId", "_meta"])?;
        Ok(Self {
            plan_id: required_str(plan_id, "planId")?,
            meta: lenient_object(meta),
        })
    }
}

/// `session_info_update`: a patch. `None` keeps the field, `Some(None)` clears it (`null`),
/// `Some(Some(text))` sets it; a value that is neither string nor `null` reads as absent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionInfoUpdateView<'a> {
    /// The session's title.
    pub title: Option<Option<JsonStr<'a>>>,
    /// When the session last changed (ISO 8601).
    pub updated_at: Option<Option<JsonStr<'a>>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> SessionInfoUpdateView<'a> {
    pub(crate) fn read(update: RawValue<'a>) -> Read<'a, Self> {
        let [title, updated_at, meta] = members(update, ["title", "updatedAt", "_meta"])?;
        Ok(Self {
            title: patch_str(title),
            updated_at: patch_str(updated_at),
            meta: lenient_object(meta),
        })
    }
}

/// A patched string: `null` clears, a string sets, anything else is absent.
fn patch_str(value: Option<RawValue<'_>>) -> Option<Option<JsonStr<'_>>> {
    let value = value?;
    if value.is_null() {
        Some(None)
    } else {
        value.as_str().map(Some)
    }
}

/// `usage_update`: how much of the context window is used, and what the session cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UsageUpdateView<'a> {
    /// Tokens in context.
    pub used: u64,
    /// The context window's size, in tokens.
    pub size: u64,
    /// The cost so far, when well-formed.
    pub cost: Option<CostView<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

/// An amount of money.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CostView<'a> {
    /// The amount, as the number was written (views do not parse floats).
    pub amount: RawValue<'a>,
    /// ISO 4217 code, e.g. `USD`.
    pub currency: JsonStr<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> UsageUpdateView<'a> {
    pub(crate) fn read(update: RawValue<'a>) -> Read<'a, Self> {
        let [used, size, cost, meta] = members(update, ["used", "size", "cost", "_meta"])?;
        Ok(Self {
            used: required_u64(used, "used")?,
            size: required_u64(size, "size")?,
            cost: cost.and_then(CostView::lenient),
            meta: lenient_object(meta),
        })
    }
}

impl<'a> CostView<'a> {
    /// A default-on-error cost: `None` unless an object with a numeric `amount` and a string
    /// `currency`.
    fn lenient(value: RawValue<'a>) -> Option<Self> {
        let [amount, currency, meta] =
            members(object(value).ok()?, ["amount", "currency", "_meta"]).ok()?;
        let amount = amount.filter(|a| a.kind() == ValueKind::Number)?;
        Some(Self {
            amount,
            currency: currency?.as_str()?,
            meta: lenient_object(meta),
        })
    }
}

/// A required unsigned 64-bit integer.
fn required_u64<'a>(value: Option<RawValue<'a>>, key: &'static str) -> Read<'a, u64> {
    let value = value.ok_or_else(|| Fault::field(key, Detail::Required))?;
    value
        .as_u64()
        .ok_or_else(|| Fault::field(key, Detail::MustBe("an unsigned 64-bit integer")))
}

/// `notice`: something the user should see outside the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NoticeView<'a> {
    /// How serious it is, as sent: `info`, `warning`, `error` or a name this version does not
    /// know (kept, as the owned `NoticeSeverity` keeps it).
    pub severity: JsonStr<'a>,
    /// A short title.
    pub title: JsonStr<'a>,
    /// Details, when a string.
    pub description: Option<JsonStr<'a>>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> NoticeView<'a> {
    pub(crate) fn read(update: RawValue<'a>) -> Read<'a, Self> {
        let [severity, title, description, meta] =
            members(update, ["severity", "title", "description", "_meta"])?;
        Ok(Self {
            severity: required_str(severity, "severity")?,
            title: required_str(title, "title")?,
            description: lenient_str(description),
            meta: lenient_object(meta),
        })
    }
}

/// `plan`: the whole plan, replacing the previous one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanView<'a> {
    entries: RawValue<'a>,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> PlanView<'a> {
    pub(super) fn read(update: RawValue<'a>) -> Read<'a, Self> {
        let [entries, meta] = members(update, ["entries", "_meta"])?;
        Ok(Self {
            entries: required_array(entries, "entries", "a JSON array")?,
            meta: lenient_object(meta),
        })
    }

    /// The entries array as sent.
    pub fn raw_entries(&self) -> RawValue<'a> {
        self.entries
    }

    /// The entries that decode, in order (malformed entries are skipped).
    pub fn entries(&self) -> impl Iterator<Item = PlanEntryView<'a>> + 'a {
        self.entries
            .elements()
            .filter_map(|item| PlanEntryView::read(item).ok())
    }
}

/// One task of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanEntryView<'a> {
    /// What the task is.
    pub content: JsonStr<'a>,
    /// How important it is.
    pub priority: PlanEntryPriorityView,
    /// Where it stands.
    pub status: PlanEntryStatusView,
    /// Extension data, when an object.
    pub meta: Option<RawValue<'a>>,
}

impl<'a> PlanEntryView<'a> {
    pub(crate) fn read(value: RawValue<'a>) -> Read<'a, Self> {
        let [content, priority, status, meta] =
            members(object(value)?, ["content", "priority", "status", "_meta"])?;
        Ok(Self {
            content: required_str(content, "content")?,
            priority: PlanEntryPriorityView::required(priority, "priority")?,
            status: PlanEntryStatusView::required(status, "status")?,
            meta: lenient_object(meta),
        })
    }
}
