use mochi::prelude::*;

#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut v: Vec<f64> = Vec::new();
    let w: Vec<f64> = x.iter().map(|a| a * 2.0).collect();
    // A chain (`v.extend(x.iter().map(..))`) is a loop of pushes, a variable
    // (`v.extend(w)`) is `extend_from_slice`; a `Vec` collected in place is neither.
    v.extend(w.iter().rev().map(|a| a.sin()).collect::<Vec<f64>>());
    v[0] * v[1]
}

fn main() {}
