use mochi::prelude::*;

#[differentiable]
fn f(x: f64) -> f64 {
    let g = |v: f64| v * v;
    g(x)
}

fn main() {}
