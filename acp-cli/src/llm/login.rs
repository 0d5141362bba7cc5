//! `acp-cli --login` and `acp-cli --logout`: the llm backend's terminal login (the `terminal`
//! auth method's command, R-AUTH-8).
//!
//! The login asks for the provider, the base URL, the model and the key (not echoed at a
//! terminal; a plain line when stdin is not one), checks the key with one
//! `GET <base URL>/models` (it lists models and spends no tokens; OpenAI, Ollama and
//! llama.cpp's server all serve it), then saves everything to the credentials file
//! ([`super::credentials`]). Prompts and messages go to stderr, so stdout stays clean.

use std::io::{BufRead, Write};
use std::path::Path;

use super::config::{ModelConfig, Timeouts};
use super::credentials::{self, Credentials};
use crate::net::connection::{Connection, HeadError, read_head, write_request_head};
use crate::net::endpoint::Endpoint;

/// Providers with a built-in base URL (and, for OpenAI, a model): `(name, base URL, model)`.
pub const KNOWN_PROVIDERS: &[(&str, &str, &str)] = &[
    (
        "openai",
        super::config::OPENAI_BASE_URL,
        super::config::OPENAI_DEFAULT_MODEL,
    ),
    ("ollama", "http://localhost:11434/v1", ""),
    ("llamacpp", "http://localhost:8080/v1", ""),
];

/// What local servers that check no key are given when the user types none.
const NO_KEY: &str = "none";

/// The provider id for a typed name: lower-cased, `llama.cpp` spelled as its variables
/// need it (`LLAMACPP_API_KEY`).
fn provider_id(typed: &str) -> String {
    match typed.trim().to_lowercase().as_str() {
        "llama.cpp" | "llama-cpp" | "llama_cpp" => "llamacpp".to_owned(),
        other => other.to_owned(),
    }
}

/// Whether the provider runs on the user's machine and checks no key (an empty key is
/// stored as `none`).
fn is_local(provider: &str) -> bool {
    matches!(provider, "ollama" | "llamacpp")
}

/// The terminal the login talks to: lines, and the key read without echo when possible.
pub trait Prompter {
    /// Shows `prompt` and reads one line (`None` at the end of input).
    fn line(&mut self, prompt: &str) -> Option<String>;
    /// Shows `prompt` and reads the key without echoing it (`None` at the end of input).
    fn secret(&mut self, prompt: &str) -> Option<String>;
    /// Says something to the user.
    fn say(&mut self, text: &str);
}

/// The process's terminal: prompts on stderr, answers from stdin; at a terminal, the key is
/// read with echo off (and echo comes back even when reading fails).
pub struct StdioPrompter;

impl StdioPrompter {
    fn read_line() -> Option<String> {
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
        }
    }
}

impl Prompter for StdioPrompter {
    fn line(&mut self, prompt: &str) -> Option<String> {
        self.say_inline(prompt);
        Self::read_line()
    }

    fn secret(&mut self, prompt: &str) -> Option<String> {
        let stdin = std::io::stdin();
        let Ok(saved) = rustix::termios::tcgetattr(&stdin) else {
            // Not a terminal (a pipe, a file): a plain line.
            self.say_inline(prompt);
            return Self::read_line();
        };
        // Echo goes off before the prompt shows: a key typed as soon as it shows is hidden.
        let mut quiet = saved.clone();
        quiet.local_modes.remove(rustix::termios::LocalModes::ECHO);
        let _ = rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &quiet);
        self.say_inline(prompt);
        let line = Self::read_line();
        let _ = rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &saved);
        // The Enter the user typed was not echoed either.
        self.say("");
        line
    }

    fn say(&mut self, text: &str) {
        let _ = writeln!(std::io::stderr(), "{text}");
    }
}

impl StdioPrompter {
    fn say_inline(&mut self, text: &str) {
        let mut stderr = std::io::stderr();
        let _ = write!(stderr, "{text}");
        let _ = stderr.flush();
    }
}

/// Asks with a default shown in brackets; an empty answer takes it.
fn ask(prompter: &mut dyn Prompter, question: &str, default: &str) -> Result<String, String> {
    let prompt = if default.is_empty() {
        format!("{question}: ")
    } else {
        format!("{question} [{default}]: ")
    };
    let answer = prompter
        .line(&prompt)
        .ok_or_else(|| "login cancelled: the input ended".to_owned())?;
    let answer = answer.trim();
    Ok(if answer.is_empty() {
        default.to_owned()
    } else {
        answer.to_owned()
    })
}

/// Runs the login: asks, checks the key, saves to `file`. `env` gives the defaults
/// (`LLM_PROVIDER`, `<PROVIDER>_BASE_URL`, `_MODEL`; never a key) and the TLS and timeout
/// settings. The error is the message to show; it never holds the key.
pub fn login(
    prompter: &mut dyn Prompter,
    env: &dyn Fn(&str) -> Option<String>,
    file: Option<&Path>,
) -> Result<Credentials, String> {
    let file =
        file.ok_or("no config directory: set XDG_CONFIG_HOME or HOME to an absolute directory")?;
    let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let names: Vec<&str> = KNOWN_PROVIDERS.iter().map(|p| p.0).collect();
    let provider = provider_id(&ask(
        prompter,
        &format!("Provider ({}, or another)", names.join(", ")),
        &set("LLM_PROVIDER").map_or_else(|| "openai".to_owned(), |p| provider_id(&p)),
    )?);
    if provider.is_empty()
        || !provider
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(format!(
            "provider '{provider}' must be letters, digits or '_' (it names <PROVIDER>_API_KEY)"
        ));
    }
    let prefix = provider.to_uppercase();
    let known = KNOWN_PROVIDERS.iter().find(|p| p.0 == provider);
    let base_url = ask(
        prompter,
        "Base URL",
        &set(&format!("{prefix}_BASE_URL")).unwrap_or_else(|| known.map_or("", |p| p.1).to_owned()),
    )?;
    let base_url = base_url.trim_end_matches('/').to_owned();
    if base_url.is_empty() {
        return Err(format!(
            "provider '{provider}' has no default base URL: type one"
        ));
    }
    let endpoint =
        Endpoint::parse(&base_url).map_err(|why| format!("base URL '{base_url}' {why}"))?;
    let model = ask(
        prompter,
        "Model",
        &set(&format!("{prefix}_MODEL")).unwrap_or_else(|| known.map_or("", |p| p.2).to_owned()),
    )?;
    if model.is_empty() {
        return Err(format!(
            "provider '{provider}' has no default model: type one"
        ));
    }
    let key_prompt = if is_local(&provider) {
        format!("API key (not shown; empty for '{NO_KEY}'): ")
    } else {
        "API key (not shown): ".to_owned()
    };
    let key = prompter
        .secret(&key_prompt)
        .ok_or_else(|| "login cancelled: the input ended".to_owned())?;
    let key = match key.trim() {
        "" if is_local(&provider) => NO_KEY.to_owned(),
        "" => return Err("no API key given".to_owned()),
        key if key.chars().any(char::is_control) => {
            return Err("the API key contains a control character".to_owned());
        }
        key => key.to_owned(),
    };
    let timeouts = Timeouts::from_env(env)?;
    let ca_file = set("SSL_CERT_FILE");
    prompter.say(&format!("Checking the key: GET {base_url}/models"));
    smol::block_on(check_key(&endpoint, &key, ca_file.as_deref(), timeouts))?;
    let credentials = Credentials {
        provider,
        base_url,
        model,
        api_key: key,
    };
    credentials::save(file, &credentials)?;
    prompter.say(&format!(
        "Logged in: {}/{} saved to {}",
        credentials.provider,
        credentials.model,
        file.display()
    ));
    Ok(credentials)
}

/// `GET <base>/models` with the key: any 2xx is a key the server takes. The error says what
/// the server answered, never the key (nor the body, which may echo it).
async fn check_key(
    endpoint: &Endpoint,
    key: &str,
    ca_file: Option<&str>,
    timeouts: Timeouts,
) -> Result<(), String> {
    let url = format!(
        "{}://{}{}/models",
        if endpoint.tls { "https" } else { "http" },
        endpoint.host_header(),
        endpoint.path
    );
    let mut connection = Connection::open(endpoint, ca_file, timeouts.connect)
        .await
        .map_err(|error| format!("cannot reach {url}: {}", error.text()))?;
    let authorization = format!("Bearer {key}");
    let head = write_request_head(
        "GET",
        &format!("{}/models", endpoint.path),
        &endpoint.host_header(),
        &[
            ("Authorization", authorization.as_str()),
            ("Accept", "application/json"),
        ],
        None,
    );
    connection
        .send(&head, &[])
        .await
        .map_err(|error| format!("cannot reach {url}: {error}"))?;
    let (head, _) =
        read_head(&mut connection, timeouts.idle)
            .await
            .map_err(|error| match error {
                HeadError::Closed(why) | HeadError::Malformed(why) => {
                    format!("GET {url} failed: {why}")
                }
                HeadError::Idle(limit) => format!(
                    "GET {url} failed: no answer within {} s",
                    crate::net::seconds(limit)
                ),
            })?;
    match head.status {
        200..=299 => Ok(()),
        401 | 403 => Err(format!(
            "the server refused the key: GET {url} answered HTTP {}",
            head.status
        )),
        status => Err(format!(
            "the key could not be checked: GET {url} answered HTTP {status}"
        )),
    }
}

/// `acp-cli --logout`: removes the credentials file. The text says what happened.
pub fn logout(file: Option<&Path>) -> Result<String, String> {
    let file =
        file.ok_or("no config directory: set XDG_CONFIG_HOME or HOME to an absolute directory")?;
    Ok(if credentials::remove(file)? {
        format!("Logged out: removed {}", file.display())
    } else {
        format!("Not logged in: no {}", file.display())
    })
}

/// Whether `config` has what a request needs (a key above all), for the agent's
/// `authenticate` and its start: `Err` is the text `authenticate` is refused with.
pub fn check_logged_in(config: &ModelConfig) -> Result<(), String> {
    if config.api_key.is_none() {
        return Err(format!(
            "Authentication required: set {} or run `acp-cli --login`",
            config.key_variable()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Script(Vec<&'static str>, Vec<String>);

    impl Prompter for Script {
        fn line(&mut self, prompt: &str) -> Option<String> {
            self.1.push(prompt.to_owned());
            (!self.0.is_empty()).then(|| self.0.remove(0).to_owned())
        }
        fn secret(&mut self, prompt: &str) -> Option<String> {
            self.line(prompt)
        }
        fn say(&mut self, text: &str) {
            self.1.push(text.to_owned());
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    /// R-AUTH-8: every mistake the user can type is refused with its message, before any
    /// request and without writing the file.
    #[test]
    fn bad_answers_are_refused_with_their_message() {
        let file = Path::new("/nonexistent-acp-cli-test/acp-cli/credentials.json");
        let cases: &[(&[&str], &str)] = &[
            (&[], "login cancelled: the input ended"),
            (
                &["my provider"],
                "provider 'my provider' must be letters, digits or '_' (it names <PROVIDER>_API_KEY)",
            ),
            (
                &["groq", ""],
                "provider 'groq' has no default base URL: type one",
            ),
            (
                &["groq", "ftp://x"],
                "base URL 'ftp://x' is not an http:// or https:// URL",
            ),
            (
                &["ollama", "", ""],
                "provider 'ollama' has no default model: type one",
            ),
            (&["", "", "", ""], "no API key given"),
            (&["", "", ""], "login cancelled: the input ended"),
        ];
        for (answers, message) in cases {
            let mut script = Script(answers.to_vec(), Vec::new());
            assert_eq!(
                login(&mut script, &no_env, Some(file)).unwrap_err(),
                *message,
                "{answers:?}"
            );
        }
        let mut script = Script(vec![], Vec::new());
        assert_eq!(
            login(&mut script, &no_env, None).unwrap_err(),
            "no config directory: set XDG_CONFIG_HOME or HOME to an absolute directory"
        );
        assert_eq!(provider_id(" Llama.cpp "), "llamacpp");
    }

    /// R-AUTH-8: the defaults shown are OpenAI's, Ollama's and llama.cpp's.
    #[test]
    fn the_prompts_show_each_providers_defaults() {
        let file = Path::new("/nonexistent-acp-cli-test/acp-cli/credentials.json");
        let mut script = Script(vec!["llama.cpp", "", ""], Vec::new());
        let _ = login(&mut script, &no_env, Some(file));
        assert_eq!(
            script.1,
            [
                "Provider (openai, ollama, llamacpp, or another) [openai]: ",
                "Base URL [http://localhost:8080/v1]: ",
                "Model: ",
            ]
        );
        let mut script = Script(vec!["", ""], Vec::new());
        let _ = login(&mut script, &no_env, Some(file));
        assert_eq!(script.1[1], "Base URL [https://api.openai.com/v1]: ");
        assert_eq!(script.1[2], "Model [gpt-4o-mini]: ");
    }
}
