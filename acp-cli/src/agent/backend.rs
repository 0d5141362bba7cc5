//! The one interface every agent backend sits behind, so the driver never knows which one
//! runs: the scripted demo (`crate::demo`) or the model (`crate::llm::backend`).
//!
//! A backend is sans-IO. The application starts a turn, then calls [`Backend::step`] and does
//! what each [`Step`] asks: send an update, send a request and wait, sleep, end the turn.
//! Whatever needs the outside world (the client's answers, a file, the clock) comes back
//! through [`Backend::resume`] or the `now` of the next step. So a turn runs the same on real
//! pipes and in a unit test with a fake clock and fake file results.

use acp_core::Instant;
use acp_core::machine::permission::PermissionDecision;
use acp_core::machine::turn::StopReason;
use acp_core::schema::{
    ContentBlock, SessionUpdate, TerminalExitStatus, TerminalOutputResponse, ToolCallUpdate,
};

use super::modes::Posture;
use crate::mcp::{CallResult, McpTool};
use crate::model::chat::{ChatRequest, Finished, ModelError, StreamEvent};
use crate::store::SessionHistory;

/// What the client said it can do for the agent's files (`clientCapabilities.fs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientFs {
    /// The client serves `fs/read_text_file`.
    pub read: bool,
    /// The client serves `fs/write_text_file`.
    pub write: bool,
}

/// Who carries out a file operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsVia {
    /// The client, through `fs/read_text_file` / `fs/write_text_file`.
    Client,
    /// The agent itself, confined to the session's cwd (symlinks resolved).
    Local,
}

/// Everything a backend needs to start one turn.
#[derive(Clone, Copy, Debug)]
pub struct TurnStart<'a> {
    /// The session.
    pub session: &'a str,
    /// The session's working directory (absolute, as the client sent it).
    pub cwd: &'a str,
    /// The session's `additionalDirectories`: absolute directories that count as inside the
    /// session, like the cwd.
    pub additional_directories: &'a [String],
    /// The client's `systemPrompt` text (append mode), if it gave one.
    pub system_prompt: Option<&'a str>,
    /// The session's permission posture (its mode); it cannot change during a turn.
    pub posture: Posture,
    /// The client's file capabilities.
    pub client_fs: ClientFs,
    /// The client serves `terminal/*` (`clientCapabilities.terminal`): the shell runs there.
    pub client_terminal: bool,
    /// The client renders `plan_update` and `plan_removed` (`clientCapabilities.plan`):
    /// only then may a backend send them (R-TURN-6).
    pub client_plan: bool,
    /// The prompt's content blocks.
    pub prompt: &'a [ContentBlock],
    /// The session's history so far: its finished turns (saved or loaded), then this one.
    /// Its `model` is the session's current model.
    pub history: &'a SessionHistory,
    /// The tools of the session's MCP servers that started (R-MCP-6).
    pub mcp_tools: &'a [McpTool],
}

/// What the turn wants done next.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Send this `session/update`, then step again.
    Update(SessionUpdate),
    /// Send `session/request_permission` for this tool call and [`Backend::resume`] with
    /// [`Reply::Permission`].
    RequestPermission(ToolCallUpdate),
    /// Send `_agentao.cn/ask_user` with this question and resume with [`Reply::Answer`].
    AskUser(String),
    /// Read the text file at this absolute path and resume with [`Reply::FileRead`].
    ReadFile {
        /// Absolute path, inside the session cwd.
        path: String,
        /// Who reads it.
        via: FsVia,
    },
    /// Write exactly `content` to this absolute path and resume with [`Reply::FileWritten`].
    WriteFile {
        /// Absolute path, inside the session cwd.
        path: String,
        /// The whole new content.
        content: String,
        /// Who writes it.
        via: FsVia,
    },
    /// Nothing to do before this instant: step again then (or after a cancel).
    SleepUntil(Instant),
    /// Waiting for a [`Reply`] (or there is no turn).
    Waiting,
    /// The turn is over: answer the prompt with this stop reason.
    End(StopReason),
    /// The turn's token usage, for the answer of its prompt (`PromptResponse.usage`,
    /// R-LLM-USAGE-3): handed out just before [`Step::End`]; step again.
    TurnUsage(acp_core::schema::Usage),
    /// The turn failed: answer the prompt with `-32603` and this text.
    Fail(String),
    /// The turn failed with its own JSON-RPC error: answer the prompt with exactly this code
    /// and message (`-32000 Authentication required: …`).
    FailWith {
        /// The error code.
        code: i32,
        /// The message, sent as is.
        message: String,
    },
    /// Stream one completion from the model: resume with any number of
    /// [`Reply::ModelEvent`]s, then one [`Reply::ModelDone`].
    CallModel(ChatRequest),
    /// Run a shell command in `cwd` (a local child in its own process group, killed on cancel
    /// or after `timeout_ms`) and resume with [`Reply::ShellDone`]. Only when the client has
    /// no terminal; else the turn drives the client's through [`Step::Terminal`].
    RunShell {
        /// The command line, run by `/bin/sh -c`.
        command: String,
        /// Absolute working directory, inside the session.
        cwd: String,
        /// How long it may run.
        timeout_ms: u64,
    },
    /// Look at the file tree (list, glob, search) and resume with [`Reply::Explored`].
    Explore(Explore),
    /// Send this `terminal/*` request to the client, then step again at once: the turn says
    /// itself when it waits ([`Step::Waiting`], or [`Step::SleepUntil`] a command's
    /// deadline). Create, wait and output are answered with [`Reply::TerminalCreated`],
    /// [`Reply::TerminalExited`] and [`Reply::TerminalOutput`]; kill and release are sent and
    /// forgotten.
    Terminal(TerminalCall),
    /// Call a tool of one of the session's MCP servers and resume with [`Reply::McpDone`];
    /// a cancel of the turn cancels the call on the server (R-MCP-7).
    McpCall {
        /// The server's name.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The arguments.
        arguments: serde_json::Value,
    },
}

/// A request to the client's terminals (only sent when it advertised `terminal`, R-FS-1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TerminalCall {
    /// `terminal/create`: run `command` with `args` in `cwd`.
    Create {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Absolute working directory.
        cwd: String,
        /// The most output bytes the client keeps (it drops the start beyond).
        output_byte_limit: u64,
    },
    /// `terminal/wait_for_exit`.
    WaitForExit {
        /// The terminal.
        terminal_id: String,
    },
    /// `terminal/output`.
    Output {
        /// The terminal.
        terminal_id: String,
    },
    /// `terminal/kill`: the command stops, the terminal stays.
    Kill {
        /// The terminal.
        terminal_id: String,
    },
    /// `terminal/release`: the client may forget the terminal.
    Release {
        /// The terminal.
        terminal_id: String,
    },
}

/// A read-only look at the local file tree, confined to `roots` after resolving symlinks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explore {
    /// The directories the look may reach: the session cwd first (relative results are shown
    /// against it).
    pub roots: Vec<String>,
    /// What to do.
    pub what: ExploreKind,
}

/// The three looks the llm backend's tools take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExploreKind {
    /// `list_directory`: the entries of one directory (absolute path).
    List {
        /// The directory.
        path: String,
    },
    /// `glob`: files under `base` whose path relative to it matches `pattern`.
    Glob {
        /// A glob (`**/*.rs`).
        pattern: String,
        /// The directory searched (absolute).
        base: String,
    },
    /// `search_file_content`: lines matching a regex in the files under `base`.
    Search {
        /// A regular expression.
        pattern: String,
        /// The directory (or file) searched (absolute).
        base: String,
        /// Only files whose name or relative path matches this glob.
        include: Option<String>,
    },
}

/// How a shell command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellOutcome {
    /// The exit code; `None` when a signal ended it (a timeout included).
    pub exit_code: Option<i32>,
    /// stdout and stderr as they came, cut at the output limit.
    pub output: String,
    /// Whether output beyond the limit was dropped (its end locally, its start by a client's
    /// terminal).
    pub truncated: bool,
    /// Whether it was killed for running past its timeout.
    pub timed_out: bool,
}

/// The outcome of a request a [`Step`] asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The permission decision (the `*_always` memory is the backend's business).
    Permission(PermissionDecision),
    /// The user's answer, or the sentinel `(user unavailable)`.
    Answer(String),
    /// The file's text, or why it could not be read.
    FileRead(Result<String, String>),
    /// The file was written, or why not.
    FileWritten(Result<(), String>),
    /// A piece of the model's answer, as soon as it arrived.
    ModelEvent(StreamEvent),
    /// The model's answer is complete, or failed.
    ModelDone(Result<Finished, ModelError>),
    /// The shell command ended, or could not start.
    ShellDone(Result<ShellOutcome, String>),
    /// The look at the file tree, as text for the model, or why it failed.
    Explored(Result<String, String>),
    /// `terminal/create` answered: the terminal's id, or why there is none.
    TerminalCreated(Result<String, String>),
    /// `terminal/wait_for_exit` answered: how the command ended, or why it is not known.
    TerminalExited(Result<TerminalExitStatus, String>),
    /// `terminal/output` answered: the output (and whether its start was cut), or why not.
    TerminalOutput(Result<TerminalOutputResponse, String>),
    /// The MCP tool answered (its result may still be an error result), or why the call
    /// failed (the server is gone, it answered a JSON-RPC error).
    McpDone(Result<CallResult, String>),
}

/// An agent backend: turns prompts into steps. One instance serves every session of a
/// connection; sessions are told apart by id, and each runs at most one turn at a time.
pub trait Backend {
    /// The `agentInfo.title` `initialize` answers with: it names the backend, stays the same
    /// for the whole run and carries no secret.
    fn title(&self) -> &'static str;

    /// Starts a turn for `turn.session` (the connection guarantees none is running).
    fn start_turn(&mut self, turn: TurnStart<'_>, now: Instant);

    /// The next thing the session's turn wants done. Call it again after doing it.
    fn step(&mut self, session: &str, now: Instant) -> Step;

    /// Hands the turn the outcome of the request it waited for.
    fn resume(&mut self, session: &str, reply: Reply);

    /// The client cancelled the turn: it ends `cancelled` at its next step, without waiting
    /// for anything.
    fn cancel(&mut self, session: &str);

    /// The session is gone: drop everything kept for it.
    fn forget_session(&mut self, session: &str);

    /// The session's MCP tools changed (a server listed them again, R-MCP-5): a running
    /// turn offers `tools` from its next step on.
    fn mcp_tools_changed(&mut self, _session: &str, _tools: &[McpTool]) {}

    /// What to tell the client about a session as soon as it is open (after the
    /// `session/new`, `session/load` or `session/resume` answer): for the demo, the
    /// `available_commands_update` editors offer when the user types `/`.
    fn session_opened(&self) -> Vec<SessionUpdate> {
        Vec::new()
    }

    /// Whether image prompt blocks reach the model, so `promptCapabilities.image` is
    /// advertised (R-LLM-9). Fixed for the whole run.
    fn prompt_image(&self) -> bool {
        false
    }

    /// The backend's credentials, when it needs a login to work (R-AUTH-8): the agent then
    /// offers auth methods and requires authentication before sessions. `None` (the demo)
    /// offers none and is always logged in.
    fn login(&mut self) -> Option<&mut dyn super::auth::Login> {
        None
    }
}
