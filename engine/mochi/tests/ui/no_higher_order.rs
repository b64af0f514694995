use mochi::prelude::*;

const SCALE: f64 = 2.0;

// Uses a constant defined outside the function: no generic twin, so no Hessian.
#[differentiable]
fn energy(x: &[f64]) -> f64 {
    SCALE * x[0] * x[0] + x[1]
}

fn main() {
    let _ = energy::gradient(&[1.0, 2.0]);
    let _ = energy::hessian(&[1.0, 2.0]);
}
