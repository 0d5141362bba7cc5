//! Where a typed `/word` goes: the REPL's own commands first, then the slash commands the
//! main agent advertised (`available_commands_update`), which go to it as prompt text;
//! `//text` sends `/text` as it is. Also what Tab offers for a `/` word.

use crate::client::updates::AgentCommand;

/// The REPL's own commands (without the `/`); they win over an agent's of the same name.
pub(crate) const REPL_COMMANDS: &[&str] = &["acp", "status", "help", "quit", "exit"];

/// What a typed line that starts with `/` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Slash<'a> {
    /// Not a slash line (delegation or plain text for the main agent).
    No,
    /// One of the REPL's commands: the REPL runs it.
    Repl,
    /// Text for the main agent: an advertised command as typed, or `//text` as `/text`.
    Agent(&'a str),
    /// A `/word` nobody knows: the word, for `Unknown command: /word`.
    Unknown(&'a str),
}

/// Classifies `line` (already trimmed) against the main agent's `commands`.
pub(crate) fn classify<'a>(line: &'a str, commands: &[AgentCommand]) -> Slash<'a> {
    if line.starts_with("//") {
        // The text after the first `/`: `//review x` sends `/review x`.
        return Slash::Agent(&line[1..]);
    }
    let Some(rest) = line.strip_prefix('/') else {
        return Slash::No;
    };
    let name = rest.split_whitespace().next().unwrap_or("");
    if REPL_COMMANDS.contains(&name) {
        Slash::Repl
    } else if commands.iter().any(|c| c.name == name) {
        Slash::Agent(line)
    } else {
        Slash::Unknown(line.split_whitespace().next().unwrap_or(line))
    }
}

/// The `/help` section for the main agent's commands (empty without any): each with its
/// input hint and description; one the REPL shadows says how to reach it.
pub(crate) fn agent_help(agent: &str, commands: &[AgentCommand]) -> String {
    if commands.is_empty() {
        return String::new();
    }
    let mut out = format!("\nCommands of {agent} (sent to it as typed; //text sends /text):");
    for command in commands {
        let usage = match &command.hint {
            Some(hint) => format!("/{} <{hint}>", command.name),
            None => format!("/{}", command.name),
        };
        out.push_str(&format!("\n  {usage:<26} {}", command.description));
        if REPL_COMMANDS.contains(&command.name.as_str()) {
            out.push_str(&format!(
                " (the REPL's /{0} comes first: type //{0})",
                command.name
            ));
        }
    }
    out
}

/// Tab: the start of the word under completion and the lines' candidates for it. Only the
/// first word is completed, and only when it starts with `/`: the REPL's commands, then
/// the agent's (`//name` for one the REPL shadows), sorted, without duplicates.
pub(crate) fn complete(line: &str, pos: usize, agent: &[String]) -> (usize, Vec<String>) {
    let head = &line[..pos];
    if !head.starts_with('/') || head.contains(char::is_whitespace) {
        return (pos, Vec::new());
    }
    let mut names: Vec<String> = REPL_COMMANDS.iter().map(|c| format!("/{c}")).collect();
    for name in agent {
        let shadowed = REPL_COMMANDS.contains(&name.as_str());
        names.push(if shadowed {
            format!("//{name}")
        } else {
            format!("/{name}")
        });
    }
    let mut found: Vec<String> = names
        .into_iter()
        .filter(|n| n.starts_with(head))
        .map(|n| n + " ")
        .collect();
    found.sort();
    found.dedup();
    (0, found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(names: &[&str]) -> Vec<AgentCommand> {
        names
            .iter()
            .map(|n| AgentCommand {
                name: n.to_string(),
                description: format!("does {n}"),
                hint: (*n == "web").then(|| String::from("query")),
            })
            .collect()
    }

    #[test]
    fn repl_commands_win_then_advertised_ones_go_to_the_agent() {
        let agent = commands(&["tool", "web", "help"]);
        assert_eq!(classify("/tool Fix", &agent), Slash::Agent("/tool Fix"));
        assert_eq!(classify("/web", &agent), Slash::Agent("/web"));
        assert_eq!(classify("/help", &agent), Slash::Repl);
        assert_eq!(classify("/acp list", &agent), Slash::Repl);
        assert_eq!(classify("/nope x", &agent), Slash::Unknown("/nope"));
        assert_eq!(classify("/tool Fix", &[]), Slash::Unknown("/tool"));
        assert_eq!(classify("hello", &agent), Slash::No);
        assert_eq!(classify("@helper /tool", &agent), Slash::No);
    }

    #[test]
    fn a_double_slash_sends_the_rest_verbatim() {
        assert_eq!(classify("//help me", &[]), Slash::Agent("/help me"));
        assert_eq!(classify("//", &[]), Slash::Agent("/"));
        assert_eq!(classify("///x", &[]), Slash::Agent("//x"));
    }

    #[test]
    fn help_lists_the_agents_commands_and_shadowing() {
        assert_eq!(agent_help("demo", &[]), "");
        let text = agent_help("demo", &commands(&["web", "help"]));
        assert_eq!(
            text,
            format!(
                "\nCommands of demo (sent to it as typed; //text sends /text):\n  \
                 {:<26} does web\n  {:<26} does help (the REPL's /help comes first: type //help)",
                "/web <query>", "/help"
            )
        );
    }

    #[test]
    fn tab_offers_both_sets() {
        let agent = vec![String::from("tool"), String::from("status")];
        assert_eq!(
            complete("/st", 3, &agent),
            (0, vec![String::from("/status ")])
        );
        assert_eq!(complete("/t", 2, &agent), (0, vec![String::from("/tool ")]));
        assert_eq!(
            complete("//s", 3, &agent),
            (0, vec![String::from("//status ")])
        );
        let (_, all) = complete("/", 1, &agent);
        assert_eq!(
            all,
            [
                "//status ",
                "/acp ",
                "/exit ",
                "/help ",
                "/quit ",
                "/status ",
                "/tool "
            ]
        );
        assert_eq!(complete("/tool x", 7, &agent), (7, Vec::new()));
        assert_eq!(complete("hello", 5, &agent), (5, Vec::new()));
    }
}
