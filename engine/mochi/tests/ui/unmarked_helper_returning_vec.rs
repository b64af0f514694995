use mochi::prelude::*;

fn scaled(x: &[f64], a: f64) -> Vec<f64> {
    x.iter().map(|v| v * a).collect()
}

#[differentiable]
fn f(x: &[f64]) -> f64 {
    let y = scaled(x, 2.0);
    y[0] * y[1] + y.iter().map(|v| v * v).sum::<f64>()
}

fn main() {}
