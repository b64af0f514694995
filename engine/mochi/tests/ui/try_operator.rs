use mochi::prelude::*;

// `?` inside a closure returns from the closure, not from the function: not supported.
#[differentiable]
fn f(x: &[f64]) -> Option<f64> {
    let first = |v: &[f64]| -> Option<f64> { Some(v.first()? * 2.0) };
    Some(x[0] * first(x)?)
}

fn main() {}
