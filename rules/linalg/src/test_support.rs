//! Fixtures for the rule tests of this crate: seeded well-conditioned matrices in
//! several memory layouts, and tolerances per element type.

use crate::LinalgElem;
use mochi_core::kit::ArrayTolerance;
use mochi_core::testing::CountingAllocator;
use ndarray::{Array2, Ix2, ShapeBuilder, Slice};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Element types under test, with the tolerances their finite differences allow
/// (`T::RTOL`, `T::ATOL`, from the rule kit's table).
pub(crate) trait TestElem: LinalgElem + ArrayTolerance {}
impl<T: LinalgElem + ArrayTolerance> TestElem for T {}

/// A standard-normal `m × n` matrix.
pub(crate) fn random<T: LinalgElem>(m: usize, n: usize, seed: u64) -> Array2<T> {
    let mut rng = StdRng::seed_from_u64(seed);
    Array2::from_shape_simple_fn((m, n), || T::of_f64(rng.sample::<f64, _>(StandardNormal)))
}

/// A symmetric positive-definite `n × n` matrix, `A Aᵀ / n + I`.
pub(crate) fn spd<T: LinalgElem>(n: usize, seed: u64) -> Array2<T> {
    let a = random::<T>(n, n, seed);
    let mut k = a.dot(&a.t()) / T::of_usize(n.max(1));
    k.diag_mut().map_inplace(|d| *d += T::one());
    k
}

/// A well-conditioned triangular matrix (diagonal in `[1.5, 2.5]`ish, small
/// off-diagonal entries); the other triangle holds junk that must never be read.
pub(crate) fn triangular<T: LinalgElem>(n: usize, lower: bool, seed: u64) -> Array2<T> {
    let mut t = random::<T>(n, n, seed).mapv(|v| v * T::of_f64(0.3));
    for i in 0..n {
        t[[i, i]] = T::of_f64(2.0) + t[[i, i]].abs().min(T::of_f64(0.5));
    }
    t.indexed_iter_mut()
        .filter(|((i, j), _)| if lower { j > i } else { i > j })
        .for_each(|(_, v)| *v = T::of_f64(1e3));
    t
}

/// `x` in three layouts: row-major, column-major, strided (every other element of a
/// larger buffer).
pub(crate) fn layouts<T: LinalgElem>(x: &Array2<T>) -> Vec<Array2<T>> {
    let (m, n) = x.dim();
    let mut column_major = Array2::zeros(Ix2(m, n).f());
    column_major.assign(x);
    let mut strided = Array2::zeros((2 * m, 2 * n));
    strided.slice_each_axis_inplace(|_| Slice::new(0, None, 2));
    strided.assign(x);
    vec![x.clone(), column_major, strided]
}
