//! The self-test of `acp-cli conform` (issue 15, item 7): a suite that cannot fail is
//! worthless. Each deliberately broken agent (our agent behind the relay
//! `tests/fixtures/faulty_agent.py`, which breaks one thing) must make `acp-cli conform` exit 1
//! with the case that checks that thing failed; the same relay with no fault passes. Also the
//! command's own errors, `--json`, `--junit`, `--list` and `--chaos`.

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

/// (fault, the case that must fail, what its failure may say): the reason is checked too, so
/// a case failing for another reason (a timeout on a loaded machine) does not count as caught.
/// A fault may show in more than one way: an agent that dies on invalid UTF-8 is seen either
/// closing stdout or refusing the harness's next write, whichever comes first.
const FAULTS: [(&str, &str, &[&str]); 11] = [
    (
        "update-after-response",
        "prompt/no-update-after-response",
        &["R-TURN-3 — agent_message_chunk for session"],
    ),
    (
        "cancelled-null",
        "cancel/session-cancel-ends-turn-cancelled",
        &["the cancelled prompt was answered null"],
    ),
    (
        "stdout-log",
        "process/stdout-only-jsonrpc",
        &["\"INFO faulty agent starting\""],
    ),
    (
        "die-on-invalid-utf8",
        "framing/invalid-utf8-survived",
        &[
            "the agent closed stdout",
            "cannot write to the agent: Broken pipe",
        ],
    ),
    (
        "string-ids",
        "ids/integer-one",
        &["sent id 1, the answer carries id \"1\""],
    ),
    (
        "double-response",
        "rpc/exactly-one-response-per-request",
        &["R-RPC-1 — id 1 answered again"],
    ),
    (
        "ignore-eof",
        "process/stdin-eof-exits",
        &["stdin EOF: still running after"],
    ),
    (
        "unannounced-permission",
        "permission/tool-call-id-announced",
        &["R-PERM-2 — session/request_permission for tool call 'conform-unannounced'"],
    ),
    (
        "wrong-unknown-code",
        "rpc/unknown-method-32601",
        &["answered error -32600 (Method not found), expected -32601"],
    ),
    (
        "unbounded-buffer",
        "framing/oversized-line-bounded",
        &["the line buffer is unbounded"],
    ),
    (
        "unadvertised-fs",
        "client/no-fs-read-when-unadvertised",
        &["R-FS-1 — fs/read_text_file without clientCapabilities.fs.readTextFile"],
    ),
];

#[test]
fn every_fault_fails_its_case_by_name() {
    let mut missed = Vec::new();
    for (fault, case, why) in FAULTS {
        let out = conform(&["--only", case], &faulty(fault));
        let stdout = text(&out.stdout);
        let failed = stdout.lines().any(|l| {
            l.starts_with(&format!("FAIL {case} — ")) && why.iter().any(|w| l.contains(w))
        });
        if out.status.code() != Some(1) || !failed {
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
    let only: Vec<&str> = FAULTS.iter().map(|(_, case, _)| *case).collect();
    let out = conform(&["--only", &only.join(",")], &faulty("none"));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.ends_with("11 passed, 0 failed, 0 skipped\n"),
        "{stdout}"
    );
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
    }
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
        stdout.contains("framing/crlf-line-endings  [R-FRAME-1]  "),
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
        stdout.ends_with(" passed, 0 failed, 0 skipped\n"),
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
