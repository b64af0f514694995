//! `num_traits::Float` for [`Dual`]: generic code written against num-traits (the bound
//! most numeric Rust uses) runs on duals, which is what forward mode and
//! forward-over-reverse (`f::hvp`, `f::hessian`) of a `#[differentiable]` function
//! bounded by `T: Float` need.
//!
//! Every method is [`Real`]'s, so the derivatives and the choices at kinks are the ones
//! `Real` documents. Predicates, classification and `integer_decode` look at the value.
//! With both `Float` and `Real` in scope, a method call on a *concrete* `Dual` is
//! ambiguous; call it as `Real::sin(x)` or import one of the two.

use super::{Dual, Real};
use num_traits::{Float, Num, NumCast, ToPrimitive};
use std::num::FpCategory;

impl<const N: usize> Num for Dual<N> {
    type FromStrRadixErr = <f64 as Num>::FromStrRadixErr;
    /// A constant parsed like `f64`.
    fn from_str_radix(s: &str, radix: u32) -> Result<Self, Self::FromStrRadixErr> {
        f64::from_str_radix(s, radix).map(Self::constant)
    }
}

impl<const N: usize> ToPrimitive for Dual<N> {
    /// The value (partials dropped).
    fn to_i64(&self) -> Option<i64> {
        self.value.to_i64()
    }
    fn to_u64(&self) -> Option<u64> {
        self.value.to_u64()
    }
    fn to_f64(&self) -> Option<f64> {
        Some(self.value)
    }
}

impl<const N: usize> NumCast for Dual<N> {
    /// A constant: `T::from(2.5).unwrap()` in generic code.
    fn from<T: ToPrimitive>(n: T) -> Option<Self> {
        n.to_f64().map(Self::constant)
    }
}

/// `fn name(self, …) -> Self` of `Float` as `Real`'s method of the same name.
macro_rules! by_real {
    ($($name:ident($($arg:ident),*);)*) => {$(
        #[inline]
        fn $name(self, $($arg: Self),*) -> Self {
            Real::$name(self, $($arg),*)
        }
    )*};
}

impl<const N: usize> Float for Dual<N> {
    fn nan() -> Self {
        Self::constant(f64::NAN)
    }
    fn infinity() -> Self {
        Self::constant(f64::INFINITY)
    }
    fn neg_infinity() -> Self {
        Self::constant(f64::NEG_INFINITY)
    }
    fn neg_zero() -> Self {
        Self::constant(-0.0)
    }
    fn min_value() -> Self {
        Self::constant(f64::MIN)
    }
    fn min_positive_value() -> Self {
        Self::constant(f64::MIN_POSITIVE)
    }
    fn epsilon() -> Self {
        Self::constant(f64::EPSILON)
    }
    fn max_value() -> Self {
        Self::constant(f64::MAX)
    }
    fn is_nan(self) -> bool {
        self.value.is_nan()
    }
    fn is_infinite(self) -> bool {
        self.value.is_infinite()
    }
    fn is_finite(self) -> bool {
        self.value.is_finite()
    }
    fn is_normal(self) -> bool {
        self.value.is_normal()
    }
    fn classify(self) -> FpCategory {
        self.value.classify()
    }
    fn is_sign_positive(self) -> bool {
        self.value.is_sign_positive()
    }
    fn is_sign_negative(self) -> bool {
        self.value.is_sign_negative()
    }
    fn integer_decode(self) -> (u64, i16, i8) {
        Float::integer_decode(self.value)
    }
    #[inline]
    fn powi(self, n: i32) -> Self {
        Real::powi(self, n)
    }
    #[inline]
    fn sin_cos(self) -> (Self, Self) {
        Real::sin_cos(self)
    }
    /// `max(self − other, 0)`, with the derivative of that expression.
    fn abs_sub(self, other: Self) -> Self {
        Real::max(self - other, Self::constant(0.0))
    }
    by_real! {
        floor(); ceil(); round(); trunc(); fract(); abs(); signum();
        mul_add(a, b); recip(); powf(n); sqrt(); exp(); exp2(); ln(); log(base);
        log2(); log10(); to_degrees(); to_radians(); max(other); min(other);
        clamp(lo, hi); cbrt(); hypot(other); sin(); cos(); tan(); asin(); acos();
        atan(); atan2(other); exp_m1(); ln_1p(); sinh(); cosh(); tanh(); asinh();
        acosh(); atanh(); copysign(sign);
    }
}

impl<const N: usize> num_traits::FromPrimitive for Dual<N> {
    /// The constant `n` (through `f64`, as `n as f64` rounds).
    #[inline]
    fn from_i64(n: i64) -> Option<Self> {
        Some(Self::constant(n as f64))
    }
    #[inline]
    fn from_u64(n: u64) -> Option<Self> {
        Some(Self::constant(n as f64))
    }
    #[inline]
    fn from_f64(n: f64) -> Option<Self> {
        Some(Self::constant(n))
    }
}

/// `fn NAME() -> Self` of `FloatConst` as the constant of `f64`.
macro_rules! float_consts {
    ($($name:ident),* $(,)?) => {$(
        #[inline]
        #[allow(non_snake_case)]
        fn $name() -> Self {
            Self::constant(std::f64::consts::$name)
        }
    )*};
}

/// The constants of `num_traits::FloatConst` (`T::PI()` in generic code), with zero
/// partials.
impl<const N: usize> num_traits::FloatConst for Dual<N> {
    float_consts! {
        E, FRAC_1_PI, FRAC_1_SQRT_2, FRAC_2_PI, FRAC_2_SQRT_PI, FRAC_PI_2, FRAC_PI_3,
        FRAC_PI_4, FRAC_PI_6, FRAC_PI_8, LN_10, LN_2, LOG10_E, LOG2_E, PI, SQRT_2, TAU,
        LOG10_2, LOG2_10,
    }
}

/// Duals multiply and add arrays of duals as scalars (`&a * d`), so that the array
/// rules run on them (forward over reverse of functions of arrays).
#[cfg(feature = "ndarray")]
impl<const N: usize> ndarray::ScalarOperand for Dual<N> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn rosenbrock<T: Float>(x: &[T]) -> T {
        let hundred = T::from(100.0).unwrap();
        let (a, b) = (x[1] - x[0] * x[0], T::one() - x[0]);
        hundred * a * a + b * b
    }

    #[test]
    fn generic_num_traits_code_runs_on_duals() {
        let x = [Dual::<2>::variable(-1.2, 0), Dual::<2>::variable(1.0, 1)];
        let y = rosenbrock(&x);
        let a = 1.0 - 1.44;
        assert_eq!(y.value, rosenbrock(&[-1.2, 1.0]));
        // ∂/∂x₀ = −400·x₀·a − 2(1 − x₀), ∂/∂x₁ = 200·a
        let want = [-400.0 * -1.2 * a - 2.0 * 2.2, 200.0 * a];
        for (g, w) in y.partials.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{g} vs {w}");
        }
        assert_eq!(<Dual<1> as NumCast>::from(3_usize).unwrap().partials, [0.0]);
        assert_eq!(Float::max(x[0], x[1]).partials, [0.0, 1.0]);
    }
}
