//! `session/list`: the `cwd` filter, cursor pagination and its errors.

mod store_common;

use std::path::PathBuf;

use acp_cli::store::{SessionStore, StoreConfig, list_sessions};
use acp_core::schema::{ListSessionsRequest, SessionInfo};
use acp_core::wire::ErrorCode;
use store_common::*;

fn request(cwd: Option<&std::path::Path>, cursor: Option<&str>) -> ListSessionsRequest {
    let mut request = ListSessionsRequest::default();
    request.cwd = cwd.map(|cwd| cwd.to_str().unwrap().to_owned());
    request.cursor = cursor.map(str::to_owned);
    request
}

/// Saves sessions `ids` in `scratch`, the n-th updated at `first + n` seconds.
fn save_sessions(scratch: &Scratch, ids: &[&str], first: i64) {
    let store = SessionStore::new(scratch.path(), StoreConfig::default());
    for (n, id) in ids.iter().enumerate() {
        let mut history = simple_history(id, &[&format!("title of {id}")]);
        store.save(&mut history, at(first + n as i64)).unwrap();
    }
}

fn ids(sessions: &[SessionInfo]) -> Vec<&str> {
    sessions
        .iter()
        .map(|info| info.session_id.as_str())
        .collect()
}

#[test]
fn pages_follow_the_cursor_newest_first_until_the_last_page() {
    let scratch = Scratch::new("list-pages");
    save_sessions(&scratch, &["a", "b", "c", "d", "e"], 0);
    let cwd = scratch.path();

    let first = list_sessions(&request(Some(cwd), None), &[], 2)
        .unwrap()
        .response;
    assert_eq!(ids(&first.sessions), ["e", "d"]);
    let cursor = first.next_cursor.expect("more pages");
    let second = list_sessions(&request(Some(cwd), Some(&cursor)), &[], 2)
        .unwrap()
        .response;
    assert_eq!(ids(&second.sessions), ["c", "b"]);
    let cursor = second.next_cursor.expect("more pages");
    let last = list_sessions(&request(Some(cwd), Some(&cursor)), &[], 2)
        .unwrap()
        .response;
    assert_eq!(ids(&last.sessions), ["a"]);
    assert_eq!(last.next_cursor, None);

    let info = &first.sessions[0];
    assert_eq!(info.cwd, cwd.to_str().unwrap());
    assert_eq!(info.title.as_deref(), Some("title of e"));
    assert_eq!(
        info.updated_at.as_deref(),
        Some("2026-11-21T07:00:04.000000+00:00")
    );

    let whole = list_sessions(&request(Some(cwd), None), &[], 5)
        .unwrap()
        .response;
    assert_eq!(ids(&whole.sessions), ["e", "d", "c", "b", "a"]);
    assert_eq!(whole.next_cursor, None, "an exactly full page is the last");
}

#[test]
fn a_session_removed_between_pages_does_not_shift_the_next_page() {
    let scratch = Scratch::new("list-stable");
    save_sessions(&scratch, &["a", "b", "c", "d"], 0);
    let cwd = scratch.path();
    let first = list_sessions(&request(Some(cwd), None), &[], 2)
        .unwrap()
        .response;
    assert_eq!(ids(&first.sessions), ["d", "c"]);
    let store = SessionStore::new(cwd, StoreConfig::default());
    store.delete("d").unwrap();
    store.delete("c").unwrap();
    let cursor = first.next_cursor.unwrap();
    let second = list_sessions(&request(Some(cwd), Some(&cursor)), &[], 2)
        .unwrap()
        .response;
    assert_eq!(ids(&second.sessions), ["b", "a"]);
}

#[test]
fn the_cwd_filter_lists_one_directory_and_no_filter_lists_every_known_one() {
    let left = Scratch::new("list-left");
    let right = Scratch::new("list-right");
    save_sessions(&left, &["l1", "l2"], 0);
    save_sessions(&right, &["r1", "r2"], 10);
    let known: Vec<PathBuf> = vec![left.path().to_owned(), right.path().to_owned()];

    let only_left = list_sessions(&request(Some(left.path()), None), &known, 10).unwrap();
    assert_eq!(ids(&only_left.response.sessions), ["l2", "l1"]);
    let both = list_sessions(&request(None, None), &known, 10).unwrap();
    assert_eq!(ids(&both.response.sessions), ["r2", "r1", "l2", "l1"]);
    let cwds: Vec<&str> = both
        .response
        .sessions
        .iter()
        .map(|info| info.cwd.as_str())
        .collect();
    assert_eq!(cwds[0], right.path().to_str().unwrap());
    assert_eq!(cwds[3], left.path().to_str().unwrap());

    // Paging across directories, with duplicates in the known list ignored.
    let twice: Vec<PathBuf> = [known.clone(), known].concat();
    let first = list_sessions(&request(None, None), &twice, 3)
        .unwrap()
        .response;
    assert_eq!(ids(&first.sessions), ["r2", "r1", "l2"]);
    let cursor = first.next_cursor.unwrap();
    let rest = list_sessions(&request(None, Some(&cursor)), &twice, 3)
        .unwrap()
        .response;
    assert_eq!(ids(&rest.sessions), ["l1"]);
}

#[test]
fn a_directory_without_sessions_lists_nothing() {
    let scratch = Scratch::new("list-empty");
    let page = list_sessions(&request(Some(scratch.path()), None), &[], 10).unwrap();
    assert!(page.response.sessions.is_empty());
    assert_eq!(page.response.next_cursor, None);
}

#[test]
fn agentao_files_are_listed_once_per_session_with_their_newest_copy() {
    let scratch = Scratch::new("list-agentao").with_agentao_fixtures();
    let page = list_sessions(&request(Some(scratch.path()), None), &[], 10).unwrap();
    let sessions = page.response.sessions;
    assert_eq!(ids(&sessions), ["sess_3f9a1c2e4b5d", "sess_3f9a"]);
    assert_eq!(
        sessions[0].updated_at.as_deref(),
        Some("2026-01-15T09:30:12.123456+08:00")
    );
    assert_eq!(
        sessions[0].title.as_deref(),
        Some("List the files and make a plan for the refactor")
    );
}

#[test]
fn a_cursor_this_agent_did_not_issue_is_invalid_params() {
    let scratch = Scratch::new("list-bad-cursor");
    save_sessions(&scratch, &["a"], 0);
    for bad in [
        "zzz",
        "",
        "1.2",
        "12.abc.00",
        "x.00.00",
        "1.0.00.00",
        "1.f.00",
    ] {
        let err = list_sessions(&request(Some(scratch.path()), Some(bad)), &[], 10).unwrap_err();
        assert_eq!(err.code(), ErrorCode::INVALID_PARAMS, "{bad:?}");
        assert_eq!(
            err.rpc_message("session/list"),
            format!("session/list: invalid cursor '{bad}'")
        );
    }
}

#[test]
fn a_relative_cwd_filter_is_invalid_params() {
    let mut relative = ListSessionsRequest::default();
    relative.cwd = Some("projects/app".to_owned());
    let err = list_sessions(&relative, &[], 10).unwrap_err();
    assert_eq!(err.code(), ErrorCode::INVALID_PARAMS);
    assert_eq!(
        err.rpc_message("session/list"),
        "session/list: cwd must be an absolute path, got 'projects/app'"
    );
}
