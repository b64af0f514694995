//! Functions that take a closure (`f: impl Fn(f64) -> f64`, `F: Fn(..)` in the generics
//! or a `where` clause, `&impl Fn`, `&dyn Fn`, `FnMut`), marked `#[differentiable]` and
//! called from marked functions with a closure written at the call, a local closure, or
//! a function's name: each call is inlined, so the derivative flows through the
//! closure's captures. Quadrature, a Newton step, RK4 over a system, a search with an
//! early `return`, a callback writing its captures, composition, closures passed on
//! from one such function to another across modules, methods, double integrals,
//! `&mut` arguments beside the closure. Checked by `test_rule` (finite differences, the
//! adjoint identity), by closed forms, and the Hessians against differences of the
//! gradient.

#![allow(clippy::needless_range_loop, clippy::needless_borrows_for_generic_args)]

mod common;
use mochi::prelude::*;

/// The midpoint rule on `n` panels.
#[differentiable]
fn integrate<F: Fn(f64) -> f64>(f: F, a: f64, b: f64, n: usize) -> f64 {
    let h = (b - a) / n as f64;
    let mut s = 0.0;
    for i in 0..n {
        s += f(a + (i as f64 + 0.5) * h);
    }
    s * h
}

#[differentiable]
fn area(x: &[f64]) -> f64 {
    integrate(|t| x[0] * t * t + x[1].sin() * t, 0.0, x[2], 50)
}

#[differentiable]
fn newton_step(f: impl Fn(f64) -> f64, df: impl Fn(f64) -> f64, x: f64) -> f64 {
    x - f(x) / df(x)
}

#[differentiable]
fn root_step(p: &[f64]) -> f64 {
    let g = |v: f64| v * v - p[0];
    let dg = |v: f64| 2.0 * v;
    newton_step(&g, dg, p[1])
}

#[differentiable]
fn rk4_step<F: Fn(&[f64]) -> Vec<f64>>(f: &F, y: &[f64], h: f64) -> Vec<f64> {
    let k1 = f(y);
    let y2: Vec<f64> = y.iter().zip(&k1).map(|(a, k)| a + 0.5 * h * k).collect();
    let k2 = f(&y2);
    let y3: Vec<f64> = y.iter().zip(&k2).map(|(a, k)| a + 0.5 * h * k).collect();
    let k3 = f(&y3);
    let y4: Vec<f64> = y.iter().zip(&k3).map(|(a, k)| a + h * k).collect();
    let k4 = f(&y4);
    (0..y.len())
        .map(|i| y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
        .collect()
}

/// Lotka–Volterra from constant initial conditions: the state carries a derivative
/// only through the parameters the right-hand side captures.
#[differentiable]
fn lotka(p: &[f64]) -> f64 {
    let (a, b, c, d) = (p[0], p[1], p[2], p[3]);
    let rhs = |y: &[f64]| vec![a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]];
    let mut y = vec![1.0, 0.5];
    for _ in 0..20 {
        y = rk4_step(&rhs, &y, 0.05);
    }
    y[0] + y[1]
}

#[differentiable]
fn square(t: f64) -> f64 {
    t * t
}

#[differentiable]
fn area_of_square(x: &[f64]) -> f64 {
    integrate(square, x[0], x[1], 20) + integrate(f64::sin, 0.0, x[1], 10)
}

#[differentiable]
fn first_above<F: Fn(f64) -> f64>(f: F, xs: &[f64], level: f64) -> f64 {
    for &v in xs {
        let y = f(v);
        if y > level {
            return y;
        }
    }
    0.0
}

#[differentiable]
fn above(x: &[f64]) -> f64 {
    let s = x[0];
    first_above(|v| s * v * v, &x[1..], 0.5)
}

#[differentiable]
fn each(mut f: impl FnMut(f64), n: usize) {
    for i in 0..n {
        f(i as f64);
    }
}

#[differentiable]
fn summed(x: &[f64]) -> f64 {
    let mut acc = 0.0;
    each(|t| acc += x[0] * t + x[1], 4);
    acc
}

#[differentiable]
fn twice(f: &dyn Fn(f64) -> f64, x: f64) -> f64 {
    f(f(x))
}

#[differentiable]
fn composed(x: &[f64]) -> f64 {
    let k = x[1];
    twice(&|v| (k * v).sin(), x[0])
}

mod quad {
    use mochi::differentiable;

    #[differentiable]
    pub fn simpson(f: &impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
        let m = 0.5 * (a + b);
        (b - a) / 6.0 * (f(a) + 4.0 * f(m) + f(b))
    }

    /// Passes its closure on to `simpson`, which its callers reach as `quad::simpson`.
    #[differentiable]
    pub fn composite<F>(f: F, a: f64, b: f64, n: usize) -> f64
    where
        F: Fn(f64) -> f64,
    {
        let h = (b - a) / n as f64;
        let mut total = 0.0;
        for i in 0..n {
            let lo = a + i as f64 * h;
            total += simpson(&f, lo, lo + h);
        }
        total
    }
}

#[differentiable]
fn gauss_area(x: &[f64]) -> f64 {
    let (mu, s) = (x[0], x[1]);
    quad::composite(
        |t| (-(t - mu) * (t - mu) / (2.0 * s * s)).exp(),
        -1.0,
        2.0,
        8,
    )
}

mod elsewhere {
    // Imported by name, the callee's own calls (`simpson`) need their names here too.
    use super::quad::{composite, simpson};
    use mochi::differentiable;

    #[differentiable]
    pub fn moment(x: &[f64]) -> f64 {
        let k = x[0];
        let g = |t: f64| t * (k * t).cos();
        composite(&g, 0.0, x[1], 4) + composite(g, 0.0, 1.0, 2)
    }
}
use elsewhere::moment;

/// A double integral: the inner call inside the outer call's closure.
#[differentiable]
fn double_integral(x: &[f64]) -> f64 {
    integrate(
        |t| integrate(|s| (x[0] * s * t).cos(), 0.0, 1.0, 6),
        0.0,
        x[1],
        6,
    )
}

/// Calls in a loop and in a chain's closure, capturing the element.
#[differentiable]
fn per_element(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += integrate(|t| x[i] * t * t, 0.0, 1.0, 4);
    }
    total
        + x.iter()
            .map(|&b| integrate(|t| t * b, 0.0, 1.0, 2))
            .sum::<f64>()
}

/// A `&mut` argument beside the closure, and a tuple result.
#[differentiable]
fn euler_step(f: impl Fn(f64) -> f64, y: &mut f64, h: f64) -> (f64, f64) {
    let dy = f(*y);
    *y += h * dy;
    (dy, *y)
}

#[differentiable]
fn decay(p: &[f64]) -> f64 {
    let k = p[0];
    let mut y = p[1];
    let mut slopes = 0.0;
    for _ in 0..5 {
        let (dy, _) = euler_step(|v| -k * v, &mut y, 0.1);
        slopes += dy;
    }
    y + 0.1 * slopes
}

/// A model with one parameter.
#[derive(Clone, mochi::Tangent)]
pub struct Model {
    /// The quadratic's coefficient.
    pub k: f64,
}

impl Model {
    /// A method passing a closure over `self`.
    #[differentiable]
    pub fn area(&self, b: f64) -> f64 {
        integrate(|t| self.k * t * t, 0.0, b, 1)
    }
}

/// A fixed-point iteration, a loss over rows, a closure returning a pair, `fold`, a
/// block closure with its return type, `fn` pointers given `f64::max`, gradient
/// descent with a gradient closure (the callee after its caller).
#[differentiable]
fn fixed_point(x: &[f64]) -> f64 {
    let a = x[0];
    apply_n(|y| y - 0.1 * (y * y - a), 1.0, 20)
}

#[differentiable]
fn apply_n(f: impl Fn(f64) -> f64, x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y = f(y);
    }
    y
}

#[differentiable]
fn sum_over<F: Fn(&[f64]) -> f64>(f: F, rows: &[Vec<f64>]) -> f64 {
    rows.iter().map(|r| f(r)).sum()
}

#[differentiable]
fn linear_loss(w: &[f64], data: &[Vec<f64>]) -> f64 {
    sum_over(|r| (r[0] * w[0] + r[1] * w[1] - r[2]).powi(2), data)
}

#[differentiable]
fn pair_step(f: impl Fn(f64, f64) -> (f64, f64), x: f64, y: f64) -> f64 {
    let (u, v) = f(x, y);
    u * v
}

#[differentiable]
fn rotated(p: &[f64]) -> f64 {
    let th = p[0];
    pair_step(
        move |a, b| (th.cos() * a - th.sin() * b, th.sin() * a + th.cos() * b),
        p[1],
        p[2],
    )
}

#[differentiable]
fn folded(f: &dyn Fn(f64) -> f64, xs: &[f64]) -> f64 {
    xs.iter().fold(0.0, |acc, &v| acc + f(v))
}

#[differentiable]
fn with_block_closure(x: &[f64]) -> f64 {
    let k = x[0];
    folded(
        &|t: f64| -> f64 {
            let u = t * k;
            u * u
        },
        &x[1..],
    )
}

#[differentiable]
fn reduce2(f: fn(f64, f64) -> f64, xs: &[f64]) -> f64 {
    let mut m = xs[0];
    for &v in &xs[1..] {
        m = f(m, v);
    }
    m
}

#[differentiable]
fn biggest(x: &[f64]) -> f64 {
    reduce2(f64::max, x) + reduce2(f64::hypot, x)
}

#[differentiable]
fn grad_norm_step(p: &[f64]) -> Vec<f64> {
    let c = p[0];
    descend(
        |z: &[f64]| vec![2.0 * (z[0] - c), 2.0 * z[1]],
        &p[1..],
        0.1,
        3,
    )
}

#[differentiable]
fn descend<G: Fn(&[f64]) -> Vec<f64>>(grad: G, x0: &[f64], lr: f64, steps: usize) -> Vec<f64> {
    let mut x = x0.to_vec();
    for _ in 0..steps {
        let g = grad(&x);
        for i in 0..x.len() {
            x[i] -= lr * g[i];
        }
    }
    x
}

#[differentiable]
fn descended(p: &[f64]) -> f64 {
    let v = grad_norm_step(p);
    v[0] * v[0] + v[1]
}

/// The README's form: the closure called inside a chain's closure.
#[differentiable]
fn integrate_chain<F: Fn(f64) -> f64>(f: F, a: f64, b: f64, n: usize) -> f64 {
    let h = (b - a) / n as f64;
    (0..n).map(|i| f(a + (i as f64 + 0.5) * h)).sum::<f64>() * h
}

#[differentiable]
fn readme_area(x: &[f64]) -> f64 {
    integrate_chain(|t| x[0] * t * t, 0.0, x[1], 100)
}

mod checks {
    check!(fixed_point, (vec![2.0],), |a| (&a.0));
    check!(
        linear_loss,
        (
            vec![0.3, -0.2],
            vec![vec![1.0, 2.0, 0.5], vec![0.3, -1.0, 1.5]]
        ),
        |a| (&a.0, &a.1)
    );
    check!(rotated, (vec![0.4, 1.1, -0.7],), |a| (&a.0));
    check!(with_block_closure, (vec![0.4, 1.1, -0.7, 2.0],), |a| (&a.0));
    check!(biggest, (vec![0.4, 1.1, -0.7, 2.0],), |a| (&a.0));
    check!(descended, (vec![0.4, 1.1, -0.7],), |a| (&a.0));
    check!(readme_area, (vec![0.9, 1.7],), |a| (&a.0));
    use crate::check;
    check!(area, (vec![0.7, 1.3, 1.5],), |a| (&a.0));
    check!(root_step, (vec![2.0, 1.3],), |a| (&a.0));
    check!(lotka, (vec![1.1, 0.4, 0.9, 0.3],), |a| (&a.0));
    check!(area_of_square, (vec![0.2, 1.3],), |a| (&a.0));
    check!(above, (vec![0.9, 0.2, 0.5, 1.5, 2.0],), |a| (&a.0));
    check!(summed, (vec![0.9, 0.2],), |a| (&a.0));
    check!(composed, (vec![0.9, 1.2],), |a| (&a.0));
    check!(gauss_area, (vec![0.3, 0.8],), |a| (&a.0));
    check!(moment, (vec![0.9, 1.7],), |a| (&a.0));
    check!(double_integral, (vec![0.9, 1.7],), |a| (&a.0));
    check!(per_element, (vec![0.9, -1.7, 0.4],), |a| (&a.0));
    check!(decay, (vec![0.6, 1.5],), |a| (&a.0));
}

#[test]
fn closed_forms() {
    // ∫₀ᵇ (x₀t² + sin(x₁)t) dt by the midpoint rule: exact for the linear part; for
    // the quadratic, b³/3 − b³/(12n²).
    let x = [0.7, 1.3, 1.5];
    let (b, n) = (x[2], 50.0);
    let g = area::gradient(&x);
    let quad = b * b * b / 3.0 - b * b * b / (12.0 * n * n);
    assert!((g[0] - quad).abs() < 1e-12, "{g:?}");
    assert!((g[1] - x[1].cos() * b * b / 2.0).abs() < 1e-12, "{g:?}");
    // One Newton step for √p₀ from p₁: y = p₁ − (p₁² − p₀)/(2p₁).
    let g = root_step::gradient(&[2.0, 1.3]);
    assert!((g[0] - 1.0 / 2.6).abs() < 1e-12, "{g:?}");
    assert!(
        (g[1] - (0.5 - 2.0 / (2.0 * 1.3 * 1.3))).abs() < 1e-12,
        "{g:?}"
    );
    // The first v with s·v² > 0.5 among 0.2, 0.5, 1.5, 2.0 at s = 0.9 is 1.5.
    let g = above::gradient(&[0.9, 0.2, 0.5, 1.5, 2.0]);
    assert_eq!(g, vec![2.25, 0.0, 0.0, 2.0 * 0.9 * 1.5, 0.0]);
    // Σ_{t=0..3} (x₀t + x₁) = 6x₀ + 4x₁.
    assert_eq!(summed::gradient(&[0.9, 0.2]), vec![6.0, 4.0]);
    // The method: b·k·(b/2)² = kb³/4 on one panel.
    let m = Model { k: 0.8 };
    let (dm, db) = m.area_gradient(2.0);
    assert!(
        (dm.k - 2.0).abs() < 1e-12 && (db - 2.4).abs() < 1e-12,
        "{} {db}",
        dm.k
    );
    // Each step multiplies y by 1 − 0.1k: y₅ = y₀(1 − 0.1k)⁵, and the slopes add up
    // to (y₅ − y₀)/0.1.
    let (k, y0) = (0.6, 1.5);
    let g = decay::gradient(&[k, y0]);
    let r: f64 = 1.0 - 0.1 * k;
    let y5 = |k: f64, y0: f64| y0 * (1.0 - 0.1 * k).powi(5);
    let value = |k: f64, y0: f64| 2.0 * y5(k, y0) - y0;
    assert!((decay(&[k, y0]) - value(k, y0)).abs() < 1e-12);
    assert!((g[1] - (2.0 * r.powi(5) - 1.0)).abs() < 1e-12, "{g:?}");
    assert!(
        (g[0] - 2.0 * y0 * 5.0 * r.powi(4) * -0.1).abs() < 1e-12,
        "{g:?}"
    );
}

#[test]
fn second_order_through_inlined_callees() {
    let x = [0.7, 1.3, 1.5];
    let h = area::hessian(&x);
    common::assert_hessian_matches("area", area::gradient, &h, &x, 1e-5);
    let p = [1.1, 0.4, 0.9, 0.3];
    let h = lotka::hessian(&p);
    common::assert_hessian_matches("lotka", lotka::gradient, &h, &p, 1e-5);
    let x = [0.3, 0.8];
    let h = gauss_area::hessian(&x);
    common::assert_hessian_matches("gauss_area", gauss_area::gradient, &h, &x, 1e-5);
}
