//! What a person is shown of an agent's questions (permission, input) and the text helpers
//! the update view shares: short plain-text lines, every piece of agent text passed through
//! [`sanitize`] (R-HOST-12: Agentao names the parts; the layout is ours).
//! Updates are shown by [`super::updates`].

use acp_host::sanitize::sanitize;
use acp_host::supervisor::answer::Decision;
use serde_json::Value;

/// `rawInput` entries shown in a permission prompt.
pub(crate) const PERMISSION_ARGS: usize = 6;
/// Characters of one `rawInput` value shown (longer ones end in `...`).
pub(crate) const PERMISSION_ARG_CHARS: usize = 80;
/// Content texts shown in a permission prompt.
pub(crate) const PERMISSION_TEXTS: usize = 2;
/// Characters of one content text shown.
pub(crate) const PERMISSION_TEXT_CHARS: usize = 100;

/// The hint under a permission prompt.
pub(crate) const PERMISSION_HINT: &str = "Press 1-4 · Esc to reject";

/// The question of an `_agentao.cn/ask_user` request: `question`, else `message`, else
/// `(input requested)`.
pub(crate) fn ask_user_question(params: &Value) -> String {
    str_at(params, "question")
        .or_else(|| str_at(params, "message"))
        .unwrap_or("(input requested)")
        .to_owned()
}

/// The one-line summary of a permission request (`Allow <title> (<kind>)?`), for lists.
pub(crate) fn permission_summary(params: &Value) -> String {
    match params.get("toolCall") {
        Some(call) => format!(
            "Allow {} ({})?",
            str_at(call, "title").unwrap_or("tool"),
            str_at(call, "kind").unwrap_or("other")
        ),
        None => str_at(params, "message")
            .unwrap_or("(permission requested)")
            .to_owned(),
    }
}

/// The inline permission prompt (R-HOST-12): header, title and kind, up to six arguments, up to
/// two content texts, the four choices and the hint.
pub(crate) fn permission_prompt(server: &str, params: &Value) -> String {
    let mut out = format!("Permission request from '{}':", sanitize(server));
    out.push_str(&format!("\n  {}", sanitize(&permission_summary(params))));
    if let Some(call) = params.get("toolCall") {
        if let Some(args) = call.get("rawInput").and_then(Value::as_object) {
            for (key, value) in args.iter().take(PERMISSION_ARGS) {
                let value = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                out.push_str(&format!(
                    "\n    {}: {}",
                    sanitize(key),
                    sanitize(&cut(&value, PERMISSION_ARG_CHARS))
                ));
            }
            if args.len() > PERMISSION_ARGS {
                out.push_str(&format!("\n    ... +{} more", args.len() - PERMISSION_ARGS));
            }
        }
        for text in content_texts(call).take(PERMISSION_TEXTS) {
            out.push_str(&format!(
                "\n    {}",
                sanitize(&cut(&text, PERMISSION_TEXT_CHARS))
            ));
        }
    }
    out.push_str("\n  1. Approve once\n  2. Approve all\n  3. Reject once\n  4. Reject all\n");
    out.push_str(PERMISSION_HINT);
    out
}

/// The inline input prompt (R-HOST-12): header and question.
pub(crate) fn input_prompt(server: &str, question: &str) -> String {
    format!(
        "Input request from '{}':\n  {}",
        sanitize(server),
        sanitize(question)
    )
}

/// The decision a typed answer to a permission prompt stands for: `1`–`4`, or Esc (a line
/// starting with the escape character) or an empty line to reject; `None` for anything
/// else (ask again).
pub(crate) fn permission_choice(line: &str) -> Option<Decision> {
    let line = line.trim_end_matches(['\r', '\n']);
    if line.is_empty() || line.starts_with('\u{1b}') {
        return Some(Decision::Cancel);
    }
    match line.trim() {
        "1" => Some(Decision::AllowOnce),
        "2" => Some(Decision::AllowAlways),
        "3" => Some(Decision::RejectOnce),
        "4" => Some(Decision::RejectAlways),
        _ => None,
    }
}

/// The decision a keypress stands for when the terminal reads single keys: `1`–`4`, or
/// Esc alone (an escape sequence such as an arrow key is not Esc); `None` for other keys.
pub(crate) fn permission_key(key: &[u8]) -> Option<Decision> {
    match key {
        [0x1b] => Some(Decision::Cancel),
        [b'1', ..] => Some(Decision::AllowOnce),
        [b'2', ..] => Some(Decision::AllowAlways),
        [b'3', ..] => Some(Decision::RejectOnce),
        [b'4', ..] => Some(Decision::RejectAlways),
        _ => None,
    }
}

/// What is printed once a permission prompt is answered (R-HOST-12).
pub(crate) fn permission_confirmation(decision: Decision) -> &'static str {
    match decision {
        Decision::AllowOnce => "Approved (once)",
        Decision::AllowAlways => "Approved (all future calls)",
        Decision::RejectOnce => "Rejected (once)",
        Decision::RejectAlways => "Rejected (all future calls)",
        Decision::Cancel => "Rejected (cancelled)",
    }
}

/// `text` dimmed (SGR 2) when `styled` (the stream it goes to is a terminal); plain
/// otherwise, so piped output carries no escape sequences.
pub(crate) fn dim(text: &str, styled: bool) -> String {
    if styled {
        format!("\u{1b}[2m{text}\u{1b}[0m")
    } else {
        text.to_owned()
    }
}

/// What is printed when an input prompt gets an empty reply (R-HOST-12).
pub(crate) const EMPTY_REPLY: &str = "Empty reply — cancelled.";

/// The option id to answer a permission request with for `decision`. Esc rejects (R-HOST-12:
/// "Esc or Ctrl-C → reject once"); an option list without a fitting option gives `None`,
/// which is answered `cancelled`.
pub(crate) fn chosen_option(params: &Value, decision: Decision) -> Option<String> {
    let options = params.get("options").unwrap_or(&Value::Null);
    let decision = match decision {
        Decision::Cancel => Decision::RejectOnce,
        other => other,
    };
    acp_host::supervisor::answer::select_option(options, decision)
}

fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// The text of a content block: `text` blocks only.
pub(super) fn content_text(content: &Value) -> Option<String> {
    match str_at(content, "type") {
        Some("text") | None => str_at(content, "text").map(str::to_owned),
        Some(other) => Some(format!("[{other}]")),
    }
}

/// The texts of a tool call's `content` list (`{"type":"content","content":{text block}}`).
pub(super) fn content_texts(call: &Value) -> impl Iterator<Item = String> + '_ {
    call.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| content_text(item.get("content").unwrap_or(item)))
}

/// `text` cut to `max` characters: `max - 3` of them and `...`.
pub(super) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut out: String = text.chars().take(max.saturating_sub(3)).collect();
        out.push_str("...");
        out
    }
}

/// The auth methods an agent offered, one line each, under a heading (R-AUTH-8). A
/// `terminal` method shows the command it runs; `env` values are never shown.
pub(crate) fn auth_methods(methods: &[super::link::OfferedAuth], agent: &[String]) -> String {
    let mut text = String::from("The agent offers these ways to log in:\n");
    for method in methods {
        let id = acp_host::sanitize::sanitize(&method.id);
        let name = acp_host::sanitize::sanitize(&method.name);
        text.push_str(&format!("  {id}: {name}"));
        if let Some(description) = &method.description {
            text.push_str(&format!(" — {}", acp_host::sanitize::sanitize(description)));
        }
        match &method.terminal {
            Some(login) => text.push_str(&format!(
                " (in a terminal: {})",
                command_line(agent, &login.args)
            )),
            None => text.push_str(" (the agent checks its own credentials)"),
        }
        text.push('\n');
    }
    text
}

/// A command line as a person would type it (each word sanitized, quoted when needed).
pub(crate) fn command_line(agent: &[String], args: &[String]) -> String {
    agent
        .iter()
        .chain(args)
        .map(|word| {
            let word = acp_host::sanitize::sanitize(word);
            if !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c))
            {
                word
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn choices_map_to_decisions() {
        assert_eq!(permission_choice("1"), Some(Decision::AllowOnce));
        assert_eq!(permission_choice("2\n"), Some(Decision::AllowAlways));
        assert_eq!(permission_choice(" 3 "), Some(Decision::RejectOnce));
        assert_eq!(permission_choice("4"), Some(Decision::RejectAlways));
        assert_eq!(permission_choice("\u{1b}"), Some(Decision::Cancel));
        assert_eq!(permission_choice(""), Some(Decision::Cancel));
        assert_eq!(permission_choice("yes"), None);
    }

    #[test]
    fn keys_map_to_decisions() {
        assert_eq!(permission_key(b"1"), Some(Decision::AllowOnce));
        assert_eq!(permission_key(b"4"), Some(Decision::RejectAlways));
        assert_eq!(permission_key(b"\x1b"), Some(Decision::Cancel));
        assert_eq!(permission_key(b"\x1b[A"), None);
        assert_eq!(permission_key(b"\r"), None);
        assert_eq!(permission_key(b""), None);
    }

    #[test]
    fn esc_picks_the_reject_option() {
        let params = json!({"options": [
            {"optionId": "ok", "kind": "allow_once", "name": "Allow"},
            {"optionId": "no", "kind": "reject_once", "name": "Reject"}
        ]});
        assert_eq!(
            chosen_option(&params, Decision::Cancel).as_deref(),
            Some("no")
        );
        assert_eq!(
            chosen_option(&params, Decision::AllowAlways).as_deref(),
            Some("ok")
        );
    }

    #[test]
    fn dim_only_for_terminals() {
        assert_eq!(dim("(update: x)", false), "(update: x)");
        assert_eq!(dim("(update: x)", true), "\u{1b}[2m(update: x)\u{1b}[0m");
    }

    #[test]
    fn permission_prompt_cuts_and_sanitizes() {
        let long = "x".repeat(100);
        let params = json!({"toolCall": {
            "title": "Edit\u{1b}[31m", "kind": "edit",
            "rawInput": {"a": long, "b": 1, "c": 2, "d": 3, "e": 4, "f": 5, "g": 6},
            "content": [{"type": "content", "content": {"type": "text", "text": "diff"}}]
        }});
        let text = permission_prompt("srv", &params);
        let expected_arg = format!("    a: {}...", "x".repeat(77));
        assert!(text.starts_with("Permission request from 'srv':\n  Allow Edit[31m (edit)?\n"));
        assert!(text.contains(&expected_arg), "{text}");
        assert!(text.contains("\n    ... +1 more\n    diff\n"), "{text}");
        assert!(text.ends_with("4. Reject all\nPress 1-4 · Esc to reject"));
    }

    /// R-AUTH-8: the command a terminal login runs, as a person would type it.
    #[test]
    fn command_lines_quote_what_the_shell_would_split() {
        let agent = vec!["/opt/acp cli".to_owned(), "--acp".to_owned()];
        assert_eq!(
            command_line(&agent, &["--login".to_owned(), "it's".to_owned()]),
            "'/opt/acp cli' --acp --login 'it'\\''s'"
        );
    }
}
