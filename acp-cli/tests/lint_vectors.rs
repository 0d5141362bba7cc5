//! `acp-cli lint` on the hand-made traces of `vectors/lint/`: one per rule, each breaking it
//! once, plus one clean turn. Each file states what it expects in trailing comments:
//! `# expect: LINE: RULE — SIDE` (all of them, nothing more) and `# slow: SECS` for --slow.

use std::path::{Path, PathBuf};
use std::process::Command;

use acp_conform::lint::check;
use acp_conform::rules::MonitorOptions;
use acp_conform::trace::{self as format, Side};

fn vectors() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/lint");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ndjson"))
        .collect();
    files.sort();
    assert!(files.len() >= 14, "vectors/lint/ has {} files", files.len());
    files
}

/// The `# expect:` lines as `LINE: RULE — SIDE`, and the `# slow:` option.
fn expectations(text: &str) -> (Vec<String>, MonitorOptions) {
    let mut expected = Vec::new();
    let mut options = MonitorOptions::default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# expect: ") {
            expected.push(rest.to_owned());
        } else if let Some(secs) = line.strip_prefix("# slow: ") {
            options.slow = Some(secs.parse().unwrap());
        }
    }
    (expected, options)
}

fn found(trace: &format::Trace, options: MonitorOptions) -> Vec<String> {
    check(trace, options)
        .iter()
        .map(|f| format!("{}: {} — {}", f.line, f.rule, f.blame.name()))
        .collect()
}

#[test]
fn every_vector_gets_exactly_its_findings_on_the_right_line_and_side() {
    for file in vectors() {
        let bytes = std::fs::read(&file).unwrap();
        let (expected, options) = expectations(&String::from_utf8_lossy(&bytes));
        let trace = format::read(&bytes);
        assert_eq!(found(&trace, options), expected, "{}", file.display());
    }
}

/// The same messages recorded as conductor events (one event per line, same line numbers)
/// give the same findings: lint reads both forms alike.
#[test]
fn the_vectors_as_conductor_events_give_the_same_findings() {
    for file in vectors() {
        let bytes = std::fs::read(&file).unwrap();
        let (expected, options) = expectations(&String::from_utf8_lossy(&bytes));
        let raw = format::read(&bytes);
        let mut events = Vec::new();
        for entry in &raw.entries {
            format::write_event(
                entry.from,
                entry.ts.unwrap_or(0.0),
                &entry.text,
                &mut events,
            );
        }
        let trace = format::read(&events);
        assert_eq!(trace.entries.len(), raw.entries.len());
        assert_eq!(
            found(&trace, options),
            expected,
            "{} as events",
            file.display()
        );
    }
}

fn lint(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-cli"))
        .arg("lint")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn vector(name: &str) -> String {
    format!(
        "{}/../vectors/lint/{name}.ndjson",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn the_command_prints_one_line_per_finding_and_exits_1_on_an_error() {
    let (code, out, _) = lint(&[&vector("R-PERM-2")]);
    assert_eq!(code, Some(1));
    assert_eq!(
        out,
        "6: R-PERM-2 — agent: session/request_permission for tool call 't9', which no tool_call update announced\n"
    );
}

#[test]
fn a_clean_trace_prints_nothing_and_warnings_alone_exit_0() {
    assert_eq!(
        lint(&[&vector("clean")]),
        (Some(0), String::new(), String::new())
    );
    let (code, out, _) = lint(&[&vector("R-LINT-3"), "--slow", "30"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "6: R-LINT-3 — agent: session/prompt (id 2, line 5) answered after 44.0 s (warning)\n"
    );
    // Without --slow there is nothing to say about time.
    assert_eq!(lint(&[&vector("R-LINT-3")]).1, "");
}

#[test]
fn a_missing_file_is_exit_2_with_the_reason() {
    let (code, out, err) = lint(&["/nonexistent/t.jsons"]);
    assert_eq!(code, Some(2));
    assert_eq!(out, "");
    assert_eq!(
        err,
        "acp-cli lint: cannot read /nonexistent/t.jsons: No such file or directory (os error 2)\n"
    );
}

#[test]
fn dropped_events_and_unreadable_lines_are_reported_on_stderr() {
    let dir = std::env::temp_dir().join(format!("acp-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.jsons");
    let mut bytes = Vec::new();
    format::write_dropped(0.5, 3, false, &mut bytes);
    bytes.extend_from_slice(b"[1]\n");
    std::fs::write(&file, &bytes).unwrap();
    let (code, out, err) = lint(&[file.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (Some(0), ""));
    assert_eq!(
        err,
        "acp-cli lint: line 2 skipped: not a JSON object\n\
         acp-cli lint: line 1: the recorder dropped 3 messages here; findings near it may be wrong\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Peer bytes in any order never panic the monitor, and every finding names a line it saw.
#[test]
fn arbitrary_lines_never_panic_and_findings_point_at_real_lines() {
    fn prop(lines: Vec<(bool, String)>) -> bool {
        let mut file = Vec::new();
        for (client, text) in &lines {
            let side = if *client { Side::Client } else { Side::Agent };
            format::write_raw(side, 0.0, text.replace('\n', " ").as_bytes(), &mut file);
        }
        let trace = format::read(&file);
        check(&trace, MonitorOptions { slow: Some(1.0) })
            .iter()
            .all(|f| f.line >= 1 && f.line <= lines.len())
    }
    quickcheck::QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(Vec<(bool, String)>) -> bool);
}

/// R-ID-8: answers with id null are right for lines whose id cannot be read (not JSON, a
/// float id), whether the float is echoed or not; only the rules those lines break are found.
#[test]
fn null_id_answers_to_unreadable_ids_are_not_findings() {
    let trace = concat!(
        "> {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{}}}\n",
        "< {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{},\"authMethods\":[]}}\n",
        "> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\"\n",
        "< {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: EOF while parsing an object\"}}\n",
        "> {\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"session/new\",\"params\":{\"cwd\":\"/home/user/p\",\"mcpServers\":[]}}\n",
        "< {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be an integer, a string or null\"}}\n",
        "> {\"jsonrpc\":\"2.0\",\"id\":2.5,\"method\":\"session/new\",\"params\":{\"cwd\":\"/home/user/p\",\"mcpServers\":[]}}\n",
        "< {\"jsonrpc\":\"2.0\",\"id\":2.5,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be an integer, a string or null\"}}\n",
        "< {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"one answer too many\"}}\n",
    );
    let trace = format::read(trace.as_bytes());
    assert_eq!(
        found(&trace, MonitorOptions::default()),
        [
            "3: R-ENV-1 — client",
            "5: R-ID-2 — client",
            "7: R-ID-2 — client",
            "9: R-ID-8 — agent",
        ]
    );
}
