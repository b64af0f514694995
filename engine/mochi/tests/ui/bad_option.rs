use mochi::prelude::*;

#[differentiable(fast)]
fn f(x: f64) -> f64 {
    x
}

fn main() {}
