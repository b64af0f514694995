//! [`Real`] for [`Dual`]: the derivative of every elementary function.
//!
//! Each function computes its primal with the `f64` method of the same name (so a dual's
//! value is bit for bit the `f64` result) and its derivative from that primal where it
//! can (`exp`, `tanh`, `sqrt`, …). The conventions of [`Dual`]'s operators hold: zero
//! partials stay zero, a NaN primal makes every moving direction NaN.

use super::{Dual, Real};

/// The derivative of `|x|`: `sign(x)`, 0 at `x = ±0` (the subgradient both modes use),
/// NaN for NaN.
#[inline]
fn abs_derivative(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else if x == 0.0 {
        0.0
    } else {
        f64::NAN
    }
}

/// `1 / √((1 − x)(1 + x))`, the derivative of `arcsin`; the factored form keeps its
/// precision near ±1, where `1 − x²` cancels.
#[inline]
fn asin_derivative(x: f64) -> f64 {
    1.0 / ((1.0 - x) * (1.0 + x)).sqrt()
}

impl<const N: usize> Real for Dual<N> {
    const ZERO: Self = Self::constant(0.0);
    const ONE: Self = Self::constant(1.0);
    const TWO: Self = Self::constant(2.0);
    const HALF: Self = Self::constant(0.5);
    const PI: Self = Self::constant(std::f64::consts::PI);
    const TAU: Self = Self::constant(std::f64::consts::TAU);
    const FRAC_PI_2: Self = Self::constant(std::f64::consts::FRAC_PI_2);
    const E: Self = Self::constant(std::f64::consts::E);
    const LN_2: Self = Self::constant(std::f64::consts::LN_2);
    const LN_10: Self = Self::constant(std::f64::consts::LN_10);
    const SQRT_2: Self = Self::constant(std::f64::consts::SQRT_2);
    const EPSILON: Self = Self::constant(f64::EPSILON);
    const INFINITY: Self = Self::constant(f64::INFINITY);
    const NEG_INFINITY: Self = Self::constant(f64::NEG_INFINITY);
    const NAN: Self = Self::constant(f64::NAN);

    #[inline]
    fn from_f64(value: f64) -> Self {
        Self::constant(value)
    }

    #[inline]
    fn to_f64(self) -> f64 {
        self.value
    }

    #[inline]
    fn abs(self) -> Self {
        self.chain(self.value.abs(), abs_derivative(self.value))
    }

    #[inline]
    fn sqrt(self) -> Self {
        let y = self.value.sqrt();
        self.chain(y, 0.5 / y)
    }

    #[inline]
    fn cbrt(self) -> Self {
        let y = self.value.cbrt();
        self.chain(y, 1.0 / (3.0 * y * y))
    }

    #[inline]
    fn exp(self) -> Self {
        let y = self.value.exp();
        self.chain(y, y)
    }

    #[inline]
    fn exp2(self) -> Self {
        let y = self.value.exp2();
        self.chain(y, y * std::f64::consts::LN_2)
    }

    #[inline]
    fn exp_m1(self) -> Self {
        // Not `y + 1`: that cancels to 0 for very negative x.
        self.chain(self.value.exp_m1(), self.value.exp())
    }

    #[inline]
    fn ln(self) -> Self {
        self.chain(self.value.ln(), 1.0 / self.value)
    }

    #[inline]
    fn log(self, base: Self) -> Self {
        let (x, b) = (self.value, base.value);
        let y = x.log(b);
        let ln_b = b.ln();
        Self::chain2(self, base, y, 1.0 / (x * ln_b), -y / (b * ln_b))
    }

    #[inline]
    fn log2(self) -> Self {
        self.chain(
            self.value.log2(),
            1.0 / (self.value * std::f64::consts::LN_2),
        )
    }

    #[inline]
    fn log10(self) -> Self {
        self.chain(
            self.value.log10(),
            1.0 / (self.value * std::f64::consts::LN_10),
        )
    }

    #[inline]
    fn ln_1p(self) -> Self {
        self.chain(self.value.ln_1p(), 1.0 / (1.0 + self.value))
    }

    #[inline]
    fn powi(self, n: i32) -> Self {
        let x = self.value;
        let derivative = match n {
            0 => 0.0,
            // `n - 1` overflows only for i32::MIN.
            _ => {
                f64::from(n)
                    * n.checked_sub(1)
                        .map_or_else(|| x.powf(f64::from(n) - 1.0), |m| x.powi(m))
            }
        };
        self.chain(x.powi(n), derivative)
    }

    #[inline]
    fn powf(self, n: Self) -> Self {
        let (x, e) = (self.value, n.value);
        let y = x.powf(e);
        // n·xⁿ⁻¹ rather than n·y/x: exact at x = 0 and for a negative base.
        let d_base = if e == 0.0 { 0.0 } else { e * x.powf(e - 1.0) };
        // xⁿ·ln x; 0ⁿ = 0 for every n > 0, so it does not move with n there. For x < 0 it
        // is NaN, which reaches only the directions in which n moves (see `scale`).
        let d_exponent = if x == 0.0 && e > 0.0 { 0.0 } else { y * x.ln() };
        Self::chain2(self, n, y, d_base, d_exponent)
    }

    #[inline]
    fn sin(self) -> Self {
        let (s, c) = self.value.sin_cos();
        self.chain(s, c)
    }

    #[inline]
    fn cos(self) -> Self {
        let (s, c) = self.value.sin_cos();
        self.chain(c, -s)
    }

    #[inline]
    fn tan(self) -> Self {
        let y = self.value.tan();
        self.chain(y, 1.0 + y * y)
    }

    #[inline]
    fn sin_cos(self) -> (Self, Self) {
        let (s, c) = self.value.sin_cos();
        (self.chain(s, c), self.chain(c, -s))
    }

    #[inline]
    fn asin(self) -> Self {
        self.chain(self.value.asin(), asin_derivative(self.value))
    }

    #[inline]
    fn acos(self) -> Self {
        self.chain(self.value.acos(), -asin_derivative(self.value))
    }

    #[inline]
    fn atan(self) -> Self {
        let x = self.value;
        self.chain(x.atan(), 1.0 / (1.0 + x * x))
    }

    #[inline]
    fn atan2(self, other: Self) -> Self {
        let (y, x) = (self.value, other.value);
        // (x / r) / r rather than x / (x² + y²): no overflow for large |x|, |y|.
        let r = x.hypot(y);
        // At the origin the angle has no limit; 0 in both, as the reverse rule
        // (`mochi-rules-scalar`'s `Atan2Rule`) does, so a gradient and a jvp agree.
        let (dy, dx) = if r == 0.0 {
            (0.0, 0.0)
        } else {
            ((x / r) / r, (-y / r) / r)
        };
        Self::chain2(self, other, y.atan2(x), dy, dx)
    }

    #[inline]
    fn sinh(self) -> Self {
        self.chain(self.value.sinh(), self.value.cosh())
    }

    #[inline]
    fn cosh(self) -> Self {
        self.chain(self.value.cosh(), self.value.sinh())
    }

    #[inline]
    fn tanh(self) -> Self {
        let y = self.value.tanh();
        // 1 − y² cancels where y rounds near ±1; 1/cosh² x does not (the scalar rule
        // switches at the same point).
        let d = if y.abs() < 0.9 {
            1.0 - y * y
        } else {
            let c = self.value.cosh();
            (c * c).recip()
        };
        self.chain(y, d)
    }

    #[inline]
    fn asinh(self) -> Self {
        let x = self.value;
        self.chain(x.asinh(), 1.0 / x.hypot(1.0))
    }

    #[inline]
    fn acosh(self) -> Self {
        let x = self.value;
        self.chain(x.acosh(), 1.0 / ((x - 1.0) * (x + 1.0)).sqrt())
    }

    #[inline]
    fn atanh(self) -> Self {
        let x = self.value;
        self.chain(x.atanh(), 1.0 / ((1.0 - x) * (1.0 + x)))
    }

    #[inline]
    fn hypot(self, other: Self) -> Self {
        let (a, b) = (self.value, other.value);
        let h = a.hypot(b);
        // At the origin hypot has a cone-shaped kink; 0 is the subgradient `abs` uses.
        let (da, db) = if h == 0.0 { (0.0, 0.0) } else { (a / h, b / h) };
        Self::chain2(self, other, h, da, db)
    }

    #[inline]
    fn mul_add(self, a: Self, b: Self) -> Self {
        let value = self.value.mul_add(a.value, b.value);
        let d = if value.is_nan() { f64::NAN } else { 1.0 };
        let partials = std::array::from_fn(|i| {
            super::dual::scale(self.partials[i], a.value * d)
                + super::dual::scale(a.partials[i], self.value * d)
                + super::dual::scale(b.partials[i], d)
        });
        Self::new(value, partials)
    }

    #[inline]
    fn min(self, other: Self) -> Self {
        // A tie keeps `self`; a NaN operand is ignored, as in f64::min.
        if self.value <= other.value || other.value.is_nan() {
            self
        } else {
            other
        }
    }

    #[inline]
    fn max(self, other: Self) -> Self {
        if self.value >= other.value || other.value.is_nan() {
            self
        } else {
            other
        }
    }

    #[inline]
    #[track_caller]
    fn clamp(self, lo: Self, hi: Self) -> Self {
        assert!(
            lo.value <= hi.value,
            "Real::clamp: lo > hi, or either was NaN (lo = {:?}, hi = {:?}); pass lo ≤ hi",
            lo.value,
            hi.value
        );
        if self.value < lo.value {
            lo
        } else if self.value > hi.value {
            hi
        } else {
            self
        }
    }

    #[inline]
    fn recip(self) -> Self {
        let y = self.value.recip();
        self.chain(y, -y * y)
    }

    #[inline]
    fn to_degrees(self) -> Self {
        self.chain(self.value.to_degrees(), 1f64.to_degrees())
    }

    #[inline]
    fn to_radians(self) -> Self {
        self.chain(self.value.to_radians(), 1f64.to_radians())
    }

    #[inline]
    fn floor(self) -> Self {
        Self::flat(self.value.floor())
    }

    #[inline]
    fn ceil(self) -> Self {
        Self::flat(self.value.ceil())
    }

    #[inline]
    fn round(self) -> Self {
        Self::flat(self.value.round())
    }

    #[inline]
    fn round_ties_even(self) -> Self {
        Self::flat(self.value.round_ties_even())
    }

    #[inline]
    fn trunc(self) -> Self {
        Self::flat(self.value.trunc())
    }

    #[inline]
    fn fract(self) -> Self {
        self.chain(self.value.fract(), 1.0)
    }

    #[inline]
    fn signum(self) -> Self {
        Self::flat(self.value.signum())
    }

    #[inline]
    fn copysign(self, sign: Self) -> Self {
        let (x, s) = (self.value, sign.value);
        let d = if x == 0.0 {
            0.0
        } else if x.is_sign_negative() == s.is_sign_negative() {
            1.0
        } else {
            -1.0
        };
        self.chain(x.copysign(s), d)
    }

    #[inline]
    fn rem_euclid(self, rhs: Self) -> Self {
        let (x, r) = (self.value, rhs.value);
        Self::chain2(self, rhs, x.rem_euclid(r), 1.0, -x.div_euclid(r))
    }

    #[inline]
    fn div_euclid(self, rhs: Self) -> Self {
        Self::flat(self.value.div_euclid(rhs.value))
    }

    #[inline]
    fn is_nan(self) -> bool {
        self.value.is_nan()
    }

    #[inline]
    fn is_finite(self) -> bool {
        self.value.is_finite()
    }

    #[inline]
    fn is_infinite(self) -> bool {
        self.value.is_infinite()
    }

    #[inline]
    fn is_sign_positive(self) -> bool {
        self.value.is_sign_positive()
    }

    #[inline]
    fn is_sign_negative(self) -> bool {
        self.value.is_sign_negative()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::finite_difference::scalar::{check_partials, check_partials_near};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::f64::consts::{FRAC_PI_2, PI};

    /// One method under test: its dual and `f64` versions (one generic body), how to
    /// draw a point where it is differentiable, and the distance from a point to the
    /// nearest place where it is not smooth (a kink, a jump, a domain edge).
    struct Case<const M: usize> {
        name: &'static str,
        dual: fn([Dual<M>; M]) -> Dual<M>,
        float: fn([f64; M]) -> f64,
        sample: fn(&mut StdRng) -> [f64; M],
        room: fn([f64; M]) -> f64,
    }

    macro_rules! case {
        ($m:literal, $name:expr, |$args:pat_param| $body:expr, $sample:expr, $room:expr) => {{
            fn generic<T: Real>(args: [T; $m]) -> T {
                let $args = args;
                $body
            }
            Case::<$m> {
                name: $name,
                dual: generic::<Dual<$m>>,
                float: generic::<f64>,
                sample: $sample,
                room: $room,
            }
        }};
    }

    /// A one-argument case drawn uniformly from `lo..hi`.
    macro_rules! unary {
        ($name:expr, |$x:ident| $body:expr, $lo:expr, $hi:expr, $room:expr) => {
            case!(1, $name, |[$x]| $body, |r| [r.gen_range($lo..$hi)], |[x]| {
                ($room)(x)
            })
        };
    }

    fn smooth(_: f64) -> f64 {
        f64::INFINITY
    }

    /// Distance from `x` to the nearest point of `offset + ℤ·period`.
    fn to_lattice(x: f64, offset: f64, period: f64) -> f64 {
        let k = ((x - offset) / period).round();
        (x - offset - k * period).abs()
    }

    fn unary_cases() -> Vec<Case<1>> {
        vec![
            unary!("abs", |x| x.abs(), -3.0, 3.0, f64::abs),
            unary!("sqrt", |x| x.sqrt(), 0.0, 10.0, |x: f64| x),
            unary!("cbrt", |x| x.cbrt(), -10.0, 10.0, f64::abs),
            unary!("exp", |x| x.exp(), -5.0, 5.0, smooth),
            unary!("exp2", |x| x.exp2(), -5.0, 5.0, smooth),
            unary!("exp_m1", |x| x.exp_m1(), -5.0, 5.0, smooth),
            unary!("ln", |x| x.ln(), 0.0, 10.0, |x: f64| x),
            unary!("log2", |x| x.log2(), 0.0, 10.0, |x: f64| x),
            unary!("log10", |x| x.log10(), 0.0, 10.0, |x: f64| x),
            unary!("ln_1p", |x| x.ln_1p(), -1.0, 10.0, |x: f64| x + 1.0),
            unary!("powi(3)", |x| x.powi(3), -3.0, 3.0, smooth),
            unary!("powi(1)", |x| x.powi(1), -3.0, 3.0, smooth),
            unary!("powi(0)", |x| x.powi(0), -3.0, 3.0, smooth),
            unary!("powi(-2)", |x| x.powi(-2), -3.0, 3.0, f64::abs),
            unary!(
                "powf(x, 2.5)",
                |x| x.powf(T::from_f64(2.5)),
                0.0,
                3.0,
                |x: f64| x
            ),
            unary!(
                "powf(x, -3)",
                |x| x.powf(T::from_f64(-3.0)),
                -3.0,
                3.0,
                f64::abs
            ),
            unary!(
                "powf(x, 4)",
                |x| x.powf(T::from_f64(4.0)),
                -3.0,
                3.0,
                smooth
            ),
            unary!("powf(2, x)", |x| T::TWO.powf(x), -3.0, 3.0, smooth),
            unary!("sin", |x| x.sin(), -10.0, 10.0, smooth),
            unary!("cos", |x| x.cos(), -10.0, 10.0, smooth),
            unary!("tan", |x| x.tan(), -10.0, 10.0, |x| to_lattice(
                x, FRAC_PI_2, PI
            )),
            unary!("sin_cos.0", |x| x.sin_cos().0, -10.0, 10.0, smooth),
            unary!("sin_cos.1", |x| x.sin_cos().1, -10.0, 10.0, smooth),
            unary!("asin", |x| x.asin(), -1.0, 1.0, |x: f64| 1.0 - x.abs()),
            unary!("acos", |x| x.acos(), -1.0, 1.0, |x: f64| 1.0 - x.abs()),
            unary!("atan", |x| x.atan(), -10.0, 10.0, smooth),
            unary!("sinh", |x| x.sinh(), -5.0, 5.0, smooth),
            unary!("cosh", |x| x.cosh(), -5.0, 5.0, smooth),
            unary!("tanh", |x| x.tanh(), -5.0, 5.0, smooth),
            unary!("asinh", |x| x.asinh(), -10.0, 10.0, smooth),
            unary!("acosh", |x| x.acosh(), 1.0, 10.0, |x: f64| x - 1.0),
            unary!("atanh", |x| x.atanh(), -1.0, 1.0, |x: f64| 1.0 - x.abs()),
            unary!("recip", |x| x.recip(), -5.0, 5.0, f64::abs),
            unary!("to_degrees", |x| x.to_degrees(), -10.0, 10.0, smooth),
            unary!("to_radians", |x| x.to_radians(), -400.0, 400.0, smooth),
            unary!("floor", |x| x.floor(), -5.0, 5.0, |x| to_lattice(
                x, 0.0, 1.0
            )),
            unary!("ceil", |x| x.ceil(), -5.0, 5.0, |x| to_lattice(x, 0.0, 1.0)),
            unary!("round", |x| x.round(), -5.0, 5.0, |x| to_lattice(
                x, 0.5, 1.0
            )),
            unary!("round_ties_even", |x| x.round_ties_even(), -5.0, 5.0, |x| {
                to_lattice(x, 0.5, 1.0)
            }),
            unary!("trunc", |x| x.trunc(), -5.0, 5.0, |x| to_lattice(
                x, 0.0, 1.0
            )),
            unary!("fract", |x| x.fract(), -5.0, 5.0, |x| to_lattice(
                x, 0.0, 1.0
            )),
            unary!("signum", |x| x.signum(), -5.0, 5.0, f64::abs),
            unary!("neg", |x| -x, -5.0, 5.0, smooth),
        ]
    }

    /// Distance to the nearest jump of `x.rem_euclid(r)` (moving `x` or `r`).
    fn euclid_room([x, r]: [f64; 2]) -> f64 {
        let k = (x / r).round();
        let in_x = (x - k * r).abs();
        let in_r = if k == 0.0 { r.abs() } else { (r - x / k).abs() };
        in_x.min(in_r)
    }

    fn nonzero(r: &mut StdRng, lo: f64, hi: f64) -> f64 {
        let magnitude = r.gen_range(lo..hi);
        if r.gen_bool(0.5) {
            magnitude
        } else {
            -magnitude
        }
    }

    fn binary_cases() -> Vec<Case<2>> {
        vec![
            case!(
                2,
                "log",
                |[x, b]| x.log(b),
                |r| [r.gen_range(0.0..10.0), r.gen_range(1.5..10.0)],
                |[x, b]: [f64; 2]| x.min(b - 1.0)
            ),
            case!(
                2,
                "log (base < 1)",
                |[x, b]| x.log(b),
                |r| [r.gen_range(0.0..10.0), r.gen_range(0.05..0.7)],
                |[x, b]: [f64; 2]| x.min(b).min(1.0 - b)
            ),
            case!(
                2,
                "powf",
                |[x, n]| x.powf(n),
                |r| [r.gen_range(0.0..4.0), r.gen_range(-3.0..3.0)],
                |[x, _]: [f64; 2]| x
            ),
            case!(
                2,
                "atan2",
                |[y, x]| y.atan2(x),
                |r| [r.gen_range(-3.0..3.0), r.gen_range(-3.0..3.0)],
                |[y, x]: [f64; 2]| {
                    // The branch cut is y = 0, x < 0; the origin is singular.
                    if x < 0.0 {
                        y.abs().min(x.hypot(y))
                    } else {
                        x.hypot(y)
                    }
                }
            ),
            case!(
                2,
                "hypot",
                |[a, b]| a.hypot(b),
                |r| [r.gen_range(-3.0..3.0), r.gen_range(-3.0..3.0)],
                |[a, b]: [f64; 2]| a.hypot(b)
            ),
            case!(
                2,
                "min",
                |[a, b]| a.min(b),
                |r| [r.gen_range(-3.0..3.0), r.gen_range(-3.0..3.0)],
                |[a, b]: [f64; 2]| (a - b).abs() / 2.0
            ),
            case!(
                2,
                "max",
                |[a, b]| a.max(b),
                |r| [r.gen_range(-3.0..3.0), r.gen_range(-3.0..3.0)],
                |[a, b]: [f64; 2]| (a - b).abs() / 2.0
            ),
            case!(
                2,
                "copysign",
                |[x, s]| x.copysign(s),
                |r| [r.gen_range(-3.0..3.0), r.gen_range(-3.0..3.0)],
                |[x, s]: [f64; 2]| x.abs().min(s.abs())
            ),
            case!(
                2,
                "rem_euclid",
                |[x, r]| x.rem_euclid(r),
                |r| [r.gen_range(-9.0..9.0), nonzero(r, 0.5, 4.0)],
                euclid_room
            ),
            case!(
                2,
                "div_euclid",
                |[x, r]| x.div_euclid(r),
                |r| [r.gen_range(-9.0..9.0), nonzero(r, 0.5, 4.0)],
                euclid_room
            ),
            case!(
                2,
                "rem",
                |[x, r]| x % r,
                |r| [r.gen_range(-9.0..9.0), nonzero(r, 0.5, 4.0)],
                |[x, r]: [f64; 2]| {
                    let k = (x / r).trunc();
                    let to_zero = x.abs();
                    let in_x = (x - k * r)
                        .abs()
                        .min((x - (k + x.signum()) * r).abs())
                        .min(to_zero);
                    let in_r = if k == 0.0 { r.abs() } else { (r - x / k).abs() };
                    in_x.min(in_r)
                }
            ),
        ]
    }

    fn ternary_cases() -> Vec<Case<3>> {
        vec![
            case!(
                3,
                "mul_add",
                |[x, a, b]| x.mul_add(a, b),
                |r| std::array::from_fn(|_| r.gen_range(-3.0..3.0)),
                |_| f64::INFINITY
            ),
            case!(
                3,
                "clamp",
                |[x, lo, hi]| x.clamp(lo, hi),
                |r| [
                    r.gen_range(-3.0..3.0),
                    r.gen_range(-2.0..0.0),
                    r.gen_range(0.5..2.0)
                ],
                |[x, lo, hi]: [f64; 3]| (x - lo).abs().min((x - hi).abs()) / 2.0
            ),
        ]
    }

    const POINTS_PER_CASE: usize = 24;

    fn check_against_finite_differences<const M: usize>(cases: Vec<Case<M>>, seed: u64) {
        let mut rng = StdRng::seed_from_u64(seed);
        for case in cases {
            for _ in 0..POINTS_PER_CASE {
                let x = (case.sample)(&mut rng);
                check_partials_near(case.name, case.dual, x, (case.room)(x));
            }
        }
    }

    #[test]
    fn unary_derivatives_match_finite_differences() {
        check_against_finite_differences(unary_cases(), 0xf0_0001);
    }

    #[test]
    fn binary_derivatives_match_finite_differences() {
        check_against_finite_differences(binary_cases(), 0xf0_0002);
    }

    #[test]
    fn ternary_derivatives_match_finite_differences() {
        check_against_finite_differences(ternary_cases(), 0xf0_0003);
    }

    fn same_float(a: f64, b: f64) -> bool {
        a == b || (a.is_nan() && b.is_nan())
    }

    /// Values inside and outside every domain, and the special ones.
    fn probe_values(rng: &mut StdRng) -> Vec<f64> {
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        values.extend((0..16).map(|_| rng.gen_range(-20.0..20.0)));
        values
    }

    #[test]
    fn dual_values_are_the_f64_values_and_constants_stay_constant() {
        let mut rng = StdRng::seed_from_u64(0xf0_0004);
        let probes = probe_values(&mut rng);
        let check = |name: &str, dual: Dual<1>, float: f64, at: &dyn std::fmt::Debug| {
            assert!(
                same_float(dual.value, float),
                "{name} at {at:?}: dual {} vs f64 {float}",
                dual.value
            );
            assert_eq!(dual.partials, [0.0], "{name} at {at:?}: a constant moved");
        };
        for case in unary_cases() {
            for &x in &probes {
                // A constant's partials are structural zeros: even at a singular point
                // (ln 0, acos 1, powf of a negative base) nothing moves.
                let d = (case.dual)([Dual::constant(x)]);
                let lifted = Dual::<1>::new(d.value, [d.partials[0]]);
                check(case.name, lifted, (case.float)([x]), &x);
            }
        }
        for case in binary_cases() {
            for &a in &probes {
                for &b in &probes {
                    let d = (case.dual)([Dual::constant(a), Dual::constant(b)]);
                    assert!(
                        same_float(d.value, (case.float)([a, b])),
                        "{} at {a}, {b}",
                        case.name
                    );
                    assert_eq!(
                        d.partials, [0.0; 2],
                        "{} at {a}, {b}: a constant moved",
                        case.name
                    );
                }
            }
        }
        for case in ternary_cases() {
            for _ in 0..64 {
                let x = (case.sample)(&mut rng);
                let d = (case.dual)(x.map(Dual::constant));
                assert!(
                    same_float(d.value, (case.float)(x)),
                    "{} at {x:?}",
                    case.name
                );
            }
        }
    }

    fn is_piecewise_constant(name: &str) -> bool {
        [
            "floor",
            "ceil",
            "round",
            "round_ties_even",
            "trunc",
            "signum",
            "powi(0)",
        ]
        .contains(&name)
    }

    #[test]
    fn nan_propagates_to_every_moving_direction() {
        for case in unary_cases() {
            let d = (case.dual)([Dual::variable(f64::NAN, 0)]);
            if case.name == "powi(0)" {
                // NaN⁰ = 1, a constant.
                assert_eq!((d.value, d.partials), (1.0, [0.0]));
                continue;
            }
            assert!(d.value.is_nan(), "{}: value {}", case.name, d.value);
            if case.name == "neg" {
                // Linear: d(−x) = −dx whatever x is.
                assert_eq!(d.partials, [-1.0]);
                continue;
            }
            let expected_nan = !is_piecewise_constant(case.name);
            assert_eq!(
                d.partials[0].is_nan(),
                expected_nan,
                "{}: partial {}",
                case.name,
                d.partials[0]
            );
        }
        // Out of the domain: the value is NaN, so is the derivative.
        for (name, f) in [
            ("ln", (|x| x.ln()) as fn(Dual<1>) -> Dual<1>),
            ("sqrt", |x| x.sqrt()),
            ("acosh", |x| x.acosh()),
            ("atanh", |x| (x - 1.0).atanh()),
            ("asin", |x| (x + 2.0).asin()),
            ("log2", |x| x.log2()),
            ("ln_1p", |x| (x - 1.0).ln_1p()),
        ] {
            let d = f(Dual::variable(-0.5, 0));
            assert!(
                d.value.is_nan() && d.partials[0].is_nan(),
                "{name} outside its domain: {d:?}"
            );
        }
    }

    #[test]
    fn infinities_follow_the_limits() {
        let at = |f: fn(Dual<1>) -> Dual<1>, x: f64| {
            let d = f(Dual::variable(x, 0));
            (d.value, d.partials[0])
        };
        let inf = f64::INFINITY;
        assert_eq!(at(|x| x.exp(), inf), (inf, inf)); // (eˣ)' = eˣ
        assert_eq!(at(|x| x.exp(), -inf), (0.0, 0.0));
        assert_eq!(at(|x| x.tanh(), inf), (1.0, 0.0)); // 1 − tanh² → 0
        assert_eq!(at(|x| x.atan(), inf), (FRAC_PI_2, 0.0)); // 1/(1 + x²) → 0
        assert_eq!(at(|x| x.sqrt(), inf), (inf, 0.0)); // 1/(2√x) → 0
        assert_eq!(at(|x| x.ln(), inf), (inf, 0.0)); // 1/x → 0
        assert_eq!(at(|x| x.ln(), 0.0), (-inf, inf)); // 1/x at 0
        assert_eq!(at(|x| x.sqrt(), 0.0), (0.0, inf));
        assert_eq!(at(|x| x.acos(), 1.0), (0.0, -inf)); // −1/√(1 − x²) at 1
        assert_eq!(at(|x| x.recip(), 0.0), (inf, -inf)); // −1/x² at +0
        assert_eq!(at(|x| x.asinh(), 1e300).1, 1e-300); // 1/√(x² + 1) without overflow
        let angle = Dual::<2>::variable(1e300, 0).atan2(Dual::variable(1e300, 1));
        assert!(
            angle.partials.iter().all(|p| p.is_finite() && *p != 0.0),
            "{angle:?}"
        );
    }

    #[test]
    fn derivatives_near_domain_edges_match_finite_differences() {
        type F = fn([Dual<1>; 1]) -> Dual<1>;
        let edges: [(&str, F, f64, f64); 19] = [
            // (name, f, x, distance from x to the edge)
            ("ln near 0", |[x]| x.ln(), 1e-8, 1e-8),
            ("ln near 0", |[x]| x.ln(), 1e-4, 1e-4),
            ("log2 near 0", |[x]| x.log2(), 1e-6, 1e-6),
            ("log10 near 0", |[x]| x.log10(), 1e-6, 1e-6),
            ("ln_1p near −1", |[x]| x.ln_1p(), -1.0 + 1e-6, 1e-6),
            ("sqrt near 0", |[x]| x.sqrt(), 1e-10, 1e-10),
            ("cbrt near 0", |[x]| x.cbrt(), -1e-9, 1e-9),
            ("acos near 1", |[x]| x.acos(), 1.0 - 1e-6, 1e-6),
            ("acos near 1", |[x]| x.acos(), 1.0 - 1e-10, 1e-10),
            ("acos near −1", |[x]| x.acos(), -1.0 + 1e-6, 1e-6),
            ("asin near 1", |[x]| x.asin(), 1.0 - 1e-8, 1e-8),
            ("asin near −1", |[x]| x.asin(), -1.0 + 1e-8, 1e-8),
            ("atanh near 1", |[x]| x.atanh(), 1.0 - 1e-6, 1e-6),
            ("acosh near 1", |[x]| x.acosh(), 1.0 + 1e-8, 1e-8),
            ("tan near π/2", |[x]| x.tan(), FRAC_PI_2 - 1e-6, 1e-6),
            ("recip near 0", |[x]| x.recip(), -1e-7, 1e-7),
            (
                "powf(x, 0.5) near 0",
                |[x]| x.powf(Dual::constant(0.5)),
                1e-9,
                1e-9,
            ),
            ("exp_m1 far left", |[x]| x.exp_m1(), -40.0, f64::INFINITY),
            ("abs near its kink", |[x]| x.abs(), 1e-9, 1e-9),
        ];
        for (name, f, x, room) in edges {
            check_partials_near(name, f, [x], room);
        }
        // Near −1, f64::atanh itself (½·ln_1p(2x / (1 − x))) loses ~1e-10 absolute to
        // cancellation, too much for differences at this step. Its derivative is even, so
        // check it equals the derivative at the mirrored point, checked above.
        for delta in [1e-6, 1e-10] {
            let near_minus_one = Dual::<1>::variable(-1.0 + delta, 0).atanh();
            let near_plus_one = Dual::<1>::variable(1.0 - delta, 0).atanh();
            assert_eq!(
                near_minus_one.partials, near_plus_one.partials,
                "atanh′ at ±(1 − {delta})"
            );
        }
    }

    #[test]
    fn powf_of_a_negative_base_with_an_integer_exponent() {
        let mut rng = StdRng::seed_from_u64(0xf0_0005);
        for n in -3..=3 {
            let exponent = Dual::<1>::constant(f64::from(n));
            for _ in 0..8 {
                let x = -rng.gen_range(1e-3..3.0);
                let d = Dual::<1>::variable(x, 0).powf(exponent);
                assert_eq!(d.value, x.powf(f64::from(n)));
                // d/dx xⁿ = n·xⁿ⁻¹, finite for a negative base.
                let expected = if n == 0 {
                    0.0
                } else {
                    f64::from(n) * x.powi(n - 1)
                };
                let tolerance = 4.0 * f64::EPSILON * expected.abs();
                assert!(
                    (d.partials[0] - expected).abs() <= tolerance,
                    "n = {n}, x = {x}: {d:?}"
                );
                check_partials_near("powf(x < 0, n ∈ ℤ)", |[x]| x.powf(exponent), [x], x.abs());
            }
        }
        // A moving exponent: ∂/∂n xⁿ = xⁿ·ln x is NaN for x < 0, and only that direction
        // is poisoned; the base direction stays n·xⁿ⁻¹.
        let d = Dual::<2>::variable(-2.0, 0).powf(Dual::variable(3.0, 1));
        assert_eq!(d.value, -8.0);
        assert_eq!(d.partials[0], 12.0);
        assert!(d.partials[1].is_nan());
        // 0ⁿ for n > 0 does not move with n; 0⁰ does not move with x.
        let zero_base = Dual::<2>::variable(0.0, 0).powf(Dual::variable(2.0, 1));
        assert_eq!(zero_base.partials, [0.0, 0.0]); // ∂/∂x x² at 0 = 0
        let zero_zero = Dual::<2>::variable(0.0, 0).powf(Dual::constant(0.0));
        assert_eq!((zero_zero.value, zero_zero.partials), (1.0, [0.0, 0.0]));
    }

    #[test]
    fn powi_at_the_extreme_exponent_does_not_overflow() {
        let d = Dual::<1>::variable(1.0, 0).powi(i32::MIN);
        assert_eq!((d.value, d.partials[0]), (1.0, f64::from(i32::MIN))); // n·1ⁿ⁻¹
    }

    #[test]
    fn subgradients_at_kinks() {
        let (x, y) = (Dual::<2>::variable(1.5, 0), Dual::<2>::variable(1.5, 1));
        // abs at ±0 → 0.
        assert_eq!(Dual::<1>::variable(0.0, 0).abs().partials, [0.0]);
        assert_eq!(Dual::<1>::variable(-0.0, 0).abs().partials, [0.0]);
        // min/max on a tie → the derivative of self.
        assert_eq!(x.min(y).partials, [1.0, 0.0]);
        assert_eq!(y.min(x).partials, [0.0, 1.0]);
        assert_eq!(x.max(y).partials, [1.0, 0.0]);
        assert_eq!(y.max(x).partials, [0.0, 1.0]);
        // clamp: inside [lo, hi], bounds included, → self; outside → the bound.
        let lo = Dual::<3>::variable(-1.0, 1);
        let hi = Dual::<3>::variable(2.0, 2);
        for (x, expected) in [
            (-1.0, [1.0, 0.0, 0.0]),
            (2.0, [1.0, 0.0, 0.0]),
            (0.5, [1.0, 0.0, 0.0]),
            (-1.5, [0.0, 1.0, 0.0]),
            (2.5, [0.0, 0.0, 1.0]),
        ] {
            assert_eq!(
                Dual::<3>::variable(x, 0).clamp(lo, hi).partials,
                expected,
                "clamp at {x}"
            );
        }
        // hypot at the origin and copysign at 0 → 0, as abs.
        let origin = Dual::<2>::variable(0.0, 0).hypot(Dual::variable(0.0, 1));
        assert_eq!((origin.value, origin.partials), (0.0, [0.0, 0.0]));
        // atan2 at the origin → 0, as the reverse rule, not the NaN of 0/0.
        let angle = Dual::<2>::variable(0.0, 0).atan2(Dual::variable(0.0, 1));
        assert_eq!((angle.value, angle.partials), (0.0, [0.0, 0.0]));
        let signed = Dual::<1>::variable(0.0, 0).copysign(Dual::constant(-1.0));
        assert_eq!(signed.partials, [0.0]);
        // NaN operands of min/max are ignored, as in f64.
        let nan = Dual::<2>::constant(f64::NAN);
        assert_eq!(x.max(nan).partials, [1.0, 0.0]);
        assert_eq!(nan.min(y).partials, [0.0, 1.0]);
    }

    #[test]
    #[should_panic(expected = "lo > hi")]
    fn clamp_with_crossed_bounds_panics_like_f64() {
        let _ = Dual::<1>::variable(0.0, 0).clamp(Dual::constant(1.0), Dual::constant(-1.0));
    }

    #[test]
    fn constants_and_conversions() {
        assert_eq!(<Dual<2> as Real>::PI.value, PI);
        assert_eq!(<Dual<2> as Real>::ONE.partials, [0.0; 2]);
        assert_eq!(Dual::<2>::from_f64(-3.0).value, -3.0);
        assert_eq!(Dual::<2>::new(2.0, [1.0, 1.0]).to_f64(), 2.0);
        assert!(<Dual<1> as Real>::NAN.is_nan() && <Dual<1> as Real>::INFINITY.is_infinite());
        assert!(
            Dual::<1>::constant(1.0).is_finite() && Dual::<1>::constant(-0.0).is_sign_negative()
        );
        check_partials(
            "sum of constants",
            |[x]: [Dual<1>; 1]| x * <Dual<1> as Real>::TAU + <Dual<1> as Real>::LN_2,
            [0.7],
        );
    }
}
