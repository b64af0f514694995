use mochi::prelude::*;
use ndarray::Array2;

// `iter_mut()` over an array of two dimensions: refused with the forms that work.
#[differentiable]
fn squares(a: &Array2<f64>) -> f64 {
    let mut b = a.clone();
    for v in b.iter_mut() {
        *v = *v * *v;
    }
    b.sum()
}

fn main() {}
