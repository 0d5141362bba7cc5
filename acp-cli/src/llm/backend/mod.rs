//! The llm backend (`acp-cli --acp --stdio --backend llm`): a coding agent whose answers come
//! from an OpenAI-compatible model and whose tools are Agentao's (see the README's "The llm
//! backend").
//!
//! Sans-IO like the demo backend: a turn asks for the model's stream, the shell (the client's
//! terminal when it offers one) and the file tree through [`Step`]s the driver carries out,
//! and gets their outcome back through [`Backend::resume`]. So the whole tool loop is tested
//! with a scripted model.
//!
//! - [`context`]: the system prompt and the session's history as the model's messages.
//! - [`compact`]: how big a request is, when it is compacted, and the turn's token sums.
//! - [`instructions`]: the project's `AGENTS.md` / `AGENTAO.md` files for the system prompt.
//! - [`tools`]: the nine tools: their schemas, kinds, titles, and a call's arguments read.
//! - [`turn`]: one turn as a sequence of steps.

pub(crate) mod compact;
pub(crate) mod context;
pub(crate) mod instructions;
#[cfg(test)]
mod tests;
pub(crate) mod tools;
pub(crate) mod turn;

use acp_core::Instant;
use acp_core::schema::{AvailableCommand, AvailableCommandsUpdate, SessionUpdate};

use crate::agent::auth::Login;
use crate::agent::backend::{Backend, Reply, Step, TurnStart};
use crate::agent::tools::last_tool_number;
use crate::agent::turns::Turns;
use instructions::{ProjectFiles, RealFiles};
use turn::{LlmTurn, Shared};

/// How many answers with tool calls a turn runs before it ends `max_turn_requests`, unless
/// `--max-tool-rounds` says otherwise.
pub const DEFAULT_MAX_TOOL_ROUNDS: u32 = 50;

/// The `agentInfo.title` of the llm backend. Not the provider or model: those change with
/// `session/set_config_option` while the title stays; the session's `model` option shows them.
pub const LLM_TITLE: &str = "acp-cli (LLM agent)";

/// The llm backend: one per connection, one turn at a time per session.
#[derive(Debug)]
pub struct LlmBackend {
    turns: Turns<LlmTurn>,
    default_model: String,
    max_tool_rounds: u32,
    /// Where the project's instruction files are read (R-LLM-7).
    files: Box<dyn ProjectFiles>,
    /// Where the walk for them stops when there is no repository.
    home: Option<std::path::PathBuf>,
    /// The model takes images (R-LLM-9).
    images: bool,
    /// The credentials the agent asks about (R-AUTH-8); `None` needs no login (unit tests).
    login: Option<Box<dyn Login>>,
    /// `LLM_CONTEXT_WINDOW`, when set: the window of every model (R-LLM-USAGE-2).
    context_window: Option<u64>,
}

impl LlmBackend {
    /// A backend asking `default_model` (for sessions without a model of their own) and
    /// running at most `max_tool_rounds` answers with tool calls per turn.
    /// Instruction files are read from the real file system, the walk stopping at `$HOME`
    /// when there is no repository; image blocks are not taken.
    pub fn new(default_model: impl Into<String>, max_tool_rounds: u32) -> Self {
        let files = RealFiles::from_env();
        Self {
            turns: Turns::<LlmTurn>::default(),
            default_model: default_model.into(),
            max_tool_rounds,
            home: files.home.clone(),
            files: Box::new(files),
            images: false,
            login: None,
            context_window: None,
        }
    }

    /// The same backend passing image blocks to the model and advertising
    /// `promptCapabilities.image` (R-LLM-9): for a model that takes images.
    #[must_use]
    pub fn with_images(mut self, images: bool) -> Self {
        self.images = images;
        self
    }

    /// The same backend reading instruction files through `files`, stopping at `home`.
    #[cfg(test)]
    pub(crate) fn with_files(
        mut self,
        files: impl ProjectFiles + 'static,
        home: Option<std::path::PathBuf>,
    ) -> Self {
        self.files = Box::new(files);
        self.home = home;
        self
    }

    /// The same, requiring a login checked through `login` (R-AUTH-8).
    #[must_use]
    pub fn with_login(mut self, login: impl Login + 'static) -> Self {
        self.login = Some(Box::new(login));
        self
    }

    /// The same backend with every model's context window set to `window` tokens (from
    /// `LLM_CONTEXT_WINDOW`); `None` keeps the known windows.
    pub fn with_context_window(mut self, window: Option<u64>) -> Self {
        self.context_window = window;
        self
    }
}

impl Backend for LlmBackend {
    fn title(&self) -> &'static str {
        LLM_TITLE
    }

    fn prompt_image(&self) -> bool {
        self.images
    }

    fn login(&mut self) -> Option<&mut dyn Login> {
        self.login
            .as_deref_mut()
            .map(|login| login as &mut dyn Login)
    }

    fn start_turn(&mut self, turn: TurnStart<'_>, _now: Instant) {
        let used = last_tool_number(turn.history);
        let shared: &mut Shared = &mut self.turns.shared;
        shared.last_tool = shared.last_tool.max(used);
        let model = match turn.history.model.trim() {
            "" => self.default_model.clone(),
            model => model.to_owned(),
        };
        // Read at every turn, so an edited AGENTS.md counts from the next prompt.
        let instructions =
            instructions::gather(turn.cwd, self.files.as_ref(), self.home.as_deref());
        let window = self
            .context_window
            .unwrap_or_else(|| crate::llm::window::known_window(&model));
        let before = shared.context.get(turn.session).copied();
        self.turns.start(
            turn.session,
            LlmTurn::new(
                &turn,
                model,
                self.max_tool_rounds,
                &instructions,
                self.images,
                window,
                before,
            ),
        );
    }

    fn step(&mut self, session: &str, now: Instant) -> Step {
        self.turns.step(session, now)
    }

    fn resume(&mut self, session: &str, reply: Reply) {
        self.turns.resume(session, reply);
    }

    fn cancel(&mut self, session: &str) {
        self.turns.cancel(session);
    }

    fn mcp_tools_changed(&mut self, session: &str, tools: &[crate::mcp::McpTool]) {
        self.turns.mcp_tools_changed(session, tools);
    }

    fn forget_session(&mut self, session: &str) {
        self.turns.forget(session);
        self.turns.shared.memory.forget_session(session);
        self.turns.shared.context.remove(session);
    }

    /// The commands editors offer when the user types `/`: `/compact` (R-LLM-CONTEXT-1).
    fn session_opened(&self) -> Vec<SessionUpdate> {
        let compact = AvailableCommand::new(
            "compact",
            "Summarize the conversation so far to free the model's context window",
        );
        vec![SessionUpdate::AvailableCommandsUpdate(
            AvailableCommandsUpdate::new(vec![compact]),
        )]
    }
}
