//! Bytes allocated per gradient call, counted by a global allocator the binary installs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static COUNTING: AtomicBool = AtomicBool::new(false);
static BYTES: AtomicU64 = AtomicU64::new(0);
static SEEN: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting the bytes requested while [`bytes_during`] runs
/// (one relaxed load per allocation otherwise). Install it in a binary with
/// `#[global_allocator] static A: CountingAllocator = CountingAllocator;`.
pub struct CountingAllocator;

fn count(bytes: usize) {
    SEEN.store(true, Ordering::Relaxed);
    if COUNTING.load(Ordering::Relaxed) {
        BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged;
// counting touches only atomics and never allocates.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded as received.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size.saturating_sub(layout.size()));
        // SAFETY: forwarded as received.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Whether [`CountingAllocator`] is this process's global allocator.
pub fn installed() -> bool {
    drop(std::hint::black_box(Box::new(0u64)));
    SEEN.load(Ordering::Relaxed)
}

/// Bytes requested from the allocator while `f` runs (growth only for `realloc`), or
/// `None` when the counting allocator is not installed. Not re-entrant; the suite
/// runs one routine at a time.
pub fn bytes_during(f: impl FnOnce()) -> Option<u64> {
    if !installed() {
        return None;
    }
    BYTES.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    f();
    COUNTING.store(false, Ordering::Relaxed);
    Some(BYTES.load(Ordering::Relaxed))
}
