//! The session directory: unreadable files, the cap, crash leftovers, concurrency, exact
//! lookups, deletion and the error texts the agent sends.

mod store_common;

use std::fs;
use std::sync::Arc;

use acp_cli::store::{SessionHistory, SessionStore, StoreConfig, StoreError};
use acp_core::wire::ErrorCode;
use store_common::*;

fn store(scratch: &Scratch) -> SessionStore {
    SessionStore::new(scratch.path(), StoreConfig::default())
}

fn capped(scratch: &Scratch, max_sessions: usize) -> SessionStore {
    SessionStore::new(scratch.path(), StoreConfig { max_sessions })
}

fn prompts_of(history: &SessionHistory) -> Vec<String> {
    history
        .turns()
        .iter()
        .map(|turn| match &turn.prompt[0] {
            acp_core::schema::ContentBlock::Text(text) => text.text.clone(),
            other => panic!("unexpected block {other:?}"),
        })
        .collect()
}

#[test]
fn corrupt_foreign_and_truncated_files_are_skipped_with_a_warning() {
    let scratch = Scratch::new("files-corrupt");
    let store = store(&scratch);
    let mut good = simple_history("good", &["hello"]);
    let good_path = store.save(&mut good, at(1)).unwrap().path.unwrap();
    let dir = scratch.sessions_dir();
    let full = fs::read(&good_path).unwrap();
    // Cut inside the header: no scan gets past it. Cut after the header (inside its
    // messages): a scan reads only the header, so the file is passed over when it is loaded.
    let header_end = full.windows(10).position(|w| w == b"\"messages\"").unwrap();
    fs::write(dir.join("a_cut_header.json"), &full[..header_end / 2]).unwrap();
    fs::write(dir.join("a_truncated.json"), &full[..full.len() - 20]).unwrap();
    fs::write(dir.join("b_not_json.json"), b"\x00\xffgarbage").unwrap();
    fs::write(dir.join("c_array.json"), b"[1, 2]").unwrap();
    fs::write(
        dir.join("d_foreign.json"),
        br#"{"name": "some other tool's config"}"#,
    )
    .unwrap();
    fs::write(
        dir.join("e_no_messages.json"),
        br#"{"session_id": "x", "messages": 3}"#,
    )
    .unwrap();
    fs::write(
        dir.join("f_empty_id.json"),
        br#"{"session_id": "", "messages": []}"#,
    )
    .unwrap();
    fs::write(dir.join("notes.txt"), b"not a json file, not looked at").unwrap();
    fs::create_dir(dir.join("g_directory.json")).unwrap();

    let loaded = store.load_latest().unwrap();
    assert_eq!(loaded.history.session_id(), "good");
    let warnings: Vec<(String, String)> = loaded
        .warnings
        .iter()
        .map(|warning| {
            let name = warning
                .path
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_owned();
            let reason = warning.reason.split(" (").next().unwrap().to_owned();
            (name, reason)
        })
        .collect();
    let expect = |name: &str, reason: &str| (name.to_owned(), reason.to_owned());
    assert_eq!(
        warnings,
        [
            expect("a_cut_header.json", "skipped: not valid JSON"),
            expect("b_not_json.json", "skipped: not valid JSON"),
            expect("c_array.json", "skipped: not a session file"),
            expect("d_foreign.json", "skipped: not a session file"),
            expect("e_no_messages.json", "skipped: not a session file"),
            expect("f_empty_id.json", "skipped: not a session file"),
            // The newest copy of `good` by name, tried first and passed over when read whole.
            expect("a_truncated.json", "skipped: not valid JSON"),
        ]
    );
    assert_eq!(
        loaded.warnings[2].reason,
        "skipped: not a session file (not a JSON object)"
    );
    assert_eq!(
        loaded.warnings[3].reason,
        "skipped: not a session file (no session_id)"
    );
    assert_eq!(
        loaded.warnings[4].reason,
        "skipped: not a session file (no messages list)"
    );
    for at in [0, 6] {
        let shown = loaded.warnings[at].to_string();
        assert!(
            shown.contains(".json: skipped: not valid JSON (EOF while parsing"),
            "{shown}"
        );
    }

    // Every other operation passes over them the same way, and never removes them.
    let mut other = simple_history("other", &["hi"]);
    let saved = store.save(&mut other, at(2)).unwrap();
    assert_eq!(saved.warnings.len(), 6);
    assert!(saved.removed.is_empty());
    assert_eq!(store.list().unwrap().0.len(), 2);
    assert!(dir.join("b_not_json.json").exists());
}

#[test]
fn a_directory_of_unreadable_files_has_no_saved_sessions() {
    let scratch = Scratch::new("files-only-corrupt");
    fs::create_dir_all(scratch.sessions_dir()).unwrap();
    let store = store(&scratch);
    let err = store.load("anything").unwrap_err();
    assert_eq!(
        err.rpc_message("session/load"),
        "session/load: No saved sessions found"
    );
    fs::write(scratch.sessions_dir().join("x.json"), b"{").unwrap();
    let err = store.load_latest().unwrap_err();
    assert_eq!(err.to_string(), "No saved sessions found");
    assert_eq!(err.code(), ErrorCode::INVALID_REQUEST);
}

#[test]
fn without_a_directory_loads_fail_with_agentaos_text_and_lists_are_empty() {
    let scratch = Scratch::new("files-no-dir");
    let store = store(&scratch);
    let err = store.load("sess_1").unwrap_err();
    assert!(matches!(err, StoreError::NoSessionsDirectory));
    assert_eq!(
        err.rpc_message("session/load"),
        "session/load: No sessions directory found"
    );
    assert_eq!(err.code(), ErrorCode::INVALID_REQUEST);
    assert!(matches!(
        store.load_latest(),
        Err(StoreError::NoSessionsDirectory)
    ));
    assert!(matches!(
        store.delete("sess_1"),
        Err(StoreError::NoSessionsDirectory)
    ));
    let (sessions, warnings) = store.list().unwrap();
    assert!(sessions.is_empty() && warnings.is_empty());
}

#[test]
fn lookups_match_the_whole_id_never_a_prefix() {
    let scratch = Scratch::new("files-exact").with_agentao_fixtures();
    let store = store(&scratch);
    // `sess_3f9a` is a prefix of `sess_3f9a1c2e4b5d`; each loads itself.
    assert_eq!(
        store.load("sess_3f9a").unwrap().history.session_id(),
        "sess_3f9a"
    );
    assert_eq!(
        store
            .load("sess_3f9a1c2e4b5d")
            .unwrap()
            .history
            .session_id(),
        "sess_3f9a1c2e4b5d"
    );
    for not_an_id in [
        "sess_3f9a1",
        "sess_",
        "20260115",
        "20260115_093012_123456",
        "SESS_3F9A",
        "",
    ] {
        let err = store.load(not_an_id).unwrap_err();
        assert_eq!(
            err.rpc_message("session/load"),
            format!("session/load: Session '{not_an_id}' not found")
        );
        assert_eq!(err.code(), ErrorCode::INVALID_REQUEST);
    }
}

#[test]
fn the_latest_session_is_the_most_recently_updated_whatever_the_offset() {
    let scratch = Scratch::new("files-latest").with_agentao_fixtures();
    let store = store(&scratch);
    // The fixtures' newest is 2026-01-15T09:30:12+08:00 = 01:30:12Z.
    assert_eq!(
        store.load_latest().unwrap().history.session_id(),
        "sess_3f9a1c2e4b5d"
    );
    let mut mine = simple_history("mine", &["x"]);
    // 01:30:13Z: one second later, though its local-time digits are smaller.
    let just_after = acp_cli::store::Timestamp::parse_iso("2026-01-15T01:30:13Z").unwrap();
    store.save(&mut mine, just_after).unwrap();
    assert_eq!(store.load_latest().unwrap().history.session_id(), "mine");
}

#[test]
fn the_cap_keeps_the_most_recently_updated_sessions() {
    let scratch = Scratch::new("files-cap");
    let store = capped(&scratch, 3);
    let mut histories: Vec<SessionHistory> = (0..5)
        .map(|n| simple_history(&format!("s{n}"), &["hi"]))
        .collect();
    for (n, history) in histories.iter_mut().take(3).enumerate() {
        assert!(
            store
                .save(history, at(n as i64))
                .unwrap()
                .removed
                .is_empty()
        );
    }
    // s0 is updated again: it is now newer than s1 and s2.
    turn(&mut histories[0], "again", &[]);
    store.save(&mut histories[0], at(10)).unwrap();
    let saved = store.save(&mut histories[3], at(11)).unwrap();
    assert_eq!(
        saved.removed,
        [scratch
            .sessions_dir()
            .join("20261121_070001_000000_s1.json")]
    );
    let saved = store.save(&mut histories[4], at(12)).unwrap();
    assert_eq!(
        saved.removed,
        [scratch
            .sessions_dir()
            .join("20261121_070002_000000_s2.json")]
    );
    let kept: Vec<String> = store
        .list()
        .unwrap()
        .0
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    assert_eq!(kept, ["s4", "s3", "s0"]);
    assert!(matches!(store.load("s1"), Err(StoreError::NotFound { .. })));
}

#[test]
fn the_cap_counts_sessions_not_saves() {
    let scratch = Scratch::new("files-cap-saves");
    let store = capped(&scratch, 2);
    let mut history = SessionHistory::new("only", "demo");
    for n in 0..5 {
        turn(&mut history, &format!("turn {n}"), &[message("ok")]);
        let saved = store.save(&mut history, at(n)).unwrap();
        assert!(saved.removed.is_empty());
    }
    assert_eq!(scratch.file_names(), ["20261121_070000_000000_only.json"]);
    assert_eq!(store.load("only").unwrap().history.turn_count(), 5);
}

#[test]
fn a_cap_of_zero_still_keeps_the_session_just_saved() {
    let scratch = Scratch::new("files-cap-zero");
    let store = capped(&scratch, 0);
    store.save(&mut simple_history("a", &["x"]), at(1)).unwrap();
    let saved = store.save(&mut simple_history("b", &["x"]), at(2)).unwrap();
    assert_eq!(saved.removed.len(), 1);
    assert_eq!(store.load_latest().unwrap().history.session_id(), "b");
}

/// R-STORE-2: the save is atomic.
#[test]
fn a_crash_between_write_and_rename_leaves_the_previous_version_and_its_temp_is_cleaned() {
    let scratch = Scratch::new("files-crash");
    let store = store(&scratch);
    let mut history = simple_history("s", &["one"]);
    let path = store.save(&mut history, at(1)).unwrap().path.unwrap();
    let before = fs::read(&path).unwrap();

    // What a process killed mid-save leaves: a half-written temporary file of a pid that no
    // longer exists (no Linux pid reaches 2e9), next to the intact previous version.
    let name = path.file_name().unwrap().to_str().unwrap();
    let dead = scratch
        .sessions_dir()
        .join(format!(".{name}.2000000000.7.tmp"));
    fs::write(&dead, &before[..before.len() / 3]).unwrap();
    // A save in progress in a live process (ours) must not be disturbed.
    let live = scratch
        .sessions_dir()
        .join(format!(".{name}.{}.99.tmp", std::process::id()));
    fs::write(&live, b"{").unwrap();

    let loaded = store.load("s").unwrap();
    assert!(
        loaded.warnings.is_empty(),
        "temporary files are never read as sessions"
    );
    assert_eq!(prompts_of(&loaded.history), ["one"]);
    assert_eq!(fs::read(&path).unwrap(), before);
    assert!(!dead.exists(), "a dead process's temporary file is removed");
    assert!(
        live.exists(),
        "a live process's temporary file is left alone"
    );

    turn(&mut history, "two", &[]);
    let saved = store.save(&mut history, at(2)).unwrap();
    assert_eq!(
        prompts_of(&store.load("s").unwrap().history),
        ["one", "two"]
    );
    assert!(saved.removed.is_empty());
    assert_eq!(
        scratch.file_names(),
        [
            format!(".{name}.{}.99.tmp", std::process::id()),
            name.to_owned()
        ]
    );
}

#[test]
fn sessions_saved_interleaved_in_one_directory_keep_their_own_turns() {
    let scratch = Scratch::new("files-interleaved");
    let store = store(&scratch);
    let mut a = SessionHistory::new("sess_a", "demo");
    let mut b = SessionHistory::new("sess_b", "demo");
    for n in 0..4 {
        turn(&mut a, &format!("a{n}"), &[message("A")]);
        store.save(&mut a, at(2 * n)).unwrap();
        turn(&mut b, &format!("b{n}"), &[message("B")]);
        store.save(&mut b, at(2 * n + 1)).unwrap();
    }
    assert_eq!(
        prompts_of(&store.load("sess_a").unwrap().history),
        ["a0", "a1", "a2", "a3"]
    );
    assert_eq!(
        prompts_of(&store.load("sess_b").unwrap().history),
        ["b0", "b1", "b2", "b3"]
    );
    assert_eq!(scratch.file_names().len(), 2);
}

#[test]
fn two_stores_saving_different_sessions_at_once_never_overwrite_each_other() {
    let scratch = Arc::new(Scratch::new("files-two-processes"));
    const TURNS: i64 = 25;
    let workers: Vec<_> = ["left", "right"]
        .into_iter()
        .map(|id| {
            let scratch = Arc::clone(&scratch);
            std::thread::spawn(move || {
                // Its own store instance, as another process would have.
                let store = SessionStore::new(scratch.path(), StoreConfig::default());
                let mut history = SessionHistory::new(id, "demo");
                for n in 0..TURNS {
                    turn(&mut history, &format!("{id} {n}"), &[message("ok")]);
                    store.save(&mut history, at(n)).unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let store = store(&scratch);
    for id in ["left", "right"] {
        let loaded = store.load(id).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let expected: Vec<String> = (0..TURNS).map(|n| format!("{id} {n}")).collect();
        assert_eq!(prompts_of(&loaded.history), expected);
    }
    assert_eq!(
        scratch.file_names().len(),
        2,
        "no temporary file left: {:?}",
        scratch.file_names()
    );
}

#[test]
fn delete_removes_every_copy_of_exactly_that_session() {
    let scratch = Scratch::new("files-delete").with_agentao_fixtures();
    let store = store(&scratch);
    let deleted = store.delete("sess_3f9a1c2e4b5d").unwrap();
    let mut names: Vec<&str> = deleted
        .removed
        .iter()
        .map(|path| path.file_name().unwrap().to_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["20260115_092600_000001.json", "20260115_093012_123456.json"]
    );
    assert_eq!(
        scratch.file_names(),
        ["20260114_180000_000000.json"],
        "the prefix-sharing one stays"
    );

    let err = store.delete("sess_3f9a1c2e4b5d").unwrap_err();
    assert_eq!(
        err.rpc_message("session/delete"),
        "session/delete: Session 'sess_3f9a1c2e4b5d' not found"
    );
    let err = store.delete("sess_3f9").unwrap_err();
    assert_eq!(err.to_string(), "Session 'sess_3f9' not found");
    assert!(matches!(
        store.load("sess_3f9a1c2e4b5d"),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn file_names_are_the_creation_stamp_and_the_escaped_id() {
    let created = at(61);
    assert_eq!(
        SessionStore::file_name_for("sess_Ab-9", created),
        "20261121_070101_000000_sess_Ab-9.json"
    );
    assert_eq!(
        SessionStore::file_name_for("../x/é y", created),
        "20261121_070101_000000_%2E%2E%2Fx%2F%C3%A9%20y.json"
    );
    let long_a = "a".repeat(300);
    let long_b = format!("{}b", "a".repeat(299));
    let name_a = SessionStore::file_name_for(&long_a, created);
    let name_b = SessionStore::file_name_for(&long_b, created);
    assert_ne!(name_a, name_b, "cut ids stay distinct");
    assert!(name_a.len() < 150, "{name_a}");

    // A hostile id is saved inside the sessions directory and found again.
    let scratch = Scratch::new("files-names");
    let store = store(&scratch);
    let mut history = simple_history("../../escape", &["x"]);
    let path = store.save(&mut history, created).unwrap().path.unwrap();
    assert_eq!(path.parent().unwrap(), scratch.sessions_dir());
    assert_eq!(store.load("../../escape").unwrap().history.turn_count(), 1);
}

#[test]
fn a_file_system_refusal_is_an_internal_error_naming_the_path() {
    let scratch = Scratch::new("files-io-error");
    // A plain file where the `sessions` directory should be.
    fs::create_dir_all(scratch.path().join(".agentao")).unwrap();
    fs::write(scratch.sessions_dir(), b"in the way").unwrap();
    let store = store(&scratch);
    let err = store
        .save(&mut simple_history("s", &["x"]), at(1))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::INTERNAL_ERROR);
    let text = err.rpc_message("session/prompt");
    let prefix = format!(
        "session/prompt: cannot create {}: ",
        scratch.sessions_dir().display()
    );
    assert!(text.starts_with(&prefix), "{text}");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn a_file_without_a_readable_updated_at_counts_as_the_oldest() {
    let scratch = Scratch::new("files-no-updated-at");
    let store = store(&scratch);
    fs::create_dir_all(scratch.sessions_dir()).unwrap();
    fs::write(
        scratch.sessions_dir().join("99999999_999999_999999.json"),
        br#"{"session_id": "undated", "updated_at": "last tuesday", "messages": []}"#,
    )
    .unwrap();
    store
        .save(&mut simple_history("dated", &["x"]), at(0))
        .unwrap();
    assert_eq!(store.load_latest().unwrap().history.session_id(), "dated");
    let (sessions, _) = store.list().unwrap();
    let listed: Vec<(&str, Option<&str>)> = sessions
        .iter()
        .map(|s| (s.session_id.as_str(), s.updated_at_text.as_deref()))
        .collect();
    assert_eq!(
        listed,
        [
            ("dated", Some("2026-11-21T07:00:00.000000+00:00")),
            ("undated", Some("last tuesday"))
        ]
    );
    assert_eq!(store.load("undated").unwrap().history.turn_count(), 0);
}

#[test]
fn saving_never_creates_a_missing_working_directory() {
    let scratch = Scratch::new("files-missing-cwd");
    let gone = scratch.path().join("gone");
    let store = SessionStore::new(&gone, StoreConfig::default());
    let err = store
        .save(&mut simple_history("s", &["x"]), at(1))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::INTERNAL_ERROR);
    assert_eq!(
        err.to_string(),
        format!("cannot save into {}: not a directory", gone.display())
    );
    assert!(!gone.exists());
}

fn ids_in(store: &SessionStore) -> Vec<String> {
    let mut ids: Vec<String> = store
        .list()
        .unwrap()
        .0
        .into_iter()
        .map(|summary| summary.session_id)
        .collect();
    ids.sort();
    ids
}

/// R-STORE-6: sessions without messages go first, and never push out one with history.
#[test]
fn sessions_without_messages_never_push_out_a_session_with_history() {
    let scratch = Scratch::new("files-cap-empty");
    let store = capped(&scratch, 3);
    let mut a = simple_history("a", &["hi"]);
    let mut b = simple_history("b", &["hi"]);
    store.save(&mut a, at(1)).unwrap();
    store.save(&mut b, at(2)).unwrap();
    // Sessions created and never prompted (saved when created, R-SESSION-11), the newest
    // last: each pushes out the empty one before it, never `a` or `b`.
    for n in 0..4 {
        let mut empty = SessionHistory::new(format!("e{n}"), "demo");
        store.save(&mut empty, at(10 + n)).unwrap();
    }
    assert_eq!(ids_in(&store), ["a", "b", "e3"]);
    // A session saved with history makes room by removing the empty one first.
    let mut c = simple_history("c", &["hi"]);
    let saved = store.save(&mut c, at(20)).unwrap();
    assert_eq!(saved.removed.len(), 1, "{:?}", saved.removed);
    assert_eq!(ids_in(&store), ["a", "b", "c"]);
    // A new empty session beside a full cap of histories is kept, over the cap.
    let mut e4 = SessionHistory::new("e4", "demo");
    assert!(store.save(&mut e4, at(21)).unwrap().removed.is_empty());
    assert_eq!(ids_in(&store), ["a", "b", "c", "e4"]);
    // The next session with history: the empty one goes, then the oldest history.
    let mut d = simple_history("d", &["hi"]);
    store.save(&mut d, at(22)).unwrap();
    assert_eq!(ids_in(&store), ["b", "c", "d"]);
}
