//! What an [`AgentConnection`](super::AgentConnection) is built from: who the agent is, what it
//! supports, and how much memory it may use.
//!
//! Everything here is plain data with fixed-size strings, so a configuration can be built
//! without an allocator (and as a `const` on a microcontroller).

use core::time::Duration;

use super::auth::{AuthMethodList, AuthMethodSpec, AuthRefused};
use crate::machine::handshake::Capabilities;

/// Longest extension method name kept in the configuration.
pub const EXTENSION_NAME_MAX: usize = 64;
/// Longest extension description kept in the configuration.
pub const EXTENSION_DESCRIPTION_MAX: usize = 128;
/// Most extension methods a configuration lists.
pub const EXTENSIONS_MAX: usize = 8;

/// `agentInfo` of the `initialize` answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentInfo {
    /// `name`: the programmatic name.
    pub name: heapless::String<64>,
    /// `title`: the name shown to people.
    pub title: heapless::String<64>,
    /// `version`.
    pub version: heapless::String<32>,
}

impl AgentInfo {
    /// An identity; each text is cut to its capacity (64, 64 and 32 bytes) at a char boundary.
    pub fn new(name: &str, title: &str, version: &str) -> Self {
        Self {
            name: truncated(name),
            title: truncated(title),
            version: truncated(version),
        }
    }
}

/// Copies the longest prefix of `text` that fits `N` bytes without splitting a character.
pub(crate) fn truncated<const N: usize>(text: &str) -> heapless::String<N> {
    let mut end = text.len().min(N);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    heapless::String::try_from(&text[..end]).unwrap_or_default()
}

/// What the application really supports: the `agentCapabilities` of the `initialize` answer,
/// and the rules the connection enforces from them (prompt content, MCP transports, which
/// v1 methods are served).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AgentFeatures {
    /// `loadSession`: `session/load` is served.
    pub load_session: bool,
    /// `promptCapabilities.image`.
    pub prompt_image: bool,
    /// `promptCapabilities.audio`.
    pub prompt_audio: bool,
    /// `promptCapabilities.embeddedContext` (`resource` blocks).
    pub prompt_embedded_context: bool,
    /// `mcpCapabilities.http`.
    pub mcp_http: bool,
    /// `mcpCapabilities.sse`.
    pub mcp_sse: bool,
    /// `sessionCapabilities.list`: `session/list` is served.
    pub session_list: bool,
    /// `sessionCapabilities.resume`: `session/resume` is served.
    pub session_resume: bool,
    /// `sessionCapabilities.close`: `session/close` is served.
    pub session_close: bool,
    /// `sessionCapabilities.delete`: `session/delete` is served.
    pub session_delete: bool,
    /// `sessionCapabilities.additionalDirectories`: the application honours
    /// `additionalDirectories` on `session/new`, `load` and `resume`.
    pub additional_directories: bool,
    /// `sessionCapabilities.systemPrompt` (append mode): `systemPrompt` is accepted on
    /// `session/new`, `load` and `resume`; without it the connection refuses the field
    /// with `-32602`.
    pub system_prompt: bool,
    /// `auth.logout`: `logout` is served (handed over as
    /// [`AgentEvent::Logout`](crate::conn::agent::AgentEvent::Logout)); without it `logout`
    /// is `-32601` (R-AUTH-5).
    pub logout: bool,
    /// `_agentao.cn/set_model` is served and listed under `_meta`.
    pub set_model: bool,
    /// `_agentao.cn/ask_user` is listed under `_meta` (the agent may ask the user).
    pub ask_user: bool,
}

impl AgentFeatures {
    /// The flags the connection's machines act on.
    pub const fn capabilities(&self) -> Capabilities {
        Capabilities::empty()
            .with(Capabilities::LOAD_SESSION, self.load_session)
            .with(Capabilities::PROMPT_IMAGE, self.prompt_image)
            .with(Capabilities::PROMPT_AUDIO, self.prompt_audio)
            .with(
                Capabilities::PROMPT_EMBEDDED_CONTEXT,
                self.prompt_embedded_context,
            )
            .with(Capabilities::MCP_HTTP, self.mcp_http)
            .with(Capabilities::MCP_SSE, self.mcp_sse)
            .with(Capabilities::ASK_USER, self.ask_user)
            .with(Capabilities::SET_MODEL, self.set_model)
    }
}

/// An extension method the application serves (`_vendor/method`): its requests are handed
/// over as [`AgentEvent::Request`](crate::conn::agent::AgentEvent::Request) instead of being answered `-32601`, and it is listed under
/// `_meta["_agentao.cn/extensions"]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extension {
    /// The method name; must start with `_`.
    pub method: heapless::String<EXTENSION_NAME_MAX>,
    /// A one-line description for the list.
    pub description: heapless::String<EXTENSION_DESCRIPTION_MAX>,
}

/// Memory and time limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest peer line, newline excluded (clamped to fixed input storage).
    pub max_line: usize,
    /// Most bytes waiting in the outbox (clamped to fixed output storage).
    pub outbox_limit: usize,
    /// Above this many pending bytes [`send_update`](super::AgentConnection::send_update)
    /// refuses with [`UsageError::WouldBlock`](crate::machine::UsageError::WouldBlock).
    pub outbox_high_water: usize,
    /// Most live sessions.
    pub max_sessions: usize,
    /// Most peer requests owed an answer at once.
    pub max_owed: usize,
    /// Most requests of ours in flight at once.
    pub max_pending: usize,
    /// Default deadline of `session/request_permission` (`None`: wait until cancel or EOF).
    pub permission_timeout: Option<Duration>,
    /// Default deadline of `_agentao.cn/ask_user`.
    pub ask_user_timeout: Option<Duration>,
    /// Default deadline of `fs/*`, `terminal/*` and `elicitation/create`.
    pub request_timeout: Option<Duration>,
}

impl Default for Limits {
    /// 16 MiB lines, a 64 MiB outbox pausing updates at 1 MiB, 64 sessions, 256 requests
    /// each way, no deadlines.
    fn default() -> Self {
        Self {
            // Clamped to the input storage's size (`Fixed`'s `LINE`).
            max_line: crate::wire::frame::DEFAULT_MAX_LINE,
            outbox_limit: 64 << 20,
            outbox_high_water: 1 << 20,
            max_sessions: 64,
            max_owed: 256,
            max_pending: 256,
            permission_timeout: None,
            ask_user_timeout: None,
            request_timeout: None,
        }
    }
}

/// Which answers the connection gives where Agentao's behaviour and plain ACP differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Plain ACP: nothing custom at the root of a spec type (`session/set_mode` answers `{}`),
    /// and a request before `initialize` is `-32600` (ACP's `-32002` means "resource not
    /// found"). R-INIT-8, R-MODE-3.
    Acp,
    /// Agentao's answers, which its hosts read: `-32002` before `initialize` (R-INIT-1) and
    /// `session/set_mode` answering `{"modeId":…}` at the root (R-MODE-1).
    Agentao,
}

/// Everything an [`AgentConnection`](super::AgentConnection) is built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentConfig {
    /// `agentInfo`.
    pub info: AgentInfo,
    /// `agentCapabilities` and the rules that follow from them.
    pub features: AgentFeatures,
    /// Extension methods the application serves.
    pub extensions: heapless::Vec<Extension, EXTENSIONS_MAX>,
    /// Memory and time limits.
    pub limits: Limits,
    /// Agentao's answers or plain ACP's, where they differ.
    pub dialect: Dialect,
    /// `authMethods` of the `initialize` answer (add with [`offer_auth`](Self::offer_auth)).
    /// A non-empty list serves `authenticate` (R-AUTH-1).
    pub auth_methods: AuthMethodList,
    /// `session/new`, `load`, `resume` and `list` are refused `-32000 Authentication
    /// required` until the client authenticates (R-AUTH-3); see
    /// [`set_authenticated`](super::AgentConnection::set_authenticated) for an agent that
    /// starts logged in.
    pub auth_required: bool,
}

impl AgentConfig {
    /// Plain ACP: every feature off, no auth method, default limits, the [`Dialect::Acp`]
    /// answers and nothing of Agentao's in the `initialize` answer. Turn on what the
    /// application serves in [`features`](Self::features).
    pub fn new(info: AgentInfo) -> Self {
        Self {
            info,
            features: AgentFeatures::default(),
            extensions: heapless::Vec::new(),
            limits: Limits::default(),
            dialect: Dialect::Acp,
            auth_methods: AuthMethodList::new(),
            auth_required: false,
        }
    }

    /// Agentao's extensions in one call: `_agentao.cn/ask_user` and `_agentao.cn/set_model`
    /// listed under `_meta["_agentao.cn/extensions"]` (and `set_model` served), and Agentao's
    /// dialect (`-32002` before `initialize`, `{modeId}` from `session/set_mode`: R-INIT-1,
    /// R-MODE-1). What `acp-cli --acp` speaks.
    pub fn agentao(info: AgentInfo) -> Self {
        let mut config = Self::new(info).with_dialect(Dialect::Agentao);
        config.features.set_model = true;
        config.features.ask_user = true;
        config
    }

    /// The same configuration speaking `dialect`.
    #[must_use]
    pub fn with_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// Adds an auth method to `authMethods` (R-AUTH-1). Refused (and nothing changes) for an
    /// empty or duplicate id, an id over [`AUTH_ID_MAX`](super::AUTH_ID_MAX) bytes, a NUL in
    /// a terminal arg or env entry, or when the fixed list is full.
    pub fn offer_auth(&mut self, method: &AuthMethodSpec<'_>) -> Result<(), AuthRefused> {
        self.auth_methods.push(method)
    }

    /// The same configuration requiring authentication before sessions (R-AUTH-3).
    #[must_use]
    pub fn with_auth_required(mut self, required: bool) -> Self {
        self.auth_required = required;
        self
    }

    /// Registers an extension method the application serves. Returns `false` (and changes
    /// nothing) when the name does not start with `_`, does not fit, or the list is full.
    pub fn serve_extension(&mut self, method: &str, description: &str) -> bool {
        let Ok(name) = heapless::String::try_from(method) else {
            return false;
        };
        if !method.starts_with('_') {
            return false;
        }
        self.extensions
            .push(Extension {
                method: name,
                description: truncated(description),
            })
            .is_ok()
    }

    /// Whether `method` is a registered extension.
    pub fn serves_extension(&self, method: &str) -> bool {
        self.extensions.iter().any(|e| e.method == method)
    }
}
