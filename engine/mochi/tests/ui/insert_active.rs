use mochi::prelude::*;

#[differentiable]
fn f(x: &[f64], a: f64) -> f64 {
    let mut v = Vec::new();
    for i in 0..x.len() {
        v.insert(0, x[i] * a);
    }
    v[0] * v[1]
}

fn main() {}
