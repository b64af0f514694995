//! ndarray by axes, written the way ndarray users write it: `map_axis`, `fold_axis`,
//! `axis_iter`, `outer_iter`, `rows()`, `sum_axis`, `mean`, `dot` of row views, each
//! checked by `test_rule`.

#![allow(clippy::needless_range_loop)]

mod common;
use mochi::prelude::*;
use ndarray::{Array1, Array2, Axis};

#[differentiable]
fn map_axis_sum(a: &Array2<f64>) -> f64 {
    let r = a.map_axis(Axis(1), |row| row.sum());
    r.mapv(|v| v * v).sum()
}

#[differentiable]
fn fold_axis_sum(a: &Array2<f64>) -> f64 {
    let c = a.fold_axis(Axis(0), 0.0, |acc, v| acc + v * v);
    c.sum()
}

#[differentiable]
fn axis_iter_loop(a: &Array2<f64>, w: &Array1<f64>) -> f64 {
    let mut s = 0.0;
    for row in a.axis_iter(Axis(0)) {
        s += row.dot(w).tanh();
    }
    s
}

#[differentiable]
fn outer_iter_loop(a: &Array2<f64>) -> f64 {
    let mut s = 0.0;
    for row in a.outer_iter() {
        s += row.sum().powi(2);
    }
    s
}

#[differentiable]
fn rows_chain(a: &Array2<f64>, w: &Array1<f64>) -> f64 {
    a.rows().into_iter().map(|r| r.dot(w).exp()).sum()
}

#[differentiable]
fn sum_axis_then(a: &Array2<f64>) -> f64 {
    let c = a.sum_axis(Axis(0));
    (&c * &c).sum()
}

#[differentiable]
fn array_mean(a: &Array2<f64>) -> f64 {
    a.mean().unwrap() * a[[0, 1]]
}

#[differentiable]
fn dot_of_rows(a: &Array2<f64>) -> f64 {
    a.row(0).dot(&a.row(1)) + a.row(1).dot(&a.row(2))
}

/// Columns of a matrix by `map_axis(Axis(0), …)`, a captured weight vector.
#[differentiable]
fn map_axis_columns(a: &Array2<f64>, w: &Array1<f64>) -> f64 {
    let c = a.map_axis(Axis(0), |col| col.dot(w).sin());
    c.sum() * c[0]
}

/// `fold_axis` along rows with a maximum-like smooth reduction.
#[differentiable]
fn fold_axis_rows(a: &Array2<f64>) -> f64 {
    let m = a.fold_axis(Axis(1), 1.0, |acc, &v| acc * (1.0 + v * v));
    m.mapv(|t| t.ln()).sum()
}

/// Enumerated rows, a least-squares loss over a data matrix.
#[differentiable]
fn rows_enumerate_loss(x: &Array2<f64>, w: &Array1<f64>, y: &[f64]) -> f64 {
    let mut loss = 0.0;
    for (i, row) in x.outer_iter().enumerate() {
        let e = row.dot(w) - y[i];
        loss += e * e;
    }
    loss
}

/// Rows zipped with targets in a chain.
#[differentiable]
fn rows_zip_chain(x: &Array2<f64>, w: &Array1<f64>, y: &[f64]) -> f64 {
    x.rows()
        .into_iter()
        .zip(y.iter())
        .map(|(r, t)| (r.dot(w) - t).powi(2))
        .sum()
}

/// Columns as a chain.
#[differentiable]
fn columns_chain(x: &Array2<f64>) -> f64 {
    x.columns().into_iter().map(|c| c.sum().exp()).sum()
}

/// `axis_iter(Axis(1))` of a matrix and `axis_iter(Axis(2))` of a three-dimensional
/// array.
#[differentiable]
fn axis_iter_any_axis(a: &Array2<f64>, t: &ndarray::Array3<f64>) -> f64 {
    let mut s = 0.0;
    for col in a.axis_iter(Axis(1)) {
        s += col[0] * col[2];
    }
    for slab in t.axis_iter(Axis(2)) {
        s += slab.sum().tanh();
    }
    s
}

/// `map_axis` and `fold_axis` with the axis in a variable and a parameter, on a
/// matrix that is not square (rows and columns cannot be confused).
#[differentiable]
fn axes_in_variables(a: &Array2<f64>, k: usize) -> f64 {
    let rows = Axis(1);
    let per_row = a.map_axis(rows, |r| r.dot(&r).sqrt());
    let per_k = a.fold_axis(Axis(k), 1.0, |acc, v| acc * (1.0 + v * v));
    per_row.sum() * per_k.mapv(f64::ln).sum()
}

mod checked_axes {
    use crate::check;
    use ndarray::array;

    fn m() -> ndarray::Array2<f64> {
        array![[0.5, -1.2, 0.3], [0.9, -0.4, 1.1], [0.2, 0.7, -0.6]]
    }

    check!(map_axis_sum, (m(),), |a| (&a.0));
    check!(fold_axis_sum, (m(),), |a| (&a.0));
    check!(axis_iter_loop, (m(), array![0.3_f64, -0.5, 0.8]), |a| (
        &a.0, &a.1
    ));
    check!(outer_iter_loop, (m(),), |a| (&a.0));
    check!(rows_chain, (m(), array![0.3_f64, -0.5, 0.8]), |a| (
        &a.0, &a.1
    ));
    check!(sum_axis_then, (m(),), |a| (&a.0));
    check!(array_mean, (m(),), |a| (&a.0));
    check!(dot_of_rows, (m(),), |a| (&a.0));
    check!(map_axis_columns, (m(), array![0.3_f64, -0.5, 0.8]), |a| (
        &a.0, &a.1
    ));
    check!(fold_axis_rows, (m(),), |a| (&a.0));
    check!(
        rows_enumerate_loss,
        (m(), array![0.3_f64, -0.5, 0.8], vec![0.1_f64, -0.2, 0.4]),
        |a| (&a.0, &a.1, &a.2)
    );
    check!(
        rows_zip_chain,
        (m(), array![0.3_f64, -0.5, 0.8], vec![0.1_f64, -0.2, 0.4]),
        |a| (&a.0, &a.1, &a.2)
    );
    check!(columns_chain, (m(),), |a| (&a.0));
    fn wide() -> ndarray::Array2<f64> {
        array![[0.5, -1.2, 0.3, 0.8], [0.9, -0.4, 1.1, -0.7]]
    }
    #[test]
    fn axes_in_variables_both_ways() {
        for k in [0_usize, 1] {
            mochi::testing::test_rule(
                (wide(), k),
                |a| super::axes_in_variables(&a.0, a.1),
                |a| super::axes_in_variables::rrule(&a.0, a.1),
            );
        }
    }
    check!(
        axis_iter_any_axis,
        (
            m(),
            ndarray::Array3::from_shape_fn((2, 2, 3), |(i, j, k)| {
                0.1 * (i as f64) - 0.2 * (j as f64) + 0.15 * (k as f64)
            })
        ),
        |a| (&a.0, &a.1)
    );
}
