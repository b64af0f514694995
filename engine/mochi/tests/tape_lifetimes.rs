//! Pullbacks used the way a user may use them — kept while other gradients run, run
//! out of order, sent to another thread, dropped without running — read back exactly
//! what their forward sweep saved, although their tape stacks are carved from one
//! per-thread chunk that later gradients reuse.

#![allow(clippy::needless_range_loop)]

use mochi::prelude::*;

/// A helper called in a loop (one set of stacks per call) inside a loop of its own.
#[differentiable]
fn weighted_sq(w: &[f64], v: &[f64]) -> f64 {
    let mut s = 0.0;
    for j in 0..v.len() {
        s += w[j] * v[j] * v[j];
    }
    s
}

#[differentiable]
fn objective(w: &[f64], x: &[f64]) -> f64 {
    let d = w.len();
    let mut row = vec![0.0; d];
    let mut s = 0.0;
    for i in 0..x.len() / d {
        for j in 0..d {
            row[j] = (x[i * d + j] - w[j]).sin();
        }
        s += weighted_sq(w, &row).sqrt();
    }
    s
}

fn data(seed: f64) -> (Vec<f64>, Vec<f64>) {
    let w: Vec<f64> = (0..4).map(|k| 0.5 + 0.1 * k as f64 + seed).collect();
    let x: Vec<f64> = (0..40).map(|k| ((k as f64) * 0.37 + seed).cos()).collect();
    (w, x)
}

/// The gradient by central differences, the reference every case is checked against.
fn by_differences(w: &[f64], x: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let h = 1e-6;
    let dw = (0..w.len())
        .map(|k| {
            let (mut a, mut b) = (w.to_vec(), w.to_vec());
            a[k] += h;
            b[k] -= h;
            (objective(&a, x) - objective(&b, x)) / (2.0 * h)
        })
        .collect();
    let dx = (0..x.len())
        .map(|k| {
            let (mut a, mut b) = (x.to_vec(), x.to_vec());
            a[k] += h;
            b[k] -= h;
            (objective(w, &a) - objective(w, &b)) / (2.0 * h)
        })
        .collect();
    (dw, dx)
}

fn assert_close(got: &(Vec<f64>, Vec<f64>), want: &(Vec<f64>, Vec<f64>)) {
    for (a, b) in got.0.iter().chain(&got.1).zip(want.0.iter().chain(&want.1)) {
        assert!((a - b).abs() < 1e-6, "{a} vs {b}");
    }
}

#[test]
fn a_pullback_kept_while_other_gradients_run() {
    let (w, x) = data(0.0);
    // A first gradient teaches each save site its size: the next stacks are carved.
    let _ = objective::gradient(&w, &x);
    let (_, kept) = objective::pullback(&w, &x);
    // Later gradients on this thread carve their stacks while `kept` holds its own.
    for s in 1..4 {
        let (w2, x2) = data(0.1 * s as f64);
        assert_close(&objective::gradient(&w2, &x2), &by_differences(&w2, &x2));
    }
    assert_close(&kept(1.0), &by_differences(&w, &x));
}

#[test]
fn pullbacks_run_in_the_order_they_were_made() {
    let (wa, xa) = data(0.0);
    let (wb, xb) = data(0.3);
    let _ = objective::gradient(&wa, &xa);
    let (_, pa) = objective::pullback(&wa, &xa);
    let (_, pb) = objective::pullback(&wb, &xb);
    assert_close(&pa(1.0), &by_differences(&wa, &xa));
    assert_close(&pb(1.0), &by_differences(&wb, &xb));
    // and the chunk is reused afterwards
    assert_close(&objective::gradient(&wa, &xa), &by_differences(&wa, &xa));
}

#[test]
fn a_pullback_run_on_another_thread() {
    let (w, x) = data(0.2);
    let (_, pb) = objective::pullback(&w, &x);
    let got = std::thread::spawn(move || pb(1.0)).join().unwrap();
    assert_close(&got, &by_differences(&w, &x));
    assert_close(&objective::gradient(&w, &x), &by_differences(&w, &x));
}

#[test]
fn a_pullback_dropped_without_running() {
    let (w, x) = data(0.4);
    for _ in 0..3 {
        let (_, pb) = objective::pullback(&w, &x);
        drop(pb);
        assert_close(&objective::gradient(&w, &x), &by_differences(&w, &x));
    }
}
