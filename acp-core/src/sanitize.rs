//! Making agent text safe to show on a terminal. Being written.
