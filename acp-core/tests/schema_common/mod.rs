//! Shared helpers of the `schema_*` tests: the official JSON Schema and method tables, generated
//! at test time from the pinned official crate by `tests/schema-gen` (its own workspace, so the
//! official crate's serde_json features never reach the acp-core under test).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The official schema (`schema`: `$schema` and `$defs`) and method tables (`meta`), or `None`
/// when `tests/schema-gen` cannot be built here (no network for its first build): the checks
/// that need it say so and skip, except under `CI=true`, where that fails.
fn generated() -> Option<&'static serde_json::Value> {
    static GENERATED: OnceLock<Option<serde_json::Value>> = OnceLock::new();
    GENERATED.get_or_init(run_generator).as_ref()
}

/// `cargo run` of `tests/schema-gen`, in `schema-gen/` under this test's target directory.
fn run_generator() -> Option<serde_json::Value> {
    let repo = repo();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["run", "-q", "--manifest-path"])
        .arg(repo.join("tests/schema-gen/Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir().join("schema-gen"))
        .output();
    let why = match output {
        Ok(out) if out.status.success() => {
            return Some(serde_json::from_slice(&out.stdout).expect("schema-gen writes JSON"));
        }
        Ok(out) => String::from_utf8_lossy(&out.stderr).into_owned(),
        Err(e) => e.to_string(),
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "tests/schema-gen (the official schema crate) did not build: {why}"
    );
    eprintln!(
        "skipped: the JSON Schema checks need the official schema crate, which tests/schema-gen \
         could not build here (no network?): {why}"
    );
    None
}

/// The target directory this test binary was built in (`<target>/debug/deps/<test>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir)
}

/// The official schema: `$schema` and every stable type under `$defs`.
pub fn schema() -> Option<&'static serde_json::Value> {
    generated().map(|g| &g["schema"])
}

/// The official method-name tables: `agentMethods`, `clientMethods`, `protocolMethods`.
pub fn meta() -> Option<&'static serde_json::Value> {
    generated().map(|g| &g["meta"])
}

/// Parses JSON text into a value (test input is always valid JSON).
pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The text of one of our sample messages (`acp-core/tests/messages/<name>`): one value of each
/// shape the decode tests cover, written for these tests.
pub fn message(name: &str) -> String {
    let path = messages_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Every sample message's file name, sorted.
pub fn message_names() -> Vec<String> {
    let dir = messages_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    names.sort();
    names
}

fn messages_dir() -> PathBuf {
    repo().join("acp-core/tests/messages")
}

/// The repository root: the parent of the crate under test (acp-core, or acp-cli, whose tests
/// use this module too).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}
