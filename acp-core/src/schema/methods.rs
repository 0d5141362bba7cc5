//! The method table: every method name, who sends it, whether it is answered, and the schema
//! types of its params and result (the names of `$defs` in the official schema, as in
//! `meta.json`). Routing looks methods up here before any params are parsed.

/// Who sends a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The client sends it; the agent handles it.
    ClientToAgent,
    /// The agent sends it; the client handles it.
    AgentToClient,
    /// Either side may send it (`$/cancel_request`).
    Both,
}

macro_rules! method_table {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $const_name:ident $wire:literal, $dir:ident, $notification:literal,
        $params:literal, $result:expr;
    )*) => {
        $(
            $(#[$doc])*
            pub const $const_name: &str = $wire;
        )*

        /// Every method this crate types, stable ACP v1 plus Agentao's extensions.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Method {
            $( $(#[$doc])* $variant, )*
        }

        impl Method {
            /// Every method, in table order.
            pub const ALL: &'static [Method] = &[$(Method::$variant),*];

            /// The wire name.
            pub const fn name(self) -> &'static str {
                match self { $(Method::$variant => $wire,)* }
            }

            /// Looks a wire name up.
            pub fn from_name(name: &str) -> Option<Method> {
                match name {
                    $($wire => Some(Method::$variant),)*
                    _ => None,
                }
            }

            /// Who sends it.
            pub const fn direction(self) -> Direction {
                match self { $(Method::$variant => Direction::$dir,)* }
            }

            /// Whether it is a notification (never answered).
            pub const fn is_notification(self) -> bool {
                match self { $(Method::$variant => $notification,)* }
            }

            /// The schema type of its params (a `$defs` name; Agentao's extensions use their
            /// own names).
            pub const fn params_type(self) -> &'static str {
                match self { $(Method::$variant => $params,)* }
            }

            /// The schema type of its result; `None` for notifications.
            pub const fn result_type(self) -> Option<&'static str> {
                match self { $(Method::$variant => $result,)* }
            }
        }
    };
}

method_table! {
    /// `initialize`: the handshake.
    Initialize = INITIALIZE "initialize", ClientToAgent, false,
        "InitializeRequest", Some("InitializeResponse");
    /// `authenticate`.
    Authenticate = AUTHENTICATE "authenticate", ClientToAgent, false,
        "AuthenticateRequest", Some("AuthenticateResponse");
    /// `logout`.
    Logout = LOGOUT "logout", ClientToAgent, false,
        "LogoutRequest", Some("LogoutResponse");
    /// `session/new`.
    SessionNew = SESSION_NEW "session/new", ClientToAgent, false,
        "NewSessionRequest", Some("NewSessionResponse");
    /// `session/load`.
    SessionLoad = SESSION_LOAD "session/load", ClientToAgent, false,
        "LoadSessionRequest", Some("LoadSessionResponse");
    /// `session/list`.
    SessionList = SESSION_LIST "session/list", ClientToAgent, false,
        "ListSessionsRequest", Some("ListSessionsResponse");
    /// `session/resume`.
    SessionResume = SESSION_RESUME "session/resume", ClientToAgent, false,
        "ResumeSessionRequest", Some("ResumeSessionResponse");
    /// `session/close`.
    SessionClose = SESSION_CLOSE "session/close", ClientToAgent, false,
        "CloseSessionRequest", Some("CloseSessionResponse");
    /// `session/delete`.
    SessionDelete = SESSION_DELETE "session/delete", ClientToAgent, false,
        "DeleteSessionRequest", Some("DeleteSessionResponse");
    /// `session/set_mode`.
    SessionSetMode = SESSION_SET_MODE "session/set_mode", ClientToAgent, false,
        "SetSessionModeRequest", Some("SetSessionModeResponse");
    /// `session/set_config_option`.
    SessionSetConfigOption = SESSION_SET_CONFIG_OPTION "session/set_config_option", ClientToAgent, false,
        "SetSessionConfigOptionRequest", Some("SetSessionConfigOptionResponse");
    /// `session/prompt`.
    SessionPrompt = SESSION_PROMPT "session/prompt", ClientToAgent, false,
        "PromptRequest", Some("PromptResponse");
    /// `session/cancel` (a notification; also accepted as a request, see [`crate::schema::ClientRequest`]).
    SessionCancel = SESSION_CANCEL "session/cancel", ClientToAgent, true,
        "CancelNotification", None;
    /// `session/request_permission`.
    SessionRequestPermission = SESSION_REQUEST_PERMISSION "session/request_permission", AgentToClient, false,
        "RequestPermissionRequest", Some("RequestPermissionResponse");
    /// `session/update`.
    SessionUpdate = SESSION_UPDATE "session/update", AgentToClient, true,
        "SessionNotification", None;
    /// `fs/read_text_file`.
    FsReadTextFile = FS_READ_TEXT_FILE "fs/read_text_file", AgentToClient, false,
        "ReadTextFileRequest", Some("ReadTextFileResponse");
    /// `fs/write_text_file`.
    FsWriteTextFile = FS_WRITE_TEXT_FILE "fs/write_text_file", AgentToClient, false,
        "WriteTextFileRequest", Some("WriteTextFileResponse");
    /// `terminal/create`.
    TerminalCreate = TERMINAL_CREATE "terminal/create", AgentToClient, false,
        "CreateTerminalRequest", Some("CreateTerminalResponse");
    /// `terminal/output`.
    TerminalOutput = TERMINAL_OUTPUT "terminal/output", AgentToClient, false,
        "TerminalOutputRequest", Some("TerminalOutputResponse");
    /// `terminal/wait_for_exit`.
    TerminalWaitForExit = TERMINAL_WAIT_FOR_EXIT "terminal/wait_for_exit", AgentToClient, false,
        "WaitForTerminalExitRequest", Some("WaitForTerminalExitResponse");
    /// `terminal/kill`.
    TerminalKill = TERMINAL_KILL "terminal/kill", AgentToClient, false,
        "KillTerminalRequest", Some("KillTerminalResponse");
    /// `terminal/release`.
    TerminalRelease = TERMINAL_RELEASE "terminal/release", AgentToClient, false,
        "ReleaseTerminalRequest", Some("ReleaseTerminalResponse");
    /// `elicitation/create`.
    ElicitationCreate = ELICITATION_CREATE "elicitation/create", AgentToClient, false,
        "CreateElicitationRequest", Some("CreateElicitationResponse");
    /// `elicitation/complete`.
    ElicitationComplete = ELICITATION_COMPLETE "elicitation/complete", AgentToClient, true,
        "CompleteElicitationNotification", None;
    /// `$/cancel_request`.
    CancelRequest = CANCEL_REQUEST "$/cancel_request", Both, true,
        "CancelRequestNotification", None;
    /// `_agentao.cn/ask_user`: Agentao's free-form question to the user.
    AgentaoAskUser = AGENTAO_ASK_USER "_agentao.cn/ask_user", AgentToClient, false,
        "AskUserRequest", Some("AskUserResponse");
    /// `_agentao.cn/set_model`: Agentao's model-only switch.
    AgentaoSetModel = AGENTAO_SET_MODEL "_agentao.cn/set_model", ClientToAgent, false,
        "SetModelRequest", Some("SetModelResponse");
}

impl Method {
    /// Whether it is one of Agentao's `_agentao.cn/` extensions (not in the official schema).
    pub fn is_agentao_extension(self) -> bool {
        self.name().starts_with("_agentao.cn/")
    }

    /// Whether its result is an object whose members are all optional, so `{}` is a whole
    /// answer: we always send at least `{}` there, and read a `null` result there as `{}`
    /// (some SDKs answer `null`; R-RPC-5).
    pub const fn empty_result(self) -> bool {
        matches!(
            self,
            Method::Authenticate
                | Method::Logout
                | Method::SessionLoad
                | Method::SessionResume
                | Method::SessionClose
                | Method::SessionDelete
                | Method::SessionSetMode
                | Method::FsWriteTextFile
                | Method::TerminalWaitForExit
                | Method::TerminalKill
                | Method::TerminalRelease
        )
    }

    /// Whether `sender` may send it.
    pub fn sent_by(self, sender: Direction) -> bool {
        self.direction() == Direction::Both || self.direction() == sender
    }
}
