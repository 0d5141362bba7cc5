//! The llm backend's stored login: what `acp-cli --login` saves and `logout` removes.
//!
//! The file is `$XDG_CONFIG_HOME/acp-cli/credentials.json`, or
//! `~/.config/acp-cli/credentials.json` when `XDG_CONFIG_HOME` is unset or not absolute (the
//! XDG rule). It is one JSON object, `{"provider", "base_url", "model", "api_key"}`, written
//! with mode 0600 into a fresh file beside it and renamed over the old one, so a reader never
//! sees half a file and the key is never readable by others, not even for a moment.
//!
//! The environment wins over the file, variable by variable ([`ConfigSource::resolve`]):
//! `LLM_PROVIDER`, `<PROVIDER>_API_KEY`, `_BASE_URL` and `_MODEL` and `--model` each
//! override what was stored; the stored base URL, model and key apply only to the stored
//! provider.

use std::collections::HashMap;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::{ApiKey, ModelConfig};
use crate::agent::auth::Login;
use crate::model::chat::{ChatRequest, ModelError};
use crate::model::{Completion, ModelClient};

/// The file's name inside `<config dir>/acp-cli/`.
pub const FILE_NAME: &str = "credentials.json";

/// One stored login.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    /// The provider, lower-cased.
    pub provider: String,
    /// The base URL requests go to.
    pub base_url: String,
    /// The model.
    pub model: String,
    /// The key: in the file, and nowhere else.
    pub api_key: String,
}

impl core::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Credentials")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &"<redacted>")
            .finish()
    }
}

/// Where the credentials file is, from `XDG_CONFIG_HOME` or `HOME` (through `lookup`);
/// `None` when neither gives an absolute directory.
pub fn path(lookup: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let absolute = |name: &str| {
        lookup(name)
            .filter(|value| Path::new(value).is_absolute())
            .map(PathBuf::from)
    };
    let config = absolute("XDG_CONFIG_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".config")))?;
    Some(config.join("acp-cli").join(FILE_NAME))
}

/// Reads the file: `Ok(None)` when there is none. The error names the file, never its
/// content.
pub fn load(path: &Path) -> Result<Option<Credentials>, String> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
    };
    // serde_json's messages quote no input, only positions: the key cannot leak through them.
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|error| format!("{} is not a credentials file: {error}", path.display()))
}

/// Writes the file atomically with mode 0600, creating its directory (mode 0700) if needed.
pub fn save(path: &Path, credentials: &Credentials) -> Result<(), String> {
    let directory = path
        .parent()
        .ok_or_else(|| format!("{} has no directory", path.display()))?;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(directory)
        .map_err(|error| format!("cannot create {}: {error}", directory.display()))?;
    let temporary = directory.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
    let _ = fs::remove_file(&temporary);
    let written = (|| {
        // `create_new` with the mode: the file never exists with looser permissions.
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)?;
        // A umask cannot widen 0600, but an odd filesystem might: say it once more.
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
        let text = serde_json::to_string_pretty(credentials).map_err(std::io::Error::other)?;
        file.write_all(text.as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    written.map_err(|error| {
        let _ = fs::remove_file(&temporary);
        format!("cannot write {}: {error}", path.display())
    })
}

/// Removes the file. `Ok(false)` when there was none.
pub fn remove(path: &Path) -> Result<bool, String> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(format!("cannot remove {}: {error}", path.display())),
    }
}

/// Everything the llm backend's configuration is read from: the environment (a snapshot
/// taken at start), `--model`, and the credentials file, read again at each
/// [`ConfigSource::resolve`] so a login or logout while the agent runs counts at once.
#[derive(Clone)]
pub struct ConfigSource {
    env: HashMap<String, String>,
    model_override: Option<String>,
    file: Option<PathBuf>,
}

/// Names the file and `--model` only: the environment holds keys.
impl core::fmt::Debug for ConfigSource {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ConfigSource")
            .field("env", &format_args!("<{} variables>", self.env.len()))
            .field("model_override", &self.model_override)
            .field("file", &self.file)
            .finish()
    }
}

impl ConfigSource {
    /// A source over these variables, `--model` and the credentials file at `file`.
    pub fn new(
        env: impl IntoIterator<Item = (String, String)>,
        model_override: Option<String>,
        file: Option<PathBuf>,
    ) -> Self {
        Self {
            env: env.into_iter().collect(),
            model_override,
            file,
        }
    }

    /// The process's environment, `--model`, and the file where [`path`] says.
    pub fn from_process(model_override: Option<String>) -> Self {
        let env: HashMap<String, String> = std::env::vars().collect();
        let file = path(|name| env.get(name).cloned());
        Self {
            env,
            model_override,
            file,
        }
    }

    /// The credentials file's path, if there is a config directory.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// A variable of the snapshot.
    pub fn var(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }

    /// The configuration now: the environment, else the stored login, else the defaults. A
    /// credentials file that cannot be read counts as none (its error is in the log, without
    /// its content); `--model` errors are returned.
    pub fn resolve(&self) -> Result<ModelConfig, String> {
        let stored = match self.file.as_deref().map(load).transpose() {
            Ok(stored) => stored.flatten(),
            Err(error) => {
                tracing::warn!(%error, "credentials file ignored");
                None
            }
        };
        resolve(
            |name| self.env.get(name).cloned(),
            stored.as_ref(),
            self.model_override.as_deref(),
        )
    }
}

/// The configuration from `lookup` (the environment) over `stored` (the credentials file):
/// every variable that is set wins; the stored base URL, model and key apply only when the
/// provider is the stored one.
pub fn resolve(
    lookup: impl Fn(&str) -> Option<String>,
    stored: Option<&Credentials>,
    model_override: Option<&str>,
) -> Result<ModelConfig, String> {
    let set = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
    let Some(stored) = stored else {
        return ModelConfig::from_env(lookup, model_override);
    };
    // The stored provider stands in for an unset `LLM_PROVIDER`.
    let provider_env = set("LLM_PROVIDER").is_some();
    let with_provider = |name: &str| -> Option<String> {
        if name == "LLM_PROVIDER" && !provider_env {
            return Some(stored.provider.clone());
        }
        lookup(name)
    };
    let mut config = ModelConfig::from_env(with_provider, model_override)?;
    if config.provider != stored.provider {
        return Ok(config);
    }
    let prefix = config.provider.to_uppercase();
    if set(&format!("{prefix}_API_KEY")).is_none() && !stored.api_key.trim().is_empty() {
        config.api_key = Some(ApiKey::new(stored.api_key.trim()));
    }
    if set(&format!("{prefix}_BASE_URL")).is_none() && !stored.base_url.trim().is_empty() {
        config.base_url = stored.base_url.trim().trim_end_matches('/').to_owned();
    }
    let model_chosen = model_override.is_some_and(|m| !m.trim().is_empty());
    if !model_chosen && set(&format!("{prefix}_MODEL")).is_none() && !stored.model.is_empty() {
        config.model = stored.model.trim().to_owned();
    }
    Ok(config)
}

/// The llm backend's [`Login`]: the configuration [`ConfigSource::resolve`]s now, with a
/// key, is logged in; `logout` removes the credentials file.
#[derive(Clone, Debug)]
pub struct StoredLogin {
    source: ConfigSource,
}

impl StoredLogin {
    /// A login over `source`.
    pub fn new(source: ConfigSource) -> Self {
        Self { source }
    }
}

impl Login for StoredLogin {
    fn check(&mut self) -> Result<(String, String), String> {
        let config = self.source.resolve()?;
        super::login::check_logged_in(&config)?;
        Ok((config.provider, config.model))
    }

    fn forget(&mut self) -> Result<(), String> {
        match self.source.file() {
            Some(file) => remove(file).map(drop),
            None => Ok(()),
        }
    }
}

/// The model client of the llm backend: each request resolves the configuration again
/// ([`ConfigSource::resolve`]), so a key stored by a login while the agent runs is used
/// from the next request on, and a logout stops it.
#[derive(Clone, Debug)]
pub struct SourcedModel {
    source: ConfigSource,
    /// Providers whose server refused `stream_options`: asked without it for the rest of the
    /// run (R-LLM-USAGE-1).
    usage_refused: std::cell::RefCell<std::collections::HashSet<String>>,
}

impl SourcedModel {
    /// A client reading its configuration from `source`.
    pub fn new(source: ConfigSource) -> Self {
        Self {
            source,
            usage_refused: Default::default(),
        }
    }
}

impl ModelClient for SourcedModel {
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_event: &'a mut dyn FnMut(crate::model::chat::StreamEvent),
    ) -> Completion<'a> {
        Box::pin(async move {
            let config = self.source.resolve().map_err(ModelError::Config)?;
            let ask = if self.usage_refused.borrow().contains(&config.provider) {
                super::http::UsageAsk::Skip
            } else {
                super::http::UsageAsk::Ask
            };
            let outcome = super::http::stream_chat_usage(
                &config,
                request,
                on_event,
                ask,
                &super::retry::RetryPolicy::default(),
                &mut super::retry::TimerSleeper,
            )
            .await;
            if outcome.refused {
                self.usage_refused
                    .borrow_mut()
                    .insert(config.provider.clone());
            }
            outcome.result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    fn stored() -> Credentials {
        Credentials {
            provider: "ollama".into(),
            base_url: "http://localhost:11434/v1/".into(),
            model: "qwen3:8b".into(),
            api_key: "sk-test-SECRET123".into(),
        }
    }

    /// R-AUTH-8: the file is under `$XDG_CONFIG_HOME` when it is absolute, else `~/.config`.
    #[test]
    fn the_file_is_under_xdg_config_home_else_home_config() {
        assert_eq!(
            path(env(&[
                ("XDG_CONFIG_HOME", "/home/user/cfg"),
                ("HOME", "/home/user")
            ])),
            Some(PathBuf::from("/home/user/cfg/acp-cli/credentials.json"))
        );
        assert_eq!(
            path(env(&[
                ("XDG_CONFIG_HOME", "relative"),
                ("HOME", "/home/user")
            ])),
            Some(PathBuf::from("/home/user/.config/acp-cli/credentials.json"))
        );
        assert_eq!(path(env(&[])), None);
    }

    /// R-AUTH-8: the stored login applies when the environment says nothing.
    #[test]
    fn the_stored_login_fills_what_the_environment_leaves_unset() {
        let config = resolve(env(&[]), Some(&stored()), None).unwrap();
        assert_eq!(config.provider, "ollama");
        assert_eq!(config.base_url, "http://localhost:11434/v1");
        assert_eq!(config.model, "qwen3:8b");
        assert_eq!(config.api_key.unwrap().expose(), "sk-test-SECRET123");
    }

    /// R-AUTH-8: every variable that is set wins over the file, one by one.
    #[test]
    fn the_environment_wins_over_the_file() {
        let config = resolve(
            env(&[("OLLAMA_API_KEY", "env-key"), ("OLLAMA_MODEL", "llama3")]),
            Some(&stored()),
            None,
        )
        .unwrap();
        assert_eq!(config.api_key.unwrap().expose(), "env-key");
        assert_eq!(config.model, "llama3");
        assert_eq!(config.base_url, "http://localhost:11434/v1");
        let config = resolve(env(&[]), Some(&stored()), Some("other-model")).unwrap();
        assert_eq!(config.model, "other-model");
        // Another provider chosen: nothing stored for it applies.
        let config = resolve(env(&[("LLM_PROVIDER", "openai")]), Some(&stored()), None).unwrap();
        assert_eq!(config.provider, "openai");
        assert_eq!(config.api_key, None);
        assert_eq!(config.base_url, "https://api.openai.com/v1");
    }

    /// R-AUTH-8: the configuration source's `Debug` shows no variable's value.
    #[test]
    fn a_config_source_never_shows_the_environment() {
        let source = ConfigSource::new(
            [("OPENAI_API_KEY".to_owned(), "sk-test-SECRET123".to_owned())],
            None,
            None,
        );
        let debug = format!("{:?}", StoredLogin::new(source));
        assert!(!debug.contains("SECRET123"), "{debug}");
        assert!(debug.contains("<1 variables>"), "{debug}");
    }

    /// R-AUTH-8: saved with mode 0600, read back, removed; `Debug` hides the key.
    #[test]
    fn save_writes_a_private_file_that_load_reads_and_remove_deletes() {
        let directory =
            std::env::temp_dir().join(format!("acp-cli-credentials-unit-{}", std::process::id()));
        let file = directory.join("acp-cli").join(FILE_NAME);
        save(&file, &stored()).unwrap();
        let mode = fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(load(&file).unwrap(), Some(stored()));
        assert!(!format!("{:?}", stored()).contains("SECRET123"));
        assert_eq!(remove(&file), Ok(true));
        assert_eq!(remove(&file), Ok(false));
        assert_eq!(load(&file), Ok(None));
        fs::write(&file, "{\"api_key\": \"sk-test-SECRET123\"").unwrap();
        let error = load(&file).unwrap_err();
        assert!(!error.contains("SECRET123"), "{error}");
        assert!(error.contains("is not a credentials file"), "{error}");
        let _ = fs::remove_dir_all(&directory);
    }
}
