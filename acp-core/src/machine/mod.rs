//! Pure protocol state machines: (state, input, now) -> (state, outputs). Being written.
