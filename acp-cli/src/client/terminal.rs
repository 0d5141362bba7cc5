//! The person's side of the terminal: typed lines and Ctrl-C, as async sources.

use smol::channel::Receiver;
use smol::stream::StreamExt as _;

/// Lines typed on stdin, read by a thread started on first use (so stdin is not touched
/// unless a line is wanted). `None` once stdin ends.
#[derive(Debug, Default)]
pub struct StdinLines {
    lines: Option<Receiver<String>>,
}

impl StdinLines {
    /// Nothing read yet.
    pub fn new() -> StdinLines {
        StdinLines::default()
    }

    /// The next line without its line ending; `None` at the end of stdin.
    pub async fn next(&mut self) -> Option<String> {
        let lines = self.lines.get_or_insert_with(|| {
            let (tx, rx) = smol::channel::unbounded();
            std::thread::spawn(move || {
                let mut line = String::new();
                // Ends at EOF, a read error, or when nobody listens any more.
                loop {
                    line.clear();
                    match std::io::stdin().read_line(&mut line) {
                        Ok(1..) => {
                            let text = line.trim_end_matches(['\n', '\r']).to_owned();
                            if tx.send_blocking(text).is_err() {
                                return;
                            }
                        }
                        _ => return,
                    }
                }
            });
            rx
        });
        lines.recv().await.ok()
    }
}

/// Ctrl-C (SIGINT) presses. While this exists the signal no longer kills the process.
pub struct Interrupts {
    signals: Option<async_signal::Signals>,
}

impl std::fmt::Debug for Interrupts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupts")
            .field("installed", &self.signals.is_some())
            .finish()
    }
}

impl Default for Interrupts {
    fn default() -> Self {
        Self::new()
    }
}

impl Interrupts {
    /// Catches SIGINT from now on (if the handler cannot be installed, Ctrl-C keeps its
    /// default effect and [`Interrupts::next`] never returns).
    pub fn new() -> Interrupts {
        let signals = async_signal::Signals::new([async_signal::Signal::Int])
            .map_err(|e| tracing::warn!("cannot catch Ctrl-C: {e}"))
            .ok();
        Interrupts { signals }
    }

    /// Waits for the next Ctrl-C.
    pub async fn next(&mut self) {
        match self.signals.as_mut() {
            Some(signals) => {
                // A stream of signals never ends; an error is not a press.
                while let Some(signal) = signals.next().await {
                    if signal.is_ok() {
                        return;
                    }
                }
                std::future::pending().await
            }
            None => std::future::pending().await,
        }
    }
}
