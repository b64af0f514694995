//! Counting the allocations a piece of code makes, for the no-allocation check.
//!
//! The counter is per thread, so tests running in parallel do not see each other's
//! allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    // `const` initialisation and no destructor: reading it never allocates, so the
    // allocator itself can use it.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// The system allocator, counting the allocations of each thread.
///
/// A test binary that checks a pullback with
/// [`expect_no_alloc`](crate::testing::RuleTest::expect_no_alloc) installs it:
///
/// ```
/// #[global_allocator]
/// static A: mochi_core::testing::CountingAllocator = mochi_core::testing::CountingAllocator;
///
/// fn main() {
///     use mochi_core::testing::{allocations_during, counting_allocator_installed};
///     assert!(counting_allocator_installed());
///     let (v, n) = allocations_during(|| vec![1.0_f64; 3]);
///     assert_eq!((v.len(), n), (3, 1));
/// }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAllocator;

fn count_one() {
    // `try_with`: a thread being torn down may still allocate; it is not measured.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// A global allocator can only be written as an `unsafe impl` of `GlobalAlloc`; every
// method forwards unchanged to `System`, so it upholds the same contract.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

fn allocations_so_far() -> usize {
    ALLOCATIONS.with(Cell::get)
}

/// Runs `f` and returns its result with the number of allocations (including
/// reallocations) it made on this thread. Always `0` unless [`CountingAllocator`] is the
/// global allocator; see [`counting_allocator_installed`].
pub fn allocations_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = allocations_so_far();
    let result = f();
    let after = allocations_so_far();
    (result, after - before)
}

/// Whether [`CountingAllocator`] is this program's global allocator (found out by
/// making one allocation and seeing whether it was counted).
pub fn counting_allocator_installed() -> bool {
    let (probe, n) = allocations_during(|| std::hint::black_box(Box::new(1_u64)));
    drop(probe);
    n > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    // The harness's own tests use the counting allocator, like a rule crate's tests.
    #[global_allocator]
    static A: CountingAllocator = CountingAllocator;

    #[test]
    fn counts_allocations_and_reallocations() {
        assert!(counting_allocator_installed());
        let (v, n) = allocations_during(|| {
            let mut v = Vec::with_capacity(1);
            v.extend([1.0_f64]);
            v.extend([2.0]); // grows: a reallocation
            std::hint::black_box(v)
        });
        assert_eq!(v.len(), 2);
        assert_eq!(n, 2);
        let ((), none) = allocations_during(|| {
            let x = std::hint::black_box(2.0_f64);
            assert!(x.sqrt() > 1.0);
        });
        assert_eq!(none, 0);
    }

    #[test]
    fn each_thread_counts_its_own_allocations() {
        let h =
            std::thread::spawn(|| allocations_during(|| std::hint::black_box(vec![0_u8; 64])).1);
        let (_, mine) =
            allocations_during(|| (0..10).for_each(|i| drop(std::hint::black_box(vec![i; 8]))));
        assert_eq!(mine, 10);
        assert_eq!(h.join().ok(), Some(1));
    }
}
