//! Typed ACP v1 messages (owned, under `alloc`). Being written.
