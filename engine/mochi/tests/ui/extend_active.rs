use mochi::prelude::*;

#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut v: Vec<f64> = Vec::new();
    v.extend(x.iter().map(|a| a * 2.0));
    v[0] * v[1]
}

fn main() {}
