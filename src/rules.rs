//! The behaviour rules of `docs/protocol.md` and where they are cited.
//!
//! A rule is one row of a table in `docs/protocol.md` whose first cell is its id
//! (`| R-CANCEL-3 | … |`). Tests, vector headers and code comments cite a rule by writing its
//! id; [`cited`] finds those ids in any text, so a check can hold every rule to at least one
//! test (`tests/protocol_rules.rs`) and every citation to a rule that exists.

use std::path::{Path, PathBuf};

/// `docs/protocol.md` of this repository.
pub fn protocol_md() -> PathBuf {
    repository_root().join("docs/protocol.md")
}

/// The root of this repository (the workspace root, where this package lives).
pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The rule ids `docs/protocol.md` defines, in file order: the first cell of each
/// `| R-… |` table row.
///
/// # Panics
///
/// When `docs/protocol.md` cannot be read: every caller is a test, which should fail then.
pub fn defined() -> Vec<String> {
    let path = protocol_md();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{} is unreadable: {error}", path.display()));
    defined_in(&text)
}

/// The rule ids a protocol.md-shaped text defines (see [`defined`]).
pub fn defined_in(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("| "))
        .filter_map(|rest| rest.split_once(" |"))
        .filter_map(|(cell, _)| match cited(cell).as_slice() {
            [id] if *id == cell => Some(cell.to_string()),
            _ => None,
        })
        .collect()
}

/// The rule ids `text` cites, in order: `R-`, capitals (with inner `-`), `-`, digits, as in
/// `R-CANCEL-3`. Look-alikes (`R-x`, `R-FS-`, `AR-9`, `R-RPC-1x`) are skipped.
pub fn cited(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find("R-") {
        let start = from + offset;
        from = start + 2;
        let glued_before = start > 0 && is_word(bytes[start - 1]);
        if glued_before {
            continue;
        }
        if let Some(len) = id_length(&bytes[start..]) {
            found.push(&text[start..start + len]);
            from = start + len;
        }
    }
    found
}

/// The length of the rule id at the start of `bytes`, if one is there.
fn id_length(bytes: &[u8]) -> Option<usize> {
    // `R-` then families of capitals separated by `-`, then `-` and digits.
    let mut at = 2;
    loop {
        let capitals = bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_uppercase())
            .count();
        if capitals == 0 || bytes.get(at + capitals) != Some(&b'-') {
            return None;
        }
        at += capitals + 1;
        let digits = bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits > 0 {
            let end = at + digits;
            let glued_after = bytes.get(end).is_some_and(|b| is_word(*b));
            return (!glued_after).then_some(end);
        }
    }
}

fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cited_reads_ids_and_skips_lookalikes() {
        assert_eq!(
            cited("R-RPC-11 (R-RPC-1, R-CANCEL-5): EOF; R-x, R-FS- and AR-9, R-RPC-1x"),
            ["R-RPC-11", "R-RPC-1", "R-CANCEL-5"]
        );
    }

    #[test]
    fn defined_in_reads_the_first_cell_of_rule_rows_only() {
        let text = "| id | rule |\n|---|---|\n| R-FRAME-1 | A line ends at `\\n`. |\n\
                    | R-FRAME-2 | Blank lines are skipped (see R-FRAME-1). |\n\
                    | see R-ENV-1 | not a rule row |\nR-ENV-2 in prose\n";
        assert_eq!(defined_in(text), ["R-FRAME-1", "R-FRAME-2"]);
    }

    #[test]
    fn this_repository_defines_the_cancel_rules() {
        let rules = defined();
        assert!(rules.iter().any(|id| id == "R-CANCEL-3"), "{rules:?}");
        assert!(rules.len() >= 50, "{} rules", rules.len());
    }
}
