//! Where `/read` and `/write` may go: relative paths resolve against the session cwd, and the
//! result must stay inside it (R-DEMO-2).
//!
//! This is the lexical half of the rule (`.` and `..` folded, no file system access), so the
//! backend stays pure. The local file operations of the driver then check the same rule again
//! after resolving symlinks.

use std::path::{Component, Path, PathBuf};

/// Resolves `path` against `cwd` and folds `.` and `..`. Returns the absolute path, or the
/// message of the refusal when it leaves `cwd`.
pub fn resolve_inside(cwd: &str, path: &str) -> Result<String, String> {
    let cwd_path = normalize(Path::new(cwd));
    let joined = normalize(&Path::new(cwd).join(path));
    if joined.starts_with(&cwd_path) {
        Ok(joined.to_string_lossy().into_owned())
    } else {
        Err(outside_message(path, cwd))
    }
}

/// The refusal text for a path that leaves the cwd.
pub fn outside_message(path: &str, cwd: &str) -> String {
    format!("'{path}' is outside the session cwd '{cwd}'")
}

/// Folds `.` and `..` without touching the file system (`..` at the root stays at the root).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_resolve_against_the_cwd() {
        assert_eq!(
            resolve_inside("/work/p", "notes.txt"),
            Ok("/work/p/notes.txt".into())
        );
        assert_eq!(
            resolve_inside("/work/p/", "./a/../b/c.txt"),
            Ok("/work/p/b/c.txt".into())
        );
        assert_eq!(
            resolve_inside("/work/p", "/work/p/x"),
            Ok("/work/p/x".into())
        );
    }

    #[test]
    fn paths_leaving_the_cwd_are_refused_with_a_clear_message() {
        assert_eq!(
            resolve_inside("/work/p", "../q/secret"),
            Err("'../q/secret' is outside the session cwd '/work/p'".into())
        );
        assert_eq!(
            resolve_inside("/work/p", "/etc/passwd"),
            Err("'/etc/passwd' is outside the session cwd '/work/p'".into())
        );
        // A sibling whose name starts like the cwd is still outside.
        assert_eq!(
            resolve_inside("/work/p", "/work/pq/x"),
            Err("'/work/pq/x' is outside the session cwd '/work/p'".into())
        );
    }
}
