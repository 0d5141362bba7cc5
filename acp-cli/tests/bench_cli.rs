//! `acp-cli bench` run as a binary on a small generated capture.

use std::path::PathBuf;
use std::process::{Command, Output};

use acp_core::wire::RawValue;
use acp_core::wire::json::parse_value;

/// A capture file unique to one test, removed when dropped.
struct Capture(PathBuf);

impl Capture {
    fn new(name: &str, text: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "acp-cli-bench-{}-{name}.ndjson",
            std::process::id()
        ));
        std::fs::write(&path, text).expect("writing the capture");
        Self(path)
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn acp_cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acp-cli"))
        .args(args)
        .output()
        .expect("running acp-cli")
}

/// 2 prompt turns (request, 3 chunks, response), 1 permission request and its flat-shape
/// answer, a cancel, an unknown notification; plus 3 invalid lines: not JSON, not JSON-RPC,
/// and a prompt whose params do not fit.
fn capture_text() -> String {
    let mut lines = Vec::new();
    for turn in 1..=2 {
        lines.push(format!(
            r#"{{"jsonrpc":"2.0","id":{turn},"method":"session/prompt","params":{{"sessionId":"s","prompt":[{{"type":"text","text":"turn {turn}"}}]}}}}"#
        ));
        for chunk in 0..3 {
            lines.push(format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"chunk {chunk} \"é\""}}}}}}}}"#
            ));
        }
        lines.push(format!(
            r#"{{"jsonrpc":"2.0","id":{turn},"result":{{"stopReason":"end_turn"}}}}"#
        ));
    }
    lines.push(r#"{"jsonrpc":"2.0","id":"perm_1","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"a","name":"Allow","kind":"allow_once"}]}}"#.to_owned());
    lines.push(
        r#"{"jsonrpc":"2.0","id":"perm_1","result":{"outcome":"selected","optionId":"a"}}"#
            .to_owned(),
    );
    lines.push(
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#.to_owned(),
    );
    lines.push(r#"{"jsonrpc":"2.0","method":"_zed/ping","params":{}}"#.to_owned());
    lines.push("this is not json".to_owned());
    lines.push(r#"[{"jsonrpc":"2.0"}]"#.to_owned());
    lines.push(r#"{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"s","prompt":"hello"}}"#.to_owned());
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn keys(object: RawValue<'_>) -> Vec<String> {
    object
        .fields()
        .map(|(key, _)| key.to_cow().into_owned())
        .collect()
}

fn field<'a>(object: RawValue<'a>, key: &str) -> RawValue<'a> {
    object
        .get_field(key)
        .unwrap_or_else(|| panic!("no {key} in {object}"))
}

#[test]
fn json_output_is_one_object_with_exact_keys_and_counts() {
    let text = capture_text();
    let capture = Capture::new("json", &text);
    let path = capture.0.to_str().unwrap();
    let output = acp_cli(&["bench", path, "--json", "--passes", "2"]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.ends_with('\n'));
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let report = parse_value(stdout.trim_end()).expect("stdout is one JSON value");
    assert_eq!(
        keys(report),
        [
            "file", "bytes", "messages", "invalid", "passes", "paths", "methods"
        ]
    );
    assert_eq!(field(report, "file").as_str().unwrap().to_cow(), path);
    assert_eq!(field(report, "bytes").as_u64(), Some(text.len() as u64));
    // 17 lines, two of which are not JSON-RPC messages.
    assert_eq!(text.lines().count(), 17);
    assert_eq!(field(report, "messages").as_u64(), Some(15));
    // Not JSON, a batch, and a prompt whose params do not fit.
    assert_eq!(field(report, "invalid").as_u64(), Some(3));
    assert_eq!(field(report, "passes").as_u64(), Some(2));
    let paths = field(report, "paths");
    assert_eq!(keys(paths), ["envelope", "borrowed", "owned"]);
    for (_, rate) in paths.fields() {
        assert_eq!(keys(rate), ["mb_per_s", "msg_per_s"]);
        for (_, number) in rate.fields() {
            let value: f64 = number.get().parse().expect("a number");
            assert!(value > 0.0, "{rate}");
        }
    }
    let methods = field(report, "methods");
    let counts: Vec<(String, u64)> = methods
        .fields()
        .map(|(k, v)| (k.to_cow().into_owned(), v.as_u64().unwrap()))
        .collect();
    let expected: Vec<(String, u64)> = [
        ("(response)", 3),
        ("_zed/ping", 1),
        ("session/cancel", 1),
        ("session/prompt", 3),
        ("session/request_permission", 1),
        ("session/update", 6),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(counts, expected);
}

#[test]
fn table_output_names_every_path_and_method() {
    let capture = Capture::new("table", &capture_text());
    let output = acp_cli(&["bench", capture.0.to_str().unwrap(), "--passes", "1"]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("15 messages, 3 invalid lines; median of 1 passes"),
        "{stdout}"
    );
    for path in ["envelope", "borrowed", "owned"] {
        assert!(
            stdout.lines().any(|line| line.starts_with(path)),
            "no {path} row in\n{stdout}"
        );
    }
    let update = stdout
        .lines()
        .find(|line| line.starts_with("session/update"))
        .expect("a session/update row");
    assert_eq!(
        update.split_whitespace().collect::<Vec<_>>(),
        ["session/update", "6"]
    );
}

#[test]
fn missing_file_is_a_clear_error() {
    let path = std::env::temp_dir().join("acp-cli-bench-no-such-file.ndjson");
    let output = acp_cli(&["bench", path.to_str().unwrap(), "--json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "acp-cli bench: cannot read {}: No such file or directory (os error 2)\n",
            path.display()
        )
    );
}

#[test]
fn a_directory_is_an_unreadable_file() {
    let dir = std::env::temp_dir();
    let output = acp_cli(&["bench", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!("acp-cli bench: cannot read {}: ", dir.display())),
        "{stderr}"
    );
}

#[test]
fn help_explains_what_is_measured() {
    let output = acp_cli(&["bench", "--help"]);
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for needle in [
        "median",
        "envelope",
        "borrowed",
        "owned",
        "MB/s (10^6 bytes)",
        "invalid",
        "--json",
        "--passes",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
}
