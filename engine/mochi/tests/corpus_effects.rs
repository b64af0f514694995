//! Conditions, scrutinees, loop bounds and macro arguments that change a variable
//! carrying a derivative: `while step(&mut s, x) && n < 10 {}`, `if { s += x; s > 0.0 }`,
//! `match advance(&mut s, x) { .. }`, `let b = !step(&mut s, x);`, `assert!(step(..))`,
//! the do-while idiom `while { body; cond } {}`, and a `filter` whose closure calls such
//! a helper. Each ran the write without its derivative before 2026-12-01 (the values
//! right, the gradient silently wrong). Checked by `test_rule` (finite differences, the
//! adjoint identity) and by exact values.
//!
//! Also compound assignments through a `&mut` accessor (`*v.last_mut().unwrap() *= 3.0`,
//! `*v.get_mut(i).unwrap() /= c`, `*v.iter_mut().nth(k).unwrap() *= c`, `(&mut v)[i] *=
//! c`, `v.as_mut_slice()[i] *= c`), which ran without their factor; they now write the
//! element as `v[i]` (a reference returned by the user's own accessor is refused); and a
//! `mut v: Vec<f64>` parameter that grows (the gradient panicked).

#![allow(
    clippy::nonminimal_bool,
    clippy::blocks_in_conditions,
    clippy::iter_nth,
    clippy::useless_vec,
    clippy::iter_next_slice
)]

mod common;
use mochi::prelude::*;

#[differentiable]
fn step(s: &mut f64, x: f64) -> bool {
    *s = *s * 0.5 + x;
    *s < 3.0
}

#[differentiable]
fn advance(s: &mut f64, x: f64) -> usize {
    *s = *s * 0.5 + x;
    2
}

#[differentiable]
fn conditions(x: f64) -> f64 {
    let mut s = 0.0;
    let mut n = 0;
    while step(&mut s, x) && n < 10 {
        n += 1;
    }
    let mut t = 1.0;
    if step(&mut t, x) {
        t *= 2.0;
    }
    let mut u = 0.0;
    if {
        u += x;
        u > 0.0
    } {
        u *= 3.0;
    }
    let mut v = 0.0;
    if x < 0.0 {
        v = 1.0;
    } else if {
        v += x;
        v > 0.0
    } {
        v *= 2.0;
    }
    s + t + u + v
}

#[differentiable]
fn do_while(x: f64) -> f64 {
    let mut s = 1.0;
    let mut k = 0;
    while {
        s = s * x + 1.0;
        k += 1;
        k < 3
    } {}
    s
}

#[differentiable]
fn scrutinees_and_bounds(x: f64) -> f64 {
    let mut s = 1.0;
    let r = match advance(&mut s, x) {
        2 => 3.0,
        _ => 1.0,
    };
    let mut t = 1.0;
    let mut acc = 0.0;
    for _ in 0..advance(&mut t, x) {
        acc += t;
    }
    let mut w = 0.0;
    for _ in 0..({
        w += x;
        2
    }) {
        w *= 2.0;
    }
    s * r + acc + w
}

#[differentiable]
fn bools_and_macros(x: f64) -> f64 {
    let mut a = 1.0;
    let ok = x < 0.0 || step(&mut a, x);
    let mut b = 1.0;
    let not = !step(&mut b, x);
    let mut c = 1.0;
    assert!(step(&mut c, x));
    let mut d = 1.0;
    let mut e = 0.0;
    for v in [0.3, 0.5, -0.2, 0.9] {
        if v > 0.0 && {
            d += v * x;
            d > 1.3
        } {
            e += d * v;
        }
    }
    let k = if ok { a * 2.0 } else { a } + if not { b } else { b * 3.0 };
    k + c * 2.0 + d + e
}

#[differentiable]
fn upd(s: &mut f64, x: f64) -> f64 {
    *s = *s * 0.5 + x;
    *s
}

#[differentiable]
fn filter_with_state(x: &[f64]) -> f64 {
    let mut s = 1.0;
    let t: f64 = x.iter().filter(|v| upd(&mut s, **v) > 0.0).sum();
    t + s
}

/// Operands read before a later operand's effect keep the value they had: the block
/// changes `v` after `v * 2.0` read it.
#[differentiable]
fn ordered(x: f64) -> f64 {
    let mut v = x;
    let a = v * 2.0 + {
        v *= 3.0;
        v
    };
    let mut s = 1.0;
    let c = (s < 1.2) == step(&mut s, x);
    a * v + if c { s } else { 2.0 * s }
}

/// Values computed but not used on the branch taken pass no derivative back, even
/// where their own derivative is infinite (`0 · ∞` gave `NaN` before 2026-12-01).
#[differentiable]
fn unused_values(x: f64, y: f64) -> f64 {
    let r = (x * x + y * y).sqrt();
    let inv = 1.0 / y;
    let l = y.ln();
    let q = 1.0 / r.recip();
    let s = x.sin() / x;
    let guarded = if r < 1e-12 { 0.0 } else { x / r };
    let t = if y.abs() < 1e-12 { x } else { x * inv + l };
    let u = if x.abs() < 1e-4 { 1.0 - x * x / 6.0 } else { s };
    guarded + t + u + if r > 1.0 { q } else { 0.0 }
}

/// `*=`, `/=` and `=` through `&mut` accessors of a `Vec` and of a nested `Vec`.
#[differentiable]
fn through_accessors(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    *v.last_mut().unwrap() *= 3.0;
    *v.first_mut().unwrap() /= 4.0;
    *v.get_mut(1).unwrap() *= x[0];
    *v.iter_mut().nth(1).unwrap() *= 2.0;
    (&mut v)[2] *= 0.5;
    v.as_mut_slice()[0] *= -1.5;
    let mut w = vec![x.to_vec(), v.clone()];
    *w[1].last_mut().unwrap() = w[0][0] * 5.0;
    *w[0].iter_mut().next().unwrap() *= 3.0;
    v.iter().map(|t| t * t).sum::<f64>() + w[1][2] * w[0][0]
}

/// A `mut` parameter `Vec` that grows before it is read.
#[differentiable]
fn grows_a_parameter(mut v: Vec<f64>, x: &[f64]) -> f64 {
    v.push(x[0] * x[1]);
    v.extend_from_slice(x);
    v.iter()
        .enumerate()
        .map(|(i, t)| t * t * (i as f64 + 1.0))
        .sum::<f64>()
}

mod rules {
    use crate::check;

    check!(conditions, (1.1_f64,), |a| (a.0));
    check!(do_while, (1.5_f64,), |a| (a.0));
    check!(through_accessors, (vec![0.5_f64, -1.0, 2.0],), |a| (&a.0));
    check!(scrutinees_and_bounds, (0.7_f64,), |a| (a.0));
    check!(bools_and_macros, (0.9_f64,), |a| (a.0));
    check!(ordered, (0.3_f64,), |a| (a.0));
    check!(filter_with_state, (vec![0.9_f64, 0.4, -1.2],), |a| (&a.0));
}

#[test]
fn unused_values_pass_no_nan() {
    // at (0, 0): guarded 0, t = x, u = 1 − x²/6: the gradient is (1, 0)
    let (v, (dx, dy)) = unused_values::value_and_gradient(0.0, 0.0);
    assert_eq!(v, unused_values(0.0, 0.0));
    assert_eq!((dx, dy), (1.0, 0.0));
}

#[test]
fn exact_values() {
    // a = 2x + 3x, a·v = 5x·3x = 15x²: 1.35 and 9 at 0.3; s = 0.5 + x = 0.8 < 3, c = true
    let (v, g) = ordered::value_and_gradient(0.3);
    assert!((v - (1.35 + 0.8)).abs() < 1e-12, "{v}");
    assert!((g - 10.0).abs() < 1e-12, "{g}");
    // s = x³ + x² + x + 1: 8.125 and 3x² + 2x + 1 = 10.75 at 1.5
    assert_eq!(do_while::value_and_gradient(1.5), (8.125, 10.75));
    // if_call: t = (0.5 + x)·2 → 2; match: s = 0.5 + x, ·3 → 3; bounds: two trips of
    // t = 0.5 + x → 2; w = ((x)·2)·2 → 4
    let (v, g) = scrutinees_and_bounds::value_and_gradient(0.7);
    assert_eq!(v, scrutinees_and_bounds(0.7));
    assert!((g - 9.0).abs() < 1e-12, "{g}");
    // filter: s = 0.5 + x0, then 0.25 + 0.5·x0 + x1, …: each kept element adds its `v`
    let x = [0.9, 0.4];
    let (v, g) = filter_with_state::value_and_gradient(&x);
    assert!((v - 2.4).abs() < 1e-12);
    assert_eq!(g, vec![1.5, 2.0]);
}

#[test]
fn accessors_write_the_element() {
    let x = [0.5_f64, -1.0, 2.0];
    let (y, g) = through_accessors::value_and_gradient(&x);
    assert_eq!(y, through_accessors(&x));
    let f = |x: &[f64]| through_accessors(x);
    for i in 0..3 {
        let h = 1e-6;
        let (mut a, mut b) = (x.to_vec(), x.to_vec());
        a[i] += h;
        b[i] -= h;
        let fd = (f(&a) - f(&b)) / (2.0 * h);
        assert!((g[i] - fd).abs() < 1e-6, "{i}: {} vs {fd}", g[i]);
    }
    // At x = (0, 0, 2): v2 = 1.5·x2, so d/dx2 of v2² is 4.5·x2 (the factor 3 was lost).
    let (_, g2) = through_accessors::value_and_gradient(&[0.0, 0.0, 2.0]);
    assert_eq!(g2[2], 4.5 * 2.0);
}

#[test]
fn a_growing_parameter() {
    let v = vec![0.5_f64, -1.0];
    let x = [2.0_f64, 3.0];
    let (y, (dv, dx)) = grows_a_parameter::value_and_gradient(v.clone(), &x);
    assert_eq!(y, grows_a_parameter(v.clone(), &x));
    // Σ (i+1)·t²: t = (v0, v1, x0·x1, x0, x1)
    assert_eq!(dv, vec![1.0, -4.0]);
    assert_eq!(dx[0], 2.0 * 3.0 * 6.0 * 3.0 + 2.0 * 4.0 * 2.0);
    assert_eq!(dx[1], 2.0 * 3.0 * 6.0 * 2.0 + 2.0 * 5.0 * 3.0);
}
