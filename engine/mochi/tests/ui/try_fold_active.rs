use mochi::prelude::*;

// A fallible fold over a differentiable sequence: written as a `for` loop instead.
#[differentiable]
fn capped(x: &[f64]) -> f64 {
    x.iter()
        .try_fold(0.0, |a, v| if *v > 5.0 { None } else { Some(a + v * v) })
        .unwrap_or(0.0)
}

fn main() {}
