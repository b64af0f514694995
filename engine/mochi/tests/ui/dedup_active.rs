use mochi::prelude::*;

// `dedup` changes the length of a buffer that carries a derivative (`retain` and
// `truncate` as statements are written as the new `Vec` they leave).
#[differentiable]
fn distinct_sum(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.dedup();
    v.iter().sum()
}

fn main() {}
