//! A `#![no_std]` static library that uses acp-core's wire layer with no allocator.
#![no_std]

use acp_core::wire::ErrorCode;

/// Exported so the linker keeps the code that uses acp-core.
#[unsafe(no_mangle)]
pub extern "C" fn acp_no_std_check() -> i32 {
    ErrorCode::PARSE_ERROR.0
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
