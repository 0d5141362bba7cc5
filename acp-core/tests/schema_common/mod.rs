//! Shared helpers of the `schema_*` tests: where the vendored schema and fixtures live.
#![allow(dead_code)]

use std::path::PathBuf;

/// `<repo root>/../shared`, falling back to `/work/shared`.
pub fn shared_dir() -> PathBuf {
    let beside_repo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared"));
    if beside_repo.join("vendor").is_dir() {
        beside_repo
    } else {
        PathBuf::from("/work/shared")
    }
}

/// The text of a golden fixture.
pub fn golden(name: &str) -> String {
    let path = shared_dir().join("vendor/python-sdk-golden").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Every golden fixture's file name.
pub fn golden_names() -> Vec<String> {
    let dir = shared_dir().join("vendor/python-sdk-golden");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    names.sort();
    names
}

/// The vendored official schema.
pub fn schema() -> serde_json::Value {
    let path = shared_dir().join("vendor/acp-schema/schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).expect("schema.json is JSON")
}

/// Parses JSON text into a value (test input is always valid JSON).
pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}
