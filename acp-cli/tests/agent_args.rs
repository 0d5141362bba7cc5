//! `acp-cli`'s agent arguments: `--acp` and `--stdio` need each other (Agentao's rule and
//! text for `--stdio`, ours analogously for `--acp`), `--resume` needs them, errors exit 2.

mod agent_support;

use agent_support::{Agent, binary};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = binary().args(args).output().expect("run acp-cli");
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

#[test]
fn stdio_without_acp_is_refused_with_agentaos_text_and_exit_2() {
    assert_eq!(
        run(&["--stdio"]),
        (
            2,
            String::new(),
            "acp-cli: --stdio requires --acp (no other transport mode uses stdio)\n".into()
        )
    );
}

#[test]
fn acp_without_stdio_is_refused_with_exit_2() {
    assert_eq!(
        run(&["--acp"]),
        (
            2,
            String::new(),
            "acp-cli: --acp requires --stdio or --listen ADDR\n".into()
        )
    );
}

#[test]
fn resume_without_acp_is_refused_with_exit_2() {
    assert_eq!(
        run(&["--resume"]),
        (
            2,
            String::new(),
            "acp-cli: --resume requires --acp --stdio\n".into()
        )
    );
    assert_eq!(
        run(&["--resume", "sess_1"]),
        (
            2,
            String::new(),
            "acp-cli: --resume requires --acp --stdio\n".into()
        )
    );
}

#[test]
fn a_bad_log_level_is_refused_with_exit_2() {
    let (code, stdout, stderr) = run(&["--acp", "--stdio", "--log-level", "no such=level=x"]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.starts_with("acp-cli: invalid --log-level 'no such=level=x': "),
        "{stderr}"
    );
}

#[test]
fn resume_is_accepted_with_and_without_an_id() {
    // What it resumes is tested in persist_resume.rs; here only that the flag is taken.
    let mut agent = Agent::start("resume-latest", &["--resume"]);
    agent.handshake();
    let (rest, status, stderr) = agent.finish();
    assert!(rest.is_empty(), "{rest:?}");
    assert!(status.success());
    assert!(
        stderr.contains("--resume: No sessions directory found"),
        "{stderr}"
    );

    let agent = Agent::start("resume-id", &["--resume", "sess_abc"]);
    let (_, status, _) = agent.finish();
    assert!(status.success());
}

#[test]
fn the_agent_flags_do_not_combine_with_a_subcommand() {
    assert_eq!(
        run(&["--acp", "--stdio", "demo"]),
        (
            2,
            String::new(),
            "acp-cli: --acp --stdio cannot be combined with a subcommand\n".into()
        )
    );
}
