//! Exponentials and logarithms.

use mochi_core::kit::{binary_rules, unary_rules};
unary_rules! {
    /// `x.exp()`: d/dx = eˣ = y.
    ExpRule::exp, ExpPullback: |x| x.exp(), |_x, y| y;
    /// `x.exp2()`: d/dx = 2ˣ·ln 2 = y·ln 2.
    Exp2Rule::exp2, Exp2Pullback: |x| x.exp2(), |_x, y| y * T::LN_2;
    /// `x.exp_m1()` (`eˣ − 1`): d/dx = eˣ, recomputed rather than taken as `y + 1`,
    /// which loses all precision for very negative `x`.
    ExpM1Rule::exp_m1, ExpM1Pullback: |x| x.exp_m1(), |x, _y| x.exp();
    /// `x.ln()`: d/dx = 1/x (`+∞` at 0; `NaN` below, where the primal is `NaN`).
    LnRule::ln, LnPullback: |x| x.ln(), lazy |x, y| if y.is_nan() { T::NAN } else { x.recip() };
    /// `x.log2()`: d/dx = 1/(x·ln 2) (`NaN` where the primal is).
    Log2Rule::log2, Log2Pullback: |x| x.log2(),
        lazy |x, y| if y.is_nan() { T::NAN } else { (x * T::LN_2).recip() };
    /// `x.log10()`: d/dx = 1/(x·ln 10) (`NaN` where the primal is).
    Log10Rule::log10, Log10Pullback: |x| x.log10(),
        lazy |x, y| if y.is_nan() { T::NAN } else { (x * T::LN_10).recip() };
    /// `x.ln_1p()` (`ln(1 + x)`): d/dx = 1/(1 + x) (`NaN` where the primal is).
    Ln1pRule::ln_1p, Ln1pPullback: |x| x.ln_1p(),
        lazy |x, y| if y.is_nan() { T::NAN } else { (T::ONE + x).recip() };
}

binary_rules! {
    /// `x.log(base)` (`ln x / ln base`): ∂/∂x = 1/(x·ln base),
    /// ∂/∂base = −ln x/(base·ln² base) = −y/(base·ln base) (`NaN` where the primal is).
    LogRule::log, LogPullback: |x, base| x.log(base),
        |x, base, y| {
            let ln_base = base.ln();
            if y.is_nan() { (T::NAN, T::NAN) } else { ((x * ln_base).recip(), -y / (base * ln_base)) }
        };
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{derivative, partials};
    use mochi_core::kit::{check_binary, check_unary};
    use mochi_core::testing::{test_rule, RuleTest};
    use mochi_core::Call;
    use mochi_core::Real as _;

    #[test]
    fn exponentials() {
        check_unary!(exp, |x| x.exp(), [-3.0, 0.0, 0.7, 20.0]);
        check_unary!(exp2, |x| x.exp2(), [-3.0, 0.0, 0.7, 20.0]);
        check_unary!(exp_m1, |x| x.exp_m1(), [-30.0, -1e-8, 0.0, 0.7, 5.0]);
    }

    #[test]
    fn logarithms_including_near_zero() {
        let points = [1e-6, 1e-3, 0.5, 1.0, 7.0, 1e8];
        check_unary!(ln, |x| x.ln(), points);
        check_unary!(log2, |x| x.log2(), points);
        check_unary!(log10, |x| x.log10(), points);
        check_unary!(ln_1p, |x| x.ln_1p(), [-0.999, -0.5, 1e-9, 0.0, 3.0, 1e6]);
        check_binary!(
            log,
            |x, b| x.log(b),
            [(8.0, 2.0), (0.01, 10.0), (5.0, 0.5), (1e-4, 3.0)]
        );
    }

    #[test]
    fn domain_edges_propagate_like_the_primal() {
        let (y, pb) = Call((&0.0_f64,)).ln();
        assert_eq!((y, derivative(pb)), (f64::NEG_INFINITY, f64::INFINITY)); // 1/0
        let (y, pb) = Call((&-1.0_f64,)).ln();
        assert!(y.is_nan() && derivative(pb).is_nan());
        let (y, pb) = Call((&-2.0_f64, &3.0)).log();
        let (dx, db) = partials(pb);
        assert!(y.is_nan() && dx.is_nan() && db.is_nan());
        let (y, pb) = Call((&-1.0_f32,)).ln_1p();
        assert_eq!((y, derivative(pb)), (f32::NEG_INFINITY, f32::INFINITY));
        // The harness agrees that NaN in, NaN out is consistent.
        test_rule((f64::NAN,), |a| a.0.exp(), |a| Call((&a.0,)).exp());
    }

    #[test]
    fn exp_m1_keeps_its_precision_where_y_plus_one_would_not() {
        let (_, pb) = Call((&-50.0_f64,)).exp_m1();
        assert_eq!(derivative(pb), (-50.0_f64).exp()); // d/dx (eˣ − 1) = eˣ ≈ 1.9e-22
    }

    #[test]
    fn pullbacks_do_not_allocate() {
        RuleTest::new((0.3_f64,), |a| a.0.ln(), |a| Call((&a.0,)).ln())
            .forward(|a| a.0.ln())
            .expect_no_alloc()
            .run();
        RuleTest::new(
            (8.0_f64, 2.0_f64),
            |a| a.0.log(a.1),
            |a| Call((&a.0, &a.1)).log(),
        )
        .forward(|a| a.0.log(a.1))
        .expect_no_alloc()
        .run();
    }
}
