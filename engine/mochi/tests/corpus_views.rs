//! Writes through mutable views of an array: `b.row_mut(i).assign(&v)`,
//! `b.slice_mut(s![..]).fill(c)`, `mapv_inplace` on a view, and a view kept in a local
//! (`let mut r = b.row_mut(i); r += x; r[k] = e;`). The lowering writes in place and the
//! reverse sweep takes the view's part of the cotangent out. Checked by `test_rule`
//! (finite differences, the adjoint identity), by exact values, and one Hessian against
//! differences of the gradient.

mod common;
use mochi::prelude::*;
use ndarray::{array, s, Array1, Array2, Axis, Slice};

#[differentiable]
fn rows_assigned(x: &Array1<f64>) -> f64 {
    let mut b = Array2::<f64>::zeros((3, x.len()));
    for i in 0..3 {
        let r = x.mapv(|v| v * (i as f64 + 1.0));
        b.row_mut(i).assign(&r);
    }
    b.mapv(|v| v.sin()).sum()
}

#[differentiable]
fn slices_written(x: &Array1<f64>) -> f64 {
    let mut b = Array1::<f64>::zeros(5);
    b.slice_mut(s![1..3]).assign(x);
    b.slice_mut(s![3..]).fill(x[0] * x[1]);
    b.slice_mut(s![..;2]).mapv_inplace(|v| v * v + 1.0);
    let mut t = b.slice_mut(s![-2..]);
    t += x;
    let mut h = b.slice_mut(s![..2]);
    h *= 3.0;
    b.iter()
        .enumerate()
        .map(|(k, v)| v * (k as f64 + 0.5))
        .sum::<f64>()
}

#[differentiable]
fn matrix_views(a: &Array2<f64>, x: &Array1<f64>) -> f64 {
    let mut m = a.to_owned();
    m.column_mut(1).assign(x);
    let mut r0 = m.row_mut(0);
    r0 -= x;
    r0[1] *= 2.0;
    let s0 = r0.sum();
    r0[2] = s0 * x[1];
    let mut d = m.clone();
    d.diag_mut().fill(x[2]);
    d.index_axis_mut(Axis(0), 2).mapv_inplace(f64::exp);
    d.slice_axis_mut(Axis(1), Slice::from(1..))
        .mapv_inplace(|v| v * x[0]);
    m.dot(&d).sum() + d.slice(s![.., 0]).sum()
}

/// `assign` broadcasts its source: a vector into each row of a block, a one-element
/// array into a row.
#[differentiable]
fn broadcast_assign(x: &Array1<f64>) -> f64 {
    let mut b = Array2::<f64>::zeros((3, 3));
    b.slice_mut(s![0..2, ..]).assign(x);
    let one = x.slice(s![1..2]).to_owned();
    b.row_mut(2).assign(&one);
    (&b * &b).sum()
}

/// A column kept in a local, written element by element in a loop.
#[differentiable]
fn column_elements(a: &Array2<f64>, w: f64) -> f64 {
    let mut m = a.to_owned();
    for j in 0..m.ncols() {
        let mut c = m.column_mut(j);
        for i in 0..3 {
            c[i] = c[i] * w + (i + j) as f64;
        }
        c *= w;
    }
    m.mapv(|v| v.tanh()).sum()
}

#[cfg(test)]
mod checks {
    use super::*;
    use crate::check;

    check!(rows_assigned, (array![0.3_f64, 0.7],), |a| (&a.0));
    check!(slices_written, (array![0.3_f64, 0.7],), |a| (&a.0));
    check!(
        matrix_views,
        (
            Array2::from_shape_fn((3, 3), |(i, j)| (i + 2 * j) as f64 * 0.1 + 0.05),
            array![0.3_f64, 0.7, -0.4]
        ),
        |a| (&a.0, &a.1)
    );
    check!(broadcast_assign, (array![0.3_f64, 0.7, -0.4],), |a| (&a.0));
    check!(
        column_elements,
        (
            Array2::from_shape_fn((3, 2), |(i, j)| i as f64 * 0.2 - j as f64 * 0.3),
            0.8_f64
        ),
        |a| (&a.0, a.1)
    );

    #[test]
    fn values_and_known_derivatives() {
        let x = array![0.3_f64, 0.7];
        // b = [0, x0, x1, x0*x1, x0*x1] → squares+1 at 0, 2, 4 → += x at 3, 4 → *3 at 0, 1
        let p = x[0] * x[1];
        let b = [
            3.0,
            3.0 * x[0],
            x[1] * x[1] + 1.0,
            p + x[0],
            p * p + 1.0 + x[1],
        ];
        let want: f64 = b
            .iter()
            .enumerate()
            .map(|(k, v)| v * (k as f64 + 0.5))
            .sum();
        let (v, g) = slices_written::value_and_gradient(&x);
        assert!((v - want).abs() < 1e-14, "{v} vs {want}");
        assert_eq!(v, super::slices_written(&x));
        // ∂/∂x0 = 1.5·3 + 3.5·(x1 + 1) + 4.5·2p·x1
        let d0 = 1.5 * 3.0 + 3.5 * (x[1] + 1.0) + 4.5 * 2.0 * p * x[1];
        assert!((g[0] - d0).abs() < 1e-12, "{} vs {d0}", g[0]);
        // broadcast: rows 0, 1 are x, row 2 is x1 thrice: ∂/∂x1 = 2·2·x1 + 3·2·x1
        let x3 = array![0.3_f64, 0.7, -0.4];
        let g = broadcast_assign::gradient(&x3);
        assert!((g[1] - 10.0 * x3[1]).abs() < 1e-14);
        assert!((g[0] - 4.0 * x3[0]).abs() < 1e-14);
    }

    #[test]
    fn hessian_of_slices_written() {
        let x = array![0.3_f64, 0.7];
        let h = slices_written::hessian(&x);
        common::assert_hessian_matches(
            "slices_written",
            |p| slices_written::gradient(&Array1::from(p.to_vec())).to_vec(),
            &h,
            &[0.3, 0.7],
            1e-6,
        );
        let h = rows_assigned::hessian(&x);
        common::assert_hessian_matches(
            "rows_assigned",
            |p| rows_assigned::gradient(&Array1::from(p.to_vec())).to_vec(),
            &h,
            &[0.3, 0.7],
            1e-6,
        );
    }
}
