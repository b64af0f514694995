use mochi::prelude::*;

#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut v: Vec<f64> = Vec::new();
    v.extend_from_slice(x);
    v[0] * v[1]
}

fn main() {}
