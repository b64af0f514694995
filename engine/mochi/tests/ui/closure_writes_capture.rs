use mochi::prelude::*;

#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut s = 0.0;
    let y: f64 = x.iter().map(|v| {
        s += v;
        v * 2.0
    }).sum();
    y * s
}

fn main() {}
