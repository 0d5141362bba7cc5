//! Logs of the agent: `tracing` to stderr, and to `acp-cli.log` in the first session's cwd
//! once there is one (R-PROC-1). Never to stdout, which carries protocol bytes only.
//!
//! What is logged is metadata: methods, session ids, cwd, sizes, decisions. Prompt text,
//! file contents and `session/new` params (whose MCP `env` may hold secrets) are not.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// The name of the log file in the session cwd.
pub(crate) const LOG_FILE: &str = "acp-cli.log";

/// Log bytes kept from before the log file opens (startup, handshake, the `session/new`
/// that names the cwd), written to the file first so it tells the whole story. Bounded: past
/// this, early lines go to stderr only.
pub(crate) const EARLY_LOG_MAX: usize = 64 * 1024;

/// Where log lines go: stderr always, and the log file once opened.
#[derive(Clone, Debug, Default)]
pub struct LogSink {
    file: Arc<Mutex<Target>>,
}

/// The file, or the early lines while there is none yet.
#[derive(Debug, Default)]
enum Target {
    #[default]
    Waiting,
    Early(Vec<u8>),
    File(File),
    /// Opening failed: stderr only.
    Unavailable,
}

impl LogSink {
    /// Starts appending to `<cwd>/acp-cli.log` (if no file is open yet). A failure is
    /// reported on stderr only: logging never stops the agent.
    pub(crate) fn open_in(&self, cwd: &str) {
        let mut slot = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(*slot, Target::File(_) | Target::Unavailable) {
            return;
        }
        let path = Path::new(cwd).join(LOG_FILE);
        match OpenOptions::new().create(true).append(true).open(&path) {
            Ok(mut file) => {
                if let Target::Early(early) = &*slot {
                    let _ = file.write_all(early);
                }
                *slot = Target::File(file);
            }
            Err(error) => {
                *slot = Target::Unavailable;
                let _ = writeln!(
                    io::stderr(),
                    "acp-cli: cannot open the log file {}: {error}",
                    path.display()
                );
            }
        }
    }
}

/// One log record's writer (see [`LogSink`]).
#[derive(Debug)]
pub struct LogWriter {
    file: Arc<Mutex<Target>>,
}

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let _ = io::stderr().write_all(buf);
        let mut slot = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut *slot {
            Target::File(file) => {
                let _ = file.write_all(buf);
            }
            Target::Waiting => *slot = Target::Early(buf.to_vec()),
            Target::Early(early) if early.len() + buf.len() <= EARLY_LOG_MAX => {
                early.extend_from_slice(buf);
            }
            Target::Early(_) | Target::Unavailable => {}
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LogSink {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> LogWriter {
        LogWriter {
            file: Arc::clone(&self.file),
        }
    }
}

/// The filter: `--log-level` when given (a level or any `RUST_LOG`-style directive), else
/// `RUST_LOG`, else `info`.
pub fn filter(log_level: Option<&str>) -> Result<EnvFilter, String> {
    match log_level {
        Some(level) => {
            EnvFilter::try_new(level).map_err(|e| format!("invalid --log-level '{level}': {e}"))
        }
        None => Ok(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"))),
    }
}

/// Installs the global subscriber. Returns the sink, to open the log file later.
pub fn init(filter: EnvFilter) -> LogSink {
    let sink = LogSink::default();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(sink.clone())
        .with_ansi(false)
        .try_init();
    sink
}
