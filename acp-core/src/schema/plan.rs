//! The agent's plan: `sessionUpdate: "plan"`.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::lenient::{self, Meta, string_enum};

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
