use mochi::prelude::*;

#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut s = x.to_vec();
    let mut t = 0.0;
    while let Some(v) = s.pop() {
        t = t * 0.5 + v;
    }
    t
}

fn main() {}
