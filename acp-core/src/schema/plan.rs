//! The agent's plans: `plan` (the single, whole plan), and `plan_update` / `plan_removed` (plans by id).

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::lenient::{self, Meta, string_enum};
use super::tagged::tagged_union;

/// The whole plan; each update replaces the previous one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Plan {
    /// The entries, in order.
    #[serde(deserialize_with = "lenient::required_skip_invalid")]
    pub entries: Vec<PlanEntry>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// One task of the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PlanEntry {
    /// What the task is.
    pub content: String,
    /// How important it is.
    pub priority: PlanEntryPriority,
    /// Where it stands.
    pub status: PlanEntryStatus,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl PlanEntry {
    /// An entry with no extension data.
    pub fn new(
        content: impl Into<String>,
        priority: PlanEntryPriority,
        status: PlanEntryStatus,
    ) -> Self {
        Self {
            content: content.into(),
            priority,
            status,
            meta: None,
        }
    }
}

string_enum! {
    /// A plan entry's priority.
    pub enum PlanEntryPriority (closed) {
        /// High.
        High = "high",
        /// Medium.
        Medium = "medium",
        /// Low.
        Low = "low",
    }
}

string_enum! {
    /// A plan entry's progress.
    pub enum PlanEntryStatus (closed) {
        /// Not started.
        Pending = "pending",
        /// Being worked on.
        InProgress = "in_progress",
        /// Done.
        Completed = "completed",
    }
}

/// `sessionUpdate: "plan_update"`: one plan, by id, replacing the plan with that id (an agent
/// may keep several). Supersedes the single `plan` update for clients that advertise
/// `clientCapabilities.plan`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PlanUpdate {
    /// The plan, as entries or as Markdown.
    pub plan: PlanUpdateContent,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl PlanUpdate {
    /// An update carrying `plan`.
    pub fn new(plan: PlanUpdateContent) -> Self {
        Self { plan, meta: None }
    }
}

/// A plan's body, discriminated by `type`. Forms this version does not know are kept in
/// [`PlanUpdateContent::Unknown`] (the official crate refuses them; we keep them so a proxy
/// passes them on and a client can say it cannot show them).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PlanUpdateContent {
    /// `type: "items"`: a checklist.
    Items(PlanItems),
    /// `type: "markdown"`: free Markdown.
    Markdown(PlanMarkdown),
    /// A form this version does not know: the whole object, tag included.
    Unknown(Meta),
}

tagged_union!(PlanUpdateContent, "type", {
    Items(PlanItems) = "items",
    Markdown(PlanMarkdown) = "markdown",
}, unknown = Unknown);

impl PlanUpdateContent {
    /// The plan's id (`None` for an unknown form without a string `planId`).
    pub fn plan_id(&self) -> Option<&str> {
        match self {
            Self::Items(items) => Some(&items.plan_id),
            Self::Markdown(markdown) => Some(&markdown.plan_id),
            Self::Unknown(object) => object.get("planId").and_then(|id| id.as_str()),
        }
    }
}

/// `type: "items"`: a plan as a checklist.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PlanItems {
    /// Which plan this replaces.
    pub plan_id: String,
    /// The entries, in order.
    #[serde(deserialize_with = "lenient::required_skip_invalid")]
    pub entries: Vec<PlanEntry>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl PlanItems {
    /// The checklist `entries` for plan `plan_id`.
    pub fn new(plan_id: impl Into<String>, entries: Vec<PlanEntry>) -> Self {
        Self {
            plan_id: plan_id.into(),
            entries,
            meta: None,
        }
    }
}

/// `type: "markdown"`: a plan as Markdown, optionally backed by a file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PlanMarkdown {
    /// Which plan this replaces.
    pub plan_id: String,
    /// The Markdown text.
    pub content: String,
    /// The file the plan lives in, when there is one.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub path: Option<String>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl PlanMarkdown {
    /// The Markdown `content` for plan `plan_id`.
    pub fn new(plan_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            plan_id: plan_id.into(),
            content: content.into(),
            path: None,
            meta: None,
        }
    }
}

/// `sessionUpdate: "plan_removed"`: the plan with this id is gone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PlanRemoved {
    /// The plan removed.
    pub plan_id: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

impl PlanRemoved {
    /// Removes plan `plan_id`.
    pub fn new(plan_id: impl Into<String>) -> Self {
        Self {
            plan_id: plan_id.into(),
            meta: None,
        }
    }
}
