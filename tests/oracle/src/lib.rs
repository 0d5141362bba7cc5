//! Nothing here: the differential tests live in `tests/`.
