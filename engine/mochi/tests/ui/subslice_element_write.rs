use mochi::prelude::*;

#[differentiable]
fn f(x: &[f64], a: f64) -> f64 {
    let mut v = x.to_vec();
    v[1..][0] = a * v[0];
    v[1] + v[2]
}

fn main() {}
