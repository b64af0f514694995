//! Every route by which derivative-carrying data can enter a place that started as a
//! constant: `&mut` arguments of differentiable helpers and rules, `&mut self` methods,
//! field writes through helpers, `std::mem::swap`/`replace`, aliases made by `iter_mut`
//! and `&mut` borrows, and values captured by closures. Each function here got a zero
//! gradient when the activity analysis only followed `=`; each is now checked against
//! finite differences by `test_rule`, and the first against the numbers in the report.

#![allow(
    clippy::needless_range_loop,
    clippy::ptr_arg,
    clippy::manual_memcpy,
    clippy::assign_op_pattern
)]

mod common;
use mochi::prelude::*;
use ndarray::{array, Array1, Array2};

#[differentiable]
fn add_into(v: &mut [f64], g: &[f64], a: f64) {
    for i in 0..v.len() {
        v[i] += a * g[i];
    }
}

/// The function of the report: a constant buffer filled by an `&mut` helper.
#[differentiable]
fn helper_fills_constant_buffer(x: &[f64], a: f64) -> f64 {
    let mut v = vec![0.0; x.len()];
    add_into(&mut v, x, a);
    v[0] * v[1]
}

#[differentiable]
fn scale_array_into(v: &mut Array1<f64>, g: &Array1<f64>, a: f64) {
    for i in 0..v.len() {
        v[i] += a * g[i];
    }
}

#[differentiable]
fn helper_fills_zero_array(x: &Array1<f64>, a: f64) -> f64 {
    let mut v = Array1::zeros(x.len());
    scale_array_into(&mut v, x, a);
    v[0] * v[1] + v[1]
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct State {
    pos: f64,
    vel: f64,
}

#[differentiable]
fn step(s: &mut State, force: f64, dt: f64) {
    s.vel += force * dt;
    s.pos += s.vel * dt;
}

#[differentiable]
fn helper_steps_constant_struct(force: f64, dt: f64) -> f64 {
    let mut s = State { pos: 0.0, vel: 0.0 };
    for _ in 0..3 {
        step(&mut s, force, dt);
    }
    s.pos * s.vel
}

#[differentiable]
fn kick(v: &mut [f64], x: &[f64], dt: f64) {
    for i in 0..v.len() {
        v[i] -= x[i] * dt;
    }
}

#[differentiable]
fn drift(x: &mut [f64], v: &[f64], dt: f64) {
    for i in 0..x.len() {
        x[i] += v[i] * dt;
    }
}

/// A particle simulation split into `kick` and `drift` on fresh buffers.
#[differentiable]
fn particles(x0: &[f64], dt: f64) -> f64 {
    let mut x = vec![0.0; x0.len()];
    let mut v = vec![0.0; x0.len()];
    drift(&mut x, x0, 1.0);
    for _ in 0..4 {
        kick(&mut v, &x, dt);
        drift(&mut x, &v, dt);
    }
    let mut e = 0.0;
    for i in 0..x.len() {
        e += x[i] * x[i] + v[i];
    }
    e
}

/// An in-place residual on a fresh buffer, as optimisation test suites write it.
#[differentiable]
fn chebyquad_into(y: &mut [f64], x: &[f64]) {
    let n = x.len();
    for j in 0..n {
        let mut t0 = 1.0;
        let mut t1 = 2.0 * x[j] - 1.0;
        let s = 2.0 * t1;
        for i in 0..n {
            y[i] += t1;
            let t2 = s * t1 - t0;
            t0 = t1;
            t1 = t2;
        }
    }
}

#[differentiable]
fn chebyquad(x: &[f64]) -> f64 {
    let mut y = vec![0.0; x.len()];
    chebyquad_into(&mut y, x);
    let mut f = 0.0;
    for i in 0..y.len() {
        f += y[i] * y[i];
    }
    f
}

#[differentiable]
fn copy_from_slice_into_zeros(x: &[f64]) -> f64 {
    let mut v = vec![0.0; x.len()];
    v.copy_from_slice(x);
    v[0] * v[2]
}

/// `clone_from_slice` of a whole buffer (before, "no rule for `clone_from_slice`").
#[differentiable]
fn clone_from_slice_into_zeros(x: &[f64]) -> f64 {
    let mut v = vec![0.0; x.len()];
    v.clone_from_slice(x);
    v[0] * v[2] + v[1]
}

#[differentiable]
fn fill_with_active(x: &[f64], a: f64) -> f64 {
    let mut v = vec![0.0; x.len()];
    v.fill(a);
    v[0] * x[1] + v[2]
}

#[differentiable]
fn assign_array(x: &Array1<f64>) -> f64 {
    let mut v = Array1::zeros(x.len());
    v.assign(x);
    v[0] * v[1]
}

const XD: [f64; 6] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
const YD: [f64; 3] = [1.0, 0.0, 1.0];

/// Rows of a matrix without a derivative zipped with a table, `x.rows().into_iter()
/// .zip(YD.iter())`, the weights with one (before: "no method named `zip` found for
/// struct `Lanes`", the `into_iter()` dropped).
#[differentiable]
fn rows_of_constant_zipped(w: &Array1<f64>, b: f64) -> f64 {
    let x = Array2::from_shape_vec((3, 2), XD.to_vec()).unwrap();
    let mut loss = 0.0_f64;
    for (row, &yi) in x.rows().into_iter().zip(YD.iter()) {
        let zi = row.dot(w) + b;
        loss -= yi * zi.tanh();
    }
    loss
}

#[differentiable]
fn iter_mut_writes(x: &[f64], a: f64) -> f64 {
    let mut v = vec![0.0; x.len()];
    for e in v.iter_mut() {
        *e = a * a;
    }
    v[0] + v[1] * x[0]
}

#[differentiable]
fn mem_swap_with_constant(x: &[f64]) -> f64 {
    let mut a = x[0] * x[1];
    let mut b = 0.5;
    std::mem::swap(&mut a, &mut b);
    a + b * b
}

#[differentiable]
fn mem_replace_into_constant(x: &[f64]) -> f64 {
    let mut a = 0.0;
    let old = std::mem::replace(&mut a, x[0].sin());
    a * x[1] + old
}

#[differentiable]
fn accumulate_scalar(acc: &mut f64, v: f64) {
    *acc += v * v;
}

#[differentiable]
fn helper_accumulates_scalar(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        accumulate_scalar(&mut s, x[i]);
    }
    s
}

#[differentiable]
fn closure_accumulates(x: &[f64], a: f64) -> f64 {
    let mut s = 0.0;
    x.iter().for_each(|xi| s += xi * a);
    s * s
}

#[differentiable]
fn closure_writes_buffer(x: &[f64]) -> f64 {
    let mut v = vec![0.0; x.len()];
    v.iter_mut()
        .zip(x.iter())
        .for_each(|(vi, xi)| *vi = xi * 2.0);
    v[0] * v[1]
}

#[differentiable]
fn zip_loop(x: &[f64]) -> f64 {
    let mut v = vec![0.0; x.len()];
    for (vi, xi) in v.iter_mut().zip(x.iter()) {
        *vi = xi.sin();
    }
    v[0] * v[1]
}

mod checked {
    use super::*;
    use crate::check;

    check!(
        helper_fills_constant_buffer,
        (vec![0.7_f64, -1.3], 1.9_f64),
        |a| (&a.0, a.1)
    );
    check!(
        helper_fills_zero_array,
        (array![0.7_f64, -1.3, 0.4], 1.9_f64),
        |a| (&a.0, a.1)
    );
    check!(helper_steps_constant_struct, (0.8_f64, 0.3_f64), |a| (
        a.0, a.1
    ));
    check!(particles, (vec![0.3_f64, -0.8, 1.1], 0.2_f64), |a| (
        &a.0, a.1
    ));
    check!(chebyquad, (vec![0.2_f64, 0.45, 0.8],), |a| (&a.0));
    check!(
        copy_from_slice_into_zeros,
        (vec![0.7_f64, -1.3, 0.2],),
        |a| (&a.0)
    );
    check!(
        clone_from_slice_into_zeros,
        (vec![0.7_f64, -1.3, 0.2],),
        |a| (&a.0)
    );
    check!(fill_with_active, (vec![0.7_f64, -1.3, 0.2], 1.1_f64), |a| (
        &a.0, a.1
    ));
    check!(assign_array, (array![0.7_f64, -1.3],), |a| (&a.0));
    check!(
        rows_of_constant_zipped,
        (array![0.7_f64, -1.3], 0.2_f64),
        |a| (&a.0, a.1)
    );
    check!(iter_mut_writes, (vec![0.7_f64, -1.3], 1.1_f64), |a| (
        &a.0, a.1
    ));
    check!(mem_swap_with_constant, (vec![0.7_f64, -1.3],), |a| (&a.0));
    check!(mem_replace_into_constant, (vec![0.7_f64, -1.3],), |a| (&a
        .0));
    check!(
        helper_accumulates_scalar,
        (vec![0.7_f64, -1.3, 0.4],),
        |a| (&a.0)
    );

    check!(closure_accumulates, (vec![0.7_f64, -1.3], 1.5_f64), |a| (
        &a.0, a.1
    ));
    check!(closure_writes_buffer, (vec![0.7_f64, -1.3],), |a| (&a.0));
    check!(zip_loop, (vec![0.7_f64, -1.3],), |a| (&a.0));

    /// The numbers of the report: central finite differences give
    /// dx = [-4.693, 2.527], da = -3.458 at x = [0.7, -1.3], a = 1.9.
    #[test]
    fn report_numbers() {
        let x = [0.7, -1.3];
        let (y, (dx, da)) = super::helper_fills_constant_buffer::value_and_gradient(&x, 1.9);
        assert!((y - (1.9 * 0.7) * (1.9 * -1.3)).abs() < 1e-12);
        // f = a² x0 x1: df/dx0 = a² x1, df/dx1 = a² x0, df/da = 2 a x0 x1.
        assert!((dx[0] - 1.9 * 1.9 * -1.3).abs() < 1e-12, "{dx:?}");
        assert!((dx[1] - 1.9 * 1.9 * 0.7).abs() < 1e-12, "{dx:?}");
        assert!((da - 2.0 * 1.9 * 0.7 * -1.3).abs() < 1e-12, "{da}");
        assert!((dx[0] - -4.693).abs() < 1e-3 && (da - -3.458).abs() < 1e-3);
    }
}
