use mochi::prelude::*;

// Mixes in an `f32` constant: no generic twin, so no Hessian.
#[differentiable]
fn energy(x: &[f64]) -> f64 {
    let half = 0.5_f32;
    2.0 * x[0] * x[0] + x[1] * half as f64
}

fn main() {
    let _ = energy::gradient(&[1.0, 2.0]);
    let _ = energy::hessian(&[1.0, 2.0]);
}
