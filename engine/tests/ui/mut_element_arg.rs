use mochi::prelude::*;

#[differentiable]
fn scale(v: &mut [f64], a: f64) {
    for i in 0..v.len() {
        v[i] *= a;
    }
}

#[differentiable]
fn f(rows: &mut [Vec<f64>], a: f64) -> f64 {
    scale(&mut rows[0], a);
    rows[0][0]
}

fn main() {}
