//! Jacobians of functions with vector results (a `Vec`, an array, a tuple, an `Array1`),
//! `jvp` against the Jacobian, and Hessians of functions of several arguments (ndarray
//! matrices and vectors, a view, a generic helper, a helper returning a `Vec` called
//! twice, scalar and integer arguments between slices), each against central
//! differences of what it differentiates.

#![allow(clippy::needless_range_loop)]

use mochi::prelude::*;
use ndarray::{array, Array1, Array2, ArrayView1};

mod common;
use common::fdjac;

/// Asserts that `j` is `want` entry by entry.
fn cmpj(name: &str, j: &Array2<f64>, want: &[Vec<f64>]) {
    let mut bad = vec![];
    for r in 0..want.len() {
        for c in 0..want[0].len() {
            if (j[[r, c]] - want[r][c]).abs() > 1e-5 * (1.0 + want[r][c].abs()) {
                bad.push(format!("J[{r},{c}]={} fd={}", j[[r, c]], want[r][c]));
            }
        }
    }
    if j.dim() != (want.len(), want[0].len()) {
        bad.push(format!("dim {:?}", j.dim()));
    }
    assert!(bad.is_empty(), "{name}: {:?}", &bad[..bad.len().min(4)]);
}

// Vector outputs
#[differentiable]
fn polar(p: &[f64]) -> Vec<f64> {
    vec![p[0] * p[1].cos(), p[0] * p[1].sin(), p[2]]
}
#[differentiable]
fn softmax(x: &[f64]) -> Vec<f64> {
    let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}
#[differentiable]
fn arr_out(x: &[f64]) -> [f64; 2] {
    [x[0] * x[1], x[1].exp() - x[0]]
}
#[differentiable]
fn tup_out(x: &[f64]) -> (f64, f64) {
    (x[0].sin() * x[1], x[0] + x[1] * x[1])
}
#[differentiable]
fn nd_out(x: &Array1<f64>) -> Array1<f64> {
    x.mapv(|v| v.tanh()) * x[0]
}
#[differentiable]
fn lorenz(s: &[f64]) -> Vec<f64> {
    let (x, y, z) = (s[0], s[1], s[2]);
    vec![10.0 * (y - x), x * (28.0 - z) - y, x * y - 8.0 / 3.0 * z]
}
#[differentiable]
fn cumsum(x: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    let mut acc = 0.0;
    for v in x {
        acc += v;
        out.push(acc * acc);
    }
    out
}
// ndarray scalar functions at all orders
#[differentiable]
fn nd_quad(a: &Array2<f64>, x: &Array1<f64>) -> f64 {
    let y = a.dot(x);
    y.dot(&y) + x.mapv(f64::exp).sum().ln()
}
#[differentiable]
fn nd_view(x: ArrayView1<f64>) -> f64 {
    x.iter().map(|v| v.powi(3)).sum::<f64>() + x[0] * x[x.len() - 1]
}
// f32
#[differentiable]
fn f32fn(x: &[f32]) -> f32 {
    x.iter().map(|v| v.sin() * v).sum::<f32>() + x[0].powf(2.5f32.min(x[1].abs() + 1.0))
}
// generic helper used from f64 fn
#[differentiable]
fn gh<T: mochi::Real>(a: T, b: T) -> T {
    (a * a + b).sqrt()
}
#[differentiable]
fn uses_generic(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        s += gh(x[i], x[i + 1] * x[i + 1]);
    }
    s
}
// helper returning Vec used in loop, all orders
#[differentiable]
fn affine(w: &[f64], x: &[f64]) -> Vec<f64> {
    let n = x.len();
    (0..n).map(|i| w[i] * x[i] + w[n + i]).collect()
}
#[differentiable]
fn net(w: &[f64], x: &[f64]) -> f64 {
    let h = affine(w, x);
    let h2: Vec<f64> = h.iter().map(|v| v.tanh()).collect();
    let o = affine(w, &h2);
    o.iter().map(|v| v * v).sum()
}
// multi-arg hessian with scalar & integer args
#[differentiable]
fn multi(w: &[f64], b: f64, k: usize, x: &[f64]) -> f64 {
    let mut s = b * b;
    for i in 0..k {
        s += (w[i] * x[i] + b).sin();
    }
    s
}

#[test]
fn jacobians_jvps_and_hessians_match_central_differences() {
    let p = vec![1.3, 0.4, -0.7];
    let (_, j) = polar::jacobian(&p);
    cmpj("polar", &j, &fdjac(&|x| polar(x), &p));
    let (_, j) = softmax::jacobian(&p);
    cmpj("softmax", &j, &fdjac(&|x| softmax(x), &p));
    let (_, j) = arr_out::jacobian(&p[..2]);
    cmpj("arr_out", &j, &fdjac(&|x| arr_out(x).to_vec(), &p[..2]));
    let (_, j) = tup_out::jacobian(&p[..2]);
    cmpj(
        "tup_out",
        &j,
        &fdjac(
            &|x| {
                let (a, b) = tup_out(x);
                vec![a, b]
            },
            &p[..2],
        ),
    );
    let pa = Array1::from(p.clone());
    let (_, j) = nd_out::jacobian(&pa);
    cmpj(
        "nd_out",
        &j,
        &fdjac(&|x| nd_out(&Array1::from(x.to_vec())).to_vec(), &p),
    );
    let (_, j) = lorenz::jacobian(&p);
    cmpj("lorenz", &j, &fdjac(&|x| lorenz(x), &p));
    let (_, j) = cumsum::jacobian(&p);
    cmpj("cumsum", &j, &fdjac(&|x| cumsum(x), &p));
    // jvp of vector output vs J v
    let v = vec![0.3, -0.2, 0.9];
    let (_, jv) = softmax::jvp(&p, &v);
    let (_, j) = softmax::jacobian(&p);
    let want: Vec<f64> = (0..3)
        .map(|r| (0..3).map(|c| j[[r, c]] * v[c]).sum())
        .collect();
    assert!(
        jv.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-10),
        "softmax jvp {jv:?} against J·v {want:?}"
    );

    // nd_quad hessian over (a, x)
    let a = array![[1.0, 0.5], [-0.3, 2.0]];
    let x = array![0.4, -0.8];
    let h = nd_quad::hessian(&a, &x);
    let flat = |z: &[f64]| -> Vec<f64> {
        let a2 = Array2::from_shape_vec((2, 2), z[..4].to_vec()).unwrap();
        let x2 = Array1::from(z[4..].to_vec());
        let (ga, gx) = nd_quad::gradient(&a2, &x2);
        ga.iter().chain(gx.iter()).cloned().collect()
    };
    let z: Vec<f64> = a.iter().chain(x.iter()).cloned().collect();
    cmpj("nd_quad hessian", &h, &fdjac(&flat, &z));

    let xv = array![0.5, -1.2, 0.8];
    let h = nd_view::hessian(xv.view());
    cmpj(
        "nd_view hessian",
        &h,
        &fdjac(
            &|z| nd_view::gradient(ArrayView1::from(z)).to_vec(),
            &[0.5, -1.2, 0.8],
        ),
    );

    let xf = vec![0.5f32, -1.2, 0.8];
    let g = f32fn::gradient(&xf);
    let h = 1e-2f32;
    let fd: Vec<f32> = (0..3)
        .map(|i| {
            let (mut u, mut d) = (xf.clone(), xf.clone());
            u[i] += h;
            d[i] -= h;
            (f32fn(&u) - f32fn(&d)) / (2.0 * h)
        })
        .collect();
    assert!(
        g.iter().zip(&fd).all(|(a, b)| (a - b).abs() < 1e-2),
        "f32 gradient {g:?} against {fd:?}"
    );
    let hf = f32fn::hessian(&xf);
    for c in 0..3 {
        let (mut u, mut d) = (xf.clone(), xf.clone());
        u[c] += h;
        d[c] -= h;
        let (gu, gd) = (f32fn::gradient(&u), f32fn::gradient(&d));
        for r in 0..3 {
            let want = (gu[r] - gd[r]) / (2.0 * h);
            assert!(
                (hf[[r, c]] - want).abs() < 2e-2 * (1.0 + want.abs()),
                "f32 H[{r},{c}] = {} against {want}",
                hf[[r, c]]
            );
        }
    }

    let xs = vec![0.5, -1.2, 0.8, 0.3];
    let hm = uses_generic::hessian(&xs);
    cmpj(
        "uses_generic hessian",
        &hm,
        &fdjac(&|z| uses_generic::gradient(z), &xs),
    );

    let w = vec![0.5, -1.2, 0.8, 0.3, 0.1, -0.4];
    let xx = vec![0.2, 0.7, -0.5];
    let hm = net::hessian(&w, &xx);
    let flat = |z: &[f64]| {
        let (gw, gx) = net::gradient(&z[..6], &z[6..]);
        gw.into_iter().chain(gx).collect::<Vec<f64>>()
    };
    let z: Vec<f64> = w.iter().chain(&xx).cloned().collect();
    cmpj("net hessian", &hm, &fdjac(&flat, &z));

    let hm = multi::hessian(&w[..3], 0.3, 2, &xx);
    let flat = |z: &[f64]| {
        let (gw, gb, _, gx) = multi::gradient(&z[..3], z[3], 2, &z[4..]);
        gw.into_iter().chain([gb]).chain(gx).collect::<Vec<f64>>()
    };
    let z: Vec<f64> = w[..3].iter().chain(&[0.3]).chain(&xx).cloned().collect();
    cmpj("multi hessian", &hm, &fdjac(&flat, &z));
}

/// A kernel matrix built by `Array2::from_shape_fn` from the argument.
#[differentiable]
fn kernel_sum(x: &Array1<f64>) -> f64 {
    let n = x.len();
    let k = Array2::from_shape_fn((n, n), |(i, j)| (-(x[i] - x[j]).powi(2)).exp());
    k.sum() + k[[0, 1]] * x[2]
}

#[test]
fn an_array_built_by_from_shape_fn_has_its_hessian() {
    let x = [0.4, 1.3, -0.7, 0.2];
    let h = kernel_sum::hessian(&Array1::from(x.to_vec()));
    let grad = |z: &[f64]| kernel_sum::gradient(&Array1::from(z.to_vec())).to_vec();
    cmpj("kernel_sum hessian", &h, &fdjac(&grad, &x));
}
