//! The application's side of sessions: what `session/new` checks beyond the protocol (the
//! cwd exists and is a directory), the ids it hands out, and each session's mode and model
//! with the `set_mode` / `set_config_option` / `set_model` rules (R-MODE-1, R-CONFIG-1,
//! R-CONFIG-2; R-MODE-1).
//!
//! The connection has already checked what the protocol can (initialized, known session, no
//! turn running, field whitelists, non-empty values); what is left here is the application's
//! own knowledge. Nothing here touches the file system: the driver looks at the cwd and says
//! what it found ([`CwdKind`]).

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, Hasher};

use acp_core::schema::{
    ContentBlock, LoadSessionResponse, NewSessionResponse, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigSelectOption, SessionConfigValue, SystemPrompt,
    SystemPromptMode,
};
use acp_core::wire::ErrorCode;

use super::modes::{Posture, mode_state};
use crate::agent::paths::Roots;

/// The provider the demo backend answers as.
pub(crate) const DEMO_PROVIDER: &str = "demo";

/// The model the demo backend answers as.
pub(crate) const DEMO_MODEL: &str = "demo";

/// What the driver found at a `session/new` cwd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwdKind {
    /// Nothing there.
    Missing,
    /// A file or anything else that is not a directory.
    NotADirectory,
    /// A directory.
    Directory,
}

/// A request refused by the application: the JSON-RPC error to answer with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The error code.
    pub code: ErrorCode,
    /// The message, exactly as sent.
    pub message: String,
}

impl Refusal {
    fn invalid_params(detail: impl fmt::Display) -> Self {
        Self {
            code: ErrorCode::INVALID_PARAMS,
            message: format!("Invalid params: {detail}"),
        }
    }

    fn invalid_request(message: impl Into<String>) -> Self {
        Self {
            code: ErrorCode::INVALID_REQUEST,
            message: message.into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.code.0, self.message)
    }
}

impl std::error::Error for Refusal {}

/// Agentao's rule for the `cwd` of `session/new`, `session/load` or `session/resume` (named
/// by `method`, so a refused load says `session/load.cwd`) after the absolute-path check: it
/// must exist and be a directory. `raw` is the cwd exactly as sent.
pub(crate) fn check_cwd(method: &str, raw: &str, found: CwdKind) -> Result<(), Refusal> {
    match found {
        CwdKind::Directory => Ok(()),
        CwdKind::Missing => Err(Refusal::invalid_params(format_args!(
            "{method}.cwd does not exist: '{raw}'"
        ))),
        CwdKind::NotADirectory => Err(Refusal::invalid_params(format_args!(
            "{method}.cwd is not a directory: '{raw}'"
        ))),
    }
}

/// `additionalDirectories` of `session/new`, `session/load` or `session/resume` (named by
/// `method`): each must be an absolute path to an existing directory (R-SESSION-4), in the
/// style of the cwd's messages, with the index of the first one that is not. `found` says
/// what is at a path.
pub(crate) fn check_additional_directories(
    method: &str,
    directories: &[String],
    found: impl Fn(&str) -> CwdKind,
) -> Result<(), Refusal> {
    for (index, raw) in directories.iter().enumerate() {
        let field = format_args!("{method}.additionalDirectories[{index}]");
        if !std::path::Path::new(raw).is_absolute() {
            return Err(Refusal::invalid_params(format_args!(
                "{field} must be an absolute path, got '{raw}'"
            )));
        }
        match found(raw) {
            CwdKind::Directory => {}
            CwdKind::Missing => {
                return Err(Refusal::invalid_params(format_args!(
                    "{field} does not exist: '{raw}'"
                )));
            }
            CwdKind::NotADirectory => {
                return Err(Refusal::invalid_params(format_args!(
                    "{field} is not a directory: '{raw}'"
                )));
            }
        }
    }
    Ok(())
}

/// `systemPrompt` of `session/new`, `session/load` or `session/resume` (named by `method`):
/// the agent (either backend) advertises only the `append` mode and takes only `text` blocks,
/// and the schema asks an agent to refuse what it cannot apply rather than fall back. Returns
/// the prompt's text (blocks joined with newlines).
pub(crate) fn check_system_prompt(method: &str, prompt: &SystemPrompt) -> Result<String, Refusal> {
    if prompt.mode != SystemPromptMode::Append {
        return Err(Refusal::invalid_params(format_args!(
            "{method}.systemPrompt.mode '{}' is not supported; only 'append' is advertised",
            prompt.mode
        )));
    }
    if prompt.content.is_empty() {
        return Err(Refusal::invalid_params(format_args!(
            "{method}.systemPrompt.content must not be empty"
        )));
    }
    let mut texts = Vec::with_capacity(prompt.content.len());
    for (index, block) in prompt.content.iter().enumerate() {
        match block {
            ContentBlock::Text(text) => texts.push(text.text.as_str()),
            other => {
                return Err(Refusal::invalid_params(format_args!(
                    "{method}.systemPrompt.content[{index}] must be a text block, got '{}'",
                    other.type_name()
                )));
            }
        }
    }
    Ok(texts.join("\n"))
}

/// One session as the application knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AgentSession {
    /// The working directory, as the client sent it.
    pub cwd: String,
    /// `additionalDirectories`: absolute, existing when the session opened; they count as
    /// inside the session for file tools.
    pub additional_directories: Vec<String>,
    /// The client's `systemPrompt` text (append mode), if it gave one.
    pub system_prompt: Option<String>,
    /// The mode id, as last set (a preset or any other id, which is only stored and echoed).
    pub mode_id: String,
    /// The permission posture: the last preset set (other mode ids leave it as it was).
    pub posture: Posture,
    /// The model's provider, lower case.
    pub provider: String,
    /// The model.
    pub model: String,
}

impl AgentSession {
    /// A fresh session in `cwd`: workspace-write, the demo model.
    pub(crate) fn new(cwd: &str) -> Self {
        Self {
            cwd: cwd.to_owned(),
            additional_directories: Vec::new(),
            system_prompt: None,
            mode_id: Posture::default().id().to_owned(),
            posture: Posture::default(),
            provider: DEMO_PROVIDER.to_owned(),
            model: DEMO_MODEL.to_owned(),
        }
    }

    /// Where the session's files may live: the cwd and the additional directories.
    pub(crate) fn roots(&self) -> Roots<'_> {
        Roots {
            cwd: &self.cwd,
            additional: &self.additional_directories,
        }
    }

    /// The `configOptions` Agentao answers: one `model` select whose only choice is the
    /// current `provider/model`.
    pub(crate) fn config_options(&self) -> Vec<SessionConfigOption> {
        let value = format!("{}/{}", self.provider, self.model);
        let choice = SessionConfigSelectOption::new(value.clone(), self.model.clone());
        let mut option = SessionConfigOption::select("model", "Model", value, vec![choice]);
        option.category = Some(SessionConfigOptionCategory::Model);
        vec![option]
    }

    /// Changes the mode (`session/set_mode`): a preset changes the posture, any other id is
    /// only stored and echoed.
    pub(crate) fn set_mode(&mut self, mode_id: &str) {
        if let Some(posture) = Posture::from_mode_id(mode_id) {
            self.posture = posture;
        }
        self.mode_id = mode_id.to_owned();
    }

    /// `session/set_config_option` (after the connection's whitelist and busy checks):
    /// `configId` must be `model`; the value is `provider/model` (split at the first `/`) or
    /// a bare model that keeps the provider. Answers the full `configOptions`.
    pub(crate) fn set_config_option(
        &mut self,
        config_id: &str,
        value: &SessionConfigValue,
    ) -> Result<Vec<SessionConfigOption>, Refusal> {
        const METHOD: &str = "session/set_config_option";
        if config_id != "model" {
            return Err(Refusal::invalid_request(format!(
                "unknown configId '{config_id}'; only 'model' is supported"
            )));
        }
        let value = match value {
            SessionConfigValue::Id(value) if !value.trim().is_empty() => value.trim(),
            _ => {
                return Err(Refusal::invalid_params(format_args!(
                    "{METHOD}.value must be a non-empty string"
                )));
            }
        };
        match value.split_once('/') {
            Some((provider, model)) => {
                let (provider, model) = (provider.trim().to_lowercase(), model.trim());
                if provider.is_empty() || model.is_empty() {
                    return Err(Refusal::invalid_params(format_args!(
                        "{METHOD}.value 'provider/model' must have a non-empty provider and model"
                    )));
                }
                // A session resolves only its own provider (the demo's, or the llm backend's
                // configured one); credentials for others would come from the environment,
                // never from the wire.
                if provider != self.provider {
                    return Err(Refusal::invalid_request(format!(
                        "cannot resolve provider '{provider}'"
                    )));
                }
                self.model = model.to_owned();
            }
            None => self.model = value.to_owned(),
        }
        Ok(self.config_options())
    }

    /// `_agentao.cn/set_model`: a model-only switch with the trimmed name; answers it.
    pub(crate) fn set_model(&mut self, model: &str) -> Result<String, Refusal> {
        let model = model.trim();
        if model.is_empty() {
            return Err(Refusal::invalid_params(
                "_agentao.cn/set_model.model must be a non-empty string",
            ));
        }
        self.model = model.to_owned();
        Ok(self.model.clone())
    }
}

/// The sessions of one connection, and where their ids come from.
#[derive(Debug)]
pub struct SessionTable {
    sessions: HashMap<String, AgentSession>,
    /// Random per process, so ids differ between runs (they name saved sessions later).
    nonce: u64,
    count: u64,
    /// The provider and model new sessions start with (the backend's).
    model: Option<(String, String)>,
}

impl Default for SessionTable {
    fn default() -> Self {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        if let Ok(elapsed) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            hasher.write_u128(elapsed.as_nanos());
        }
        Self::with_nonce(hasher.finish())
    }
}

impl SessionTable {
    /// A table whose ids derive from `nonce` (tests pick it; the default is random).
    pub fn with_nonce(nonce: u64) -> Self {
        Self {
            sessions: HashMap::new(),
            nonce,
            count: 0,
            model: None,
        }
    }

    /// New sessions answer as `provider/model` instead of the demo's (the llm backend's
    /// configured model); a stored session keeps its own model unless it was the demo's.
    pub fn with_model(mut self, provider: &str, model: &str) -> Self {
        self.model = Some((provider.to_lowercase(), model.to_owned()));
        self
    }

    /// From now on new sessions answer as `provider/model` (a login chose them, R-AUTH-8);
    /// open sessions keep theirs. Only for a table that has a model (the llm backend's).
    pub(crate) fn set_default_model(&mut self, provider: &str, model: &str) {
        if self.model.is_some() {
            self.model = Some((provider.to_lowercase(), model.to_owned()));
        }
    }

    /// A fresh session in `cwd` with the table's provider and model.
    fn fresh(&self, cwd: &str) -> AgentSession {
        let mut session = AgentSession::new(cwd);
        if let Some((provider, model)) = &self.model {
            session.provider.clone_from(provider);
            session.model.clone_from(model);
        }
        session
    }

    /// Opens a session in `cwd` (already checked) under a new id: `sess_` and 32 hex digits,
    /// like Agentao's. Returns the id and the `session/new` answer.
    pub(crate) fn open(&mut self, cwd: &str) -> (String, NewSessionResponse) {
        let id = loop {
            self.count += 1;
            let id = format!("sess_{:016x}{:016x}", self.nonce, self.count);
            if !self.sessions.contains_key(&id) {
                break id;
            }
        };
        let session = self.fresh(cwd);
        let mut answer = NewSessionResponse::default();
        answer.session_id = id.clone();
        answer.modes = Some(mode_state(&session.mode_id));
        answer.config_options = Some(session.config_options());
        self.sessions.insert(id.clone(), session);
        (id, answer)
    }

    /// Opens a session under a stored id (`session/load`, `session/resume`, `--resume`) with
    /// the mode and model it was saved with; a session of that id already open is replaced.
    /// Returns the `{configOptions, modes}` answer.
    pub(crate) fn open_stored(
        &mut self,
        id: &str,
        cwd: &str,
        mode: Option<&str>,
        model: &str,
    ) -> LoadSessionResponse {
        let mut session = self.fresh(cwd);
        if let Some(mode) = mode.filter(|m| !m.is_empty()) {
            session.set_mode(mode);
        }
        // A session the demo saved keeps the configured model under another provider.
        let demo_model = model.trim() == DEMO_MODEL && session.provider != DEMO_PROVIDER;
        if !model.trim().is_empty() && !demo_model {
            session.model = model.trim().to_owned();
        }
        let mut answer = LoadSessionResponse::default();
        answer.modes = Some(mode_state(&session.mode_id));
        answer.config_options = Some(session.config_options());
        self.sessions.insert(id.to_owned(), session);
        answer
    }

    /// The session with this id.
    pub(crate) fn get(&self, id: &str) -> Option<&AgentSession> {
        self.sessions.get(id)
    }

    /// The session with this id, to change it.
    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut AgentSession> {
        self.sessions.get_mut(id)
    }

    /// Forgets a session.
    pub(crate) fn remove(&mut self, id: &str) -> Option<AgentSession> {
        self.sessions.remove(id)
    }

    /// How many sessions are open.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.sessions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cwd_must_exist_and_be_a_directory() {
        assert_eq!(check_cwd("session/new", "/p", CwdKind::Directory), Ok(()));
        let missing = check_cwd("session/new", "/no/such", CwdKind::Missing).unwrap_err();
        assert_eq!(missing.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(
            missing.message,
            "Invalid params: session/new.cwd does not exist: '/no/such'"
        );
        let file = check_cwd("session/new", "/etc/hosts", CwdKind::NotADirectory).unwrap_err();
        assert_eq!(file.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(
            file.message,
            "Invalid params: session/new.cwd is not a directory: '/etc/hosts'"
        );
        let load = check_cwd("session/load", "/gone", CwdKind::Missing).unwrap_err();
        assert_eq!(
            load.message,
            "Invalid params: session/load.cwd does not exist: '/gone'"
        );
    }

    #[test]
    fn additional_directories_must_be_absolute_existing_directories() {
        let found = |path: &str| match path {
            "/data" | "/opt/lib" => CwdKind::Directory,
            "/etc/hosts" => CwdKind::NotADirectory,
            _ => CwdKind::Missing,
        };
        let dirs = |list: &[&str]| list.iter().map(|d| (*d).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            check_additional_directories("session/new", &dirs(&["/data", "/opt/lib"]), found),
            Ok(())
        );
        assert_eq!(
            check_additional_directories("session/new", &[], found),
            Ok(())
        );
        let cases = [
            (
                "session/new",
                dirs(&["x"]),
                "Invalid params: session/new.additionalDirectories[0] must be an absolute path, got 'x'",
            ),
            (
                "session/load",
                dirs(&["/data", "../up"]),
                "Invalid params: session/load.additionalDirectories[1] must be an absolute path, got '../up'",
            ),
            (
                "session/resume",
                dirs(&["/data", "/opt/lib", "/gone"]),
                "Invalid params: session/resume.additionalDirectories[2] does not exist: '/gone'",
            ),
            (
                "session/new",
                dirs(&["/etc/hosts"]),
                "Invalid params: session/new.additionalDirectories[0] is not a directory: '/etc/hosts'",
            ),
        ];
        for (method, list, message) in cases {
            let refusal = check_additional_directories(method, &list, found).unwrap_err();
            assert_eq!(refusal.code, ErrorCode::INVALID_PARAMS);
            assert_eq!(refusal.message, message);
        }
    }

    #[test]
    fn a_system_prompt_must_be_append_mode_and_text_only() {
        let text = |t: &str| ContentBlock::text(t);
        let prompt = SystemPrompt::new(
            SystemPromptMode::Append,
            vec![text("Be brief."), text("Cite.")],
        );
        assert_eq!(
            check_system_prompt("session/new", &prompt),
            Ok("Be brief.\nCite.".to_owned())
        );
        let image = acp_core::schema::ContentBlock::Image(Default::default());
        let cases = [
            (
                SystemPrompt::new(SystemPromptMode::Override, vec![text("x")]),
                "Invalid params: session/new.systemPrompt.mode 'override' is not supported; only 'append' is advertised",
            ),
            (
                SystemPrompt::new(SystemPromptMode::Append, vec![]),
                "Invalid params: session/new.systemPrompt.content must not be empty",
            ),
            (
                SystemPrompt::new(SystemPromptMode::Append, vec![text("x"), image]),
                "Invalid params: session/new.systemPrompt.content[1] must be a text block, got 'image'",
            ),
        ];
        for (prompt, message) in cases {
            let refusal = check_system_prompt("session/new", &prompt).unwrap_err();
            assert_eq!(refusal.code, ErrorCode::INVALID_PARAMS);
            assert_eq!(refusal.message, message);
        }
    }

    #[test]
    fn ids_are_unique_and_shaped_like_agentaos() {
        let mut table = SessionTable::with_nonce(0xabc);
        let (a, _) = table.open("/p");
        let (b, _) = table.open("/p");
        assert_ne!(a, b);
        assert_eq!(a, "sess_0000000000000abc0000000000000001");
        assert_eq!(a.len(), "sess_".len() + 32);
        assert_eq!(table.len(), 2);
        assert_ne!(
            SessionTable::default().open("/p").0,
            SessionTable::default().open("/p").0,
            "two processes (tables) do not share ids"
        );
    }

    #[test]
    fn a_table_with_a_model_opens_sessions_with_it_and_switches_within_its_provider() {
        let mut table = SessionTable::with_nonce(1).with_model("OpenAI", "gpt-4o-mini");
        let (id, answer) = table.open("/p");
        let options = answer.config_options.expect("configOptions");
        assert!(matches!(
            &options[0].kind,
            acp_core::schema::SessionConfigKind::Select { current_value, .. }
                if current_value == "openai/gpt-4o-mini"
        ));
        let session = table.get_mut(&id).unwrap();
        session
            .set_config_option("model", &SessionConfigValue::Id("openai/gpt-4.1".into()))
            .unwrap();
        assert_eq!(session.model, "gpt-4.1");
        assert_eq!(session.set_model("o3"), Ok("o3".to_owned()));
        let refusal = session
            .set_config_option("model", &SessionConfigValue::Id("demo/demo".into()))
            .unwrap_err();
        assert_eq!(refusal.message, "cannot resolve provider 'demo'");
        // A session the demo backend saved opens with the configured model.
        table.open_stored("sess_x", "/p", None, "demo");
        assert_eq!(table.get("sess_x").unwrap().model, "gpt-4o-mini");
        table.open_stored("sess_y", "/p", None, "llama3");
        assert_eq!(table.get("sess_y").unwrap().model, "llama3");
    }

    #[test]
    fn session_new_answers_modes_and_config_options_as_agentao_does() {
        let mut table = SessionTable::with_nonce(1);
        let (id, answer) = table.open("/p");
        let modes = answer.modes.expect("modes");
        assert_eq!(modes.current_mode_id, "workspace-write");
        let ids: Vec<_> = modes
            .available_modes
            .iter()
            .map(|m| m.id.as_str())
            .collect();
        assert_eq!(ids, ["read-only", "workspace-write", "full-access", "plan"]);
        let names: Vec<_> = modes
            .available_modes
            .iter()
            .map(|m| (m.name.as_str(), m.description.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(
            names,
            [
                ("Read-only", "No writes or shell."),
                ("Workspace write", "Writes + safe shell; asks for web."),
                ("Full access", "All tools, no prompts."),
                ("Plan", "Plans only; does not execute."),
            ]
        );
        let options = answer.config_options.expect("configOptions");
        assert_eq!(options, table.get(&id).unwrap().config_options());
        assert_eq!(options.len(), 1);
        assert_eq!(options[0].id, "model");
        assert_eq!(options[0].name, "Model");
        assert_eq!(
            options[0].category,
            Some(SessionConfigOptionCategory::Model)
        );
        match &options[0].kind {
            acp_core::schema::SessionConfigKind::Select {
                current_value,
                options,
            } => {
                assert_eq!(current_value, "demo/demo");
                let acp_core::schema::SessionConfigSelectOptions::Ungrouped(choices) = options
                else {
                    panic!("a flat list");
                };
                assert_eq!(choices.len(), 1);
                assert_eq!(choices[0].value, "demo/demo");
                assert_eq!(choices[0].name, "demo");
            }
            other => panic!("a select, got {other:?}"),
        }
    }

    #[test]
    fn presets_change_the_posture_and_other_mode_ids_are_only_stored() {
        let mut s = AgentSession::new("/p");
        s.set_mode("full-access");
        assert_eq!(
            (s.mode_id.as_str(), s.posture),
            ("full-access", Posture::FullAccess)
        );
        s.set_mode("code");
        assert_eq!(
            (s.mode_id.as_str(), s.posture),
            ("code", Posture::FullAccess)
        );
        s.set_mode("plan");
        assert_eq!(s.posture, Posture::Plan);
    }

    fn id(v: &str) -> SessionConfigValue {
        SessionConfigValue::Id(v.to_owned())
    }

    #[test]
    fn set_config_option_switches_the_model_and_answers_every_option() {
        let mut s = AgentSession::new("/p");
        let options = s.set_config_option("model", &id(" demo/fast ")).unwrap();
        assert_eq!(s.model, "fast");
        assert_eq!(options, s.config_options());
        s.set_config_option("model", &id("DEMO/big")).unwrap();
        assert_eq!(s.model, "big");
        s.set_config_option("model", &id("small")).unwrap();
        assert_eq!((s.provider.as_str(), s.model.as_str()), ("demo", "small"));
    }

    #[test]
    fn set_config_option_refusals_carry_agentaos_codes_and_texts() {
        let mut s = AgentSession::new("/p");
        let cases = [
            (
                "mode",
                id("x"),
                -32600,
                "unknown configId 'mode'; only 'model' is supported",
            ),
            (
                "model",
                id("  "),
                -32602,
                "Invalid params: session/set_config_option.value must be a non-empty string",
            ),
            (
                "model",
                SessionConfigValue::Boolean(true),
                -32602,
                "Invalid params: session/set_config_option.value must be a non-empty string",
            ),
            (
                "model",
                id("openai/"),
                -32602,
                "Invalid params: session/set_config_option.value 'provider/model' must have a non-empty provider and model",
            ),
            (
                "model",
                id("/x"),
                -32602,
                "Invalid params: session/set_config_option.value 'provider/model' must have a non-empty provider and model",
            ),
            (
                "model",
                id("Anthropic/claude"),
                -32600,
                "cannot resolve provider 'anthropic'",
            ),
        ];
        for (config_id, value, code, message) in cases {
            let refusal = s.set_config_option(config_id, &value).unwrap_err();
            assert_eq!(refusal.code, ErrorCode(code), "{message}");
            assert_eq!(refusal.message, message);
        }
        assert_eq!(s.model, "demo", "nothing changed");
    }

    #[test]
    fn set_model_trims_and_answers_the_active_model() {
        let mut s = AgentSession::new("/p");
        assert_eq!(s.set_model("  fake-model ").unwrap(), "fake-model");
        assert_eq!(s.model, "fake-model");
        let refusal = s.set_model(" ").unwrap_err();
        assert_eq!(refusal.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(
            refusal.message,
            "Invalid params: _agentao.cn/set_model.model must be a non-empty string"
        );
    }
}
