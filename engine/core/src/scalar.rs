//! [`Scalar`]: the one bound under which every scalar rule exists, so that generic code
//! (`fn f<T: Float>(x: &[T]) -> T`) can be differentiated and the same derived rule can
//! run on `f64`, `f32` or [`Dual`](crate::Dual) numbers.
//!
//! The scalar rule crate implements each rule once, as a blanket impl over `S: Scalar`
//! (`impl<S: Scalar> SinRule for Call<(&S,)>`); `#[differentiable]` adds `T: Scalar`
//! to the bounds of a generic function's companions, and that one bound implies every
//! scalar rule, the tangent operations and the gradient seed. See
//! `design-docs/rule-system.md`, "Rule dispatch for generic code".

use crate::{Real, Tangent, TangentVector};
use std::fmt::Debug;
use std::iter::{Product, Sum};
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, Sub, SubAssign};

/// A differentiable scalar: `f64`, `f32` and [`Dual<N>`](crate::Dual).
///
/// A scalar is its own tangent, has the arithmetic operators, and is a [`Real`] through
/// [`as_real`](Self::as_real) / [`of_real`](Self::of_real) (identities: `Self::Real` is
/// `Self` for every implementor). `Real` is reached through an associated type rather
/// than a supertrait on purpose: a bound `T: Scalar` adds no method name to `T` besides
/// these two, so generic code bounded by `num_traits::Float` that `#[differentiable]`
/// also bounds by `Scalar` keeps calling `x.abs()` and `T::zero()` unambiguously. For
/// the same reason [`TangentVector`] and the gradient seed are blanket impls over
/// `Scalar`, not supertraits.
///
/// ```
/// use mochi_core::{Dual, Real, Scalar, TangentVector};
///
/// fn twice<S: Scalar>(x: S) -> S {
///     S::of_real(x.as_real() * <S::Real as Real>::TWO)
/// }
/// assert_eq!(twice(1.5_f64), 3.0);
/// assert_eq!(twice(Dual::<1>::variable(1.0, 0)).partials, [2.0]);
/// let z: f32 = TangentVector::zero(); // every scalar is a tangent vector
/// assert!(z == 0.0 && z.is_sign_negative());
/// ```
pub trait Scalar:
    Copy
    + Debug
    + PartialEq
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Rem<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + Sum
    + Product
    + Tangent<Tangent = Self>
    + crate::private::NoPartials
    + 'static
{
    /// `Self`, as a [`Real`] (the same type for every implementor).
    type Real: Real + Scalar;
    /// The value as a [`Real`] (the identity).
    fn as_real(self) -> Self::Real;
    /// The value from a [`Real`] (the identity).
    fn of_real(value: Self::Real) -> Self;
    /// A value of shape `F` over `Self` as the same shape over [`Self::Real`] (the
    /// identity): how the generic form of a function bounded by [`Real`] is called from
    /// code bounded by `num_traits::Float`, which cannot name `Real` itself (the two
    /// traits' methods would be ambiguous).
    #[doc(hidden)]
    fn to_real_shape<F: Shape>(x: F::Of<Self>) -> F::Of<Self::Real>;
    /// The inverse of [`to_real_shape`](Self::to_real_shape) (the identity).
    #[doc(hidden)]
    fn of_real_shape<F: Shape>(x: F::Of<Self::Real>) -> F::Of<Self>;
    /// `self · factor` as [`TangentVector::scale`] computes it (rounded once for `f32`).
    #[doc(hidden)]
    fn scaled_by_f64(self, factor: f64) -> Self {
        Self::of_real(self.as_real() * <Self::Real as Real>::from_f64(factor))
    }
    /// Whether this cotangent is exactly zero, every part of it (a dual's partials too).
    #[inline(always)]
    fn is_zero_cotangent(self) -> bool {
        self == Self::of_real(<Self::Real as Real>::ZERO)
    }
    /// `self · d` for a cotangent `self`, zero when `self` is: a value computed but not
    /// used (`let r = x.sqrt(); if r < eps { 0.0 } else { y / r }` at `x = 0`) passes no
    /// derivative back, even where its own derivative is infinite (`0 · ∞` would be
    /// `NaN`).
    ///
    /// ```
    /// use mochi_core::Scalar;
    /// assert_eq!(0.0_f64.strong_mul(f64::INFINITY), 0.0);
    /// assert_eq!(2.0_f64.strong_mul(3.0), 6.0);
    /// ```
    #[inline(always)]
    fn strong_mul(self, d: Self) -> Self {
        if self.is_zero_cotangent() {
            self
        } else {
            self * d
        }
    }
}

/// A type built around one scalar (`S`, `&[S]`, `Vec<S>`, …), as a function of that
/// scalar: what [`Scalar::to_real_shape`] respells.
#[doc(hidden)]
pub trait Shape {
    /// The type over the scalar `S`.
    type Of<S: 'static>;
}

/// The shapes a bridged generic form takes and returns.
#[doc(hidden)]
pub mod shape {
    use super::Shape;
    use std::marker::PhantomData;

    /// `S`.
    pub struct Itself;
    /// `&S`.
    pub struct Ref<'a>(PhantomData<&'a ()>);
    /// `&[S]`.
    pub struct Slice<'a>(PhantomData<&'a ()>);
    /// `&Vec<S>`.
    pub struct VecRef<'a>(PhantomData<&'a ()>);
    /// `Vec<S>`.
    pub struct VecOf;
    /// `&mut S`.
    pub struct Mut<'a>(PhantomData<&'a ()>);
    /// `&mut Vec<S>`.
    pub struct VecMut<'a>(PhantomData<&'a ()>);
    /// `(S, S)`.
    pub struct Pair;
    /// `(S, S, S)`.
    pub struct Triple;

    impl Shape for Itself {
        type Of<S: 'static> = S;
    }
    impl<'a> Shape for Ref<'a> {
        type Of<S: 'static> = &'a S;
    }
    impl<'a> Shape for Slice<'a> {
        type Of<S: 'static> = &'a [S];
    }
    impl<'a> Shape for VecRef<'a> {
        type Of<S: 'static> = &'a Vec<S>;
    }
    impl Shape for VecOf {
        type Of<S: 'static> = Vec<S>;
    }
    impl<'a> Shape for Mut<'a> {
        type Of<S: 'static> = &'a mut S;
    }
    impl<'a> Shape for VecMut<'a> {
        type Of<S: 'static> = &'a mut Vec<S>;
    }
    impl Shape for Pair {
        type Of<S: 'static> = (S, S);
    }
    impl Shape for Triple {
        type Of<S: 'static> = (S, S, S);
    }
}

macro_rules! float_scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            type Real = $t;
            #[inline(always)]
            fn as_real(self) -> $t {
                self
            }
            #[inline(always)]
            fn of_real(value: $t) -> $t {
                value
            }
            #[inline(always)]
            fn to_real_shape<F: Shape>(x: F::Of<$t>) -> F::Of<$t> {
                x
            }
            #[inline(always)]
            fn of_real_shape<F: Shape>(x: F::Of<$t>) -> F::Of<$t> {
                x
            }
            #[inline(always)]
            fn scaled_by_f64(self, factor: f64) -> $t {
                (self as f64 * factor) as $t
            }
        }
    )*};
}
float_scalar!(f64, f32);

impl<const N: usize> Scalar for crate::Dual<N> {
    type Real = Self;
    #[inline(always)]
    fn as_real(self) -> Self {
        self
    }
    #[inline(always)]
    fn of_real(value: Self) -> Self {
        value
    }
    #[inline(always)]
    fn to_real_shape<F: Shape>(x: F::Of<Self>) -> F::Of<Self> {
        x
    }
    #[inline(always)]
    fn of_real_shape<F: Shape>(x: F::Of<Self>) -> F::Of<Self> {
        x
    }
    /// The value and every partial zero (a dual compares by its value alone).
    #[inline(always)]
    fn is_zero_cotangent(self) -> bool {
        self.value == 0.0 && self.partials.iter().all(|p| *p == 0.0)
    }
}

impl<S: Scalar> TangentVector for S {
    /// `-0.0` (partials `-0.0` for a dual): the additive identity that is exact for
    /// every float (`-0.0 + x == x` bit for bit, also for `x = ±0`), so the compiler
    /// folds accumulation into a fresh cotangent away without fast-math.
    #[inline(always)]
    fn zero() -> Self {
        -S::of_real(<S::Real as Real>::ZERO)
    }
    #[inline(always)]
    fn accumulate(&mut self, other: Self) {
        *self += other;
    }
    #[inline(always)]
    fn accumulate_ref(&mut self, other: &Self) {
        *self += *other;
    }
    #[inline(always)]
    fn scale(&mut self, factor: f64) {
        *self = self.scaled_by_f64(factor);
    }
    #[inline(always)]
    fn inner(&self, other: &Self) -> f64 {
        Real::to_f64(self.as_real()) * Real::to_f64(other.as_real())
    }
}

impl<const N: usize> Tangent for crate::Dual<N> {
    type Tangent = Self;
    #[inline(always)]
    fn zero_tangent(&self) -> Self {
        Self::constant(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dual;

    #[test]
    fn scalars_are_tangent_vectors_with_an_exact_zero() {
        let mut z: f64 = TangentVector::zero();
        assert!(z.is_sign_negative());
        z.accumulate(0.0);
        assert!(z.is_sign_positive()); // -0 + 0 = +0: the identity is exact
        let mut d: Dual<2> = TangentVector::zero();
        d.accumulate(Dual::new(1.0, [2.0, 3.0]));
        assert_eq!((d.value, d.partials), (1.0, [2.0, 3.0]));
        d.scale(2.0);
        assert_eq!((d.value, d.partials), (2.0, [4.0, 6.0]));
        assert_eq!(d.inner(&d), 4.0);
        let mut x = 0.1_f32;
        x.scale(3.0);
        assert_eq!(x, (0.1_f32 as f64 * 3.0) as f32);
    }
}
