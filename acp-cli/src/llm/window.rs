//! The model's context window: what `usage_update.size` reports and what compaction keeps the
//! requests under (R-LLM-USAGE-2). `LLM_CONTEXT_WINDOW` sets it; otherwise it is known for
//! common model families, and [`DEFAULT_WINDOW`] for the rest.

/// The window of a model this table does not know, in tokens.
pub const DEFAULT_WINDOW: u64 = 128_000;

/// The variable that sets the window, in tokens.
pub const WINDOW_VARIABLE: &str = "LLM_CONTEXT_WINDOW";

/// The smallest window `LLM_CONTEXT_WINDOW` accepts: below it, no system prompt and tool list
/// fits.
pub const MIN_WINDOW: u64 = 256;

/// Known windows by model name prefix, most specific first (the name lower-cased, without a
/// `provider/` prefix).
const KNOWN: &[(&str, u64)] = &[
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude", 200_000),
    ("gemini", 1_048_576),
    ("deepseek", 128_000),
    ("qwen", 131_072),
    ("llama", 131_072),
    ("mistral", 131_072),
    ("glm", 128_000),
    ("kimi", 131_072),
    ("moonshot", 131_072),
];

/// The window of `model` when nothing sets it: the table's, else [`DEFAULT_WINDOW`].
pub fn known_window(model: &str) -> u64 {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    KNOWN
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map_or(DEFAULT_WINDOW, |(_, window)| *window)
}

/// `LLM_CONTEXT_WINDOW`'s value read: `None` when unset or blank, else the number of tokens,
/// or the message a user sees for a value that is not one.
pub fn window_from_env(value: Option<&str>) -> Result<Option<u64>, String> {
    let Some(text) = value.map(str::trim).filter(|text| !text.is_empty()) else {
        return Ok(None);
    };
    match text.parse::<u64>() {
        Ok(window) if window >= MIN_WINDOW => Ok(Some(window)),
        _ => Err(format!(
            "{WINDOW_VARIABLE} must be a number of tokens, at least {MIN_WINDOW} (got {text:?})"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-LLM-USAGE-2: common models have their window; others the default.
    #[test]
    fn common_models_have_known_windows() {
        assert_eq!(known_window("gpt-4o-mini"), 128_000);
        assert_eq!(known_window("openai/GPT-4.1-mini"), 1_047_576);
        assert_eq!(known_window("gpt-4"), 8_192);
        assert_eq!(known_window("claude-sonnet-4-5"), 200_000);
        assert_eq!(known_window("gemini-2.5-pro"), 1_048_576);
        assert_eq!(known_window("o1-mini"), 128_000);
        assert_eq!(known_window("some-local-model"), DEFAULT_WINDOW);
    }

    /// R-LLM-USAGE-2: `LLM_CONTEXT_WINDOW` is a number of tokens, at least 256.
    #[test]
    fn the_window_variable_is_read_or_refused_with_its_message() {
        assert_eq!(window_from_env(None), Ok(None));
        assert_eq!(window_from_env(Some("  ")), Ok(None));
        assert_eq!(window_from_env(Some(" 4096 ")), Ok(Some(4096)));
        assert_eq!(
            window_from_env(Some("32k")),
            Err("LLM_CONTEXT_WINDOW must be a number of tokens, at least 256 (got \"32k\")".into())
        );
        assert_eq!(
            window_from_env(Some("100")),
            Err("LLM_CONTEXT_WINDOW must be a number of tokens, at least 256 (got \"100\")".into())
        );
    }
}
