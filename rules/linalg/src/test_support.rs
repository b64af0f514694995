//! Fixtures for the rule tests of this crate: seeded well-conditioned matrices in
//! several memory layouts, tolerances per element type, and dual numbers seeded along
//! directions with the comparisons their partials are checked by.

use crate::LinalgElem;
use mochi_core::kit::ArrayTolerance;
use mochi_core::testing::{CountingAllocator, Dualize};
use mochi_core::Dual;
use ndarray::{Array, Array1, Array2, Dimension, Ix2, ShapeBuilder, Slice, Zip};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Element types under test, with the tolerances their finite differences allow
/// (`T::RTOL`, `T::ATOL`, from the rule kit's table) and `Dual<1>` as their dual form
/// (what [`RuleTest::forward`](mochi_core::testing::RuleTest::forward) runs the
/// primal on).
pub(crate) trait TestElem: LinalgElem + ArrayTolerance + Dualize<Dual = Dual<1>> {}
impl<T: LinalgElem + ArrayTolerance + Dualize<Dual = Dual<1>>> TestElem for T {}

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

/// `x` as duals seeded along `directions`: partial `i` of each entry is that entry of
/// `directions[i]`.
pub(crate) fn seeded<D: Dimension, const N: usize>(
    x: &Array<f64, D>,
    directions: [&Array<f64, D>; N],
) -> Array<Dual<N>, D> {
    let mut duals = x.mapv(Dual::constant);
    for (k, direction) in directions.into_iter().enumerate() {
        Zip::from(&mut duals)
            .and(direction)
            .for_each(|d, &p| d.partials[k] = p);
    }
    duals
}

/// Partial `k` of every entry of `y`.
pub(crate) fn partial<D: Dimension, const N: usize>(
    y: &Array<Dual<N>, D>,
    k: usize,
) -> Array<f64, D> {
    y.map(|d| d.partials[k])
}

/// The values of the entries of `y`.
pub(crate) fn value<D: Dimension, const N: usize>(y: &Array<Dual<N>, D>) -> Array<f64, D> {
    y.map(|d| d.value)
}

/// Panics unless `actual` and `expected` agree to within `tolerance` relative to the
/// larger of 1 and the largest entry of `expected`.
#[track_caller]
pub(crate) fn assert_close<D: Dimension>(
    what: &str,
    actual: &Array<f64, D>,
    expected: &Array<f64, D>,
    tolerance: f64,
) {
    assert_eq!(actual.shape(), expected.shape(), "{what}: shapes differ");
    let scale = expected.iter().fold(1.0_f64, |m, e| m.max(e.abs()));
    let error = Zip::from(actual)
        .and(expected)
        .fold(0.0_f64, |m, a, e| m.max((a - e).abs()));
    assert!(
        error <= tolerance * scale,
        "{what}: off by {error:e} (scale {scale:e}, tolerance {tolerance:e})\nactual:\n{actual:?}\nexpected:\n{expected:?}"
    );
}

/// Checks that a cotangent computed on duals carries the derivative of the same
/// computation on floats: `gradient` runs at `x + εv` on `Dual<1>`, and its partials
/// must match the central difference `(g(x + hv) − g(x − hv)) / 2h` of its `f64` run
/// (`gradient_f64`), to within `1e-6` relative (the truncation and rounding of the
/// difference with `h = 1e-5` are far below that).
#[track_caller]
pub(crate) fn assert_dual_gradient_matches_finite_differences(
    x: &Array2<f64>,
    v: &Array2<f64>,
    gradient_f64: impl Fn(&Array2<f64>) -> Vec<f64>,
    gradient: impl Fn(&Array2<Dual<1>>) -> Vec<Dual<1>>,
) {
    let h = 1e-5;
    let dual = gradient(&seeded(x, [v]));
    let plus = gradient_f64(&(x + &(v * h)));
    let minus = gradient_f64(&(x - &(v * h)));
    let difference: Array1<f64> = plus
        .iter()
        .zip(&minus)
        .map(|(p, m)| (p - m) / (2.0 * h))
        .collect();
    let at_x = gradient_f64(x);
    let values: Array1<f64> = dual.iter().map(|d| d.value).collect();
    assert_close("the value", &values, &Array1::from(at_x), 1e-12);
    let partials: Array1<f64> = dual.iter().map(|d| d.partials[0]).collect();
    assert_close("the partials", &partials, &difference, 1e-6);
}
