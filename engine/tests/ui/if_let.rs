use mochi::prelude::*;

#[differentiable]
fn f(x: f64, k: Option<usize>) -> f64 {
    let mut y = x;
    if let Some(n) = k {
        y = y * n as f64;
    }
    y
}

fn main() {}
