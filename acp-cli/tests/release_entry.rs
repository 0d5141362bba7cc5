//! The release archive and its ACP registry entry, as `scripts/release.sh OUTDIR` writes them.
//!
//! The release build is slow, so this test builds nothing: `.ci/run` runs the script into a
//! temporary directory and then this test with `ACP_RELEASE_DIR` set to it
//! (`cargo test -p acp-rs-cli --test release_entry -- --ignored`). It checks `agent.json`
//! against the registry's documented rules (`tests/fixtures/registry/agent.schema.json`,
//! written from the registry's FORMAT.md, CONTRIBUTING.md and agent.schema.json, plus the
//! checks CONTRIBUTING.md lists beside the schema), unpacks the archive alone into a temporary
//! directory and runs the agent from there through `acp-cli client`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const ACP_CLI: &str = env!("CARGO_BIN_EXE_acp-cli");

/// The platform keys the registry knows.
const PLATFORMS: [&str; 6] = [
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
];

/// The archive formats the registry accepts for a `binary` distribution.
const ARCHIVE_SUFFIXES: [&str; 5] = [".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2"];

/// A directory unique to this test run, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("acp-cli-release-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("creating the scratch directory");
        Self(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn release_dir() -> PathBuf {
    let dir = std::env::var_os("ACP_RELEASE_DIR")
        .expect("ACP_RELEASE_DIR names the OUTDIR of `bash scripts/release.sh OUTDIR`");
    PathBuf::from(dir)
}

fn entry(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("agent.json")).expect("reading agent.json");
    serde_json::from_str(&text).expect("agent.json is JSON")
}

/// The one platform entry this machine's release wrote: (key, target).
fn this_platform(entry: &Value) -> (String, Value) {
    let binary = entry["distribution"]["binary"]
        .as_object()
        .expect("a binary distribution");
    assert_eq!(
        binary.len(),
        1,
        "release.sh writes this machine's platform only"
    );
    let (key, target) = binary.iter().next().unwrap();
    (key.clone(), target.clone())
}

/// `tar -xzf ARCHIVE` into a fresh directory, as a registry client unpacks it.
fn unpack(archive: &Path, name: &str) -> Scratch {
    let into = Scratch::new(name);
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(&into.0)
        .status()
        .expect("running tar");
    assert!(status.success(), "tar -xzf {} failed", archive.display());
    into
}

/// `acp-cli client --prompt hello -- AGENT ARGS…` in `cwd`, with an environment that holds
/// no provider key or configuration: only `PATH`, and `HOME`/`XDG_CONFIG_HOME` in `cwd`.
fn client_hello(cwd: &Path, agent: &Path, args: &[&str]) -> Output {
    Command::new(ACP_CLI)
        .args(["client", "--approve", "reject", "--timeout", "60"])
        .args(["--prompt", "hello", "--"])
        .arg(agent)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", cwd)
        .env("XDG_CONFIG_HOME", cwd)
        .output()
        .expect("running acp-cli client")
}

/// R-PROC-4: `agent.json` passes the registry schema's rules: the required fields, the id
/// pattern, a semantic version, known platform keys, `archive` and `cmd` per platform.
#[test]
#[ignore = "needs ACP_RELEASE_DIR from `bash scripts/release.sh OUTDIR` (.ci/run runs both)"]
fn agent_json_follows_the_registry_schema() {
    let entry = entry(&release_dir());
    let schema: Value = serde_json::from_str(include_str!("fixtures/registry/agent.schema.json"))
        .expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&entry)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "agent.json breaks the schema: {errors:#?}"
    );

    // What the schema says in `format` (not asserted by a draft-07 validator) and what
    // CONTRIBUTING.md checks beside it.
    let version = entry["version"].as_str().unwrap();
    assert!(
        version.split('.').all(|part| part.parse::<u64>().is_ok()),
        "every part of version '{version}' is numeric"
    );
    let repository = entry["repository"].as_str().expect("a repository");
    assert!(
        repository.starts_with("https://"),
        "repository '{repository}' is an https URL"
    );
    let (key, target) = this_platform(&entry);
    assert!(PLATFORMS.contains(&key.as_str()), "platform key '{key}'");
    let archive = target["archive"].as_str().unwrap();
    assert!(
        archive.starts_with("https://"),
        "archive '{archive}' is an https URL"
    );
    assert!(
        ARCHIVE_SUFFIXES.iter().any(|s| archive.ends_with(s)),
        "archive '{archive}' is one of the accepted formats"
    );
    assert!(
        !archive.contains("/latest/"),
        "archive '{archive}' names no /latest/"
    );
    assert!(
        archive.contains(&format!("/v{version}/")),
        "archive '{archive}' carries the entry's version {version}"
    );
    assert!(
        archive.ends_with(&format!("-{key}.tar.gz")),
        "archive '{archive}' is the one for {key}"
    );
}

/// R-PROC-4: the entry launches the LLM backend (`--acp --stdio --backend llm`), and the
/// archive it names lies beside it with the sha256 it gives.
#[test]
#[ignore = "needs ACP_RELEASE_DIR from `bash scripts/release.sh OUTDIR` (.ci/run runs both)"]
fn agent_json_names_the_archive_beside_it() {
    let dir = release_dir();
    let entry = entry(&dir);
    assert_eq!(entry["id"], "acp-rs");
    assert_eq!(entry["license"], "MIT OR Apache-2.0");
    assert_eq!(
        entry["authors"],
        serde_json::json!(["the acp-rs contributors"])
    );
    let (_, target) = this_platform(&entry);
    assert_eq!(target["cmd"], "./acp-cli");
    assert_eq!(
        target["args"],
        serde_json::json!(["--acp", "--stdio", "--backend", "llm"])
    );
    let name = target["archive"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    assert!(dir.join(&name).is_file(), "{name} is beside agent.json");
    // `.ci/run` checks the digest itself with `sha256sum -c` on this file.
    let recorded = std::fs::read_to_string(dir.join(format!("{name}.sha256")))
        .expect("the archive's .sha256 file");
    assert_eq!(
        recorded,
        format!("{}  {name}\n", target["sha256"].as_str().unwrap()),
        "the .sha256 file and agent.json give the same digest"
    );
}

/// R-PROC-4: unpacked alone, the archive's `cmd` is the agent: started with the entry's
/// args and no credentials it answers `initialize` and refuses the prompt for want of
/// authentication (an LLM agent without a key cannot answer); started with the demo's args
/// (`--acp --stdio`) the same binary answers `hello`. Its `--version` is the entry's.
#[test]
#[ignore = "needs ACP_RELEASE_DIR from `bash scripts/release.sh OUTDIR` (.ci/run runs both)"]
fn the_unpacked_agent_runs_through_acp_cli_client() {
    let dir = release_dir();
    let entry = entry(&dir);
    let (_, target) = this_platform(&entry);
    let name = target["archive"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap();
    let unpacked = unpack(&dir.join(name), "unpacked");
    let cmd = unpacked.0.join(target["cmd"].as_str().unwrap());
    assert!(cmd.is_file(), "{} is in the archive", cmd.display());

    let version = Command::new(&cmd)
        .arg("--version")
        .output()
        .expect("running the unpacked acp-cli");
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("acp-cli {}", entry["version"].as_str().unwrap())
    );

    let args: Vec<&str> = target["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let cwd = Scratch::new("cwd-llm");
    let llm = client_hello(&cwd.0, &cmd, &args);
    let stderr = String::from_utf8_lossy(&llm.stderr);
    assert_eq!(llm.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.to_lowercase().contains("authentication"),
        "the LLM agent without a key asks for authentication; stderr: {stderr}"
    );

    let cwd = Scratch::new("cwd-demo");
    let demo = client_hello(&cwd.0, &cmd, &["--acp", "--stdio"]);
    assert!(
        demo.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&demo.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&demo.stdout).trim(), "hello");
}
