//! Helpers of this crate's tests.

// The `expect_no_alloc` checks count allocations.
#[global_allocator]
static A: mochi_core::testing::CountingAllocator = mochi_core::testing::CountingAllocator;

use crate::Elem;
use nalgebra::allocator::Allocator;
use nalgebra::{DMatrix, DefaultAllocator, Dim, OMatrix};

/// A deterministic matrix of the given sizes with entries in (−1, 1), different per
/// `seed`.
pub(crate) fn matrix<T: Elem, R: Dim, C: Dim>(rows: R, cols: C, seed: f64) -> OMatrix<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    OMatrix::from_fn_generic(rows, cols, |i, j| {
        let k = (i * 7 + j * 3) as f64;
        T::of_f64((1.3 * k + seed).sin() * 0.9)
    })
}

/// A dynamic `rows × cols` matrix from [`matrix`].
pub(crate) fn dmatrix<T: Elem>(rows: usize, cols: usize, seed: f64) -> DMatrix<T> {
    matrix(nalgebra::Dyn(rows), nalgebra::Dyn(cols), seed)
}

/// A symmetric positive-definite `n × n` matrix: `M Mᵀ + n I`.
pub(crate) fn spd<T: Elem>(n: usize, seed: f64) -> DMatrix<T> {
    let m = dmatrix::<T>(n, n, seed);
    &m * m.transpose() + DMatrix::identity(n, n) * T::of_f64(n as f64)
}

/// `check_rule!(T; args, |a| primal, rule)`: runs `RuleTest` of `primal` against `rule`
/// with the tolerances of the element type `T`, expecting no allocation in the pullback;
/// `…, rule, jvp = |x, t| ẏ` also checks the adjoint identity against the JVP `ẏ`.
macro_rules! check_rule {
    ($T:ty; $args:expr, |$a:ident| $primal:expr, $rule:expr, jvp = |$x:ident, $t:ident| $jvp:expr $(,)?) => {
        mochi_core::testing::RuleTest::new($args, |$a| $primal, |$a| $rule)
            .jvp(|$x, $t| $jvp)
            .tolerance(
                <$T as mochi_core::kit::ArrayTolerance>::RTOL,
                <$T as mochi_core::kit::ArrayTolerance>::ATOL,
            )
            .expect_no_alloc()
            .run()
    };
    ($T:ty; $args:expr, |$a:ident| $primal:expr, $rule:expr $(,)?) => {
        mochi_core::testing::RuleTest::new($args, |$a| $primal, |$a| $rule)
            .tolerance(
                <$T as mochi_core::kit::ArrayTolerance>::RTOL,
                <$T as mochi_core::kit::ArrayTolerance>::ATOL,
            )
            .expect_no_alloc()
            .run()
    };
}
pub(crate) use check_rule;
