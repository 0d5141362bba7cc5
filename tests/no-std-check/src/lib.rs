//! A `#![no_std]` static library with no allocator that uses acp-core's wire layer (framing
//! over a fixed buffer, the envelope scanner, and the encoder answering a rejection) and a whole
//! `AgentConnection` over `Fixed` storage. If any dependency of acp-core pulled in `std`, this
//! crate would fail to build with a duplicate `panic_impl` lang item.
#![no_std]

use acp_core::prelude::*;
use acp_core::wire::encode::{SliceSink, write_error};
use acp_core::wire::envelope::{self, LineRejection, Message};
use acp_core::wire::frame::Framer;

/// A one-session agent: 4 KiB lines, a 4 KiB outbox, 2 requests each way, 4 queued events.
type Storage = Fixed<4096, 4096, 1, 2, 4>;

/// Runs an agent over `input` (NDJSON from a client) and copies what it writes into `out`:
/// sessions are accepted as `s1`, prompts answered with one chunk and `end_turn`. Returns the
/// bytes written, or -1 if `out` was too small.
fn run_agent(input: &[u8], out: &mut [u8]) -> i32 {
    let mut agent: AgentConnection<Storage> = AgentConnection::new(AgentConfig::new(
        AgentInfo::new("mcu", "MCU agent", "0.1.0"),
    ));
    let now = Instant(0);
    let mut written = 0;
    let mut rest = input;
    loop {
        let taken = agent.handle_bytes(now, rest);
        rest = &rest[taken..];
        if rest.is_empty() && !agent.is_input_held() {
            agent.handle_eof(now);
        }
        while let Some(event) = agent.poll_event() {
            match event {
                AgentEvent::NewSession { ticket, .. } => {
                    let _ = agent.accept_new_session_id(ticket, "s1");
                }
                AgentEvent::Prompt { session, .. } => {
                    if let Some(chunk) = RawUpdate::new(
                        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}"#,
                    ) {
                        let _ = agent.send_update(session.as_str(), &chunk);
                    }
                    let _ = agent.end_turn(session.as_str(), StopReason::EndTurn);
                }
                _ => {}
            }
        }
        let pending = agent.poll_transmit();
        let n = pending.len();
        let Some(slot) = out.get_mut(written..written + n) else {
            return -1;
        };
        slot.copy_from_slice(pending);
        written += n;
        agent.transmitted(n);
        if agent.is_closed() {
            return written as i32;
        }
    }
}

/// Exported so the linker keeps the agent.
///
/// # Safety
///
/// `input` must point to `input_len` readable bytes and `out` to `out_len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_no_std_agent(
    input: *const u8,
    input_len: usize,
    out: *mut u8,
    out_len: usize,
) -> i32 {
    // SAFETY: the caller guarantees both regions are valid for the given lengths.
    let (input, out) = unsafe {
        (
            core::slice::from_raw_parts(input, input_len),
            core::slice::from_raw_parts_mut(out, out_len),
        )
    };
    run_agent(input, out)
}

/// Frames `input`, scans every line and writes a reply for each rejected one into `out`.
/// Returns the number of requests seen, or -1 if `out` was too small.
fn process(input: &[u8], out: &mut [u8]) -> i32 {
    let mut framer = Framer::new([0u8; 256], 256);
    let mut sink = SliceSink::new(out);
    let mut requests = 0;
    let mut rest = input;
    loop {
        rest = &rest[framer.feed(rest)..];
        if rest.is_empty() {
            framer.finish();
        }
        while let Some(line) = framer.next_line() {
            let verdict = match line {
                Ok(line) => {
                    envelope::scan(line).map(|message| matches!(message, Message::Request(_)))
                }
                Err(error) => Err(LineRejection::from_frame_error(error)),
            };
            match verdict {
                Ok(true) => requests += 1,
                Ok(false) => {}
                Err(rejection) => {
                    if write_error(
                        &mut sink,
                        rejection.id,
                        rejection.code,
                        &rejection,
                        None::<&()>,
                    )
                    .is_err()
                    {
                        return -1;
                    }
                }
            }
        }
        if rest.is_empty() {
            return requests;
        }
    }
}

/// Exported so the linker keeps the code that uses acp-core.
///
/// # Safety
///
/// `input` must point to `input_len` readable bytes and `out` to `out_len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_no_std_check(
    input: *const u8,
    input_len: usize,
    out: *mut u8,
    out_len: usize,
) -> i32 {
    // SAFETY: the caller guarantees both regions are valid for the given lengths.
    let (input, out) = unsafe {
        (
            core::slice::from_raw_parts(input, input_len),
            core::slice::from_raw_parts_mut(out, out_len),
        )
    };
    process(input, out)
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
