//! Buffers of cotangent `Vec`s given back when a cotangent goes out of use and taken
//! again when one is made dense.
//!
//! A helper returning a `Vec`, called inside a loop, has a cotangent for its result on
//! every call: its caller's reverse sweep makes it dense (the helper's pullback is
//! given it), and the helper's pullback drops it when done. The primal allocates the
//! result once per call; without reuse the gradient allocated the cotangent once per
//! call again. Here the pullback's last use of a cotangent `Vec`
//! ([`TangentVector::reset_zero`](crate::TangentVector::reset_zero)) hands its buffer
//! to a per-thread list, and the next materialisation takes it back, so that a
//! gradient's steady state allocates no cotangent.
//!
//! Only buffers of elements of 8 bytes, aligned to 8, without drop glue (`f64`, and
//! anything laid out like it) are kept: one list serves them all, since a buffer's
//! layout is then its capacity alone. A thread keeps at most 32, of at most 65,536
//! elements each (16 MiB in all), until it exits or [`release`] runs.
//!
//! ```
//! use mochi_core::kit::recycle;
//! let mut v: Vec<f64> = Vec::with_capacity(16);
//! v.push(1.0);
//! recycle::give(v);
//! let w: Vec<f64> = recycle::take(10).expect("the buffer given back");
//! assert!(w.is_empty() && w.capacity() >= 10);
//! ```

// Moving a `Vec`'s buffer between element types of one layout is what safe Rust cannot
// say; each `unsafe` block states the layout it relies on, and the tests below give
// back and take buffers of several types.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::mem::{align_of, needs_drop, size_of, ManuallyDrop};

/// How many buffers a thread keeps.
const KEPT: usize = 32;

/// The largest buffer kept, in elements (512 KiB): a larger one costs little to allocate
/// beside its use, and keeping it would hold memory after the gradient.
const LARGEST: usize = 1 << 16;

/// A buffer given back: the pointer and capacity of a `Vec` of 8-byte elements.
struct Buffer {
    ptr: *mut u64,
    cap: usize,
}

/// The thread's buffers; freed with the thread.
#[derive(Default)]
struct Kept(Vec<Buffer>);

impl Drop for Kept {
    fn drop(&mut self) {
        for b in self.0.drain(..) {
            // SAFETY: each buffer is a `Vec` allocation of `cap` elements of 8 bytes,
            // alignment 8 (`give` keeps no other), owned by this list alone.
            drop(unsafe { Vec::from_raw_parts(b.ptr, 0, b.cap) });
        }
    }
}

thread_local! {
    static KEPT_BUFFERS: RefCell<Kept> = RefCell::new(Kept::default());
}

/// Whether `Vec<T>`'s buffers are kept: 8-byte elements aligned to 8 without drop glue.
#[inline(always)]
fn kept<T>() -> bool {
    size_of::<T>() == 8 && align_of::<T>() == 8 && !needs_drop::<T>()
}

/// Gives `v`'s buffer back for reuse (its elements are dropped first); a buffer of
/// another layout, or one beyond what the thread keeps, is freed.
#[inline]
pub fn give<T>(v: Vec<T>) {
    if !kept::<T>() || v.capacity() == 0 || v.capacity() > LARGEST {
        return;
    }
    let mut v = ManuallyDrop::new(v);
    // (No drop glue: clearing leaves nothing to drop.)
    v.clear();
    let (ptr, cap) = (v.as_mut_ptr().cast::<u64>(), v.capacity());
    let kept = KEPT_BUFFERS
        .try_with(|k| match k.try_borrow_mut() {
            Ok(mut k) if k.0.len() < KEPT => {
                k.0.push(Buffer { ptr, cap });
                true
            }
            _ => false,
        })
        .unwrap_or(false);
    if !kept {
        // SAFETY: the `Vec<T>`'s own allocation, of the layout of `cap` `u64`s (same
        // size and alignment as `T`), not kept anywhere.
        drop(unsafe { Vec::from_raw_parts(ptr, 0, cap) });
    }
}

/// An empty `Vec<T>` with room for at least `len` elements from the kept buffers, if
/// one is large enough.
#[inline]
pub fn take<T>(len: usize) -> Option<Vec<T>> {
    if !kept::<T>() {
        return None;
    }
    let b = KEPT_BUFFERS
        .try_with(|k| {
            let mut k = k.try_borrow_mut().ok()?;
            let at = k.0.iter().rposition(|b| b.cap >= len)?;
            Some(k.0.swap_remove(at))
        })
        .ok()
        .flatten()?;
    // SAFETY: the buffer was a `Vec` allocation of `cap` elements of 8 bytes aligned to
    // 8 (`give`); `T` has that size and alignment, so the layout is the same, and the
    // length 0 claims no initialised element.
    Some(unsafe { Vec::from_raw_parts(b.ptr.cast::<T>(), 0, b.cap) })
}

/// Frees the buffers this thread keeps (see [`crate::kit::tape::release_pool`], which
/// calls it).
pub fn release() {
    let _ = KEPT_BUFFERS.try_with(|k| {
        if let Ok(mut k) = k.try_borrow_mut() {
            *k = Kept::default();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_is_taken_again() {
        release();
        let v: Vec<f64> = vec![1.0; 40];
        let ptr = v.as_ptr() as usize;
        give(v);
        assert!(
            take::<f64>(41).is_none(),
            "too small a buffer is not handed out"
        );
        let w = take::<f64>(40).expect("kept");
        assert_eq!((w.len(), w.as_ptr() as usize), (0, ptr));
        assert!(take::<f64>(1).is_none(), "taken once");
        // Other layouts are not kept.
        give(vec![1.0_f32; 8]);
        assert!(take::<f32>(1).is_none());
        give(vec![String::new()]);
        assert!(take::<String>(1).is_none());
        // Nor very large buffers.
        give(vec![0.0_f64; LARGEST + 1]);
        assert!(take::<f64>(LARGEST + 1).is_none());
        release();
    }

    #[test]
    fn a_thread_keeps_a_bounded_number() {
        release();
        for _ in 0..KEPT + 5 {
            give(vec![0.0_f64; 4]);
        }
        let mut n = 0;
        while take::<f64>(4).is_some() {
            n += 1;
        }
        assert_eq!(n, KEPT);
    }
}
