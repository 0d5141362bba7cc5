//! Shared support for the workspace's integration tests and benchmarks.
//!
//! This package exists so the top-level `tests/` and `benches/` directories have a home.
