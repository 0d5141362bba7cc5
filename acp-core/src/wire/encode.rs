//! The encoder: JSON-RPC messages and any `Serialize` value as compact JSON, without allocation.
//!
//! Every message writer emits exactly one line ending in `\n`. Strings are escaped like
//! serde_json does (`"`, `\` and every control character, `\n` `\r` `\t` `\b` `\f` in short
//! form and the rest as `\u00XX`) and nothing else: non-ASCII text is written as raw UTF-8. So a
//! frame never holds a raw newline, and the output of [`to_sink`] is byte-identical to
//! `serde_json::to_vec` for the same value.
//!
//! Bytes go into a [`Sink`]: a `Vec<u8>` (with `alloc`), a [`SliceSink`] over a caller's
//! buffer, a `heapless::Vec`, or any `embedded_io::Write` through [`IoSink`].
//!
//! Borrowed wire values pass through verbatim: [`RawValue`](crate::wire::RawValue) as its JSON
//! text, [`JsonStr`](crate::wire::JsonStr) with its original escapes and [`Id`](crate::wire::Id)
//! with its original digits (see their `Serialize` implementations for what other serializers
//! do with them).
//!
//! Floats are formatted by zmij, as serde_json formats them; non-finite floats are `null`, as in
//! serde_json.

mod error;
mod escape;
mod message;
mod number;
mod raw_serialize;
mod ser;
mod sink;
#[cfg(all(test, feature = "std"))]
mod tests;

pub use error::{EncodeError, ValueError};
#[cfg(feature = "alloc")]
pub use escape::escape_into;
pub use message::{
    OutgoingId, TextChunkKind, write_error, write_notification, write_request, write_result,
    write_text_chunk,
};
#[cfg(feature = "alloc")]
pub use ser::to_vec;
pub use ser::{Compound, Serializer, StructCompound, to_sink, to_slice};
#[cfg(feature = "alloc")]
pub use sink::append_line;
pub use sink::{BufferFull, IoSink, IoSinkError, Sink, SliceSink, encode_line};
