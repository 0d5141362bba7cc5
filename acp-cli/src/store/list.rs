//! `session/list` over one or more working directories, with an opaque cursor.
//!
//! Sessions are ordered most recently updated first, then by working directory, then by id.
//! A cursor names the last session of the page it ended (its position in that order), not
//! an index, so a session saved or deleted between two pages neither repeats nor hides others.

use std::path::{Path, PathBuf};

use acp_core::schema::{ListSessionsRequest, ListSessionsResponse, SessionInfo};

use super::directory::{SessionStore, SessionSummary, StoreConfig};
use super::error::{StoreError, StoreWarning};
use super::time::Timestamp;

/// Sessions per page unless the agent says otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// One page of `session/list`, and the files passed over.
#[derive(Debug)]
pub struct SessionPage {
    /// The result to send.
    pub response: ListSessionsResponse,
    /// Files passed over.
    pub warnings: Vec<StoreWarning>,
}

/// Answers `session/list`: the sessions stored under `request.cwd` when it is given, else
/// under every directory of `known_cwds` (the directories the agent has served), a page of
/// at most `page_size` (at least one) starting after `request.cursor`.
pub fn list_sessions(
    request: &ListSessionsRequest,
    known_cwds: &[PathBuf],
    page_size: usize,
) -> Result<SessionPage, StoreError> {
    let after = request.cursor.as_deref().map(decode_cursor).transpose()?;
    let mut cwds: Vec<PathBuf> = match &request.cwd {
        Some(cwd) if !Path::new(cwd).is_absolute() => {
            return Err(StoreError::RelativeCwd { cwd: cwd.clone() });
        }
        Some(cwd) => vec![PathBuf::from(cwd)],
        None => known_cwds.to_vec(),
    };
    cwds.sort();
    cwds.dedup();

    let mut all = Vec::new();
    let mut warnings = Vec::new();
    for cwd in cwds {
        let (summaries, skipped) = SessionStore::new(cwd, StoreConfig::default()).list()?;
        all.extend(summaries);
        warnings.extend(skipped);
    }
    all.sort_by(|a, b| order_key(b).cmp(&order_key(a)));

    let start = match &after {
        Some(cursor) => all.partition_point(|summary| order_key(summary) >= cursor.as_key()),
        None => 0,
    };
    let page_size = page_size.max(1);
    let end = all.len().min(start.saturating_add(page_size));
    let page = &all[start..end];
    let mut response = ListSessionsResponse::default();
    response.sessions = page.iter().map(session_info).collect();
    if end < all.len() {
        response.next_cursor = page.last().map(encode_cursor);
    }
    Ok(SessionPage { response, warnings })
}

/// Larger keys come first: newest, then smaller directory, then smaller id (both inverted).
fn order_key(
    summary: &SessionSummary,
) -> (Timestamp, std::cmp::Reverse<&str>, std::cmp::Reverse<&str>) {
    (
        summary.updated_at,
        std::cmp::Reverse(summary.cwd.to_str().unwrap_or("")),
        std::cmp::Reverse(summary.session_id.as_str()),
    )
}

fn session_info(summary: &SessionSummary) -> SessionInfo {
    let mut info = SessionInfo::default();
    info.session_id = summary.session_id.clone();
    info.cwd = summary.cwd.to_string_lossy().into_owned();
    info.title = (!summary.title.is_empty()).then(|| summary.title.clone());
    info.updated_at = summary.updated_at_text.clone();
    info
}

/// A decoded cursor: the position of the last session of the previous page.
struct Cursor {
    updated_at: Timestamp,
    cwd: String,
    session_id: String,
}

impl Cursor {
    fn as_key(&self) -> (Timestamp, std::cmp::Reverse<&str>, std::cmp::Reverse<&str>) {
        (
            self.updated_at,
            std::cmp::Reverse(self.cwd.as_str()),
            std::cmp::Reverse(self.session_id.as_str()),
        )
    }
}

/// `<micros>.<hex cwd>.<hex id>`: opaque to clients, exact for us.
fn encode_cursor(summary: &SessionSummary) -> String {
    format!(
        "{}.{}.{}",
        summary.updated_at.0,
        hex(summary.cwd.to_str().unwrap_or("")),
        hex(&summary.session_id)
    )
}

fn decode_cursor(text: &str) -> Result<Cursor, StoreError> {
    let invalid = || StoreError::InvalidCursor {
        cursor: text.to_owned(),
    };
    let mut parts = text.split('.');
    let (Some(micros), Some(cwd), Some(id), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid());
    };
    Ok(Cursor {
        updated_at: Timestamp(micros.parse().map_err(|_| invalid())?),
        cwd: unhex(cwd).ok_or_else(invalid)?,
        session_id: unhex(id).ok_or_else(invalid)?,
    })
}

fn hex(text: &str) -> String {
    text.bytes().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<String> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}
