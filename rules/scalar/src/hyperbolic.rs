//! Hyperbolic functions and their inverses.

use mochi_core::kit::unary_rules;
unary_rules! {
    /// `x.sinh()`: d/dx = cosh x.
    SinhRule::sinh, SinhPullback: |x| x.sinh(), |x, _y| x.cosh();
    /// `x.cosh()`: d/dx = sinh x.
    CoshRule::cosh, CoshPullback: |x| x.cosh(), |x, _y| x.sinh();
    /// `x.tanh()`: d/dx = 1 − tanh² x = 1 − y² while |y| < 0.9, and 1/cosh² x beyond,
    /// where 1 − y² would cancel: `y` rounded near ±1 leaves few correct digits in
    /// 1 − y² (in `f32` at x = 5 a relative error of 1.5·10⁻⁴, and exactly 0 from
    /// x ≈ 9 on), while cosh x is accurate to the last bit and overflows to a
    /// derivative of 0 only where the true one is below the smallest float.
    TanhRule::tanh, TanhPullback: |x| x.tanh(),
        |x, y| if y.abs() < T::from_f64(0.9) { T::ONE - y * y } else { let c = x.cosh(); (c * c).recip() };
    /// `x.asinh()`: d/dx = 1/√(x² + 1), computed as 1/hypot(x, 1) so that large `x`
    /// does not overflow.
    AsinhRule::asinh, AsinhPullback: |x| x.asinh(), lazy |x, _y| x.hypot(T::ONE).recip();
    /// `x.acosh()`: d/dx = 1/√(x² − 1), computed as 1/√((x − 1)(x + 1)) (`+∞` at 1,
    /// `NaN` below, like the primal).
    AcoshRule::acosh, AcoshPullback: |x| x.acosh(), lazy |x, _y| ((x - T::ONE) * (x + T::ONE)).sqrt().recip();
    /// `x.atanh()`: d/dx = 1/(1 − x²), computed as 1/((1 − x)(1 + x)) (`+∞` at ±1;
    /// `NaN` outside, where the primal is).
    AtanhRule::atanh, AtanhPullback: |x| x.atanh(),
        lazy |x, y| if y.is_nan() { T::NAN } else { ((T::ONE - x) * (T::ONE + x)).recip() };
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::derivative;
    use mochi_core::kit::check_unary;
    use mochi_core::testing::RuleTest;
    use mochi_core::Call;
    use mochi_core::Real as _;

    #[test]
    fn sinh_cosh_tanh() {
        let points = [-5.0, -0.3, 0.0, 0.8, 20.0];
        check_unary!(sinh, |x| x.sinh(), points);
        check_unary!(cosh, |x| x.cosh(), points);
        check_unary!(tanh, |x| x.tanh(), points);
    }

    #[test]
    fn tanh_keeps_its_derivative_where_tanh_rounds_to_one() {
        // sech² x = 4/(eˣ + e⁻ˣ)²; tanh 9 is 1.0 in f32 and tanh 20 is 1.0 in f64.
        let sech2 = |x: f64| 4.0 / (x.exp() + (-x).exp()).powi(2);
        let (_, pb) = Call((&9.0_f32,)).tanh();
        let d = f64::from(derivative(pb));
        assert!((d / sech2(9.0) - 1.0).abs() < 1e-6, "{d}");
        let (_, pb) = Call((&-20.0_f64,)).tanh();
        assert!((derivative(pb) / sech2(-20.0) - 1.0).abs() < 1e-14);
        let (_, pb) = Call((&0.3_f64,)).tanh();
        assert!((derivative(pb) / sech2(0.3) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn inverse_functions_including_near_their_edges() {
        check_unary!(asinh, |x| x.asinh(), [-1e6, -2.0, 0.0, 0.5, 1e30]);
        check_unary!(acosh, |x| x.acosh(), [1.0001, 1.5, 10.0, 1e8]);
        check_unary!(atanh, |x| x.atanh(), [-0.999, -0.5, 0.0, 0.3, 0.999]);
    }

    #[test]
    fn edges_are_infinite_like_the_limit() {
        let (y, pb) = Call((&1.0_f64,)).acosh();
        assert_eq!((y, derivative(pb)), (0.0, f64::INFINITY));
        let (y, pb) = Call((&1.0_f32,)).atanh();
        assert_eq!((y, derivative(pb)), (f32::INFINITY, f32::INFINITY));
        let (y, pb) = Call((&2.0_f64,)).atanh();
        assert!(y.is_nan() && derivative(pb).is_nan());
        let (_, pb) = Call((&1e300_f64,)).asinh();
        assert_eq!(derivative(pb), 1e-300); // 1/√(x² + 1) without overflowing x²
    }

    #[test]
    fn pullbacks_do_not_allocate() {
        RuleTest::new((0.4_f64,), |a| a.0.tanh(), |a| Call((&a.0,)).tanh())
            .forward(|a| a.0.tanh())
            .expect_no_alloc()
            .run();
    }
}
