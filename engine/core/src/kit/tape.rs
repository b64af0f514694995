//! The tape of a loop: a LIFO [`Stack`] of saved values (pullbacks, primal values)
//! whose buffer comes from, and returns to, a per-thread pool keyed by the save
//! [`Site`], so that steady-state gradient calls do not allocate.
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

/// The identity of one save site in generated code: a `static` whose address keys the
/// buffer pool, so that each site gets back a buffer of the capacity it needed last time.
pub struct Site(#[allow(dead_code)] u8);

impl Site {
    /// A new site (one `static` per site).
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Site(0)
    }
    fn key(&'static self) -> usize {
        self as *const Site as usize
    }
}

/// A LIFO stack of saved values whose buffer comes from, and returns to, a per-thread
/// pool keyed by the save site, so that steady-state gradient calls do not allocate.
pub struct Stack<T: 'static> {
    items: Vec<T>,
    site: usize,
}

type PoolKey = (std::any::TypeId, usize);

/// A multiply-rotate hasher for the pool's keys (a type id and an address): the pool is
/// looked up at every loop of every call, where SipHash cost more than the work saved.
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
}

/// Buffers kept per site. A helper called inside a loop has one live buffer per call
/// until the reverse sweep (10 000 for a GMM objective's `qtimesx` over 1 000 points
/// and 10 components), and a pool shallower than that made every call beyond it
/// allocate and grow its buffers anew on every gradient; the pool keeps what the
/// largest computation on this thread needed, which [`release_pool`] gives back.
const POOL_DEPTH: usize = 1 << 20;

/// Frees the buffers this thread's tape pool keeps for reuse (the next gradient
/// allocates them again). For a long-running thread that computed one very large
/// gradient and will not compute another.
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
}

impl<T: 'static> Stack<T> {
    /// A stack for the save site `site`, reusing that site's pooled buffer.
    #[inline]
    pub fn new(site: &'static Site) -> Self {
        let site = site.key();
        if std::mem::size_of::<T>() == 0 {
            return Stack {
                items: Vec::new(),
                site,
            };
        }
        let items = POOL
            .try_with(|pool| {
                let mut pool = pool.try_borrow_mut().ok()?;
                pool.get_mut(&(std::any::TypeId::of::<T>(), site))
                    .and_then(|b| b.downcast_mut::<Vec<Vec<T>>>())
                    .and_then(|v| v.pop())
            })
            .ok()
            .flatten()
            .unwrap_or_default();
        Stack { items, site }
    }
    /// Saves a value.
    #[inline(always)]
    pub fn push(&mut self, v: T) {
        self.items.push(v)
    }
    /// Takes the last saved value.
    #[inline(always)]
    pub fn pop(&mut self) -> T {
        match self.items.pop() {
            Some(v) => v,
            None => {
                unreachable!("mochi: the reverse sweep popped more than the forward sweep pushed")
            }
        }
    }
}

impl<T: 'static> Drop for Stack<T> {
    fn drop(&mut self) {
        if std::mem::size_of::<T>() == 0 || self.items.capacity() == 0 {
            return;
        }
        let mut items = std::mem::take(&mut self.items);
        items.clear();
        let key = (std::any::TypeId::of::<T>(), self.site);
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
}
