//! Fixtures shared by the rule tests of this crate: seeded random arrays in several
//! memory layouts, and tolerances per element type.

use crate::Elem;
use mochi_core::kit::ArrayTolerance;
use mochi_core::testing::CountingAllocator;
use mochi_core::testing::Dualize;
use ndarray::{Array, Dimension, ShapeBuilder, Slice};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Element types under test, with the tolerances their finite differences allow
/// (`T::RTOL`, `T::ATOL`, from the rule kit's table).
pub(crate) trait TestElem:
    Elem + ArrayTolerance + Dualize<Dual = mochi_core::Dual<1>>
{
}
impl<T: Elem + ArrayTolerance + Dualize<Dual = mochi_core::Dual<1>>> TestElem for T {}

/// A standard-normal array of `shape` from a seeded generator.
pub(crate) fn random<T: Elem, D: Dimension>(shape: D, seed: u64) -> Array<T, D> {
    let mut rng = StdRng::seed_from_u64(seed);
    Array::from_shape_simple_fn(shape, || T::of_f64(rng.sample::<f64, _>(StandardNormal)))
}

/// Random arrays of `shape` in four memory layouts: row-major, column-major, with a
/// reversed (negative-stride) first axis, and strided (every other element of a
/// larger buffer).
pub(crate) fn layouts<T: Elem, D: Dimension>(
    shape: D,
    seed: u64,
) -> Vec<(&'static str, Array<T, D>)> {
    let x = random::<T, D>(shape.clone(), seed);
    let mut column_major = Array::zeros(shape.clone().f());
    column_major.assign(&x);
    let mut reversed = x.clone();
    if reversed.ndim() > 0 {
        reversed.invert_axis(ndarray::Axis(0));
    }
    let mut big = shape.clone();
    big.slice_mut().iter_mut().for_each(|n| *n *= 2);
    let mut strided = Array::zeros(big);
    strided.slice_each_axis_inplace(|_| Slice::new(0, None, 2));
    strided.assign(&x);
    vec![
        ("row-major", x),
        ("column-major", column_major),
        ("reversed", reversed),
        ("strided", strided),
    ]
}
