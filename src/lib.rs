//! Shared support for the workspace's integration tests and benchmarks.
//!
//! This package exists so the top-level `tests/` and `benches/` directories have a home. It
//! provides:
//!
//! - [`corpus`]: a deterministic generator of realistic ACP traffic (the corpora of the
//!   perf-anchors study that set our performance targets), for benchmarks and tests.
//! - [`vectors`]: the parser of the language-neutral transcript files in `vectors/`.
//! - [`rules`]: the rule ids of `docs/protocol.md`, and finding them where they are cited.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod corpus;
pub mod rules;
pub mod vectors;

/// The README's Rust examples, compiled and run as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;

/// `docs/embedding.md`'s Rust examples, likewise.
#[cfg(doctest)]
#[doc = include_str!("../docs/embedding.md")]
pub struct EmbeddingExamples;
