//! Which model server to talk to, read from the environment the way Agentao reads it.
//!
//! `LLM_PROVIDER` (default `openai`, lower-cased) names the provider; `<PROVIDER>_API_KEY`,
//! `<PROVIDER>_BASE_URL` and `<PROVIDER>_MODEL` configure it (`<PROVIDER>` upper-cased). Only
//! `openai` has a built-in endpoint and model; any other provider needs its `_BASE_URL` and
//! `_MODEL`. `--model provider/model` (or a bare `model`) overrides the choice.
//!
//! `SSL_CERT_FILE` adds trusted certificates for `https://` base URLs. `LLM_CONNECT_TIMEOUT`
//! and `LLM_IDLE_TIMEOUT` (seconds) bound a request so a stuck server never hangs a turn
//! (R-LLM-6).
//!
//! Reading never fails: the agent must start and open sessions without a key. What is missing
//! is reported by [`ModelConfig::check`] when a prompt needs the model.

use core::fmt;
use core::time::Duration;

use crate::model::chat::ModelError;
use crate::net::endpoint::Endpoint;

/// The provider used when `LLM_PROVIDER` is unset or empty.
pub(crate) const DEFAULT_PROVIDER: &str = "openai";

/// OpenAI's public endpoint, the default `OPENAI_BASE_URL`.
pub(crate) const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// The model used for `openai` when `OPENAI_MODEL` is unset.
pub(crate) const OPENAI_DEFAULT_MODEL: &str = "gpt-4o-mini";

/// How long connecting (TCP and the TLS handshake) may take unless `LLM_CONNECT_TIMEOUT`
/// says otherwise (R-LLM-6).
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the server may send nothing, before the response head or between two pieces of
/// the body, unless `LLM_IDLE_TIMEOUT` says otherwise (R-LLM-6). Generous: a slow model may
/// think a while before its first token.
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The limits on one model request; `None` is no limit (the variable set to `0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Connecting: TCP, then the TLS handshake for `https://`.
    pub connect: Option<Duration>,
    /// Silence: no byte while waiting for the head, or between two reads of the body.
    pub idle: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Some(DEFAULT_CONNECT_TIMEOUT),
            idle: Some(DEFAULT_IDLE_TIMEOUT),
        }
    }
}

impl Timeouts {
    /// Reads `LLM_CONNECT_TIMEOUT` and `LLM_IDLE_TIMEOUT` through `lookup`: seconds (a
    /// fraction allowed), `0` for none, unset or empty for the default. The error names the
    /// variable and its value.
    pub(crate) fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let read = |name: &str, default: Duration| -> Result<Option<Duration>, String> {
            let Some(value) = lookup(name).filter(|value| !value.trim().is_empty()) else {
                return Ok(Some(default));
            };
            let seconds = value
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
                .ok_or_else(|| {
                    format!("{name} '{value}' is not a number of seconds (0 for no limit)")
                })?;
            Ok((!seconds.is_zero()).then_some(seconds))
        };
        Ok(Self {
            connect: read("LLM_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT)?,
            idle: read("LLM_IDLE_TIMEOUT", DEFAULT_IDLE_TIMEOUT)?,
        })
    }
}

/// An API key. It leaves this type only through [`ApiKey::expose`], which the HTTP client
/// calls to write the `Authorization` header; `Debug` and `Display` print a placeholder.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub(crate) fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the `Authorization` header and nothing else.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// A model choice as Agentao's `set_model` takes it: `provider/model` or a bare `model`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ModelChoice {
    /// `provider/model`: switch provider (lower-cased) and model.
    WithProvider {
        /// The provider, trimmed and lower-cased.
        provider: String,
        /// The model, trimmed.
        model: String,
    },
    /// A bare model name (trimmed): keep the provider.
    Model(String),
}

impl ModelChoice {
    /// Parses a choice, splitting on the first `/` as Agentao does. Errors are the texts of
    /// Agentao's `set_config_option` checks (without the method prefix).
    pub(crate) fn parse(value: &str) -> Result<Self, String> {
        let value = value.trim();
        if value.is_empty() {
            return Err("value must be a non-empty string".to_owned());
        }
        match value.split_once('/') {
            Some((provider, model)) => {
                let provider = provider.trim().to_lowercase();
                let model = model.trim();
                if provider.is_empty() || model.is_empty() {
                    return Err(
                        "value 'provider/model' must have a non-empty provider and model"
                            .to_owned(),
                    );
                }
                Ok(Self::WithProvider {
                    provider,
                    model: model.to_owned(),
                })
            }
            None => Ok(Self::Model(value.to_owned())),
        }
    }
}

/// Where and how to reach the model: everything a request needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelConfig {
    /// The provider, lower-cased (`openai`, `deepseek`, `ollama`, …).
    pub provider: String,
    /// The model name as the provider knows it. Empty when nothing names one.
    pub model: String,
    /// The API key, if `<PROVIDER>_API_KEY` is set and not empty.
    pub api_key: Option<ApiKey>,
    /// The base URL requests go to (`…/chat/completions` is appended). Empty when the
    /// provider has no default and `<PROVIDER>_BASE_URL` is unset.
    pub base_url: String,
    /// `SSL_CERT_FILE`: a PEM file of extra trusted certificates (a local server's own CA or
    /// a company proxy's), trusted beside the built-in roots. Python's OpenAI SDK reads the
    /// same variable.
    pub ca_file: Option<String>,
    /// `LLM_CONNECT_TIMEOUT` and `LLM_IDLE_TIMEOUT`, or why they cannot be used (reported
    /// by [`ModelConfig::check`], like every other configuration error).
    pub timeouts: Result<Timeouts, String>,
}

impl ModelConfig {
    /// Reads the configuration through `lookup` (the process environment in the binary, a
    /// map in tests). `model_override` is `--model`: `provider/model` selects the provider
    /// too; a bare model keeps `LLM_PROVIDER`'s.
    pub fn from_env(
        lookup: impl Fn(&str) -> Option<String>,
        model_override: Option<&str>,
    ) -> Result<Self, String> {
        let set = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        let choice = model_override.map(ModelChoice::parse).transpose()?;
        let provider = match &choice {
            Some(ModelChoice::WithProvider { provider, .. }) => provider.clone(),
            _ => set("LLM_PROVIDER")
                .map(|p| p.trim().to_lowercase())
                .unwrap_or_else(|| DEFAULT_PROVIDER.to_owned()),
        };
        let prefix = provider.to_uppercase();
        let api_key = set(&format!("{prefix}_API_KEY")).map(|key| ApiKey::new(key.trim()));
        let base_url = set(&format!("{prefix}_BASE_URL"))
            .map(|url| url.trim().trim_end_matches('/').to_owned())
            .unwrap_or_else(|| default_base_url(&provider).to_owned());
        let model = match choice {
            Some(ModelChoice::WithProvider { model, .. } | ModelChoice::Model(model)) => model,
            None => set(&format!("{prefix}_MODEL"))
                .map(|m| m.trim().to_owned())
                .unwrap_or_else(|| default_model(&provider).to_owned()),
        };
        Ok(Self {
            provider,
            model,
            api_key,
            base_url,
            ca_file: set("SSL_CERT_FILE"),
            timeouts: Timeouts::from_env(&lookup),
        })
    }

    /// The variable that holds this provider's key, e.g. `OPENAI_API_KEY`.
    pub(crate) fn key_variable(&self) -> String {
        format!("{}_API_KEY", self.provider.to_uppercase())
    }

    /// Whether a request can be made: a key, a base URL that parses and a model. The errors
    /// are what a prompt is answered with.
    pub(crate) fn check(&self) -> Result<(), ModelError> {
        let Some(key) = &self.api_key else {
            return Err(ModelError::MissingKey {
                variable: self.key_variable(),
                provider: self.provider.clone(),
            });
        };
        // The key goes into a header line: a line break in it would end the header.
        if key.expose().chars().any(char::is_control) {
            return Err(ModelError::Config(format!(
                "{} contains a control character",
                self.key_variable()
            )));
        }
        self.endpoint()?;
        self.timeouts.clone().map_err(ModelError::Config)?;
        if self.model.is_empty() {
            return Err(ModelError::Config(format!(
                "no model for provider '{}': set {}_MODEL or pass --model",
                self.provider,
                self.provider.to_uppercase()
            )));
        }
        Ok(())
    }

    /// The parsed base URL.
    pub(crate) fn endpoint(&self) -> Result<Endpoint, ModelError> {
        let variable = format!("{}_BASE_URL", self.provider.to_uppercase());
        if self.base_url.is_empty() {
            return Err(ModelError::Config(format!(
                "provider '{}' has no default endpoint: set {variable}",
                self.provider
            )));
        }
        Endpoint::parse(&self.base_url)
            .map_err(|why| ModelError::Config(format!("{variable} '{}' {why}", self.base_url)))
    }
}

/// The built-in endpoint of a provider, or `""` when it has none.
fn default_base_url(provider: &str) -> &'static str {
    match provider {
        "openai" => OPENAI_BASE_URL,
        _ => "",
    }
}

/// The built-in model of a provider, or `""` when it has none.
fn default_model(provider: &str) -> &'static str {
    match provider {
        "openai" => OPENAI_DEFAULT_MODEL,
        _ => "",
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

    #[test]
    fn defaults_to_openai_with_its_public_endpoint_and_model() {
        let config = ModelConfig::from_env(env(&[("OPENAI_API_KEY", "sk-test")]), None).unwrap();
        assert_eq!(config.provider, "openai");
        assert_eq!(config.base_url, "https://api.openai.com/v1");
        assert_eq!(config.model, OPENAI_DEFAULT_MODEL);
        assert_eq!(config.api_key.as_ref().unwrap().expose(), "sk-test");
        assert_eq!(config.check(), Ok(()));
        let endpoint = config.endpoint().unwrap();
        assert!(endpoint.tls);
        assert_eq!(
            (
                endpoint.host.as_str(),
                endpoint.port,
                endpoint.path.as_str()
            ),
            ("api.openai.com", 443, "/v1")
        );
    }

    #[test]
    fn provider_is_lower_cased_and_its_variables_upper_cased() {
        let config = ModelConfig::from_env(
            env(&[
                ("LLM_PROVIDER", " DeepSeek "),
                ("DEEPSEEK_API_KEY", "k"),
                ("DEEPSEEK_BASE_URL", "http://127.0.0.1:8080/v1/"),
                ("DEEPSEEK_MODEL", "deepseek-chat"),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(config.provider, "deepseek");
        assert_eq!(config.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(config.model, "deepseek-chat");
        assert_eq!(config.check(), Ok(()));
    }

    #[test]
    fn a_missing_key_is_reported_only_when_checked() {
        let config = ModelConfig::from_env(env(&[("OPENAI_API_KEY", "  ")]), None).unwrap();
        assert_eq!(config.api_key, None);
        let error = config.check().unwrap_err();
        assert_eq!(
            error.to_string(),
            "Authentication required: set OPENAI_API_KEY (LLM_PROVIDER=openai)"
        );
        assert_eq!(error.code(), -32000);
    }

    #[test]
    fn a_key_with_a_line_break_is_a_config_error() {
        let config =
            ModelConfig::from_env(env(&[("OPENAI_API_KEY", "sk-a\r\nX-Evil: 1")]), None).unwrap();
        assert_eq!(
            config.check().unwrap_err().to_string(),
            "model configuration: OPENAI_API_KEY contains a control character"
        );
    }

    #[test]
    fn another_provider_without_base_url_is_a_config_error() {
        let config = ModelConfig::from_env(
            env(&[("LLM_PROVIDER", "groq"), ("GROQ_API_KEY", "k")]),
            None,
        )
        .unwrap();
        assert_eq!(
            config.check().unwrap_err().to_string(),
            "model configuration: provider 'groq' has no default endpoint: set GROQ_BASE_URL"
        );
    }

    #[test]
    fn another_provider_without_model_is_a_config_error() {
        let config = ModelConfig::from_env(
            env(&[
                ("LLM_PROVIDER", "ollama"),
                ("OLLAMA_API_KEY", "k"),
                ("OLLAMA_BASE_URL", "http://localhost:11434/v1"),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(
            config.check().unwrap_err().to_string(),
            "model configuration: no model for provider 'ollama': set OLLAMA_MODEL or pass --model"
        );
    }

    #[test]
    fn a_bad_base_url_is_a_config_error_naming_the_variable() {
        let config = ModelConfig::from_env(
            env(&[("OPENAI_API_KEY", "k"), ("OPENAI_BASE_URL", "ftp://x")]),
            None,
        )
        .unwrap();
        assert_eq!(
            config.check().unwrap_err().to_string(),
            "model configuration: OPENAI_BASE_URL 'ftp://x' is not an http:// or https:// URL"
        );
    }

    #[test]
    fn model_override_bare_keeps_the_provider() {
        let config = ModelConfig::from_env(
            env(&[("OPENAI_API_KEY", "k"), ("OPENAI_MODEL", "gpt-x")]),
            Some(" o3 "),
        )
        .unwrap();
        assert_eq!(
            (config.provider.as_str(), config.model.as_str()),
            ("openai", "o3")
        );
    }

    #[test]
    fn model_override_with_provider_selects_that_provider() {
        let config = ModelConfig::from_env(
            env(&[
                ("LLM_PROVIDER", "openai"),
                ("OLLAMA_API_KEY", "none"),
                ("OLLAMA_BASE_URL", "http://localhost:11434/v1"),
            ]),
            Some("Ollama/qwen3:8b"),
        )
        .unwrap();
        assert_eq!(config.provider, "ollama");
        assert_eq!(config.model, "qwen3:8b");
        assert_eq!(config.base_url, "http://localhost:11434/v1");
        assert_eq!(config.check(), Ok(()));
    }

    #[test]
    fn model_override_errors_are_agentaos_texts() {
        assert_eq!(
            ModelConfig::from_env(env(&[]), Some("openai/")).unwrap_err(),
            "value 'provider/model' must have a non-empty provider and model"
        );
        assert_eq!(
            ModelConfig::from_env(env(&[]), Some("   ")).unwrap_err(),
            "value must be a non-empty string"
        );
    }

    /// R-LLM-6: the timeouts default to 30 s and 120 s, take seconds (a fraction allowed),
    /// and `0` lifts them.
    #[test]
    fn timeouts_default_and_read_seconds_from_their_variables() {
        let config = ModelConfig::from_env(env(&[("OPENAI_API_KEY", "k")]), None).unwrap();
        assert_eq!(
            config.timeouts,
            Ok(Timeouts {
                connect: Some(Duration::from_secs(30)),
                idle: Some(Duration::from_secs(120)),
            })
        );
        let config = ModelConfig::from_env(
            env(&[
                ("OPENAI_API_KEY", "k"),
                ("LLM_CONNECT_TIMEOUT", " 0.25 "),
                ("LLM_IDLE_TIMEOUT", "0"),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(
            config.timeouts,
            Ok(Timeouts {
                connect: Some(Duration::from_millis(250)),
                idle: None,
            })
        );
        assert_eq!(config.check(), Ok(()));
        assert_eq!(crate::net::seconds(Duration::from_secs(30)), "30");
        assert_eq!(crate::net::seconds(Duration::from_millis(500)), "0.5");
    }

    /// R-LLM-6: a timeout that is not a number of seconds fails the prompt, naming it.
    #[test]
    fn a_bad_timeout_is_a_config_error_naming_the_variable() {
        for (name, value) in [
            ("LLM_IDLE_TIMEOUT", "2m"),
            ("LLM_CONNECT_TIMEOUT", "-1"),
            ("LLM_CONNECT_TIMEOUT", "NaN"),
        ] {
            let config =
                ModelConfig::from_env(env(&[("OPENAI_API_KEY", "k"), (name, value)]), None)
                    .unwrap();
            assert_eq!(
                config.check().unwrap_err().to_string(),
                format!(
                    "model configuration: {name} '{value}' is not a number of seconds (0 for no limit)"
                )
            );
        }
    }

    #[test]
    fn the_key_never_shows_in_debug_or_display() {
        let config =
            ModelConfig::from_env(env(&[("OPENAI_API_KEY", "sk-secret-123")]), None).unwrap();
        let debug = format!("{config:?}");
        assert!(!debug.contains("sk-secret-123"), "{debug}");
        assert!(debug.contains("ApiKey(<redacted>)"), "{debug}");
        assert_eq!(ApiKey::new("sk-secret-123").to_string(), "<redacted>");
    }
}
