//! Whether the configured model takes images (R-LLM-9): a setting, since no API says so.
//! `<PROVIDER>_IMAGES` (e.g. `OPENAI_IMAGES`) wins over `LLM_IMAGES`; `1`, `true`, `yes`,
//! `on` turn images on, `0`, `false`, `no`, `off` (or unset) leave them off. With images on,
//! `promptCapabilities.image` is advertised and image blocks go to the model as `image_url`
//! data URLs.

/// The setting for `provider` read through `lookup`, or why its value is not one.
pub fn from_env(lookup: impl Fn(&str) -> Option<String>, provider: &str) -> Result<bool, String> {
    let own = format!("{}_IMAGES", provider.to_uppercase());
    for name in [own.as_str(), "LLM_IMAGES"] {
        let Some(value) = lookup(name).filter(|value| !value.trim().is_empty()) else {
            continue;
        };
        return match value.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(format!(
                "{name}: expected 1 or 0 (true/false, yes/no, on/off), got '{}'",
                value.trim()
            )),
        };
    }
    Ok(false)
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

    /// R-LLM-9: off unless set; the provider's own variable wins over `LLM_IMAGES`.
    #[test]
    fn images_are_off_unless_set_and_the_providers_variable_wins() {
        assert_eq!(from_env(env(&[]), "openai"), Ok(false));
        assert_eq!(from_env(env(&[("LLM_IMAGES", "1")]), "openai"), Ok(true));
        assert_eq!(
            from_env(env(&[("LLM_IMAGES", " Yes ")]), "openai"),
            Ok(true)
        );
        assert_eq!(
            from_env(
                env(&[("LLM_IMAGES", "1"), ("OPENAI_IMAGES", "off")]),
                "openai"
            ),
            Ok(false)
        );
        assert_eq!(
            from_env(
                env(&[("LLM_IMAGES", "0"), ("OLLAMA_IMAGES", "true")]),
                "ollama"
            ),
            Ok(true)
        );
        assert_eq!(
            from_env(env(&[("OLLAMA_IMAGES", "1")]), "openai"),
            Ok(false)
        );
    }

    /// R-LLM-9: a value that is not a switch is refused, naming the variable.
    #[test]
    fn a_bad_value_is_refused_naming_the_variable() {
        assert_eq!(
            from_env(env(&[("OPENAI_IMAGES", "maybe")]), "openai"),
            Err("OPENAI_IMAGES: expected 1 or 0 (true/false, yes/no, on/off), got 'maybe'".into())
        );
    }
}
