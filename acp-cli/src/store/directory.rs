//! One project's session directory, `<cwd>/.agentao/sessions/`: atomic saves, exact lookups,
//! the cap on kept sessions, deletion.
//!
//! # Files
//!
//! Agentao writes a new file on every save, named `YYYYMMDD_HHMMSS_ffffff.json` (local time
//! of the save), so one session ends up in many files. This store writes **one file per
//! session**, named `<created>_<id>.json`: `<created>` is the session's creation time in
//! Agentao's stamp format (UTC here), so our files sort among Agentao's by time, and `<id>` is
//! the session id with every byte outside `[A-Za-z0-9_-]` written as `%XX` (ids longer than
//! 100 such characters are cut and end in a hash of the whole id). Each save replaces that
//! file atomically.
//!
//! Lookups never trust names: every `*.json` file is read and matched on its `session_id`,
//! so Agentao's files are found too. When several files hold one session (Agentao's copies,
//! ours), the newest `updated_at` wins (ties: the later file name). After we save a session,
//! its other copies are removed, so it is back to one file.
//!
//! # Crash safety
//!
//! A save writes `.<name>.<pid>.<n>.tmp` in the same directory, fsyncs it, renames it over
//! `<name>` and fsyncs the directory. A crash leaves either the old file or the new one, plus
//! perhaps a temporary file: temporary files are never read as sessions (they do not end in
//! `.json`), and those of processes that no longer exist are removed by the next scan.
//!
//! # Concurrency
//!
//! Sessions never share a file, so two sessions (in one process or two) never overwrite each
//! other. Temporary names carry the process id and a per-process counter, so concurrent saves
//! never share a temporary file either.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::agentao::{SessionFile, SessionHeader, write_file};
use super::error::{StoreError, StoreWarning};
use super::history::SessionHistory;
use super::time::Timestamp;

/// Where sessions live, relative to the session's working directory (Agentao's place).
pub const SESSIONS_DIR: &str = ".agentao/sessions";
/// Sessions kept per directory unless configured otherwise.
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 20;
/// Most directory entries one scan looks at; the rest are reported and left alone.
pub(crate) const MAX_SCANNED_ENTRIES: usize = 10_000;
/// Larger files are not read (reported as skipped).
pub(crate) const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

const MAX_ID_IN_NAME: usize = 100;
const TEMP_SUFFIX: &str = ".tmp";

/// How a store behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreConfig {
    /// How many sessions to keep; after each save the ones least recently updated beyond this
    /// are removed (the one just saved is always kept).
    pub max_sessions: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            max_sessions: DEFAULT_MAX_SESSIONS,
        }
    }
}

/// What decides whether a session is kept under the cap (R-STORE-6), greatest first: whether
/// it has history, then its newest file's recency.
type Keep<'a> = (bool, (Timestamp, &'a Path));

/// The sessions of one working directory.
#[derive(Clone, Debug)]
pub struct SessionStore {
    cwd: PathBuf,
    dir: PathBuf,
    config: StoreConfig,
}

/// A session read back.
#[derive(Debug)]
pub struct Loaded {
    /// Its finished turns and settings.
    pub history: SessionHistory,
    /// The file it came from.
    pub path: PathBuf,
    /// Files passed over on the way.
    pub warnings: Vec<StoreWarning>,
}

/// What a save did.
#[derive(Debug, Default)]
pub struct Saved {
    /// The file written (`None` only from a [`Saved::default`]).
    pub path: Option<PathBuf>,
    /// Files removed: older copies of this session, sessions beyond the cap, temporary files
    /// of dead processes.
    pub removed: Vec<PathBuf>,
    /// Files passed over.
    pub warnings: Vec<StoreWarning>,
}

/// What a delete did.
#[derive(Debug)]
pub struct Deleted {
    /// Every file that held the session.
    pub removed: Vec<PathBuf>,
    /// Files passed over.
    pub warnings: Vec<StoreWarning>,
}

/// One stored session, as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSummary {
    /// Its id.
    pub session_id: String,
    /// Its title (may be empty).
    pub title: String,
    /// The directory whose store holds it.
    pub cwd: PathBuf,
    /// Its last save (the epoch when the file has no readable `updated_at`).
    pub updated_at: Timestamp,
    /// `updated_at` as written in the file.
    pub updated_at_text: Option<String>,
    /// Its file.
    pub path: PathBuf,
}

/// Every session file of a directory, read.
struct Scan {
    entries: Vec<Entry>,
    warnings: Vec<StoreWarning>,
    removed: Vec<PathBuf>,
}

struct Entry {
    path: PathBuf,
    header: SessionHeader,
}

impl Entry {
    /// Newest first means the largest key: `updated_at`, then the file name.
    fn recency(&self) -> (Timestamp, &Path) {
        (
            self.header.updated_at.unwrap_or(Timestamp(i64::MIN)),
            &self.path,
        )
    }
}

impl SessionStore {
    /// The store of `cwd` (nothing is read or created until used).
    pub fn new(cwd: impl Into<PathBuf>, config: StoreConfig) -> Self {
        let cwd = cwd.into();
        let dir = cwd.join(SESSIONS_DIR);
        Self { cwd, dir, config }
    }

    /// The file name this store gives a session: `<created stamp>_<escaped id>.json`.
    pub fn file_name_for(session_id: &str, created_at: Timestamp) -> String {
        format!("{}_{}.json", created_at.file_stamp(), escape_id(session_id))
    }

    /// Saves the history's finished turns, replacing this session's file atomically; then
    /// removes the session's other copies and the sessions beyond the cap. The first save
    /// stamps the history's creation time. A history without a finished turn is saved too
    /// (its header and no messages): a session exists from its creation on (R-SESSION-11).
    pub fn save(&self, history: &mut SessionHistory, now: Timestamp) -> Result<Saved, StoreError> {
        let created_at = history.created_at().unwrap_or(now);
        // Only `.agentao/sessions` is created: a working directory that is gone stays gone.
        if !self.cwd.is_dir() {
            let missing = io::Error::new(io::ErrorKind::NotFound, "not a directory");
            return Err(io_error("save into", &self.cwd, missing));
        }
        fs::create_dir_all(&self.dir).map_err(|source| io_error("create", &self.dir, source))?;
        let path = self
            .dir
            .join(Self::file_name_for(history.session_id(), created_at));
        write_atomically(&self.dir, &path, |out| {
            write_file(out, history, created_at, now)
        })?;
        history.created_at = Some(created_at);
        // What was just written need not be read back (it may be large).
        let written = SessionHeader {
            session_id: history.session_id().to_owned(),
            title: history.title(),
            created_at: Some(created_at),
            updated_at: Some(now),
            updated_at_text: Some(now.to_iso()),
            empty: history.turn_count() == 0,
        };

        // The session is safe on disk now; housekeeping that fails is only worth a warning.
        let scan = match self.scan_knowing(Some((&path, written))) {
            Ok(scan) => scan,
            Err(err) => {
                return Ok(Saved {
                    path: Some(path),
                    removed: Vec::new(),
                    warnings: vec![StoreWarning {
                        path: self.dir.clone(),
                        reason: format!("not tidied after saving: {err}"),
                    }],
                });
            }
        };
        let mut saved = Saved {
            path: Some(path.clone()),
            removed: scan.removed,
            warnings: scan.warnings,
        };
        let empty = history.turn_count() == 0;
        let doomed = self.doomed_by_save(&scan.entries, history.session_id(), &path, empty);
        for victim in doomed {
            match fs::remove_file(&victim) {
                Ok(()) => saved.removed.push(victim),
                // Another process removed it first: the outcome we wanted.
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(err) => saved.warnings.push(StoreWarning {
                    path: victim,
                    reason: format!("could not remove: {err}"),
                }),
            }
        }
        Ok(saved)
    }

    /// Files to remove after saving `session_id` (`empty`: without messages) to `kept`: its
    /// other copies, and every file of the sessions beyond the cap (R-STORE-6): sessions
    /// without messages go first, then the least recently updated; a session saved without
    /// messages removes only other sessions without messages.
    fn doomed_by_save(
        &self,
        entries: &[Entry],
        session_id: &str,
        kept: &Path,
        empty: bool,
    ) -> Vec<PathBuf> {
        let mut doomed: Vec<PathBuf> = entries
            .iter()
            .filter(|entry| entry.header.session_id == session_id && entry.path != kept)
            .map(|entry| entry.path.clone())
            .collect();
        // Per session: whether it has history (in any of its files), and its newest file.
        let mut newest: BTreeMap<&str, Keep<'_>> = BTreeMap::new();
        for entry in entries
            .iter()
            .filter(|entry| entry.header.session_id != session_id)
        {
            let slot = newest
                .entry(&entry.header.session_id)
                .or_insert((false, entry.recency()));
            slot.0 |= !entry.header.empty;
            slot.1 = slot.1.max(entry.recency());
        }
        let mut others: Vec<(&str, Keep<'_>)> = newest.into_iter().collect();
        // Kept first: sessions with history, then the most recently updated.
        others.sort_by(|a, b| b.1.cmp(&a.1));
        // The session just saved always counts as one of the kept ones. One without messages
        // makes room only among the others without messages.
        let mut keep_others = self.config.max_sessions.saturating_sub(1);
        if empty {
            let with_history = others.iter().filter(|(_, (history, _))| *history).count();
            keep_others = keep_others.max(with_history);
        }
        for (id, _) in others.iter().skip(keep_others) {
            doomed.extend(
                entries
                    .iter()
                    .filter(|entry| entry.header.session_id == *id)
                    .map(|entry| entry.path.clone()),
            );
        }
        doomed
    }

    /// The session with exactly this id (a prefix does not match), newest copy.
    pub fn load(&self, session_id: &str) -> Result<Loaded, StoreError> {
        let scan = self.scan()?;
        if scan.entries.is_empty() {
            return Err(StoreError::NoSavedSessions);
        }
        let copies = scan
            .entries
            .into_iter()
            .filter(|entry| entry.header.session_id == session_id);
        load_newest(copies, scan.warnings).ok_or_else(|| StoreError::NotFound {
            session_id: session_id.to_owned(),
        })
    }

    /// The most recently updated session (`--resume` without an id).
    pub fn load_latest(&self) -> Result<Loaded, StoreError> {
        let scan = self.scan()?;
        load_newest(scan.entries.into_iter(), scan.warnings).ok_or(StoreError::NoSavedSessions)
    }

    /// Every session here, one summary each (its newest copy), most recently updated first
    /// (ties by id). No directory means no sessions.
    pub fn list(&self) -> Result<(Vec<SessionSummary>, Vec<StoreWarning>), StoreError> {
        let scan = match self.scan() {
            Ok(scan) => scan,
            Err(StoreError::NoSessionsDirectory) => return Ok((Vec::new(), Vec::new())),
            Err(err) => return Err(err),
        };
        let mut newest: BTreeMap<String, Entry> = BTreeMap::new();
        for entry in scan.entries {
            match newest.get(&entry.header.session_id) {
                Some(known) if known.recency() >= entry.recency() => {}
                _ => {
                    newest.insert(entry.header.session_id.clone(), entry);
                }
            }
        }
        let mut summaries: Vec<SessionSummary> = newest
            .into_values()
            .map(|entry| SessionSummary {
                updated_at: entry.recency().0,
                session_id: entry.header.session_id,
                title: entry.header.title,
                cwd: self.cwd.clone(),
                updated_at_text: entry.header.updated_at_text,
                path: entry.path,
            })
            .collect();
        summaries.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| a.session_id.cmp(&b.session_id))
        });
        Ok((summaries, scan.warnings))
    }

    /// Removes every file holding exactly this session.
    pub fn delete(&self, session_id: &str) -> Result<Deleted, StoreError> {
        let scan = self.scan()?;
        let mut deleted = Deleted {
            removed: Vec::new(),
            warnings: scan.warnings,
        };
        for entry in scan
            .entries
            .into_iter()
            .filter(|entry| entry.header.session_id == session_id)
        {
            match fs::remove_file(&entry.path) {
                Ok(()) => deleted.removed.push(entry.path),
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(source) => return Err(io_error("remove", &entry.path, source)),
            }
        }
        if deleted.removed.is_empty() {
            return Err(StoreError::NotFound {
                session_id: session_id.to_owned(),
            });
        }
        Ok(deleted)
    }

    /// Reads every `*.json` file (sorted by name, so results do not depend on the directory's
    /// order), skipping what is not a session, and removes dead processes' temporary files.
    fn scan(&self) -> Result<Scan, StoreError> {
        self.scan_knowing(None)
    }

    /// [`SessionStore::scan`], taking the header of the file at `known.0` as given rather than
    /// reading it.
    fn scan_knowing(&self, known: Option<(&Path, SessionHeader)>) -> Result<Scan, StoreError> {
        let mut known = known;
        let reader = match fs::read_dir(&self.dir) {
            Ok(reader) => reader,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::NoSessionsDirectory);
            }
            Err(source) => return Err(io_error("read", &self.dir, source)),
        };
        let mut scan = Scan {
            entries: Vec::new(),
            warnings: Vec::new(),
            removed: Vec::new(),
        };
        let mut names = Vec::new();
        for (count, item) in reader.enumerate() {
            if count == MAX_SCANNED_ENTRIES {
                scan.warnings.push(StoreWarning {
                    path: self.dir.clone(),
                    reason: format!(
                        "more than {MAX_SCANNED_ENTRIES} entries; the rest were not read"
                    ),
                });
                break;
            }
            let Ok(item) = item else { continue };
            names.push(item.file_name());
        }
        names.sort();
        for name in names {
            let Some(name) = name.to_str() else { continue };
            let path = self.dir.join(name);
            if let Some(pid) = temp_file_owner(name) {
                if !process_exists(pid) && fs::remove_file(&path).is_ok() {
                    scan.removed.push(path);
                }
                continue;
            }
            if !name.ends_with(".json") {
                continue;
            }
            if known.as_ref().is_some_and(|(known, _)| *known == path)
                && let Some((_, header)) = known.take()
            {
                scan.entries.push(Entry { path, header });
                continue;
            }
            match read_header(&path) {
                Ok(Some(header)) => scan.entries.push(Entry { path, header }),
                Ok(None) => {}
                Err(reason) => scan.warnings.push(StoreWarning {
                    path,
                    reason: format!("skipped: {reason}"),
                }),
            }
        }
        Ok(scan)
    }
}

/// Reads the newest of `candidates` in full. A file that changed since the scan and no longer
/// reads (or now holds another session) is passed over with a warning for the next newest.
fn load_newest(
    candidates: impl Iterator<Item = Entry>,
    mut warnings: Vec<StoreWarning>,
) -> Option<Loaded> {
    let mut candidates: Vec<Entry> = candidates.collect();
    candidates.sort_by(|a, b| b.recency().cmp(&a.recency()));
    for entry in candidates {
        let file = match read_parsed(&entry.path, SessionFile::parse) {
            Ok(Some(file)) if file.header.session_id == entry.header.session_id => file,
            Err(reason) => {
                warnings.push(StoreWarning {
                    path: entry.path,
                    reason: format!("skipped: {reason}"),
                });
                continue;
            }
            _ => continue,
        };
        let (history, note) = file.into_history();
        if let Some(reason) = note {
            warnings.push(StoreWarning {
                path: entry.path.clone(),
                reason: format!("read from `messages` only: {reason}"),
            });
        }
        return Some(Loaded {
            history,
            path: entry.path,
            warnings,
        });
    }
    None
}

/// A session file opened for reading: `Ok(None)` for something that is not a regular file (a
/// directory named `x.json`, a file removed meanwhile); `Err` with the reason it cannot be
/// used (too large included).
fn open_session_file(path: &Path) -> Result<Option<File>, String> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot open ({err})")),
    };
    let metadata = file
        .metadata()
        .map_err(|err| format!("cannot stat ({err})"))?;
    if !metadata.is_file() {
        return Ok(None);
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
    }
    Ok(Some(file))
}

/// A file read whole and parsed (see [`open_session_file`] for `Ok(None)` and `Err`).
fn read_parsed<T>(path: &Path, parse: fn(&[u8]) -> Result<T, String>) -> Result<Option<T>, String> {
    let Some(mut file) = open_session_file(path)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|err| format!("cannot read ({err})"))?;
    parse(&bytes).map(Some)
}

/// A file's header, read as the file streams by: a scan holds no whole file in memory (the
/// one just saved included).
fn read_header(path: &Path) -> Result<Option<SessionHeader>, String> {
    let Some(file) = open_session_file(path)? else {
        return Ok(None);
    };
    SessionHeader::read(BufReader::with_capacity(READ_BUFFER, file)).map(Some)
}

/// How much of a session file a scan reads at once.
const READ_BUFFER: usize = 64 * 1024;

/// How much of a session file is written to the temporary file at once.
const WRITE_BUFFER: usize = 64 * 1024;

/// Writes what `write` produces to `path` so that readers see the old content or the new,
/// never a mix. The content is streamed into a temporary file next to `path` (through a
/// small buffer, never whole in memory), which is fsynced and renamed over `path`; if
/// `write` or the disk fails, the temporary file is removed and `path` is untouched.
fn write_atomically(
    dir: &Path,
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), StoreError> {
    static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("session.json");
    let temp = dir.join(format!(
        ".{name}.{}.{}{TEMP_SUFFIX}",
        std::process::id(),
        NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        let mut out = BufWriter::with_capacity(WRITE_BUFFER, file);
        write(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, path)
    })();
    if let Err(source) = written {
        let _ = fs::remove_file(&temp);
        return Err(io_error("write", path, source));
    }
    // Makes the rename itself durable. Some file systems cannot sync a directory; the file
    // is already complete either way, so that is not an error.
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
    Ok(())
}

/// The process id in a temporary file's name `.<name>.<pid>.<n>.tmp`.
fn temp_file_owner(name: &str) -> Option<i32> {
    let inner = name.strip_prefix('.')?.strip_suffix(TEMP_SUFFIX)?;
    let mut parts = inner.rsplitn(3, '.');
    let _counter: u64 = parts.next()?.parse().ok()?;
    let pid = parts.next()?.parse().ok()?;
    parts.next()?;
    Some(pid)
}

/// Whether a process with this id exists (one we may not signal counts as existing).
fn process_exists(pid: i32) -> bool {
    if u32::try_from(pid) == Ok(std::process::id()) {
        return true;
    }
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// The id as a file-name part: `[A-Za-z0-9_-]` kept, other bytes as `%XX`; long ids cut
/// and made unique again with a hash of the whole id.
fn escape_id(id: &str) -> String {
    let mut escaped = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-' {
            escaped.push(char::from(byte));
        } else {
            escaped.push_str(&format!("%{byte:02X}"));
        }
    }
    if escaped.len() > MAX_ID_IN_NAME {
        // Only ASCII was pushed, so any byte index is a char boundary.
        escaped.truncate(MAX_ID_IN_NAME);
        escaped.push_str(&format!("-{:016x}", fnv1a(id.as_bytes())));
    }
    escaped
}

/// 64-bit FNV-1a: a stable hash (std's hasher may change between releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn io_error(action: &'static str, path: &Path, source: io::Error) -> StoreError {
    StoreError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(test: &str) -> Self {
            let path =
                std::env::temp_dir().join(format!("acp-store-unit-{}-{test}", std::process::id()));
            let _ = fs::remove_dir_all(&path);
            fs::create_dir_all(&path).unwrap();
            Self(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_write_that_fails_half_way_leaves_the_old_file_and_no_temporary_file() {
        let scratch = Scratch::new("write-fails");
        let path = scratch.0.join("s.json");
        write_atomically(&scratch.0, &path, |out| out.write_all(b"old")).unwrap();

        // More than the write buffer goes out before the failure, so part of the new content
        // has reached the temporary file when it fails (as when the disk fills up).
        let failed = write_atomically(&scratch.0, &path, |out| {
            out.write_all(&vec![b'x'; 3 * WRITE_BUFFER])?;
            Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"))
        })
        .unwrap_err();

        assert_eq!(
            failed.to_string(),
            format!("cannot write {}: disk full", path.display())
        );
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(names(&scratch.0), ["s.json"]);
    }

    #[test]
    fn a_complete_write_replaces_the_file_and_leaves_no_temporary_file() {
        let scratch = Scratch::new("write-ok");
        let path = scratch.0.join("s.json");
        write_atomically(&scratch.0, &path, |out| out.write_all(b"old")).unwrap();
        let long = vec![b'y'; 3 * WRITE_BUFFER + 5];
        write_atomically(&scratch.0, &path, |out| out.write_all(&long)).unwrap();
        assert_eq!(fs::read(&path).unwrap(), long);
        assert_eq!(names(&scratch.0), ["s.json"]);
    }
}
