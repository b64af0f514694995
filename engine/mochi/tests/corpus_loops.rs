//! Nested loops as users write them: elements read at an index the inner loop does not
//! change, beside a container the loop writes, a parameter rebound as a local, early
//! exits, loop bodies saving several values per trip (one record per trip), a helper
//! called in a loop (its stacks carved side by side per call), and `c[i] += c[i - 1]`
//! under `hessian`. Each is checked by `test_rule` (finite differences, the adjoint
//! identity, accumulation) or against finite differences of the gradient.

#![allow(
    clippy::needless_range_loop,
    clippy::ptr_arg,
    clippy::assign_op_pattern,
    clippy::explicit_counter_loop
)]

mod common;
use mochi::prelude::*;

/// GMM's inner product: `x[i * d + a]` and `m[a]` are the same on every trip over `b`.
#[differentiable]
fn triangular_apply(l: &[f64], x: &[f64], m: &[f64], d: usize) -> f64 {
    let n = x.len() / d;
    let mut s = 0.0;
    let mut qx = vec![0.0; d];
    for i in 0..n {
        let mut p = 0;
        for a in 0..d {
            for b in a + 1..d {
                qx[b] += l[p] * (x[i * d + a] - m[a]);
                p += 1;
            }
        }
        for j in 0..d {
            s += qx[j] * qx[j];
            qx[j] = 0.0;
        }
    }
    s
}

/// An invariant read inside a `while` loop nested in a `for`; the weights' index is a
/// counter (saved).
#[differentiable]
fn while_inside_for(x: &[f64], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let mut k = 0;
        while k < w.len() {
            s += (x[i] * w[k]).sin();
            k += 1;
        }
    }
    s
}

/// The inner loop leaves early: the sum added after it covers only the trips run.
#[differentiable]
fn early_break(x: &[f64], t: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        for j in 0..x.len() {
            if x[j] > t {
                break;
            }
            s += x[i] * x[j] * t;
        }
    }
    s
}

/// A `&mut` parameter written inside the loop while an element is read at an index
/// the loop does not change (the written element may be the read one).
#[differentiable]
fn mutable_param(v: &mut [f64], a: f64) -> f64 {
    let n = v.len();
    for i in 0..n {
        for j in 0..n {
            v[j] = v[j] * a + 0.1 * v[i];
        }
    }
    v.iter().sum()
}

/// A parameter rebound as a local vector that the loop writes.
#[differentiable]
fn rebound_param(x: &[f64], a: f64) -> f64 {
    let mut x = x.to_vec();
    let n = x.len();
    for i in 0..n {
        for j in 0..n {
            x[j] += a * x[i] * 0.25;
        }
    }
    x[0] * x[n - 1]
}

/// Several values saved per trip (indices, products, a branch): one record each trip.
#[differentiable]
fn record_per_trip(x: &[f64], y: &[f64], c: f64) -> f64 {
    let mut s = 0.0;
    let mut k = 0;
    for i in 0..x.len() {
        let u = x[i] * y[k];
        let v = (u + c).exp();
        if u > 0.0 {
            s += v * y[k] * x[i];
        } else {
            s -= v;
        }
        k = (k + 1) % y.len();
    }
    s
}

/// A helper with loops called from a loop (its stacks carved side by side per call).
#[differentiable]
fn weighted_norm(w: &[f64], v: &[f64]) -> f64 {
    let mut s = 0.0;
    for j in 0..v.len() {
        s += w[j] * v[j] * v[j];
    }
    s
}

#[differentiable]
fn helper_in_loop(w: &[f64], x: &[f64], d: usize) -> f64 {
    let mut s = 0.0;
    let mut row = vec![0.0; d];
    for i in 0..x.len() / d {
        for j in 0..d {
            row[j] = x[i * d + j] - w[j];
        }
        s += weighted_norm(w, &row).sqrt();
    }
    s
}

/// Buffers bound inside the loop, `vec![0.0; n]` of a length the reverse sweep can
/// recompute (a parameter, a parameter's length, arithmetic of them), and one whose
/// length is the loop's own variable (its shape is saved per read): written, read
/// back several times, and reduced.
#[differentiable]
fn buffers_in_loop(x: &[f64], w: &[f64], d: usize) -> f64 {
    let n = x.len() / d;
    let mut s = 0.0;
    for i in 0..n {
        let mut row = vec![0.0; d];
        let mut wide = vec![0.0; w.len() + 1];
        let mut grow = vec![0.0; i + 1];
        for j in 0..d {
            row[j] = x[i * d + j] * w[j % w.len()];
        }
        for j in 0..w.len() {
            wide[j + 1] = row[j % d] * row[j % d] + w[j];
        }
        for j in 0..=i {
            grow[j] = wide[(j + 1) % wide.len()].sin();
        }
        for j in 0..d {
            s += row[j] * wide[j % wide.len()];
        }
        for j in 0..grow.len() {
            s += grow[j] * x[j];
        }
    }
    s
}

mod checked_loops {
    use crate::check;

    check!(
        buffers_in_loop,
        (
            vec![0.5_f64, -1.2, 0.3, 0.9, 0.1, -0.4, 0.7, 0.2, -0.6],
            vec![0.9_f64, -1.1],
            3_usize
        ),
        |a| (&a.0, &a.1, a.2)
    );
    check!(
        triangular_apply,
        (
            vec![0.3_f64, -0.2, 0.5],
            vec![0.5_f64, -1.2, 0.3, 0.9, 0.1, -0.4],
            vec![0.1_f64, 0.2, -0.3],
            3_usize
        ),
        |a| (&a.0, &a.1, &a.2, a.3)
    );
    check!(
        while_inside_for,
        (vec![0.5_f64, -1.2, 0.3], vec![0.7_f64, -0.1]),
        |a| (&a.0, &a.1)
    );
    check!(early_break, (vec![0.2_f64, -0.4, 0.9, 0.1], 0.5_f64), |a| (
        &a.0, a.1
    ));
    check!(mutable_param, (vec![0.5_f64, -1.2, 0.3], 0.8_f64), |a| (
        &mut a.0, a.1
    ));
    check!(rebound_param, (vec![0.5_f64, -1.2, 0.3], 0.8_f64), |a| (
        &a.0, a.1
    ));
    check!(
        record_per_trip,
        (
            vec![0.5_f64, -1.2, 0.3, 0.8],
            vec![0.7_f64, -0.1, 0.4],
            0.2_f64
        ),
        |a| (&a.0, &a.1, a.2)
    );
    check!(
        helper_in_loop,
        (
            vec![0.9_f64, 1.1, 0.7],
            vec![0.5_f64, -1.2, 0.3, 0.9, 0.1, -0.4],
            3_usize
        ),
        |a| (&a.0, &a.1, a.2)
    );
}

/// `triangular_apply` with the invariant element copied into a local first.
#[differentiable]
fn with_copy(l: &[f64], x: &[f64], m: &[f64], d: usize) -> f64 {
    let n = x.len() / d;
    let mut s = 0.0;
    let mut qx = vec![0.0; d];
    for i in 0..n {
        let mut p = 0;
        for a in 0..d {
            let c = x[i * d + a] - m[a];
            for b in a + 1..d {
                qx[b] += l[p] * c;
                p += 1;
            }
        }
        for j in 0..d {
            s += qx[j] * qx[j];
            qx[j] = 0.0;
        }
    }
    s
}

/// Reading the invariant element inside the inner loop and copying it into a local
/// first give the same gradient.
#[test]
fn invariant_read_matches_a_local_copy() {
    let l = [0.3, -0.2, 0.5];
    let x = [0.5, -1.2, 0.3, 0.9, 0.1, -0.4];
    let m = [0.1, 0.2, -0.3];
    let (y1, (dl1, dx1, dm1, _)) = triangular_apply::value_and_gradient(&l, &x, &m, 3);
    let (y2, (dl2, dx2, dm2, _)) = with_copy::value_and_gradient(&l, &x, &m, 3);
    assert!((y1 - y2).abs() < 1e-14);
    for (a, b) in dl1
        .iter()
        .chain(&dx1)
        .chain(&dm1)
        .zip(dl2.iter().chain(&dx2).chain(&dm2))
    {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    // and not all zero: the derivative flows into x and m
    assert!(dx1.iter().any(|v| v.abs() > 1e-3) && dm1.iter().any(|v| v.abs() > 1e-3));
}

/// A prefix sum written in place (`c[i] += c[i - 1]`): the twin behind `hessian` keeps
/// the primal's order (right side first), so the function has second derivatives.
#[differentiable]
fn prefix_energy(x: &[f64]) -> f64 {
    let mut c = x.to_vec();
    for i in 1..c.len() {
        c[i] += c[i - 1] * 0.5;
    }
    let mut s = 0.0;
    for i in 0..c.len() {
        s += c[i] * c[i] * x[i];
    }
    s
}

#[test]
fn compound_element_assignment_has_a_hessian() {
    let x = [0.3, -0.8, 1.1, 0.4];
    let h = prefix_energy::hessian(&x);
    let step = 1e-5;
    for j in 0..x.len() {
        let (mut up, mut down) = (x, x);
        up[j] += step;
        down[j] -= step;
        let (gu, gd) = (prefix_energy::gradient(&up), prefix_energy::gradient(&down));
        for i in 0..x.len() {
            let fd = (gu[i] - gd[i]) / (2.0 * step);
            assert!(
                (h[[i, j]] - fd).abs() < 1e-6,
                "h[{i},{j}] = {} vs {fd}",
                h[[i, j]]
            );
        }
    }
    assert!(h[[0, 1]].abs() > 1e-3);
}

/// Layers of the sizes given as integers, their weights cut from a flat parameter slice
/// by a `for` over `sizes.windows(2)` of the (borrowed) integer argument: the pullback
/// replays no iterator over an argument, so the loop is counted.
#[differentiable(higher_order)]
fn layered_by_sizes(p: &[f64], sizes: &[usize]) -> f64 {
    let mut off = 0;
    let mut h = vec![1.0; sizes[0]];
    for pair in sizes.windows(2) {
        let (n_in, n_out) = (pair[0], pair[1]);
        let mut next = vec![0.0; n_out];
        for (o, z) in next.iter_mut().enumerate() {
            let row = &p[off + o * n_in..off + (o + 1) * n_in];
            *z = row.iter().zip(&h).map(|(w, v)| w * v).sum::<f64>().tanh();
        }
        off += n_in * n_out;
        h = next;
    }
    h.iter().sum()
}

#[test]
fn loops_over_an_integer_argument() {
    let p = [0.3, -0.2, 0.5, 0.1, 0.7, -0.4, 0.2, 0.6];
    let sizes = [2usize, 2, 2];
    let f = |q: &[f64]| layered_by_sizes(q, &sizes);
    let (g, _) = layered_by_sizes::gradient(&p, &sizes);
    common::assert_gradient_matches(f, &g, &p);
    let h = layered_by_sizes::hessian(&p, &sizes);
    common::assert_hessian_matches(
        "layered_by_sizes",
        |q| layered_by_sizes::gradient(q, &sizes).0,
        &h,
        &p,
        1e-6,
    );
}
