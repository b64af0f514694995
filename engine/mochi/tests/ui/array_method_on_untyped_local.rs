use mochi::prelude::*;

// The helper returning an array is declared after its caller, so the caller's syntax
// shows no array: its Hessian asks for the local's type.
#[differentiable]
fn caller(x: &[f64]) -> f64 {
    let a = features(x);
    a.dot(&a).sqrt()
}

#[differentiable]
fn features(x: &[f64]) -> ndarray::Array1<f64> {
    ndarray::Array1::from_iter(x.iter().map(|v| v.tanh()))
}

fn main() {
    let _ = caller::gradient(&[1.0, 2.0]);
    let _ = caller::hessian(&[1.0, 2.0]);
}
