//! Straight-line code, operators, methods and numerically awkward points.

// The corpus writes every form on purpose (`y = y * a`, index loops), so clippy's
// style suggestions for the user's code are off here; the generated code itself is
// checked by clippy like any other code.
#![allow(
    clippy::assign_op_pattern,
    clippy::needless_range_loop,
    clippy::neg_multiply,
    clippy::approx_constant,
    clippy::excessive_precision,
    clippy::explicit_counter_loop,
    clippy::manual_memcpy,
    clippy::ptr_arg,
    clippy::let_and_return,
    clippy::just_underscores_and_digits
)]

mod common;
use mochi::prelude::*;

#[differentiable]
fn poly(x: f64) -> f64 {
    3.0 * x * x * x - 2.0 * x + 1.0
}

#[differentiable]
fn quotient(x: f64, y: f64) -> f64 {
    (x - y) / (x * y + 2.0)
}

#[differentiable]
fn negation_and_remainder(x: f64, y: f64) -> f64 {
    -x * (x % y) + -(y * 0.5)
}

#[differentiable]
fn transcendental(x: f64) -> f64 {
    x.exp().sin() + x.cos().powi(3) + (x * x + 1.0).ln() - x.tanh()
}

#[differentiable]
fn powers(x: f64, p: f64) -> f64 {
    x.powf(p) + x.sqrt() * x.cbrt() + x.exp2() + x.log2() + x.log10() + x.log(3.0)
}

#[differentiable]
fn trig(x: f64, y: f64) -> f64 {
    x.atan2(y) + x.hypot(y) + (x / 4.0).asin() + (y / 4.0).acos() + x.atan() + x.tan()
}

#[differentiable]
fn hyperbolic(x: f64) -> f64 {
    x.sinh() * x.cosh() + x.asinh() + (x + 2.0).acosh() + (x / 3.0).atanh()
}

#[differentiable]
fn small_values(x: f64) -> f64 {
    x.exp_m1() + x.ln_1p() + x.recip() + x.to_degrees() + x.to_radians()
}

#[differentiable]
fn fused(x: f64, a: f64, b: f64) -> f64 {
    x.mul_add(a, b) * x.max(a) + x.min(b) + x.clamp(-1.0, 1.0) + x.abs()
}

#[differentiable]
fn sin_cos_pair(x: f64) -> f64 {
    let (s, c) = x.sin_cos();
    s * c + s
}

#[differentiable]
fn shadowing(x: f64) -> f64 {
    let x = x * 2.0;
    let x = x.sin() + x;
    let y = x;
    x * y
}

#[differentiable]
fn reassignment(x: f64, a: f64) -> f64 {
    let mut y = x;
    y = y * a;
    y = y * a + x;
    y -= 1.0;
    y *= x;
    y /= a;
    y
}

#[differentiable]
fn typed_lets(x: f64) -> f64 {
    let a: f64 = x * 3.0;
    let (b, c): (f64, f64) = (a + 1.0, a * a);
    let d: f32 = x as f32;
    b * c + d as f64
}

#[differentiable]
fn casts(x: f32, n: i32) -> f64 {
    let y = (x * 2.0) as f64;
    y * y + n as f64
}

#[differentiable]
fn float32(x: f32, y: f32) -> f32 {
    (x * y).sin() + x.exp() / (1.0 + y * y)
}

#[differentiable]
fn nested_block(x: f64) -> f64 {
    let y = {
        let t = x * x;
        t + 1.0
    };
    y * x
}

#[differentiable]
fn unused_argument(x: f64, _unused: f64) -> f64 {
    x * 2.0
}

#[differentiable]
fn constant_output(x: f64) -> f64 {
    let _ = x;
    4.0
}

#[differentiable]
fn stopped(x: f64, y: f64) -> f64 {
    x * no_grad(y * y) + y
}

#[differentiable]
fn same_argument_twice(x: f64) -> f64 {
    x * x + x.atan2(x + 1.0) + x.hypot(x)
}

#[differentiable]
fn tuple_output(x: f64, y: f64) -> (f64, f64) {
    (x * y, x - y.sin())
}

#[differentiable]
fn tuple_argument(p: (f64, f64), s: f64) -> f64 {
    p.0 * s + p.1 * p.0
}

#[differentiable]
fn array_argument(v: [f64; 3]) -> f64 {
    v[0] * v[1] + v[2].exp()
}

#[differentiable]
fn array_literal(x: f64, y: f64) -> f64 {
    let v = [x, y, x * y];
    v[0] + v[1] * v[2]
}

#[differentiable]
fn near_domain_edges(x: f64) -> f64 {
    // ln near 0, acos near 1, sqrt near 0 (x is tiny)
    (x + 1e-8).ln() + (1.0 - x).acos() + (x + 1e-10).sqrt()
}

#[differentiable]
fn negative_base_integer_power(x: f64) -> f64 {
    x.powf(3.0) + x.powi(2)
}

mod checks {
    use crate::check;
    check!(poly, (1.3_f64,), |a| (a.0));
    check!(quotient, (1.5_f64, -0.7_f64), |a| (a.0, a.1));
    check!(negation_and_remainder, (2.3_f64, 0.9_f64), |a| (a.0, a.1));
    check!(transcendental, (0.4_f64,), |a| (a.0));
    check!(powers, (1.7_f64, 2.3_f64), |a| (a.0, a.1));
    check!(trig, (0.8_f64, 1.9_f64), |a| (a.0, a.1));
    check!(hyperbolic, (0.6_f64,), |a| (a.0));
    check!(small_values, (0.35_f64,), |a| (a.0));
    check!(fused, (0.6_f64, 1.2_f64, -0.4_f64), |a| (a.0, a.1, a.2));
    check!(sin_cos_pair, (0.9_f64,), |a| (a.0));
    check!(shadowing, (0.3_f64,), |a| (a.0));
    check!(reassignment, (0.8_f64, 1.7_f64), |a| (a.0, a.1));
    check!(typed_lets, (0.45_f64,), |a| (a.0));
    check!(float32, (0.5_f32, 1.25_f32), |a| (a.0, a.1));
    check!(nested_block, (1.1_f64,), |a| (a.0));
    check!(unused_argument, (1.1_f64, 2.0_f64), |a| (a.0, a.1));
    check!(constant_output, (1.1_f64,), |a| (a.0));
    check!(same_argument_twice, (0.7_f64,), |a| (a.0));
    check!(tuple_output, (0.7_f64, 1.3_f64), |a| (a.0, a.1));
    check!(tuple_argument, ((0.7_f64, 1.3_f64), 0.4_f64), |a| (
        a.0, a.1
    ));
    check!(array_argument, ([0.7_f64, 1.3, -0.2],), |a| (a.0));
    check!(array_literal, (0.7_f64, 1.3_f64), |a| (a.0, a.1));
    check!(near_domain_edges, (1e-3_f64,), |a| (a.0));
    check!(negative_base_integer_power, (-1.7_f64,), |a| (a.0));

    #[test]
    fn casts_from_f32_with_an_integer() {
        mochi::testing::RuleTest::new(
            (0.75_f32, 3_i32),
            |a| super::casts(a.0, a.1),
            |a| super::casts::rrule(a.0, a.1),
        )
        .tolerance(1e-3, 1e-4)
        .run();
    }

    #[test]
    fn gradients_are_the_known_derivatives() {
        // d/dx (3x³ − 2x + 1) = 9x² − 2
        let (y, dx) = super::poly::value_and_gradient(2.0);
        assert_eq!(y, 21.0);
        assert_eq!(dx, 34.0);
        // d/dx x·no_grad(y²) + y = y², d/dy = 1 (no flow through no_grad)
        assert_eq!(super::stopped::gradient(2.0, 3.0), (9.0, 1.0));
        // one-argument functions return the cotangent bare
        let g: f64 = super::constant_output::gradient(1.0);
        assert_eq!(g, 0.0);
    }

    #[test]
    fn pullback_of_a_tuple_output() {
        let (y, pb) = super::tuple_output::pullback(2.0, 0.5);
        assert_eq!(y, (1.0, 2.0 - 0.5_f64.sin()));
        // ȳ = (1, 0): ∂(xy) = (y, x); ȳ = (0, 1): ∂(x − sin y) = (1, −cos y)
        assert_eq!(pb((1.0, 0.0)), (0.5, 2.0));
        let (_, pb) = super::tuple_output::pullback(2.0, 0.5);
        assert_eq!(pb((0.0, 1.0)), (1.0, -(0.5_f64.cos())));
    }
}
