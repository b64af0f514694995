use mochi::prelude::*;

#[differentiable]
fn first_large(x: &[f64]) -> f64 {
    if let Some(v) = x.iter().find(|v| **v > 1.0) {
        v * v
    } else {
        0.0
    }
}

fn main() {}
