//! Logging in to the backend's service (R-AUTH-8): which auth methods `initialize` offers,
//! and the [`Login`] a backend hands the application to ask about credentials.
//!
//! A backend with a login (`--backend llm`) offers two methods and requires authentication
//! before sessions (R-AUTH-3): `api-key`, an `agent` method whose `authenticate` checks the
//! credentials now (the environment's key, else the stored login), and `login`, a
//! `terminal` method (`args: ["--login"]`) the client runs in the user's terminal to store
//! a login. The connection starts authenticated when credentials are there at start. A
//! backend without one (the demo) offers nothing and needs nothing (R-INIT-5).

use acp_core::conn::agent::{AgentConfig, AuthMethodSpec};

/// The `agent` method's id: credentials from the environment or the credentials file.
pub const AGENT_METHOD_ID: &str = "api-key";

/// The `terminal` method's id: `acp-cli … --login` in the user's terminal.
pub const TERMINAL_METHOD_ID: &str = "login";

/// The `terminal` method's arguments, appended to the agent's command line.
pub const TERMINAL_ARGS: &[&str] = &["--login"];

/// The backend's credentials, as the application asks about them.
pub trait Login: core::fmt::Debug {
    /// Checks the credentials now: the `(provider, model)` new sessions use, or the text
    /// `authenticate` is refused with (it never holds a key).
    fn check(&mut self) -> Result<(String, String), String>;
    /// Forgets the stored credentials (`logout`). The text is the error to answer.
    fn forget(&mut self) -> Result<(), String>;
}

/// The configuration of an agent whose backend has a login: both methods, `logout`, and
/// authentication required before sessions (R-AUTH-1, R-AUTH-3, R-AUTH-5).
pub fn configure(config: AgentConfig) -> AgentConfig {
    let mut config = config.with_auth_required(true);
    let methods = [
        AuthMethodSpec::agent(AGENT_METHOD_ID, "API key").description(
            "Use <PROVIDER>_API_KEY from the agent's environment, else the login stored by \
             `acp-cli --login`",
        ),
        AuthMethodSpec::terminal(TERMINAL_METHOD_ID, "Log in at the terminal")
            .description(
                "Choose the provider, base URL, model and key; the key is checked and stored",
            )
            .args(TERMINAL_ARGS),
    ];
    for method in &methods {
        // Two short methods always fit the list.
        let _ = config.offer_auth(method);
    }
    config.features.logout = true;
    config
}
