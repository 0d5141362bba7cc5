//! Shared by the `host_*` tests: scratch directories, waiting with generous bounds, and
//! checking that a process is really gone.

#![allow(dead_code)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use smol::future::FutureExt as _;

/// Upper bound for anything a test waits for; reaching it fails the test.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Runs `future` to completion, failing the test if it takes longer than [`PATIENCE`].
pub fn run<F: Future>(future: F) -> F::Output {
    smol::block_on(future.or(async {
        smol::Timer::after(PATIENCE).await;
        panic!("test did not finish within {PATIENCE:?}");
    }))
}

/// A fresh empty directory under cargo's `CARGO_TARGET_TMPDIR`.
pub fn scratch_dir(tag: &str) -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // Under cargo's scratch directory for integration tests, not the system's: a run leaves
    // nothing in /tmp, and the next run reuses (empties) the same names.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("acp-host-{tag}-{n}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The process state letter from `/proc/<pid>/stat`, or `None` if there is no such process.
pub fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces; the state follows the last ')'.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// The process group of `pid`, from `/proc/<pid>/stat`.
pub fn proc_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // After the name: state, ppid, pgrp.
    fields.get(2)?.parse().ok()
}

/// Whether `pid` is gone: no process, or a zombie (dead, waiting for its new parent, which
/// is not us, to reap it).
pub fn is_gone(pid: u32) -> bool {
    matches!(proc_state(pid), None | Some('Z' | 'X'))
}

/// Waits (polling, up to [`PATIENCE`]) until `pid` is gone; fails the test otherwise.
pub fn wait_gone(pid: u32) {
    let give_up = Instant::now() + PATIENCE;
    while !is_gone(pid) {
        assert!(Instant::now() < give_up, "process {pid} is still alive");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A config with one `sh -c SCRIPT` server per `(name, script)`.
pub fn sh_config(servers: &[(&str, &str)]) -> String {
    let entries: Vec<String> = servers
        .iter()
        .map(|(name, script)| {
            format!(
                r#""{name}": {{"command": "sh", "args": ["-c", {}], "env": {{}}, "cwd": "."}}"#,
                json_string(script)
            )
        })
        .collect();
    format!(r#"{{"servers": {{{}}}}}"#, entries.join(", "))
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The host environment tests give children: just `PATH`.
pub fn test_env() -> Vec<(String, String)> {
    vec![(
        String::from("PATH"),
        std::env::var("PATH").unwrap_or_else(|_| String::from("/usr/bin:/bin")),
    )]
}
