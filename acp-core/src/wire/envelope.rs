//! TODO(skeleton): filled in by the wire-layer work.
