//! What a client connection is told at creation: who it is, what it serves, its limits and
//! its deadlines.

use core::time::Duration;

use crate::conn::transport::REPLY_RESERVE;

/// The agent → client methods the application answers. They are advertised in `initialize`
/// (`clientCapabilities`); a request for a method not served is answered `-32601` by the
/// connection at once, so the agent never waits on silence (Agentao never answers them: its
/// bug 16).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Serves {
    /// `fs/read_text_file` (`fs.readTextFile`).
    pub fs_read: bool,
    /// `fs/write_text_file` (`fs.writeTextFile`).
    pub fs_write: bool,
    /// `terminal/*` (`terminal`).
    pub terminal: bool,
    /// `_agentao.cn/ask_user`, listed in `clientCapabilities._meta["_agentao.cn/extensions"]`.
    pub ask_user: bool,
    /// `elicitation/create` in form mode (`elicitation.form`).
    pub elicitation: bool,
    /// Requests for methods this crate does not know are handed to the application instead
    /// of being answered `-32601`.
    pub extension_methods: bool,
    /// The application can run an agent's `terminal` auth method for the user (spawn the
    /// agent command with the method's `args` and `env` in the user's terminal):
    /// `clientCapabilities.auth.terminal: true`, so agents may offer such methods (R-AUTH-7).
    /// Not a method the connection answers: [`Serves::EVERYTHING`] leaves it off.
    pub terminal_auth: bool,
}

impl Serves {
    /// Serves nothing but `session/request_permission` (which every client must answer).
    pub const NOTHING: Self = Self {
        fs_read: false,
        fs_write: false,
        terminal: false,
        ask_user: false,
        elicitation: false,
        extension_methods: false,
        terminal_auth: false,
    };

    /// Serves every method this crate knows (and no extension methods, no terminal auth).
    pub const EVERYTHING: Self = Self {
        fs_read: true,
        fs_write: true,
        terminal: true,
        ask_user: true,
        elicitation: true,
        extension_methods: false,
        terminal_auth: false,
    };
}

/// The update kinds the application shows that an agent sends only when told so
/// (`clientCapabilities.plan`, `.subagents`, `.session.notices`, `.session.compaction`). Every
/// other update kind needs no capability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shows {
    /// `plan_update` and `plan_removed` (`plan`).
    pub plans: bool,
    /// `subagent_update`, `session_message` and `session_message_chunk` (`subagents`).
    pub subagents: bool,
    /// `notice` (`session.notices`).
    pub notices: bool,
    /// `compaction_update` and `compaction_summary_chunk` (`session.compaction`).
    pub compaction: bool,
}

impl Shows {
    /// Advertises none of them: agents keep to the updates every client gets.
    pub const NOTHING: Self = Self {
        plans: false,
        subagents: false,
        notices: false,
        compaction: false,
    };

    /// Advertises all of them.
    pub const EVERYTHING: Self = Self {
        plans: true,
        subagents: true,
        notices: true,
        compaction: true,
    };
}

/// The settings of a [`ClientConnection`](super::ClientConnection).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    /// `clientInfo.name` (Agentao sends no `clientInfo` at all: its bug 23).
    pub name: &'static str,
    /// `clientInfo.title`, when set.
    pub title: Option<&'static str>,
    /// `clientInfo.version`.
    pub version: &'static str,
    /// What the application answers.
    pub serves: Serves,
    /// The update kinds the application shows that need a capability. Default: none.
    pub shows: Shows,
    /// Deadline of every request but `session/prompt` (`initialize`, `session/new`, …);
    /// `None` waits until the answer, a cancel or EOF. Default 30 s, as Agentao's client (R-RPC-2).
    pub request_timeout: Option<Duration>,
    /// Deadline of a prompt turn: when it passes, `session/cancel` is sent and the turn ends
    /// [`TurnOutcome::TimedOut`](super::TurnOutcome::TimedOut). Default 60 s (Agentao's
    /// `requestTimeoutMs`).
    pub prompt_timeout: Option<Duration>,
    /// The longest line accepted from the agent, newline excluded (clamped to the input
    /// storage). Default 16 MiB.
    pub max_line: usize,
    /// The most bytes waiting in the outbox (clamped to the output storage). Default 16 MiB.
    pub outbox_limit: usize,
    /// Pending output above which [`crate::conn::transport::Outbox::has_room_for_updates`]
    /// says to pause. Default 1 MiB.
    pub high_water: usize,
    /// The most sessions open at once (clamped to the storage). Default 64.
    pub max_sessions: usize,
    /// The most requests in flight in each direction (clamped to the storage). Default 256.
    pub max_in_flight: usize,
}

impl ClientConfig {
    /// A configuration with the defaults above, named `name` at `version`, serving `serves`.
    pub const fn new(name: &'static str, version: &'static str, serves: Serves) -> Self {
        Self {
            name,
            title: None,
            version,
            serves,
            shows: Shows::NOTHING,
            request_timeout: Some(Duration::from_secs(30)),
            prompt_timeout: Some(Duration::from_secs(60)),
            max_line: 16 * 1024 * 1024,
            outbox_limit: 16 * 1024 * 1024,
            high_water: 1024 * 1024,
            max_sessions: 64,
            max_in_flight: 256,
        }
    }

    /// The outbox limit actually used: never below what one reply needs.
    pub(crate) fn outbox_limit(&self) -> usize {
        self.outbox_limit.max(REPLY_RESERVE * 2)
    }
}
