//! The element types the linear-algebra rules are written for.

use mochi_rules_ndarray::Elem;

/// A float that both the array rules ([`Elem`]) and faer
/// ([`RealField`](faer::traits::RealField)) work with: `f64` and `f32`.
pub trait LinalgElem: Elem + faer::traits::RealField {}

impl LinalgElem for f64 {}
impl LinalgElem for f32 {}
