//! The [`Real`] trait: the scalar operations a function needs to be differentiable in
//! forward mode, implemented by `f64`, `f32` and [`Dual`].

use std::fmt::Debug;
use std::iter::{Product, Sum};
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};

#[cfg(doc)]
use super::Dual;

/// A real scalar: `f64`, `f32` or a dual number [`Dual`].
///
/// Write a function once over `T: Real` and run it on `f64` for the value or on
/// `Dual<N>` for the value and `N` directional derivatives. `Real` has every
/// differentiable method of `f64` under the same name and signature, the arithmetic
/// operators (between two `T`s; lift `f64` constants with [`from_f64`](Real::from_f64)
/// or use the associated constants), and comparisons by value.
///
/// Each method's documentation gives the derivative [`Dual`] uses. Where a function has
/// a kink the choice is stated and is the same as in mochi's reverse-mode rules:
/// `abs`, `hypot` and `copysign` have derivative 0 at their kink; `min`/`max` on a tie
/// and `clamp` at a bound (inclusive) take the derivative of `self`; piecewise-constant
/// functions (`floor`, `round`, `signum`, …) have derivative 0 everywhere. Values outside
/// a domain give NaN, singular points give infinities; nothing panics on a value.
///
/// ```
/// use mochi_core::{derivative, Real};
///
/// fn softplus<T: Real>(x: T) -> T {
///     x.max(T::ZERO) + (-x.abs()).exp().ln_1p()
/// }
///
/// let x = 0.3;
/// let (y, dy) = derivative(softplus, x);
/// assert_eq!(y, softplus(x));
/// let sigmoid = 1.0 / (1.0 + (-x).exp()); // d/dx softplus = sigmoid
/// assert!((dy - sigmoid).abs() <= 4.0 * f64::EPSILON);
/// assert_eq!(<f64 as Real>::PI, std::f64::consts::PI);
/// ```
pub trait Real:
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
    + RemAssign
    + Sum
    + Product
    + crate::private::NoPartials
{
    /// `0` (a constant).
    const ZERO: Self;
    /// `1` (a constant).
    const ONE: Self;
    /// `2` (a constant).
    const TWO: Self;
    /// `½` (a constant).
    const HALF: Self;
    /// `π` (a constant).
    const PI: Self;
    /// `τ = 2π` (a constant).
    const TAU: Self;
    /// `π/2` (a constant).
    const FRAC_PI_2: Self;
    /// Euler's number `e` (a constant).
    const E: Self;
    /// `ln 2` (a constant).
    const LN_2: Self;
    /// `ln 10` (a constant).
    const LN_10: Self;
    /// `√2` (a constant).
    const SQRT_2: Self;
    /// The machine epsilon of the underlying float type.
    const EPSILON: Self;
    /// `+∞` (a constant).
    const INFINITY: Self;
    /// `−∞` (a constant).
    const NEG_INFINITY: Self;
    /// `NaN` (a constant).
    const NAN: Self;

    /// The constant `value` (rounded for `f32`; partials zero for a dual).
    ///
    /// ```
    /// use mochi_core::{Dual, Real};
    /// assert_eq!(<f32 as Real>::from_f64(0.5), 0.5_f32);
    /// assert_eq!(Dual::<2>::from_f64(1.5).partials, [0.0; 2]);
    /// ```
    fn from_f64(value: f64) -> Self;

    /// The value as an `f64` (the primal value of a dual; its partials are dropped).
    ///
    /// ```
    /// use mochi_core::{Dual, Real};
    /// assert_eq!(Dual::<1>::variable(2.5, 0).to_f64(), 2.5);
    /// assert_eq!(Real::to_f64(0.25_f32), 0.25);
    /// ```
    fn to_f64(self) -> f64;

    /// `|x|`. Derivative `sign(x)`, and **0 at `x = 0`** (the subgradient mochi uses in both modes).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.abs(), -2.0), (2.0, -1.0));
    /// assert_eq!(derivative(|x| x.abs(), 0.0), (0.0, 0.0));
    /// ```
    fn abs(self) -> Self;

    /// `√x`. Derivative `1 / (2√x)`: infinite at 0, NaN below.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.sqrt(), 4.0), (2.0, 0.25));
    /// ```
    fn sqrt(self) -> Self;

    /// `∛x`. Derivative `1 / (3∛x²)`: infinite at 0.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.cbrt(), 8.0), (2.0, 1.0 / 12.0));
    /// ```
    fn cbrt(self) -> Self;

    /// `eˣ`. Derivative `eˣ`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.exp(), 0.0), (1.0, 1.0));
    /// ```
    fn exp(self) -> Self;

    /// `2ˣ`. Derivative `2ˣ·ln 2`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.exp2(), 1.0), (2.0, 2.0 * std::f64::consts::LN_2));
    /// ```
    fn exp2(self) -> Self;

    /// `eˣ − 1`, accurate near 0. Derivative `eˣ`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.exp_m1(), 0.0), (0.0, 1.0));
    /// ```
    fn exp_m1(self) -> Self;

    /// `ln x`. Derivative `1/x`: infinite at 0, NaN below.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.ln(), 2.0), (2f64.ln(), 0.5));
    /// ```
    fn ln(self) -> Self;

    /// `log_base x = ln x / ln base`. Derivatives `1 / (x·ln base)` in `x` and `−log_base x / (base·ln base)` in `base`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// let (y, dy) = derivative(|x| x.log(Dual::constant(10.0)), 100.0);
    /// assert!((y - 2.0).abs() <= 4.0 * f64::EPSILON);
    /// assert_eq!(dy, 1.0 / (100.0 * 10f64.ln()));
    /// ```
    fn log(self, base: Self) -> Self;

    /// `log₂ x`. Derivative `1 / (x·ln 2)`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.log2(), 4.0), (2.0, 1.0 / (4.0 * std::f64::consts::LN_2)));
    /// ```
    fn log2(self) -> Self;

    /// `log₁₀ x`. Derivative `1 / (x·ln 10)`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.log10(), 100.0), (2.0, 1.0 / (100.0 * std::f64::consts::LN_10)));
    /// ```
    fn log10(self) -> Self;

    /// `ln(1 + x)`, accurate near 0. Derivative `1 / (1 + x)`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.ln_1p(), 0.0), (0.0, 1.0));
    /// ```
    fn ln_1p(self) -> Self;

    /// `xⁿ` for an integer `n`. Derivative `n·xⁿ⁻¹`, and 0 for `n = 0` (even at `x = 0`).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.powi(2), 3.0), (9.0, 6.0));
    /// assert_eq!(derivative(|x| x.powi(0), 0.0), (1.0, 0.0));
    /// ```
    fn powi(self, n: i32) -> Self;

    /// `xⁿ`. Derivative in `x`: `n·xⁿ⁻¹` (computed so, not as `n·xⁿ/x`, so it is right at `x = 0` and for a negative `x` with an integer `n`), and 0 for `n = 0`. Derivative in `n`: `xⁿ·ln x`, which is NaN for `x < 0` like the primal of a non-integer power; it is 0 at `x = 0, n > 0`. A direction in which `n` does not move (a zero partial of `n`, e.g. a constant exponent) gets no contribution from it, so a negative base with a constant integer exponent has a finite derivative.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.powf(Dual::constant(3.0)), -2.0), (-8.0, 12.0));
    /// let (y, dy) = derivative(|n| Dual::constant(2.0).powf(n), 3.0);
    /// assert_eq!((y, dy), (8.0, 8.0 * 2f64.ln()));
    /// ```
    fn powf(self, n: Self) -> Self;

    /// `sin x`. Derivative `cos x`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.sin(), 0.0), (0.0, 1.0));
    /// ```
    fn sin(self) -> Self;

    /// `cos x`. Derivative `−sin x`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.cos(), 0.0), (1.0, 0.0));
    /// ```
    fn cos(self) -> Self;

    /// `tan x`. Derivative `1 + tan²x`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.tan(), 0.0), (0.0, 1.0));
    /// ```
    fn tan(self) -> Self;

    /// `(sin x, cos x)`, computed together. Derivatives `cos x` and `−sin x`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// let (s, c) = Dual::<1>::variable(0.0, 0).sin_cos();
    /// assert_eq!((s.value, s.partials), (0.0, [1.0]));
    /// assert_eq!((c.value, c.partials), (1.0, [0.0]));
    /// ```
    fn sin_cos(self) -> (Self, Self);

    /// `arcsin x`. Derivative `1 / √(1 − x²)`: infinite at ±1, NaN outside.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.asin(), 0.0), (0.0, 1.0));
    /// ```
    fn asin(self) -> Self;

    /// `arccos x`. Derivative `−1 / √(1 − x²)`: infinite at ±1, NaN outside.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.acos(), 0.0), (std::f64::consts::FRAC_PI_2, -1.0));
    /// ```
    fn acos(self) -> Self;

    /// `arctan x`. Derivative `1 / (1 + x²)`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.atan(), 0.0), (0.0, 1.0));
    /// ```
    fn atan(self) -> Self;

    /// The angle of the point `(other, self)`, i.e. `atan2(y = self, x = other)`. Derivatives `x / (x² + y²)` in `y` and `−y / (x² + y²)` in `x`; 0 at the origin, where the angle has no limit (the convention of the reverse rule, so gradients and jvps agree).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// let (y, x) = (Dual::<2>::variable(0.0, 0), Dual::<2>::variable(2.0, 1));
    /// let angle = y.atan2(x);
    /// assert_eq!((angle.value, angle.partials), (0.0, [0.5, 0.0]));
    /// ```
    fn atan2(self, other: Self) -> Self;

    /// `sinh x`. Derivative `cosh x`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.sinh(), 0.0), (0.0, 1.0));
    /// ```
    fn sinh(self) -> Self;

    /// `cosh x`. Derivative `sinh x`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.cosh(), 0.0), (1.0, 0.0));
    /// ```
    fn cosh(self) -> Self;

    /// `tanh x`. Derivative `1 − tanh²x`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.tanh(), 0.0), (0.0, 1.0));
    /// ```
    fn tanh(self) -> Self;

    /// `arsinh x`. Derivative `1 / √(x² + 1)`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.asinh(), 0.0), (0.0, 1.0));
    /// ```
    fn asinh(self) -> Self;

    /// `arcosh x`. Derivative `1 / √(x² − 1)`: infinite at 1, NaN below.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.acosh(), 1.25).1, 1.0 / 0.75);
    /// ```
    fn acosh(self) -> Self;

    /// `artanh x`. Derivative `1 / (1 − x²)`: infinite at ±1, NaN outside.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.atanh(), 0.5).1, 1.0 / 0.75);
    /// ```
    fn atanh(self) -> Self;

    /// `√(x² + y²)` without overflow (`x = self`, `y = other`). Derivatives `x / hypot` and `y / hypot`, and **both 0 at the origin** (the same subgradient as `abs` at 0).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// let (x, y) = (Dual::<2>::variable(3.0, 0), Dual::<2>::variable(4.0, 1));
    /// let r = x.hypot(y);
    /// assert_eq!((r.value, r.partials), (5.0, [0.6, 0.8]));
    /// ```
    fn hypot(self, other: Self) -> Self;

    /// `self·a + b` with one rounding. Derivatives `a`, `self` and 1.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.mul_add(Dual::constant(3.0), Dual::constant(1.0)), 2.0), (7.0, 3.0));
    /// ```
    fn mul_add(self, a: Self, b: Self) -> Self;

    /// The smaller of `self` and `other`, with its derivative. **On a tie the result is `self`, with the derivative of `self`.** A NaN operand is ignored, as in [`f64::min`].
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// let (x, y) = (Dual::<2>::variable(1.0, 0), Dual::<2>::variable(1.0, 1));
    /// assert_eq!(x.min(y).partials, [1.0, 0.0]);
    /// assert_eq!(y.min(x).partials, [0.0, 1.0]);
    /// ```
    fn min(self, other: Self) -> Self;

    /// The larger of `self` and `other`, with its derivative. **On a tie the result is `self`, with the derivative of `self`.** A NaN operand is ignored, as in [`f64::max`].
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// let (x, y) = (Dual::<2>::variable(1.0, 0), Dual::<2>::variable(1.0, 1));
    /// assert_eq!(x.max(y).partials, [1.0, 0.0]);
    /// assert_eq!(Dual::<2>::variable(0.5, 0).max(y).partials, [0.0, 1.0]);
    /// ```
    fn max(self, other: Self) -> Self;

    /// `self` restricted to `[lo, hi]`: `lo` (with its derivative) below, `hi` above, and **`self` with the derivative of `self` inside the closed interval, bounds included**. NaN stays NaN.
    ///
    /// # Panics
    /// If `lo > hi` or either bound is NaN, like [`f64::clamp`] (a bug in the caller).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.clamp(Dual::constant(0.0), Dual::constant(1.0)), 1.0), (1.0, 1.0));
    /// assert_eq!(derivative(|x| x.clamp(Dual::constant(0.0), Dual::constant(1.0)), 1.5), (1.0, 0.0));
    /// ```
    fn clamp(self, lo: Self, hi: Self) -> Self;

    /// `1/x`. Derivative `−1/x²`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.recip(), 2.0), (0.5, -0.25));
    /// ```
    fn recip(self) -> Self;

    /// Radians to degrees. Derivative `180/π`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.to_degrees(), 0.0), (0.0, 1f64.to_degrees()));
    /// ```
    fn to_degrees(self) -> Self;

    /// Degrees to radians. Derivative `π/180`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.to_radians(), 0.0), (0.0, 1f64.to_radians()));
    /// ```
    fn to_radians(self) -> Self;

    /// The largest integer `≤ x`. Piecewise constant: derivative 0 (also at the jumps).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.floor(), 2.5), (2.0, 0.0));
    /// ```
    fn floor(self) -> Self;

    /// The smallest integer `≥ x`. Piecewise constant: derivative 0.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.ceil(), 2.5), (3.0, 0.0));
    /// ```
    fn ceil(self) -> Self;

    /// The nearest integer, half away from zero. Piecewise constant: derivative 0.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.round(), 2.5), (3.0, 0.0));
    /// ```
    fn round(self) -> Self;

    /// The nearest integer, half to even. Piecewise constant: derivative 0.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.round_ties_even(), 2.5), (2.0, 0.0));
    /// ```
    fn round_ties_even(self) -> Self;

    /// The integer part, towards zero. Piecewise constant: derivative 0.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.trunc(), -2.5), (-2.0, 0.0));
    /// ```
    fn trunc(self) -> Self;

    /// `x − trunc(x)`. Derivative 1 (the jumps have measure zero).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.fract(), 2.5), (0.5, 1.0));
    /// ```
    fn fract(self) -> Self;

    /// `±1` by the sign bit (NaN for NaN). Piecewise constant: derivative 0.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.signum(), -3.0), (-1.0, 0.0));
    /// ```
    fn signum(self) -> Self;

    /// `|self|` with the sign of `sign`. Derivative `±1` in `self` (+1 when the signs agree), **0 at `self = 0`** (the kink of `|self|`, as for `abs`), and 0 in `sign`.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.copysign(Dual::constant(-1.0)), 2.0), (-2.0, -1.0));
    /// ```
    fn copysign(self, sign: Self) -> Self;

    /// The least non-negative remainder `x − rhs·div_euclid(x, rhs)`. Derivatives 1 in `x` and `−div_euclid(x, rhs)` in `rhs` (the jumps have measure zero).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.rem_euclid(Dual::constant(3.0)), -1.0), (2.0, 1.0));
    /// ```
    fn rem_euclid(self, rhs: Self) -> Self;

    /// Euclidean division, an integer. Piecewise constant: derivative 0.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert_eq!(derivative(|x| x.div_euclid(Dual::constant(3.0)), -1.0), (-1.0, 0.0));
    /// ```
    fn div_euclid(self, rhs: Self) -> Self;

    /// Whether the value is NaN.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert!(Dual::<1>::new(f64::NAN, [0.0]).is_nan());
    /// assert!(!Real::is_nan(1.0_f64));
    /// ```
    fn is_nan(self) -> bool;

    /// Whether the value is neither infinite nor NaN (partials are not looked at).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert!(Dual::<1>::new(1.0, [f64::INFINITY]).is_finite());
    /// ```
    fn is_finite(self) -> bool;

    /// Whether the value is ±∞.
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert!(Dual::<1>::constant(f64::NEG_INFINITY).is_infinite());
    /// ```
    fn is_infinite(self) -> bool;

    /// Whether the value has a positive sign bit (`+0.0` and `+NaN` included).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert!(Dual::<1>::constant(0.0).is_sign_positive());
    /// ```
    fn is_sign_positive(self) -> bool;

    /// Whether the value has a negative sign bit (`-0.0` included).
    ///
    /// ```
    /// use mochi_core::{derivative, Dual, Real};
    /// assert!(Dual::<1>::constant(-0.0).is_sign_negative());
    /// ```
    fn is_sign_negative(self) -> bool;
}

/// `Real` for a primitive float: every method is the inherent one.
macro_rules! impl_real_for_float {
    ($float:ident, $from_f64:expr, $to_f64:expr) => {
        impl Real for $float {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const TWO: Self = 2.0;
            const HALF: Self = 0.5;
            const PI: Self = std::$float::consts::PI;
            const TAU: Self = std::$float::consts::TAU;
            const FRAC_PI_2: Self = std::$float::consts::FRAC_PI_2;
            const E: Self = std::$float::consts::E;
            const LN_2: Self = std::$float::consts::LN_2;
            const LN_10: Self = std::$float::consts::LN_10;
            const SQRT_2: Self = std::$float::consts::SQRT_2;
            const EPSILON: Self = <$float>::EPSILON;
            const INFINITY: Self = <$float>::INFINITY;
            const NEG_INFINITY: Self = <$float>::NEG_INFINITY;
            const NAN: Self = <$float>::NAN;

            #[inline]
            fn from_f64(value: f64) -> Self {
                $from_f64(value)
            }

            #[inline]
            fn to_f64(self) -> f64 {
                $to_f64(self)
            }

            #[inline]
            fn abs(self) -> Self {
                <$float>::abs(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$float>::sqrt(self)
            }
            #[inline]
            fn cbrt(self) -> Self {
                <$float>::cbrt(self)
            }
            #[inline]
            fn exp(self) -> Self {
                <$float>::exp(self)
            }
            #[inline]
            fn exp2(self) -> Self {
                <$float>::exp2(self)
            }
            #[inline]
            fn exp_m1(self) -> Self {
                <$float>::exp_m1(self)
            }
            #[inline]
            fn ln(self) -> Self {
                <$float>::ln(self)
            }
            #[inline]
            fn log(self, base: Self) -> Self {
                <$float>::log(self, base)
            }
            #[inline]
            fn log2(self) -> Self {
                <$float>::log2(self)
            }
            #[inline]
            fn log10(self) -> Self {
                <$float>::log10(self)
            }
            #[inline]
            fn ln_1p(self) -> Self {
                <$float>::ln_1p(self)
            }
            #[inline]
            fn powi(self, n: i32) -> Self {
                <$float>::powi(self, n)
            }
            #[inline]
            fn powf(self, n: Self) -> Self {
                <$float>::powf(self, n)
            }
            #[inline]
            fn sin(self) -> Self {
                <$float>::sin(self)
            }
            #[inline]
            fn cos(self) -> Self {
                <$float>::cos(self)
            }
            #[inline]
            fn tan(self) -> Self {
                <$float>::tan(self)
            }
            #[inline]
            fn sin_cos(self) -> (Self, Self) {
                <$float>::sin_cos(self)
            }
            #[inline]
            fn asin(self) -> Self {
                <$float>::asin(self)
            }
            #[inline]
            fn acos(self) -> Self {
                <$float>::acos(self)
            }
            #[inline]
            fn atan(self) -> Self {
                <$float>::atan(self)
            }
            #[inline]
            fn atan2(self, other: Self) -> Self {
                <$float>::atan2(self, other)
            }
            #[inline]
            fn sinh(self) -> Self {
                <$float>::sinh(self)
            }
            #[inline]
            fn cosh(self) -> Self {
                <$float>::cosh(self)
            }
            #[inline]
            fn tanh(self) -> Self {
                <$float>::tanh(self)
            }
            #[inline]
            fn asinh(self) -> Self {
                <$float>::asinh(self)
            }
            #[inline]
            fn acosh(self) -> Self {
                <$float>::acosh(self)
            }
            #[inline]
            fn atanh(self) -> Self {
                <$float>::atanh(self)
            }
            #[inline]
            fn hypot(self, other: Self) -> Self {
                <$float>::hypot(self, other)
            }
            #[inline]
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$float>::mul_add(self, a, b)
            }
            #[inline]
            fn min(self, other: Self) -> Self {
                <$float>::min(self, other)
            }
            #[inline]
            fn max(self, other: Self) -> Self {
                <$float>::max(self, other)
            }
            #[inline]
            fn clamp(self, lo: Self, hi: Self) -> Self {
                <$float>::clamp(self, lo, hi)
            }
            #[inline]
            fn recip(self) -> Self {
                <$float>::recip(self)
            }
            #[inline]
            fn to_degrees(self) -> Self {
                <$float>::to_degrees(self)
            }
            #[inline]
            fn to_radians(self) -> Self {
                <$float>::to_radians(self)
            }
            #[inline]
            fn floor(self) -> Self {
                <$float>::floor(self)
            }
            #[inline]
            fn ceil(self) -> Self {
                <$float>::ceil(self)
            }
            #[inline]
            fn round(self) -> Self {
                <$float>::round(self)
            }
            #[inline]
            fn round_ties_even(self) -> Self {
                <$float>::round_ties_even(self)
            }
            #[inline]
            fn trunc(self) -> Self {
                <$float>::trunc(self)
            }
            #[inline]
            fn fract(self) -> Self {
                <$float>::fract(self)
            }
            #[inline]
            fn signum(self) -> Self {
                <$float>::signum(self)
            }
            #[inline]
            fn copysign(self, sign: Self) -> Self {
                <$float>::copysign(self, sign)
            }
            #[inline]
            fn rem_euclid(self, rhs: Self) -> Self {
                <$float>::rem_euclid(self, rhs)
            }
            #[inline]
            fn div_euclid(self, rhs: Self) -> Self {
                <$float>::div_euclid(self, rhs)
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$float>::is_nan(self)
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$float>::is_finite(self)
            }
            #[inline]
            fn is_infinite(self) -> bool {
                <$float>::is_infinite(self)
            }
            #[inline]
            fn is_sign_positive(self) -> bool {
                <$float>::is_sign_positive(self)
            }
            #[inline]
            fn is_sign_negative(self) -> bool {
                <$float>::is_sign_negative(self)
            }
        }
    };
}

/// Rounds to the nearest `f32` (the one lossy conversion of the float impls).
#[inline]
fn f32_from_f64(value: f64) -> f32 {
    value as f32
}

impl_real_for_float!(f64, std::convert::identity, std::convert::identity);
impl_real_for_float!(f32, f32_from_f64, f64::from);

#[cfg(test)]
mod tests {
    use super::Real;

    /// A generic function, run on `f32` and `f64`: the `f32` result is the `f64` one
    /// rounded, within what `f32` arithmetic loses.
    fn g<T: Real>(x: T, y: T) -> T {
        x.hypot(y).ln_1p() * y.atan2(x).cos()
            + x.mul_add(y, T::HALF).tanh().max(x.clamp(-T::ONE, T::ONE))
    }

    #[test]
    fn f32_and_f64_implementations_agree() {
        for (x, y) in [(0.5, 1.5), (-2.0, 0.25), (3.0, -1.0), (0.0, 0.0)] {
            let wide = g(x, y);
            let narrow = g(<f32 as Real>::from_f64(x), <f32 as Real>::from_f64(y));
            let tolerance = 16.0 * f64::from(f32::EPSILON) * wide.abs().max(1.0);
            assert!(
                (narrow.to_f64() - wide).abs() <= tolerance,
                "g({x}, {y}): {narrow} vs {wide}"
            );
        }
    }

    #[test]
    fn float_constants_and_conversions() {
        assert_eq!(<f32 as Real>::PI, std::f32::consts::PI);
        assert_eq!(<f64 as Real>::LN_10, std::f64::consts::LN_10);
        assert_eq!(<f32 as Real>::from_f64(0.1), 0.1_f32);
        assert_eq!(Real::to_f64(0.1_f32), f64::from(0.1_f32));
        assert!(Real::is_nan(<f64 as Real>::NAN) && Real::is_infinite(<f32 as Real>::NEG_INFINITY));
    }
}
