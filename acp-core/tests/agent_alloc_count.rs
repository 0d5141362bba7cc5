//! R-PERM-1: a whole permission turn (handshake, session, a prompt that announces a tool call
//! and asks permission, the answer, the end of the turn, EOF) over `Fixed` storage allocates
//! nothing, with `alloc` on (`cargo test -p acp-core --test agent_alloc_count`) and off
//! (`--no-default-features`): request params are validated through the borrowed views in
//! both builds.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use acp_core::Instant;
use acp_core::conn::agent::{
    AgentConfig, AgentConnection, AgentEvent, AgentInfo, Fixed, RawToolCall, RawUpdate,
};
use acp_core::machine::turn::StopReason;
use acp_core::view::ClientRequestView;

thread_local! {
    /// Counting is on for this thread only (the test harness allocates on others).
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

struct CountingAlloc;

#[allow(unsafe_code)]
// SAFETY: forwards every call unchanged to the system allocator; only counts.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

type Storage = Fixed<1024, 2048, 1, 2, 4>;

const CLIENT: &str = concat!(
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{\"fs\":{\"readTextFile\":true}}}}\n",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/w\",\"mcpServers\":[]}}\n",
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\",\"prompt\":[{\"type\":\"text\",\"text\":\"/tool\"},{\"type\":\"resource_link\",\"uri\":\"file:///w/a\",\"name\":\"a\"}]}}\n",
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"outcome\":{\"outcome\":\"selected\",\"optionId\":\"allow_once\"}}}\n",
);
const TOOL_CALL: &str =
    r#"{"toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"}"#;
const ANNOUNCE: &str = r#"{"sessionUpdate":"tool_call","toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"}"#;
const COMPLETED: &str =
    r#"{"sessionUpdate":"tool_call_update","toolCallId":"call-1","status":"completed"}"#;

/// What the turn did, counted without allocating.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    prompts_read: u32,
    allowed: u32,
    closed: bool,
}

/// Runs the whole turn with the documented loop; the wire goes into `wire` (which has room).
fn turn(agent: &mut AgentConnection<Storage>, wire: &mut Vec<u8>) -> Seen {
    let tool_call = RawToolCall::new(TOOL_CALL, "edit write notes.txt").expect("a constant");
    let mut seen = Seen::default();
    let mut rest = CLIENT.as_bytes();
    let mut tick = 0;
    loop {
        tick += 1;
        let now = Instant(tick);
        if rest.is_empty() && !agent.is_input_held() {
            agent.handle_eof(now);
        } else {
            rest = &rest[agent.handle_bytes(now, rest)..];
        }
        while let Some(event) = agent.poll_event() {
            match event {
                AgentEvent::NewSession { ticket, .. } => {
                    agent.accept_new_session_id(ticket, "s1").unwrap()
                }
                AgentEvent::Prompt {
                    session, params, ..
                } => {
                    let Some(Ok(ClientRequestView::Prompt(prompt))) =
                        agent.request_view("session/prompt", params)
                    else {
                        panic!("a prompt view")
                    };
                    assert_eq!(prompt.prompt.iter().count(), 2);
                    seen.prompts_read += 1;
                    let announce = RawUpdate::new(ANNOUNCE).expect("a constant");
                    agent.send_update(session.as_str(), &announce).unwrap();
                    agent
                        .request_permission_raw(now, session.as_str(), &tool_call, None)
                        .unwrap();
                }
                AgentEvent::PermissionResolved {
                    session, decision, ..
                } => {
                    assert!(decision.is_allowed());
                    seen.allowed += 1;
                    let done = RawUpdate::new(COMPLETED).expect("a constant");
                    agent.send_update(session.as_str(), &done).unwrap();
                    agent
                        .end_turn(session.as_str(), StopReason::EndTurn)
                        .unwrap();
                }
                AgentEvent::Closed => seen.closed = true,
                _ => {}
            }
        }
        let out = agent.poll_transmit();
        assert!(
            wire.len() + out.len() <= wire.capacity(),
            "the test's buffer is full"
        );
        wire.extend_from_slice(out);
        let n = out.len();
        agent.transmitted(n);
        if agent.is_closed() {
            return seen;
        }
    }
}

#[test]
fn a_permission_turn_over_fixed_storage_allocates_nothing() {
    let mut agent: AgentConnection<Storage> =
        AgentConnection::new(AgentConfig::new(AgentInfo::new("tiny", "Tiny", "1")));
    let mut wire = Vec::with_capacity(8192);
    COUNTING.with(|c| c.set(true));
    let seen = turn(&mut agent, &mut wire);
    COUNTING.with(|c| c.set(false));
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    assert_eq!(
        seen,
        Seen {
            prompts_read: 1,
            allowed: 1,
            closed: true
        }
    );
    let text = String::from_utf8(wire).unwrap();
    assert!(
        text.ends_with("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}\n"),
        "{text}"
    );
    assert_eq!(allocations, 0, "allocations during the turn");
}
