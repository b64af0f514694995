//! Roots, powers, reciprocal, `hypot` and `mul_add`.

use mochi_core::kit::{binary_rules, rule_trait, unary_rules};
use mochi_core::{Call, NoTangent, Pullback, Real, Scalar};

unary_rules! {
    /// `x.sqrt()`: d/dx = 1/(2√x) = 1/(2y) (`+∞` at 0, `NaN` below, like the primal).
    SqrtRule::sqrt, SqrtPullback: |x| x.sqrt(), lazy |_x, y| (T::TWO * y).recip();
    /// `x.cbrt()`: d/dx = 1/(3·∛x²) = 1/(3y²) (`+∞` at 0).
    CbrtRule::cbrt, CbrtPullback: |x| x.cbrt(), lazy |_x, y| (T::from_f64(3.0) * y * y).recip();
    /// `x.recip()`: d/dx = −1/x² = −y².
    RecipRule::recip, RecipPullback: |x| x.recip(), lazy |_x, y| -(y * y);
}

binary_rules! {
    /// `x.powf(p)`: ∂/∂x = p·x^(p−1), ∂/∂p = y·ln x.
    ///
    /// Where the formulas are `0·∞` the limit is used: ∂/∂x = 0 when `p = 0`, ∂/∂p = 0
    /// when `y = 0`; at a zero base (`0ᵖ` is 0, 1 or ∞ on three flat pieces) ∂/∂p = 0. For a negative base the function is only defined at integer
    /// exponents, so ∂/∂p = 0 there (`ln x` would be `NaN`); ∂/∂x = p·x^(p−1) holds.
    /// A negative base with a non-integer exponent gives `NaN`, like the primal.
    PowfRule::powf, PowfPullback: |x, p| x.powf(p),
        |x, p, y| {
            let dx = if p == T::ZERO { T::ZERO } else { p * x.powf(p - T::ONE) };
            let dp = if x == T::ZERO || y == T::ZERO || (x < T::ZERO && p.fract() == T::ZERO) { T::ZERO } else { y * x.ln() };
            (dx, dp)
        };
    /// `a.hypot(b)` (`√(a² + b²)`): ∂/∂a = a/y, ∂/∂b = b/y; at the origin, where
    /// the function has a kink, both are 0.
    HypotRule::hypot, HypotPullback: |a, b| a.hypot(b),
        |a, b, y| if y == T::ZERO { (T::ZERO, T::ZERO) } else { (a / y, b / y) };
}

rule_trait! {
    /// `x.powi(n)`: d/dx = n·x^(n−1) (0 for `n = 0`); the `i32` exponent has no tangent.
    PowiRule::powi
}

/// The pullback of [`PowiRule`]: holds `x` and `n`.
#[derive(Clone, Copy, Debug)]
pub struct PowiPullback<T> {
    x: T,
    n: i32,
}

rule_trait! {
    /// `x.mul_add(a, b)` (`x·a + b` with one rounding): ∂/∂x = a, ∂/∂a = x, ∂/∂b = 1.
    MulAddRule::mul_add
}

/// The pullback of [`MulAddRule`]: holds `x` and `a`.
#[derive(Clone, Copy, Debug)]
pub struct MulAddPullback<T> {
    x: T,
    a: T,
}

impl<S: Scalar> PowiRule for Call<(&S, &i32)> {
    type Output = S;
    type Pullback = PowiPullback<S>;
    #[inline(always)]
    fn powi(self) -> (S, PowiPullback<S>) {
        let (x, n) = (*self.0 .0, *self.0 .1);
        (
            S::of_real(Real::powi(x.as_real(), n)),
            PowiPullback { x, n },
        )
    }
}

impl<S: Scalar> Pullback for PowiPullback<S> {
    type Output = S;
    type Args = (S, NoTangent);
    #[inline(always)]
    fn pullback(self, dy: S, (dx, _): (&mut S, &mut NoTangent)) {
        let (x, n) = (self.x.as_real(), self.n);
        let d = match n {
            0 => Real::ZERO,
            // n − 1 would overflow; x^(n−1) = xⁿ/x there.
            i32::MIN => S::Real::from_f64(n as f64) * Real::powi(x, n) / x,
            _ => S::Real::from_f64(n as f64) * Real::powi(x, n - 1),
        };
        *dx += dy * S::of_real(d);
    }
}

impl<S: Scalar> MulAddRule for Call<(&S, &S, &S)> {
    type Output = S;
    type Pullback = MulAddPullback<S>;
    #[inline(always)]
    fn mul_add(self) -> (S, MulAddPullback<S>) {
        let (x, a, b) = (*self.0 .0, *self.0 .1, *self.0 .2);
        let y = Real::mul_add(x.as_real(), a.as_real(), b.as_real());
        (S::of_real(y), MulAddPullback { x, a })
    }
}

impl<S: Scalar> Pullback for MulAddPullback<S> {
    type Output = S;
    type Args = (S, S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (dx, da, db): (&mut S, &mut S, &mut S)) {
        *dx += dy * self.a;
        *da += dy * self.x;
        *db += dy;
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{derivative, partials};
    use mochi_core::kit::{check_binary, check_unary, F32_RTOL};
    use mochi_core::testing::RuleTest;
    use mochi_core::{Call, Dual, FnPullback, NoTangent, Pullback, Real};

    #[test]
    fn roots_and_reciprocal() {
        check_unary!(sqrt, |x| x.sqrt(), [1e-8, 0.25, 2.0, 1e12]);
        check_unary!(cbrt, |x| x.cbrt(), [-8.0, -1e-6, 0.5, 1e9]);
        check_unary!(recip, |x| x.recip(), [-4.0, 1e-5, 0.5, 3e7]);
    }

    #[test]
    fn powf_including_negative_bases_with_integer_exponents() {
        check_binary!(
            powf,
            |x, p| x.powf(p),
            [(2.0, 3.5), (0.3, -1.2), (5.0, 0.0), (1e-3, 0.5)]
        );
        // Negative base: defined only at integer exponents, so finite differences can
        // only move the base; the exponent is held fixed and its partial (0) asserted.
        for (x, p) in [(-2.0_f64, 3.0_f64), (-0.5, -2.0), (-3.0, 4.0)] {
            let base_only = move |a: &mut (f64,)| {
                let (y, pb) = Call((&a.0, &p)).powf();
                let pb = FnPullback::<_, f64, (f64,)>::new(move |dy: f64, (dx,): (&mut f64,)| {
                    let mut dp = 0.0;
                    pb.pullback(dy, (dx, &mut dp));
                    assert_eq!(dp, 0.0, "∂/∂p of a negative base is held at 0");
                });
                (y, pb)
            };
            RuleTest::new((x,), move |a| a.0.powf(p), base_only)
                .jvp(move |a, t| Dual::<1>::new(a.0, [t.0]).powf(Dual::constant(p)).partials[0])
                .run();
        }
    }

    #[test]
    fn powf_limits_where_the_formulas_give_zero_times_infinity() {
        let (y, pb) = Call((&0.0_f64, &0.0)).powf();
        assert_eq!((y, partials(pb)), (1.0, (0.0, 0.0))); // x⁰ = 1 is constant in x
        let (y, pb) = Call((&0.0_f64, &2.0)).powf();
        assert_eq!((y, partials(pb)), (0.0, (0.0, 0.0))); // d/dp 0ᵖ = 0 for p > 0
        let (y, pb) = Call((&-2.0_f64, &3.0)).powf();
        assert_eq!((y, partials(pb)), (-8.0, (12.0, 0.0))); // 3·(−2)², held exponent
        let (y, pb) = Call((&-2.0_f32, &0.5)).powf();
        let (dx, dp) = partials(pb);
        assert!(y.is_nan() && dx.is_nan() && dp.is_nan());
    }

    #[test]
    fn powi() {
        for n in [-3, -1, 0, 1, 2, 7] {
            for x in [-1.5_f64, 0.4, 3.0] {
                RuleTest::new((x, n), |a| a.0.powi(a.1), |a| Call((&a.0, &a.1)).powi())
                    .jvp(move |a, t: &(f64, NoTangent)| {
                        Dual::<1>::new(a.0, [t.0]).powi(a.1).partials[0]
                    })
                    .run();
                RuleTest::new(
                    (x as f32, n),
                    |a| a.0.powi(a.1),
                    |a| Call((&a.0, &a.1)).powi(),
                )
                .forward(|a| a.0.powi(a.1))
                .tolerance(F32_RTOL, 0.0)
                .run();
            }
        }
        let (y, pb) = Call((&0.0_f64, &0)).powi();
        let mut dx = 0.0;
        pb.pullback(1.0, (&mut dx, &mut NoTangent));
        assert_eq!((y, dx), (1.0, 0.0)); // x⁰ is constant, even at 0
        let (_, pb) = Call((&1.0_f64, &i32::MIN)).powi();
        let mut dx = 0.0;
        pb.pullback(1.0, (&mut dx, &mut NoTangent));
        assert_eq!(dx, i32::MIN as f64); // n·1^(n−1) without overflowing n − 1
    }

    #[test]
    fn hypot_and_its_kink_at_the_origin() {
        check_binary!(
            hypot,
            |a, b| a.hypot(b),
            [(3.0, 4.0), (-1e-3, 2.0), (1e200, 1e200), (-5.0, -0.1)]
        );
        let (y, pb) = Call((&0.0_f64, &0.0)).hypot();
        assert_eq!((y, partials(pb)), (0.0, (0.0, 0.0)));
    }

    #[test]
    fn mul_add() {
        for (x, a, b) in [
            (1.5_f64, -2.0_f64, 0.25_f64),
            (-3.0, 0.1, 7.0),
            (1e5, 1e-5, -1.0),
        ] {
            RuleTest::new(
                (x, a, b),
                |v| v.0.mul_add(v.1, v.2),
                |v| Call((&v.0, &v.1, &v.2)).mul_add(),
            )
            .jvp(|v, t| {
                let d = |value: f64, dv: f64| Dual::<1>::new(value, [dv]);
                d(v.0, t.0).mul_add(d(v.1, t.1), d(v.2, t.2)).partials[0]
            })
            .expect_no_alloc()
            .run();
            RuleTest::new(
                (x as f32, a as f32, b as f32),
                |v| v.0.mul_add(v.1, v.2),
                |v| Call((&v.0, &v.1, &v.2)).mul_add(),
            )
            .forward(|v| v.0.mul_add(v.1, v.2))
            .run();
        }
    }

    #[test]
    fn sqrt_at_zero_is_infinite_like_the_limit() {
        let (y, pb) = Call((&0.0_f32,)).sqrt();
        assert_eq!((y, derivative(pb)), (0.0, f32::INFINITY));
    }
}
