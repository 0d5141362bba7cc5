//! Every relative link and anchor in `README.md` and `docs/*.md` resolves: the file exists, and
//! an anchor names a heading of the linked page (GitHub's anchors: lower case, punctuation
//! dropped, spaces as hyphens, `-1`, `-2` for repeats). A published crate's README is shown
//! away from the repository, so its links must be absolute.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repository_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The pages checked: the README and every page under `docs/`.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("reading docs/")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The lines outside fenced code blocks, with their numbers (1-based).
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// `line` without its code spans' contents (a `](` inside backticks is no link); the
/// backticks of a link's text go too, which leaves the link itself whole.
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The targets of the inline links and images on `line`: what is between `](` and `)`.
fn targets(line: &str) -> Vec<String> {
    let line = without_code(line);
    let mut found = Vec::new();
    let mut rest = line.as_str();
    while let Some(start) = rest.find("](") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(')') else { break };
        found.push(after[..end].trim().to_owned());
        rest = &after[end..];
    }
    found
}

/// GitHub's anchor for a heading's text.
fn slug(heading: &str) -> String {
    without_code_marks(heading)
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A heading's text without the backticks of its code spans (their contents stay).
fn without_code_marks(heading: &str) -> String {
    heading.replace('`', "")
}

/// Every anchor a page defines, repeats numbered as GitHub does.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = slug(heading.trim());
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

fn is_external(target: &str) -> bool {
    target.starts_with("https://") || target.starts_with("http://") || target.starts_with("mailto:")
}

/// Every problem with the links of `page`, as `page:line: why`.
fn broken_links(root: &Path, page: &Path) -> Vec<String> {
    let text = read(page);
    let shown = page
        .strip_prefix(root)
        .unwrap_or(page)
        .display()
        .to_string();
    let mut broken = Vec::new();
    for (number, line) in prose(&text) {
        for target in targets(line) {
            if is_external(&target) {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.to_path_buf()
            } else {
                page.parent().unwrap().join(path)
            };
            if !file.exists() {
                broken.push(format!("{shown}:{number}: {target}: no such file"));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if file.extension().is_none_or(|ext| ext != "md") {
                broken.push(format!(
                    "{shown}:{number}: {target}: an anchor into a non-page"
                ));
            } else if !anchors(&read(&file)).contains(anchor) {
                broken.push(format!(
                    "{shown}:{number}: {target}: no heading with that anchor"
                ));
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let root = repository_root();
    let broken: Vec<String> = pages(&root)
        .iter()
        .flat_map(|page| broken_links(&root, page))
        .collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn a_published_crates_readme_links_only_absolute_addresses() {
    let root = repository_root();
    let mut relative = Vec::new();
    for krate in [
        "acp-core",
        "acp-host",
        "acp-conform",
        "acp-cli",
        "acp-async",
    ] {
        let page = root.join(krate).join("README.md");
        for (number, line) in prose(&read(&page)) {
            for target in targets(line) {
                if !is_external(&target) {
                    relative.push(format!("{krate}/README.md:{number}: {target}"));
                }
            }
        }
    }
    assert!(
        relative.is_empty(),
        "relative links:\n{}",
        relative.join("\n")
    );
}

/// The checker itself: the anchors it derives, and that it sees a broken link.
#[test]
fn the_checker_derives_githubs_anchors_and_finds_a_broken_link() {
    assert_eq!(
        slug("The llm backend: `--backend llm`"),
        "the-llm-backend---backend-llm"
    );
    assert_eq!(
        slug("Interactive: `acp-cli repl`"),
        "interactive-acp-cli-repl"
    );
    let repeated = anchors("# A\n## Notes\n## Notes\n```\n# not a heading\n```\n");
    assert_eq!(
        repeated,
        BTreeSet::from(["a".to_owned(), "notes".to_owned(), "notes-1".to_owned()])
    );
    assert_eq!(
        targets("see [`x`](docs/x.md#y) and `[no](link)` and ![img](a.png)"),
        ["docs/x.md#y", "a.png"]
    );
    let dir = std::env::temp_dir().join(format!("acp-doc-links-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("page.md");
    std::fs::write(
        &page,
        "# Title\n[ok](#title) [gone](#nope) [missing](other.md)\n",
    )
    .unwrap();
    let broken = broken_links(&dir, &page);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        broken,
        [
            "page.md:2: #nope: no heading with that anchor",
            "page.md:2: other.md: no such file"
        ]
    );
}
