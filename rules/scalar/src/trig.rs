//! Trigonometric functions, their inverses, and angle conversions.

use mochi_core::kit::{binary_rules, rule_trait, unary_rules};
use mochi_core::{Call, Pullback, Real, Scalar};

unary_rules! {
    /// `x.sin()`: d/dx = cos x.
    SinRule::sin, SinPullback: |x| x.sin(), |x, _y| x.cos();
    /// `x.cos()`: d/dx = −sin x.
    CosRule::cos, CosPullback: |x| x.cos(), |x, _y| -x.sin();
    /// `x.tan()`: d/dx = 1 + tan² x = 1 + y².
    TanRule::tan, TanPullback: |x| x.tan(), |_x, y| T::ONE + y * y;
    /// `x.asin()`: d/dx = 1/√(1 − x²), computed as 1/√((1 − x)(1 + x)) to keep its
    /// precision near ±1 (`+∞` at ±1, `NaN` outside, like the primal).
    AsinRule::asin, AsinPullback: |x| x.asin(), lazy |x, _y| ((T::ONE - x) * (T::ONE + x)).sqrt().recip();
    /// `x.acos()`: d/dx = −1/√(1 − x²), computed as −1/√((1 − x)(1 + x)).
    AcosRule::acos, AcosPullback: |x| x.acos(), lazy |x, _y| -((T::ONE - x) * (T::ONE + x)).sqrt().recip();
    /// `x.atan()`: d/dx = 1/(1 + x²).
    AtanRule::atan, AtanPullback: |x| x.atan(), lazy |x, _y| (T::ONE + x * x).recip();
    /// `x.to_degrees()`: d/dx = 180/π (the same constant the primal multiplies by).
    ToDegreesRule::to_degrees, ToDegreesPullback: |x| x.to_degrees(), |_x, _y| T::ONE.to_degrees();
    /// `x.to_radians()`: d/dx = π/180.
    ToRadiansRule::to_radians, ToRadiansPullback: |x| x.to_radians(), |_x, _y| T::ONE.to_radians();
}

binary_rules! {
    /// `y.atan2(x)` (the angle of the point `(x, y)`): ∂/∂y = x/r², ∂/∂x = −y/r² with
    /// `r = hypot(x, y)` (divided by `r` twice, so that `r²` cannot overflow). At the
    /// origin, where the angle is not continuous, both are 0.
    Atan2Rule::atan2, Atan2Pullback: |y, x| y.atan2(x),
        |y, x, _angle| {
            let r = y.hypot(x);
            if r == T::ZERO { (T::ZERO, T::ZERO) } else { (x / r / r, -y / r / r) }
        };
}

rule_trait! {
    /// `x.sin_cos()`, the pair `(sin x, cos x)`: its cotangent is a pair `(s̄, c̄)` and
    /// x̄ += s̄·cos x − c̄·sin x.
    SinCosRule::sin_cos
}

/// The pullback of [`SinCosRule`]: holds `sin x` and `cos x`.
#[derive(Clone, Copy, Debug)]
pub struct SinCosPullback<T> {
    sin: T,
    cos: T,
}

impl<S: Scalar> SinCosRule for Call<(&S,)> {
    type Output = (S, S);
    type Pullback = SinCosPullback<S>;
    #[inline(always)]
    fn sin_cos(self) -> ((S, S), SinCosPullback<S>) {
        let (sin, cos) = Real::sin_cos(self.0 .0.as_real());
        let (sin, cos) = (S::of_real(sin), S::of_real(cos));
        ((sin, cos), SinCosPullback { sin, cos })
    }
}

impl<S: Scalar> Pullback for SinCosPullback<S> {
    type Output = (S, S);
    type Args = (S,);
    #[inline(always)]
    fn pullback(self, (ds, dc): (S, S), (dx,): (&mut S,)) {
        *dx += ds * self.cos - dc * self.sin;
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{derivative, partials};
    use mochi_core::kit::{check_binary, check_unary, F32_RTOL};
    use mochi_core::testing::RuleTest;
    use mochi_core::{Call, Dual, Real};

    #[test]
    fn sin_cos_tan() {
        let points = [-4.0, -0.5, 0.0, 1.2, 30.0];
        check_unary!(sin, |x| x.sin(), points);
        check_unary!(cos, |x| x.cos(), points);
        check_unary!(tan, |x| x.tan(), [-1.4, -0.5, 0.0, 1.2, 1.5]);
    }

    #[test]
    fn inverse_functions_including_near_plus_minus_one() {
        let points = [-0.9999, -0.99, -0.3, 0.0, 0.6, 0.99, 0.9999];
        check_unary!(asin, |x| x.asin(), points);
        check_unary!(acos, |x| x.acos(), points);
        check_unary!(atan, |x| x.atan(), [-1e4, -2.0, 0.0, 0.3, 50.0]);
    }

    #[test]
    fn atan2_in_every_quadrant_and_on_the_axes() {
        check_binary!(
            atan2,
            |y, x| y.atan2(x),
            [
                (1.0, 2.0),
                (1.0, -2.0),
                (-1.0, -2.0),
                (-1.0, 2.0),
                (0.0, 1.0),
                (3.0, 0.0),
                (1e-3, -1e-3),
                (1e200, 1e200)
            ]
        );
        // Just off the negative x axis the angle is ±π, but its derivative is smooth.
        let (_, pb) = Call((&1e-300_f64, &-1.0)).atan2();
        assert_eq!(partials(pb), (-1.0, -1e-300)); // (x/r², −y/r²) with r = 1
    }

    #[test]
    fn atan2_at_the_origin_is_zero() {
        let (angle, pb) = Call((&0.0_f64, &0.0)).atan2();
        assert_eq!((angle, partials(pb)), (0.0, (0.0, 0.0)));
    }

    #[test]
    fn asin_at_one_is_infinite_like_the_limit() {
        let (y, pb) = Call((&1.0_f64,)).asin();
        assert_eq!(
            (y, derivative(pb)),
            (std::f64::consts::FRAC_PI_2, f64::INFINITY)
        );
        let (y, pb) = Call((&1.5_f32,)).acos();
        assert!(y.is_nan() && derivative(pb).is_nan());
    }

    #[test]
    fn angle_conversions() {
        check_unary!(to_degrees, |x| x.to_degrees(), [-3.0, 0.0, 1.0, 1e5]);
        check_unary!(to_radians, |x| x.to_radians(), [-180.0, 0.0, 45.0, 1e5]);
    }

    #[test]
    fn sin_cos_has_a_pair_cotangent() {
        for x in [-2.0_f64, 0.0, 0.7, 10.0] {
            RuleTest::new((x,), |a| a.0.sin_cos(), |a| Call((&a.0,)).sin_cos())
                .jvp(|a, t| {
                    let (s, c) = Dual::<1>::new(a.0, [t.0]).sin_cos();
                    (s.partials[0], c.partials[0])
                })
                .expect_no_alloc()
                .run();
            RuleTest::new((x as f32,), |a| a.0.sin_cos(), |a| Call((&a.0,)).sin_cos())
                .forward(|a| a.0.sin_cos())
                .tolerance(F32_RTOL, 0.0)
                .run();
        }
    }

    #[test]
    fn pullbacks_do_not_allocate() {
        RuleTest::new((0.3_f32,), |a| a.0.asin(), |a| Call((&a.0,)).asin())
            .forward(|a| a.0.asin())
            .tolerance(F32_RTOL, 0.0)
            .expect_no_alloc()
            .run();
        RuleTest::new(
            (-1.0, -2.0),
            |a| a.0.atan2(a.1),
            |a| Call((&a.0, &a.1)).atan2(),
        )
        .forward(|a: &(Dual<1>, Dual<1>)| a.0.atan2(a.1))
        .expect_no_alloc()
        .run();
    }
}
