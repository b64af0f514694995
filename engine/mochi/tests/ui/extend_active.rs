use mochi::prelude::*;

#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut v: Vec<f64> = Vec::new();
    let w: Vec<f64> = x.iter().map(|a| a * 2.0).collect();
    // A chain (`v.extend(x.iter().map(..))`) is a loop of pushes; a whole `Vec` is not.
    v.extend(w);
    v[0] * v[1]
}

fn main() {}
