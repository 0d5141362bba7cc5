//! The rules of `docs/protocol.md` against the tests that hold them: every rule is cited by at
//! least one test or vector (or waits in [`NOT_YET_CITED`]), every id cited anywhere exists, and
//! every vector's header names its rules.
//!
//! A test cites a rule by writing its id in its name or doc comment, a vector in its header
//! comment (`docs/testing.md`, "Naming"). What counts as a test here: the files under each
//! crate's `tests/` and the root `tests/`, the `vectors/` files, and in `src/` the text from a
//! file's first `#[cfg(test)]` on (and whole `tests.rs` files).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use acp_testkit::rules::{cited, defined, repository_root};
use acp_testkit::vectors::{load_dir, vectors_dir};

/// Rules no test cites yet. Each is a debt: write (or find and label) the test, then remove the
/// id here; [`the_waiting_list_holds_only_defined_uncited_rules`] fails once a test cites it.
const NOT_YET_CITED: &[&str] = &[];

/// Every file below `dir` (recursively) whose name ends with `suffix`.
fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The test text of the workspace with the file each piece comes from (see the module doc).
fn test_texts() -> Vec<(PathBuf, String)> {
    let root = repository_root();
    let this_file = root.join("tests/protocol_rules.rs");
    let mut texts = Vec::new();
    for dir in [
        "acp-core/tests",
        "acp-host/tests",
        "acp-conform/tests",
        "acp-cli/tests",
        "acp-async/tests",
        "tests",
    ] {
        for path in files(&root.join(dir), ".rs") {
            let in_own_workspace = ["tests/oracle", "tests/interop", "tests/no-std-check"]
                .iter()
                .any(|other| path.starts_with(root.join(other)));
            if path != this_file && !in_own_workspace {
                let text = read(&path);
                texts.push((path, text));
            }
        }
    }
    // Transcripts (`.jsonl`) and the lint's bad traces (`.ndjson`, named after their rule).
    for suffix in [".jsonl", ".ndjson"] {
        for path in files(&vectors_dir(), suffix) {
            let text = read(&path);
            texts.push((path, text));
        }
    }
    for dir in [
        "acp-core/src",
        "acp-host/src",
        "acp-conform/src",
        "acp-cli/src",
        "acp-async/src",
        "src",
    ] {
        for path in files(&root.join(dir), ".rs") {
            let text = read(&path);
            let tests = if path.ends_with("tests.rs") {
                Some(text.as_str())
            } else {
                text.find("#[cfg(test)]").map(|at| &text[at..])
            };
            if let Some(tests) = tests {
                texts.push((path.clone(), tests.to_string()));
            }
        }
    }
    texts
}

fn cited_by_tests() -> BTreeSet<String> {
    test_texts()
        .iter()
        .flat_map(|(_, text)| cited(text).into_iter().map(str::to_string))
        .collect()
}

#[test]
fn every_rule_in_protocol_md_is_cited_by_a_test() {
    let cited = cited_by_tests();
    let uncited: Vec<String> = defined()
        .into_iter()
        .filter(|id| !cited.contains(id) && !NOT_YET_CITED.contains(&id.as_str()))
        .collect();
    assert!(
        uncited.is_empty(),
        "no test or vector cites these rules of docs/protocol.md (name the test that holds \
         each, or add it to NOT_YET_CITED): {uncited:?}"
    );
}

#[test]
fn the_waiting_list_holds_only_defined_uncited_rules() {
    let rules = defined();
    let cited = cited_by_tests();
    for id in NOT_YET_CITED {
        assert!(
            rules.iter().any(|rule| rule == id),
            "NOT_YET_CITED names {id}, which docs/protocol.md does not define"
        );
        assert!(
            !cited.contains(*id),
            "{id} is cited by a test now: remove it from NOT_YET_CITED"
        );
    }
}

/// Code, tests, vectors and docs cite only rules that exist, so a renumbered or deleted rule
/// cannot leave a dangling id behind.
#[test]
fn every_cited_rule_is_defined_in_protocol_md() {
    let rules: BTreeSet<String> = defined().into_iter().collect();
    let root = repository_root();
    let mut sources = Vec::new();
    for (dir, suffix) in [
        ("acp-core", ".rs"),
        ("acp-host", ".rs"),
        ("acp-conform", ".rs"),
        ("acp-cli", ".rs"),
        ("acp-async", ".rs"),
        ("src", ".rs"),
        ("tests", ".rs"),
        ("vectors", ".jsonl"),
        ("vectors", ".ndjson"),
        ("docs", ".md"),
        ("vectors", ".md"),
    ] {
        sources.extend(files(&root.join(dir), suffix));
    }
    sources.push(root.join("README.md"));
    let mut dangling = Vec::new();
    for path in sources {
        let text = read(&path);
        for (number, line) in text.lines().enumerate() {
            for id in cited(line) {
                if !rules.contains(id) {
                    let shown = path.strip_prefix(&root).unwrap_or(&path).display();
                    dangling.push(format!("{shown}:{}: {id}", number + 1));
                }
            }
        }
    }
    assert!(
        dangling.is_empty(),
        "ids docs/protocol.md does not define:\n{}",
        dangling.join("\n")
    );
}

/// Every vector names in its header (its first comment) the rules it holds the layer to, so
/// `grep -rn R-CANCEL-3 vectors/` finds the scenarios of a rule, and a replay failure names them.
#[test]
fn every_vector_header_cites_its_rules() {
    for dir in ["wire", "agent", "client", "demo"] {
        let vectors = load_dir(&vectors_dir().join(dir)).expect("the vectors parse");
        assert!(!vectors.is_empty(), "vectors/{dir}/ is empty");
        for vector in &vectors {
            assert!(
                !vector.rules().is_empty(),
                "{}: the header comment cites no rule id: {:?}",
                vector.name,
                vector.header()
            );
        }
    }
}
