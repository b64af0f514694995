//! Higher-order companions of functions written over `f64` (no generics): `jvp`, `hvp`,
//! `hessian`, `value_gradient_and_hessian`, `jacobian`, with several arguments and
//! arguments that carry no derivative; and nested differentiation, a differentiable
//! function that calls another's `gradient` or `value_and_gradient`.
//!
//! Every Hessian is checked against central differences of the derived gradient and,
//! where one exists, a closed form; every `hvp` against `H·v`; every `jvp` against
//! `∇f·v` or `J·v`; every nested gradient against central differences of the function.

#![allow(clippy::needless_range_loop)]

mod common;
use mochi::prelude::*;
use mochi::stats::normal_logpdf;
use ndarray::Array2;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

fn assert_matrix_close(a: &Array2<f64>, b: &Array2<f64>, tol: f64) {
    assert_eq!(a.dim(), b.dim());
    for ((i, j), v) in a.indexed_iter() {
        assert!(
            close(*v, b[[i, j]], tol),
            "[{i}, {j}]: {v} vs {}",
            b[[i, j]]
        );
    }
}

/// Central differences of a gradient laid out as one vector: the Hessian's columns.
fn hessian_by_differences(x: &[f64], grad: impl Fn(&[f64]) -> Vec<f64>) -> Array2<f64> {
    let n = x.len();
    let mut h = Array2::zeros((n, n));
    for j in 0..n {
        let step = 1e-5 * (1.0 + x[j].abs());
        let mut up = x.to_vec();
        let mut down = x.to_vec();
        up[j] += step;
        down[j] -= step;
        let (gu, gd) = (grad(&up), grad(&down));
        for i in 0..n {
            h[[i, j]] = (gu[i] - gd[i]) / (2.0 * step);
        }
    }
    h
}

/// Central differences of a vector function: the Jacobian's columns.
fn jacobian_by_differences(x: &[f64], f: impl Fn(&[f64]) -> Vec<f64>) -> Array2<f64> {
    let step = 1e-6;
    let m = f(x).len();
    let mut j = Array2::zeros((m, x.len()));
    for c in 0..x.len() {
        let (mut up, mut down) = (x.to_vec(), x.to_vec());
        up[c] += step;
        down[c] -= step;
        let (yu, yd) = (f(&up), f(&down));
        for r in 0..m {
            j[[r, c]] = (yu[r] - yd[r]) / (2.0 * step);
        }
    }
    j
}

fn derivative_by_differences(x: f64, f: impl Fn(f64) -> f64) -> f64 {
    let h = 1e-6 * (1.0 + x.abs());
    (f(x + h) - f(x - h)) / (2.0 * h)
}

#[differentiable]
fn rosenbrock(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = x[i + 1] - x[i] * x[i];
        let b = 1.0 - x[i];
        s += 100.0 * a * a + b * b;
    }
    s
}

fn rosenbrock_hessian(x: &[f64]) -> Array2<f64> {
    let n = x.len();
    let mut h = Array2::zeros((n, n));
    for i in 0..n - 1 {
        h[[i, i]] += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0;
        h[[i, i + 1]] -= 400.0 * x[i];
        h[[i + 1, i]] -= 400.0 * x[i];
        h[[i + 1, i + 1]] += 200.0;
    }
    h
}

#[test]
fn the_hessian_of_rosenbrock_over_f64_is_the_closed_form() {
    let x = [1.2, 0.8, -0.5, 0.3, 2.0, -1.1];
    let h = rosenbrock::hessian(&x);
    assert_matrix_close(&h, &rosenbrock_hessian(&x), 1e-12);
    assert_matrix_close(&h, &h.t().to_owned(), 0.0);
    let (y, g, h2) = rosenbrock::value_gradient_and_hessian(&x);
    assert_eq!(y, rosenbrock(&x));
    assert_eq!(g, rosenbrock::gradient(&x));
    assert_matrix_close(&h2, &h, 0.0);
    // H·v and ∇f·v.
    let v = [0.5, -1.0, 0.25, 2.0, -0.5, 1.5];
    let hv = rosenbrock::hvp(&x, &v);
    let want = h.dot(&ndarray::arr1(&v));
    for i in 0..x.len() {
        assert!(close(hv[i], want[i], 1e-12));
    }
    let (y, dy) = rosenbrock::jvp(&x, &v);
    let dot: f64 = g.iter().zip(&v).map(|(a, b)| a * b).sum();
    assert_eq!(y, rosenbrock(&x));
    assert!(close(dy, dot, 1e-12));
}

/// A loss over weights, a bias, data and a count: iterator chains, a cast of a count,
/// `f64::max`, a local closure, and a `Vec` built with `vec![..]`.
#[differentiable]
fn softplus_loss(w: &[f64], b: f64, x: &[f64], n: usize) -> f64 {
    let sp = |t: f64| (1.0 + t.exp()).ln();
    let mut z = vec![0.0; n];
    for i in 0..n {
        z[i] = w[i % w.len()] * x[i] + b;
    }
    let total: f64 = z.iter().map(|&t| sp(t)).sum();
    let reg = w.iter().map(|v| v * v).sum::<f64>() * 0.5;
    total / n as f64 + f64::max(reg, 0.0) + (b * b).sqrt().powi(3)
}

fn softplus_loss_flat(v: &[f64], n: usize) -> Vec<f64> {
    let (w, rest) = v.split_at(2);
    let (b, x) = (rest[0], &rest[1..]);
    let (gw, gb, gx, _) = softplus_loss::gradient(w, b, x, n);
    let mut g = gw;
    g.push(gb);
    g.extend(gx);
    g
}

#[test]
fn hessians_over_several_arguments_lay_them_end_to_end() {
    let (w, b, x, n) = ([0.4, -0.7], 0.3, [1.0, -2.0, 0.5, 1.5], 4);
    let h = softplus_loss::hessian(&w, b, &x, n);
    assert_eq!(h.dim(), (7, 7));
    let mut flat = w.to_vec();
    flat.push(b);
    flat.extend(x);
    let want = hessian_by_differences(&flat, |v| softplus_loss_flat(v, n));
    assert_matrix_close(&h, &want, 1e-6);
    // hvp takes one direction per differentiable argument and answers in the same shape.
    let (vw, vb, vx) = ([1.0, 0.5], -2.0, [0.0, 1.0, -1.0, 0.25]);
    let (hw, hb, hx) = softplus_loss::hvp(&w, b, &x, n, (&vw, vb, &vx));
    let mut v = vw.to_vec();
    v.push(vb);
    v.extend(vx);
    let hv = h.dot(&ndarray::arr1(&v));
    let got: Vec<f64> = hw
        .iter()
        .chain([hb].iter())
        .chain(hx.iter())
        .copied()
        .collect();
    for i in 0..7 {
        assert!(close(got[i], hv[i], 1e-12), "{i}: {} vs {}", got[i], hv[i]);
    }
    let (y, dy) = softplus_loss::jvp(&w, b, &x, n, (&vw, vb, &vx));
    let g = softplus_loss_flat(&flat, n);
    let dot: f64 = g.iter().zip(&v).map(|(a, b)| a * b).sum();
    assert!(close(y, softplus_loss(&w, b, &x, n), 1e-15));
    assert!(close(dy, dot, 1e-12));
}

/// A scalar function of a scalar: `hessian` is 1×1.
#[differentiable]
fn bump(t: f64) -> f64 {
    if t > 0.0 {
        (-1.0 / (1.0 + t * t)).exp() * t.sin()
    } else {
        t.tanh() * 0.5
    }
}

#[test]
fn scalar_functions_have_second_derivatives() {
    for t in [-1.3, -0.2, 0.4, 2.5] {
        let d2 = derivative_by_differences(t, bump::gradient);
        assert!(close(bump::hvp(t, 1.0), d2, 1e-7), "{t}");
        assert!(close(bump::hessian(t)[[0, 0]], d2, 1e-7));
        let (y, dy) = bump::jvp(t, 2.0);
        assert_eq!(y, bump(t));
        assert!(close(dy, 2.0 * bump::gradient(t), 1e-12));
    }
}

/// A scalar function's `jacobian` is its one-row matrix: the gradient over the float
/// arguments laid end to end, beside the same value `value_and_gradient` gives; each
/// entry against a central difference of the function.
#[test]
fn scalar_functions_have_a_one_row_jacobian() {
    let (w, b, x) = ([0.3, -0.2], 0.4, [1.0, -2.0, 0.5]);
    let (y, j) = softplus_loss::jacobian(&w, b, &x, 3);
    assert_eq!(y, softplus_loss(&w, b, &x, 3));
    assert_eq!(j.dim(), (1, 6));
    let point = [w[0], w[1], b, x[0], x[1], x[2]];
    let f = |v: &[f64]| softplus_loss(&v[..2], v[2], &v[3..], 3);
    for k in 0..6 {
        let (mut up, mut down) = (point, point);
        up[k] += 1e-6;
        down[k] -= 1e-6;
        let fd = (f(&up) - f(&down)) / 2e-6;
        assert!(
            close(j[[0, k]], fd, 1e-7),
            "column {k}: {} vs {fd}",
            j[[0, k]]
        );
    }
    let (y, j) = bump::jacobian(0.4);
    assert_eq!((y, j.dim()), (bump(0.4), (1, 1)));
    assert_eq!(j[[0, 0]], bump::gradient(0.4));
}

/// Residuals of an exponential decay fit: a vector output gets `jacobian` and `jvp`.
#[differentiable]
fn decay_residuals(p: &[f64], t: &[f64], y: &[f64]) -> Vec<f64> {
    let mut r = vec![0.0; t.len()];
    for i in 0..t.len() {
        r[i] = p[0] * (-p[1] * t[i]).exp() + p[2] - y[i];
    }
    r
}

#[test]
fn jacobians_of_vector_functions_over_f64() {
    let (p, t, y) = ([2.0, 0.7, 0.1], [0.0, 0.5, 1.0, 2.0], [2.1, 1.5, 1.1, 0.6]);
    let (r, j) = decay_residuals::jacobian(&p, &t, &y);
    assert_eq!(r, decay_residuals(&p, &t, &y));
    // Columns: p (3), t (4), y (4).
    assert_eq!(j.dim(), (4, 11));
    for i in 0..4 {
        let e = (-p[1] * t[i]).exp();
        assert!(close(j[[i, 0]], e, 1e-14));
        assert!(close(j[[i, 1]], -p[0] * t[i] * e, 1e-14));
        assert!(close(j[[i, 2]], 1.0, 1e-14));
        assert!(close(j[[i, 3 + i]], -p[0] * p[1] * e, 1e-14));
        assert!(close(j[[i, 7 + i]], -1.0, 1e-14));
    }
    let v = ([0.5, -1.0, 2.0], [0.0; 4], [1.0, 0.0, 0.0, -1.0]);
    let (r2, jv) = decay_residuals::jvp(&p, &t, &y, (&v.0, &v.1, &v.2));
    assert_eq!(r2, r);
    let mut flat = v.0.to_vec();
    flat.extend(v.1);
    flat.extend(v.2);
    let want = j.dot(&ndarray::arr1(&flat));
    for i in 0..4 {
        assert!(close(jv[i], want[i], 1e-13));
    }
}

#[differentiable]
fn plus(x: f64, y: f64) -> f64 {
    x + y
}

/// d/dx (x · d/dy (x + y)) = 1; with the inner derivative confused with the outer
/// one it would be 2.
#[differentiable]
fn outer_times_inner_derivative(x: f64) -> f64 {
    let (_, dy) = plus::gradient(x, 1.0);
    x * dy
}

#[test]
fn nested_gradients_do_not_confuse_perturbations() {
    for x in [-2.0, 0.0, 3.5] {
        assert_eq!(outer_times_inner_derivative::gradient(x), 1.0);
    }
}

#[differentiable]
fn saddle_energy(x: f64, y: f64) -> f64 {
    (x - y).powi(2) + (1.5 * y).sin() + 0.1 * x * y * y
}

/// The value after gradient steps in `y` at fixed `x`: gradient descent inside the
/// objective, as in GradBench's `saddle`.
#[differentiable]
fn after_descent(x: f64) -> f64 {
    let mut y = 0.0;
    for _ in 0..12 {
        let (_, gy) = saddle_energy::gradient(x, y);
        y -= 0.2 * gy;
    }
    saddle_energy(x, y)
}

#[test]
fn gradients_through_an_inner_gradient_descent() {
    for x in [-0.8, 0.3, 1.7] {
        let want = derivative_by_differences(x, after_descent);
        let got = after_descent::gradient(x);
        assert!(close(got, want, 1e-7), "{x}: {got} vs {want}");
    }
}

#[differentiable]
fn energy(x: &[f64]) -> f64 {
    let mut e = 0.0;
    for i in 0..x.len() {
        e += x[i].powi(4) / 4.0 - x[i] * x[i];
        if i > 0 {
            e += 0.5 * (x[i] - x[i - 1]).powi(2);
        }
    }
    e
}

/// A loss of one gradient step on `energy`, and of its value: `gradient` and
/// `value_and_gradient` of another function inside a differentiable one.
#[differentiable]
fn step_loss(x: &[f64], rate: f64) -> f64 {
    let g = energy::gradient(x);
    let (e, g2) = energy::value_and_gradient(x);
    let mut s = e * rate;
    for i in 0..x.len() {
        let xi = x[i] - rate * g[i];
        s += xi * xi + 0.1 * g2[i];
    }
    s
}

#[test]
fn gradients_through_gradient_and_value_and_gradient_calls() {
    let x = [0.9, -0.4, 1.3, 0.2];
    let rate = 0.15;
    let (gx, grate) = step_loss::gradient(&x, rate);
    for j in 0..x.len() {
        let f = |t: f64| {
            let mut y = x;
            y[j] = t;
            step_loss(&y, rate)
        };
        let want = derivative_by_differences(x[j], f);
        assert!(close(gx[j], want, 1e-7), "{j}: {} vs {want}", gx[j]);
    }
    let want = derivative_by_differences(rate, |r| step_loss(&x, r));
    assert!(close(grate, want, 1e-7));
}

/// A function of data rows (`&[Vec<f64>]`) and pairs (`&[(f64, usize)]`): arguments its
/// own `hessian` takes as constants.
#[differentiable]
fn fit_to_rows(c: &[f64], rows: &[Vec<f64>], w: f64) -> f64 {
    let mut s = 0.0;
    for row in rows {
        for (t, v) in row.iter().enumerate() {
            s += (c[t] - v) * (c[t] - v) * c[t] * w + v.sin() * w * w;
        }
    }
    s
}

/// Every part of the inner gradient used, the rows' part too.
#[differentiable]
fn rows_gradient_norm(c: &[f64], rows: &[Vec<f64>], w: f64) -> f64 {
    let (g, grows, gw) = fit_to_rows::gradient(c, rows, w);
    let mut s = gw * gw;
    for v in &g {
        s += v * v;
    }
    for r in &grows {
        for v in r {
            s += 0.5 * v * v;
        }
    }
    s
}

/// The value and the centres' part of the inner gradient: the rows' part unused.
#[differentiable]
fn rows_value_and_gradient(c: &[f64], rows: &[Vec<f64>], w: f64) -> f64 {
    let (y, (g, _, _)) = fit_to_rows::value_and_gradient(c, rows, w);
    y * y + g.iter().map(|v| v * v).sum::<f64>()
}

/// A directional derivative of the inner function along a direction built from `c`.
#[differentiable]
fn rows_directional(c: &[f64], rows: &[Vec<f64>], w: f64) -> f64 {
    let dir: Vec<f64> = c.iter().map(|v| v * v).collect();
    let (y, dy) = fit_to_rows::jvp(c, rows, w, (dir.as_slice(), 1.0));
    y * dy
}

#[differentiable]
fn weighted_pairs(c: &[f64], d: &[(f64, usize)]) -> f64 {
    d.iter().map(|(v, k)| (c[*k] * v).sin() * v).sum()
}

#[differentiable]
fn pairs_gradient_norm(c: &[f64], d: &[(f64, usize)]) -> f64 {
    let (g, _) = weighted_pairs::gradient(c, d);
    g.iter().map(|v| v * v).sum::<f64>()
}

/// Central differences of `f` in each component of `x`.
fn gradient_by_differences(x: &[f64], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    (0..x.len())
        .map(|j| {
            derivative_by_differences(x[j], |t| {
                let mut y = x.to_vec();
                y[j] = t;
                f(&y)
            })
        })
        .collect()
}

/// A nested `gradient`, `value_and_gradient` or `jvp` of a function with data arguments
/// carries the derivative into the data too: the rows' and the pairs' gradients
/// against central differences (before, the data's part of `H·ḡ` and of `ȳ·∇f` was
/// dropped, and the rows' gradient was that of the outer call alone).
#[test]
fn nested_gradients_reach_data_arguments() {
    let c = [0.3, -0.7, 1.1];
    let rows = vec![vec![0.2, 0.5, -0.4], vec![1.3, -0.2, 0.8]];
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    let w = 0.9;
    type Gradient = (Vec<f64>, Vec<Vec<f64>>, f64);
    type Of<'a, R> = &'a dyn Fn(&[f64], &[Vec<f64>], f64) -> R;
    let check = |k: &str, f: Of<f64>, gradient: Of<Gradient>| {
        let (dc, drows, dw) = gradient(&c, &rows, w);
        let want = gradient_by_differences(&c, |z| f(z, &rows, w));
        for j in 0..3 {
            assert!(
                close(dc[j], want[j], 1e-6),
                "{k} c[{j}]: {} vs {}",
                dc[j],
                want[j]
            );
        }
        let want = gradient_by_differences(&flat, |z| {
            let r: Vec<Vec<f64>> = z.chunks(3).map(<[f64]>::to_vec).collect();
            f(&c, &r, w)
        });
        let got: Vec<f64> = drows.iter().flatten().copied().collect();
        assert_eq!(got.len(), want.len(), "{k}");
        for j in 0..got.len() {
            assert!(
                close(got[j], want[j], 1e-6),
                "{k} rows[{j}]: {} vs {}",
                got[j],
                want[j]
            );
        }
        let want = derivative_by_differences(w, |t| f(&c, &rows, t));
        assert!(close(dw, want, 1e-6), "{k} w: {dw} vs {want}");
    };
    check("gradient", &rows_gradient_norm, &|a, b, c| {
        rows_gradient_norm::gradient(a, b, c)
    });
    check(
        "value_and_gradient",
        &rows_value_and_gradient,
        &|a, b, c| rows_value_and_gradient::gradient(a, b, c),
    );
    check("jvp", &rows_directional, &|a, b, c| {
        rows_directional::gradient(a, b, c)
    });
    let d = vec![(0.4, 2usize), (1.2, 0), (-0.6, 1), (0.9, 2)];
    let (dc, dd) = pairs_gradient_norm::gradient(&c, &d);
    let want = gradient_by_differences(&c, |z| pairs_gradient_norm(z, &d));
    for j in 0..3 {
        assert!(
            close(dc[j], want[j], 1e-6),
            "c[{j}]: {} vs {}",
            dc[j],
            want[j]
        );
    }
    let values: Vec<f64> = d.iter().map(|p| p.0).collect();
    let want = gradient_by_differences(&values, |z| {
        let moved: Vec<(f64, usize)> = z.iter().zip(&d).map(|(v, p)| (*v, p.1)).collect();
        pairs_gradient_norm(&c, &moved)
    });
    for j in 0..d.len() {
        assert!(
            close(dd[j].0, want[j], 1e-6),
            "pairs[{j}]: {} vs {}",
            dd[j].0,
            want[j]
        );
    }
}

const SCALE: f64 = 2.5;
const TERMS: usize = 3;

/// Constants defined outside the function: the twin lifts a float constant to its
/// scalar and keeps an integer one, so the function has a Hessian too.
#[differentiable]
fn uses_outside_constants(x: &[f64]) -> f64 {
    use std::f64::consts;
    let mut s = 0.0;
    for i in 0..TERMS {
        s += SCALE * x[i] * x[i] * consts::PI;
    }
    s
}

#[test]
fn outside_constants_keep_their_gradient_and_have_a_hessian() {
    let x = [0.5, -1.0, 2.0];
    let g = uses_outside_constants::gradient(&x);
    for i in 0..3 {
        assert!(close(
            g[i],
            2.0 * SCALE * x[i] * std::f64::consts::PI,
            1e-15
        ));
    }
    let h = uses_outside_constants::hessian(&x);
    let closed = Array2::from_diag(&ndarray::Array1::from_elem(
        3,
        2.0 * SCALE * std::f64::consts::PI,
    ));
    assert_matrix_close(&h, &closed, 1e-14);
}

/// Attributes of the function: the twin keeps `allow` and `inline`, and not
/// `deprecated` or `must_use`, so the companions raise no warning of their own.
#[differentiable]
#[inline]
#[must_use]
#[deprecated(note = "a user's own deprecation")]
#[allow(clippy::suboptimal_flops)]
fn attributed(x: f64, y: f64) -> f64 {
    x * x * y + y.exp()
}

#[test]
#[allow(deprecated)]
fn the_twin_keeps_only_the_attributes_that_decide_compilation() {
    let (x, y) = (0.7, -0.3);
    let h = attributed::hessian(x, y);
    assert!(close(h[[0, 0]], 2.0 * y, 1e-14));
    assert!(close(h[[0, 1]], 2.0 * x, 1e-14));
    assert!(close(h[[1, 1]], y.exp(), 1e-14));
}

/// Written as a user would: iterator chains, a max-shifted log-sum-exp, `f64::max` in
/// a fold, a `Vec` collected.
#[differentiable]
fn softmax_xent(logits: &[f64], target: usize) -> f64 {
    let m = logits.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let shifted: Vec<f64> = logits.iter().map(|&z| z - m).collect();
    let lse = shifted.iter().map(|z| z.exp()).sum::<f64>().ln();
    lse - shifted[target]
}

/// A helper filling a `&mut` buffer, then a chain over it: a gradient, and (its
/// helper has a twin) a Hessian.
#[differentiable]
fn smooth_into(x: &[f64], out: &mut [f64]) {
    for i in 0..x.len() {
        let left = if i > 0 { x[i - 1] } else { x[i] };
        out[i] = 0.25 * left + 0.75 * x[i];
    }
}

#[differentiable]
fn smoothed_energy(x: &[f64]) -> f64 {
    let mut buf = vec![0.0; x.len()];
    smooth_into(x, &mut buf);
    buf.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum::<f64>()
        + buf.iter().map(|b| b.abs()).sum::<f64>()
}

#[test]
fn functions_written_as_users_write_them() {
    let z = [0.3, -1.2, 2.0, 0.7];
    let h = softmax_xent::hessian(&z, 2);
    let want = hessian_by_differences(&z, |v| softmax_xent::gradient(v, 2).0);
    assert_matrix_close(&h, &want, 1e-6);
    // The softmax Hessian is diag(p) − p pᵀ: its rows sum to zero.
    for i in 0..4 {
        assert!(h.row(i).sum().abs() < 1e-14);
    }
    let x = [0.4, -0.9, 1.3, 0.2, -0.6];
    let g = smoothed_energy::gradient(&x);
    for j in 0..x.len() {
        let f = |t: f64| {
            let mut y = x;
            y[j] = t;
            smoothed_energy(&y)
        };
        let want = derivative_by_differences(x[j], f);
        assert!(close(g[j], want, 1e-7), "{j}: {} vs {want}", g[j]);
    }
}

/// d/dx (x · D_y(x + y)[1]) = 1 with the inner derivative taken by forward mode (`jvp`).
#[differentiable]
fn outer_times_inner_jvp(x: f64) -> f64 {
    let (_, dy) = plus::jvp(x, 1.0, (0.0, 1.0));
    x * dy
}

#[differentiable]
fn bowl(p: &[f64], s: f64) -> f64 {
    p.iter().map(|v| v * v * s).sum::<f64>() + (p[0] * p[1]).sin() * s.exp()
}

/// Forward mode inside reverse mode (GradBench's `rf`): a directional derivative of
/// `bowl` along a direction that depends on the outer input, then used in a loss.
#[differentiable]
fn along_own_direction(x: &[f64], s: f64) -> f64 {
    let dir: Vec<f64> = x.iter().map(|v| v.cos()).collect();
    let (y, dy) = bowl::jvp(x, s, (dir.as_slice(), s * s));
    y * dy + dy.tanh()
}

#[test]
fn forward_inside_reverse() {
    for x in [-2.0, 0.0, 3.5] {
        assert_eq!(outer_times_inner_jvp::gradient(x), 1.0);
    }
    let x = vec![0.4, -0.7, 1.1];
    let s = 0.3;
    let (gx, gs) = along_own_direction::gradient(&x, s);
    for i in 0..3 {
        let want = derivative_by_differences(x[i], |t| {
            let mut y = x.clone();
            y[i] = t;
            along_own_direction(&y, s)
        });
        assert!(close(gx[i], want, 1e-6), "x[{i}]: {} vs {want}", gx[i]);
    }
    let want = derivative_by_differences(s, |t| along_own_direction(&x, t));
    assert!(close(gs, want, 1e-6), "s: {gs} vs {want}");
}

// ------------------------------------------------------------ programs built from helpers

#[differentiable]
fn sq_norm(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for v in x {
        s += v * v;
    }
    s
}

/// A helper returning a `Vec`, called inside a loop.
#[differentiable]
fn lower_times(q: &[f64], x: &[f64]) -> Vec<f64> {
    let d = x.len();
    let mut out = vec![0.0; d];
    let mut p = 0;
    for i in 0..d {
        out[i] = q[i].exp() * x[i];
        for j in 0..i {
            out[i] += q[d + p] * x[j];
            p += 1;
        }
    }
    out
}

/// A helper returning a tuple.
#[differentiable]
fn predator_prey(u: f64, v: f64, p: &[f64]) -> (f64, f64) {
    (p[0] * u - p[1] * u * v, p[3] * u * v - p[2] * v)
}

/// A helper writing into a `&mut Vec`.
#[differentiable]
fn push_halves(out: &mut Vec<f64>, x: &[f64]) {
    for v in x {
        out.push(0.5 * v);
    }
}

/// A generic helper.
#[differentiable]
fn scaled_exp<T: mochi::num_traits::Float>(x: T, s: T) -> T {
    s * (x / s).exp()
}

/// A GMM-like objective assembled from the helpers above and a rule crate's function.
#[differentiable]
fn assembled(theta: &[f64], data: &[f64]) -> f64 {
    let d = 3;
    let mut total = 0.0;
    for k in 0..data.len() / d {
        let point = &data[k * d..(k + 1) * d];
        let centred: Vec<f64> = point.iter().zip(theta).map(|(a, b)| a - b).collect();
        let z = lower_times(&theta[d..], &centred);
        total += 0.5 * sq_norm(&z);
    }
    let (du, dv) = predator_prey(theta[0], theta[1], &theta[2..6]);
    let mut halves = Vec::new();
    push_halves(&mut halves, theta);
    total
        + du * dv
        + sq_norm(&halves)
        + normal_logpdf(theta[2], theta[0], 1.5)
        + scaled_exp(theta[1], 2.0)
}

/// Helpers called inside closures over a differentiable sequence.
#[differentiable]
fn helpers_in_closures(x: &[f64]) -> f64 {
    let a = x.iter().fold(0.0, |acc, v| acc + scaled_exp(*v, 1.0));
    let b: f64 = x
        .iter()
        .zip(x.iter())
        .map(|(p, q)| scaled_exp(p * q, 2.0))
        .sum();
    a + b
}

#[test]
fn hessians_of_programs_built_from_helpers() {
    // Σ exp(v) + Σ 2 exp(v²/2): a diagonal Hessian exp(v) + 2 (1 + v²) exp(v²/2).
    let z = [0.3_f64, -0.5, 1.1];
    let h = helpers_in_closures::hessian(&z);
    for i in 0..3 {
        for j in 0..3 {
            let v = z[i];
            let want = if i == j {
                v.exp() + 2.0 * (1.0 + v * v) * (v * v / 2.0).exp()
            } else {
                0.0
            };
            assert!(
                close(h[[i, j]], want, 1e-13),
                "[{i}, {j}]: {} vs {want}",
                h[[i, j]]
            );
        }
    }
    let theta = [0.2, -0.4, 0.3, 0.1, -0.2, 0.25, 0.15, -0.1, 0.05];
    let data = [0.5, -1.0, 0.3, 1.2, 0.1, -0.7, -0.3, 0.8, 0.9];
    let h = assembled::hessian(&theta, &data);
    let n = theta.len();
    let want = hessian_by_differences(&theta, |t| assembled::gradient(t, &data).0);
    let h_theta = h.slice(ndarray::s![..n, ..n]).to_owned();
    assert_matrix_close(&h_theta, &want, 1e-6);
    assert_matrix_close(&h_theta, &h_theta.t().to_owned(), 1e-12);
    // hvp = H·v and jvp = ∇f·v, through the same helpers.
    let v = [0.3, -0.1, 0.4, 0.2, -0.5, 0.1, 0.2, -0.3, 0.6];
    let zeros = [0.0; 9];
    let (hv, _) = assembled::hvp(&theta, &data, (&v, &zeros));
    let (_, dy) = assembled::jvp(&theta, &data, (&v, &zeros));
    let g = assembled::gradient(&theta, &data).0;
    let gv: f64 = g.iter().zip(&v).map(|(a, b)| a * b).sum();
    assert!(close(dy, gv, 1e-13), "{dy} vs {gv}");
    for i in 0..n {
        let want: f64 = (0..n).map(|j| h[[i, j]] * v[j]).sum();
        assert!(close(hv[i], want, 1e-12), "{i}: {} vs {want}", hv[i]);
    }
    // The `&mut`-filling helper of `smoothed_energy`: its caller has a Hessian now.
    let x = [0.4, -0.9, 1.3, 0.2, -0.6];
    let h = smoothed_energy::hessian(&x);
    let want = hessian_by_differences(&x, smoothed_energy::gradient);
    assert_matrix_close(&h, &want, 1e-6);
}

/// A vector-valued program calling a helper: its Jacobian by forward mode.
#[differentiable]
fn rk4_path(p: &[f64]) -> Vec<f64> {
    let h = 0.05;
    let (mut u, mut v) = (1.0, 0.5);
    let mut out = Vec::new();
    for _ in 0..10 {
        let (k1u, k1v) = predator_prey(u, v, p);
        let (k2u, k2v) = predator_prey(u + 0.5 * h * k1u, v + 0.5 * h * k1v, p);
        let (k3u, k3v) = predator_prey(u + 0.5 * h * k2u, v + 0.5 * h * k2v, p);
        let (k4u, k4v) = predator_prey(u + h * k3u, v + h * k3v, p);
        u += h / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u);
        v += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
        out.push(u);
    }
    out.push(v);
    out
}

#[test]
fn jacobians_of_programs_built_from_helpers() {
    let p = [1.1, 0.4, 0.4, 0.1];
    let (y, j) = rk4_path::jacobian(&p);
    assert_eq!(y, rk4_path(&p));
    assert_eq!(j.dim(), (11, 4));
    assert_matrix_close(&j, &jacobian_by_differences(&p, rk4_path), 1e-7);
}

/// A helper without a generic form (it casts a float to `f32`).
#[differentiable]
fn through_f32(x: &[f64]) -> f64 {
    (x[0] as f32) as f64 + x[0] * x[1]
}

/// Its caller still builds and has its gradient; its higher-order companions would
/// fail to build, naming `through_f32`'s reason.
#[differentiable]
fn calls_through_f32(x: &[f64]) -> f64 {
    through_f32(x) * x[1]
}

#[test]
fn a_caller_of_a_helper_without_a_generic_form_keeps_its_gradient() {
    let x = [0.75, -2.0];
    let g = calls_through_f32::gradient(&x);
    // f = (x0 + x0 x1) x1 (x0 = 0.75 is exact in f32, so the cast changes nothing)
    assert!(close(g[0], (1.0 + x[1]) * x[1], 1e-15));
    assert!(close(g[1], x[0] * x[1] + (x[0] + x[0] * x[1]), 1e-15));
}

// ------------------------------------------------------------ functions of ndarray arrays

use ndarray::{array, Array1, ArrayView1};

#[differentiable]
fn rosenbrock_array(x: &Array1<f64>) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        s += 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2);
    }
    s
}

/// Log-sum-exp of a view, shifted by its maximum.
#[differentiable]
fn log_sum_exp(x: ArrayView1<f64>) -> f64 {
    let m = x.fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    x.mapv(|v| (v - m).exp()).sum().ln() + m
}

/// A quadratic form with a constant matrix written with `array!`, a float on the left.
#[differentiable]
fn quadratic_form(x: &Array1<f64>) -> f64 {
    let a = array![[2.0, 0.5, 0.0], [0.5, 3.0, 1.0], [0.0, 1.0, 4.0]];
    0.5 * x.dot(&a.dot(x)) + 2.0 * x.sum()
}

/// An owned array, floats on the left of `*`, `-` and `/`.
#[differentiable]
fn owned_array(x: Array1<f64>) -> f64 {
    let y = 2.0 * &x - 1.0;
    (1.0 / &y).sum() + y.mapv(|v| v * v).mean().unwrap()
}

/// A linear model's loss: scalar parameters times arrays.
#[differentiable]
fn linear_loss(w: &Array1<f64>, b: f64, x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
    let r = &x * w[0] + b * w[1] - y;
    0.5 * r.dot(&r) + 0.1 * w.dot(w)
}

fn array_hessian_by_differences(
    x: &Array1<f64>,
    grad: impl Fn(&Array1<f64>) -> Array1<f64>,
) -> Array2<f64> {
    hessian_by_differences(x.as_slice().unwrap(), |v| {
        grad(&Array1::from(v.to_vec())).to_vec()
    })
}

#[test]
fn hessians_of_functions_of_arrays() {
    let x = array![0.3, -0.8, 1.2, 0.5];
    let h = rosenbrock_array::hessian(&x);
    assert_matrix_close(&h, &rosenbrock_hessian(x.as_slice().unwrap()), 1e-12);

    let z = array![0.3, -1.2, 2.0];
    let h = log_sum_exp::hessian(z.view());
    let p = z.mapv(|v| (v - log_sum_exp(z.view())).exp());
    for i in 0..3 {
        for j in 0..3 {
            let want = if i == j { p[i] } else { 0.0 } - p[i] * p[j];
            assert!(close(h[[i, j]], want, 1e-13), "[{i}, {j}]");
        }
    }
    let v = array![1.0, 0.0, -1.0];
    let hv = log_sum_exp::hvp(z.view(), v.view());
    assert!(hv
        .iter()
        .zip(h.dot(&v).iter())
        .all(|(a, b)| close(*a, *b, 1e-14)));

    let (y, g, h) = quadratic_form::value_gradient_and_hessian(&z);
    assert!(close(y, quadratic_form(&z), 1e-15));
    let a = array![[2.0, 0.5, 0.0], [0.5, 3.0, 1.0], [0.0, 1.0, 4.0]];
    assert_matrix_close(&h, &a, 1e-15);
    let want_g = a.dot(&z) + 2.0;
    assert!(g
        .iter()
        .zip(want_g.iter())
        .all(|(a, b)| close(*a, *b, 1e-14)));

    let x = array![0.3, -0.8, 1.2, 0.7];
    let h = owned_array::hessian(x.clone());
    let want = array_hessian_by_differences(&x, |v| owned_array::gradient(v.clone()));
    assert_matrix_close(&h, &want, 1e-6);

    let (xs, ys) = (array![1.0, 2.0, 3.0], array![1.5, 2.1, 2.9]);
    let w = array![0.9, 0.2];
    let h = linear_loss::hessian(&w, 0.4, xs.view(), ys.view());
    assert_matrix_close(&h, &h.t().to_owned(), 1e-13);
    // ∂²/∂w₀² = Σx² + 0.2, ∂²/∂b² = w₁²·n.
    assert!(close(h[[0, 0]], 14.2, 1e-13));
    assert!(close(h[[2, 2]], 3.0 * 0.04, 1e-13));
}

/// A vector result as an `Array1`.
#[differentiable]
fn array_map(x: &Array1<f64>) -> Array1<f64> {
    x.mapv(|v| v.sin()) * 2.0 + x.sum()
}

/// Two outputs of twelve inputs: the Jacobian by reverse mode.
#[differentiable]
fn two_moments(x: &[f64]) -> Vec<f64> {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    vec![mean, var.sqrt()]
}

#[test]
fn jacobians_by_forward_or_reverse_mode_by_shape() {
    let x = array![0.3, -0.8, 1.2];
    let (y, j) = array_map::jacobian(&x);
    assert_eq!(y, array_map(&x));
    for r in 0..3 {
        for c in 0..3 {
            let want = if r == c { 2.0 * x[r].cos() } else { 0.0 } + 1.0;
            assert!(close(j[[r, c]], want, 1e-14), "[{r}, {c}]");
        }
    }
    let v = array![0.5, -1.0, 2.0];
    let (_, dy) = array_map::jvp(&x, &v);
    assert!(dy
        .iter()
        .zip(j.dot(&v).iter())
        .all(|(a, b)| close(*a, *b, 1e-14)));

    let x: Vec<f64> = (0..12).map(|i| (i as f64 * 0.7).sin()).collect();
    let (y, j) = two_moments::jacobian(&x);
    assert_eq!(y, two_moments(&x));
    assert_eq!(j.dim(), (2, 12));
    assert_matrix_close(&j, &jacobian_by_differences(&x, two_moments), 1e-7);
    // jvp = J·v (forward mode) agrees with the rows from reverse mode.
    let v: Vec<f64> = (0..12).map(|i| (i as f64).cos()).collect();
    let (_, dy) = two_moments::jvp(&x, &v);
    for r in 0..2 {
        let want: f64 = (0..12).map(|c| j[[r, c]] * v[c]).sum();
        assert!(close(dy[r], want, 1e-13));
    }
}

/// An ODE's right-hand side as users write it: a fixed-size array out.
#[differentiable]
fn lotka_volterra_rhs(u: &[f64], p: &[f64]) -> [f64; 2] {
    [
        p[0] * u[0] - p[1] * u[0] * u[1],
        p[2] * u[0] * u[1] - p[3] * u[1],
    ]
}

/// A polar-to-Cartesian map with three outputs, as a tuple.
#[differentiable]
fn to_cartesian(r: f64, theta: f64, z: f64) -> (f64, f64, f64) {
    (r * theta.cos(), r * theta.sin(), z * r)
}

/// Two outputs of many inputs (reverse mode by shape), as a tuple.
#[differentiable]
fn mean_and_norm(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    (
        x.iter().sum::<f64>() / n,
        x.iter().map(|v| v * v).sum::<f64>().sqrt(),
    )
}

#[test]
fn jacobians_of_fixed_size_array_and_tuple_results() {
    let (u, p) = (vec![1.3, 0.7], vec![1.1, 0.4, 0.4, 0.1]);
    let (y, j) = lotka_volterra_rhs::jacobian(&u, &p);
    assert_eq!(y, lotka_volterra_rhs(&u, &p));
    // Columns: u0, u1, then p0..p3.
    let want = [
        [
            p[0] - p[1] * u[1],
            -p[1] * u[0],
            u[0],
            -u[0] * u[1],
            0.0,
            0.0,
        ],
        [
            p[2] * u[1],
            p[2] * u[0] - p[3],
            0.0,
            0.0,
            u[0] * u[1],
            -u[1],
        ],
    ];
    assert_eq!(j.dim(), (2, 6));
    for r in 0..2 {
        for c in 0..6 {
            assert!(
                close(j[[r, c]], want[r][c], 1e-14),
                "[{r}, {c}]: {}",
                j[[r, c]]
            );
        }
    }
    let (du, dp) = (vec![0.5, -1.0], vec![0.1, 0.2, -0.3, 0.4]);
    let (y1, dy) = lotka_volterra_rhs::jvp(&u, &p, (&du, &dp));
    assert_eq!(y1, y);
    let v: Vec<f64> = du.iter().chain(&dp).copied().collect();
    for r in 0..2 {
        let want: f64 = (0..6).map(|c| j[[r, c]] * v[c]).sum();
        assert!(close(dy[r], want, 1e-14));
    }

    let (r, th, z) = (2.0, 0.6, -0.5);
    let (y, j) = to_cartesian::jacobian(r, th, z);
    assert_eq!(y, to_cartesian(r, th, z));
    let want = [
        [th.cos(), -r * th.sin(), 0.0],
        [th.sin(), r * th.cos(), 0.0],
        [z, 0.0, r],
    ];
    for a in 0..3 {
        for b in 0..3 {
            assert!(close(j[[a, b]], want[a][b], 1e-14), "[{a}, {b}]");
        }
    }
    let (_, (dx, dy_, dz)) = to_cartesian::jvp(r, th, z, (1.0, 0.0, 0.0));
    assert!(close(dx, th.cos(), 1e-14) && close(dy_, th.sin(), 1e-14) && close(dz, z, 1e-14));

    let x: Vec<f64> = (0..12).map(|i| (i as f64 * 0.7).sin()).collect();
    let (y, j) = mean_and_norm::jacobian(&x);
    assert_eq!(y, mean_and_norm(&x));
    assert_eq!(j.dim(), (2, 12));
    let by_differences = jacobian_by_differences(&x, |x| {
        let (a, b) = mean_and_norm(x);
        vec![a, b]
    });
    assert_matrix_close(&j, &by_differences, 1e-7);
}

// ------------------------------------------------------------------ functions over f32

#[differentiable]
fn squares_f32(x: &[f32]) -> f32 {
    x.iter().map(|v| v * v).sum::<f32>()
}

/// Over `f32`: literals, `f32::EPSILON`, a cast of a length, a helper over `f32`.
#[differentiable]
fn rosenbrock_f32(x: &[f32]) -> f32 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        s += 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2);
    }
    s + 0.1 * squares_f32(x) + f32::EPSILON * (x.len() as f32)
}

#[differentiable]
fn tanh_sum_f32(x: &Array1<f32>) -> f32 {
    (2.0 * x - 0.5).mapv(|v| v.tanh()).sum()
}

#[differentiable]
fn residuals_f32(x: &[f32]) -> Vec<f32> {
    vec![x[0] * x[1], x[1].sin(), x[0] + 2.0 * x[2]]
}

#[test]
fn companions_of_functions_over_f32_answer_in_f32() {
    let x = [0.3f32, -0.8, 1.2];
    let h = rosenbrock_f32::hessian(&x);
    let xd: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let mut want = rosenbrock_hessian(&xd);
    want.diag_mut().mapv_inplace(|d| d + 0.2);
    for ((i, j), v) in h.indexed_iter() {
        assert!(close(*v as f64, want[[i, j]], 1e-6), "[{i}, {j}]: {v}");
    }
    let hv: Vec<f32> = rosenbrock_f32::hvp(&x, &[1.0, 0.0, 0.0]);
    assert_eq!(hv, h.column(0).to_vec());
    let (y, g, h2) = squares_f32::value_gradient_and_hessian(&x);
    assert_eq!(y, squares_f32(&x));
    assert_eq!(g, vec![0.6, -1.6, 2.4]);
    assert_eq!(h2, Array2::<f32>::eye(3) * 2.0);
    let (_, dy) = squares_f32::jvp(&x, &[1.0, 1.0, 1.0]);
    assert!((dy - (0.6 - 1.6 + 2.4)).abs() < 1e-6);

    let a = array![0.1f32, 0.2];
    let h = tanh_sum_f32::hessian(&a);
    for i in 0..2 {
        let t = (2.0 * a[i] as f64 - 0.5).tanh();
        let want = 4.0 * (-2.0 * t * (1.0 - t * t));
        assert!(
            close(h[[i, i]] as f64, want, 1e-6),
            "{i}: {} vs {want}",
            h[[i, i]]
        );
    }
    let (y, j) = residuals_f32::jacobian(&x);
    assert_eq!(y, residuals_f32(&x));
    let want = [[x[1], x[0], 0.0], [0.0, x[1].cos(), 0.0], [1.0, 0.0, 2.0]];
    for r in 0..3 {
        for c in 0..3 {
            assert!((j[[r, c]] - want[r][c]).abs() < 1e-6, "[{r}, {c}]");
        }
    }
}

/// A matrix argument: a logistic regression's loss in its weights and its data.
#[differentiable]
fn logistic_loss(theta: &Array1<f64>, xs: &Array2<f64>, ys: &Array1<f64>) -> f64 {
    let p = xs.dot(theta).mapv(|z| 1.0 / (1.0 + (-z).exp()));
    -(ys * &p.mapv(|v| v.ln()) + (1.0 - ys) * &p.mapv(|v| (1.0 - v).ln())).sum()
}

#[test]
fn hessians_over_matrix_arguments() {
    let theta = array![0.3, -0.8, 0.5];
    let xs = array![[1.0, 0.5, 0.2], [0.1, -0.3, 0.7]];
    let ys = array![1.0, 0.0];
    let h = logistic_loss::hessian(&theta, &xs, &ys);
    assert_eq!(h.dim(), (11, 11));
    // In θ: Xᵀ diag(p(1 − p)) X.
    let p = xs.dot(&theta).mapv(|z| 1.0 / (1.0 + (-z).exp()));
    for i in 0..3 {
        for j in 0..3 {
            let want: f64 = (0..2)
                .map(|r| xs[[r, i]] * xs[[r, j]] * p[r] * (1.0 - p[r]))
                .sum();
            assert!(close(h[[i, j]], want, 1e-13), "[{i}, {j}]");
        }
    }
    // The matrix block against differences of the gradient in the data, row-major.
    let flat: Vec<f64> = xs.iter().copied().collect();
    let want = hessian_by_differences(&flat, |v| {
        let m = Array2::from_shape_vec((2, 3), v.to_vec()).unwrap();
        logistic_loss::gradient(&theta, &m, &ys)
            .1
            .iter()
            .copied()
            .collect()
    });
    let block = h.slice(ndarray::s![3..9, 3..9]).to_owned();
    assert_matrix_close(&block, &want, 1e-6);
    // hvp answers an array of each argument's shape.
    let (hv_t, hv_x, _) = logistic_loss::hvp(
        &theta,
        &xs,
        &ys,
        (
            &array![1.0, 0.0, 0.0],
            &Array2::zeros((2, 3)),
            &array![0.0, 0.0],
        ),
    );
    assert_eq!(hv_x.dim(), (2, 3));
    for i in 0..3 {
        assert!(close(hv_t[i], h[[i, 0]], 1e-13));
    }
}

/// Idioms whose generic form was missing: a float method named as a value
/// (`fold(f64::NEG_INFINITY, f64::max)`), a local array literal of data, and the `Vec`
/// methods `to_vec`, `iter_mut`, `for_each`, `reverse`.
#[differentiable]
fn log_sum_exp_stable(x: &[f64]) -> f64 {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m + x.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
}

#[differentiable]
fn two_means(c: &[f64]) -> f64 {
    let points = [0.1, 0.5, 0.9, 1.4, 2.2];
    let mut s = 0.0;
    for &p in points.iter() {
        s += ((p - c[0]) * (p - c[0])).min((p - c[1]) * (p - c[1]));
    }
    s
}

#[differentiable]
fn reversed_pairs(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.iter_mut().for_each(|e| *e = *e * 2.0 + e.sin());
    v.reverse();
    v.iter().zip(x.iter()).map(|(a, b)| a * b).sum()
}

#[test]
fn idioms_with_a_generic_form_have_hessians() {
    let x = [0.3_f64, -0.8, 1.2, 0.5, -0.1];
    // log-sum-exp: H = diag(p) − p pᵀ, p = softmax(x).
    let z: f64 = x.iter().map(|v| v.exp()).sum();
    let p: Vec<f64> = x.iter().map(|v| v.exp() / z).collect();
    let closed = Array2::from_shape_fn((5, 5), |(i, j)| {
        if i == j {
            p[i] - p[i] * p[j]
        } else {
            -p[i] * p[j]
        }
    });
    let h = log_sum_exp_stable::hessian(&x);
    assert_matrix_close(&h, &closed, 1e-12);
    // Each centre's Hessian is 2 × (points nearer to it): 3 of them at 0.4 (0.1, 0.5,
    // 0.9), 2 at 1.7 (1.4, 2.2).
    let c = [0.4, 1.7];
    let h = two_means::hessian(&c);
    assert_matrix_close(&h, &Array2::from_diag(&ndarray::arr1(&[6.0, 4.0])), 1e-12);
    let h = reversed_pairs::hessian(&x);
    let by_differences = hessian_by_differences(&x, reversed_pairs::gradient);
    assert_matrix_close(&h, &by_differences, 1e-6);
    assert_matrix_close(&h, &h.t().to_owned(), 1e-14);
}

/// A Gaussian-process marginal likelihood through the linear-algebra rules
/// (`cholesky`, `cholesky_solve`, `logdet_cholesky`), which run on duals: its Hessian
/// in the kernel's parameters.
#[differentiable]
fn gp_neg_log_likelihood(theta: &Array1<f64>, t: &Array1<f64>, y: &Array1<f64>) -> f64 {
    let n = t.len();
    let mut k = Array2::<f64>::zeros((n, n));
    for i in 0..n {
        for j in 0..n {
            let d = t[i] - t[j];
            k[[i, j]] = theta[0].exp() * (-(d * d) / (2.0 * theta[1].exp())).exp();
        }
        k[[i, i]] += theta[2].exp();
    }
    let l = mochi::linalg::cholesky(&k).unwrap();
    let alpha = mochi::linalg::cholesky_solve(&l, y);
    0.5 * y.dot(&alpha) + 0.5 * mochi::linalg::logdet_cholesky(&l)
}

#[test]
fn hessians_run_through_the_linear_algebra_rules() {
    let t = ndarray::array![0.0, 0.4, 1.1, 1.7, 2.6];
    let y = ndarray::array![0.3, -0.2, 0.8, 0.5, -0.4];
    let theta = ndarray::array![0.2, -0.3, -1.5];
    let h = gp_neg_log_likelihood::hessian(&theta, &t, &y);
    // Only θ's block is checked against differences of θ's gradient (the data
    // arguments' blocks are there too, laid after it).
    let grad = |v: &[f64]| -> Vec<f64> {
        let (g, _, _) = gp_neg_log_likelihood::gradient(&Array1::from(v.to_vec()), &t, &y);
        g.to_vec()
    };
    let by_differences = hessian_by_differences(theta.as_slice().unwrap(), grad);
    let block = h.slice(ndarray::s![0..3, 0..3]).to_owned();
    assert_matrix_close(&block, &by_differences, 1e-6);
    assert_matrix_close(&h, &h.t().to_owned(), 1e-12);
}

/// Methods asked for their higher-order companions with
/// `#[differentiable(higher_order)]`: the receiver's floats come first (as
/// `LiftField` orders the struct's fields: `w`, then `b`; the integer `n` has none),
/// then the arguments'.
#[derive(Clone, Debug, Tangent)]
struct Regression {
    w: Vec<f64>,
    b: f64,
    n: usize,
}

impl Regression {
    #[differentiable(higher_order)]
    fn loss(&self, x: &[f64], y: f64) -> f64 {
        let mut s = self.b;
        for i in 0..x.len() {
            s += self.w[i] * x[i];
        }
        let r = s - y;
        r * r * (0.5 * s).cos() + self.n as f64 * r
    }

    #[differentiable(higher_order)]
    fn features(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .zip(self.w.iter())
            .map(|(v, w)| (v * w + self.b).tanh())
            .collect()
    }
}

/// The receiver and the arguments laid end to end: `(w, b, x, y)`.
fn regression_point(z: &[f64]) -> (Regression, Vec<f64>, f64) {
    let m = Regression {
        w: z[0..2].to_vec(),
        b: z[2],
        n: 3,
    };
    (m, z[3..5].to_vec(), z[5])
}

#[test]
fn methods_asked_for_them_have_hessians_hvps_and_jvps() {
    let z = [0.5, -1.2, 0.1, 0.3, 0.7, 1.0];
    let (m, x, y) = regression_point(&z);
    let h = m.loss_hessian(&x, y);
    assert_eq!(h.dim(), (6, 6));
    let grad = |z: &[f64]| {
        let (m, x, y) = regression_point(z);
        let (dm, dx, dy) = m.loss_gradient(&x, y);
        let mut g = dm.w.clone();
        g.push(dm.b);
        g.extend(dx);
        g.push(dy);
        g
    };
    assert_matrix_close(&h, &hessian_by_differences(&z, grad), 1e-6);
    assert_matrix_close(&h, &h.t().to_owned(), 1e-13);
    // `hvp` answers shaped like the gradient: the struct's tangent first.
    let v = [1.0, 0.0, 0.5, 0.0, 1.0, 0.2];
    let dm = RegressionTangent {
        w: v[0..2].to_vec(),
        b: v[2],
        n: mochi::NoTangent,
    };
    let (hm, hx, hy) = m.loss_hvp(&x, y, (&dm, &v[3..5], v[5]));
    let hv: Vec<f64> = (0..6)
        .map(|i| (0..6).map(|j| h[[i, j]] * v[j]).sum())
        .collect();
    let mut got = hm.w.clone();
    got.push(hm.b);
    got.extend(hx);
    got.push(hy);
    for (a, b) in got.iter().zip(&hv) {
        assert!(close(*a, *b, 1e-12), "{got:?} vs {hv:?}");
    }
    // `jvp` = ∇f·v, and the value and gradient of `value_gradient_and_hessian` are the
    // method's own.
    let g = grad(&z);
    let (value, ydot) = m.loss_jvp(&x, y, (&dm, &v[3..5], v[5]));
    let g_dot_v: f64 = g.iter().zip(&v).map(|(a, b)| a * b).sum();
    assert!(close(ydot, g_dot_v, 1e-12), "{ydot} vs {g_dot_v}");
    let (value2, (dm2, _, _), h2) = m.loss_value_gradient_and_hessian(&x, y);
    assert_eq!((value, dm2.b), (value2, g[2]));
    assert_matrix_close(&h2, &h, 0.0);
}

#[test]
fn methods_asked_for_them_have_jacobians() {
    let m = Regression {
        w: vec![0.4, -0.9, 1.3],
        b: 0.2,
        n: 0,
    };
    let x = [0.6, 0.1, -0.8];
    let (y, j) = m.features_jacobian(&x);
    assert_eq!(y, m.features(&x));
    // Columns: w (3), b, x (3).
    assert_eq!(j.dim(), (3, 7));
    let f = |z: &[f64]| {
        let m = Regression {
            w: z[0..3].to_vec(),
            b: z[3],
            n: 0,
        };
        m.features(&z[4..7])
    };
    let z = [0.4, -0.9, 1.3, 0.2, 0.6, 0.1, -0.8];
    assert_matrix_close(&j, &jacobian_by_differences(&z, f), 1e-7);
}

/// A method over ndarray fields and arguments: least squares in `(w, b)`, whose Hessian
/// block is `2·[XᵀX, Xᵀ1; 1ᵀX, n]`.
#[derive(Clone, Debug, Tangent)]
struct LeastSquares {
    w: Array1<f64>,
    b: f64,
}

impl LeastSquares {
    #[differentiable(higher_order)]
    fn loss(&self, x: &Array2<f64>, y: &Array1<f64>) -> f64 {
        let p = x.dot(&self.w) + self.b;
        (&p - y).mapv(|v| v * v).sum()
    }
}

#[test]
fn methods_over_arrays_have_the_closed_form_hessian() {
    let m = LeastSquares {
        w: ndarray::array![0.3, -0.5],
        b: 0.2,
    };
    let x = ndarray::array![[1.0, 2.0], [0.5, -1.0], [0.3, 0.3]];
    let y = ndarray::array![0.1, 0.4, -0.2];
    let h = m.loss_hessian(&x, &y);
    let mut closed = Array2::<f64>::zeros((3, 3));
    closed
        .slice_mut(ndarray::s![0..2, 0..2])
        .assign(&(x.t().dot(&x) * 2.0));
    for j in 0..2 {
        let s = 2.0 * x.column(j).sum();
        closed[[j, 2]] = s;
        closed[[2, j]] = s;
    }
    closed[[2, 2]] = 2.0 * x.nrows() as f64;
    assert_matrix_close(&h.slice(ndarray::s![0..3, 0..3]).to_owned(), &closed, 1e-12);
}

const STEPS: usize = 3;
const GAIN: f64 = 1.5;
const WEIGHTS: [f64; 3] = [0.5, -1.0, 2.0];

/// Constants defined outside the function (an integer, a float, an array of floats, and
/// `PI` through a `use`) in a function with a Hessian: the twin lifts each by its type.
#[differentiable]
fn with_outside_constants(x: &[f64]) -> f64 {
    use std::f64::consts::PI;
    let mut s = 0.0;
    for i in 0..STEPS {
        s += WEIGHTS[i] * (PI * x[i]).sin() * GAIN;
    }
    s * s
}

#[test]
fn outside_constants_have_hessians() {
    let x = [0.3, -0.2, 0.7];
    let h = with_outside_constants::hessian(&x);
    let by_differences = hessian_by_differences(&x, with_outside_constants::gradient);
    assert_matrix_close(&h, &by_differences, 1e-6);
}

/// A method that calls another method of `self`: both asked, the caller's twin calls
/// the callee's. Over `(w₀, w₁, b)` the Hessian of `(w·x + b − y)² + 0.1‖w‖²` is
/// `2·[x; 1][x; 1]ᵀ + 0.2·I` on `w`.
#[derive(Clone, Debug, Tangent)]
struct Ridge {
    w: Vec<f64>,
    b: f64,
}

impl Ridge {
    #[differentiable(higher_order)]
    fn predict(&self, x: &[f64]) -> f64 {
        self.w.iter().zip(x).map(|(w, v)| w * v).sum::<f64>() + self.b
    }

    #[differentiable(higher_order)]
    fn loss(&self, x: &[f64], y: f64) -> f64 {
        let p = self.predict(x);
        (p - y).powi(2) + 0.1 * self.w.iter().map(|w| w * w).sum::<f64>()
    }
}

#[test]
fn a_method_calling_a_method_has_the_closed_form_hessian() {
    let m = Ridge {
        w: vec![0.5, -1.2],
        b: 0.1,
    };
    let x = [0.3, 0.7];
    let h = m.loss_hessian(&x, 1.0);
    let z = [x[0], x[1], 1.0];
    let closed = Array2::from_shape_fn((3, 3), |(i, j)| {
        2.0 * z[i] * z[j] + if i == j && i < 2 { 0.2 } else { 0.0 }
    });
    assert_matrix_close(&h.slice(ndarray::s![0..3, 0..3]).to_owned(), &closed, 1e-12);
}

#[derive(Clone, Copy)]
struct Settings {
    order: usize,
}

const SETTINGS: Settings = Settings { order: 2 };
const OFFSETS: &[usize] = &[0, 1];

/// Constants of other types (a struct, a slice of integers) stay as they are in the
/// twin; the function still has a Hessian.
#[differentiable]
fn with_constant_settings(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &o in OFFSETS.iter() {
        s += x[o].powi(SETTINGS.order as i32 + 1);
    }
    s
}

#[test]
fn constants_of_other_types_are_kept() {
    let x = [0.3, -0.7];
    let h = with_constant_settings::hessian(&x);
    // ∂²/∂xᵢ² of xᵢ³ = 6xᵢ.
    let closed = Array2::from_diag(&ndarray::arr1(&[6.0 * x[0], 6.0 * x[1]]));
    assert_matrix_close(&h, &closed, 1e-13);
}

#[test]
#[should_panic(expected = "the direction for `x` has 2 components, the argument 3")]
fn a_direction_of_another_length_is_refused() {
    let _ = rosenbrock::jvp(&[0.5, 1.0, 1.5], &[1.0, 0.0]);
}

/// A curve `t ↦ (cos t, sin t, t²)` in the result types a user writes.
#[differentiable]
fn helix_tuple(t: f64) -> (f64, f64, f64) {
    (t.cos(), t.sin(), t * t)
}

#[differentiable]
fn helix_array(t: f64) -> [f64; 3] {
    [t.cos(), t.sin(), t * t]
}

#[differentiable]
fn helix_vec(t: f64, n: usize) -> Vec<f64> {
    (0..n).map(|k| (t * (k + 1) as f64).sin()).collect()
}

#[differentiable]
fn helix_array1(t: f64) -> ndarray::Array1<f64> {
    ndarray::Array1::from(vec![t.cos(), t.sin(), t * t])
}

#[test]
fn jacobians_and_jvps_of_curves_of_one_scalar_argument() {
    let t: f64 = 0.7;
    let velocity = [-t.sin(), t.cos(), 2.0 * t];
    let (y, j) = helix_tuple::jacobian(t);
    assert_eq!(y, helix_tuple(t));
    assert_eq!(j.dim(), (3, 1));
    for r in 0..3 {
        assert!(close(j[[r, 0]], velocity[r], 1e-14), "tuple [{r}]");
    }
    let (y, dy) = helix_tuple::jvp(t, 2.0);
    assert_eq!(y, helix_tuple(t));
    assert!(close(dy.0, 2.0 * velocity[0], 1e-14) && close(dy.2, 2.0 * velocity[2], 1e-14));

    let (y, j) = helix_array::jacobian(t);
    assert_eq!(y, helix_array(t));
    let (_, dy) = helix_array::jvp(t, 1.0);
    for r in 0..3 {
        assert!(close(j[[r, 0]], velocity[r], 1e-14), "array [{r}]");
        assert!(close(dy[r], velocity[r], 1e-14), "array jvp [{r}]");
    }

    let (y, j) = helix_array1::jacobian(t);
    assert_eq!(y, helix_array1(t));
    for r in 0..3 {
        assert!(close(j[[r, 0]], velocity[r], 1e-14), "Array1 [{r}]");
    }

    // With an integer argument beside the scalar: d/dt sin((k+1)t) = (k+1) cos((k+1)t).
    let (y, j) = helix_vec::jacobian(t, 4);
    assert_eq!(y, helix_vec(t, 4));
    assert_eq!(j.dim(), (4, 1));
    for k in 0..4 {
        let c = (k + 1) as f64;
        assert!(close(j[[k, 0]], c * (c * t).cos(), 1e-14), "Vec [{k}]");
        // and against a central difference
        let h = 1e-6;
        let fd = (helix_vec(t + h, 4)[k] - helix_vec(t - h, 4)[k]) / (2.0 * h);
        assert!(
            close(j[[k, 0]], fd, 1e-8),
            "Vec [{k}] vs finite difference {fd}"
        );
    }
}

// ---------------------------------------------------------------- no_grad in forward mode

/// `no_grad` stops every derivative, forward mode's too: `c = no_grad(x₀)` is a constant,
/// so ∇f = (c, 2x₁) and the Hessian is diag(0, 2) (as `jax.lax.stop_gradient` gives).
#[differentiable]
fn stopped_scalar(x: &[f64]) -> f64 {
    let c = no_grad(x[0]);
    x[0] * c + x[1] * x[1] + no_grad(x[0] + x[1]) * x[0].sin()
}

/// A data slice shadowed by its own `no_grad`: no derivative for `data`, in any mode.
#[differentiable]
fn stopped_slice(w: &[f64], data: &[f64]) -> f64 {
    let data = no_grad(data);
    let mut s = 0.0;
    for i in 0..w.len() {
        s += w[i] * w[i] * data[i] * data[i];
    }
    s
}

#[differentiable]
fn stopped_real<T: mochi::Real>(x: &[T]) -> T {
    let c = no_grad(x[0]);
    let v = no_grad(x.to_vec());
    c * x[0] + x[1] * v[1] * x[1]
}

#[differentiable]
fn stopped_float<T: mochi::num_traits::Float>(w: &[T], data: &[T]) -> T {
    let data = no_grad(data);
    let c = no_grad(w[0]);
    let mut s = T::zero();
    for i in 0..w.len() {
        s = s + c * w[i] * data[i] * data[i];
    }
    s
}

#[test]
fn no_grad_stops_forward_mode_derivatives_as_it_stops_the_gradient() {
    let x = [0.8, -0.6];
    let (a, b) = (x[0], x[1]);
    let s = a + b;
    // ∇f = (c + s cos a, 2b) with c = a and s = a + b constants.
    let g = stopped_scalar::gradient(&x);
    assert!(
        close(g[0], a + s * a.cos(), 1e-12) && close(g[1], 2.0 * b, 1e-12),
        "{g:?}"
    );
    for v in [[1.0, 0.0], [0.0, 1.0], [0.3, -1.7]] {
        let (_, d) = stopped_scalar::jvp(&x, &v);
        assert!(
            close(d, g[0] * v[0] + g[1] * v[1], 1e-12),
            "jvp {d} against ∇f·v"
        );
    }
    let h = stopped_scalar::hessian(&x);
    let want = ndarray::array![[-s * a.sin(), 0.0], [0.0, 2.0]];
    assert_matrix_close(&h, &want, 1e-12);

    let (w, data) = (vec![0.5, -1.5, 2.0], vec![0.3, 0.9, -0.4]);
    let (gw, gd) = stopped_slice::gradient(&w, &data);
    assert_eq!(gd, vec![0.0; 3]);
    let (_, d) = stopped_slice::jvp(&w, &data, (&[0.0; 3], &[1.0, -2.0, 0.5]));
    assert_eq!(d, 0.0, "a direction along the stopped data moves nothing");
    let (_, d) = stopped_slice::jvp(&w, &data, (&[1.0, 1.0, 1.0], &[1.0, -2.0, 0.5]));
    assert!(close(d, gw.iter().sum::<f64>(), 1e-12));
    let h = stopped_slice::hessian(&w, &data);
    for i in 0..6 {
        for j in 0..6 {
            let want = if i == j && i < 3 {
                2.0 * data[i] * data[i]
            } else {
                0.0
            };
            assert!(close(h[[i, j]], want, 1e-12), "h[{i},{j}] = {}", h[[i, j]]);
        }
    }

    // Generic over `Real`: ∇f = (c, 2 v₁ x₁) with c = x₀, v₁ = x₁: H = diag(0, 2x₁).
    let g = stopped_real::gradient(&x);
    assert!(
        close(g[0], a, 1e-12) && close(g[1], 2.0 * b * b, 1e-12),
        "{g:?}"
    );
    let (_, d) = stopped_real::jvp(&x, &[1.0, 1.0]);
    assert!(close(d, g[0] + g[1], 1e-12), "jvp {d} against ∇f·v");
    let h = stopped_real::hessian(&x);
    assert_matrix_close(&h, &ndarray::array![[0.0, 0.0], [0.0, 2.0 * b]], 1e-12);

    // Generic over `num_traits::Float` alone: through `f64` and back.
    let (gw, gd) = stopped_float::gradient(&w, &data);
    assert_eq!(gd, vec![0.0; 3]);
    let (_, d) = stopped_float::jvp(&w, &data, (&[1.0, 0.0, 0.0], &[1.0, 1.0, 1.0]));
    assert!(close(d, gw[0], 1e-12), "jvp {d} against ∂f/∂w₀ {}", gw[0]);
}

/// `std::autodiff`'s examples take floats by reference (`fn square(x: &f64) -> f64`).
#[differentiable]
fn square_by_ref(x: &f64) -> f64 {
    x * x * x.sin()
}

#[differentiable]
fn floats_by_ref(x: &f64, y: f64, v: &[f64]) -> f64 {
    (x * y).sin() + v.iter().map(|a| a * x * a).sum::<f64>()
}

#[differentiable]
fn calls_by_ref(v: &[f64]) -> f64 {
    let a = v[0];
    square_by_ref(&a) * floats_by_ref(&v[1], a, &v[2..])
}

#[test]
fn floats_taken_by_reference_have_every_companion() {
    let x = 0.7_f64;
    // f = x² sin x: f' = 2x sin x + x² cos x, f'' = 2 sin x + 4x cos x − x² sin x.
    let d1 = 2.0 * x * x.sin() + x * x * x.cos();
    let d2 = 2.0 * x.sin() + 4.0 * x * x.cos() - x * x * x.sin();
    let h = square_by_ref::hessian(&x);
    assert!((h[[0, 0]] - d2).abs() < 1e-12, "{h:?} against {d2}");
    let (y, dy) = square_by_ref::jvp(&x, 2.0);
    assert!((y - square_by_ref(&x)).abs() < 1e-15);
    assert!((dy - 2.0 * d1).abs() < 1e-12);
    assert!((square_by_ref::hvp(&x, 3.0) - 3.0 * d2).abs() < 1e-12);
    // Mixed arguments, against differences of the gradient laid end to end.
    let p = [0.4, 1.3, 0.3, -0.5, 0.7];
    let grad = |z: &[f64]| {
        let (gx, gy, gv) = floats_by_ref::gradient(&z[0], z[1], &z[2..]);
        let mut g = vec![gx, gy];
        g.extend(gv);
        g
    };
    let h = floats_by_ref::hessian(&p[0], p[1], &p[2..]);
    common::assert_hessian_matches("floats_by_ref", grad, &h, &p, 1e-6);
    let g = grad(&p);
    let f = |z: &[f64]| floats_by_ref(&z[0], z[1], &z[2..]);
    common::assert_gradient_matches(f, &g, &p);
    // A caller's Hessian through both.
    let q = [0.3, 0.5, 0.7, 0.9];
    let h = calls_by_ref::hessian(&q);
    common::assert_hessian_matches("calls_by_ref", calls_by_ref::gradient, &h, &q, 1e-6);
}
