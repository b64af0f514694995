use mochi::prelude::*;

// `retain` on a buffer the caller lends: its length would change under the caller, so
// it is refused (a buffer bound `let mut` in the body is written as the new `Vec`).
#[differentiable]
fn positive_sum(x: &[f64], v: &mut Vec<f64>) -> f64 {
    v.retain(|&t| t > 0.0);
    v.iter().sum::<f64>() * x[0]
}

fn main() {}
