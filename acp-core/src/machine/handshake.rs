//! The `initialize` handshake: the gate every other request passes through, the protocol
//! version rule, and the snapshot of the capabilities that change behaviour later.

use core::fmt;

use super::{Rejection, UsageError, trace_transition};

/// The ACP protocol version this crate speaks, and the one it always answers.
pub const PROTOCOL_VERSION: u16 = 1;

/// The capabilities (of either side) that gate behaviour, as a small `Copy` bitset.
///
/// Only flags something in the core or the connection acts on are here; everything else in
/// the capability objects passes through untouched.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Capabilities(u16);

impl Capabilities {
    /// Client: `fs.readTextFile`.
    pub const FS_READ: Self = Self(1 << 0);
    /// Client: `fs.writeTextFile`.
    pub const FS_WRITE: Self = Self(1 << 1);
    /// Client: `terminal`.
    pub const TERMINAL: Self = Self(1 << 2);
    /// Agent: `promptCapabilities.image`.
    pub const PROMPT_IMAGE: Self = Self(1 << 3);
    /// Agent: `promptCapabilities.audio`.
    pub const PROMPT_AUDIO: Self = Self(1 << 4);
    /// Agent: `promptCapabilities.embeddedContext`.
    pub const PROMPT_EMBEDDED_CONTEXT: Self = Self(1 << 5);
    /// Agent: `mcpCapabilities.http`.
    pub const MCP_HTTP: Self = Self(1 << 6);
    /// Agent: `mcpCapabilities.sse`.
    pub const MCP_SSE: Self = Self(1 << 7);
    /// Agent: `loadSession`.
    pub const LOAD_SESSION: Self = Self(1 << 8);
    /// Client: `elicitation`.
    pub const ELICITATION: Self = Self(1 << 9);
    /// Agent: the `_agentao.cn/ask_user` extension is listed in `_meta`.
    pub const ASK_USER: Self = Self(1 << 10);
    /// Agent: the `_agentao.cn/set_model` extension is listed in `_meta`.
    pub const SET_MODEL: Self = Self(1 << 11);
    /// Client: `auth.terminal` (it can run `terminal` auth methods).
    pub const AUTH_TERMINAL: Self = Self(1 << 12);

    const NAMES: [(Self, &'static str); 13] = [
        (Self::FS_READ, "fs.readTextFile"),
        (Self::FS_WRITE, "fs.writeTextFile"),
        (Self::TERMINAL, "terminal"),
        (Self::PROMPT_IMAGE, "promptCapabilities.image"),
        (Self::PROMPT_AUDIO, "promptCapabilities.audio"),
        (
            Self::PROMPT_EMBEDDED_CONTEXT,
            "promptCapabilities.embeddedContext",
        ),
        (Self::MCP_HTTP, "mcpCapabilities.http"),
        (Self::MCP_SSE, "mcpCapabilities.sse"),
        (Self::LOAD_SESSION, "loadSession"),
        (Self::ELICITATION, "elicitation"),
        (Self::ASK_USER, "_agentao.cn/ask_user"),
        (Self::SET_MODEL, "_agentao.cn/set_model"),
        (Self::AUTH_TERMINAL, "auth.terminal"),
    ];

    /// No capability (what a missing `clientCapabilities` means).
    pub const fn empty() -> Self {
        Self(0)
    }

    /// The raw bits.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// Every flag set in `self` or `other`.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether every flag of `other` is set in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Sets the flags of `other` when `on`; the builder the decoder uses field by field.
    #[must_use]
    pub const fn with(self, other: Self, on: bool) -> Self {
        if on { Self(self.0 | other.0) } else { self }
    }
}

impl fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut set = f.debug_set();
        for (flag, name) in Self::NAMES {
            if self.contains(flag) {
                set.entry(&name);
            }
        }
        set.finish()
    }
}

/// `initialize.protocolVersion` as the decoder found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestedVersion {
    /// A JSON integer that fits an `i64`.
    Integer(i64),
    /// A JSON integer too large for an `i64` (certainly outside `u16`).
    HugeInteger,
    /// Anything else: `true`, `"1"`, `1.5`, `null`, missing.
    NotInteger,
}

/// Where the handshake is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeState {
    /// No `initialize` yet: only `initialize` is served.
    Uninitialized,
    /// `initialize` succeeded (at least once).
    Initialized {
        /// The version agreed (always [`PROTOCOL_VERSION`] today).
        protocol_version: u16,
        /// The peer's capabilities from the latest `initialize`.
        peer: Capabilities,
    },
}

impl HandshakeState {
    /// The state's name, for traces and transcripts.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Uninitialized => "Uninitialized",
            Self::Initialized { .. } => "Initialized",
        }
    }
}

/// An input to the handshake machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeInput<'a> {
    /// Agent side: the peer sent `initialize` (as a request).
    PeerInitialize {
        /// The decoded `protocolVersion`.
        version: RequestedVersion,
        /// The decoded `clientCapabilities` (missing means empty).
        capabilities: Capabilities,
    },
    /// Client side: the agent answered our `initialize`.
    InitializeAnswered {
        /// The `protocolVersion` in the answer.
        protocol_version: u16,
        /// The decoded `agentCapabilities`.
        capabilities: Capabilities,
    },
    /// The peer sent any other request.
    PeerRequest {
        /// The method, exactly as received.
        method: &'a str,
    },
    /// The peer sent a notification (any method, including `initialize`).
    PeerNotification,
}

/// What the connection does with the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeOutput<'a> {
    /// Pass the message on to the next machine or the application.
    Proceed,
    /// Drop the message silently (a notification before the handshake).
    Ignore,
    /// Answer `initialize` with this `protocolVersion` and our capabilities.
    AnswerInitialize {
        /// The version to put in the answer.
        protocol_version: u16,
    },
    /// The handshake is complete on the client side.
    Ready,
    /// Answer the request with this error.
    Reject(Rejection<'a>),
}

/// The handshake machine of one connection (either side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handshake {
    state: HandshakeState,
    local: Capabilities,
}

impl Handshake {
    /// A connection that has not shaken hands, advertising `local` capabilities.
    pub const fn new(local: Capabilities) -> Self {
        Self {
            state: HandshakeState::Uninitialized,
            local,
        }
    }

    /// A machine put straight into `state` (test fixtures, restored connections).
    pub const fn with_state(local: Capabilities, state: HandshakeState) -> Self {
        Self { state, local }
    }

    /// The current state.
    pub const fn state(&self) -> HandshakeState {
        self.state
    }

    /// Our own capabilities.
    pub const fn local(&self) -> Capabilities {
        self.local
    }

    /// The peer's capabilities, empty before the handshake.
    pub const fn peer(&self) -> Capabilities {
        match self.state {
            HandshakeState::Uninitialized => Capabilities::empty(),
            HandshakeState::Initialized { peer, .. } => peer,
        }
    }

    /// Whether `initialize` has completed.
    pub const fn is_initialized(&self) -> bool {
        matches!(self.state, HandshakeState::Initialized { .. })
    }

    /// For local commands: the handshake is done and the peer advertised `needed` (e.g. the
    /// agent may call `fs/read_text_file` only if the client offered it, R-FS-1).
    pub fn require_peer(&self, needed: Capabilities) -> Result<(), UsageError> {
        match self.state {
            HandshakeState::Uninitialized => Err(UsageError::NotInitialized),
            HandshakeState::Initialized { peer, .. } if peer.contains(needed) => Ok(()),
            HandshakeState::Initialized { .. } => Err(UsageError::CapabilityNotAdvertised),
        }
    }

    /// For local commands that only need the handshake done.
    pub fn require_initialized(&self) -> Result<(), UsageError> {
        self.require_peer(Capabilities::empty())
    }

    /// Feeds one input. Never fails: peer mistakes come back as [`HandshakeOutput::Reject`].
    pub fn handle<'a>(&mut self, input: HandshakeInput<'a>) -> HandshakeOutput<'a> {
        use HandshakeInput as I;
        use HandshakeOutput as O;
        use HandshakeState as S;
        match (self.state, input) {
            // R-INIT-2: protocolVersion must be a JSON integer.
            (
                _,
                I::PeerInitialize {
                    version: RequestedVersion::NotInteger,
                    ..
                },
            ) => O::Reject(Rejection::ProtocolVersionNotInteger),
            // R-INIT-2: -32602 outside the schema's u16.
            (
                _,
                I::PeerInitialize {
                    version: RequestedVersion::HugeInteger,
                    ..
                },
            ) => O::Reject(Rejection::ProtocolVersionOutOfRange),
            (
                _,
                I::PeerInitialize {
                    version: RequestedVersion::Integer(v),
                    capabilities,
                },
            ) => {
                if u16::try_from(v).is_err() {
                    return O::Reject(Rejection::ProtocolVersionOutOfRange);
                }
                // R-INIT-2, R-INIT-4: any integer 0..=65535 is answered with 1; repeating
                // initialize is allowed and overwrites the peer's snapshot.
                self.transition(S::Initialized {
                    protocol_version: PROTOCOL_VERSION,
                    peer: capabilities,
                });
                O::AnswerInitialize {
                    protocol_version: PROTOCOL_VERSION,
                }
            }
            // Client side: the agent's answer completes the handshake.
            (
                _,
                I::InitializeAnswered {
                    protocol_version,
                    capabilities,
                },
            ) => {
                self.transition(S::Initialized {
                    protocol_version,
                    peer: capabilities,
                });
                O::Ready
            }
            // R-INIT-1: -32002 `<method> called before initialize handshake`, for known and
            // unknown methods alike.
            (S::Uninitialized, I::PeerRequest { method }) => {
                O::Reject(Rejection::BeforeInitialize { method })
            }
            // R-INIT-1: notifications are ignored.
            (S::Uninitialized, I::PeerNotification) => O::Ignore,
            // After the handshake everything goes on to the other machines.
            (S::Initialized { .. }, I::PeerRequest { .. } | I::PeerNotification) => O::Proceed,
        }
    }

    fn transition(&mut self, to: HandshakeState) {
        trace_transition!("handshake", self.state.name(), to.name());
        self.state = to;
    }
}
