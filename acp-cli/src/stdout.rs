//! Writing to stdout when its reader may be gone (`acp-cli demo | head`).
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe fails with `BrokenPipe`, and `print!`
//! turns that into a panic. Every command writes through [`print()`] instead: the first failed
//! write is recorded, later writes are skipped, and the command sees `false` and winds down
//! the way it would at its normal end (agents stopped, scratch removed). `main` then passes
//! the command's status through [`exit_code`], so every command ends the same way:
//!
//! - the reader went away (`BrokenPipe`): quietly, with [`CLOSED_STDOUT_STATUS`] (0: the
//!   reader chose to stop reading, which is not our failure, and `set -o pipefail` scripts
//!   around `| head` keep working);
//! - any other failure (a full disk): one line on stderr, `acp-cli: cannot write to stdout:
//!   <error>`, and status 1.
//!
//! The agent (`acp-cli --acp --stdio`) writes its protocol bytes itself and reports a failed
//! write through [`note_error`].

use std::fmt;
use std::io::{self, Write as _};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, Ordering};

/// The exit status of any command whose stdout reader went away.
pub(crate) const CLOSED_STDOUT_STATUS: u8 = 0;

/// The exit status after any other failed write to stdout.
pub(crate) const FAILED_STDOUT_STATUS: u8 = 1;

const OPEN: u8 = 0;
const CLOSED: u8 = 1;
const FAILED: u8 = 2;

/// What became of stdout; only ever leaves `OPEN` once.
static STATE: AtomicU8 = AtomicU8::new(OPEN);

/// Writes `args` to stdout and flushes. `false` if stdout is unusable, now or before (then
/// nothing is written).
pub fn print(args: fmt::Arguments<'_>) -> bool {
    if !is_open() {
        return false;
    }
    let mut stdout = io::stdout().lock();
    match stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        Ok(()) => true,
        Err(error) => {
            note_error(&error);
            false
        }
    }
}

/// Records a failed write to stdout (the first one counts); any failure but `BrokenPipe` is
/// reported on stderr.
pub(crate) fn note_error(error: &io::Error) {
    let state = if error.kind() == io::ErrorKind::BrokenPipe {
        CLOSED
    } else {
        FAILED
    };
    let first = STATE
        .compare_exchange(OPEN, state, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok();
    if first && state == FAILED {
        // Not `eprintln!`: a closed stderr must not panic either.
        let _ = writeln!(io::stderr(), "acp-cli: cannot write to stdout: {error}");
    }
}

/// Whether stdout still takes writes (no write to it has failed).
pub(crate) fn is_open() -> bool {
    STATE.load(Ordering::SeqCst) == OPEN
}

/// The process's exit code: `status`, unless a write to stdout failed (see the module docs).
pub fn exit_code(status: ExitCode) -> ExitCode {
    match STATE.load(Ordering::SeqCst) {
        OPEN => status,
        CLOSED => ExitCode::from(CLOSED_STDOUT_STATUS),
        _ => ExitCode::from(FAILED_STDOUT_STATUS),
    }
}
