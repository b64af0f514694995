use mochi::prelude::*;

fn checked_ln(v: f64) -> Option<f64> {
    (v > 0.0).then(|| v.ln())
}

// A fallible fold over a differentiable sequence whose closure has a `?` of its own:
// written as a `for` loop instead.
#[differentiable]
fn capped(x: &[f64]) -> f64 {
    x.iter()
        .try_fold(0.0, |a, v| Some(a + checked_ln(*v)?))
        .unwrap_or(0.0)
}

fn main() {}
