//! Where a session's file tools (the demo's `/read` and `/write`, the llm backend's) may go:
//! relative paths resolve against the session cwd, and the result must stay inside the cwd or one
//! of the session's `additionalDirectories`
//! (R-DEMO-2, R-SESSION-4).
//!
//! This is the lexical half of the rule (`.` and `..` folded, no file system access), so the
//! backend stays pure. The local file operations of the driver then check the same rule again
//! after resolving symlinks.

use std::path::{Component, Path, PathBuf};

/// The directories a session's files may live in: its cwd, then its additional directories
/// (absolute, checked to exist when the session opened).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Roots<'a> {
    /// The session cwd, also the base of relative paths.
    pub cwd: &'a str,
    /// `additionalDirectories`, in the client's order.
    pub additional: &'a [String],
}

impl<'a> Roots<'a> {
    /// Only the cwd.
    #[cfg(test)]
    pub(crate) fn cwd(cwd: &'a str) -> Self {
        Self {
            cwd,
            additional: &[],
        }
    }

    /// Every root, the cwd first.
    pub(crate) fn all(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        std::iter::once(self.cwd).chain(self.additional.iter().map(String::as_str))
    }
}

/// Resolves `path` against the cwd and folds `.` and `..`. Returns the absolute path, or the
/// message of the refusal when it is inside none of the roots.
pub(crate) fn resolve_inside(roots: Roots<'_>, path: &str) -> Result<String, String> {
    let joined = normalize(&Path::new(roots.cwd).join(path));
    if roots
        .all()
        .any(|root| joined.starts_with(normalize(Path::new(root))))
    {
        Ok(joined.to_string_lossy().into_owned())
    } else {
        Err(outside_message(path, roots))
    }
}

/// The refusal text for a path outside every root.
pub(crate) fn outside_message(path: &str, roots: Roots<'_>) -> String {
    let cwd = roots.cwd;
    if roots.additional.is_empty() {
        format!("'{path}' is outside the session cwd '{cwd}'")
    } else {
        format!("'{path}' is outside the session cwd '{cwd}' and its additional directories")
    }
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
            resolve_inside(Roots::cwd("/home/user/p"), "notes.txt"),
            Ok("/home/user/p/notes.txt".into())
        );
        assert_eq!(
            resolve_inside(Roots::cwd("/home/user/p/"), "./a/../b/c.txt"),
            Ok("/home/user/p/b/c.txt".into())
        );
        assert_eq!(
            resolve_inside(Roots::cwd("/home/user/p"), "/home/user/p/x"),
            Ok("/home/user/p/x".into())
        );
    }

    #[test]
    fn paths_leaving_the_cwd_are_refused_with_a_clear_message() {
        assert_eq!(
            resolve_inside(Roots::cwd("/home/user/p"), "../q/secret"),
            Err("'../q/secret' is outside the session cwd '/home/user/p'".into())
        );
        assert_eq!(
            resolve_inside(Roots::cwd("/home/user/p"), "/etc/passwd"),
            Err("'/etc/passwd' is outside the session cwd '/home/user/p'".into())
        );
        // A sibling whose name starts like the cwd is still outside.
        assert_eq!(
            resolve_inside(Roots::cwd("/home/user/p"), "/home/user/pq/x"),
            Err("'/home/user/pq/x' is outside the session cwd '/home/user/p'".into())
        );
    }

    #[test]
    fn additional_directories_count_as_inside_and_relative_paths_stay_on_the_cwd() {
        let extra = vec!["/data/shared".to_owned(), "/opt/lib/".to_owned()];
        let roots = Roots {
            cwd: "/home/user/p",
            additional: &extra,
        };
        assert_eq!(
            resolve_inside(roots, "/data/shared/a.txt"),
            Ok("/data/shared/a.txt".into())
        );
        assert_eq!(
            resolve_inside(roots, "/opt/lib/x/../y"),
            Ok("/opt/lib/y".into())
        );
        assert_eq!(
            resolve_inside(roots, "../../../data/shared/b"),
            Ok("/data/shared/b".into()),
            "relative to the cwd, landing in an additional directory"
        );
        assert_eq!(
            resolve_inside(roots, "notes"),
            Ok("/home/user/p/notes".into())
        );
        assert_eq!(
            resolve_inside(roots, "/data/sharedx/a"),
            Err(
                "'/data/sharedx/a' is outside the session cwd '/home/user/p' and its additional directories"
                    .into()
            )
        );
        assert_eq!(
            resolve_inside(roots, "/data/shared/../secret"),
            Err(
                "'/data/shared/../secret' is outside the session cwd '/home/user/p' and its additional directories"
                    .into()
            )
        );
    }
}
