//! What every backend's tools share, so the demo's `/tool` and `/write` and the llm
//! backend's `write_file` obey one rule book: the session mode's verdict, the `*_always`
//! memory, the texts of a refusal, and tool call ids that never repeat a replayed one.

use acp_core::machine::permission::{PermissionMemory, RejectReason, Remembered};
use acp_core::schema::ToolKind;

use super::modes::Posture;
use crate::store::{SessionHistory, TurnItem};

/// The most `*_always` answers remembered per connection; past it the oldest is forgotten,
/// which only means that tool is asked about again.
pub(crate) const MEMORY_LIMIT: usize = 4096;

/// Remembered `*_always` answers, per session per tool.
pub(crate) type AlwaysMemory = PermissionMemory<Vec<Remembered>>;

/// A fresh memory with room for [`MEMORY_LIMIT`] answers.
pub(crate) fn always_memory() -> AlwaysMemory {
    PermissionMemory::new(Vec::new(), MEMORY_LIMIT)
}

/// Whether a tool may run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Run it without asking.
    Run,
    /// Ask the user first.
    Ask,
    /// Fail it without asking, with this text.
    Refuse(String),
}

/// What the session's mode says about a tool of `kind` (R-MODE-2): `plan` runs
/// nothing, `read-only` only looks, `full-access` never asks, `workspace-write` asks.
pub(crate) fn mode_gate(posture: Posture, kind: &ToolKind) -> Gate {
    match posture {
        Posture::Plan => {
            Gate::Refuse("Error: the session is in plan mode; tools do not run".into())
        }
        Posture::ReadOnly
            if !matches!(
                kind,
                ToolKind::Read | ToolKind::Search | ToolKind::Think | ToolKind::Fetch
            ) =>
        {
            Gate::Refuse(format!(
                "Error: the session is in read-only mode; a tool of kind '{kind}' may not run"
            ))
        }
        Posture::FullAccess => Gate::Run,
        Posture::ReadOnly | Posture::WorkspaceWrite => Gate::Ask,
    }
}

/// The mode's verdict refined by the session's `*_always` answer for `tool` (a remembered
/// `allow_always` runs, a remembered `reject_always` refuses).
pub(crate) fn gate(
    posture: Posture,
    kind: &ToolKind,
    memory: &AlwaysMemory,
    session: &str,
    tool: &str,
) -> Gate {
    match mode_gate(posture, kind) {
        Gate::Ask => match memory.recall(session, tool) {
            Some(true) => Gate::Run,
            Some(false) => Gate::Refuse(
                "Error: rejected: 'reject_always' was chosen earlier for this tool".into(),
            ),
            None => Gate::Ask,
        },
        other => other,
    }
}

/// The tool content of a refused permission.
pub(crate) fn rejection_text(reason: RejectReason) -> String {
    match reason {
        RejectReason::Chosen(option) => format!("Error: rejected by the user ({option})"),
        RejectReason::UnknownOption => {
            "Error: permission refused: the client chose an option that was not offered".into()
        }
        RejectReason::UnknownOutcome => {
            "Error: permission refused: the client's outcome is neither 'selected' nor 'cancelled'"
                .into()
        }
        RejectReason::Malformed => {
            "Error: permission refused: the client's answer could not be read".into()
        }
        RejectReason::Error(code) => {
            format!(
                "Error: permission refused: the client answered with error {}",
                code.0
            )
        }
        RejectReason::TimedOut => "Error: permission refused: no answer in time".into(),
    }
}

/// The text of a tool cut short by a cancel.
pub(crate) const CANCELLED_TEXT: &str = "Error: cancelled by user";

/// The highest `N` of the `tool-N` ids in a history: a loaded session's new tool calls
/// are numbered after it, so no id the client has seen in the replay is used again.
pub(crate) fn last_tool_number(history: &SessionHistory) -> u64 {
    history
        .turns()
        .iter()
        .flat_map(|turn| &turn.items)
        .filter_map(|item| match item {
            TurnItem::ToolCall(call) => call.tool_call_id.strip_prefix("tool-")?.parse().ok(),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_core::machine::permission::{PermissionChoice, PermissionDecision};

    #[test]
    fn modes_decide_before_memory_and_memory_before_asking() {
        let mut memory = always_memory();
        let edit = ToolKind::Edit;
        assert_eq!(
            gate(Posture::WorkspaceWrite, &edit, &memory, "s", "write_file"),
            Gate::Ask
        );
        assert_eq!(
            gate(Posture::FullAccess, &edit, &memory, "s", "write_file"),
            Gate::Run
        );
        assert_eq!(
            gate(
                Posture::ReadOnly,
                &ToolKind::Execute,
                &memory,
                "s",
                "run_shell_command"
            ),
            Gate::Refuse(
                "Error: the session is in read-only mode; a tool of kind 'execute' may not run"
                    .into()
            )
        );
        assert_eq!(
            gate(Posture::ReadOnly, &ToolKind::Search, &memory, "s", "glob"),
            Gate::Ask
        );
        assert_eq!(
            gate(Posture::Plan, &ToolKind::Read, &memory, "s", "read_file"),
            Gate::Refuse("Error: the session is in plan mode; tools do not run".into())
        );
        memory.record(
            "s",
            "write_file",
            PermissionDecision::Allowed(PermissionChoice::AllowAlways),
        );
        assert_eq!(
            gate(Posture::WorkspaceWrite, &edit, &memory, "s", "write_file"),
            Gate::Run
        );
        assert_eq!(
            gate(
                Posture::WorkspaceWrite,
                &edit,
                &memory,
                "other",
                "write_file"
            ),
            Gate::Ask,
            "remembered per session"
        );
        memory.record(
            "s",
            "replace",
            PermissionDecision::Rejected(RejectReason::Chosen(PermissionChoice::RejectAlways)),
        );
        assert_eq!(
            gate(Posture::WorkspaceWrite, &edit, &memory, "s", "replace"),
            Gate::Refuse(
                "Error: rejected: 'reject_always' was chosen earlier for this tool".into()
            )
        );
    }
}
