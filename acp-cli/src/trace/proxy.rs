//! `acp-cli trace`: a transparent stdio proxy between an editor and an agent that records the
//! exchange (R-TRACE-1, R-TRACE-2).
//!
//! Three threads move bytes: editor → agent, agent → editor, and the recorder's writer. Each
//! forwarding thread writes what it read to the other side first, and only then cuts it into
//! lines and hands them to the writer through a bounded queue (`try_send`: a full queue drops
//! the line and counts it, never blocks). The writer runs at a lower priority than the rest,
//! builds events from the lines' spans without a JSON tree (`format::write_event`), and writes
//! the file in large pieces. The agent's stderr is inherited, so it reaches the
//! editor untouched. The agent runs in its own process group; SIGTERM and SIGINT sent to the
//! proxy go to that group, and the proxy exits with the agent's status.
//!
//! `host::process` is not used here: it turns stderr into lossy lines for the host's ring,
//! while this proxy must pass stderr through byte for byte.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_signal::{Signal, Signals};

use acp_conform::trace::{self as format, Side};
use acp_core::wire::frame::Framer;

/// How much one read takes at most.
const CHUNK_BYTES: usize = 64 * 1024;
/// The writer writes the trace file in pieces of about this size while the queue is busy.
const WRITE_BYTES: usize = 256 * 1024;
/// The writer thread's nice value: below the forwarding threads and the peers.
const RECORDER_NICE: i32 = 10;
/// Chunks waiting for the writer, at most.
pub(crate) const QUEUE_LINES: usize = 16 * 1024;
/// Bytes of chunks waiting for the writer, at most: past this, chunks are skipped and their
/// lines counted as dropped.
pub(crate) const QUEUE_BYTES: usize = 64 * 1024 * 1024;
/// The longest line recorded (R-FRAME-5's default); a longer one is forwarded but counted as
/// dropped.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// How long the proxy waits, after the agent exited, for its stdout to reach EOF (a grandchild
/// may hold it open).
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(5);

/// What `acp-cli trace` was asked to do.
#[derive(Clone, Debug)]
pub(crate) struct ProxyOptions {
    /// The trace file (created or truncated).
    pub out: PathBuf,
    /// Write `DIR TS LINE` lines instead of conductor events.
    pub raw: bool,
    /// The agent's argv.
    pub agent: Vec<String>,
}

/// One read of one direction, numbered before it was forwarded: the numbers follow cause and
/// effect (an answer is read after the request it answers was forwarded), so the writer puts
/// the two directions back in the order the peers saw them.
struct Chunk {
    seq: u64,
    from: Side,
    ts: f64,
    bytes: Vec<u8>,
}

/// One thing for the writer.
enum Record {
    Chunk(Chunk),
    End,
}

/// The forwarding threads' handle on the writer: a bounded queue, the chunk numbers, and the
/// chunks the queue could not take.
#[derive(Clone)]
struct Recorder {
    queue: SyncSender<Record>,
    next_seq: Arc<AtomicU64>,
    queued_bytes: Arc<AtomicUsize>,
    /// Chunks not queued, by number: their side and how many line ends they held.
    skipped: Arc<Mutex<BTreeMap<u64, (Side, u64)>>>,
    start: Instant,
}

impl Recorder {
    fn new(queue: SyncSender<Record>) -> Self {
        Recorder {
            queue,
            next_seq: Arc::new(AtomicU64::new(0)),
            queued_bytes: Arc::new(AtomicUsize::new(0)),
            skipped: Arc::new(Mutex::new(BTreeMap::new())),
            start: Instant::now(),
        }
    }

    /// Numbers a chunk that was just read; call before forwarding it.
    fn stamp(&self) -> (u64, f64) {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        (seq, self.start.elapsed().as_secs_f64())
    }

    /// Hands a forwarded chunk to the writer, or skips it (never waits).
    fn record(&self, seq: u64, from: Side, ts: f64, bytes: &[u8]) {
        let len = bytes.len();
        let fits = self.queued_bytes.fetch_add(len, Ordering::Relaxed) + len <= QUEUE_BYTES;
        let sent = fits
            && match self.queue.try_send(Record::Chunk(Chunk {
                seq,
                from,
                ts,
                bytes: bytes.to_vec(),
            })) {
                Ok(()) => true,
                Err(TrySendError::Full(_)) => false,
                // The writer has finished: the run is over.
                Err(TrySendError::Disconnected(_)) => return,
            };
        if !sent {
            self.queued_bytes.fetch_sub(len, Ordering::Relaxed);
            let lines = memchr::memchr_iter(b'\n', bytes).count() as u64;
            let mut skipped = self.skipped.lock().unwrap_or_else(|e| e.into_inner());
            skipped.insert(seq, (from, lines.max(1)));
        }
    }
}

/// Cuts one direction's bytes into lines (R-FRAME-1: `\n` ends a line; the line is kept
/// exactly, `\r` included): acp-core's framer, raw. Lines longer than [`MAX_LINE_BYTES`], and
/// lines a skipped chunk cut into, are counted as dropped; so is a line still broken when the
/// stream ends (R-FRAME-3: a last line without a newline is a line).
struct LineCutter {
    framer: Framer<Vec<u8>>,
    /// A skipped chunk cut into the line under way: the rest of it is dropped.
    broken: bool,
}

impl LineCutter {
    fn new() -> Self {
        LineCutter {
            framer: Framer::with_limit(MAX_LINE_BYTES).raw(),
            broken: false,
        }
    }

    /// Feeds a chunk; complete lines go to `emit`, broken ones are counted in `dropped`. A line
    /// that lies whole inside the chunk is handed on where it is, not copied.
    fn feed(&mut self, mut bytes: &[u8], dropped: &mut u64, emit: &mut impl FnMut(&[u8])) {
        while let Some(line) = self.framer.next_line_bytes_from(&mut bytes) {
            match line {
                // The rest of the line a skipped chunk cut into (the framer keeps it within
                // the limit, and reports it too long past that): dropped.
                _ if std::mem::take(&mut self.broken) => *dropped += 1,
                Ok(line) if line.trim_ascii().is_empty() => {}
                Ok(line) => emit(line),
                Err(_) => *dropped += 1,
            }
        }
    }

    /// A chunk of this direction was skipped: the line under way is broken.
    fn skip(&mut self) {
        self.framer.reset();
        self.broken = true;
    }

    fn finish(&mut self, dropped: &mut u64, emit: &mut impl FnMut(&[u8])) {
        self.framer.finish();
        self.feed(&[], dropped, emit);
        if std::mem::take(&mut self.broken) {
            *dropped += 1;
        }
    }
}

/// Copies `input` to `output` (numbering each read first, writing it next, recording it last).
/// A failed write stops the forwarding but not the reading, so the writing side never blocks
/// on a full pipe. Returning drops `output`: the agent reads EOF when the editor's stdin ends.
fn forward(mut input: impl Read, output: Option<impl Write>, from: Side, recorder: &Recorder) {
    let mut output = output;
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let (seq, ts) = recorder.stamp();
        if let Some(out) = output.as_mut()
            && out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err()
        {
            output = None;
        }
        recorder.record(seq, from, ts, &buf[..n]);
    }
}

/// Puts chunks back in number order and turns them into trace lines.
struct Sequencer {
    next: u64,
    waiting: BinaryHeap<Reverse<(u64, usize)>>,
    chunks: HashMap<u64, Chunk>,
    cutters: [LineCutter; 2],
    dropped: u64,
    raw: bool,
    start: Instant,
}

impl Sequencer {
    fn new(raw: bool, start: Instant) -> Self {
        Sequencer {
            next: 0,
            waiting: BinaryHeap::new(),
            chunks: HashMap::new(),
            cutters: [LineCutter::new(), LineCutter::new()],
            dropped: 0,
            raw,
            start,
        }
    }

    fn push(&mut self, chunk: Chunk) {
        self.waiting.push(Reverse((chunk.seq, chunk.bytes.len())));
        self.chunks.insert(chunk.seq, chunk);
    }

    /// Writes every chunk whose turn has come (or all of them, `at_end`) into `out`; returns
    /// the bytes of the chunks written.
    fn drain(
        &mut self,
        skipped: &Mutex<BTreeMap<u64, (Side, u64)>>,
        at_end: bool,
        out: &mut Vec<u8>,
    ) -> usize {
        let mut done = 0;
        loop {
            let head = self.waiting.peek().map(|Reverse((seq, _))| *seq);
            if head == Some(self.next) {
                let Some(Reverse((seq, len))) = self.waiting.pop() else {
                    break;
                };
                let chunk = self
                    .chunks
                    .remove(&seq)
                    .expect("every waiting chunk is stored");
                self.next = seq + 1;
                done += len;
                self.write_chunk(&chunk, out);
                continue;
            }
            let gap = skipped
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&self.next);
            match (gap, head) {
                (Some((side, lines)), _) => {
                    self.cutters[side as usize].skip();
                    self.dropped += lines;
                    self.next += 1;
                }
                // At the end, a number never seen belongs to a read still under way: move on.
                (None, Some(head)) if at_end => self.next = head,
                (None, _) => break,
            }
        }
        if at_end {
            for (side, lines) in
                std::mem::take(&mut *skipped.lock().unwrap_or_else(|e| e.into_inner()))
                    .into_values()
            {
                self.cutters[side as usize].skip();
                self.dropped += lines;
            }
            let ts = self.start.elapsed().as_secs_f64();
            for side in [Side::Client, Side::Agent] {
                let (raw, cutter, dropped) = (
                    self.raw,
                    &mut self.cutters[side as usize],
                    &mut self.dropped,
                );
                cutter.finish(dropped, &mut |line| write_line(raw, side, ts, line, out));
            }
            self.report_drops(out);
        }
        done
    }

    /// Writes a chunk's lines straight into `out` (no copy per line), then the count of any
    /// line it broke.
    fn write_chunk(&mut self, chunk: &Chunk, out: &mut Vec<u8>) {
        let before = self.dropped;
        let (raw, cutter) = (self.raw, &mut self.cutters[chunk.from as usize]);
        let ts_text = format::ts_text(chunk.ts);
        cutter.feed(&chunk.bytes, &mut self.dropped, &mut |line| {
            if raw {
                format::write_raw(chunk.from, chunk.ts, line, out);
            } else {
                format::write_event_at(chunk.from, chunk.ts, &ts_text, line, out);
            }
        });
        if self.dropped != before {
            self.report_drops(out);
        }
    }

    fn report_drops(&mut self, out: &mut Vec<u8>) {
        if self.dropped > 0 {
            let ts = self.start.elapsed().as_secs_f64();
            format::write_dropped(ts, std::mem::take(&mut self.dropped), self.raw, out);
        }
    }
}

fn write_line(raw: bool, from: Side, ts: f64, line: &[u8], out: &mut Vec<u8>) {
    if raw {
        format::write_raw(from, ts, line, out);
    } else {
        format::write_event(from, ts, line, out);
    }
}

/// The writer thread: chunks out of the queue, in order, into the file, in writes of
/// [`WRITE_BYTES`] or whatever is there when the queue is empty.
fn write_trace(
    mut file: File,
    raw: bool,
    queue: Receiver<Record>,
    recorder: Recorder,
) -> io::Result<()> {
    // R-TRACE-2: when the CPU is short, the peers and the forwarding threads go first; the
    // recorder catches up from its bounded queue (or counts what it had to drop). On Linux a
    // thread's nice value is its own, and `None` is the calling thread.
    let _ = rustix::process::setpriority_process(None, RECORDER_NICE);
    let mut out = Vec::with_capacity(2 * WRITE_BYTES);
    let mut sequencer = Sequencer::new(raw, recorder.start);
    loop {
        let record = match queue.try_recv() {
            Ok(record) => Some(record),
            Err(_) => {
                file.write_all(&out)?;
                out.clear();
                // Waiting on a gap: the missing chunk is in flight, or about to be marked
                // skipped; look again soon.
                match queue.recv_timeout(Duration::from_millis(5)) {
                    Ok(record) => Some(record),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => Some(Record::End),
                }
            }
        };
        let at_end = matches!(record, Some(Record::End));
        if let Some(Record::Chunk(chunk)) = record {
            sequencer.push(chunk);
        }
        let done = sequencer.drain(&recorder.skipped, at_end, &mut out);
        recorder.queued_bytes.fetch_sub(done, Ordering::Relaxed);
        if at_end || out.len() >= WRITE_BYTES {
            file.write_all(&out)?;
            out.clear();
        }
        if at_end {
            return file.flush();
        }
    }
}

/// Runs the proxy to the agent's end; returns the exit status to leave with (the agent's code,
/// or 128 + its signal), or an error message for the user.
pub(crate) fn run(options: &ProxyOptions) -> Result<i32, String> {
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

    let (queue, receiver) = sync_channel(QUEUE_LINES);
    let recorder = Recorder::new(queue);
    let writer = {
        let (recorder, raw) = (recorder.clone(), options.raw);
        std::thread::spawn(move || write_trace(file, raw, receiver, recorder))
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

    fn cut(chunks: &[&[u8]]) -> (Vec<Vec<u8>>, u64) {
        let mut cutter = LineCutter::new();
        let (mut lines, mut dropped) = (Vec::new(), 0);
        for chunk in chunks {
            cutter.feed(chunk, &mut dropped, &mut |l| lines.push(l.to_vec()));
        }
        cutter.finish(&mut dropped, &mut |l| lines.push(l.to_vec()));
        (lines, dropped)
    }

    #[test]
    fn lines_cut_across_reads_keep_their_bytes() {
        let (lines, dropped) = cut(&[&b"{\"a\""[..], b":1}\r\n\n  \nxy", b"\xffz\n", b"tail"]);
        assert_eq!(lines, [&b"{\"a\":1}\r"[..], b"xy\xffz", b"tail"]);
        assert_eq!(dropped, 0);
    }

    #[test]
    fn an_overlong_line_is_counted_as_dropped() {
        let big = vec![b'x'; MAX_LINE_BYTES / 2 + 1];
        let (lines, dropped) = cut(&[&big, &big, b"\nok\n"]);
        assert_eq!(lines, [b"ok".to_vec()]);
        assert_eq!(dropped, 1);
    }

    /// R-TRACE-2: a line still broken when the stream ends is counted as dropped, like one
    /// that ends with a newline (R-FRAME-3): one over the limit, one a skipped chunk cut into.
    #[test]
    fn a_broken_last_line_without_a_newline_is_counted_as_dropped() {
        let big = vec![b'x'; MAX_LINE_BYTES / 2 + 1];
        assert_eq!(cut(&[b"ok\n", &big, &big]), (vec![b"ok".to_vec()], 1));

        let mut cutter = LineCutter::new();
        let (mut lines, mut dropped) = (Vec::new(), 0);
        cutter.feed(b"a\nb", &mut dropped, &mut |l| lines.push(l.to_vec()));
        cutter.skip();
        cutter.finish(&mut dropped, &mut |l| lines.push(l.to_vec()));
        assert_eq!((lines, dropped), (vec![b"a".to_vec()], 1));
    }

    fn chunk(seq: u64, from: Side, bytes: &[u8]) -> Chunk {
        Chunk {
            seq,
            from,
            ts: seq as f64,
            bytes: bytes.to_vec(),
        }
    }

    fn sides(out: &[u8]) -> Vec<(Side, Vec<u8>)> {
        format::read(out)
            .entries
            .into_iter()
            .map(|e| (e.from, e.text))
            .collect()
    }

    #[test]
    fn chunks_are_written_in_number_order_whatever_order_they_arrive_in() {
        let skipped = Mutex::new(BTreeMap::new());
        let mut sequencer = Sequencer::new(true, Instant::now());
        let mut out = Vec::new();
        sequencer.push(chunk(1, Side::Client, b"answer\n"));
        assert_eq!(
            sequencer.drain(&skipped, false, &mut out),
            0,
            "waits for chunk 0"
        );
        sequencer.push(chunk(0, Side::Agent, b"request\n"));
        assert_eq!(sequencer.drain(&skipped, false, &mut out), 15);
        assert_eq!(
            sides(&out),
            [
                (Side::Agent, b"request".to_vec()),
                (Side::Client, b"answer".to_vec())
            ]
        );
    }

    #[test]
    fn a_skipped_chunk_is_reported_as_dropped_lines_and_breaks_only_its_line() {
        let skipped = Mutex::new(BTreeMap::from([(1, (Side::Agent, 2))]));
        let mut sequencer = Sequencer::new(false, Instant::now());
        let mut out = Vec::new();
        sequencer.push(chunk(0, Side::Agent, b"{\"a\":1}\n{\"b\""));
        sequencer.push(chunk(2, Side::Agent, b":2}\n{\"c\":3}\n"));
        sequencer.drain(&skipped, true, &mut out);
        let trace = format::read(&out);
        let texts: Vec<_> = trace.entries.iter().map(|e| e.text.clone()).collect();
        assert_eq!(texts, [br#"{"a":1}"#.to_vec(), br#"{"c":3}"#.to_vec()]);
        // The two lines of the skipped chunk, and the broken one it ended.
        assert_eq!(trace.dropped.iter().map(|d| d.1).sum::<u64>(), 3);
    }

    #[test]
    fn a_full_queue_skips_instead_of_blocking() {
        let (queue, receiver) = sync_channel(1);
        let recorder = Recorder::new(queue);
        for _ in 0..3 {
            let (seq, ts) = recorder.stamp();
            recorder.record(seq, Side::Agent, ts, b"x\n");
        }
        assert_eq!(receiver.try_iter().count(), 1);
        let skipped = recorder.skipped.lock().unwrap().clone();
        assert_eq!(
            skipped,
            BTreeMap::from([(1, (Side::Agent, 1)), (2, (Side::Agent, 1))])
        );
    }
}
