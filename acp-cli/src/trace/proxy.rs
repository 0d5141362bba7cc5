//! `acp-cli trace`: a transparent stdio proxy between an editor and an agent that records the
//! exchange (R-TRACE-1, R-TRACE-2).
//!
//! Three threads move bytes: editor → agent, agent → editor, and the recorder's writer. Each
//! forwarding thread writes what it read to the other side first, and only then cuts it into
//! lines and hands them to the writer through a bounded queue (`try_send`: a full queue drops
//! the line and counts it, never blocks). The agent's stderr is inherited, so it reaches the
//! editor untouched. The agent runs in its own process group; SIGTERM and SIGINT sent to the
//! proxy go to that group, and the proxy exits with the agent's status.
//!
//! `host::process` is not used here: it turns stderr into lossy lines for the host's ring,
//! while this proxy must pass stderr through byte for byte.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::time::{Duration, Instant};

use async_signal::{Signal, Signals};

use super::format::{self, Side};

/// How much one read takes at most.
const CHUNK_BYTES: usize = 64 * 1024;
/// Lines waiting for the writer, at most.
pub const QUEUE_LINES: usize = 16 * 1024;
/// Bytes of lines waiting for the writer, at most: past this, lines are dropped and counted.
pub const QUEUE_BYTES: usize = 64 * 1024 * 1024;
/// The longest line recorded (R-FRAME-5's default); a longer one is forwarded but counted as
/// dropped.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// How long the proxy waits, after the agent exited, for its stdout to reach EOF (a grandchild
/// may hold it open).
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(5);

/// What `acp-cli trace` was asked to do.
#[derive(Clone, Debug)]
pub struct ProxyOptions {
    /// The trace file (created or truncated).
    pub out: PathBuf,
    /// Write `DIR TS LINE` lines instead of conductor events.
    pub raw: bool,
    /// The agent's argv.
    pub agent: Vec<String>,
}

/// One thing for the writer.
enum Record {
    Line { from: Side, ts: f64, bytes: Vec<u8> },
    End,
}

/// The forwarding threads' handle on the writer: a bounded queue and the count of what it
/// could not take.
#[derive(Clone)]
struct Recorder {
    queue: SyncSender<Record>,
    queued_bytes: Arc<AtomicUsize>,
    dropped: Arc<AtomicU64>,
    start: Instant,
}

impl Recorder {
    fn record(&self, from: Side, ts: f64, bytes: Vec<u8>) {
        let len = bytes.len();
        if self.queued_bytes.fetch_add(len, Ordering::Relaxed) + len > QUEUE_BYTES {
            self.queued_bytes.fetch_sub(len, Ordering::Relaxed);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        match self.queue.try_send(Record::Line { from, ts, bytes }) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.queued_bytes.fetch_sub(len, Ordering::Relaxed);
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            // The writer has finished: the run is over.
            Err(TrySendError::Disconnected(_)) => {}
        }
    }

    fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

/// Cuts one direction's bytes into lines for the recorder (R-FRAME-1: `\n` ends a line; the
/// line is kept exactly, `\r` included).
struct LineCutter {
    from: Side,
    line: Vec<u8>,
    overlong: bool,
}

impl LineCutter {
    fn new(from: Side) -> Self {
        LineCutter {
            from,
            line: Vec::new(),
            overlong: false,
        }
    }

    fn feed(&mut self, mut bytes: &[u8], ts: f64, recorder: &Recorder) {
        while let Some(at) = memchr::memchr(b'\n', bytes) {
            self.keep(&bytes[..at]);
            self.emit(ts, recorder);
            bytes = &bytes[at + 1..];
        }
        self.keep(bytes);
    }

    fn finish(&mut self, ts: f64, recorder: &Recorder) {
        if !self.line.is_empty() || self.overlong {
            self.emit(ts, recorder);
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.overlong || self.line.len() + bytes.len() > MAX_LINE_BYTES {
            self.overlong = true;
            self.line = Vec::new();
        } else {
            self.line.extend_from_slice(bytes);
        }
    }

    fn emit(&mut self, ts: f64, recorder: &Recorder) {
        if std::mem::take(&mut self.overlong) {
            recorder.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let line = std::mem::take(&mut self.line);
        if !line.trim_ascii().is_empty() {
            recorder.record(self.from, ts, line);
        }
    }
}

/// Copies `input` to `output` (writing first), then records it line by line. A failed write
/// stops the forwarding but not the reading, so the writing side never blocks on a full pipe.
/// Returning drops `output`: the agent reads EOF when the editor's stdin ends.
fn forward(mut input: impl Read, output: Option<impl Write>, from: Side, recorder: &Recorder) {
    let mut output = output;
    let mut cutter = LineCutter::new(from);
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let ts = recorder.elapsed();
        if let Some(out) = output.as_mut()
            && out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err()
        {
            output = None;
        }
        cutter.feed(&buf[..n], ts, recorder);
    }
    cutter.finish(recorder.elapsed(), recorder);
}

/// The writer thread: events out of the queue into the file, flushed whenever the queue is
/// empty. Drops are reported where they are noticed.
fn write_trace(
    file: File,
    raw: bool,
    queue: Receiver<Record>,
    queued_bytes: Arc<AtomicUsize>,
    dropped: Arc<AtomicU64>,
    start: Instant,
) -> io::Result<()> {
    let mut file = BufWriter::with_capacity(256 * 1024, file);
    let mut out = Vec::with_capacity(64 * 1024);
    let report_drops = |out: &mut Vec<u8>| {
        let count = dropped.swap(0, Ordering::Relaxed);
        if count > 0 {
            format::write_dropped(start.elapsed().as_secs_f64(), count, raw, out);
        }
    };
    let mut next = queue.recv().ok();
    while let Some(record) = next.take() {
        let Record::Line { from, ts, bytes } = record else {
            break;
        };
        queued_bytes.fetch_sub(bytes.len(), Ordering::Relaxed);
        report_drops(&mut out);
        if raw {
            format::write_raw(from, ts, &bytes, &mut out);
        } else {
            format::write_event(from, ts, &bytes, &mut out);
        }
        file.write_all(&out)?;
        out.clear();
        next = match queue.try_recv() {
            Ok(record) => Some(record),
            Err(_) => {
                file.flush()?;
                queue.recv().ok()
            }
        };
    }
    report_drops(&mut out);
    file.write_all(&out)?;
    file.flush()
}

/// Runs the proxy to the agent's end; returns the exit status to leave with (the agent's code,
/// or 128 + its signal), or an error message for the user.
pub fn run(options: &ProxyOptions) -> Result<i32, String> {
    // Taken over before anything else, so a signal that arrives while the agent starts is
    // held for it rather than ending the proxy.
    let signals = Signals::new([Signal::Term, Signal::Int]).ok();
    let file = File::create(&options.out)
        .map_err(|e| format!("cannot create {}: {e}", options.out.display()))?;
    let (program, args) = options
        .agent
        .split_first()
        .ok_or_else(|| String::from("no agent command given after --"))?;
    let mut child = Command::new(program)
        .args(args)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let pid = child.id();
    let agent_stdin = child.stdin.take().expect("stdin is piped");
    let agent_stdout = child.stdout.take().expect("stdout is piped");

    let start = Instant::now();
    let (queue, receiver) = sync_channel(QUEUE_LINES);
    let recorder = Recorder {
        queue,
        queued_bytes: Arc::new(AtomicUsize::new(0)),
        dropped: Arc::new(AtomicU64::new(0)),
        start,
    };
    let writer = {
        let (queued, dropped, raw) = (
            recorder.queued_bytes.clone(),
            recorder.dropped.clone(),
            options.raw,
        );
        std::thread::spawn(move || write_trace(file, raw, receiver, queued, dropped, start))
    };

    if let Some(signals) = signals {
        forward_signals(signals, pid);
    }

    // Editor → agent. Not joined: it may sit in a read of the editor's stdin after the agent
    // is gone; the process exit ends it.
    let our_stdin = dup(io::stdin().as_fd())?;
    {
        let recorder = recorder.clone();
        std::thread::spawn(move || forward(our_stdin, Some(agent_stdin), Side::Client, &recorder));
    }
    // Agent → editor.
    let our_stdout = dup(io::stdout().as_fd())?;
    let (done, agent_output_done) = sync_channel::<()>(1);
    {
        let recorder = recorder.clone();
        std::thread::spawn(move || {
            forward(agent_stdout, Some(our_stdout), Side::Agent, &recorder);
            let _ = done.send(());
        });
    }

    let status = child
        .wait()
        .map_err(|e| format!("waiting for the agent failed: {e}"))?;
    let _ = agent_output_done.recv_timeout(DRAIN_AFTER_EXIT);
    // Everything the agent wrote is queued; the writer finishes what is queued, then stops.
    let _ = recorder.queue.send(Record::End);
    match writer.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!(
            "acp-cli trace: writing {} failed: {e}",
            options.out.display()
        ),
        Err(_) => eprintln!("acp-cli trace: the trace writer panicked"),
    }
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    })
}

/// An owned, unbuffered handle on one of our standard streams.
fn dup(fd: std::os::fd::BorrowedFd<'_>) -> Result<File, String> {
    fd.try_clone_to_owned()
        .map(File::from)
        .map_err(|e| format!("cannot use the standard streams: {e}"))
}

/// SIGTERM and SIGINT do not end the proxy: they go to the agent's process group, and the
/// proxy ends when the agent does.
fn forward_signals(mut signals: Signals, pid: u32) {
    use smol::stream::StreamExt;
    let Some(group) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    std::thread::spawn(move || {
        smol::block_on(async {
            while let Some(Ok(signal)) = signals.next().await {
                let signal = match signal {
                    Signal::Int => rustix::process::Signal::INT,
                    _ => rustix::process::Signal::TERM,
                };
                let _ = rustix::process::kill_process_group(group, signal);
            }
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder(capacity: usize) -> (Recorder, Receiver<Record>) {
        let (queue, receiver) = sync_channel(capacity);
        let recorder = Recorder {
            queue,
            queued_bytes: Arc::new(AtomicUsize::new(0)),
            dropped: Arc::new(AtomicU64::new(0)),
            start: Instant::now(),
        };
        (recorder, receiver)
    }

    fn lines(receiver: &Receiver<Record>) -> Vec<Vec<u8>> {
        receiver
            .try_iter()
            .filter_map(|r| match r {
                Record::Line { bytes, .. } => Some(bytes),
                Record::End => None,
            })
            .collect()
    }

    #[test]
    fn lines_cut_across_reads_keep_their_bytes() {
        let (recorder, receiver) = recorder(16);
        let mut cutter = LineCutter::new(Side::Client);
        for chunk in [&b"{\"a\""[..], b":1}\r\n\n  \nxy", b"\xffz\n", b"tail"] {
            cutter.feed(chunk, 0.0, &recorder);
        }
        cutter.finish(0.0, &recorder);
        assert_eq!(lines(&receiver), [&b"{\"a\":1}\r"[..], b"xy\xffz", b"tail"]);
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_blocking() {
        let (recorder, receiver) = recorder(2);
        let mut cutter = LineCutter::new(Side::Agent);
        cutter.feed(b"1\n2\n3\n4\n", 0.0, &recorder);
        assert_eq!(lines(&receiver).len(), 2);
        assert_eq!(recorder.dropped.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn an_overlong_line_is_counted_as_dropped() {
        let (recorder, receiver) = recorder(4);
        let mut cutter = LineCutter::new(Side::Agent);
        let big = vec![b'x'; MAX_LINE_BYTES / 2 + 1];
        cutter.feed(&big, 0.0, &recorder);
        cutter.feed(&big, 0.0, &recorder);
        cutter.feed(b"\nok\n", 0.0, &recorder);
        assert_eq!(lines(&receiver), [b"ok".to_vec()]);
        assert_eq!(recorder.dropped.load(Ordering::Relaxed), 1);
    }
}
