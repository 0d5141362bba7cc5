//! The string enums the views read, borrowed: closed ones refuse unknown names (with the owned
//! types' `must be one of …` message), open ones keep them as sent.
//!
//! Their names match the owned enums of [`crate::schema`] one for one (a test checks it).

use crate::wire::{JsonStr, RawValue};

use super::error::{Detail, Fault};
use super::read::Read;

macro_rules! view_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident (closed) {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
        }

        impl $name {
            /// Every name, in schema order.
            pub const NAMES: &'static [&'static str] = &[$($wire),*];

            /// The wire name.
            pub const fn as_str(&self) -> &'static str {
                match self {
                    $( Self::$variant => $wire, )*
                }
            }

            /// The variant a wire string names, if any.
            pub fn from_wire(name: JsonStr<'_>) -> Option<Self> {
                let plain = name.as_plain();
                $(
                    if plain.map_or_else(|| name.eq_str($wire), |p| p == $wire) {
                        return Some(Self::$variant);
                    }
                )*
                None
            }

            /// A required member holding one of the names.
            #[allow(dead_code)] // not every enum is read in both ways
            pub(crate) fn required<'a>(
                value: Option<RawValue<'a>>,
                key: &'static str,
            ) -> Read<'a, Self> {
                let name = super::read::required_str(value, key)?;
                Self::from_wire(name).ok_or_else(|| {
                    Fault::field(key, Detail::OneOf { expected: Self::NAMES, got: name })
                })
            }

            /// A default-on-error member: unknown names and other JSON read as absent.
            #[allow(dead_code)] // not every enum is read in both ways
            pub(crate) fn lenient(value: Option<RawValue<'_>>) -> Option<Self> {
                Self::from_wire(value?.as_str()?)
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

view_enum! {
    /// Why a turn ended.
    pub enum StopReasonView (closed) {
        /// The model finished.
        EndTurn = "end_turn",
        /// The token limit was reached.
        MaxTokens = "max_tokens",
        /// Too many model requests in one turn.
        MaxTurnRequests = "max_turn_requests",
        /// The model refused.
        Refusal = "refusal",
        /// The client cancelled the turn.
        Cancelled = "cancelled",
    }
}

view_enum! {
    /// Where a tool call is in its life.
    pub enum ToolCallStatusView (closed) {
        /// Not started yet.
        Pending = "pending",
        /// Running.
        InProgress = "in_progress",
        /// Finished successfully.
        Completed = "completed",
        /// Failed.
        Failed = "failed",
    }
}

view_enum! {
    /// What a permission option means.
    pub enum PermissionOptionKindView (closed) {
        /// Allow this once.
        AllowOnce = "allow_once",
        /// Allow from now on.
        AllowAlways = "allow_always",
        /// Refuse this once.
        RejectOnce = "reject_once",
        /// Refuse from now on.
        RejectAlways = "reject_always",
    }
}

view_enum! {
    /// A plan entry's priority.
    pub enum PlanEntryPriorityView (closed) {
        /// High.
        High = "high",
        /// Medium.
        Medium = "medium",
        /// Low.
        Low = "low",
    }
}

view_enum! {
    /// A plan entry's progress.
    pub enum PlanEntryStatusView (closed) {
        /// Not started.
        Pending = "pending",
        /// Being worked on.
        InProgress = "in_progress",
        /// Done.
        Completed = "completed",
    }
}

view_enum! {
    /// The tool kinds this version knows; see [`ToolKindView`] for the open form.
    pub enum KnownToolKind (closed) {
        /// Reading files or data.
        Read = "read",
        /// Modifying files or content.
        Edit = "edit",
        /// Removing files or data.
        Delete = "delete",
        /// Moving or renaming files.
        Move = "move",
        /// Searching for information.
        Search = "search",
        /// Running commands or code.
        Execute = "execute",
        /// Internal reasoning.
        Think = "think",
        /// Retrieving external data.
        Fetch = "fetch",
        /// Switching the session mode.
        SwitchMode = "switch_mode",
        /// Anything else (the default).
        Other = "other",
    }
}

/// What kind of work a tool call does. Open: kinds this version does not know are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolKindView<'a> {
    /// A kind this version knows.
    Known(KnownToolKind),
    /// Any other name, as sent.
    Unknown(JsonStr<'a>),
}

impl<'a> ToolKindView<'a> {
    /// A default-on-error member: any string is a kind, other JSON reads as absent.
    pub(crate) fn lenient(value: Option<RawValue<'a>>) -> Option<Self> {
        let name = value?.as_str()?;
        Some(KnownToolKind::from_wire(name).map_or(Self::Unknown(name), Self::Known))
    }
}

impl Default for ToolKindView<'_> {
    fn default() -> Self {
        Self::Known(KnownToolKind::Other)
    }
}
