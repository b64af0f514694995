use mochi::prelude::*;

#[differentiable]
fn f(x: f64, k: Option<f64>) -> f64 {
    let Some(s) = k else { return x };
    x * s
}

fn main() {}
