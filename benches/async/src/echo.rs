//! The echo agent's logic, shared by both implementations: what a prompt's text asks for.

/// The text of every chunk of a flood: 32 bytes, as `/flood`'s default in benches/e2e.
pub const FLOOD_CHUNK: &str = "abcdefghijklmnopqrstuvwxyzabcdef";

/// A flood yields to the runtime after this many sends, as a streaming agent would (and as
/// `/flood` does in benches/e2e).
pub const YIELD_EVERY: u64 = 64;

/// What the agent answers a prompt with, before `end_turn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply<'a> {
    /// One chunk with the prompt's text.
    Echo(&'a str),
    /// `flood N`: N chunks of [`FLOOD_CHUNK`].
    Flood(u64),
}

/// Reads a prompt's text.
pub fn reply(text: &str) -> Reply<'_> {
    match text.strip_prefix("flood ").map(str::parse) {
        Some(Ok(count)) => Reply::Flood(count),
        _ => Reply::Echo(text),
    }
}
