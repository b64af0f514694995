//! Idioms as numerical Rust writes them (probe 44): slice patterns in `if let` and
//! `match` (`[a, b, rest @ ..]`, `[first, .., last]`, `[.., p, q]`, `[mut only]`),
//! `std::array::from_fn` of a known length, and forms that compiled before and are kept
//! here: Horner by `rev().fold`, log-sum-exp with `fold(NEG_INFINITY, f64::max)`,
//! softmax, a `scan`, `windows`, a filtered zip, `chunks_exact`, `clamp`/`signum`,
//! array destructuring, `enumerate` and `1..=n`, a sample variance, `max_by(total_cmp)`,
//! a matrix–vector product of rows, `sin_cos`/`atan2`/`hypot`, a reversed inclusive
//! range. Checked by `test_rule` (finite differences, the adjoint identity), exact
//! values and a Hessian.

#![allow(
    clippy::needless_range_loop,
    clippy::match_ref_pats,
    clippy::range_minus_one
)]
mod common;
use mochi::prelude::*;

#[differentiable]
fn horner(x: &[f64]) -> f64 {
    let t = x[0];
    x[1..].iter().rev().fold(0.0, |acc, c| acc * t + c)
}

#[differentiable]
fn lse(x: &[f64]) -> f64 {
    let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    m + x.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
}

#[differentiable]
fn softmax_ce(x: &[f64]) -> f64 {
    let m = x.iter().copied().reduce(f64::max).unwrap();
    let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
    let z: f64 = e.iter().sum();
    let p: Vec<f64> = e.iter().map(|v| v / z).collect();
    -p[1].ln()
}

#[differentiable]
fn cumprod_last(x: &[f64]) -> f64 {
    let c: Vec<f64> = x
        .iter()
        .scan(1.0, |s, &v| {
            *s *= v;
            Some(*s)
        })
        .collect();
    c.iter().sum()
}

#[differentiable]
fn rough(x: &[f64]) -> f64 {
    x.windows(2).map(|w| w[1] - w[0]).map(|d| d * d).sum()
}

#[differentiable]
fn pos_dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .zip(y)
        .filter(|(a, _)| **a > 0.0)
        .map(|(a, b)| a * b)
        .sum()
}

#[differentiable]
fn triples(x: &[f64]) -> f64 {
    x.chunks_exact(3).map(|c| c[0] * c[1] + c[2]).sum()
}

#[differentiable]
fn from_fn_arr(x: &[f64]) -> f64 {
    let a: [f64; 3] = std::array::from_fn(|i| x[i] * 2.0);
    a[0] * a[1] + a[2]
}

#[differentiable]
fn clampy(x: &[f64]) -> f64 {
    x[0].clamp(-1.0, 1.0) * x[1].signum() + x[2].abs().max(f64::EPSILON).ln()
}

#[differentiable]
fn destructure(x: &[f64]) -> f64 {
    let [a, b, c] = [x[0], x[1], x[2]];
    a * b - c
}

#[differentiable]
fn weighted(x: &[f64]) -> f64 {
    x.iter()
        .enumerate()
        .map(|(i, v)| v * (i as f64))
        .sum::<f64>()
        + (1..=x.len()).map(|k| x[k - 1] / k as f64).sum::<f64>()
}

#[differentiable]
fn variance(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let total: f64 = x.iter().sum();
    let mean = total / n;
    x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
}

#[differentiable]
fn biggest(x: &[f64]) -> f64 {
    *x.iter().max_by(|a, b| a.total_cmp(b)).unwrap()
}

#[differentiable]
fn matvec(a: &[Vec<f64>], x: &[f64]) -> f64 {
    let y = a
        .iter()
        .map(|row| row.iter().zip(x).map(|(r, v)| r * v).sum())
        .collect::<Vec<f64>>();
    y.iter().map(|v| v * v).sum()
}

#[differentiable]
fn sc(x: &[f64]) -> f64 {
    let (s, c) = x[0].sin_cos();
    s * c + x[1].atan2(x[0]) + x[0].hypot(x[1])
}

#[differentiable]
fn slice_pat(x: &[f64]) -> f64 {
    if let [a, b, rest @ ..] = x {
        a * b + rest.iter().sum::<f64>()
    } else {
        0.0
    }
}

#[differentiable]
fn inclusive_rev(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in (0..=x.len() - 1).rev() {
        s = s * 0.5 + x[i];
    }
    s
}

#[differentiable]
fn match_slice(x: &[f64]) -> f64 {
    let head = match x {
        [] => 0.0,
        [a] => a * 2.0,
        [a, b] => a * b,
        [first, .., last] => first * last,
    };
    let tail = match &x[1..] {
        [u, rest @ ..] => *u * rest.iter().sum::<f64>(),
        _ => 1.0,
    };
    head + tail
}

#[differentiable]
fn ends(x: &[f64]) -> f64 {
    if let [.., p, q] = x {
        p - q
    } else if let [mut only] = x {
        only *= 3.0;
        only
    } else {
        0.0
    }
}

#[differentiable]
fn from_fn_turbofish(x: &[f64]) -> f64 {
    let a = std::array::from_fn::<f64, 4, _>(|k| x[k % 2] * k as f64);
    a.iter().sum()
}

/// A slice pattern over integers (no derivative): left as written.
#[differentiable]
fn counted(x: &[f64]) -> f64 {
    let dims = [2usize, 3];
    let n = match dims {
        [a, b] => a * b,
    };
    let m = match x.len().to_be_bytes() {
        [first, ..] => first as usize,
    };
    // An array of differentiable values written at the scrutinee binds copies.
    let top = match [x[0], 2.0 * x[0]] {
        [a, b] => a.max(b),
    };
    x[0] * (n + m) as f64 + top
}

/// Values pushed onto rows of a `Vec<Vec<f64>>` (ragged rows built in a loop), a slice
/// extended onto a row, and a row read between its pushes.
#[differentiable]
fn ragged(x: &[f64]) -> f64 {
    let mut rows: Vec<Vec<f64>> = vec![Vec::new(); 3];
    for (k, &v) in x.iter().enumerate() {
        rows[k % 3].push(v * v);
    }
    rows[2].extend_from_slice(&x[..2]);
    let mut m: Vec<Vec<f64>> = vec![Vec::new(), Vec::new()];
    m[1].push(x[0]);
    let s = m[1][0] * 3.0;
    m[1].push(s * x[1]);
    let total: f64 = rows
        .iter()
        .map(|r| r.iter().sum::<f64>() * r.len() as f64)
        .sum();
    total + m[1][1] + m[1][0]
}

/// Rows of a `&[Vec<f64>]` zipped with targets and given whole to a helper taking
/// `&[f64]` (a type error at the attribute before: the row was bound by value).
/// A linear model.
#[derive(Clone, Debug, mochi::Tangent)]
pub struct Params {
    /// Weights.
    pub w: Vec<f64>,
    /// Bias.
    pub b: f64,
}

/// A dense layer.
#[derive(Clone, Debug, mochi::Tangent)]
pub struct Layer {
    /// Rows of weights.
    pub w: Vec<Vec<f64>>,
    /// Biases.
    pub b: Vec<f64>,
}

/// Layers and an output scale.
#[derive(Clone, Debug, mochi::Tangent)]
pub struct Net {
    /// The layers, in order.
    pub layers: Vec<Layer>,
    /// The output scale.
    pub scale: f64,
}

#[differentiable]
fn predict(p: &Params, x: &[f64]) -> f64 {
    p.w.iter().zip(x).map(|(w, x)| w * x).sum::<f64>() + p.b
}

#[differentiable]
fn loss(p: &Params, xs: &[Vec<f64>], ys: &[f64]) -> f64 {
    xs.iter()
        .zip(ys)
        .map(|(x, y)| (predict(p, x) - y).powi(2))
        .sum::<f64>()
        / ys.len() as f64
}

#[differentiable]
fn layer_fwd(l: &Layer, x: &[f64]) -> Vec<f64> {
    l.w.iter()
        .zip(&l.b)
        .map(|(row, b)| (row.iter().zip(x).map(|(a, v)| a * v).sum::<f64>() + b).tanh())
        .collect()
}

#[differentiable]
fn net_loss(net: &Net, x: &[f64]) -> f64 {
    let mut h = x.to_vec();
    for l in &net.layers {
        h = layer_fwd(l, &h);
    }
    net.scale * h.iter().map(|v| v * v).sum::<f64>()
}

/// The same loss over a `for` loop of rows and targets.
#[differentiable]
fn loss_loop(p: &Params, xs: &[Vec<f64>], ys: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        s += (predict(p, x) - y).powi(2);
    }
    s / ys.len() as f64
}

/// Rows through a chain's `map`, each given to a helper.
#[differentiable]
fn predict_rows(w: &[f64], xs: &[Vec<f64>]) -> f64 {
    xs.iter()
        .enumerate()
        .map(|(k, x)| dot3(w, x) * (k + 1) as f64)
        .sum()
}

#[differentiable]
fn dot3(a: &[f64], b: &[f64]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[test]
fn rows_given_to_a_helper() {
    let p = Params {
        w: vec![0.3, -0.2],
        b: 0.1,
    };
    let xs = vec![vec![1.0, 2.0], vec![0.5, -1.0]];
    let ys = vec![0.4, -0.3];
    let (dp, _, _) = loss::gradient(&p, &xs, &ys);
    // finite differences on b
    let e = 1e-6;
    let mut q = p.clone();
    q.b += e;
    let up = loss(&q, &xs, &ys);
    q.b -= 2.0 * e;
    let dn = loss(&q, &xs, &ys);
    assert!((dp.b - (up - dn) / (2.0 * e)).abs() < 1e-6, "{dp:?}");
    let net = Net {
        layers: vec![
            Layer {
                w: vec![vec![0.3, -0.2], vec![0.1, 0.5]],
                b: vec![0.0, 0.1],
            },
            Layer {
                w: vec![vec![0.7, 0.2]],
                b: vec![-0.1],
            },
        ],
        scale: 1.5,
    };
    let (dn, dx) = net_loss::gradient(&net, &[0.5, -1.0]);
    let mut n2 = net.clone();
    n2.layers[0].w[1][0] += e;
    let up = net_loss(&n2, &[0.5, -1.0]);
    n2.layers[0].w[1][0] -= 2.0 * e;
    let down = net_loss(&n2, &[0.5, -1.0]);
    assert!(
        (dn.layers[0].w[1][0] - (up - down) / (2.0 * e)).abs() < 1e-6,
        "{dn:?}"
    );
    assert_eq!(dx.len(), 2);
    let (dq, _, _) = loss_loop::gradient(&p, &xs, &ys);
    assert!((dq.b - dp.b).abs() < 1e-14 && (dq.w[1] - dp.w[1]).abs() < 1e-14);
}

#[test]
fn slice_patterns_values() {
    // rows: [x0², x3²], [x1²], [x2², x0, x1]; m[1] = [x0, 3x0·x1].
    let x = [0.5, 1.5, -1.0, 2.0];
    let g = ragged::gradient(&x);
    let want = [
        2.0 * 2.0 * x[0] + 3.0 + 3.0 * x[1] + 1.0,
        2.0 * x[1] + 3.0 + 3.0 * x[0],
        3.0 * 2.0 * x[2],
        2.0 * 2.0 * x[3],
    ];
    for (a, b) in g.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{g:?}");
    }
    let h = ragged::hessian(&x);
    common::assert_hessian_matches("ragged", ragged::gradient, &h, &x, 1e-6);
    assert_eq!(counted::gradient(&[1.5, 2.0]), vec![8.0, 0.0]);
    // [a] → 2a; [a, b] → ab; [first, .., last] → first·last; the tail's head times
    // the sum of the rest.
    assert_eq!(match_slice::gradient(&[0.5]), vec![2.0]);
    assert_eq!(match_slice::gradient(&[0.5, 3.0]), vec![3.0, 0.5 + 0.0]);
    let g = match_slice::gradient(&[0.7, 1.0, 0.3, 0.2]);
    let want = [0.2, 0.3 + 0.2, 1.0, 0.7 + 1.0];
    for (a, b) in g.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{g:?}");
    }
    assert_eq!(ends::gradient(&[2.0]), vec![3.0]);
    assert_eq!(ends::gradient(&[2.0, 5.0, 7.0]), vec![0.0, 1.0, -1.0]);
    // a = [2x₀, 2x₁, 2x₂]: a₀a₁ + a₂.
    assert_eq!(
        from_fn_arr::gradient(&[0.7, 1.0, -2.0]),
        vec![4.0, 2.8, 2.0]
    );
    let x = [0.7, 1.0, 0.3, 0.2];
    let h = match_slice::hessian(&x);
    common::assert_hessian_matches("match_slice", match_slice::gradient, &h, &x, 1e-6);
}

mod checks {
    check!(
        predict_rows,
        (
            vec![0.3, -0.2, 0.9],
            vec![vec![1.0, 2.0, 0.5], vec![0.5, -1.0, 2.0]]
        ),
        |a| (&a.0, &a.1)
    );
    check!(ragged, (vec![0.5, 1.5, -1.0, 2.0],), |a| (&a.0));
    check!(counted, (vec![0.7, 1.0],), |a| (&a.0));
    check!(match_slice, (vec![0.7, 1.0, 0.3, 0.2],), |a| (&a.0));
    check!(ends, (vec![0.7, 1.0, 0.3, 0.2],), |a| (&a.0));
    check!(from_fn_turbofish, (vec![0.7, 1.0],), |a| (&a.0));
    use crate::check;
    check!(horner, (vec![0.7, 1.0, -2.0, 0.5],), |a| (&a.0));
    check!(lse, (vec![0.7, 1.0, -2.0, 0.5],), |a| (&a.0));
    check!(softmax_ce, (vec![0.7, 1.0, -2.0, 0.5],), |a| (&a.0));
    check!(cumprod_last, (vec![0.7, 1.0, -2.0, 0.5],), |a| (&a.0));
    check!(rough, (vec![0.7, 1.0, -2.0, 0.5],), |a| (&a.0));
    check!(pos_dot, (vec![0.7, -1.0, 2.0], vec![0.3, 0.2, 0.1]), |a| (
        &a.0, &a.1
    ));
    check!(triples, (vec![0.7, 1.0, -2.0, 0.5, 0.1, 0.2],), |a| (&a.0));
    check!(from_fn_arr, (vec![0.7, 1.0, -2.0],), |a| (&a.0));
    check!(clampy, (vec![0.7, 1.0, -2.0],), |a| (&a.0));
    check!(destructure, (vec![0.7, 1.0, -2.0],), |a| (&a.0));
    check!(weighted, (vec![0.7, 1.0, -2.0],), |a| (&a.0));
    check!(variance, (vec![0.7, 1.0, -2.0],), |a| (&a.0));
    check!(biggest, (vec![0.7, 1.0, -2.0],), |a| (&a.0));
    check!(
        matvec,
        (vec![vec![0.7, 1.0], vec![-2.0, 0.4]], vec![0.3, 0.9]),
        |a| (&a.0, &a.1)
    );
    check!(sc, (vec![0.7, 1.0],), |a| (&a.0));
    check!(slice_pat, (vec![0.7, 1.0, 0.3, 0.2],), |a| (&a.0));
    check!(inclusive_rev, (vec![0.7, 1.0, 0.3, 0.2],), |a| (&a.0));
}
