//! Constant factors and divisors inside loops (`h * k[i] / 2.0`): when the constant is
//! the same on every trip (a literal, a named constant, a binding made once outside the
//! loops and never reassigned, an element or a pure function of one), its pruned
//! pullback is kept once for the loop instead of once per trip (`kit::hoist`), and so is
//! the pullback of an operation whose every operand is (`sigma.ln()` with `sigma` bound
//! once). When it is not (a binding shadowed inside the loop, a `mut` one updated by the
//! loop, one bound per trip of an outer loop, an index read, a value behind a `&mut`
//! that a helper changes), it is kept per trip as before. Each function is checked by
//! `test_rule` (finite differences and the adjoint identity), which a pullback read back
//! from the wrong trip would fail.

#![allow(
    clippy::needless_range_loop,
    clippy::assign_op_pattern,
    clippy::approx_constant
)]

mod common;
use mochi::num_traits::Float;
use mochi::prelude::*;

const HALF: f64 = 0.5;

/// An RK4-style update: a step `h` bound once, literals, a named constant.
#[differentiable]
fn stepped(x: &[f64], steps: usize) -> f64 {
    let n = x.len();
    let h = 2.0 / steps as f64;
    let mut y = vec![0.0; n];
    let mut k = vec![0.0; n];
    for _ in 0..steps {
        for i in 0..n {
            k[i] = x[i] * (1.0 - y[i]);
        }
        for i in 0..n {
            y[i] += h * k[i] / 2.0 + HALF * h * k[i] * std::f64::consts::FRAC_1_PI;
        }
    }
    y.iter().map(|v| v * v).sum()
}

/// A name bound once at the top, then shadowed inside the loop by a value of the trip:
/// the loop's `c * x[i]` reads the trip's `c`.
#[differentiable]
fn shadowed_in_the_loop(x: &[f64]) -> f64 {
    let c = 3.0;
    let mut s = c * x[0];
    for i in 0..x.len() {
        let c = (i + 1) as f64;
        s += c * x[i] * x[i];
    }
    s
}

/// A `mut` constant the loop changes (a geometric weight).
#[differentiable]
fn updated_by_the_loop(x: &[f64]) -> f64 {
    let mut w = 1.0;
    let mut s = 0.0;
    for i in 0..x.len() {
        s += w * x[i].sin();
        w *= 0.5;
    }
    s
}

/// A constant bound per trip of an outer loop, used in the inner loop: the same within
/// one outer trip, different across them.
#[differentiable]
fn bound_per_outer_trip(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for k in 0..3 {
        let c = (k + 2) as f64;
        for i in 0..x.len() {
            s += x[i] * x[i] / c;
        }
    }
    s
}

/// Constants from an integer parameter, an index and a loop variable, in nested
/// loops, a `while` loop and a branch.
#[differentiable]
fn mixed_constants(x: &[f64], n: usize) -> f64 {
    let scale = 1.0 / n as f64;
    let mut s = 0.0;
    for j in 0..2 {
        for i in 0..x.len() {
            if x[i] > 0.0 {
                s += scale * x[i] * x[i];
            } else {
                s += (j as f64 + 1.0) * x[i] / 3.0;
            }
        }
    }
    let mut t = 0;
    while t < x.len() {
        s += -0.5 * x[t] * (t as f64);
        t += 1;
    }
    s
}

/// The generic form: a constant made with `T::from` once, and the same inside the loop.
#[differentiable]
fn generic_weights<T: Float>(x: &[T]) -> T {
    let half = T::from(0.5).unwrap();
    let mut s = T::zero();
    for i in 0..x.len() {
        s = s + half * x[i] * x[i] + x[i] / T::from(4.0).unwrap();
    }
    s
}

/// Elements and lengths of values bound once: `c[0]` and `x.len()` are the same on every
/// trip, `c[i % 2]` is not.
#[differentiable]
fn elements_of_constants(x: &[f64]) -> f64 {
    let c = [0.5, 2.0];
    let mut s = 0.0;
    for i in 0..x.len() {
        s += c[i % 2] * x[i] * x[i] + c[0] * x[i].sin() + x[i] / x.len() as f64;
    }
    s
}

#[differentiable]
fn bump_first(v: &mut [f64], a: f64) {
    v[0] += a;
}

/// A factor read through a `&mut` reference that a helper changes on every trip: the
/// name is not `mut`, the value it refers to is.
#[differentiable]
fn through_a_mut_reference(x: &[f64]) -> f64 {
    let mut buf = vec![1.0, 0.0];
    let r = &mut buf;
    let mut s = 0.0;
    for i in 0..x.len() {
        bump_first(r, 0.5 * x[i]);
        s += r[0].exp() * x[i];
    }
    s
}

#[differentiable]
fn bump_by(a: &mut f64, v: f64) {
    *a += v;
}

/// A `mut` parameter lent `&mut` to a helper on every trip.
#[differentiable]
fn through_a_mut_borrow(x: &[f64], mut a: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        bump_by(&mut a, 0.5 * x[i]);
        s += a.exp() * x[i];
    }
    s
}

/// A `mut` parameter lent `&mut` once: its gradient is added into the caller's
/// accumulator, not written over it (the accumulation check of `test_rule`).
#[differentiable]
fn lent_once(x: &[f64], mut a: f64) -> f64 {
    bump_by(&mut a, x[0]);
    a * x[1]
}

/// The same through a `&mut` parameter.
#[differentiable]
fn accumulate_into(x: &[f64], acc: &mut [f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        bump_first(acc, 0.5 * x[i]);
        s += acc[0].exp() * x[i];
    }
    s
}

#[differentiable]
fn through_a_mut_parameter(x: &[f64]) -> f64 {
    let mut buf = vec![1.0, 0.0];
    accumulate_into(x, &mut buf)
}

/// A log-normal likelihood: `sigma` is differentiable and bound once, so `sigma.ln()`
/// and `sigma * sigma` are the same on every trip; `z` is not.
#[differentiable]
fn lognormal_loglik(theta: &[f64], data: &[f64]) -> f64 {
    let mu = theta[0];
    let sigma = theta[1].exp();
    let mut s = 0.0;
    for i in 0..data.len() {
        let lx = data[i].ln();
        let z = (lx - mu) / sigma;
        s += -0.5 * z * z - sigma.ln() - lx + 0.01 * (sigma * sigma);
    }
    s
}

mod checks {
    use crate::check;
    check!(stepped, (vec![0.3, -0.4, 0.8, 0.1], 5usize), |a| (
        &a.0, a.1
    ));
    check!(shadowed_in_the_loop, (vec![0.3, -0.4, 0.8],), |a| (&a.0));
    check!(updated_by_the_loop, (vec![0.3, -0.4, 0.8, 1.1],), |a| (&a
        .0));
    check!(bound_per_outer_trip, (vec![0.3, -0.4, 0.8],), |a| (&a.0));
    check!(mixed_constants, (vec![0.3, -0.4, 0.8, -1.2], 3usize), |a| (
        &a.0, a.1
    ));
    check!(generic_weights, (vec![0.3_f64, -0.4, 0.8],), |a| (&a.0));
    check!(elements_of_constants, (vec![0.3, -0.4, 0.8],), |a| (&a.0));
    check!(through_a_mut_reference, (vec![0.3, -0.4, 0.8],), |a| (&a.0));
    check!(through_a_mut_parameter, (vec![0.3, -0.4, 0.8],), |a| (&a.0));
    check!(through_a_mut_borrow, (vec![0.3, -0.4, 0.8], 1.0), |a| (
        &a.0, a.1
    ));
    check!(lent_once, (vec![0.3, -0.4], 1.0), |a| (&a.0, a.1));
    check!(
        lognormal_loglik,
        (vec![0.2, -0.3], vec![0.5, 1.5, 2.5]),
        |a| (&a.0, &a.1)
    );
}

/// The closed forms beside the checks: each trip's constant reached its own trip.
#[test]
fn each_trip_gets_its_own_constant() {
    let x = [0.3, -0.4, 0.8];
    let g = shadowed_in_the_loop::gradient(&x);
    assert_eq!(g, vec![3.0 + 2.0 * 0.3, 2.0 * 2.0 * -0.4, 2.0 * 3.0 * 0.8]);
    let g = updated_by_the_loop::gradient(&x);
    for (i, gi) in g.iter().enumerate() {
        assert!((gi - 0.5f64.powi(i as i32) * x[i].cos()).abs() < 1e-15);
    }
    let g = bound_per_outer_trip::gradient(&x);
    let w = 1.0 / 2.0 + 1.0 / 3.0 + 1.0 / 4.0;
    for i in 0..3 {
        assert!((g[i] - 2.0 * x[i] * w).abs() < 1e-15);
    }
    let g = generic_weights::gradient(&x);
    for i in 0..3 {
        assert!((g[i] - (x[i] + 0.25)).abs() < 1e-15);
    }
    // d/dmu = Σ z/σ, d/dlogσ = Σ (z² − 1 + 0.02σ²)
    let (theta, data) = ([0.2, -0.3], [0.5, 1.5, 2.5]);
    let sigma = theta[1].exp();
    let zs: Vec<f64> = data
        .iter()
        .map(|d: &f64| (d.ln() - theta[0]) / sigma)
        .collect();
    let (g, _) = lognormal_loglik::gradient(&theta, &data);
    assert!(
        (g[0] - zs.iter().sum::<f64>() / sigma).abs() < 1e-13,
        "{g:?}"
    );
    let want = zs
        .iter()
        .map(|z| z * z - 1.0 + 0.02 * sigma * sigma)
        .sum::<f64>();
    assert!((g[1] - want).abs() < 1e-13, "{g:?}");
    assert_eq!(
        through_a_mut_reference::gradient(&x),
        through_a_mut_parameter::gradient(&x)
    );
    let g = elements_of_constants::gradient(&x);
    for i in 0..3 {
        let c = [0.5, 2.0][i % 2];
        assert!((g[i] - (2.0 * c * x[i] + 0.5 * x[i].cos() + 1.0 / 3.0)).abs() < 1e-15);
    }
    let h = generic_weights::hessian(&x);
    assert!((h[[1, 1]] - 1.0).abs() < 1e-15 && h[[0, 1]] == 0.0);
}
