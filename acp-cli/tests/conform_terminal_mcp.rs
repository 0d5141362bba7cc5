//! `acp-cli conform`'s `terminal/*` and `mcp/*` cases (issue 26, item 3) against our llm
//! backend, whose model is the scripted mock server on loopback: the script makes the model
//! call `run_shell_command` with the command the case asks for, which our agent runs in the
//! harness's terminal (it offers `terminal: true`), and the MCP cases give `session/new` the
//! suite's own stdio server. Each case passes; a relay that breaks the rule
//! (`tests/fixtures/faulty_agent.py`) fails it by name.

mod llm_support;

use acp_conform::cases::terminal::{BIG_COMMAND, LONG_COMMAND, QUICK_COMMAND};
use acp_conform::{CaseReport, Options, Status, check_with};
use llm_support::{MockModel, Reply, done, finish, text, tool_call};

const ACP_CLI: &str = env!("CARGO_BIN_EXE_acp-cli");
const RELAY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/faulty_agent.py"
);

/// Our llm agent for `mock`, in a clean environment (a key, so sessions need no login).
fn llm_agent(mock: &MockModel) -> Vec<String> {
    let path = std::env::var("PATH").unwrap_or_default();
    [
        "env",
        "-i",
        &format!("PATH={path}"),
        "OPENAI_API_KEY=sk-conform-unused",
        &format!("OPENAI_BASE_URL={}", mock.base_url()),
        ACP_CLI,
        "--acp",
        "--stdio",
        "--backend",
        "llm",
        "--model",
        "mock-model",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The same agent behind the relay with `fault`.
fn relayed(fault: &str, mock: &MockModel) -> Vec<String> {
    let mut argv: Vec<String> = ["python3", RELAY, fault, "--"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    argv.extend(llm_agent(mock));
    argv
}

/// The model's answer that runs `command` with `run_shell_command`.
fn run_shell(command: &str) -> Reply {
    let arguments = serde_json::json!({ "command": command }).to_string();
    Reply::sse(&[
        text("Running it."),
        tool_call(0, Some("call-1"), Some("run_shell_command"), &arguments),
        finish("tool_calls"),
        done(),
    ])
}

/// The cases `only` selects, run one at a time against `agent` (a generous timeout scale: the
/// machine may be loaded; no case passes by waiting).
fn run(agent: Vec<String>, only: &str) -> Vec<CaseReport> {
    let mut options = Options::new(agent);
    options.only = Some(only.to_string());
    options.jobs = 1;
    options.timeout_scale = 4.0;
    check_with(&options).expect("the agent starts").cases
}

/// The one case `id` of `reports`.
fn case<'a>(reports: &'a [CaseReport], id: &str) -> &'a CaseReport {
    reports
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no case {id}"))
}

fn assert_passed(report: &CaseReport, says: &str) {
    assert_eq!(
        (report.status, report.detail.contains(says)),
        (Status::Pass, true),
        "{} — {}\n{:#?}\n{:#?}",
        report.id,
        report.detail,
        report.exchange,
        report.stderr
    );
}

/// R-FS-3: our agent creates a terminal for the command, waits for it, reads it and releases
/// it before the turn's answer; the output the harness's shell produced reaches the model.
#[test]
fn our_agent_releases_every_terminal_it_creates_by_the_turns_end() {
    let mock = MockModel::start(vec![run_shell(QUICK_COMMAND), Reply::text(&["Done."])]);
    let reports = run(llm_agent(&mock), "terminal/released-by-turn-end");
    assert_passed(
        case(&reports, "terminal/released-by-turn-end"),
        "1 terminal(s) created, waited for or read, and released before the turn's answer",
    );
    let told = mock.requests()[1].tool_messages();
    assert!(
        told[0]["content"]
            .as_str()
            .is_some_and(|c| c.contains("conform-terminal-ok")),
        "{told:?}"
    );
}

/// R-FS-4: a cancel while the command runs: our agent kills and releases the terminal and
/// the turn ends cancelled.
#[test]
fn our_agent_kills_the_running_command_when_the_turn_is_cancelled() {
    let mock = MockModel::start(vec![run_shell(LONG_COMMAND)]);
    let reports = run(llm_agent(&mock), "terminal/cancel-kills-command");
    assert_passed(
        case(&reports, "terminal/cancel-kills-command"),
        "was killed or released, then the turn ended cancelled",
    );
}

/// R-FS-5: our agent's `outputByteLimit` (64 KiB) is an integer; the harness cuts the ~190 KB
/// output to it and says `truncated`, and the turn ends normally.
#[test]
fn our_agent_reads_a_truncated_output_within_its_limit() {
    let mock = MockModel::start(vec![run_shell(BIG_COMMAND), Reply::text(&["Long."])]);
    let reports = run(llm_agent(&mock), "terminal/output-limit-honoured");
    assert_passed(
        case(&reports, "terminal/output-limit-honoured"),
        "outputByteLimit 65536: the output was cut to it (truncated: true), read, and the turn ended end_turn",
    );
    // What the model got is the end of the output, from a character boundary.
    let told = mock.requests()[1].tool_messages();
    let content = told[0]["content"].as_str().unwrap_or_default();
    assert!(content.contains("conform-é-output\n"), "{content:.200}");
}

/// R-FS-3: a terminal whose release never reaches the client is caught by name; the same
/// relay without the fault passes.
#[test]
fn a_terminal_never_released_fails_the_case() {
    let id = "terminal/released-by-turn-end";
    let mock = MockModel::start(vec![run_shell(QUICK_COMMAND), Reply::text(&["Done."])]);
    let reports = run(relayed("drop-terminal-release", &mock), id);
    let report = case(&reports, id);
    assert_eq!(
        (report.status, report.detail.as_str()),
        (
            Status::Fail,
            "terminal term-1 was not released before the turn's answer (no terminal/release for it)"
        )
    );
    let mock = MockModel::start(vec![run_shell(QUICK_COMMAND), Reply::text(&["Done."])]);
    let reports = run(relayed("none", &mock), id);
    assert_passed(case(&reports, id), "released before the turn's answer");
}

/// R-MCP-12, R-MCP-13, R-MCP-14: our agent starts the suite's stdio server with its env as
/// given, kills it at `session/close`, and lives on when a server dies after `initialize`
/// (the prompt after it is answered by the model).
#[test]
fn our_agent_passes_the_mcp_cases() {
    let mock = MockModel::start(vec![Reply::text(&["Hello."])]);
    let reports = run(llm_agent(&mock), "mcp/");
    assert_eq!(reports.len(), 3);
    assert_passed(
        case(&reports, "mcp/stdio-server-env"),
        "ran with ACP_CONFORM_MCP_TOKEN=\"conform token=é 7f3a\", as given",
    );
    assert_passed(
        case(&reports, "mcp/server-gone-after-close"),
        "was gone after session/close",
    );
    assert_passed(
        case(&reports, "mcp/crashed-server-survived"),
        "answered a prompt (stopReason \"end_turn\")",
    );
}

/// R-MCP-12: a server started without the env entries it was given is caught by name.
#[test]
fn a_server_started_without_its_env_fails_the_case() {
    let id = "mcp/stdio-server-env";
    let mock = MockModel::start(Vec::new());
    let reports = run(relayed("drop-mcp-env", &mock), id);
    let report = case(&reports, id);
    assert_eq!(
        (report.status, report.detail.as_str()),
        (
            Status::Fail,
            "the server ran with ACP_CONFORM_MCP_TOKEN=null, but session/new gave \"conform token=é 7f3a\""
        )
    );
}

/// R-FS-3: an agent that never creates a terminal (the demo backend) makes the terminal
/// cases not applicable, with the reason.
#[test]
fn an_agent_without_terminals_makes_the_cases_not_applicable() {
    let agent = vec![ACP_CLI.to_string(), "--acp".into(), "--stdio".into()];
    let reports = run(agent, "terminal/");
    assert_eq!(reports.len(), 3);
    for report in &reports {
        assert_eq!(report.status, Status::Skip, "{}", report.id);
        assert!(
            report
                .detail
                .starts_with("the agent created no terminal when asked to run `"),
            "{} — {}",
            report.id,
            report.detail
        );
    }
}
