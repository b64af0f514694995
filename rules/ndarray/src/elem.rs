//! The element types the array rules are written for.

use mochi_core::testing::{Flatten, Perturb};
use mochi_core::{Tangent, TangentVector};
use ndarray::{LinalgScalar, ScalarOperand};
use num_traits::Float;
use std::fmt::Debug;
use std::iter::Sum;
use std::ops::{AddAssign, DivAssign, MulAssign, SubAssign};

/// A floating-point array element that is its own tangent: `f64` and `f32`.
///
/// It refines the one scalar trait, [`mochi_core::Scalar`], with what ndarray's
/// arithmetic and the testing harness need. Every array rule is generic over
/// `T: Elem`; the cotangent of an `ArrayBase<S, D>` with `S::Elem = T` is an
/// `Array<T, D>`.
pub trait Elem:
    mochi_core::Scalar
    + Float
    + LinalgScalar
    + ScalarOperand
    + Tangent<Tangent = Self>
    + TangentVector
    + Perturb
    + Flatten
    + Sum
    + num_traits::FromPrimitive
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + Debug
    + Default
    + Send
    + Sync
    + 'static
{
    /// `0`, the additive identity (`Float` and `TangentVector` both name a `zero()`
    /// function; this constant is unambiguous).
    const ZERO: Self;
    /// The value `v` rounded to this type.
    fn of_f64(v: f64) -> Self;
    /// The length `n` as this type (used for means).
    fn of_usize(n: usize) -> Self;
}

impl Elem for f64 {
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn of_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn of_usize(n: usize) -> Self {
        n as f64
    }
}

impl Elem for f32 {
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn of_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn of_usize(n: usize) -> Self {
        n as f32
    }
}

/// Dual numbers are array elements, so that a function of arrays runs on duals
/// (its `jvp`, `hvp`, `hessian` and `jacobian`) through the same rules.
impl<const N: usize> Elem for mochi_core::Dual<N> {
    const ZERO: Self = mochi_core::Dual::new(0.0, [0.0; N]);
    #[inline(always)]
    fn of_f64(v: f64) -> Self {
        mochi_core::Dual::constant(v)
    }
    #[inline(always)]
    fn of_usize(n: usize) -> Self {
        mochi_core::Dual::constant(n as f64)
    }
}
