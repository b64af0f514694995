use mochi::prelude::*;

#[differentiable]
fn square(x: f64) -> f64 {
    x * x
}

// Calls another function: no generic twin, so no Hessian.
#[differentiable]
fn energy(x: &[f64]) -> f64 {
    square(x[0]) + x[1]
}

fn main() {
    let _ = energy::gradient(&[1.0, 2.0]);
    let _ = energy::hessian(&[1.0, 2.0]);
}
