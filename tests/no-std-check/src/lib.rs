//! A `#![no_std]` static library with no allocator that uses acp-core's wire layer: framing
//! over a fixed buffer, the envelope scanner, and the encoder answering a rejection. If any
//! dependency of acp-core pulled in `std`, this crate would fail to build with a duplicate
//! `panic_impl` lang item.
#![no_std]

use acp_core::wire::encode::{SliceSink, write_error};
use acp_core::wire::envelope::{self, Message, LineRejection};
use acp_core::wire::frame::Framer;

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
