//! `acp-cli view` in a real browser: headless chromium renders the page of a recorded turn
//! (with one late chunk appended: an R-TURN-3 finding) to a DOM and a PNG. The DOM must hold
//! every row laid out by `view::rows`, the finding marked on its row, and the PNG must be a
//! real image of the window's size. Without chromium the test says so and passes, except in
//! CI (`CI=true`), where `.ci/run` installs it and its absence fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use acp_cli::view;
use acp_conform::lint::check;
use acp_conform::rules::MonitorOptions;
use acp_conform::trace as format;

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Headless chromium on `page`, bounded by coreutils' `timeout` (headless chromium can hang
/// on a loaded machine; the test should then fail, not wait for ever).
fn headless(browser: &Path, extra: &[&str], page: &Path) -> std::process::Output {
    Command::new("timeout")
        .args(["-k", "5", "180"])
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts")
}

#[test]
fn the_page_renders_in_headless_chromium_with_every_row_and_the_finding_marked() {
    let Some(browser) = chromium() else {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "chromium is missing in CI: .ci/run installs Debian's `chromium`"
        );
        eprintln!(
            "SKIPPED: no chromium on PATH (apt-get install chromium); the view test did not run"
        );
        return;
    };
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/view-turn.jsons");
    let dir = std::env::temp_dir().join(format!("acp-view-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("trace.html");

    let trace = format::read(&std::fs::read(&fixture).unwrap());
    let findings = check(&trace, MonitorOptions::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].rule, "R-TURN-3");
    let rows = view::rows(&trace, &findings);
    assert!(
        rows.iter().any(|r| r.messages.len() > 1),
        "a run of chunks is folded"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_acp-cli"))
        .args([
            "view",
            fixture.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}: {} rows, 1 finding\n", page.display(), rows.len())
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no network"
    );

    let dom = headless(&browser, &["--dump-dom"], &page);
    let dom = String::from_utf8_lossy(&dom.stdout);
    let drawn = dom.matches("class=\"row ").count();
    assert_eq!(drawn, rows.len(), "rows drawn by the browser");
    assert!(dom.contains(&format!("data-rendered=\"{}\"", rows.len())));
    let marked: Vec<_> = dom.match_indices("finding\" data-line=\"").collect();
    assert_eq!(marked.len(), 1, "one row marked");
    let line = findings[0].line.to_string();
    assert!(dom.contains(&format!("finding\" data-line=\"{line}\"")));
    assert!(dom.contains("R-TURN-3 — agent"));

    let shot = dir.join("shot.png");
    let _ = headless(
        &browser,
        &[
            "--window-size=1100,900",
            &format!("--screenshot={}", shot.display()),
        ],
        &page,
    );
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (1100, 900));
    // A blank page compresses to a few kB; a drawn diagram does not.
    assert!(png.len() > 20_000, "{} bytes", png.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_trace_is_exit_2_with_the_reason() {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-cli"))
        .args(["view", "/nonexistent/t.jsons"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "acp-cli view: cannot read /nonexistent/t.jsons: No such file or directory (os error 2)\n"
    );
}
