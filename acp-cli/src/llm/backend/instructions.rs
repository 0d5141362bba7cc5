//! Project instructions (R-LLM-7): the `AGENTS.md` and `AGENTAO.md` files of the session's
//! cwd and of its parents up to the repository root, read at the start of every turn (so an
//! edit counts from the next prompt) and put into the system prompt.
//!
//! The repository root is the nearest directory, the cwd included, that holds a `.git`
//! (a directory, or a worktree's file). Without one the walk stops at `$HOME` when the cwd
//! is inside it, else at the filesystem root. Each file is cut at [`FILE_MAX`] bytes, and
//! all of them together at [`TOTAL_MAX`], the budget spent from the cwd upward (the nearest
//! file is the most specific); a cut file ends with a note saying so.

use std::path::{Path, PathBuf};

/// The instruction file names, in the order they are read within one directory: the
/// common `AGENTS.md`, then Agentao's own `AGENTAO.md`.
pub(crate) const FILE_NAMES: [&str; 2] = ["AGENTS.md", "AGENTAO.md"];

/// Most bytes taken from one instruction file.
pub(crate) const FILE_MAX: usize = 32 * 1024;

/// Most bytes taken from all of them together.
pub(crate) const TOTAL_MAX: usize = 64 * 1024;

/// One instruction file as it goes into the system prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Instruction {
    /// Its absolute path.
    pub path: String,
    /// Its text, cut (with the note) when it was too large.
    pub text: String,
}

/// What the walk needs from the file system, so it is tested without one.
pub(crate) trait ProjectFiles: core::fmt::Debug {
    /// Whether `dir` holds a `.git` (directory or file).
    fn has_git(&self, dir: &Path) -> bool;
    /// The first `max` bytes of the file at `path` (lossy UTF-8) and its whole size;
    /// `None` when there is no readable regular file there.
    fn read_head(&self, path: &Path, max: usize) -> Option<(String, u64)>;
}

/// The real file system, with the `$HOME` the walk stops at when there is no repository.
#[derive(Clone, Debug, Default)]
pub(crate) struct RealFiles {
    pub home: Option<PathBuf>,
}

impl RealFiles {
    /// The process's `$HOME` (unset or empty: none).
    pub(crate) fn from_env() -> Self {
        Self {
            home: std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(PathBuf::from),
        }
    }
}

impl ProjectFiles for RealFiles {
    fn has_git(&self, dir: &Path) -> bool {
        dir.join(".git").symlink_metadata().is_ok()
    }

    fn read_head(&self, path: &Path, max: usize) -> Option<(String, u64)> {
        use std::io::Read;
        let file = std::fs::File::open(path).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() {
            return None;
        }
        let mut head = Vec::new();
        if let Err(error) = file.take(max as u64).read_to_end(&mut head) {
            tracing::warn!(path = %path.display(), %error, "instruction file not read");
            return None;
        }
        Some((String::from_utf8_lossy(&head).into_owned(), meta.len()))
    }
}

/// Where the walk up from `cwd` stops: the directories to read, the cwd first.
pub(crate) fn directories(
    cwd: &Path,
    files: &dyn ProjectFiles,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let chain: Vec<&Path> = cwd.ancestors().collect();
    let end = match chain.iter().position(|dir| files.has_git(dir)) {
        Some(root) => root,
        None => home
            .and_then(|home| chain.iter().position(|dir| *dir == home))
            .unwrap_or(chain.len().saturating_sub(1)),
    };
    chain[..=end.min(chain.len().saturating_sub(1))]
        .iter()
        .map(|dir| dir.to_path_buf())
        .collect()
}

/// The instruction files for a session in `cwd`, in prompt order: from the repository root
/// down to the cwd, `AGENTS.md` before `AGENTAO.md` within a directory.
pub(crate) fn gather(cwd: &str, files: &dyn ProjectFiles, home: Option<&Path>) -> Vec<Instruction> {
    let cwd = Path::new(cwd);
    if !cwd.is_absolute() {
        return Vec::new();
    }
    let mut budget = TOTAL_MAX;
    let mut found = Vec::new();
    'walk: for dir in directories(cwd, files, home) {
        let mut here = Vec::new();
        for name in FILE_NAMES {
            if budget == 0 {
                found.push(here);
                break 'walk;
            }
            let path = dir.join(name);
            let limit = FILE_MAX.min(budget);
            let Some((mut text, size)) = files.read_head(&path, limit) else {
                continue;
            };
            let path = path.display().to_string();
            cut_at_char(&mut text, limit);
            budget -= text.len();
            if size > limit as u64 {
                text.push_str(&cut_note(&path, size));
            }
            here.push(Instruction { path, text });
        }
        // Outer directories come first in the prompt.
        found.push(here);
    }
    found.into_iter().rev().flatten().collect()
}

/// The note a cut file ends with.
pub(crate) fn cut_note(path: &str, size: u64) -> String {
    format!(
        "\n[cut: {path} is {size} bytes; project instructions are limited to {} KiB per file \
         and {} KiB in all]",
        FILE_MAX / 1024,
        TOTAL_MAX / 1024
    )
}

/// `text` cut to at most `max` bytes, on a character boundary (a lossy read may end mid
/// character as a replacement character).
fn cut_at_char(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
}

/// The section of the system prompt for `instructions` (empty when there are none).
pub(crate) fn section(instructions: &[Instruction]) -> String {
    if instructions.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "# Project instructions\n\nThe project's instruction files follow, from the repository \
         root down to the working directory: where they disagree, the later (nearer) one wins.",
    );
    for instruction in instructions {
        out.push_str(&format!(
            "\n\n## {}\n\n{}",
            instruction.path,
            instruction.text.trim_end()
        ));
    }
    out
}

/// An in-memory tree for tests: files by path, and the directories holding a `.git`.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct MemoryFiles {
    files: std::collections::BTreeMap<PathBuf, String>,
    git: std::collections::BTreeSet<PathBuf>,
}

#[cfg(test)]
impl MemoryFiles {
    pub(crate) fn file(mut self, path: &str, text: &str) -> Self {
        self.files.insert(path.into(), text.to_owned());
        self
    }

    pub(crate) fn git(mut self, dir: &str) -> Self {
        self.git.insert(dir.into());
        self
    }
}

#[cfg(test)]
impl ProjectFiles for MemoryFiles {
    fn has_git(&self, dir: &Path) -> bool {
        self.git.contains(dir)
    }

    fn read_head(&self, path: &Path, max: usize) -> Option<(String, u64)> {
        let text = self.files.get(path)?;
        let mut head = text.clone();
        cut_at_char(&mut head, max);
        Some((head, text.len() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Tree = MemoryFiles;

    fn paths(found: &[Instruction]) -> Vec<&str> {
        found.iter().map(|i| i.path.as_str()).collect()
    }

    /// R-LLM-7: from the repository root down to the cwd, AGENTS.md before AGENTAO.md in a
    /// directory; nothing above the root is read.
    #[test]
    fn files_come_from_the_repository_root_down_to_the_cwd() {
        let tree = Tree::default()
            .git("/home/user/repo")
            .file("/home/user/AGENTS.md", "above the repository")
            .file("/home/user/repo/AGENTS.md", "root")
            .file("/home/user/repo/AGENTAO.md", "root agentao")
            .file("/home/user/repo/a/b/AGENTS.md", "nearest");
        let found = gather("/home/user/repo/a/b", &tree, Some(Path::new("/home/user")));
        assert_eq!(
            paths(&found),
            [
                "/home/user/repo/AGENTS.md",
                "/home/user/repo/AGENTAO.md",
                "/home/user/repo/a/b/AGENTS.md"
            ]
        );
        assert_eq!(found[2].text, "nearest");
    }

    /// R-LLM-7: a `.git` in the cwd itself makes it the root.
    #[test]
    fn a_cwd_with_its_own_git_reads_only_itself() {
        let tree = Tree::default()
            .git("/p")
            .git("/p/sub")
            .file("/p/AGENTS.md", "outer")
            .file("/p/sub/AGENTAO.md", "inner");
        assert_eq!(paths(&gather("/p/sub", &tree, None)), ["/p/sub/AGENTAO.md"]);
    }

    /// R-LLM-7: without a repository the walk stops at `$HOME` when the cwd is inside it,
    /// else at the filesystem root.
    #[test]
    fn without_a_repository_the_walk_stops_at_home_or_the_root() {
        let tree = Tree::default()
            .file("/AGENTS.md", "root of the file system")
            .file("/home/AGENTS.md", "above home")
            .file("/home/user/AGENTS.md", "home")
            .file("/home/user/p/AGENTS.md", "project");
        let home = Some(Path::new("/home/user"));
        assert_eq!(
            paths(&gather("/home/user/p", &tree, home)),
            ["/home/user/AGENTS.md", "/home/user/p/AGENTS.md"]
        );
        assert_eq!(
            paths(&gather("/srv/x", &tree.file("/srv/x/AGENTS.md", "x"), home)),
            ["/AGENTS.md", "/srv/x/AGENTS.md"]
        );
    }

    /// R-LLM-7: a file over 32 KiB is cut there with a note naming its size and the limits.
    #[test]
    fn a_large_file_is_cut_with_a_note() {
        let big = "é".repeat(20_000); // 40,000 bytes
        let tree = Tree::default().git("/p").file("/p/AGENTS.md", &big);
        let found = gather("/p", &tree, None);
        let note = "\n[cut: /p/AGENTS.md is 40000 bytes; project instructions are limited to \
                    32 KiB per file and 64 KiB in all]";
        assert!(
            found[0].text.ends_with(note),
            "{}",
            &found[0].text[32_000..]
        );
        assert_eq!(found[0].text.len(), FILE_MAX + note.len());
    }

    /// R-LLM-7: the 64 KiB budget is spent from the cwd upward, so the nearest files are
    /// whole and an outer one is cut (or left out once nothing is left).
    #[test]
    fn the_total_budget_is_spent_nearest_first() {
        let full = "a".repeat(FILE_MAX);
        let tree = Tree::default()
            .git("/r")
            .file("/r/AGENTS.md", "outermost")
            .file("/r/x/AGENTS.md", "b")
            .file("/r/x/y/AGENTS.md", &full)
            .file("/r/x/y/AGENTAO.md", &full);
        let found = gather("/r/x/y", &tree, None);
        assert_eq!(paths(&found), ["/r/x/y/AGENTS.md", "/r/x/y/AGENTAO.md"]);
        assert_eq!(found[0].text, full);
        assert_eq!(found[1].text, full);
    }

    /// R-LLM-7: the section names each file, outermost first.
    #[test]
    fn the_section_names_every_file_in_order() {
        let text = section(&[
            Instruction {
                path: "/r/AGENTS.md".into(),
                text: "one\n".into(),
            },
            Instruction {
                path: "/r/x/AGENTS.md".into(),
                text: "two".into(),
            },
        ]);
        assert!(text.starts_with("# Project instructions\n\n"), "{text}");
        assert!(
            text.ends_with("\n\n## /r/AGENTS.md\n\none\n\n## /r/x/AGENTS.md\n\ntwo"),
            "{text}"
        );
        assert_eq!(section(&[]), "");
    }
}
