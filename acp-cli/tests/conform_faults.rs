//! The self-test of `acp-cli conform` (issue 15, item 7): a suite that cannot fail is
//! worthless. Each deliberately broken agent (our agent behind the relay
//! `tests/fixtures/faulty_agent.py`, which breaks one thing) must fail the case that checks
//! that thing, and `acp-cli conform` must exit as the case's tier says (1 for MANDATORY and
//! CAPABILITY, 0 for ADVISORY; 1 for any with `--strict`); the same relay with no fault passes.
//! Also the command's own errors, the verdict, `--json`, `--junit`, `--list` and `--chaos`.

use std::process::{Command, Output};

const ACP_CLI: &str = env!("CARGO_BIN_EXE_acp-cli");
const RELAY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/faulty_agent.py"
);

fn conform(options: &[&str], agent: &[&str]) -> Output {
    Command::new(ACP_CLI)
        .arg("conform")
        .args(options)
        .arg("--")
        .args(agent)
        .output()
        .expect("acp-cli runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Our agent behind the relay with `fault`.
fn faulty(fault: &str) -> Vec<&str> {
    vec!["python3", RELAY, fault, "--", ACP_CLI, "--acp", "--stdio"]
}

/// (fault, the case that must fail, its tier, what its failure may say): the reason is
/// checked too, so
/// a case failing for another reason (a timeout on a loaded machine) does not count as caught.
/// A fault may show in more than one way: an agent that dies on invalid UTF-8 is seen either
/// closing stdout or refusing the harness's next write, whichever comes first.
const FAULTS: [(&str, &str, &str, &[&str]); 14] = [
    (
        "update-after-response",
        "prompt/no-update-after-response",
        "CAPABILITY",
        &["R-TURN-3 — agent_message_chunk for session"],
    ),
    (
        "cancelled-null",
        "cancel/session-cancel-ends-turn-cancelled",
        "MANDATORY",
        &["the cancelled prompt was answered null"],
    ),
    (
        "stdout-log",
        "process/stdout-only-jsonrpc",
        "MANDATORY",
        &["\"INFO faulty agent starting\""],
    ),
    (
        "die-on-invalid-utf8",
        "framing/invalid-utf8-survived",
        "ADVISORY",
        &[
            "the agent closed stdout",
            "cannot write to the agent: Broken pipe",
        ],
    ),
    (
        "string-ids",
        "ids/integer-one",
        "MANDATORY",
        &["sent id 1, the answer carries id \"1\""],
    ),
    (
        "double-response",
        "rpc/exactly-one-response-per-request",
        "MANDATORY",
        &["R-RPC-1 — id 1 answered again"],
    ),
    (
        "ignore-eof",
        "process/stdin-eof-exits",
        "ADVISORY",
        &["stdin EOF: still running after"],
    ),
    (
        "unannounced-permission",
        "permission/tool-call-id-announced",
        "CAPABILITY",
        &["R-PERM-2 — session/request_permission for tool call 'conform-unannounced'"],
    ),
    (
        "wrong-unknown-code",
        "rpc/unknown-method-32601",
        "MANDATORY",
        &["answered error -32600 (Method not found), expected -32601"],
    ),
    (
        "unbounded-buffer",
        "framing/oversized-line-bounded",
        "ADVISORY",
        &["the line buffer is unbounded"],
    ),
    (
        "line-timeout",
        "chaos/mid-line-delays",
        "MANDATORY",
        &["no answer to request id"],
    ),
    (
        "ignore-eof",
        "chaos/client-vanishes-mid-turn",
        "ADVISORY",
        &["then: still running after"],
    ),
    (
        "stale-cancel",
        "chaos/duplicate-cancels",
        "MANDATORY",
        &["the prompt after the cancels ended cancelled: a stale cancel reached it"],
    ),
    (
        "unadvertised-fs",
        "client/no-fs-read-when-unadvertised",
        "CAPABILITY",
        &["R-FS-1 — fs/read_text_file without clientCapabilities.fs.readTextFile"],
    ),
];

/// The exit status without `--strict` when only a case of `tier` failed.
fn verdict_exit(tier: &str) -> i32 {
    if tier == "ADVISORY" { 0 } else { 1 }
}

#[test]
fn every_fault_fails_its_case_by_name() {
    let mut missed = Vec::new();
    for (fault, case, tier, why) in FAULTS {
        let out = conform(&["--only", case], &faulty(fault));
        let stdout = text(&out.stdout);
        let failed = stdout.lines().any(|l| {
            l.starts_with(&format!("FAIL {case} [{tier}] — ")) && why.iter().any(|w| l.contains(w))
        });
        let verdict = if verdict_exit(tier) == 0 {
            "verdict: conformant ("
        } else {
            "verdict: not conformant ("
        };
        let last = stdout.lines().last().unwrap_or("");
        if out.status.code() != Some(verdict_exit(tier)) || !failed || !last.starts_with(verdict) {
            missed.push(format!(
                "{fault}: exit {:?}, {case} failed saying {why:?}: {failed}\n{stdout}{}",
                out.status.code(),
                text(&out.stderr)
            ));
        }
    }
    assert!(
        missed.is_empty(),
        "faults not caught:\n{}",
        missed.join("\n")
    );
}

#[test]
fn the_relay_without_a_fault_passes_the_same_cases() {
    let only: Vec<&str> = FAULTS.iter().map(|(_, case, _, _)| *case).collect();
    let out = conform(&["--strict", "--only", &only.join(",")], &faulty("none"));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.ends_with(
            "14 passed, 0 failed, 0 skipped\nverdict: conformant (MANDATORY 7 passed; \
             CAPABILITY 3 passed; ADVISORY 4 passed; INFORMATIONAL 0 passed)\n"
        ),
        "{stdout}"
    );
}

#[test]
fn strict_fails_on_an_advisory_failure_the_verdict_forgives() {
    let (fault, case) = ("unbounded-buffer", "framing/oversized-line-bounded");
    let out = conform(&["--only", case], &faulty(fault));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.ends_with(
            "0 passed, 1 failed, 0 skipped\nverdict: conformant (MANDATORY 0 passed; \
             CAPABILITY 0 passed; ADVISORY 0 passed, 1 failed; INFORMATIONAL 0 passed)\n"
        ),
        "{stdout}"
    );
    let out = conform(&["--strict", "--only", case], &faulty(fault));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.ends_with("verdict: conformant (MANDATORY 0 passed; CAPABILITY 0 passed; ADVISORY 0 passed, 1 failed; INFORMATIONAL 0 passed)\n"), "{stdout}");
}

#[test]
fn an_untested_mandatory_case_is_not_conformant() {
    // The llm backend with a key for a loopback port where nothing listens fails every
    // prompt at once: a turn cannot be run, so the MANDATORY cancel case goes untested, and
    // the verdict says so. (Without a key, sessions need authentication, R-AUTH-8.)
    let path = format!("PATH={}", std::env::var("PATH").unwrap_or_default());
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port();
    let base = format!("OPENAI_BASE_URL=http://127.0.0.1:{dead}/v1");
    let agent = [
        "env",
        "-i",
        &path,
        "OPENAI_API_KEY=sk-unused",
        &base,
        ACP_CLI,
        "--acp",
        "--stdio",
        "--backend",
        "llm",
    ];
    let out = conform(
        &["--only", "cancel/session-cancel-ends-turn-cancelled"],
        &agent,
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.starts_with("SKIP cancel/session-cancel-ends-turn-cancelled [MANDATORY] — "),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(
            "verdict: not conformant (MANDATORY 0 passed, 1 untested; CAPABILITY 0 passed; \
             ADVISORY 0 passed; INFORMATIONAL 0 passed)\n"
        ),
        "{stdout}"
    );
    let out = conform(
        &[
            "--strict",
            "--only",
            "cancel/session-cancel-ends-turn-cancelled",
        ],
        &agent,
    );
    assert_eq!(out.status.code(), Some(0), "--strict counts failures only");
}

#[test]
fn json_report_has_the_documented_shape() {
    let out = conform(
        &["--json", "--only", "ids/"],
        &[ACP_CLI, "--acp", "--stdio"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(
        doc["agent"],
        serde_json::json!([ACP_CLI, "--acp", "--stdio"])
    );
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(doc["passed"], cases.len());
    assert_eq!(
        (doc["failed"].as_u64(), doc["skipped"].as_u64()),
        (Some(0), Some(0))
    );
    for case in cases {
        assert!(case["id"].as_str().unwrap().starts_with("ids/"));
        assert_eq!(case["capability"], "ids");
        assert_eq!(case["status"], "pass");
        assert!(case["detail"].is_string() && case["ms"].is_u64() && case["rule"].is_string());
        assert!(["MANDATORY", "ADVISORY"].contains(&case["tier"].as_str().unwrap()));
        assert!(case.get("exchange").is_none() && case.get("stderr").is_none());
    }
    assert_eq!(doc["format"], 2);
    assert_eq!(doc["suite"]["name"], "acp-conform");
    assert_eq!(doc["suite"]["cases"], cases.len());
    assert!(doc["suite"]["version"].is_string());
    let advertised = &doc["advertised"];
    assert_eq!(advertised["protocolVersion"], 1);
    assert_eq!(advertised["agentInfo"]["name"], "acp-cli");
    assert!(advertised["agentCapabilities"].is_object());
    assert!(
        advertised["commands"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("sleep"))
    );
    let verdict = &doc["verdict"];
    assert_eq!(verdict["conformant"], true);
    assert_eq!(verdict["failed"], serde_json::json!([]));
    assert_eq!(verdict["untested"], serde_json::json!([]));
    assert_eq!(
        verdict["tiers"]["MANDATORY"],
        serde_json::json!({"passed": 15, "failed": 0, "skipped": 0})
    );
    assert_eq!(
        verdict["tiers"]["ADVISORY"],
        serde_json::json!({"passed": 1, "failed": 0, "skipped": 0})
    );
}

#[test]
fn json_report_shows_a_failures_exchange_and_stderr() {
    let out = conform(
        &["--json", "--only", "rpc/unknown-method-32601"],
        &faulty("wrong-unknown-code"),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let case = &doc["cases"][0];
    assert_eq!(
        (&case["status"], &case["tier"]),
        (&serde_json::json!("fail"), &serde_json::json!("MANDATORY"))
    );
    let exchange: Vec<&str> = case["exchange"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        exchange
            .iter()
            .any(|l| l.starts_with("> ") && l.contains("\"conform/no_such_method\"")),
        "{exchange:#?}"
    );
    assert!(
        exchange
            .iter()
            .any(|l| l.starts_with("< ") && l.contains("-32600")),
        "{exchange:#?}"
    );
    assert!(case["stderr"].is_array(), "{case}");
    assert_eq!(doc["verdict"]["conformant"], false);
    assert_eq!(
        doc["verdict"]["failed"],
        serde_json::json!(["rpc/unknown-method-32601"])
    );
}

#[test]
fn junit_report_is_written_and_counts_failures() {
    let dir = std::env::temp_dir().join(format!("conform-junit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("conform.xml");
    let out = conform(
        &[
            "--junit",
            file.to_str().unwrap(),
            "--only",
            "rpc/unknown-method",
        ],
        &faulty("wrong-unknown-code"),
    );
    assert_eq!(out.status.code(), Some(1));
    let xml = std::fs::read_to_string(&file).unwrap();
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"),
        "{xml}"
    );
    assert!(
        xml.contains("<testsuite name=\"rpc\" tests=\"1\" failures=\"1\" skipped=\"0\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase classname=\"conform.rpc\" name=\"unknown-method-32601\""),
        "{xml}"
    );
    assert!(
        xml.contains("<failure message=\"conform/no_such_method answered error -32600"),
        "{xml}"
    );
    assert_eq!(
        xml.matches("<testcase ").count(),
        xml.matches("</testcase>").count()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn list_names_every_case_with_its_rule_without_an_agent() {
    let out = Command::new(ACP_CLI)
        .args(["conform", "--list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(stdout.lines().count() >= 100, "{stdout}");
    assert!(
        stdout.contains("framing/crlf-line-endings  [R-FRAME-1]  MANDATORY  "),
        "{stdout}"
    );
}

#[test]
fn chaos_keeps_a_correct_agent_passing() {
    let out = conform(
        &["--chaos", "42", "--only", "framing/,ids/,cancel/"],
        &[ACP_CLI, "--acp", "--stdio"],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(" passed, 0 failed, 0 skipped\nverdict: conformant ("),
        "{stdout}"
    );
}

fn error_of(options: &[&str], agent: &[&str]) -> (Option<i32>, String) {
    let out = conform(options, agent);
    (out.status.code(), text(&out.stderr))
}

#[test]
fn an_agent_that_cannot_start_is_exit_2() {
    assert_eq!(
        error_of(&[], &["/nonexistent/agent"]),
        (
            Some(2),
            String::from(
                "acp-cli conform: the agent did not start: /nonexistent/agent: No such file or directory (os error 2)\n"
            )
        )
    );
}

#[test]
fn an_agent_that_never_answers_initialize_is_exit_2() {
    assert_eq!(
        error_of(
            &["--timeout-scale", "0.05"],
            &["sh", "-c", "cat > /dev/null"]
        ),
        (
            Some(2),
            String::from(
                "acp-cli conform: the agent did not start: no answer to initialize within 250ms\n"
            )
        )
    );
}

#[test]
fn usage_errors_are_exit_2_with_their_text() {
    let out = Command::new(ACP_CLI).arg("conform").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "acp-cli conform: no agent given; run `acp-cli conform -- AGENT [ARGS...]`\n"
    );
    assert_eq!(
        error_of(&["--timeout-scale", "0"], &["x"]),
        (
            Some(2),
            String::from("acp-cli conform: --timeout-scale must be a positive number\n")
        )
    );
    assert_eq!(
        error_of(&["--only", "no-such-case"], &["x"]),
        (
            Some(2),
            String::from("acp-cli conform: --only no-such-case matches no case\n")
        )
    );
    let out = conform(
        &[
            "--junit",
            "/nonexistent/dir/x.xml",
            "--only",
            "ids/integer-one",
        ],
        &[ACP_CLI, "--acp", "--stdio"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stdout),
        "",
        "no case runs before the report can be written"
    );
    assert_eq!(
        text(&out.stderr),
        "acp-cli conform: cannot write /nonexistent/dir/x.xml: No such file or directory (os error 2)\n"
    );
}
