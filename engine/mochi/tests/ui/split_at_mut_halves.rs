use mochi::prelude::*;

#[differentiable]
fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for i in 0..x.len() {
        y[i] += a * x[i];
    }
}

// Both halves of `split_at_mut` given to one call: refused at the call (an internal
// borrow error at the attribute before).
#[differentiable]
fn halves(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    let n = v.len() / 2;
    let (a, b) = v.split_at_mut(n);
    axpy(0.5, a, b);
    v.iter().map(|e| e * e).sum()
}

fn main() {}
