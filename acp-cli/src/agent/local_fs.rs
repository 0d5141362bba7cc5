//! The agent's own file access for `/read` and `/write` when the client does not serve
//! `fs/*`: confined to the session cwd and its additional directories after resolving
//! symlinks (R-DEMO-2, R-SESSION-4).
//!
//! The backend already refused paths that leave them on their face (`..`, another absolute
//! path); this is the second half of the rule, which needs the file system: a symlink inside
//! a root that points outside every root is refused too.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::agent::paths::{Roots, outside_message};

/// Reads the text file at `path` (absolute), which must resolve inside one of `roots`.
pub(crate) fn read_inside(roots: Roots<'_>, path: &str) -> Result<String, String> {
    let canonical = canonical_roots(roots)?;
    let real = fs::canonicalize(path).map_err(|e| cannot("read", path, &e))?;
    confine(&canonical, &real, roots, path)?;
    fs::read_to_string(&real).map_err(|e| cannot("read", path, &e))
}

/// Writes exactly `content` to `path` (absolute), which must resolve inside one of `roots`.
/// The parent directory must exist; a symlink at `path` is followed only if it stays inside.
pub(crate) fn write_inside(roots: Roots<'_>, path: &str, content: &str) -> Result<(), String> {
    let canonical = canonical_roots(roots)?;
    let target = Path::new(path);
    let real = match fs::canonicalize(target) {
        Ok(real) => real,
        // A new file: its directory decides.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
                return Err(cannot("write", path, &e));
            };
            let parent = fs::canonicalize(parent).map_err(|e| cannot("write", path, &e))?;
            // A dangling symlink would be followed by the write: refuse it.
            if fs::symlink_metadata(target).is_ok() {
                return Err(format!(
                    "{} (after resolving symlinks)",
                    outside_message(path, roots)
                ));
            }
            parent.join(name)
        }
        Err(e) => return Err(cannot("write", path, &e)),
    };
    confine(&canonical, &real, roots, path)?;
    fs::write(&real, content).map_err(|e| cannot("write", path, &e))
}

/// The roots with their symlinks resolved. The cwd must be usable; an additional directory
/// that has gone since the session opened simply admits nothing.
fn canonical_roots(roots: Roots<'_>) -> Result<Vec<PathBuf>, String> {
    let cwd = roots.cwd;
    let mut canonical = vec![
        fs::canonicalize(cwd).map_err(|e| format!("the session cwd '{cwd}' is not usable: {e}"))?,
    ];
    canonical.extend(
        roots
            .additional
            .iter()
            .filter_map(|d| fs::canonicalize(d).ok()),
    );
    Ok(canonical)
}

fn confine(canonical: &[PathBuf], real: &Path, roots: Roots<'_>, path: &str) -> Result<(), String> {
    if canonical.iter().any(|root| real.starts_with(root)) {
        Ok(())
    } else {
        Err(format!(
            "{} (after resolving symlinks)",
            outside_message(path, roots)
        ))
    }
}

fn cannot(what: &str, path: &str, error: &io::Error) -> String {
    format!("cannot {what} '{path}': {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory for one test, removed first if a previous run left it.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("acp-cli-local-fs-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    fn s(p: &Path) -> &str {
        p.to_str().expect("utf-8 path")
    }

    #[test]
    fn reads_and_writes_inside_the_cwd() {
        let dir = scratch("rw");
        let file = dir.join("a.txt");
        write_inside(Roots::cwd(s(&dir)), s(&file), "no newline").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"no newline");
        assert_eq!(
            read_inside(Roots::cwd(s(&dir)), s(&file)).unwrap(),
            "no newline"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_files_and_directories_are_clear_errors() {
        let dir = scratch("missing");
        let file = dir.join("nope.txt");
        let err = read_inside(Roots::cwd(s(&dir)), s(&file)).unwrap_err();
        assert_eq!(
            err,
            format!(
                "cannot read '{}': No such file or directory (os error 2)",
                s(&file)
            )
        );
        let deep = dir.join("no/such/dir.txt");
        let err = write_inside(Roots::cwd(s(&dir)), s(&deep), "x").unwrap_err();
        assert_eq!(
            err,
            format!(
                "cannot write '{}': No such file or directory (os error 2)",
                s(&deep)
            )
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn symlinks_pointing_outside_are_refused() {
        let dir = scratch("links");
        let cwd = dir.join("cwd");
        fs::create_dir_all(&cwd).unwrap();
        let outside = dir.join("secret.txt");
        fs::write(&outside, "secret").unwrap();
        let link = cwd.join("link.txt");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let expected = format!(
            "'{}' is outside the session cwd '{}' (after resolving symlinks)",
            s(&link),
            s(&cwd)
        );
        assert_eq!(
            read_inside(Roots::cwd(s(&cwd)), s(&link)).unwrap_err(),
            expected
        );
        assert_eq!(
            write_inside(Roots::cwd(s(&cwd)), s(&link), "x").unwrap_err(),
            expected
        );
        assert_eq!(fs::read_to_string(&outside).unwrap(), "secret", "untouched");

        // A linked directory that leads outside.
        let linked_dir = cwd.join("out");
        std::os::unix::fs::symlink(&dir, &linked_dir).unwrap();
        let via_dir = linked_dir.join("new.txt");
        assert_eq!(
            write_inside(Roots::cwd(s(&cwd)), s(&via_dir), "x").unwrap_err(),
            format!(
                "'{}' is outside the session cwd '{}' (after resolving symlinks)",
                s(&via_dir),
                s(&cwd)
            )
        );
        assert!(!dir.join("new.txt").exists());

        // A dangling link is not written through.
        let dangling = cwd.join("dangling.txt");
        std::os::unix::fs::symlink(dir.join("gone.txt"), &dangling).unwrap();
        assert!(write_inside(Roots::cwd(s(&cwd)), s(&dangling), "x").is_err());
        assert!(!dir.join("gone.txt").exists());

        // A link that stays inside is fine.
        let inner = cwd.join("inner.txt");
        fs::write(&inner, "in").unwrap();
        let inner_link = cwd.join("inner-link.txt");
        std::os::unix::fs::symlink(&inner, &inner_link).unwrap();
        assert_eq!(
            read_inside(Roots::cwd(s(&cwd)), s(&inner_link)).unwrap(),
            "in"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn additional_directories_admit_files_and_links_into_them_but_nothing_else() {
        let dir = scratch("roots");
        let cwd = dir.join("cwd");
        let shared = dir.join("shared");
        let elsewhere = dir.join("elsewhere");
        for d in [&cwd, &shared, &elsewhere] {
            fs::create_dir_all(d).unwrap();
        }
        let extra = vec![s(&shared).to_owned()];
        let roots = Roots {
            cwd: s(&cwd),
            additional: &extra,
        };
        let file = shared.join("data.txt");
        write_inside(roots, s(&file), "shared").unwrap();
        assert_eq!(read_inside(roots, s(&file)).unwrap(), "shared");
        // A link in the cwd into an additional directory stays inside.
        let link = cwd.join("to-shared.txt");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_inside(roots, s(&link)).unwrap(), "shared");
        // A link in an additional directory to elsewhere does not.
        let secret = elsewhere.join("secret.txt");
        fs::write(&secret, "secret").unwrap();
        let out = shared.join("out.txt");
        std::os::unix::fs::symlink(&secret, &out).unwrap();
        let expected = format!(
            "'{}' is outside the session cwd '{}' and its additional directories (after resolving symlinks)",
            s(&out),
            s(&cwd)
        );
        assert_eq!(read_inside(roots, s(&out)).unwrap_err(), expected);
        assert_eq!(write_inside(roots, s(&out), "x").unwrap_err(), expected);
        assert_eq!(fs::read_to_string(&secret).unwrap(), "secret", "untouched");
        let _ = fs::remove_dir_all(&dir);
    }
}
