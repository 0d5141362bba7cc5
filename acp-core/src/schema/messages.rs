//! Decoding by method: the method name picks the type, then the params (or result) are decoded
//! straight into it. Nothing is tried and retried.

use alloc::string::{String, ToString};

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::error::{DecodeError, Part};
use super::methods::Method;
use super::path::ValueDe;
use super::*;

/// Decodes the params of `method` into `T`: the entry point for types outside the method table
/// (your own extensions). Absent or `null` params read as `{}`.
pub fn decode_params<T: DeserializeOwned>(
    method: &str,
    params: Option<&str>,
) -> Result<T, DecodeError> {
    decode_part(method, Part::Params, params)
}

/// Decodes the result of a request to `method` into `T`.
pub fn decode_result<T: DeserializeOwned>(method: &str, result: &str) -> Result<T, DecodeError> {
    decode_part(method, Part::Result, Some(result))
}

fn decode_part<T: DeserializeOwned>(
    method: &str,
    part: Part,
    json: Option<&str>,
) -> Result<T, DecodeError> {
    let text = json.map(str::trim);
    let text = match (part, text) {
        (Part::Params, None | Some("null")) => {
            return serde_json::from_str::<T>("{}").map_err(|_| {
                DecodeError::invalid(
                    method,
                    part,
                    alloc::string::String::new(),
                    "must be a JSON object",
                )
            });
        }
        (Part::Params, Some(text)) if !text.starts_with('{') => {
            return Err(DecodeError::invalid(
                method,
                part,
                alloc::string::String::new(),
                "must be a JSON object",
            ));
        }
        // R-RPC-5: `null` where `{}` is a whole answer reads as `{}`.
        (Part::Result, Some("null") | None) if empty_result(method) => "{}",
        (_, Some(text)) => text,
        (Part::Result, None) => "null",
    };
    if text.starts_with('[') {
        // serde's derived structs would read an array positionally; the precise pass refuses
        // arrays where objects are expected (and still lets any-value results through).
        return decode_precisely(method, part, text);
    }
    serde_json::from_str::<T>(text).map_err(|fast| explain::<T>(method, part, text, &fast))
}

/// Whether `method`'s result is an object with only optional members.
fn empty_result(method: &str) -> bool {
    Method::from_name(method).is_some_and(Method::empty_result)
}

/// Decodes through the path-tracking pass only.
fn decode_precisely<T: DeserializeOwned>(
    method: &str,
    part: Part,
    text: &str,
) -> Result<T, DecodeError> {
    let value: Value = serde_json::from_str(text).map_err(|syntax| {
        DecodeError::invalid(
            method,
            part,
            alloc::string::String::new(),
            &alloc::format!("is not valid JSON: {syntax}"),
        )
    })?;
    T::deserialize(ValueDe(&value))
        .map_err(|err| DecodeError::invalid(method, part, err.path(), err.detail()))
}

/// The second, precise pass over a value that failed the fast one.
fn explain<T: DeserializeOwned>(
    method: &str,
    part: Part,
    text: &str,
    fast: &serde_json::Error,
) -> DecodeError {
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(syntax) => {
            return DecodeError::invalid(
                method,
                part,
                alloc::string::String::new(),
                &alloc::format!("is not valid JSON: {syntax}"),
            );
        }
    };
    match T::deserialize(ValueDe(&value)) {
        Err(err) => DecodeError::invalid(method, part, err.path(), err.detail()),
        // Both passes read the same types; if they ever disagree, report what the fast one said.
        Ok(_) => DecodeError::invalid(
            method,
            part,
            alloc::string::String::new(),
            &fast.to_string(),
        ),
    }
}

macro_rules! message_enum {
    (
        $(#[$doc:meta])*
        $name:ident, $part:ident {
            $( $(#[$vdoc:meta])* $variant:ident($ty:ty) = $method:ident, )*
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        #[allow(clippy::large_enum_variant)]
        pub enum $name {
            $( $(#[$vdoc])* $variant($ty), )*
        }

        impl $name {
            fn decode_part(method: &str, json: Option<&str>) -> Result<Self, DecodeError> {
                match Method::from_name(method) {
                    $( Some(Method::$method) => decode_part::<$ty>(method, Part::$part, json).map(Self::$variant), )*
                    _ => Err(DecodeError::unknown_method(method)),
                }
            }

            /// The method this message belongs to.
            pub fn method(&self) -> Method {
                match self {
                    $( Self::$variant(_) => Method::$method, )*
                }
            }
        }

        /// Encodes the params (or result) only; the envelope is the wire layer's job.
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( Self::$variant(inner) => inner.serialize(s), )*
                }
            }
        }
    };
}

message_enum! {
    /// A request the agent handles (client → agent).
    ClientRequest, Params {
        /// `initialize`.
        Initialize(InitializeRequest) = Initialize,
        /// `authenticate`.
        Authenticate(AuthenticateRequest) = Authenticate,
        /// `logout`.
        Logout(LogoutRequest) = Logout,
        /// `session/new`.
        NewSession(NewSessionRequest) = SessionNew,
        /// `session/load`.
        LoadSession(LoadSessionRequest) = SessionLoad,
        /// `session/list`.
        ListSessions(ListSessionsRequest) = SessionList,
        /// `session/resume`.
        ResumeSession(ResumeSessionRequest) = SessionResume,
        /// `session/close`.
        CloseSession(CloseSessionRequest) = SessionClose,
        /// `session/delete`.
        DeleteSession(DeleteSessionRequest) = SessionDelete,
        /// `session/set_mode`.
        SetSessionMode(SetSessionModeRequest) = SessionSetMode,
        /// `session/set_config_option`.
        SetSessionConfigOption(SetSessionConfigOptionRequest) = SessionSetConfigOption,
        /// `session/prompt`.
        Prompt(PromptRequest) = SessionPrompt,
        /// `session/cancel` sent as a request (Agentao accepts both forms).
        Cancel(CancelNotification) = SessionCancel,
        /// `_agentao.cn/set_model`.
        SetModel(SetModelRequest) = AgentaoSetModel,
    }
}

message_enum! {
    /// A request the client handles (agent → client).
    AgentRequest, Params {
        /// `session/request_permission`.
        RequestPermission(RequestPermissionRequest) = SessionRequestPermission,
        /// `fs/read_text_file`.
        ReadTextFile(ReadTextFileRequest) = FsReadTextFile,
        /// `fs/write_text_file`.
        WriteTextFile(WriteTextFileRequest) = FsWriteTextFile,
        /// `terminal/create`.
        CreateTerminal(CreateTerminalRequest) = TerminalCreate,
        /// `terminal/output`.
        TerminalOutput(TerminalOutputRequest) = TerminalOutput,
        /// `terminal/wait_for_exit`.
        WaitForTerminalExit(WaitForTerminalExitRequest) = TerminalWaitForExit,
        /// `terminal/kill`.
        KillTerminal(KillTerminalRequest) = TerminalKill,
        /// `terminal/release`.
        ReleaseTerminal(ReleaseTerminalRequest) = TerminalRelease,
        /// `elicitation/create`.
        CreateElicitation(CreateElicitationRequest) = ElicitationCreate,
        /// `_agentao.cn/ask_user`.
        AskUser(AskUserRequest) = AgentaoAskUser,
    }
}

message_enum! {
    /// A notification from the client.
    ClientNotification, Params {
        /// `session/cancel`.
        Cancel(CancelNotification) = SessionCancel,
        /// `$/cancel_request`.
        CancelRequest(CancelRequestNotification) = CancelRequest,
    }
}

message_enum! {
    /// A notification from the agent.
    AgentNotification, Params {
        /// `session/update`.
        SessionUpdate(SessionNotification) = SessionUpdate,
        /// `elicitation/complete`.
        CompleteElicitation(CompleteElicitationNotification) = ElicitationComplete,
        /// `$/cancel_request`.
        CancelRequest(CancelRequestNotification) = CancelRequest,
    }
}

message_enum! {
    /// A result the agent sends, answering a [`ClientRequest`].
    AgentResponse, Result {
        /// `initialize`.
        Initialize(InitializeResponse) = Initialize,
        /// `authenticate`.
        Authenticate(AuthenticateResponse) = Authenticate,
        /// `logout`.
        Logout(LogoutResponse) = Logout,
        /// `session/new`.
        NewSession(NewSessionResponse) = SessionNew,
        /// `session/load`.
        LoadSession(LoadSessionResponse) = SessionLoad,
        /// `session/list`.
        ListSessions(ListSessionsResponse) = SessionList,
        /// `session/resume`.
        ResumeSession(ResumeSessionResponse) = SessionResume,
        /// `session/close`.
        CloseSession(CloseSessionResponse) = SessionClose,
        /// `session/delete`.
        DeleteSession(DeleteSessionResponse) = SessionDelete,
        /// `session/set_mode`.
        SetSessionMode(SetSessionModeResponse) = SessionSetMode,
        /// `session/set_config_option`.
        SetSessionConfigOption(SetSessionConfigOptionResponse) = SessionSetConfigOption,
        /// `session/prompt`.
        Prompt(PromptResponse) = SessionPrompt,
        /// `session/cancel` sent as a request.
        Cancel(CancelResponse) = SessionCancel,
        /// `_agentao.cn/set_model`.
        SetModel(SetModelResponse) = AgentaoSetModel,
    }
}

message_enum! {
    /// A result the client sends, answering an [`AgentRequest`].
    ClientResponse, Result {
        /// `session/request_permission`.
        RequestPermission(RequestPermissionResponse) = SessionRequestPermission,
        /// `fs/read_text_file`.
        ReadTextFile(ReadTextFileResponse) = FsReadTextFile,
        /// `fs/write_text_file`.
        WriteTextFile(WriteTextFileResponse) = FsWriteTextFile,
        /// `terminal/create`.
        CreateTerminal(CreateTerminalResponse) = TerminalCreate,
        /// `terminal/output`.
        TerminalOutput(TerminalOutputResponse) = TerminalOutput,
        /// `terminal/wait_for_exit`.
        WaitForTerminalExit(WaitForTerminalExitResponse) = TerminalWaitForExit,
        /// `terminal/kill`.
        KillTerminal(KillTerminalResponse) = TerminalKill,
        /// `terminal/release`.
        ReleaseTerminal(ReleaseTerminalResponse) = TerminalRelease,
        /// `elicitation/create`.
        CreateElicitation(CreateElicitationResponse) = ElicitationCreate,
        /// `_agentao.cn/ask_user`.
        AskUser(AskUserResponse) = AgentaoAskUser,
    }
}

impl ClientRequest {
    /// Decodes the params of a client → agent request named `method`. Unknown methods (and
    /// agent → client ones) are [`DecodeErrorKind::UnknownMethod`]; absent params read as `{}`.
    ///
    /// Beyond the types, it applies the value rules Agentao applies while reading params, with
    /// its messages: a non-empty `sessionId`, the field whitelists of
    /// `session/set_config_option` and `_agentao.cn/set_model` ([`agentao::check_whitelist`]),
    /// an absolute `cwd`, non-empty MCP server names and commands/URLs, a non-empty prompt,
    /// non-empty mode ids, config values and model names. Existence checks (does the cwd
    /// exist, is the session known) belong to the application and the connection.
    pub fn decode(method: &str, params: Option<&str>) -> Result<Self, DecodeError> {
        let request = Self::decode_part(method, params)?;
        if let Some(session_id) = request.session_id() {
            require_non_empty(method, "sessionId", session_id)?;
        }
        if let (Self::SetSessionConfigOption(_) | Self::SetModel(_), Some(params)) =
            (&request, params)
        {
            agentao::check_whitelist(method, params)?;
        }
        request.check_values(method)?;
        Ok(request)
    }

    /// The session the request is about, when it names one.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Self::LoadSession(r) => Some(&r.session_id),
            Self::ResumeSession(r) => Some(&r.session_id),
            Self::CloseSession(r) | Self::DeleteSession(r) => Some(&r.session_id),
            Self::SetSessionMode(r) => Some(&r.session_id),
            Self::SetSessionConfigOption(r) => Some(&r.session_id),
            Self::Prompt(r) => Some(&r.session_id),
            Self::Cancel(r) => Some(&r.session_id),
            Self::SetModel(r) => Some(&r.session_id),
            Self::Initialize(_)
            | Self::Authenticate(_)
            | Self::Logout(_)
            | Self::NewSession(_)
            | Self::ListSessions(_) => None,
        }
    }

    fn check_values(&self, method: &str) -> Result<(), DecodeError> {
        match self {
            Self::NewSession(r) => {
                check_cwd(method, &r.cwd)?;
                check_servers(method, &r.mcp_servers)
            }
            Self::LoadSession(r) => {
                check_cwd(method, &r.cwd)?;
                check_servers(method, &r.mcp_servers)
            }
            Self::ResumeSession(r) => {
                check_cwd(method, &r.cwd)?;
                check_servers(method, &r.mcp_servers)
            }
            Self::Prompt(r) if r.prompt.is_empty() => Err(DecodeError::invalid(
                method,
                Part::Params,
                String::from("prompt"),
                "must not be empty",
            )),
            Self::SetSessionMode(r) => require_non_empty(method, "modeId", &r.mode_id),
            Self::SetSessionConfigOption(r) => match &r.value {
                SessionConfigValue::Id(value) => require_non_empty(method, "value", value.trim()),
                SessionConfigValue::Boolean(_) => Ok(()),
            },
            Self::SetModel(r) => require_non_empty(method, "model", r.model.trim()),
            _ => Ok(()),
        }
    }
}

fn require_non_empty(method: &str, path: &str, value: &str) -> Result<(), DecodeError> {
    if value.is_empty() {
        return Err(DecodeError::invalid(
            method,
            Part::Params,
            String::from(path),
            "must be a non-empty string",
        ));
    }
    Ok(())
}

/// `cwd` must be absolute: `/…`, or on Windows `C:\…`, `C:/…` or `\\server\…`.
fn check_cwd(method: &str, cwd: &str) -> Result<(), DecodeError> {
    if cwd.is_empty() {
        return Err(DecodeError::invalid(
            method,
            Part::Params,
            String::from("cwd"),
            "must not be empty",
        ));
    }
    let bytes = cwd.as_bytes();
    let windows_drive = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/');
    if cwd.starts_with('/') || cwd.starts_with(r"\\") || windows_drive {
        return Ok(());
    }
    Err(DecodeError::invalid(
        method,
        Part::Params,
        String::from("cwd"),
        &alloc::format!("must be an absolute path, got '{cwd}'"),
    ))
}

/// Every MCP server needs a non-empty name, and a non-empty command (stdio) or URL.
fn check_servers(method: &str, servers: &[McpServer]) -> Result<(), DecodeError> {
    for (index, server) in servers.iter().enumerate() {
        let (name, field, value) = match server {
            McpServer::Stdio(s) => (&s.name, "command", s.command.as_str()),
            McpServer::Http(s) | McpServer::Sse(s) => (&s.name, "url", s.url.as_str()),
        };
        require_non_empty(method, &alloc::format!("mcpServers[{index}].name"), name)?;
        require_non_empty(
            method,
            &alloc::format!("mcpServers[{index}].{field}"),
            value,
        )?;
    }
    Ok(())
}

impl AgentRequest {
    /// Decodes the params of an agent → client request named `method`.
    pub fn decode(method: &str, params: Option<&str>) -> Result<Self, DecodeError> {
        Self::decode_part(method, params)
    }
}

impl ClientNotification {
    /// Decodes a client → agent notification. Unknown ones should be ignored by the caller.
    pub fn decode(method: &str, params: Option<&str>) -> Result<Self, DecodeError> {
        Self::decode_part(method, params)
    }
}

impl AgentNotification {
    /// Decodes an agent → client notification. Unknown ones should be ignored by the caller.
    pub fn decode(method: &str, params: Option<&str>) -> Result<Self, DecodeError> {
        Self::decode_part(method, params)
    }
}

impl AgentResponse {
    /// Decodes the `result` of the client's request to `method` (the pending request's method).
    pub fn decode(method: &str, result: &str) -> Result<Self, DecodeError> {
        Self::decode_part(method, Some(result))
    }
}

impl ClientResponse {
    /// Decodes the `result` of the agent's request to `method` (the pending request's method).
    pub fn decode(method: &str, result: &str) -> Result<Self, DecodeError> {
        Self::decode_part(method, Some(result))
    }
}
