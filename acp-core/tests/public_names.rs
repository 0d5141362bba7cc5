//! No public type name is defined twice in acp-core (issue 17: an embedder never needs
//! `use … as …`). Host policy (`supervisor/`, `sanitize`) is outside the protocol core and
//! not checked here.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// `pub struct|enum|type|trait|union Name` at the start of a line (also inside the crate's
/// enum macros, which spell their items the same way).
fn public_type_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in source.lines() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("pub ") else {
            continue;
        };
        for keyword in ["struct ", "enum ", "type ", "trait ", "union "] {
            if let Some(after) = rest.strip_prefix(keyword) {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                    names.push(name);
                }
            }
        }
    }
    names
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn definitions() -> BTreeMap<String, Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files {
        let relative = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if relative.starts_with("supervisor/") || relative == "sanitize.rs" {
            continue;
        }
        for name in public_type_names(&fs::read_to_string(&file).unwrap()) {
            seen.entry(name).or_default().push(relative.clone());
        }
    }
    seen
}

#[test]
fn no_public_type_name_is_defined_twice() {
    let twice: Vec<_> = definitions()
        .into_iter()
        .filter(|(_, files)| files.len() > 1)
        .collect();
    assert!(twice.is_empty(), "defined more than once: {twice:#?}");
}

#[test]
fn the_scan_finds_definitions_and_would_see_a_duplicate() {
    let found = definitions();
    for name in [
        "AgentConnection",
        "ClientConnection",
        "StopReason",
        "Fixed",
        "Buffers",
    ] {
        assert_eq!(found.get(name).map(Vec::len), Some(1), "{name}");
    }
    let twice = public_type_names("pub struct A;\n    pub enum A (closed) {\npub(crate) struct B;");
    assert_eq!(twice, ["A", "A"]);
}
