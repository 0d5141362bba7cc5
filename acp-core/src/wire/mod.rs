//! The wire layer: bytes to lines, lines to JSON-RPC envelopes, and messages back to bytes.
//!
//! Nothing here allocates. The pieces, in the order bytes flow through them:
//!
//! 1. [`frame`]: the NDJSON framer splits a byte stream into lines, bounded by a maximum
//!    line length, with invalid UTF-8 reported per line.
//! 2. [`json`]: a validating, zero-copy JSON scanner: raw spans of values, object and array
//!    iteration, and unescaping on demand.
//! 3. [`envelope`]: classifies one line as a request, notification or response, or tells the
//!    caller the exact JSON-RPC error reply an invalid line deserves.
//! 4. [`encode`]: writes requests, notifications, results and errors as compact lines.

pub mod encode;
pub mod envelope;
pub mod frame;
pub mod json;

mod error_code;
mod id;
mod raw;

pub use error_code::ErrorCode;
pub use id::Id;
pub use raw::{JsonStr, RawValue};
