use mochi::prelude::*;
use std::collections::HashMap;

// A map holding differentiable values has no tangent type: one error, at the `insert`.
#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut m: HashMap<usize, f64> = HashMap::new();
    for (i, &v) in x.iter().enumerate() {
        m.insert(i % 2, v * v);
    }
    m.values().sum()
}

fn main() {}
