//! The llm backend's looks at the tree (`list_directory`, `glob`, `search_file_content`),
//! done by the agent on the real file system, confined to the session's roots after
//! resolving symlinks.
//!
//! The backend already refused paths that leave the cwd on their face; here the start of
//! the look must resolve inside a root, and the walk never follows a link, so it cannot
//! leave either. Walks skip hidden files and what `.gitignore` ignores (the `ignore` crate,
//! as ripgrep does). Every answer is bounded: entries, matches and bytes read per file.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use regex::RegexBuilder;

use super::backend::{Explore, ExploreKind};
use crate::agent::paths::{Roots, outside_message};

/// Most entries `list_directory` shows.
pub(crate) const MAX_ENTRIES: usize = 1000;
/// Most files `glob` answers.
pub(crate) const MAX_GLOB_RESULTS: usize = 500;
/// Most lines `search_file_content` answers.
pub(crate) const MAX_MATCHES: usize = 200;
/// Files larger than this are not searched.
pub(crate) const MAX_SEARCHED_FILE: u64 = 1 << 20;
/// A matching line is cut to this many characters.
const MAX_LINE_CHARS: usize = 240;

/// Runs one look and answers the text the model gets, or why it failed.
pub(crate) fn explore(request: &Explore) -> Result<String, String> {
    let roots = canonical_roots(&request.roots)?;
    let named = Roots {
        cwd: &request.roots[0],
        additional: &request.roots[1..],
    };
    match &request.what {
        ExploreKind::List { path } => list(&roots, named, path),
        ExploreKind::Glob { pattern, base } => glob(&roots, named, pattern, base),
        ExploreKind::Search {
            pattern,
            base,
            include,
        } => search(&roots, named, pattern, base, include.as_deref()),
    }
}

fn canonical_roots(roots: &[String]) -> Result<Vec<PathBuf>, String> {
    let Some(cwd) = roots.first() else {
        return Err("the session has no working directory".to_owned());
    };
    let mut canonical = vec![
        fs::canonicalize(cwd).map_err(|e| format!("the session cwd '{cwd}' is not usable: {e}"))?,
    ];
    canonical.extend(roots[1..].iter().filter_map(|r| fs::canonicalize(r).ok()));
    Ok(canonical)
}

/// `path` with its symlinks resolved, refused unless it lies inside a root.
fn confined(
    roots: &[PathBuf],
    named: Roots<'_>,
    path: &str,
    what: &str,
) -> Result<PathBuf, String> {
    let real = fs::canonicalize(path).map_err(|e| cannot(what, path, &e))?;
    if roots.iter().any(|root| real.starts_with(root)) {
        Ok(real)
    } else {
        Err(format!(
            "{} (after resolving symlinks)",
            outside_message(path, named)
        ))
    }
}

fn cannot(what: &str, path: &str, error: &io::Error) -> String {
    format!("cannot {what} '{path}': {error}")
}

/// How a found path is shown: relative to the cwd when inside it.
fn shown(cwd: &Path, path: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

fn list(roots: &[PathBuf], named: Roots<'_>, path: &str) -> Result<String, String> {
    let dir = confined(roots, named, path, "list")?;
    let entries = fs::read_dir(&dir).map_err(|e| cannot("list", path, &e))?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => format!("{name}/"),
                Ok(kind) if kind.is_symlink() => format!("{name}@"),
                _ => name,
            }
        })
        .collect();
    names.sort();
    if names.is_empty() {
        return Ok(format!("{path} is empty"));
    }
    let total = names.len();
    names.truncate(MAX_ENTRIES);
    let mut text = names.join("\n");
    if total > MAX_ENTRIES {
        text.push_str(&format!(
            "\n[{} more entries not shown]",
            total - MAX_ENTRIES
        ));
    }
    Ok(text)
}

/// A walk under `base` that skips hidden and ignored files and never follows links.
fn walk(base: &Path) -> ignore::Walk {
    WalkBuilder::new(base)
        .follow_links(false)
        .hidden(true)
        .git_ignore(true)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
}

fn matcher(pattern: &str, literal_separator: bool) -> Result<GlobMatcher, String> {
    GlobBuilder::new(pattern)
        .literal_separator(literal_separator)
        .build()
        .map(|glob: Glob| glob.compile_matcher())
        .map_err(|e| format!("invalid glob '{pattern}': {e}"))
}

fn glob(roots: &[PathBuf], named: Roots<'_>, pattern: &str, base: &str) -> Result<String, String> {
    let matcher = matcher(pattern, true)?;
    let start = confined(roots, named, base, "search")?;
    let mut found = Vec::new();
    let mut more = 0usize;
    for entry in walk(&start).filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(&start) else {
            continue;
        };
        if matcher.is_match(rel) {
            if found.len() < MAX_GLOB_RESULTS {
                found.push(shown(&roots[0], entry.path()));
            } else {
                more += 1;
            }
        }
    }
    if found.is_empty() {
        return Ok(format!("No files match '{pattern}' in {base}"));
    }
    let mut text = found.join("\n");
    if more > 0 {
        text.push_str(&format!("\n[{more} more files not shown]"));
    }
    Ok(text)
}

fn search(
    roots: &[PathBuf],
    named: Roots<'_>,
    pattern: &str,
    base: &str,
    include: Option<&str>,
) -> Result<String, String> {
    let regex = RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("invalid regular expression '{pattern}': {e}"))?;
    let include = include.map(|glob| matcher(glob, false)).transpose()?;
    let start = confined(roots, named, base, "search")?;
    let mut found = Vec::new();
    let mut more = 0usize;
    for entry in walk(&start).filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if let Some(include) = &include {
            let rel = path.strip_prefix(&start).unwrap_or(path);
            let name = path.file_name().map(Path::new).unwrap_or(rel);
            if !include.is_match(name) && !include.is_match(rel) {
                continue;
            }
        }
        if entry
            .metadata()
            .map_or(true, |m| m.len() > MAX_SEARCHED_FILE)
        {
            continue;
        }
        let Ok(bytes) = fs::read(path) else {
            continue;
        };
        // Binary files are skipped, as grep does.
        if bytes[..bytes.len().min(8192)].contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        for (number, line) in text.lines().enumerate() {
            if !regex.is_match(line) {
                continue;
            }
            if found.len() >= MAX_MATCHES {
                more += 1;
                continue;
            }
            let line: String = line.trim_end().chars().take(MAX_LINE_CHARS).collect();
            found.push(format!("{}:{}: {line}", shown(&roots[0], path), number + 1));
        }
    }
    if found.is_empty() {
        return Ok(format!("No matches for '{pattern}' in {base}"));
    }
    let mut text = found.join("\n");
    if more > 0 {
        text.push_str(&format!("\n[{more} more matches not shown]"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("acp-cli-explore-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("src/deep")).expect("scratch dir");
        fs::write(dir.join("src/main.rs"), "fn main() {\n    run();\n}\n").unwrap();
        fs::write(dir.join("src/deep/lib.rs"), "pub fn run() {}\n").unwrap();
        fs::write(dir.join("notes.txt"), "run this\n").unwrap();
        fs::write(dir.join("blob.bin"), b"run\0\x01").unwrap();
        fs::write(dir.join(".gitignore"), "target/\n").unwrap();
        fs::create_dir_all(dir.join("target")).unwrap();
        fs::write(dir.join("target/out.rs"), "fn run() {}\n").unwrap();
        dir
    }

    fn look(dir: &Path, what: ExploreKind) -> Result<String, String> {
        explore(&Explore {
            roots: vec![dir.to_string_lossy().into_owned()],
            what,
        })
    }

    fn s(path: &Path) -> String {
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn list_directory_marks_directories_and_sorts() {
        let dir = scratch("list");
        assert_eq!(
            look(&dir, ExploreKind::List { path: s(&dir) }),
            Ok(".gitignore\nblob.bin\nnotes.txt\nsrc/\ntarget/".into())
        );
        let missing = dir.join("nope");
        assert_eq!(
            look(&dir, ExploreKind::List { path: s(&missing) }),
            Err(format!(
                "cannot list '{}': No such file or directory (os error 2)",
                s(&missing)
            ))
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn glob_matches_paths_under_the_base_and_skips_ignored_files() {
        let dir = scratch("glob");
        assert_eq!(
            look(
                &dir,
                ExploreKind::Glob {
                    pattern: "**/*.rs".into(),
                    base: s(&dir)
                }
            ),
            Ok("src/deep/lib.rs\nsrc/main.rs".into())
        );
        assert_eq!(
            look(
                &dir,
                ExploreKind::Glob {
                    pattern: "*.rs".into(),
                    base: s(&dir.join("src"))
                }
            ),
            Ok("src/main.rs".into())
        );
        assert_eq!(
            look(
                &dir,
                ExploreKind::Glob {
                    pattern: "*.py".into(),
                    base: s(&dir)
                }
            ),
            Ok(format!("No files match '*.py' in {}", s(&dir)))
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn search_answers_path_line_and_text_and_honours_include() {
        let dir = scratch("search");
        let search = |pattern: &str, include: Option<&str>| {
            look(
                &dir,
                ExploreKind::Search {
                    pattern: pattern.into(),
                    base: s(&dir),
                    include: include.map(str::to_owned),
                },
            )
        };
        assert_eq!(
            search(r"\brun\b", None),
            Ok("notes.txt:1: run this\nsrc/deep/lib.rs:1: pub fn run() {}\nsrc/main.rs:2:     run();".into())
        );
        assert_eq!(
            search(r"fn \w+", Some("*.rs")),
            Ok("src/deep/lib.rs:1: pub fn run() {}\nsrc/main.rs:1: fn main() {".into())
        );
        assert_eq!(
            search("(", None),
            Err("invalid regular expression '(': regex parse error:\n    (\n    ^\nerror: unclosed group".into())
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn looks_through_links_that_leave_the_cwd_are_refused() {
        let dir = scratch("links");
        let outside =
            std::env::temp_dir().join(format!("acp-cli-explore-{}-outside", std::process::id()));
        let _ = fs::remove_dir_all(&outside);
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret.txt"), "run secret\n").unwrap();
        let link = dir.join("out");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert_eq!(
            look(&dir, ExploreKind::List { path: s(&link) }),
            Err(format!(
                "'{}' is outside the session cwd '{}' (after resolving symlinks)",
                s(&link),
                s(&dir)
            ))
        );
        // A walk from the cwd does not follow the link out.
        let found = look(
            &dir,
            ExploreKind::Search {
                pattern: "secret".into(),
                base: s(&dir),
                include: None,
            },
        );
        assert_eq!(found, Ok(format!("No matches for 'secret' in {}", s(&dir))));
        let _ = fs::remove_dir_all(&dir);
        let _ = fs::remove_dir_all(&outside);
    }
}
