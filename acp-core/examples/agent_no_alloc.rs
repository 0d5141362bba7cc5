//! An ACP agent as a microcontroller runs it: no allocator, [`Fixed`] storage, one superloop
//! over a UART driven through the `embedded-io` traits. It runs a whole `/tool`-like turn: the
//! tool call is announced, permission is asked (R-PERM-1, R-PERM-2) and granted, the tool
//! completes, the turn ends, and the peer's hang-up closes the connection.
//!
//! The "UART" is an in-memory pair of 64-byte FIFOs; the client on its far end is played from
//! canned lines by this example itself, which checks every line the agent sends, prints the
//! exchange and exits non-zero on any mismatch.
//!
//! The agent code uses no allocator: a counting global allocator checks that nothing is
//! allocated while the superloop runs, whether acp-core is built with `alloc` or without it
//! (request params are validated through the borrowed views in both builds). `main` uses
//! `std` only to print and to exit; on a board, the `Uart` below would be the HAL's.
//!
//! Run: `cargo run -p acp-core --no-default-features --example agent_no_alloc` (acp-core built
//! without `std` and without `alloc`).

use core::convert::Infallible;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::time::Duration;
use std::alloc::{GlobalAlloc, Layout, System};

use acp_core::conn::agent::{RawToolCall, RawUpdate};
use acp_core::prelude::*;
use acp_core::view::ClientRequestView;
use embedded_io::{ErrorType, Read, ReadReady, Write, WriteReady};
use heapless::Deque;

/// One line at most 1 KiB, a 2 KiB outbox, one session, two requests in flight each way, four
/// queued events (`EVENTS >= REQUESTS + 2`).
type Storage = Fixed<1024, 2048, 1, 2, 4>;

/// A UART's two hardware FIFOs: what the agent reads (`rx`) and what it writes (`tx`). The
/// agent sees it through `embedded-io`; the far end (the client) through `peer_*`.
struct Uart {
    rx: Deque<u8, 64>,
    tx: Deque<u8, 64>,
    hung_up: bool,
}

impl ErrorType for Uart {
    type Error = Infallible;
}

impl ReadReady for Uart {
    /// Ready when a byte waits or the line is down (a read then returns 0: EOF).
    fn read_ready(&mut self) -> Result<bool, Infallible> {
        Ok(!self.rx.is_empty() || self.hung_up)
    }
}

impl Read for Uart {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        let mut n = 0;
        while n < buf.len() {
            let Some(byte) = self.rx.pop_front() else {
                break;
            };
            buf[n] = byte;
            n += 1;
        }
        Ok(n)
    }
}

impl WriteReady for Uart {
    fn write_ready(&mut self) -> Result<bool, Infallible> {
        Ok(!self.tx.is_full())
    }
}

impl Write for Uart {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        let mut n = 0;
        for &byte in buf {
            if self.tx.push_back(byte).is_err() {
                break;
            }
            n += 1;
        }
        Ok(n)
    }

    fn flush(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

impl Uart {
    /// The client puts bytes on the line; returns how many fit in the FIFO.
    fn peer_send(&mut self, bytes: &[u8]) -> usize {
        bytes
            .iter()
            .take_while(|&&b| self.rx.push_back(b).is_ok())
            .count()
    }

    fn peer_recv(&mut self) -> Option<u8> {
        self.tx.pop_front()
    }
}

/// One step of the client's canned script.
enum Step {
    /// The client sends this line (a newline is added).
    Send(&'static str),
    /// The agent must send exactly this line next.
    Expect(&'static str),
    /// The client hangs up.
    HangUp,
}

const SCRIPT: &[Step] = &[
    Step::Send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
    ),
    Step::Expect(
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false}},"authMethods":[],"agentInfo":{"name":"mcu","title":"MCU agent","version":"0.1.0"}}}"#,
    ),
    Step::Send(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/flash","mcpServers":[]}}"#,
    ),
    Step::Expect(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#),
    Step::Send(
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"/tool"}]}}"#,
    ),
    Step::Expect(
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"}}}"#,
    ),
    Step::Expect(
        r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"},"options":[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"},{"optionId":"allow_always","name":"Always allow","kind":"allow_always"},{"optionId":"reject_once","name":"Reject once","kind":"reject_once"},{"optionId":"reject_always","name":"Always reject","kind":"reject_always"}]}}"#,
    ),
    Step::Send(
        r#"{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}"#,
    ),
    Step::Expect(
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call-1","status":"completed"}}}"#,
    ),
    Step::Expect(
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"wrote notes.txt"}}}}"#,
    ),
    Step::Expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#),
    Step::HangUp,
];

/// The client on the far end of the UART, following [`SCRIPT`].
struct ScriptedClient {
    step: usize,
    /// Bytes of the current `Send` already on the line (its newline counts as one more).
    sent: usize,
    line: heapless::Vec<u8, 1024>,
}

impl ScriptedClient {
    /// Moves bytes both ways; returns an error message on the first mismatch.
    fn run(&mut self, uart: &mut Uart) -> Result<(), &'static str> {
        while let Some(byte) = uart.peer_recv() {
            if byte != b'\n' {
                self.line.push(byte).map_err(|_| "agent line too long")?;
                continue;
            }
            let line = core::str::from_utf8(&self.line).map_err(|_| "agent sent invalid UTF-8")?;
            println!("agent -> client: {line}");
            match SCRIPT.get(self.step) {
                Some(Step::Expect(expected)) if *expected == line => self.step += 1,
                Some(Step::Expect(expected)) => {
                    println!("expected:        {expected}");
                    return Err("the agent sent another line than expected");
                }
                _ => return Err("the agent sent a line the client did not expect"),
            }
            self.line.clear();
        }
        match SCRIPT.get(self.step) {
            Some(Step::Send(text)) => {
                if self.sent < text.len() {
                    self.sent += uart.peer_send(&text.as_bytes()[self.sent..]);
                }
                if self.sent == text.len() && uart.peer_send(b"\n") == 1 {
                    println!("client -> agent: {text}");
                    self.step += 1;
                    self.sent = 0;
                }
            }
            Some(Step::HangUp) if !uart.hung_up => {
                println!("client hangs up");
                uart.hung_up = true;
                self.step += 1;
            }
            _ => {}
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.step == SCRIPT.len()
    }
}

/// The application: answers `session/new` and runs the `/tool` turn.
struct App {
    tool_call: RawToolCall<'static>,
    permission: Option<RequestId>,
    saved: bool,
}

const TOOL_CALL: &str =
    r#"{"toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"}"#;
const ANNOUNCE: &str = r#"{"sessionUpdate":"tool_call","toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"}"#;
const COMPLETED: &str =
    r#"{"sessionUpdate":"tool_call_update","toolCallId":"call-1","status":"completed"}"#;
const REPORT: &str =
    r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"wrote notes.txt"}}"#;
const NOT_DONE: &str = r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"not allowed, nothing written"}}"#;

impl App {
    fn on_event(
        &mut self,
        agent: &mut AgentConnection<Storage>,
        now: Instant,
        event: AgentEvent,
    ) -> Result<(), UsageError> {
        match event {
            AgentEvent::NewSession { ticket, .. } => agent.accept_new_session_id(ticket, "s1"),
            AgentEvent::Prompt {
                session, params, ..
            } => {
                // The prompt is read in place, through a borrowed view of the kept line.
                let is_tool = match agent.request_view("session/prompt", params) {
                    Some(Ok(ClientRequestView::Prompt(prompt))) => prompt
                        .prompt
                        .iter()
                        .filter_map(|block| block.as_text()?.as_plain())
                        .any(|text| text == "/tool"),
                    _ => false,
                };
                if !is_tool {
                    return agent
                        .end_turn(session.as_str(), StopReason::EndTurn)
                        .map(drop);
                }
                agent.send_update(session.as_str(), &raw(ANNOUNCE))?;
                let asked = agent.request_permission_raw(
                    now,
                    session.as_str(),
                    &self.tool_call,
                    Some(Duration::from_secs(30)),
                )?;
                self.permission = Some(asked);
                Ok(())
            }
            AgentEvent::PermissionResolved {
                request,
                session,
                decision,
                ..
            } if Some(request) == self.permission => {
                self.permission = None;
                let session = session.as_str();
                if decision.is_allowed() {
                    agent.send_update(session, &raw(COMPLETED))?;
                    agent.send_update(session, &raw(REPORT))?;
                } else {
                    agent.send_update(session, &raw(NOT_DONE))?;
                }
                agent.end_turn(session, StopReason::EndTurn).map(drop)
            }
            AgentEvent::Cancelled { session } => agent
                .end_turn(session.as_str(), StopReason::Cancelled)
                .map(drop),
            AgentEvent::SaveSession { .. } => {
                self.saved = true;
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

fn raw(json: &'static str) -> RawUpdate<'static> {
    RawUpdate::new(json).expect("a constant update")
}

/// Counts allocations while `COUNTING` is on: the superloop must make none.
struct CountingAlloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)]
// SAFETY: forwards every call unchanged to the system allocator; only counts.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

fn fail(why: &str) -> ! {
    eprintln!("agent_no_alloc: {why}");
    std::process::exit(1)
}

fn main() {
    // Printing allocates stdout's buffer once: do it before counting starts.
    println!(
        "agent_no_alloc: a {} byte AgentConnection (buffers included), fixed storage",
        core::mem::size_of::<AgentConnection<Storage>>()
    );
    COUNTING.store(true, Ordering::Relaxed);

    let mut agent: AgentConnection<Storage> = AgentConnection::new(AgentConfig::new(
        AgentInfo::new("mcu", "MCU agent", "0.1.0"),
    ));
    let mut app = App {
        tool_call: RawToolCall::new(TOOL_CALL, "edit write notes.txt").expect("a constant"),
        permission: None,
        saved: false,
    };
    let mut uart = Uart {
        rx: Deque::new(),
        tx: Deque::new(),
        hung_up: false,
    };
    let mut client = ScriptedClient {
        step: 0,
        sent: 0,
        line: heapless::Vec::new(),
    };
    // Bytes read from the UART and not yet taken by the connection (one request line per
    // input: the rest waits here until the events are drained).
    let mut buf = [0u8; 64];
    let mut held = 0;

    // The superloop; a millisecond tick stands for the board's timer. Bounded, so a stuck
    // exchange fails instead of spinning.
    for tick in 0..100_000u64 {
        let now = Instant(tick);
        if let Err(why) = client.run(&mut uart) {
            fail(why);
        }
        if agent.is_closed() && agent.poll_transmit().is_empty() {
            break;
        }
        if agent.poll_timeout().is_some_and(|deadline| deadline <= now) {
            agent.handle_timeout(now);
        }
        if held > 0 || agent.is_input_held() {
            let taken = agent.handle_bytes(now, &buf[..held]);
            buf.copy_within(taken..held, 0);
            held -= taken;
        } else if !agent.is_closed() && uart.read_ready() == Ok(true) {
            let Ok(len) = uart.read(&mut buf);
            if len == 0 {
                agent.handle_eof(now);
            } else {
                let taken = agent.handle_bytes(now, &buf[..len]);
                buf.copy_within(taken..len, 0);
                held = len - taken;
            }
        }
        while let Some(event) = agent.poll_event() {
            if let Err(error) = app.on_event(&mut agent, now, event) {
                fail(&format!("the agent's command failed: {error:?}"));
            }
        }
        let out = agent.poll_transmit();
        if !out.is_empty() && uart.write_ready() == Ok(true) {
            let Ok(n) = uart.write(out);
            agent.transmitted(n);
        }
    }
    COUNTING.store(false, Ordering::Relaxed);

    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    if allocations != 0 {
        fail(&format!("the superloop allocated {allocations} times"));
    }
    if !client.finished() {
        fail("the exchange stopped before the end of the script");
    }
    if !agent.is_closed() || !app.saved {
        fail("the agent did not close and save its session at the hang-up");
    }
    println!("ok: a /tool turn with a permission request, no allocation");
}
