use mochi::prelude::*;

// `truncate` changes the length of a buffer that carries a derivative.
#[differentiable]
fn head_sum(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.truncate(2);
    v.iter().sum()
}

fn main() {}
