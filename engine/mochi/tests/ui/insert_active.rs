use mochi::prelude::*;

// An `insert` into a buffer the function does not bind (`v.insert(i, e);` into a
// `let mut` `Vec` of the function is rebuilt, and supported).
#[differentiable]
fn f(v: &mut Vec<f64>, a: f64) {
    v.insert(0, a * 2.0);
}

fn main() {}
