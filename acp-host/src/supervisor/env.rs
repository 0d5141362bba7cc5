//! The environment a server process is started with.
//!
//! The host's own environment, minus the LLM provider keys the host itself uses (a project's
//! agent should not silently inherit the user's paid credentials), then the server's `env` on
//! top, so a config can hand a key over on purpose. The driver supplies the host environment;
//! nothing here reads it.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// Provider keys removed from the inherited environment. `GOOGLE_API_KEY` is deliberately not
/// here (Agentao keeps it).
pub const SCRUBBED_KEYS: [&str; 12] = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "MOONSHOT_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "OPENROUTER_API_KEY",
    "XAI_API_KEY",
    "LLM_API_KEY",
    "LLM_EXTRA_BODY",
];

/// The switch that turns the scrub off when set to `0`, `false`, `no` or `off`
/// (case-insensitive).
pub const SCRUB_SWITCH: &str = "AGENTAO_SCRUB_CHILD_ENV";

/// The child's environment: `host` minus [`SCRUBBED_KEYS`] and `<LLM_PROVIDER>_API_KEY`
/// (unless [`SCRUB_SWITCH`] opts out), then `config_env` over it. Sorted by name.
pub fn child_env<'a>(
    host: impl IntoIterator<Item = (&'a str, &'a str)>,
    config_env: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let host: BTreeMap<&str, &str> = host.into_iter().collect();
    let scrub = !host.get(SCRUB_SWITCH).is_some_and(|v| {
        ["0", "false", "no", "off"]
            .iter()
            .any(|off| v.eq_ignore_ascii_case(off))
    });
    let provider_key = host
        .get("LLM_PROVIDER")
        .filter(|p| !p.is_empty())
        .map(|p| alloc::format!("{}_API_KEY", p.to_ascii_uppercase()));
    let mut env: BTreeMap<String, String> = host
        .iter()
        .filter(|(k, _)| {
            !scrub || !(SCRUBBED_KEYS.contains(k) || provider_key.as_deref() == Some(**k))
        })
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in config_env {
        env.insert(k.clone(), v.clone());
    }
    env.into_iter().collect()
}
