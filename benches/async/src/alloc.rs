//! A counting global allocator: allocations and live bytes, split between the shared client and
//! everything else (the agent under test, its runtime glue, the in-memory pipe).
//!
//! The bench runs on one thread (a tokio current-thread runtime), so a thread-local flag set
//! while the client's own code runs tells the two apart: the client's share is the same for
//! both agents and is reported, not charged to them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

/// Wraps the system allocator and counts.
pub struct Counting;

static AGENT_ALLOCS: AtomicU64 = AtomicU64::new(0);
static CLIENT_ALLOCS: AtomicU64 = AtomicU64::new(0);
/// Bytes allocated and not yet freed, by anyone (a reallocation counts its new size).
static LIVE: AtomicI64 = AtomicI64::new(0);
/// The highest `LIVE` since the last [`reset_peak`].
static PEAK: AtomicI64 = AtomicI64::new(0);

thread_local! {
    static IN_CLIENT: Cell<bool> = const { Cell::new(false) };
}

fn count(size: usize) {
    if IN_CLIENT.with(Cell::get) {
        CLIENT_ALLOCS.fetch_add(1, Relaxed);
    } else {
        AGENT_ALLOCS.fetch_add(1, Relaxed);
    }
    grow(size as i64);
}

fn grow(by: i64) {
    let live = LIVE.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(live, Relaxed);
}

// SAFETY: every call goes straight to `System`; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as i64, Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(0);
        grow(new_size as i64 - layout.size() as i64);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` with its allocations counted as the client's.
pub fn as_client<T>(f: impl FnOnce() -> T) -> T {
    let outer = IN_CLIENT.replace(true);
    let out = f();
    IN_CLIENT.set(outer);
    out
}

/// A reading of the counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct Snapshot {
    /// Allocations (and reallocations) outside the client's code.
    pub agent_allocs: u64,
    /// Allocations (and reallocations) inside the client's code.
    pub client_allocs: u64,
    /// Live bytes now.
    pub live: i64,
}

impl Snapshot {
    /// The counters now.
    pub fn now() -> Snapshot {
        Snapshot {
            agent_allocs: AGENT_ALLOCS.load(Relaxed),
            client_allocs: CLIENT_ALLOCS.load(Relaxed),
            live: LIVE.load(Relaxed),
        }
    }
}

/// Starts a new high-water mark at the live bytes of now.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

/// The highest live bytes since the last [`reset_peak`].
pub fn peak() -> i64 {
    PEAK.load(Relaxed)
}
