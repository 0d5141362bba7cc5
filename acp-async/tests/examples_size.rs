//! The echo examples are "an ACP agent in 40 lines": this keeps them so.

/// Lines of code in an example: blank lines and `//` comment lines do not count.
fn code_lines(name: &str) -> usize {
    let path = format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("//"))
        .count()
}

/// The tokio echo agent (a whole stdio agent answering prompts) stays within 40 lines.
#[test]
fn echo_agent_tokio_is_at_most_40_lines() {
    let lines = code_lines("echo_agent_tokio.rs");
    assert!(lines <= 40, "echo_agent_tokio.rs has {lines} lines of code");
}

/// The smol echo agent stays within 40 lines.
#[test]
fn echo_agent_smol_is_at_most_40_lines() {
    let lines = code_lines("echo_agent_smol.rs");
    assert!(lines <= 40, "echo_agent_smol.rs has {lines} lines of code");
}

/// The crate's and the repository's READMEs ("An agent in 40 lines") show
/// `echo_agent_tokio.rs` as it is (its code, the `//!` header left out), so they cannot drift
/// apart.
#[test]
fn the_readme_shows_echo_agent_tokio_verbatim() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let example = std::fs::read_to_string(format!("{dir}/examples/echo_agent_tokio.rs")).unwrap();
    let code: Vec<&str> = example
        .lines()
        .skip_while(|line| line.starts_with("//!") || line.is_empty())
        .collect();
    for readme in ["README.md", "../README.md"] {
        let text = std::fs::read_to_string(format!("{dir}/{readme}")).unwrap();
        assert!(
            text.contains(&code.join("\n")),
            "{readme}'s echo agent differs from examples/echo_agent_tokio.rs"
        );
    }
}

/// The tokio client example (spawn an agent, prompt it once, print the answer) stays within
/// 60 lines.
#[test]
fn client_tokio_is_at_most_60_lines() {
    let lines = code_lines("client_tokio.rs");
    assert!(lines <= 60, "client_tokio.rs has {lines} lines of code");
}
