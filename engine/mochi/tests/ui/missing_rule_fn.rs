use mochi::prelude::*;

fn helper(x: f64) -> f64 {
    x * x
}

#[differentiable]
fn f(x: f64) -> f64 {
    helper(x).sin()
}

fn main() {}
