//! The tape of a loop: a LIFO [`Stack`] of saved values (pullbacks, primal values)
//! whose buffer is reused from one gradient to the next, so that steady-state gradient
//! calls do not allocate.
//!
//! A rule that runs a derived closure once per element (`iter().map(f).sum()`) pushes
//! each element's pullback in the forward sweep and pops them in reverse:
//!
//! ```
//! use mochi_core::kit::tape::{Site, Stack};
//! static SITE: Site = Site::new(); // one `static` per place that saves
//! let mut saved = Stack::new(&SITE);
//! for v in [1.0_f64, 2.0, 3.0] {
//!     saved.push(v);
//! }
//! assert_eq!((saved.pop(), saved.pop(), saved.pop()), (3.0, 2.0, 1.0));
//! ```
//!
//! `#[differentiable]`-generated code uses the same stack for loops.
//!
//! # Where the buffers live
//!
//! A helper called inside a loop opens its stacks once per call: a GMM objective's
//! `qtimesx` over 1 000 points and 10 components opens 50 000 small stacks per gradient,
//! all alive until the reverse sweep. Each small stack is therefore *carved* from a
//! per-thread chunk, one after the other, so that the stacks of consecutive calls sit
//! side by side in memory and the reverse sweep reads them back as it would read one
//! long tape (separate heap buffers, scattered, made that reverse sweep wait on memory
//! and cost 2.5 times the same code with the helper inlined). A site remembers the
//! capacity its stacks needed, so a stack is carved at the size it will fill. A chunk
//! is reused from its start once no stack holds a part of it, that is, once the
//! gradient that carved it is done. Large stacks (one loop of many trips) keep a
//! buffer of their own, taken from and given back to a per-thread pool keyed by site.

// Carving small stacks out of shared chunks is the one thing here that safe Rust cannot
// say; every `unsafe` block states what it relies on, and the tests below exercise
// growth, reuse, drops of unpopped values and drops on another thread.
#![allow(unsafe_code)]

use std::alloc::Layout;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// The identity of one save site in generated code: a `static` whose address keys the
/// buffer pool, and which remembers the capacity the site's stacks needed, so that
/// each new stack starts with the room it will use.
pub struct Site {
    hint: AtomicUsize,
    /// The largest peak of the current window, and how many stacks it has seen.
    recent: AtomicUsize,
    count: AtomicUsize,
}

impl Site {
    /// A new site (one `static` per site).
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Site {
            hint: AtomicUsize::new(0),
            recent: AtomicUsize::new(0),
            count: AtomicUsize::new(0),
        }
    }
    fn key(&'static self) -> usize {
        self as *const Site as usize
    }

    /// A stack of this site held `len` values at its peak. The room stacks are carved
    /// with is the largest peak of a window of the site's last [`SITE_WINDOW`] stacks
    /// (and an eighth more), set when the window closes: a site whose need shrinks, as
    /// a helper's loops do when it is called on shorter rows after longer ones, stops
    /// carving room it never uses (which spread its values apart and missed the
    /// cache), and one whose need alternates (a helper called per layer of different
    /// widths) keeps the largest. Growth past the room raises it at once (`grow`).
    #[inline(always)]
    fn note(&self, len: usize) {
        if len > self.recent.load(Ordering::Relaxed) {
            self.recent.store(len, Ordering::Relaxed);
        }
        let n = self.count.load(Ordering::Relaxed) + 1;
        if n >= SITE_WINDOW {
            self.close_window();
        } else {
            self.count.store(n, Ordering::Relaxed);
        }
    }

    #[cold]
    #[inline(never)]
    fn close_window(&self) {
        let peak = self.recent.swap(0, Ordering::Relaxed);
        self.count.store(0, Ordering::Relaxed);
        self.hint.store(peak + peak / 8 + 1, Ordering::Relaxed);
    }
}

/// How many stacks of a site make the window whose largest peak sets its room.
const SITE_WINDOW: usize = 256;

/// A LIFO stack of saved values. Its buffer is carved from a per-thread chunk (small
/// stacks) or taken from a per-thread pool keyed by the save site (large ones), so that
/// steady-state gradient calls do not allocate.
pub struct Stack<T: 'static> {
    ptr: NonNull<T>,
    len: usize,
    cap: usize,
    /// `Some`: the buffer is a part of this chunk, on which the stack holds one count
    /// (a pointer, so that the stack has no field with drop glue whose address would
    /// escape and keep the stack out of registers). `None`: the buffer, if `cap > 0` and `T` is
    /// not zero-sized, is a `Vec<T>`'s, given back to the pool on drop.
    chunk: Option<NonNull<Chunk>>,
    site: &'static Site,
    _owns: PhantomData<T>,
}

// SAFETY: a stack owns its elements and its buffer (a part of a chunk no other stack
// uses, or a heap buffer of its own), like a `Vec<T>`; the chunk is shared only to know
// when the whole chunk is free, and its count is safe to give up on any thread
// (`release_chunk`).
unsafe impl<T: Send> Send for Stack<T> {}
// SAFETY: as for `Send`; `&Stack` gives no access to the elements.
unsafe impl<T: Sync> Sync for Stack<T> {}

/// Stacks whose site needs more than this many bytes get a buffer of their own.
const CARVE_MAX_BYTES: usize = 16 * 1024;
/// The alignment of chunks (and the largest element alignment carved from them).
const CHUNK_ALIGN: usize = 64;
/// The smallest chunk.
const CHUNK_MIN_BYTES: usize = 64 * 1024;

/// A block of memory small stacks are carved from, with the count of the stacks (and
/// the arena) that hold a part of it.
///
/// The count is biased to the thread that carved the chunk: its stacks take and give
/// up their holds with a plain (non-atomic) count, and only a stack dropped on another
/// thread pays an atomic operation. (An `Arc` per chunk cost two atomic operations
/// per stack, a tenth of a gradient whose helper is called inside a loop.) Only the
/// owner thread's arena frees a chunk while the owner lives; when it exits, the chunks
/// still held are handed to the other threads' count (`orphan`), and the thread that
/// gives up the last hold frees the chunk.
struct Chunk {
    base: NonNull<u8>,
    size: usize,
    /// The tag of the thread whose arena carved the chunk ([`thread_tag`]).
    owner: u64,
    /// Holds taken, less those given up on the owner thread. Read and written on the
    /// owner thread only, and never again once `orphaned` is set.
    holds: std::cell::Cell<usize>,
    /// Set by the owner thread when it exits: from then on every release counts in
    /// `foreign`.
    orphaned: AtomicBool,
    /// Holds given up on other threads (and, once orphaned, on any thread), with the
    /// [`ORPHAN`] bit set when the owner handed the chunk over.
    foreign: AtomicUsize,
    /// `holds` at the hand-over: the chunk is free when `foreign` reaches it.
    total: AtomicUsize,
}

/// The bit of `Chunk::foreign` that says the owner thread has handed the chunk over.
const ORPHAN: usize = 1 << (usize::BITS - 1);

// SAFETY: `base` is a plain allocation whose parts are used by one stack each; the
// non-atomic `holds` is touched by the owner thread only (and by no thread once the
// chunk is orphaned), which `release_chunk` checks by the thread's tag; the other
// fields are atomic or never written after creation.
unsafe impl Send for Chunk {}
// SAFETY: as for `Send`.
unsafe impl Sync for Chunk {}

impl Chunk {
    /// A new chunk of `size` bytes, held once (by the arena).
    fn new(size: usize) -> Option<NonNull<Chunk>> {
        let layout = Layout::from_size_align(size, CHUNK_ALIGN).ok()?;
        // SAFETY: the layout's size is at least CHUNK_MIN_BYTES > 0.
        let base = NonNull::new(unsafe { std::alloc::alloc(layout) })?;
        let chunk = Box::new(Chunk {
            base,
            size,
            owner: thread_tag(),
            holds: std::cell::Cell::new(1),
            orphaned: AtomicBool::new(false),
            foreign: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
        });
        #[cfg(test)]
        tests::count_chunk(chunk.owner, 1);
        Some(NonNull::from(Box::leak(chunk)))
    }

    /// No hold is left (the arena's own included, if `arena` is 1; on the owner thread).
    fn unheld(&self, arena: usize) -> bool {
        self.holds.get() == arena + self.foreign.load(Ordering::Acquire)
    }
}

/// Frees a chunk no stack holds.
///
/// # Safety
///
/// `chunk` came from [`Chunk::new`], no hold on it is left, and it is freed once.
unsafe fn free_chunk(chunk: NonNull<Chunk>) {
    // SAFETY: (the caller's) the header is a leaked `Box` and the block was allocated
    // in `Chunk::new` with this size and alignment.
    unsafe {
        let c = Box::from_raw(chunk.as_ptr());
        #[cfg(test)]
        tests::count_chunk(c.owner, -1);
        std::alloc::dealloc(
            c.base.as_ptr(),
            Layout::from_size_align_unchecked(c.size, CHUNK_ALIGN),
        );
    }
}

/// Hands a chunk the owner thread no longer holds (its arena's hold given up) to the
/// other threads' count: the last release frees it (now, if none is left).
///
/// # Safety
///
/// On the owner thread, once per chunk.
unsafe fn orphan(chunk: NonNull<Chunk>) {
    // SAFETY: (the caller's) alive: the count has not reached zero.
    let c = unsafe { chunk.as_ref() };
    let holds = c.holds.get();
    c.total.store(holds, Ordering::Relaxed);
    c.orphaned.store(true, Ordering::Relaxed);
    // Publishes `total` to the threads whose release sees the bit.
    let released = c.foreign.fetch_or(ORPHAN, Ordering::AcqRel);
    if released == holds {
        // SAFETY: every hold was given up before the hand-over; none can be taken.
        unsafe { free_chunk(chunk) };
    }
}

/// A number for this thread, distinct from every other thread's (never reused).
#[inline(always)]
fn thread_tag() -> u64 {
    TAG.with(|t| match t.get() {
        0 => {
            static NEXT: AtomicU64 = AtomicU64::new(1);
            let tag = NEXT.fetch_add(1, Ordering::Relaxed);
            t.set(tag);
            tag
        }
        tag => tag,
    })
}

/// This thread's current chunk, how much of it is carved, and the earlier chunks some
/// stack still holds.
#[derive(Default)]
struct Arena {
    chunk: Option<NonNull<Chunk>>,
    used: usize,
    retired: Vec<NonNull<Chunk>>,
}

impl Arena {
    /// `bytes` at alignment `align` (≤ CHUNK_ALIGN), from the current chunk or a new,
    /// larger one; the caller holds the chunk.
    fn carve(&mut self, bytes: usize, align: usize) -> Option<(NonNull<u8>, NonNull<Chunk>)> {
        if let Some(cp) = self.chunk {
            // SAFETY: the arena holds its current chunk.
            let c = unsafe { cp.as_ref() };
            // No stack holds a part of the chunk any more: start it over. (The acquire
            // load synchronises with the drops of stacks other threads ran.)
            if self.used > 0 && c.unheld(1) {
                c.holds.set(1);
                c.foreign.store(0, Ordering::Relaxed);
                self.used = 0;
            }
            let start = self.used.checked_add(align - 1)? & !(align - 1);
            if start.checked_add(bytes)? <= c.size {
                self.used = start + bytes;
                c.holds.set(c.holds.get() + 1);
                // SAFETY: `start + bytes <= size`: inside the allocation.
                let p = unsafe { NonNull::new_unchecked(c.base.as_ptr().add(start)) };
                return Some((p, cp));
            }
        }
        // SAFETY: the arena holds its current chunk.
        let old = self.chunk.map_or(0, |c| unsafe { c.as_ref() }.size);
        let size = CHUNK_MIN_BYTES
            .max(old.checked_mul(2)?)
            .max(bytes.checked_next_power_of_two()?);
        let cp = Chunk::new(size)?;
        if let Some(old) = self.chunk.replace(cp) {
            // The old chunk is freed once the last stack carved from it drops.
            // SAFETY: the arena held it; its hold is given up here, on the owner thread.
            unsafe { old.as_ref() }
                .holds
                .set(unsafe { old.as_ref() }.holds.get() - 1);
            self.retired.push(old);
        }
        self.sweep();
        // SAFETY: just made, held by the arena.
        let c = unsafe { cp.as_ref() };
        c.holds.set(c.holds.get() + 1);
        self.used = bytes;
        Some((c.base, cp))
    }

    /// Frees the retired chunks no stack holds any more.
    fn sweep(&mut self) {
        self.retired.retain(|&cp| {
            // SAFETY: a retired chunk is alive until freed here (its owner's arena
            // frees it; it is not orphaned while the arena lives).
            if unsafe { cp.as_ref() }.unheld(0) {
                // SAFETY: no hold is left, and the chunk leaves the list.
                unsafe { free_chunk(cp) };
                false
            } else {
                true
            }
        });
    }
}

impl Drop for Arena {
    /// The thread exits (or [`release_pool`] runs): the chunks some stack still holds
    /// go to the other threads' count, the rest are freed.
    fn drop(&mut self) {
        if let Some(cp) = self.chunk.take() {
            // SAFETY: the arena held its current chunk; on the owner thread.
            unsafe { cp.as_ref() }
                .holds
                .set(unsafe { cp.as_ref() }.holds.get() - 1);
            self.retired.push(cp);
        }
        for cp in self.retired.drain(..) {
            // SAFETY: on the owner thread, once per chunk (it leaves the arena).
            unsafe { orphan(cp) };
        }
    }
}

type PoolKey = (std::any::TypeId, usize);

/// A multiply-rotate hasher for the pool's keys (a type id and an address): the pool is
/// looked up whenever a large stack opens, where SipHash cost more than the work saved.
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    #[inline(always)]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    #[inline(always)]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline(always)]
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

type Pool = std::collections::HashMap<
    PoolKey,
    Box<dyn std::any::Any>,
    std::hash::BuildHasherDefault<KeyHasher>,
>;

thread_local! {
    static POOL: std::cell::RefCell<Pool> = std::cell::RefCell::new(Pool::default());
    static ARENA: std::cell::RefCell<Arena> = std::cell::RefCell::new(Arena::default());
    static TAG: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Large buffers kept per site: a helper called inside a loop has one live stack per
/// call until the reverse sweep, and a pool shallower than that made every call beyond
/// it allocate and grow its buffers anew on every gradient; the pool keeps what the
/// largest computation on this thread needed, which [`release_pool`] gives back.
const POOL_DEPTH: usize = 1 << 20;

/// Frees the buffers this thread keeps for reuse (the next gradient allocates them
/// again). For a long-running thread that computed one very large gradient and will
/// not compute another.
///
/// ```
/// use mochi_core::kit::tape::{release_pool, Site, Stack};
/// static SITE: Site = Site::new();
/// let mut s = Stack::new(&SITE);
/// s.push(1.0_f64);
/// drop(s); // the buffer goes back to the pool
/// release_pool(); // and is freed
/// ```
pub fn release_pool() {
    let _ = POOL.try_with(|pool| {
        if let Ok(mut pool) = pool.try_borrow_mut() {
            *pool = Pool::default();
        }
    });
    let _ = ARENA.try_with(|arena| {
        if let Ok(mut arena) = arena.try_borrow_mut() {
            *arena = Arena::default();
        }
    });
    super::recycle::release();
}

impl<T: 'static> Stack<T> {
    /// A stack for the save site `site`, with the room the site's stacks needed before.
    #[inline]
    pub fn new(site: &'static Site) -> Self {
        let mut s = Stack {
            ptr: NonNull::dangling(),
            len: 0,
            cap: if size_of::<T>() == 0 { usize::MAX } else { 0 },
            chunk: None,
            site,
            _owns: PhantomData,
        };
        if size_of::<T>() == 0 {
            return s;
        }
        let hint = site.hint.load(Ordering::Relaxed);
        if hint == 0 {
            return s;
        }
        let small = hint
            .checked_mul(size_of::<T>())
            .filter(|&b| b <= CARVE_MAX_BYTES && align_of::<T>() <= CHUNK_ALIGN);
        if let Some(bytes) = small {
            let carved = ARENA
                .try_with(|a| a.try_borrow_mut().ok()?.carve(bytes, align_of::<T>()))
                .ok()
                .flatten();
            if let Some((p, chunk)) = carved {
                s.ptr = p.cast();
                s.cap = hint;
                s.chunk = Some(chunk);
                return s;
            }
        }
        let pooled = POOL
            .try_with(|pool| {
                let mut pool = pool.try_borrow_mut().ok()?;
                pool.get_mut(&(std::any::TypeId::of::<T>(), site.key()))
                    .and_then(|b| b.downcast_mut::<Vec<Vec<T>>>())
                    .and_then(|v| v.pop())
            })
            .ok()
            .flatten();
        // The room is the recent peak and an eighth: a buffer within a fifth of it
        // holds the peak. A smaller one (pooled before the site's need grew) is freed;
        // the first push then takes one buffer of the site's room (`grow`).
        if let Some(v) = pooled.filter(|v| v.capacity() >= hint - hint / 5) {
            (s.ptr, s.cap) = adopt(v);
        }
        s
    }

    /// Saves a value.
    #[inline(always)]
    pub fn push(&mut self, v: T) {
        // Zero-sized values (the pullbacks of `+`, `-`) only count: no room to check,
        // so that a loop of them folds to one addition.
        if size_of::<T>() != 0 && self.len == self.cap {
            self.grow();
        }
        // SAFETY: `len < cap`: inside the buffer, and not initialised.
        unsafe { self.ptr.as_ptr().add(self.len).write(v) };
        self.len += 1;
    }

    /// A cold method (growth by value, as a function returning the new buffer, made
    /// `naive_map_sin_cos_exp` 25% slower).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let (ptr, cap) = grow(self.ptr, self.len, self.cap, self.chunk.take(), self.site);
        self.ptr = ptr;
        self.cap = cap;
    }

    /// At the end of the forward sweep (the stack at its peak): tells the site how
    /// much room its stacks need (see `Site::note`), so that its stacks are carved at
    /// the size recent ones needed rather than the largest any stack ever needed.
    #[inline(always)]
    pub fn settle(&self) {
        if size_of::<T>() != 0 {
            self.site.note(self.len);
        }
    }

    /// Takes the last saved value.
    #[inline(always)]
    pub fn pop(&mut self) -> T {
        if self.len == 0 {
            unreachable!("mochi: the reverse sweep popped more than the forward sweep pushed")
        }
        self.len -= 1;
        // SAFETY: elements `..len+1` are initialised; the one read out is no longer
        // counted.
        unsafe { self.ptr.as_ptr().add(self.len).read() }
    }
}

/// Takes `v`'s buffer (empty): its pointer and capacity.
fn adopt<T>(v: Vec<T>) -> (NonNull<T>, usize) {
    debug_assert!(v.is_empty());
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: a `Vec`'s pointer is never null.
    (
        unsafe { NonNull::new_unchecked(v.as_mut_ptr()) },
        v.capacity(),
    )
}

/// Moves a full stack's `len` elements into a buffer of twice the room, of its own,
/// gives up the old buffer, and tells the site how much room its stacks need.
#[cold]
#[inline(never)]
fn grow<T: 'static>(
    ptr: NonNull<T>,
    len: usize,
    cap: usize,
    chunk: Option<NonNull<Chunk>>,
    site: &'static Site,
) -> (NonNull<T>, usize) {
    // An empty stack takes its site's room at once, not 4, 8, 16, … by copies.
    let new_cap = cap
        .checked_mul(2)
        .expect("mochi: tape too long")
        .max(4)
        .max(site.hint.load(Ordering::Relaxed));
    let mut v = Vec::<T>::with_capacity(new_cap);
    // SAFETY: the `len` initialised elements move to the new buffer, which has room.
    unsafe { std::ptr::copy_nonoverlapping(ptr.as_ptr(), v.as_mut_ptr(), len) };
    match chunk {
        Some(c) => release_chunk(c),
        // Too small for this site: freed, not pooled (a pooled buffer too small would
        // be taken by the next stack and outgrown again, one allocation per stack).
        None if cap > 0 => {
            // SAFETY: a buffer not carved from a chunk is a `Vec<T>`'s of capacity
            // `cap`; its elements moved out above.
            drop(unsafe { Vec::from_raw_parts(ptr.as_ptr(), 0, cap) });
        }
        None => {}
    }
    site.hint.fetch_max(new_cap, Ordering::Relaxed);
    adopt(v)
}

/// Gives up a stack's buffer, its elements gone: its hold on a chunk, or a `Vec`
/// buffer (capacity `cap > 0`), which goes back to the pool.
#[inline(always)]
fn release<T: 'static>(
    ptr: NonNull<T>,
    cap: usize,
    chunk: Option<NonNull<Chunk>>,
    site: &'static Site,
) {
    match chunk {
        Some(c) => release_chunk(c),
        None if cap > 0 => give_back(ptr, cap, site),
        None => {}
    }
}

/// Gives up a stack's hold on its chunk: a plain count on the thread that carved it,
/// an atomic one elsewhere (see [`Chunk`]).
#[inline(always)]
fn release_chunk(chunk: NonNull<Chunk>) {
    // SAFETY: the stack's hold keeps the chunk alive until given up here, once.
    let c = unsafe { chunk.as_ref() };
    if c.owner == thread_tag() && !c.orphaned.load(Ordering::Relaxed) {
        c.holds.set(c.holds.get() - 1);
    } else {
        release_foreign(chunk);
    }
}

/// Gives up a hold on a chunk on a thread other than its owner, or after the owner's
/// exit: the release that brings the count to the hand-over's total frees the chunk.
#[cold]
#[inline(never)]
fn release_foreign(chunk: NonNull<Chunk>) {
    // SAFETY: the caller's hold keeps the chunk alive until the `fetch_add`.
    let c = unsafe { chunk.as_ref() };
    let before = c.foreign.fetch_add(1, Ordering::AcqRel);
    if before & ORPHAN != 0 && (before & !ORPHAN) + 1 == c.total.load(Ordering::Acquire) {
        // SAFETY: orphaned, and this was the last hold.
        unsafe { free_chunk(chunk) };
    }
}

/// Gives a `Vec<T>` buffer of capacity `cap` (its elements gone) back to the pool.
#[inline(never)]
fn give_back<T: 'static>(ptr: NonNull<T>, cap: usize, site: &'static Site) {
    // SAFETY: a buffer not carved from a chunk is a `Vec<T>`'s of capacity `cap`, whose
    // elements are gone.
    let items = unsafe { Vec::from_raw_parts(ptr.as_ptr(), 0, cap) };
    let key = (std::any::TypeId::of::<T>(), site.key());
    let _ = POOL.try_with(|pool| {
        let Ok(mut pool) = pool.try_borrow_mut() else {
            return;
        };
        let entry = pool
            .entry(key)
            .or_insert_with(|| Box::new(Vec::<Vec<T>>::with_capacity(4)));
        if let Some(v) = entry.downcast_mut::<Vec<Vec<T>>>() {
            if v.len() < POOL_DEPTH {
                v.push(items);
            }
        }
    });
}

impl<T: 'static> Drop for Stack<T> {
    #[inline]
    fn drop(&mut self) {
        if std::mem::needs_drop::<T>() {
            // SAFETY: elements `..len` are initialised and dropped once.
            unsafe {
                std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(
                    self.ptr.as_ptr(),
                    self.len,
                ))
            };
        }
        if size_of::<T>() == 0 {
            return;
        }
        release(self.ptr, self.cap, self.chunk, self.site);
    }
}

/// One value of a loop trip's record, read back by the reverse sweep where it would
/// have popped the value's own [`Stack`]: `#[differentiable]` code saves the values a
/// loop body saves on every trip as one tuple per trip, and unpacks it into these.
///
/// ```
/// use mochi_core::kit::tape::Saved;
/// let mut v = Saved::new(2.5_f64);
/// assert_eq!(v.pop(), 2.5);
/// ```
pub struct Saved<T>(Option<T>);

impl<T> Saved<T> {
    /// Holds `v`.
    #[inline(always)]
    pub fn new(v: T) -> Self {
        Saved(Some(v))
    }
    /// Takes the value (once).
    #[inline(always)]
    pub fn pop(&mut self) -> T {
        match self.0.take() {
            Some(v) => v,
            None => unreachable!("mochi: the reverse sweep read a saved value twice"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    /// Chunks alive, by the tag of the thread that carved them.
    static LIVE: std::sync::Mutex<Vec<(u64, isize)>> = std::sync::Mutex::new(Vec::new());

    pub(super) fn count_chunk(owner: u64, by: isize) {
        let mut live = LIVE.lock().unwrap();
        match live.iter_mut().find(|(o, _)| *o == owner) {
            Some((_, n)) => *n += by,
            None => live.push((owner, by)),
        }
    }

    fn live_chunks(owner: u64) -> isize {
        let live = LIVE.lock().unwrap();
        live.iter()
            .find(|(o, _)| *o == owner)
            .map_or(0, |(_, n)| *n)
    }

    /// Stacks carved on a thread that exits while they live elsewhere: the last one
    /// dropped frees the chunks, whichever thread drops it; and chunks outgrown while
    /// their stacks live are freed once the stacks are gone.
    #[test]
    fn chunks_are_freed_by_the_last_holder() {
        static SMALL: Site = Site::new();
        static BIG: Site = Site::new();
        let (tag, mut kept) = std::thread::spawn(|| {
            let mut kept = Vec::new();
            // Learn the room (the first stack of a site is not carved), then carve
            // more than one chunk holds, so that the first chunks are outgrown.
            for round in 0..2 {
                for k in 0..3000 {
                    let mut s = Stack::new(if k % 2 == 0 { &SMALL } else { &BIG });
                    for j in 0..(if k % 2 == 0 { 4 } else { 200 }) {
                        s.push((k * 1000 + j) as f64);
                    }
                    if round == 1 {
                        kept.push(s);
                    }
                }
            }
            (thread_tag(), kept)
        })
        .join()
        .unwrap();
        // The owner has exited; its chunks live while its stacks do.
        assert!(live_chunks(tag) >= 2, "{}", live_chunks(tag));
        let last = kept.pop().unwrap();
        std::thread::spawn(move || drop(kept)).join().unwrap();
        assert!(live_chunks(tag) >= 1);
        let mut last = last;
        assert_eq!(last.pop(), (2999 * 1000 + 199) as f64);
        drop(last);
        assert_eq!(live_chunks(tag), 0);

        // Outgrown chunks, on a thread that lives on: freed by its arena once their
        // stacks are gone, at the next new chunk.
        std::thread::spawn(|| {
            let tag = thread_tag();
            static SITE: Site = Site::new();
            let mut held = Vec::new();
            for _ in 0..2000 {
                let mut s = Stack::new(&SITE);
                for j in 0..100 {
                    s.push(j as f64);
                }
                held.push(s);
            }
            let grown = live_chunks(tag);
            assert!(grown >= 3, "{grown}");
            drop(held);
            let mut more = Vec::new();
            for _ in 0..4000 {
                let mut s = Stack::new(&SITE);
                s.push(1.0_f64);
                more.push(s);
            }
            assert!(live_chunks(tag) < grown, "the outgrown chunks are freed");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn lifo_across_growth_and_reuse() {
        static SITE: Site = Site::new();
        for round in 0..4 {
            let mut s = Stack::new(&SITE);
            for i in 0..(100 * (round + 1)) {
                s.push(i as f64);
            }
            for i in (0..(100 * (round + 1))).rev() {
                assert_eq!(s.pop(), i as f64);
            }
        }
        assert!(SITE.hint.load(Ordering::Relaxed) >= 400);
    }

    #[test]
    fn carved_stacks_side_by_side_keep_their_values() {
        type Call = (Stack<u64>, Stack<(f64, f64)>);
        static A: Site = Site::new();
        static B: Site = Site::new();
        // First round learns the sizes; the next ones carve.
        for _ in 0..3 {
            let mut stacks: Vec<Call> = Vec::new();
            for call in 0..500u64 {
                let mut a = Stack::new(&A);
                let mut b = Stack::new(&B);
                for j in 0..(call % 7 + 3) {
                    a.push(call * 100 + j);
                    b.push((call as f64, j as f64));
                }
                stacks.push((a, b));
            }
            for call in (0..500u64).rev() {
                let (mut a, mut b) = stacks.pop().unwrap();
                for j in (0..(call % 7 + 3)).rev() {
                    assert_eq!(a.pop(), call * 100 + j);
                    assert_eq!(b.pop(), (call as f64, j as f64));
                }
            }
        }
    }

    #[test]
    fn unpopped_values_are_dropped_once() {
        static SITE: Site = Site::new();
        let token = Rc::new(());
        for _ in 0..3 {
            let mut s = Stack::new(&SITE);
            for _ in 0..10 {
                s.push(Rc::clone(&token));
            }
            let _ = s.pop();
            drop(s);
            assert_eq!(Rc::strong_count(&token), 1);
        }
    }

    /// The room a site's stacks are carved with follows the last window's largest
    /// peak: down after a long run of small stacks, up at once past it, and not below
    /// a large peak inside the window.
    #[test]
    fn carved_room_follows_the_recent_peaks() {
        static SITE: Site = Site::new();
        let run = |peak: usize| {
            let mut s = Stack::<f64>::new(&SITE);
            let cap = s.cap;
            for k in 0..peak {
                s.push(k as f64);
            }
            s.settle();
            for k in (0..peak).rev() {
                assert_eq!(s.pop(), k as f64);
            }
            cap
        };
        run(1000);
        for _ in 0..SITE_WINDOW {
            run(1000);
        }
        assert!(run(10) >= 1000, "the room of the last window's peak");
        for _ in 0..2 * SITE_WINDOW {
            run(10);
        }
        let small = run(10);
        assert!(
            (10..=20).contains(&small),
            "shrunk to the small peaks: {small}"
        );
        // alternating peaks keep the larger
        for k in 0..2 * SITE_WINDOW {
            run(if k % 3 == 0 { 200 } else { 10 });
        }
        assert!(run(10) >= 200);
    }

    #[test]
    fn zero_sized_values_count() {
        static SITE: Site = Site::new();
        let mut s = Stack::new(&SITE);
        for _ in 0..1000 {
            s.push(());
        }
        for _ in 0..1000 {
            s.pop();
        }
    }

    #[test]
    fn a_stack_dropped_on_another_thread() {
        static SITE: Site = Site::new();
        for _ in 0..3 {
            let mut s = Stack::new(&SITE);
            for i in 0..20 {
                s.push(vec![i as f64]);
            }
            let h = std::thread::spawn(move || {
                assert_eq!(s.pop(), vec![19.0]);
                drop(s);
            });
            h.join().unwrap();
        }
        // The chunk is free again: the next stacks reuse it.
        let mut s = Stack::new(&SITE);
        s.push(vec![1.0]);
        assert_eq!(s.pop(), vec![1.0]);
    }

    #[test]
    #[should_panic(expected = "popped more than")]
    fn popping_an_empty_stack_panics() {
        static SITE: Site = Site::new();
        let mut s: Stack<f64> = Stack::new(&SITE);
        s.pop();
    }
}
