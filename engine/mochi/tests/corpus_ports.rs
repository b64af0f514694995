//! Functions as they are written in other projects' AD test suites and in everyday
//! numeric Rust (softmax cross-entropy, Horner, variance, rows of a matrix, `reduce`,
//! `windows`, `max_by`), each checked by `test_rule`.

#![allow(
    clippy::needless_range_loop,
    clippy::ptr_arg,
    clippy::manual_memcpy,
    clippy::assign_op_pattern,
    clippy::manual_clamp,
    clippy::single_match
)]

mod common;
use mochi::prelude::*;
use ndarray::{s, Array1, Array2, Axis};

#[differentiable]
fn softmax_xent(logits: &[f64], label: usize) -> f64 {
    let m = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = logits.iter().map(|&z| (z - m).exp()).collect();
    let s: f64 = exps.iter().sum();
    -(exps[label] / s).ln()
}

#[differentiable]
fn horner(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ci| acc * x + ci)
}

#[differentiable]
fn variance(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
}

#[differentiable]
fn matvec_rows(m: &[Vec<f64>], v: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, row) in m.iter().enumerate() {
        let mut r = 0.0;
        for j in 0..row.len() {
            r += row[j] * v[j];
        }
        s += r * r * (i as f64 + 1.0);
    }
    s
}

#[differentiable]
fn nested_index(m: &[Vec<f64>]) -> f64 {
    m[0][1] * m[1][0] + m[1][1]
}

#[differentiable]
fn reduce_max(x: &[f64]) -> f64 {
    x.iter().copied().reduce(f64::max).unwrap() * 2.0
}

#[differentiable]
fn windows_chain(x: &[f64]) -> f64 {
    x.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum()
}

#[differentiable]
fn norm2(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

#[differentiable]
fn clamp_abs(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &v in x {
        s += v.abs().min(1.0).max(0.1) + v.clamp(-0.5, 0.5);
    }
    s
}

#[differentiable]
fn hypot_atan(x: f64, y: f64) -> f64 {
    x.hypot(y) + y.atan2(x) + x.powf(y.abs() + 1.0)
}

#[differentiable]
fn dot_zip(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[differentiable]
fn early_exit(x: &[f64], tol: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        if s > tol {
            return s;
        }
        s += x[i].exp();
    }
    s
}

#[differentiable]
fn tuple_state(x: f64) -> f64 {
    let (mut a, mut b) = (x, 1.0);
    for _ in 0..3 {
        let t = a * b;
        a = b;
        b = t + x;
    }
    a + b
}

#[differentiable]
fn max_by(x: &[f64]) -> f64 {
    *x.iter().max_by(|a, b| a.partial_cmp(b).unwrap()).unwrap()
}

#[differentiable]
fn relu_sum(x: &[f64]) -> f64 {
    x.iter().map(|&v| v.max(0.0)).sum::<f64>()
}

#[differentiable]
fn zip_collect(x: &[f64], w: &[f64]) -> f64 {
    let v: Vec<f64> = x.iter().zip(w).map(|(a, b)| a * b).collect();
    v[0] + v[1] * v[2]
}

#[differentiable]
fn match_mod(x: f64, i: usize) -> f64 {
    match i % 3 {
        0 => x * 2.0,
        1 => x.sin(),
        _ => x,
    }
}

#[differentiable]
fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

#[differentiable]
fn to_vec_chain(x: &[f64]) -> f64 {
    let y = x.to_vec();
    y.iter().map(|v| v.tanh()).sum::<f64>()
}

#[differentiable]
fn nd_dot(a: &Array2<f64>, w: &Array1<f64>) -> f64 {
    let y = a.dot(w);
    let z = a.t().dot(&y);
    z.sum() + y.dot(&y)
}

#[differentiable]
fn fixed_array(x: f64) -> f64 {
    let mut v = [0.0; 3];
    v[0] = x;
    v[1] = x * x;
    v[2] = v[0] + v[1];
    v[2] * v[0]
}

#[differentiable]
fn consts(x: f64) -> f64 {
    std::f64::consts::PI * x
        + std::f64::consts::E.ln() * x.exp().ln_1p()
        + x.signum() * x.abs().sqrt()
}

#[differentiable]
fn move_closure(x: &[f64], a: f64) -> f64 {
    x.iter().map(move |v| v * a).sum::<f64>()
}

#[differentiable]
fn println_ok(x: f64) -> f64 {
    let y = x * 2.0;
    if y > 100.0 {
        println!("big {}", y);
    }
    y
}

#[differentiable]
fn return_in_match(x: f64, k: u8) -> f64 {
    match k {
        0 => return x,
        _ => {}
    }
    x * x
}

#[differentiable]
fn sort_free(x: &[f64]) -> f64 {
    let mut best = x[0];
    for &v in x {
        if v > best {
            best = v;
        }
    }
    best * 2.0
}

#[differentiable]
fn array_mapv_sum(x: &Array1<f64>) -> f64 {
    (x * 2.0 + 1.0).mapv(f64::ln).sum() / x.len() as f64
}

#[differentiable]
fn rows_axis(a: &Array2<f64>) -> f64 {
    a.sum_axis(ndarray::Axis(0)).mapv(|v| v * v).sum() + a.row(0).sum()
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Params {
    w1: Array2<f64>,
    b1: Array1<f64>,
    w2: Array1<f64>,
    b2: f64,
}

#[differentiable]
fn mlp(p: &Params, x: &Array2<f64>, y: &Array1<f64>) -> f64 {
    let h = (x.dot(&p.w1) + &p.b1).mapv(f64::tanh);
    let out = h.dot(&p.w2) + p.b2;
    let e = &out - y;
    e.mapv(|v| v * v).mean().unwrap()
}

#[differentiable]
fn slice_ops(x: &Array1<f64>) -> f64 {
    let a = x.slice(s![1..]);
    let b = x.slice(s![..-1]);
    (&a * &b).sum()
}

#[differentiable]
fn outer_norm(x: &Array1<f64>, y: &Array1<f64>) -> f64 {
    let m = ndarray::linalg::kron(
        &x.clone().insert_axis(Axis(1)),
        &y.clone().insert_axis(Axis(0)),
    );
    m.mapv(|v| v.powi(2)).sum().sqrt()
}

#[differentiable]
fn zip_map_collect(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    ndarray::Zip::from(a)
        .and(b)
        .map_collect(|&x, &y| x * y.sin())
        .sum()
}

#[differentiable]
fn iter_arr(a: &Array1<f64>) -> f64 {
    a.iter().map(|v| v.exp()).sum::<f64>()
        + a.iter()
            .zip(a.iter().skip(1))
            .map(|(x, y)| x * y)
            .sum::<f64>()
}

#[differentiable]
fn struct_vec_update(p: &Params, lr: f64) -> f64 {
    let mut q = p.clone();
    q.b2 -= lr * q.b2;
    q.w2 = &q.w2 * 0.5;
    q.b2 + q.w2.sum()
}

#[differentiable]
fn normalize_into(out: &mut [f64], x: &[f64]) {
    let n = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    for (o, v) in out.iter_mut().zip(x.iter()) {
        *o = v / n;
    }
}

/// A `&mut` buffer filled by a helper, then a `windows` chain collected and folded.
#[differentiable]
fn smooth(x: &[f64], k: f64) -> f64 {
    let mut buf = vec![0.0; x.len()];
    normalize_into(&mut buf, x);
    let diffs: Vec<f64> = buf.windows(2).map(|w| w[1] - w[0]).collect();
    let peak = diffs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    diffs.iter().map(|d| (k * d).tanh()).sum::<f64>() + peak
}

/// Pairs of rows: `for q in &pts[i + 1..]` over a sub-slice of rows.
#[differentiable]
fn pairwise(pts: &[Vec<f64>]) -> f64 {
    let mut e = 0.0;
    for (i, p) in pts.iter().enumerate() {
        for q in &pts[i + 1..] {
            let d2: f64 = p.iter().zip(q.iter()).map(|(a, b)| (a - b).powi(2)).sum();
            e += 1.0 / (1.0 + d2);
        }
    }
    e
}

mod checked {
    use crate::check;

    fn x4() -> Vec<f64> {
        vec![0.5, -1.2, 0.3, 0.9]
    }
    fn rows() -> Vec<Vec<f64>> {
        vec![vec![1.0, 2.0, -0.5], vec![-0.5, 0.7, 0.1]]
    }

    check!(softmax_xent, (x4(), 2_usize), |a| (&a.0, a.1));
    check!(horner, (x4(), 0.7_f64), |a| (&a.0, a.1));
    check!(variance, (x4(),), |a| (&a.0));
    check!(matvec_rows, (rows(), vec![0.3_f64, -0.4, 0.8]), |a| (
        &a.0, &a.1
    ));
    check!(nested_index, (rows(),), |a| (&a.0));
    check!(reduce_max, (x4(),), |a| (&a.0));
    check!(windows_chain, (x4(),), |a| (&a.0));
    check!(norm2, (x4(),), |a| (&a.0));
    check!(clamp_abs, (vec![0.4_f64, -1.2, 0.3, 0.8],), |a| (&a.0));
    check!(hypot_atan, (0.7_f64, -0.4_f64), |a| (a.0, a.1));
    check!(dot_zip, (x4(), vec![0.2_f64, 0.1, -0.6, 1.1]), |a| (
        &a.0, &a.1
    ));
    check!(early_exit, (x4(), 2.0_f64), |a| (&a.0, a.1));
    check!(tuple_state, (0.7_f64,), |a| (a.0));
    check!(max_by, (x4(),), |a| (&a.0));
    check!(relu_sum, (x4(),), |a| (&a.0));
    check!(smooth, (vec![0.3_f64, -1.1, 0.8, 0.2], 1.7_f64), |a| (
        &a.0, a.1
    ));
    check!(
        pairwise,
        (vec![vec![0.1_f64, 0.2], vec![0.5, -0.3], vec![-0.4, 0.9]],),
        |a| (&a.0)
    );
    check!(zip_collect, (x4(), vec![0.2_f64, 0.1, -0.6, 1.1]), |a| (
        &a.0, &a.1
    ));
    check!(match_mod, (0.7_f64, 4_usize), |a| (a.0, a.1));
    check!(mean, (x4(),), |a| (&a.0));
    check!(to_vec_chain, (x4(),), |a| (&a.0));
    check!(
        nd_dot,
        (
            ndarray::array![[0.5_f64, -1.0], [0.3, 2.0], [1.1, 0.4]],
            ndarray::array![0.7_f64, -0.2]
        ),
        |a| (&a.0, &a.1)
    );
    check!(fixed_array, (0.7_f64,), |a| (a.0));
    check!(consts, (0.7_f64,), |a| (a.0));
    check!(move_closure, (x4(), 1.3_f64), |a| (&a.0, a.1));
    check!(println_ok, (0.7_f64,), |a| (a.0));
    check!(return_in_match, (0.7_f64, 1_u8), |a| (a.0, a.1));
    check!(sort_free, (x4(),), |a| (&a.0));
    check!(array_mapv_sum, (ndarray::array![0.5_f64, 1.2, 0.3],), |a| {
        (&a.0)
    });
    fn params() -> super::Params {
        super::Params {
            w1: ndarray::array![[0.5_f64, -0.3], [0.2, 0.8], [-0.6, 0.1]],
            b1: ndarray::array![0.1_f64, -0.2],
            w2: ndarray::array![0.7_f64, -0.4],
            b2: 0.05,
        }
    }
    check!(
        mlp,
        (
            params(),
            ndarray::array![[0.5_f64, -1.0, 0.2], [0.3, 2.0, -0.7]],
            ndarray::array![0.4_f64, -0.1]
        ),
        |a| (&a.0, &a.1, &a.2)
    );
    check!(
        slice_ops,
        (ndarray::array![0.5_f64, -1.2, 0.3, 0.9],),
        |a| (&a.0)
    );
    check!(
        outer_norm,
        (
            ndarray::array![0.5_f64, -1.2],
            ndarray::array![0.3_f64, 0.9, -0.4]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        zip_map_collect,
        (
            ndarray::array![0.5_f64, -1.2, 0.3],
            ndarray::array![0.3_f64, 0.9, -0.4]
        ),
        |a| (&a.0, &a.1)
    );
    check!(iter_arr, (ndarray::array![0.5_f64, -1.2, 0.3],), |a| (&a.0));
    check!(struct_vec_update, (params(), 0.1_f64), |a| (&a.0, a.1));
    check!(
        rows_axis,
        (ndarray::array![[0.5_f64, -1.0], [0.3, 2.0]],),
        |a| (&a.0)
    );
}
