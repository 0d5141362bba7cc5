//! `acp_conform` as a library (issue 15, item 5): what an agent author writes in their
//! own `cargo test`. Here it checks our agent: the demo backend passes every case and is
//! conformant, and the llm backend with no key (so no network) passes every case that does not
//! need a model (the MANDATORY cases that need a turn go untested).

use acp_conform::{Options, Status, check, check_with};

const ACP_CLI: &str = env!("CARGO_BIN_EXE_acp-cli");

fn failures(report: &acp_conform::Report) -> Vec<String> {
    report
        .cases
        .iter()
        .filter(|c| c.status == Status::Fail)
        .map(|c| format!("{} — {}", c.id, c.detail))
        .collect()
}

#[test]
fn the_demo_agent_passes_every_case() {
    let report = check(&[ACP_CLI, "--acp", "--stdio"]).expect("the agent starts");
    assert!(report.cases.len() >= 100, "{} cases", report.cases.len());
    assert_eq!(failures(&report), Vec::<String>::new());
    // The demo backend runs its tools itself and never uses the client's terminal, so the
    // `terminal/*` cases do not apply (R-FS-3); everything else runs.
    let skipped: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.status == Status::Skip && !c.id.starts_with("terminal/"))
        .map(|c| &c.id)
        .collect();
    assert!(
        skipped.is_empty(),
        "the demo advertises every command, yet skipped: {skipped:?}"
    );
    assert!(report.conformance().conformant);
    assert_eq!(report.exit_code(false), 0);
    assert_eq!(report.exit_code(true), 0);
}

#[test]
fn the_llm_agent_without_a_model_server_passes_the_protocol_cases() {
    // A clean environment with a key (without one, sessions need authentication, R-AUTH-8,
    // which the suite does not do) for a loopback port where nothing listens: prompts fail
    // at once and nothing goes out.
    let path = std::env::var("PATH").unwrap_or_default();
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port();
    let agent = [
        "env",
        "-i",
        &format!("PATH={path}"),
        "OPENAI_API_KEY=sk-unused",
        &format!("OPENAI_BASE_URL=http://127.0.0.1:{dead}/v1"),
        ACP_CLI,
        "--acp",
        "--stdio",
        "--backend",
        "llm",
    ];
    let report = check_with(&Options::new(agent.iter().map(|s| s.to_string()).collect()))
        .expect("the agent starts");
    assert_eq!(failures(&report), Vec::<String>::new());
    for capability in ["framing", "ids", "initialize", "rpc", "latency"] {
        let not_passed: Vec<_> = report
            .cases
            .iter()
            .filter(|c| c.capability == capability && c.status != Status::Pass)
            .map(|c| format!("{} — {}", c.id, c.detail))
            .collect();
        assert!(not_passed.is_empty(), "{not_passed:#?}");
    }
    // A prompt is refused without a key, so the MANDATORY cases that need a turn are untested
    // and the verdict cannot be conformant; nothing failed, so --strict passes.
    let untested: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.tier == acp_conform::Tier::Mandatory && c.status == Status::Skip)
        .map(|c| c.id.as_str())
        .collect();
    assert!(
        untested.contains(&"cancel/session-cancel-ends-turn-cancelled"),
        "{untested:?}"
    );
    assert!(
        untested.iter().all(|id| id.starts_with("prompt/")
            || id.starts_with("cancel/")
            || id.starts_with("chaos/")),
        "{untested:?}"
    );
    // R-AUTH-5: `sessions/logout-gated` checks the `-32601` of an agent that does not
    // advertise `auth.logout`; this one does (R-AUTH-8), so the case does not apply (the
    // suite does not log an agent out): a CAPABILITY skip, not an untested MANDATORY case.
    let logout = report.case("sessions/logout-gated").expect("the case ran");
    assert_eq!(
        (logout.tier, logout.status),
        (acp_conform::Tier::Capability, Status::Skip)
    );
    assert!(
        logout
            .detail
            .starts_with("not applicable: auth.logout is advertised"),
        "{}",
        logout.detail
    );
    assert!(!report.conformance().conformant);
    assert_eq!(report.exit_code(false), 1);
    assert_eq!(report.exit_code(true), 0);
}
