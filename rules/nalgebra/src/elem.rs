//! The element types the nalgebra rules are written for.

use mochi_core::kit::ArrayTolerance;
use mochi_core::testing::{Flatten, Perturb};
use mochi_core::Scalar as AdScalar;
use nalgebra::RealField;

/// A floating-point matrix element that is its own tangent: `f64` and `f32`.
///
/// Every rule of this crate is generic over `T: Elem`; the cotangent of a
/// `Matrix<T, R, C, S>` is an `OMatrix<T, R, C>` (see `mochi_core`'s nalgebra tangents).
pub trait Elem: RealField + Copy + AdScalar + Perturb + Flatten + ArrayTolerance {
    /// `0` (`num_traits::Zero` and `TangentVector` both name a `zero()`; this is
    /// unambiguous).
    const ZERO: Self;
    /// `1`.
    const ONE: Self;
    /// The value `v` rounded to this type.
    fn of_f64(v: f64) -> Self;
}

impl Elem for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    #[inline(always)]
    fn of_f64(v: f64) -> Self {
        v
    }
}

impl Elem for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    #[inline(always)]
    fn of_f64(v: f64) -> Self {
        v as f32
    }
}
