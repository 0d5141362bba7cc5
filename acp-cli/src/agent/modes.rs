//! Session modes: the four presets Agentao offers (R-MODE-1) and the
//! permission posture each one means for tools (R-MODE-1, R-MODE-2).

use acp_core::schema::{SessionMode, SessionModeState};

/// How tools are allowed to run in a session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Posture {
    /// Tools whose kind is not `read`, `search`, `think` or `fetch` fail without asking.
    ReadOnly,
    /// The default: tools that change things ask first.
    #[default]
    WorkspaceWrite,
    /// Every tool runs without asking.
    FullAccess,
    /// Every tool fails without asking: the agent only plans.
    Plan,
}

impl Posture {
    /// The four presets, in the order they are offered.
    pub(crate) const ALL: [Self; 4] = [
        Self::ReadOnly,
        Self::WorkspaceWrite,
        Self::FullAccess,
        Self::Plan,
    ];

    /// The mode id.
    pub(crate) const fn id(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::FullAccess => "full-access",
            Self::Plan => "plan",
        }
    }

    /// The preset with this mode id (exact match); other ids are not presets.
    pub(crate) fn from_mode_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.id() == id)
    }

    /// The mode as offered in `session/new` (Agentao's names and descriptions).
    pub(crate) fn mode(self) -> SessionMode {
        let (name, description) = match self {
            Self::ReadOnly => ("Read-only", "No writes or shell."),
            Self::WorkspaceWrite => ("Workspace write", "Writes + safe shell; asks for web."),
            Self::FullAccess => ("Full access", "All tools, no prompts."),
            Self::Plan => ("Plan", "Plans only; does not execute."),
        };
        SessionMode::new(self.id(), name, description)
    }
}

/// The `modes` of a `session/new` answer: every preset, `current` active.
pub(crate) fn mode_state(current: &str) -> SessionModeState {
    let mut state = SessionModeState::default();
    state.current_mode_id = current.to_owned();
    state.available_modes = Posture::ALL.into_iter().map(Posture::mode).collect();
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_ids_round_trip_and_other_ids_are_not_presets() {
        for posture in Posture::ALL {
            assert_eq!(Posture::from_mode_id(posture.id()), Some(posture));
        }
        assert_eq!(Posture::from_mode_id("code"), None);
        assert_eq!(Posture::from_mode_id("Read-only"), None);
        assert_eq!(Posture::default(), Posture::WorkspaceWrite);
    }
}
