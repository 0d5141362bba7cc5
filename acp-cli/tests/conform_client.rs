//! The client suite, `acp-cli conform --client` (issue 26, item 2): our client passes every
//! case it can run, and a suite that cannot fail is worthless, so each deliberately broken
//! client (our client with the relay `tests/fixtures/faulty_client.py` as its agent, which
//! breaks one rule of the client's) must fail the case that checks that rule, by name.

use std::process::{Command, Output};

const ACP_CLI: &str = env!("CARGO_BIN_EXE_acp-cli");
const RELAY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/faulty_client.py"
);

fn conform(options: &[&str], client: &[&str]) -> Output {
    Command::new(ACP_CLI)
        .args(["conform", "--client"])
        .args(options)
        .arg("--")
        .args(client)
        .output()
        .expect("acp-cli runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Our client with the relay breaking `fault` as its agent.
fn faulty(fault: &str) -> Vec<&str> {
    vec![
        ACP_CLI, "client", "--prompt", "hi", "--", "python3", RELAY, fault, "--", "{agent}",
    ]
}

/// R-CLIENT-1, R-CLIENT-2, R-CLIENT-3, R-CLIENT-4, R-CLIENT-5, R-CLIENT-6, R-CLIENT-7,
/// R-CLIENT-8, R-CLIENT-9, R-CLIENT-11: `acp-cli client` passes the whole client suite, 40
/// cases and more, without an advisory failure; it does not advertise `terminal`, so the
/// R-CLIENT-10 cases are skipped saying so; `--no-fs` turns the fs cases into the refusals
/// of R-FS-2.
#[test]
fn our_client_passes_every_case() {
    let out = conform(&[], &[ACP_CLI, "client", "--prompt", "hi", "--", "{agent}"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("\n0 failed") || stdout.contains(" 0 failed, "),
        "{stdout}"
    );
    assert!(stdout.ends_with("verdict: conformant\n"), "{stdout}");
    let passed = stdout.lines().filter(|l| l.starts_with("PASS ")).count();
    assert!(passed >= 40, "{passed} passed\n{stdout}");
    assert!(
        stdout.contains(
            "SKIP [CAPABILITY] terminal/lifecycle — the client does not advertise terminal"
        ),
        "{stdout}"
    );
    let out = conform(
        &["--only", "fs/"],
        &[
            ACP_CLI, "client", "--no-fs", "--prompt", "hi", "--", "{agent}",
        ],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("PASS [MANDATORY] fs/unadvertised-read-refused — answered error -32601"),
        "{stdout}"
    );
    assert!(
        stdout.contains("PASS [MANDATORY] fs/unadvertised-write-refused — answered error -32601, nothing written"),
        "{stdout}"
    );
}

/// (fault, the case that must fail, what its failure may say, whether the run fails):
/// the reason is checked too, so a case failing for another reason does not count.
const FAULTS: [(&str, &str, &[&str], bool); 10] = [
    (
        "answer-notification",
        "rpc/unknown-notification-ignored",
        &["R-ID-8 — answer with id null"],
        true,
    ),
    (
        "prompt-before-initialize",
        "handshake/initialize-first",
        &["the first message was not an initialize request: {\"id\":\"early\""],
        true,
    ),
    (
        "string-version",
        "handshake/protocol-version-integer",
        &["initialize.protocolVersion is \"1\", not an integer"],
        true,
    ),
    (
        "omit-fs-answer",
        "fs/read-text-file",
        &["no answer to fs/read_text_file"],
        true,
    ),
    (
        "unoffered-option",
        "permission/custom-option-ids",
        &["selected optionId \"conform-not-offered\", which the request did not offer"],
        true,
    ),
    (
        "cancelled-without-cancel",
        "permission/offered-option-selected",
        &["answered cancelled without having sent session/cancel"],
        true,
    ),
    (
        "result-for-unknown",
        "rpc/unknown-request-32601",
        &["conform/unknown_method answered with a result, expected error -32601"],
        true,
    ),
    (
        "wrong-id",
        "ids/string-id",
        &["R-ID-6 — response to id \"conform-ß-1-other\""],
        true,
    ),
    (
        "crash-on-late-update",
        "turn/late-update-tolerated",
        &["the client ended with signal 9, after a clean turn with exit code 0"],
        true,
    ),
    (
        "shows-unknown-session",
        "turn/unknown-session-not-shown",
        &["the text of an update for session conform-no-such-session appeared on stdout"],
        false,
    ),
];

/// R-CLIENT-1, R-CLIENT-4, R-CLIENT-6, R-CLIENT-7, R-CLIENT-9, R-RPC-9, R-ID-1: every
/// faulty client fails its case by name (with exit 1 when the case's tier fails the run).
#[test]
fn every_faulty_client_fails_its_case_by_name() {
    let mut missed = Vec::new();
    for (fault, case, why, fails_run) in FAULTS {
        let out = conform(&["--only", case], &faulty(fault));
        let stdout = text(&out.stdout);
        let failed = stdout.lines().any(|l| {
            l.starts_with("FAIL [")
                && l.contains(&format!("] {case} — "))
                && why.iter().any(|w| l.contains(w))
        });
        let code = if fails_run { 1 } else { 0 };
        if out.status.code() != Some(code) || !failed {
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

/// R-CLIENT-4: the relay without a fault passes the same cases (the faults, not the relay,
/// fail them).
#[test]
fn the_relay_without_a_fault_passes_the_same_cases() {
    let only: Vec<&str> = FAULTS.iter().map(|(_, case, _, _)| *case).collect();
    let out = conform(&["--only", &only.join(",")], &faulty("none"));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("\n10 passed, 0 failed, 0 skipped\nverdict: conformant\n"),
        "{stdout}"
    );
}

/// R-CLIENT-1: `--json` gives one document with each case's rule and tier.
#[test]
fn json_report_has_rules_and_tiers() {
    let out = conform(
        &["--json", "--only", "ids/"],
        &[ACP_CLI, "client", "--prompt", "hi", "--", "{agent}"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["conformant"], true);
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 5);
    for case in cases {
        assert_eq!(case["group"], "ids");
        assert_eq!(case["rule"], "R-ID-1");
        assert_eq!(case["tier"], "MANDATORY");
        assert_eq!(case["status"], "pass");
    }
}

/// R-ID-1, R-ID-6: `--junit FILE` writes the client run as JUnit XML with the agent
/// suite's writer: one test suite per group, a failure with its tier and rule.
#[test]
fn junit_report_is_written_for_a_client() {
    let dir = std::env::temp_dir().join(format!("conform-client-junit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("client.xml");
    let out = conform(
        &["--only", "ids/", "--junit", path.to_str().unwrap()],
        &faulty("wrong-id"),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let xml = std::fs::read_to_string(&path).expect("the JUnit file");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        xml.starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"acp-cli conform --client\" tests=\"5\" failures=\""
        ),
        "{xml}"
    );
    assert!(
        xml.contains("<testsuite name=\"ids\" tests=\"5\" failures=\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase classname=\"conform.ids\" name=\"string-id\" time=\""),
        "{xml}"
    );
    assert!(
        xml.contains("<failure message=\"")
            && xml.contains("R-ID-6 — response to id &quot;conform-ß-1-other&quot;"),
        "{xml}"
    );
    assert!(xml.contains(" type=\"MANDATORY\">R-ID-1: "), "{xml}");
    assert!(xml.ends_with("  </testsuite>\n</testsuites>\n"), "{xml}");
}

/// R-CLIENT-1: `--list` names every client case with its rule and tier, without a client.
#[test]
fn list_names_every_client_case() {
    let out = Command::new(ACP_CLI)
        .args(["conform", "--client", "--list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(stdout.lines().count() >= 40, "{stdout}");
    assert!(
        stdout.contains("handshake/initialize-first  [R-CLIENT-1] [MANDATORY]  "),
        "{stdout}"
    );
}

/// R-CLIENT-1: the command's own errors, with their exact texts and exit 2.
#[test]
fn usage_errors_are_exit_2_with_their_text() {
    let out = Command::new(ACP_CLI)
        .args(["conform", "--client"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "acp-cli conform: no client given; run `acp-cli conform --client -- CLIENT [ARGS...] {agent}`\n"
    );
    let out = conform(&["--only", "no-such-case"], &["x", "{agent}"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "acp-cli conform: --only no-such-case matches no case\n"
    );
    let out = conform(&["--chaos", "1"], &["x", "{agent}"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "acp-cli conform: --chaos is not available with --client\n"
    );
    let out = conform(&["--junit", "/nonexistent/conform.xml"], &["x", "{agent}"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "acp-cli conform: cannot write /nonexistent/conform.xml: No such file or directory (os error 2)\n"
    );
    let out = conform(
        &["--only", "ids/zero-id"],
        &["/nonexistent/client", "{agent}"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "acp-cli conform: the client's first turn failed: cannot start the client /nonexistent/client: No such file or directory (os error 2)\n"
    );
}

/// R-CLIENT-1: a client command without `{agent}` is pointed at a printed agent command;
/// a client that never starts it fails the first turn with exit 2.
#[test]
fn a_client_without_the_placeholder_is_pointed_at_a_printed_command() {
    let out = conform(
        &["--only", "ids/zero-id", "--timeout-scale", "0.1"],
        &["sh", "-c", "sleep 5"],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(
            "acp-cli conform: the client command has no {agent}; point the client at this agent command:\n  "
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(" conform --scripted-agent shared@127.0.0.1:"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(
            "acp-cli conform: the client's first turn failed: the client did not start its agent within 1s\n"
        ),
        "{stderr}"
    );
}

/// R-CLIENT-4, R-CLIENT-5, R-CLIENT-6, R-CLIENT-7, R-CLIENT-8: the REPL, driven in a pty
/// by `tests/conform/repl_pty.py` (a person's part: type `hi`, reject permissions, Ctrl-C
/// to stop a turn, Ctrl-D at the prompt after the turn), passes every case of the groups
/// where a person's part matters, none skipped (`.ci/run` runs the whole suite). The cases
/// named below once failed: the driver typed Ctrl-D before the line editor's raw mode (the
/// REPL never saw it) or rescanned a 1 MiB answer on every read, and a Ctrl-C that met a
/// permission question only rejected it.
#[test]
fn the_repl_in_a_pty_passes() {
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/conform/repl_pty.py");
    let out = conform(
        &[
            "--only",
            "handshake/initialize-first,session/failed-session-new-handled,turn/,permission/,cancel/,lifecycle/",
        ],
        &["python3", driver, "--", ACP_CLI, "repl", "--", "{agent}"],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.ends_with(" passed, 0 failed, 0 skipped\nverdict: conformant\n"),
        "{stdout}"
    );
    for case in [
        "[ADVISORY] session/failed-session-new-handled",
        "[MANDATORY] turn/every-update-kind",
        "[ADVISORY] turn/large-update",
        "[MANDATORY] turn/late-update-tolerated",
        "[MANDATORY] cancel/pending-permission-cancelled",
        "[ADVISORY] lifecycle/agent-exit-mid-turn",
    ] {
        assert!(
            stdout.contains(&format!("PASS {case} — ")),
            "{case} did not pass:\n{stdout}"
        );
    }
}
