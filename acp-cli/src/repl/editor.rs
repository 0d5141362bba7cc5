//! The REPL's keyboard at a terminal: line editing, history and Tab completion for the
//! prompt (rustyline), plain reads for everything else (a line typed during a turn, an
//! input answer, the single key of a permission prompt).
//!
//! One thread owns stdin and does one thing at a time on request, so the line editor and
//! the plain reads never race for the same bytes: `Edit` runs the line editor (which puts
//! the terminal in its own raw mode and gives it back), `Read` waits for stdin to be
//! readable and reads once. A `Read` can be called off (a self-pipe wakes the wait) when
//! the REPL goes back to its prompt; an `Edit` cannot, so while one runs every other
//! wish waits for its line, which is then handled as typed.
//!
//! History is kept per project in `.agentao/repl_history` (the directory the REPL reads
//! `.agentao/acp.json` from), only for lines typed at the prompt.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Config, Context, Editor, ExternalPrinter, Helper};

use super::slash;
use crate::client::terminal::TypedBytes;

/// Bytes read from stdin at most per plain read.
const READ_CHUNK: usize = 4096;
/// History entries kept.
const HISTORY_LINES: usize = 1000;

/// Where the REPL keeps a project's history, relative to the project's directory.
pub(crate) const HISTORY_FILE: &str = ".agentao/repl_history";

/// What the person typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Typed {
    /// A whole line, without its line ending.
    Line(String),
    /// What one read gave while single keys were wanted.
    Key(Vec<u8>),
    /// Ctrl-C at the prompt (elsewhere Ctrl-C is a signal).
    Interrupt,
    /// Ctrl-D at the prompt, or the end of stdin.
    End,
}

enum Request {
    Edit(String),
    Read,
}

enum Reply {
    Line(String),
    Interrupted,
    End,
    Bytes(Vec<u8>),
    Cancelled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outstanding {
    Edit,
    Read { cancelled: bool },
}

/// See the module docs.
pub(crate) struct Keyboard {
    requests: mpsc::Sender<Request>,
    replies: smol::channel::Receiver<Reply>,
    /// Written to call off a `Read`.
    cancel: OwnedFd,
    /// Its other end (non-blocking), drained once a called-off `Read` has answered.
    cancel_end: Arc<OwnedFd>,
    outstanding: Option<Outstanding>,
    /// Read and not yet handed out.
    pending: TypedBytes,
    ended: bool,
    /// The main agent's command names, for Tab.
    agent_commands: Arc<Mutex<Vec<String>>>,
    printer: Option<Box<dyn ExternalPrinter + Send>>,
}

impl std::fmt::Debug for Keyboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyboard")
            .field("outstanding", &self.outstanding)
            .field("pending", &self.pending)
            .field("ended", &self.ended)
            .finish()
    }
}

impl Keyboard {
    /// Starts the keyboard thread, with the history of the project in `root`; `None` when
    /// the line editor cannot work here (then read stdin as from a pipe).
    pub(crate) fn start(root: &Path) -> Option<Keyboard> {
        let (cancel_end, cancel) = rustix::pipe::pipe_with(
            rustix::pipe::PipeFlags::NONBLOCK | rustix::pipe::PipeFlags::CLOEXEC,
        )
        .map_err(|e| tracing::warn!("no line editor (pipe: {e})"))
        .ok()?;
        let cancel_end = Arc::new(cancel_end);
        let agent_commands = Arc::new(Mutex::new(Vec::new()));
        let config = Config::builder()
            .max_history_size(HISTORY_LINES)
            .ok()?
            .history_ignore_dups(true)
            .ok()?
            .history_ignore_space(true)
            .auto_add_history(false)
            // Plain prompt output, as before the line editor: no mode switches echoed.
            .bracketed_paste(false)
            .build();
        let mut editor: Editor<SlashHelper, DefaultHistory> = Editor::with_config(config)
            .map_err(|e| tracing::warn!("no line editor: {e}"))
            .ok()?;
        editor.set_helper(Some(SlashHelper {
            agent_commands: agent_commands.clone(),
        }));
        let history = root.join(HISTORY_FILE);
        // A first run has no history yet.
        let _ = editor.load_history(&history);
        let printer = editor
            .create_external_printer()
            .ok()
            .map(|p| Box::new(p) as Box<dyn ExternalPrinter + Send>);
        let (requests, inbox) = mpsc::channel();
        let (outbox, replies) = smol::channel::unbounded();
        let wake = cancel_end.clone();
        std::thread::spawn(move || serve(editor, history, inbox, outbox, wake));
        Some(Keyboard {
            requests,
            replies,
            cancel,
            cancel_end,
            outstanding: None,
            pending: TypedBytes::default(),
            ended: false,
            agent_commands,
            printer,
        })
    }

    /// The main agent's commands, for Tab from now on.
    pub(crate) fn set_agent_commands(&self, names: Vec<String>) {
        if let Ok(mut commands) = self.agent_commands.lock() {
            *commands = names;
        }
    }

    /// Whether the line editor is on screen (output then goes through [`Keyboard::print`]).
    pub(crate) fn editing(&self) -> bool {
        self.outstanding == Some(Outstanding::Edit)
    }

    /// Prints `text` (ending in a newline) above the line being edited, which is drawn
    /// again below it; `false` when it could not (print it directly).
    pub(crate) fn print(&mut self, text: String) -> bool {
        match self.printer.as_mut() {
            Some(printer) => printer.print(text).is_ok(),
            None => false,
        }
    }

    /// A line typed at the prompt, edited with history and Tab. A line already typed
    /// ahead (during a turn) comes first.
    pub(crate) async fn edit(&mut self, prompt: &str) -> Typed {
        if let Some(Outstanding::Read { .. }) = self.outstanding {
            self.call_off_read().await;
        }
        if let Some(line) = self.take_line() {
            return Typed::Line(line);
        }
        // Keys pressed with no meaning (raw mode) are not a line.
        self.pending.clear();
        if self.ended {
            return Typed::End;
        }
        if self.outstanding.is_none() {
            self.send(Request::Edit(prompt.to_owned()), Outstanding::Edit);
        }
        self.answer().await
    }

    /// A line read as typed (the terminal's own line discipline).
    pub(crate) async fn line(&mut self) -> Typed {
        // Each pass hands out a line or waits for one more read; stdin is finite or
        // the wait goes on while nothing is typed.
        loop {
            if self.outstanding == Some(Outstanding::Edit) {
                return self.answer().await;
            }
            if let Some(line) = self.take_line() {
                return Typed::Line(line);
            }
            if self.ended {
                return self.pending.take_last().map_or(Typed::End, Typed::Line);
            }
            if let Some(typed) = self.read().await {
                return typed;
            }
        }
    }

    /// The next key (call while the terminal is in single-key mode).
    pub(crate) async fn key(&mut self) -> Typed {
        if self.outstanding == Some(Outstanding::Edit) {
            return self.answer().await;
        }
        if self.pending.is_empty()
            && !self.ended
            && let Some(typed) = self.read().await
        {
            return typed;
        }
        if self.pending.is_empty() {
            return Typed::End;
        }
        Typed::Key(self.pending.take_all())
    }

    /// One plain read into `pending`; `Some` when the reply was not bytes.
    async fn read(&mut self) -> Option<Typed> {
        if self.outstanding.is_none() {
            self.send(Request::Read, Outstanding::Read { cancelled: false });
        }
        match self.answer().await {
            // Bytes (now in `pending`), a called-off read, or the end (now `ended`).
            Typed::End => None,
            other => Some(other),
        }
    }

    fn send(&mut self, request: Request, outstanding: Outstanding) {
        if self.requests.send(request).is_ok() {
            self.outstanding = Some(outstanding);
        } else {
            self.ended = true;
        }
    }

    /// Waits for the reply to the outstanding request. Bytes go to `pending` (`End` is
    /// returned for them and for a called-off read: look at `pending` and `ended`).
    async fn answer(&mut self) -> Typed {
        let reply = self.replies.recv().await;
        let was = self.outstanding.take();
        if let Some(Outstanding::Read { cancelled: true }) = was {
            self.drain_cancel();
        }
        match reply {
            Ok(Reply::Line(line)) => Typed::Line(line),
            Ok(Reply::Interrupted) => Typed::Interrupt,
            Ok(Reply::Bytes(bytes)) => {
                self.pending.push(bytes);
                Typed::End
            }
            Ok(Reply::Cancelled) => Typed::End,
            Ok(Reply::End) | Err(_) => {
                self.ended = true;
                Typed::End
            }
        }
    }

    async fn call_off_read(&mut self) {
        if let Some(Outstanding::Read { cancelled: false }) = self.outstanding {
            // A full pipe already holds a wake-up.
            let _ = rustix::io::write(&self.cancel, b"x");
            self.outstanding = Some(Outstanding::Read { cancelled: true });
        }
        self.answer().await;
    }

    /// Empties the self-pipe once nothing waits on it (a wake-up that raced a read).
    fn drain_cancel(&self) {
        let mut buf = [0u8; 64];
        while let Ok(1..) = rustix::io::read(self.cancel_end.as_fd(), &mut buf) {}
    }

    fn take_line(&mut self) -> Option<String> {
        self.pending.take_line()
    }
}

/// The keyboard thread: one request at a time until the REPL drops its end.
fn serve(
    mut editor: Editor<SlashHelper, DefaultHistory>,
    history: PathBuf,
    requests: mpsc::Receiver<Request>,
    replies: smol::channel::Sender<Reply>,
    wake: Arc<OwnedFd>,
) {
    while let Ok(request) = requests.recv() {
        let reply = match request {
            Request::Edit(prompt) => match editor.readline(&prompt) {
                Ok(line) => {
                    remember(&mut editor, &history, &line);
                    Reply::Line(line)
                }
                Err(ReadlineError::Interrupted) => Reply::Interrupted,
                Err(ReadlineError::Eof) => Reply::End,
                Err(e) => {
                    tracing::warn!("line editor: {e}");
                    Reply::End
                }
            },
            Request::Read => read_once(&wake),
        };
        if replies.send_blocking(reply).is_err() {
            return;
        }
    }
}

/// Adds `line` to the history and appends it to the project's history file (creating
/// `.agentao/` when needed).
fn remember(editor: &mut Editor<SlashHelper, DefaultHistory>, history: &Path, line: &str) {
    if line.trim().is_empty() || !matches!(editor.add_history_entry(line), Ok(true)) {
        return;
    }
    if let Some(dir) = history.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = editor.append_history(history) {
        tracing::debug!("cannot save the REPL history to {}: {e}", history.display());
    }
}

/// Waits until stdin is readable or `wake` is written; reads once.
fn read_once(wake: &OwnedFd) -> Reply {
    use rustix::event::{PollFd, PollFlags, poll};
    let stdin = std::io::stdin();
    loop {
        let mut fds = [
            PollFd::new(&stdin, PollFlags::IN),
            PollFd::new(wake, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                tracing::warn!("cannot wait for stdin: {e}");
                return Reply::End;
            }
        }
        let stdin_ready = !fds[0].revents().is_empty();
        let woken = !fds[1].revents().is_empty();
        if !stdin_ready && woken {
            return Reply::Cancelled;
        }
        if !stdin_ready {
            continue;
        }
        let mut buf = [0u8; READ_CHUNK];
        return match rustix::io::read(&stdin, &mut buf) {
            Ok(0) => Reply::End,
            Ok(n) => Reply::Bytes(buf[..n].to_vec()),
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => continue,
            Err(_) => Reply::End,
        };
    }
}

/// Tab completion of `/` words (see [`slash::complete`]).
struct SlashHelper {
    agent_commands: Arc<Mutex<Vec<String>>>,
}

impl Completer for SlashHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let names = self
            .agent_commands
            .lock()
            .map(|n| n.clone())
            .unwrap_or_default();
        Ok(slash::complete(line, pos, &names))
    }
}

impl Hinter for SlashHelper {
    type Hint = String;
}

impl Highlighter for SlashHelper {}

impl Validator for SlashHelper {}

impl Helper for SlashHelper {}
