//! ndarray code under `#[differentiable]`: reductions, products, elementwise maths,
//! closures in `mapv`, views, linear algebra.

#![allow(clippy::needless_range_loop, clippy::assign_op_pattern)]

mod common;
use mochi::prelude::*;
use ndarray::{array, Array1, Array2};

#[differentiable]
fn array_sum(x: &Array1<f64>) -> f64 {
    x.sum()
}

#[differentiable]
fn quadratic_form(a: &Array2<f64>, x: &Array1<f64>) -> f64 {
    let ax = a.dot(x);
    x.dot(&ax)
}

#[differentiable]
fn elementwise(x: &Array1<f64>, y: &Array1<f64>) -> f64 {
    let z = x * y + x - y / 2.0;
    (z.clone() * z).sum()
}

#[differentiable]
fn map_sin_cos_exp(x: &Array2<f64>) -> f64 {
    x.mapv(|v| v.exp().cos().sin()).sum()
}

#[differentiable]
fn mapv_capturing(x: &Array1<f64>, a: f64) -> f64 {
    x.mapv(|v| (v * a).tanh()).sum()
}

#[differentiable]
fn index_loop(m: &Array2<f64>) -> f64 {
    let mut s = 0.0;
    for i in 0..m.nrows() {
        for j in 0..m.ncols() {
            s += m[[i, j]] * m[[j, i]];
        }
    }
    s
}

#[differentiable]
fn transpose_matmul(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let c = a.t().dot(b);
    c.sum()
}

#[differentiable]
fn kron_sum(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    ndarray::linalg::kron(a, b).sum()
}

#[differentiable]
fn cholesky_logdet(k: &Array2<f64>) -> f64 {
    let l = mochi::linalg::cholesky(k).expect("positive definite");
    mochi::linalg::logdet_cholesky(&l)
}

mod checks {
    use super::*;
    use crate::check;
    check!(array_sum, (array![1.0_f64, -2.0, 0.5],), |a| (&a.0));
    check!(
        quadratic_form,
        (array![[2.0_f64, 0.3], [0.1, 1.0]], array![0.5_f64, -1.2]),
        |a| (&a.0, &a.1)
    );
    check!(
        elementwise,
        (array![1.0_f64, -2.0, 0.5], array![0.3_f64, 0.7, -1.1]),
        |a| (&a.0, &a.1)
    );
    check!(
        map_sin_cos_exp,
        (array![[0.1_f64, -0.3], [0.5, 0.2]],),
        |a| (&a.0)
    );
    check!(mapv_capturing, (array![1.0_f64, -2.0, 0.5], 0.7_f64), |a| (
        &a.0, a.1
    ));
    check!(index_loop, (array![[0.1_f64, -0.3], [0.5, 0.2]],), |a| (&a
        .0));
    check!(
        transpose_matmul,
        (
            array![[0.1_f64, -0.3, 0.4], [0.5, 0.2, 0.9]],
            array![[1.0_f64], [2.0]]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        kron_sum,
        (
            array![[0.1_f64, -0.3], [0.5, 0.2]],
            array![[1.0_f64, 2.0, 0.5]]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        cholesky_logdet,
        (array![
            [2.0_f64, 0.3, 0.1],
            [0.3, 1.5, 0.2],
            [0.1, 0.2, 1.0]
        ],),
        |a| (&a.0)
    );
}
