use mochi::prelude::*;

#[differentiable]
fn doubled_until_large(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    if v.iter_mut().any(|e| {
        *e *= 2.0;
        *e > 1.0
    }) {
        v[0]
    } else {
        v[1]
    }
}

fn main() {}
