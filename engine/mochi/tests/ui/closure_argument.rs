use mochi::prelude::*;

// A closure passed in: its body is not visible to the macro.
#[differentiable]
fn apply_all(x: &[f64], f: impl Fn(f64) -> f64) -> f64 {
    x.iter().map(|v| f(*v)).sum()
}

#[differentiable]
fn apply_generic<F: Fn(f64) -> f64>(x: &[f64], f: F) -> f64 {
    f(x[0])
}

fn main() {}
