use mochi::prelude::*;

#[differentiable]
fn f(x: f64) -> f64 {
    match (x, 2.0 * x) {
        (a, b) if a > 0.0 => a * b,
        (a, _) => a,
    }
}

fn main() {}
