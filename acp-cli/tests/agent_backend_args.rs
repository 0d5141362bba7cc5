//! `--backend`, `--model` and `--max-tool-rounds`: each needs the agent mode (and the last
//! two the llm backend); a bad model choice is refused before anything starts; errors exit 2.

mod agent_support;

use agent_support::binary;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = binary().args(args).output().expect("run acp-cli");
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

fn refused(message: &str) -> (i32, String, String) {
    (2, String::new(), format!("acp-cli: {message}\n"))
}

#[test]
fn backend_needs_the_agent_mode() {
    assert_eq!(
        run(&["--backend", "llm"]),
        refused("--backend requires --acp --stdio")
    );
}

#[test]
fn model_and_tool_rounds_need_the_llm_backend() {
    assert_eq!(
        run(&["--acp", "--stdio", "--model", "gpt-4.1"]),
        refused("--model requires --acp --stdio --backend llm")
    );
    assert_eq!(
        run(&[
            "--acp",
            "--stdio",
            "--backend",
            "demo",
            "--max-tool-rounds",
            "3"
        ]),
        refused("--max-tool-rounds requires --acp --stdio --backend llm")
    );
}

#[test]
fn a_malformed_model_choice_is_refused_before_the_agent_starts() {
    assert_eq!(
        run(&["--acp", "--stdio", "--backend", "llm", "--model", "openai/"]),
        refused("--model: value 'provider/model' must have a non-empty provider and model")
    );
}

#[test]
fn an_unknown_backend_is_a_usage_error() {
    let (code, stdout, stderr) = run(&["--acp", "--stdio", "--backend", "gpt"]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.starts_with("error: invalid value 'gpt' for '--backend <BACKEND>'"),
        "{stderr}"
    );
}
