//! Property tests: derived gradients checked by `test_rule` (finite differences,
//! accumulation, shapes, inputs) at random inputs, for a dozen functions.

#![allow(clippy::needless_range_loop, clippy::assign_op_pattern)]

use mochi::prelude::*;
use mochi::testing::RuleTest;
use proptest::prelude::*;

#[differentiable]
fn rational(x: f64, y: f64) -> f64 {
    (x * y + 1.0) / (x * x + y * y + 1.0)
}

#[differentiable]
fn smooth_max(x: &[f64]) -> f64 {
    let mut m = x[0];
    for i in 1..x.len() {
        if x[i] > m {
            m = x[i];
        }
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] - m).exp();
    }
    m + s.ln()
}

#[differentiable]
fn horner(c: &[f64], x: f64) -> f64 {
    let mut y = 0.0;
    for i in (0..c.len()).rev() {
        y = y * x + c[i];
    }
    y
}

#[differentiable]
fn softplus_sum(x: &[f64]) -> f64 {
    x.iter().map(|v| (1.0 + v.exp()).ln()).sum::<f64>()
}

#[differentiable]
fn dot_tanh(x: &[f64], w: &[f64]) -> f64 {
    let mut z = 0.0;
    for (a, b) in x.iter().zip(w.iter()) {
        z += a * b;
    }
    z.tanh()
}

#[differentiable]
fn piecewise(x: f64) -> f64 {
    if x < -1.0 {
        -x - 0.5
    } else if x < 1.0 {
        0.5 * x * x
    } else {
        x - 0.5
    }
}

#[differentiable]
fn newton_sqrt(a: f64) -> f64 {
    // a fixed number of Newton steps: differentiating the iteration
    let mut r = 1.0 + a * 0.5;
    for _ in 0..8 {
        r = 0.5 * (r + a / r);
    }
    r
}

#[differentiable]
fn running_product(x: &[f64]) -> f64 {
    let mut p = vec![1.0; x.len() + 1];
    for i in 0..x.len() {
        p[i + 1] = p[i] * x[i].cos();
    }
    p[x.len()]
}

#[differentiable]
fn angle(x: f64, y: f64) -> f64 {
    y.atan2(x) * x.hypot(y)
}

#[differentiable]
fn logistic_loss(w: &[f64], x: &[f64], label: f64) -> f64 {
    let mut z = 0.0;
    for i in 0..w.len() {
        z += w[i] * x[i];
    }
    let p = 1.0 / (1.0 + (-z).exp());
    -(label * p.ln() + (1.0 - label) * (1.0 - p).ln())
}

#[differentiable]
fn sort_two(a: f64, b: f64) -> f64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    lo * 2.0 + hi.sin()
}

#[differentiable]
fn geometric_mean(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for v in x.iter() {
        s += v.abs().ln();
    }
    (s / x.len() as f64).exp()
}

fn finite(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    lo..hi
}

fn vector(n: std::ops::Range<usize>, lo: f64, hi: f64) -> impl Strategy<Value = Vec<f64>> {
    proptest::collection::vec(lo..hi, n)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn rational_gradient(x in finite(-3.0, 3.0), y in finite(-3.0, 3.0)) {
        mochi::testing::test_rule((x, y), |a| rational(a.0, a.1), |a| rational::rrule(a.0, a.1));
    }

    #[test]
    fn smooth_max_gradient(x in vector(1..9, -4.0, 4.0)) {
        mochi::testing::test_rule((x,), |a| smooth_max(&a.0), |a| smooth_max::rrule(&a.0));
    }

    #[test]
    fn horner_gradient(c in vector(1..7, -2.0, 2.0), x in finite(-1.5, 1.5)) {
        mochi::testing::test_rule((c, x), |a| horner(&a.0, a.1), |a| horner::rrule(&a.0, a.1));
    }

    #[test]
    fn softplus_sum_gradient(x in vector(0..9, -5.0, 5.0)) {
        mochi::testing::test_rule((x,), |a| softplus_sum(&a.0), |a| softplus_sum::rrule(&a.0));
    }

    #[test]
    fn dot_tanh_gradient(x in vector(1..6, -1.0, 1.0), w in vector(1..6, -1.0, 1.0)) {
        mochi::testing::test_rule((x, w), |a| dot_tanh(&a.0, &a.1), |a| dot_tanh::rrule(&a.0, &a.1));
    }

    #[test]
    fn piecewise_gradient(x in finite(-3.0, 3.0)) {
        // away from the kinks at ±1, where finite differences straddle two pieces
        prop_assume!((x.abs() - 1.0).abs() > 1e-3);
        mochi::testing::test_rule((x,), |a| piecewise(a.0), |a| piecewise::rrule(a.0));
    }

    #[test]
    fn newton_sqrt_gradient(a in finite(0.1, 50.0)) {
        mochi::testing::test_rule((a,), |v| newton_sqrt(v.0), |v| newton_sqrt::rrule(v.0));
        // and the derivative is that of √a once converged: 1/(2√a)
        let d = newton_sqrt::gradient(a);
        prop_assert!((d - 0.5 / a.sqrt()).abs() < 1e-6 * (1.0 + d.abs()));
    }

    #[test]
    fn running_product_gradient(x in vector(1..8, -2.0, 2.0)) {
        mochi::testing::test_rule((x,), |a| running_product(&a.0), |a| running_product::rrule(&a.0));
    }

    #[test]
    fn angle_gradient(x in finite(0.2, 3.0), y in finite(-3.0, 3.0)) {
        mochi::testing::test_rule((x, y), |a| angle(a.0, a.1), |a| angle::rrule(a.0, a.1));
    }

    #[test]
    fn logistic_loss_gradient(w in vector(3..4, -1.0, 1.0), x in vector(3..4, -2.0, 2.0), label in 0.0..1.0) {
        mochi::testing::test_rule((w, x, label), |a| logistic_loss(&a.0, &a.1, a.2), |a| logistic_loss::rrule(&a.0, &a.1, a.2));
    }

    #[test]
    fn sort_two_gradient(a in finite(-3.0, 3.0), b in finite(-3.0, 3.0)) {
        prop_assume!((a - b).abs() > 1e-3);
        mochi::testing::test_rule((a, b), |v| sort_two(v.0, v.1), |v| sort_two::rrule(v.0, v.1));
    }

    #[test]
    fn geometric_mean_gradient(x in vector(1..7, 0.2, 5.0)) {
        RuleTest::new((x,), |a| geometric_mean(&a.0), |a| geometric_mean::rrule(&a.0)).run();
    }
}
